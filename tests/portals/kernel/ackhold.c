/* An ACK held for the target's answer (portals/lib/reliable.c) must not wait
 * for a target that computes instead.  Two ranks under yod: rank 0 puts 8
 * bytes to rank 1 asking for an ACK and waits for it; rank 1 takes the put
 * in a blocking wait, then computes for MS ms without a Portals call, then
 * puts "done" to rank 0.  Rank 0 prints after how long each came.
 *     ackhold MS */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "portals4.h"
#include "test_check.h"
#include "test_pair.h"
#include "test_clock.h"

static ptl_event_t wait_for(ptl_handle_eq_t eq, ptl_event_kind_t kind)
{
    ptl_event_t ev;
    do
        CHECK(PtlEQWait(eq, &ev));
    while (ev.type != kind);
    if (ev.ni_fail_type != PTL_NI_OK) {
        printf("event %d failed: %d\n", (int)kind, (int)ev.ni_fail_type);
        exit(1);
    }
    return ev;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: ackhold MS\n");
        return 2;
    }
    int rank = getenv("TERN_RANK") ? atoi(getenv("TERN_RANK")) : 0;
    double ms = atof(argv[1]);
    static char buf[64], msg[8] = "ping";
    struct pair p;
    pair_setup(&p, rank, buf, sizeof buf, msg, sizeof msg);
    ptl_handle_ni_t ni = p.ni;
    ptl_handle_eq_t eq = p.eq;
    ptl_pt_index_t pt = p.pt;
    ptl_handle_md_t mdh = p.md;
    ptl_process_t peer = p.peer;
    if (rank == 0) {
        double t0 = now_s();
        /* Resent until rank 1's entry is there: it may start later. */
        for (;;) {
            CHECK(PtlPut(mdh, 0, sizeof msg, PTL_ACK_REQ, peer, pt, 7, 0, NULL, 0));
            wait_for(eq, PTL_EVENT_SEND);
            ptl_event_t ev;
            do
                CHECK(PtlEQWait(eq, &ev));
            while (ev.type != PTL_EVENT_ACK);
            if (ev.ni_fail_type == PTL_NI_OK && ev.mlength == sizeof msg)
                break;
            struct timespec d = {0, 20000000};
            nanosleep(&d, NULL);
            t0 = now_s();
        }
        double t_ack = now_s() - t0;
        wait_for(eq, PTL_EVENT_PUT);
        double t_done = now_s() - t0;
        printf("rank 0: ACK after %.0f ms, rank 1 done after %.0f ms (\"%s\")\n", t_ack * 1000,
               t_done * 1000, buf);
    } else {
        wait_for(eq, PTL_EVENT_PUT);
        /* Compute: no Portals call until done. */
        double end = now_s() + ms / 1000;
        volatile unsigned long spins = 0;
        while (now_s() < end)
            for (int i = 0; i < 100000; i++)
                spins++;
        static char done[8] = "done";
        ptl_md_t md = {.start = done, .length = sizeof done, .eq_handle = eq,
                       .ct_handle = PTL_CT_NONE};
        CHECK(PtlMDBind(ni, &md, &mdh));
        CHECK(PtlPut(mdh, 0, sizeof done, PTL_NO_ACK_REQ, peer, pt, 7, 0, NULL, 0));
        wait_for(eq, PTL_EVENT_SEND);
    }
    PtlNIFini(ni);
    PtlFini();
    return 0;
}
