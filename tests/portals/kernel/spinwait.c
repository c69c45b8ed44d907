/* A program that waits for a message the way a library polling a user-space
 * NIC does: spinning on PtlEQGet (mode eq) or on PtlCTGet (mode ct), never
 * calling a blocking wait.  Two ranks under yod: rank 1 sleeps MS ms, then
 * puts 8 bytes to rank 0 (again while the put is dropped: rank 0's entry may
 * not be there yet); rank 0 spins until they arrive and prints what came,
 * after how long, and how many looks found nothing (the kernel halts a
 * spinning program, so there are few: kernel/sys/portals_spin.c).
 *     spinwait eq|ct MS */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "portals4.h"
#include "test_check.h"
#include "test_clock.h"

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[1], "eq") && strcmp(argv[1], "ct"))) {
        fprintf(stderr, "usage: spinwait eq|ct MS\n");
        return 2;
    }
    int rank = getenv("TERN_RANK") ? atoi(getenv("TERN_RANK")) : 0;
    long ms = atol(argv[2]);
    ptl_handle_ni_t ni;
    ptl_handle_eq_t eq;
    ptl_handle_ct_t ct;
    ptl_pt_index_t pt;
    CHECK(PtlInit());
    CHECK(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY, NULL, NULL,
                    &ni));
    CHECK(PtlEQAlloc(ni, 64, &eq));
    CHECK(PtlCTAlloc(ni, &ct));
    CHECK(PtlPTAlloc(ni, 0, eq, 0, &pt));
    static char buf[64];
    if (rank == 0) {
        ptl_me_t me = {.start = buf, .length = sizeof buf, .ct_handle = ct, .uid = PTL_UID_ANY,
                       .options = PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE |
                                  PTL_ME_EVENT_CT_COMM | PTL_ME_USE_ONCE,
                       .match_id.phys = {PTL_NID_ANY, PTL_PID_ANY}, .match_bits = 7};
        ptl_handle_me_t h;
        CHECK(PtlMEAppend(ni, pt, &me, PTL_PRIORITY_LIST, NULL, &h));
        printf("B spin-%s\n", argv[1]);        /* for bench/wait_cpu.py */
        fflush(stdout);
        double t0 = now_s();
        long empty = 0;
        for (;;) {
            if (argv[1][0] == 'e') {
                ptl_event_t ev;
                int rc = PtlEQGet(eq, &ev);
                if (rc == PTL_OK && ev.type == PTL_EVENT_PUT)
                    break;
                if (rc != PTL_EQ_EMPTY && rc != PTL_OK) {
                    printf("PtlEQGet: %d\n", rc);
                    return 1;
                }
            } else {
                ptl_ct_event_t cev;
                CHECK(PtlCTGet(ct, &cev));
                if (cev.success + cev.failure)
                    break;
            }
            empty++;
        }
        printf("rank 0 got \"%s\" by Pt%sGet after %.0f ms; %s empty looks\n", buf,
               argv[1][0] == 'e' ? "lEQ" : "lCT", (now_s() - t0) * 1000,
               empty < 20000 ? "few" : "many");
        fprintf(stderr, "empty looks: %ld\n", empty);
    } else if (rank == 1) {
        struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
        nanosleep(&t, NULL);
        static const char msg[8] = "arrived";
        ptl_md_t md = {.start = (void *)msg, .length = sizeof msg, .eq_handle = eq,
                       .ct_handle = PTL_CT_NONE};
        ptl_handle_md_t mdh;
        CHECK(PtlMDBind(ni, &md, &mdh));
        const char *map = getenv("TERN_MAP");      /* rank 0's nid comes first */
        ptl_process_t to = {.phys = {map ? (unsigned)strtoul(map, NULL, 10) : 0, 16}};
        for (int tries = 0;; tries++) {
            CHECK(PtlPut(mdh, 0, sizeof msg, PTL_ACK_REQ, to, 0, 7, 0, NULL, 0));
            ptl_event_t ev;
            do
                CHECK(PtlEQWait(eq, &ev));
            while (ev.type != PTL_EVENT_ACK);
            if (ev.ni_fail_type == PTL_NI_OK)
                break;
            if (tries == 50) {
                printf("rank 1: put failed (%d)\n", ev.ni_fail_type);
                return 1;
            }
            struct timespec p = {0, 100000000L};
            nanosleep(&p, NULL);
        }
    }
    return 0;
}
