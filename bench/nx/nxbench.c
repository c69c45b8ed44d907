/* NX micro-benchmarks, the same source for every build of libnx (Portals on
 * Linux or Tern, libnx-mpi).  Node 0 prints one line per repetition:
 *     R <kind> <size> <unit> <value>
 * Modes (argv[1]):
 *   lat  REPS ITERS SIZES [WARMUP]
 *                           ping-pong 0 <-> 1, one-way latency in us, after
 *                           WARMUP 8-byte round trips (default 2000; the
 *                           smoke run of bench/run_all.py asks for fewer)
 *   ring REPS BYTES SIZES   every node sends to its right neighbour and
 *                           receives from its left (irecv, csend, msgwait),
 *                           MB/s (10^6) each node sends; about BYTES per
 *                           size (4 to 1000 steps)
 *   stream REPS BYTES SIZES node 0 streams BYTES / size messages to node 1
 *                           (at least one), a window of isends in flight
 *                           and as many irecvs posted; node 1's empty
 *                           answer to the last stops the clock; MB/s
 *                           (10^6) sent (plbench's ptl-bw for raw Portals)
 *   gsync REPS ITERS        us per gsync
 *   block REPS MS           node 0 blocks in a receive (then in a gsync)
 *                           while node 1 sleeps MS ms before it sends (joins);
 *                           node 0 prints "B recv" ("B gsync") as it starts
 *                           waiting, then the ms it waited: a driver reads
 *                           the host CPU its node used meanwhile
 *                           (bench/wait_cpu.py)
 * SIZES: comma-separated byte counts.  Last, after a barrier, rank 0 prints
 * "E done". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <nx.h>
#include "../benchargs.h"

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t))
        ;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: see the header of nxbench.c\n");
        return 2;
    }
    long me = mynode(), n = numnodes(), sz[BENCH_MAX_SIZES];
    int reps = atoi(argv[2]);
    long arg = atol(argv[3]);
    int ns = argc > 4 ? bench_sizes(argv[4], sz) : 0;
    long max = bench_max_size(sz, ns);
    char *a = calloc(1, (size_t)max), *b = calloc(1, (size_t)max);
    if (!a || !b)
        return 1;
    if (!strcmp(argv[1], "lat")) {
        long warmup = argc > 5 ? atol(argv[5]) : 2000;
        for (long k = 0; k < warmup && me < 2 && n > 1; k++) { /* warm up */
            if (me == 0) {
                csend(1, a, 8, 1, 0);
                crecv(2, b, 8);
            } else {
                crecv(1, b, 8);
                csend(2, a, 8, 0, 0);
            }
        }
        for (int i = 0; i < ns; i++)
            for (int r = 0; r <= reps; r++) { /* rep 0 warms up */
                gsync();
                double t0 = dclock();
                for (long k = 0; k < arg && me < 2 && n > 1; k++) {
                    if (me == 0) {
                        csend(1, a, sz[i], 1, 0);
                        crecv(2, b, sz[i]);
                    } else {
                        crecv(1, b, sz[i]);
                        csend(2, a, sz[i], 0, 0);
                    }
                }
                double us = (dclock() - t0) / (double)arg / 2 * 1e6;
                if (me == 0 && r)
                    printf("R nx-lat %ld us_oneway %.3f\n", sz[i], us);
            }
    } else if (!strcmp(argv[1], "ring")) {
        long right = (me + 1) % n;
        for (int i = 0; i < ns; i++) {
            long iters = bench_ring_iters(arg, sz[i]);
            for (int r = 0; r <= reps; r++) {
                gsync();
                double t0 = dclock();
                for (long k = 0; k < iters; k++) {
                    long mid = irecv(3, b, sz[i]);
                    csend(3, a, sz[i], right, 0);
                    msgwait(mid);
                }
                double secs = dclock() - t0, mbs = (double)sz[i] * iters / secs / 1e6;
                double w;
                gdlow(&mbs, 1, &w); /* the slowest node sets the figure */
                if (me == 0 && r)
                    printf("R nx-ring%ld %ld MBps %.2f\n", n, sz[i], mbs);
            }
        }
    } else if (!strcmp(argv[1], "stream")) {
        long mids[BENCH_STREAM_WINDOW_MAX];
        for (int i = 0; i < ns; i++) {
            long count = bench_stream_count(arg, sz[i]), win = bench_stream_window(sz[i]);
            for (int r = 0; r <= reps; r++) {
                gsync();
                double t0 = dclock();
                if (me == 0 && n > 1) {
                    for (long k = 0; k < count; k++) {
                        if (k >= win)
                            msgwait(mids[k % win]);
                        mids[k % win] = isend(4, a, sz[i], 1, 0);
                    }
                    for (long k = count > win ? count - win : 0; k < count; k++)
                        msgwait(mids[k % win]);
                    crecv(5, b, 0);
                } else if (me == 1) {
                    long posted = 0;
                    for (; posted < count && posted < win; posted++)
                        mids[posted % win] = irecv(4, b, sz[i]);
                    for (long k = 0; k < count; k++) {
                        msgwait(mids[k % win]);
                        if (posted < count) {
                            mids[posted % win] = irecv(4, b, sz[i]);
                            posted++;
                        }
                    }
                    csend(5, a, 0, 0, 0);
                }
                double mbs = (double)sz[i] * count / (dclock() - t0) / 1e6;
                if (me == 0 && r)
                    printf("R nx-stream %ld MBps %.2f\n", sz[i], mbs);
            }
        }
    } else if (!strcmp(argv[1], "gsync")) {
        for (int r = 0; r <= reps; r++) {
            gsync();
            double t0 = dclock();
            for (long k = 0; k < arg; k++)
                gsync();
            double us = (dclock() - t0) / (double)arg * 1e6, w;
            gdhigh(&us, 1, &w);
            if (me == 0 && r)
                printf("R nx-gsync %ld us %.3f\n", n, us);
        }
    } else if (!strcmp(argv[1], "block")) {
        for (int r = 0; r < reps && n > 1; r++)
            for (int g = 0; g < 2; g++) {
                gsync();
                if (me == 0) {
                    printf("B %s\n", g ? "gsync" : "recv");
                    fflush(stdout);
                    double t0 = dclock();
                    if (g)
                        gsync();
                    else
                        crecv(4, b, 8);
                    printf("R nx-block-%s %ld ms %.1f\n", g ? "gsync" : "recv", arg,
                           (dclock() - t0) * 1e3);
                    fflush(stdout);
                } else {
                    if (me == 1)
                        sleep_ms(arg);
                    if (g)
                        gsync();
                    else if (me == 1)
                        csend(4, a, 8, 0, 0);
                }
            }
    } else {
        fprintf(stderr, "unknown mode %s\n", argv[1]);
        return 2;
    }
    /* Every rank is past its work: what the harness waits for (an MPICH
     * job that then hangs in MPI_Finalize is stopped, bench/ternbench/jobs.py). */
    gsync();
    if (me == 0)
        printf("E done\n");
    fflush(stdout);
    return 0;
}
