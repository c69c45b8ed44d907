/* A rank that starts late: its peer's first put reaches its node before its
 * program has made an NI (portals/lib/park.c).  Two ranks under yod: rank 1
 * sleeps MS ms before PtlInit; rank 0 puts 8 bytes to it at once, once,
 * asking for an ACK.  The node keeps the frame and hands it to rank 1's NI
 * at its first wait, so the put arrives the first time it is sent; without
 * that it arrives only by a retransmission of rank 0 after rank 1 is ready
 * (its timer backs off: 10, 30, 70, 150, 310 ms after the put).
 *     latestart MS
 * Rank 0 prints "rank 0: ACK after T ms, fail F"; rank 1 prints
 * "rank 1: put "late" arrived, kept frames handed over N" (its node's
 * rx_unparked over the run). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "portals4.h"
#include "ptl_lib.h"
#include "ptl_tern.h"
#include "test_check.h"
#include "test_pair.h"
#include "test_clock.h"

static uint64_t unparked(void)
{
    struct ptl_lib_stats st;
    memset(&st, 0, sizeof st);
    return ptl_tern_stats(&st, NULL) == PTL_OK ? st.rx_unparked : 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: latestart MS\n");
        return 2;
    }
    int rank = getenv("TERN_RANK") ? atoi(getenv("TERN_RANK")) : 0;
    double ms = atof(argv[1]);
    uint64_t unparked0 = unparked();
    if (rank == 1) {
        struct timespec d = {(time_t)(ms / 1000), (long)(ms - (time_t)(ms / 1000) * 1000) * 1000000};
        while (nanosleep(&d, &d))
            ;
    }
    double t0 = now_s();
    static char buf[64], msg[8] = "late";
    struct pair p;
    pair_setup(&p, rank, buf, sizeof buf, msg, sizeof msg);
    ptl_event_t ev;
    if (rank == 0) {
        CHECK(PtlPut(p.md, 0, sizeof msg, PTL_ACK_REQ, p.peer, p.pt, 7, 0, NULL, 0));
        do
            CHECK(PtlEQWait(p.eq, &ev));
        while (ev.type != PTL_EVENT_ACK);
        printf("rank 0: ACK after %.0f ms, fail %d\n", (now_s() - t0) * 1000,
               (int)ev.ni_fail_type);
    } else {
        do
            CHECK(PtlEQWait(p.eq, &ev));
        while (ev.type != PTL_EVENT_PUT);
        printf("rank 1: put \"%s\" arrived, kept frames handed over %llu\n", buf,
               (unsigned long long)(unparked() - unparked0));
    }
    PtlNIFini(p.ni);
    PtlFini();
    return 0;
}
