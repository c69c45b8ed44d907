/* MPI micro-benchmarks, one source for Tern's MPI (tern-mpicc, yod) and for
 * MPICH on the Linux comparison nodes (mpicc, mpiexec); the twin of
 * bench/nx/nxbench.c, with the same modes and output.  Rank 0 prints one
 * line per repetition:
 *     R <kind> <size> <unit> <value>
 * Modes (argv[1]):
 *   lat  REPS ITERS SIZES [WARMUP]
 *                           ping-pong 0 <-> 1 (MPI_Send / MPI_Recv), one-way
 *                           latency in us, after WARMUP 8-byte round trips
 *                           (default 2000; the smoke run of bench/run_all.py
 *                           asks for fewer)
 *   ring REPS BYTES SIZES   every rank sends to its right neighbour and
 *                           receives from its left (MPI_Irecv, MPI_Send,
 *                           MPI_Wait), MB/s (10^6) each rank sends; about
 *                           BYTES per size (4 to 1000 steps)
 *   stream REPS BYTES SIZES rank 0 streams BYTES / size messages to rank 1
 *                           (at least one), a window of MPI_Isends in
 *                           flight and as many MPI_Irecvs posted; rank 1's
 *                           empty answer to the last stops the clock; MB/s
 *                           (10^6) sent
 *   barrier REPS ITERS      us per MPI_Barrier
 *   gatherv REPS ITERS SIZES   us per MPI_Gatherv to rank 0, every rank a
 *   scatterv REPS ITERS SIZES  block of SIZE bytes (MPI_Scatterv from 0);
 *                           the slowest rank's figure (bench/gatherv.py)
 *   posted REPS ITERS COUNTS   0-byte ping-pong 0 <-> 1 as lat, with COUNT
 *                           receives posted on both ranks that no message
 *                           matches (a tag nobody sends), cancelled after:
 *                           what a deep posted-receive list costs a message
 *                           (past TERN_MPI_POSTED, 1024, they wait in the
 *                           library, libmsg/msg_held.c, and so does the
 *                           ping-pong's receive behind them)
 * SIZES: comma-separated byte counts.  Last, after a barrier, rank 0 prints
 * "E done". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../benchargs.h"

/* ITERS round trips of SIZE bytes between ranks 0 and 1 (others idle):
 * microseconds one way. */
static double pingpong(char *a, char *b, long size, long iters)
{
    int me, n;
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Comm_rank(w, &me);
    MPI_Comm_size(w, &n);
    double t0 = MPI_Wtime();
    for (long k = 0; k < iters && me < 2 && n > 1; k++) {
        if (me == 0) {
            MPI_Send(a, (int)size, MPI_BYTE, 1, 1, w);
            MPI_Recv(b, (int)size, MPI_BYTE, 1, 2, w, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(b, (int)size, MPI_BYTE, 0, 1, w, MPI_STATUS_IGNORE);
            MPI_Send(a, (int)size, MPI_BYTE, 0, 2, w);
        }
    }
    return (MPI_Wtime() - t0) / (double)iters / 2 * 1e6;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc < 4) {
        fprintf(stderr, "usage: see the header of mpibench.c\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    long sz[BENCH_MAX_SIZES];
    int reps = atoi(argv[2]);
    long arg = atol(argv[3]);
    int ns = argc > 4 ? bench_sizes(argv[4], sz) : 0;
    long max = bench_max_size(sz, ns);
    char *a = calloc(1, (size_t)max), *b = calloc(1, (size_t)max);
    if (!a || !b)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Comm w = MPI_COMM_WORLD;
    if (!strcmp(argv[1], "lat")) {
        long warmup = argc > 5 ? atol(argv[5]) : 2000;
        if (warmup > 0)
            pingpong(a, b, 8, warmup);
        for (int i = 0; i < ns; i++)
            for (int r = 0; r <= reps; r++) { /* rep 0 warms up */
                MPI_Barrier(w);
                double us = pingpong(a, b, sz[i], arg);
                if (me == 0 && r)
                    printf("R mpi-lat %ld us_oneway %.3f\n", sz[i], us);
            }
    } else if (!strcmp(argv[1], "ring")) {
        int right = (me + 1) % n, left = (me - 1 + n) % n;
        for (int i = 0; i < ns; i++) {
            long iters = bench_ring_iters(arg, sz[i]);
            for (int r = 0; r <= reps; r++) {
                MPI_Barrier(w);
                double t0 = MPI_Wtime();
                for (long k = 0; k < iters; k++) {
                    MPI_Request rq;
                    MPI_Irecv(b, (int)sz[i], MPI_BYTE, left, 3, w, &rq);
                    MPI_Send(a, (int)sz[i], MPI_BYTE, right, 3, w);
                    MPI_Wait(&rq, MPI_STATUS_IGNORE);
                }
                double secs = MPI_Wtime() - t0, mbs = (double)sz[i] * iters / secs / 1e6, low;
                /* the slowest rank sets the figure */
                MPI_Reduce(&mbs, &low, 1, MPI_DOUBLE, MPI_MIN, 0, w);
                if (me == 0 && r)
                    printf("R mpi-ring%d %ld MBps %.2f\n", n, sz[i], low);
            }
        }
    } else if (!strcmp(argv[1], "stream")) {
        MPI_Request rq[BENCH_STREAM_WINDOW_MAX];
        for (int i = 0; i < ns; i++) {
            long count = bench_stream_count(arg, sz[i]), win = bench_stream_window(sz[i]);
            for (int r = 0; r <= reps; r++) {
                MPI_Barrier(w);
                double t0 = MPI_Wtime();
                if (me == 0 && n > 1) {
                    for (long k = 0; k < count; k++) {
                        if (k >= win)
                            MPI_Wait(&rq[k % win], MPI_STATUS_IGNORE);
                        MPI_Isend(a, (int)sz[i], MPI_BYTE, 1, 4, w, &rq[k % win]);
                    }
                    for (long k = count > win ? count - win : 0; k < count; k++)
                        MPI_Wait(&rq[k % win], MPI_STATUS_IGNORE);
                    MPI_Recv(b, 0, MPI_BYTE, 1, 5, w, MPI_STATUS_IGNORE);
                } else if (me == 1) {
                    long posted = 0;
                    for (; posted < count && posted < win; posted++)
                        MPI_Irecv(b, (int)sz[i], MPI_BYTE, 0, 4, w, &rq[posted % win]);
                    for (long k = 0; k < count; k++) {
                        MPI_Wait(&rq[k % win], MPI_STATUS_IGNORE);
                        if (posted < count) {
                            MPI_Irecv(b, (int)sz[i], MPI_BYTE, 0, 4, w, &rq[posted % win]);
                            posted++;
                        }
                    }
                    MPI_Send(a, 0, MPI_BYTE, 0, 5, w);
                }
                double mbs = (double)sz[i] * count / (MPI_Wtime() - t0) / 1e6;
                if (me == 0 && r)
                    printf("R mpi-stream %ld MBps %.2f\n", sz[i], mbs);
            }
        }
    } else if (!strcmp(argv[1], "posted")) {
        long most = bench_max_size(sz, ns);
        MPI_Request *rq = malloc(sizeof *rq * (size_t)most);
        if (!rq)
            MPI_Abort(w, 1);
        int peer = 1 - me;
        for (int i = 0; i < ns; i++) {
            for (long k = 0; k < sz[i] && me < 2 && n > 1; k++)
                MPI_Irecv(b, 1, MPI_BYTE, peer, 77, w, &rq[k]);
            for (int r = 0; r <= reps; r++) { /* rep 0 warms up */
                MPI_Barrier(w);
                double us = pingpong(a, b, 0, arg);
                if (me == 0 && r)
                    printf("R mpi-posted %ld us_oneway %.3f\n", sz[i], us);
            }
            for (long k = 0; k < sz[i] && me < 2 && n > 1; k++) {
                MPI_Cancel(&rq[k]);
                MPI_Wait(&rq[k], MPI_STATUS_IGNORE);
            }
        }
        free(rq);
    } else if (!strcmp(argv[1], "barrier")) {
        for (int r = 0; r <= reps; r++) {
            MPI_Barrier(w);
            double t0 = MPI_Wtime();
            for (long k = 0; k < arg; k++)
                MPI_Barrier(w);
            double us = (MPI_Wtime() - t0) / (double)arg * 1e6, high;
            MPI_Reduce(&us, &high, 1, MPI_DOUBLE, MPI_MAX, 0, w);
            if (me == 0 && r)
                printf("R mpi-barrier %d us %.3f\n", n, high);
        }
    } else if (!strcmp(argv[1], "gatherv") || !strcmp(argv[1], "scatterv")) {
        int gather = argv[1][0] == 'g', *cnt = malloc(sizeof(int) * (size_t)n),
            *displs = malloc(sizeof(int) * (size_t)n);
        char *all = malloc((size_t)(max * n));
        if (!cnt || !displs || !all)
            MPI_Abort(w, 1);
        for (int i = 0; i < ns; i++) {
            for (int k = 0; k < n; k++) {
                cnt[k] = (int)sz[i];
                displs[k] = (int)(k * sz[i]);
            }
            for (int r = 0; r <= reps; r++) {
                MPI_Barrier(w);
                double t0 = MPI_Wtime();
                for (long k = 0; k < arg; k++)
                    if (gather)
                        MPI_Gatherv(a, (int)sz[i], MPI_BYTE, all, cnt, displs, MPI_BYTE, 0, w);
                    else
                        MPI_Scatterv(all, cnt, displs, MPI_BYTE, b, (int)sz[i], MPI_BYTE, 0, w);
                double us = (MPI_Wtime() - t0) / (double)arg * 1e6, high;
                MPI_Reduce(&us, &high, 1, MPI_DOUBLE, MPI_MAX, 0, w);
                if (me == 0 && r)
                    printf("R mpi-%s%d %ld us %.3f\n", argv[1], n, sz[i], high);
            }
        }
        free(cnt);
        free(displs);
        free(all);
    } else {
        fprintf(stderr, "unknown mode %s\n", argv[1]);
        MPI_Abort(w, 2);
    }
    /* Every rank is past its work: what the harness waits for (an MPICH
     * job that then hangs in MPI_Finalize is stopped, bench/ternbench/jobs.py). */
    MPI_Barrier(w);
    if (me == 0)
        printf("E done\n");
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
