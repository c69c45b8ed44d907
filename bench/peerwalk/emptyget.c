/* The progress walk on a Tern node (bench/peer_walk.py --tern-nodes): rank 0
 * hears an NX message from every other rank, so its NI knows N - 1 peers,
 * all idle once answered; then it times empty PtlEQGet calls on an EQ of
 * its own, on libmsg's NI (PtlNIInit of the same kind hands that one back).
 * A run of empty looks would halt in the kernel after 200 us
 * (kernel/sys/portals_spin.c), so every look is followed by a PtlGetUid,
 * and a loop of two PtlGetUid calls is timed beside it: what the look
 * costs beyond a bare Portals system call is the difference.  Prints, per
 * repetition:  R emptyget N us X pair P base B */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <nx.h>
#include <portals4.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 5;
    long calls = argc > 2 ? atol(argv[2]) : 20000;
    long me = mynode(), n = numnodes();
    char b[8] = {0};
    if (me == 0) {
        for (long i = 1; i < n; i++) {
            crecv(1, b, sizeof b);
            csend(2, b, sizeof b, i, 0);
        }
    } else {
        csend(1, b, sizeof b, 0, 0);
        crecv(2, b, sizeof b);
    }
    gsync();
    int rc = 0;
    if (me == 0) {
        ptl_handle_ni_t ni;
        ptl_ni_limits_t lim;
        ptl_handle_eq_t eq;
        ptl_event_t ev;
        ptl_uid_t uid;
        if (PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_LOGICAL, PTL_PID_ANY, NULL,
                      &lim, &ni) != PTL_OK || PtlEQAlloc(ni, 8, &eq) != PTL_OK) {
            fprintf(stderr, "emptyget: no NI or EQ\n");
            rc = 1;
        }
        for (int r = 0; r < reps && !rc; r++) {
            double t0 = now_s();
            for (long i = 0; i < calls; i++) {
                if (PtlEQGet(eq, &ev) != PTL_EQ_EMPTY)
                    rc = 1;
                PtlGetUid(ni, &uid);
            }
            double t1 = now_s();
            for (long i = 0; i < calls; i++) {
                PtlGetUid(ni, &uid);
                PtlGetUid(ni, &uid);
            }
            double t2 = now_s();
            printf("R emptyget %ld us %.3f pair %.3f base %.3f\n", n,
                   ((t1 - t0) - (t2 - t1)) / (double)calls * 1e6,
                   (t1 - t0) / (double)calls * 1e6, (t2 - t1) / (double)calls * 1e6);
        }
    }
    gsync();
    return rc;
}
