/* Argument helpers shared by the NX and MPI micro-benchmarks
 * (bench/nx/nxbench.c, bench/mpi/mpibench.c), which must read their
 * arguments and size their loops the same way for their figures to be
 * compared, and by plbench's ptl-bw (tests/portals/linux/plbench.c), the
 * raw Portals stream beside theirs.  Header-only (static inline functions)
 * so that every compiler that builds them (lwkcc, tern-mpicc, MPICH's
 * mpicc) needs no extra object. */
#ifndef TERN_BENCHARGS_H
#define TERN_BENCHARGS_H

#include <stdlib.h>

#define BENCH_MAX_SIZES 32

/* Parses SIZES ("8,1024,0x10000") into out[BENCH_MAX_SIZES]; the count. */
static inline int bench_sizes(const char *s, long *out)
{
    int n = 0;
    for (char *end; *s && n < BENCH_MAX_SIZES; s = *end ? end + 1 : end)
        out[n++] = strtol(s, &end, 0);
    return n;
}

/* The buffer size the sizes need: the largest of them, at least 8 bytes
 * (the warm-up messages). */
static inline long bench_max_size(const long *sz, int n)
{
    long max = 8;
    for (int i = 0; i < n; i++)
        if (sz[i] > max)
            max = sz[i];
    return max;
}

/* Steps of the ring mode: about BYTES / size, 4 to 1000. */
static inline long bench_ring_iters(long bytes, long size)
{
    long iters = size > 0 ? bytes / size : 1000;
    return iters < 4 ? 4 : iters > 1000 ? 1000 : iters;
}

/* Messages of one repetition of the stream mode: BYTES / size, at least
 * one. */
static inline long bench_stream_count(long bytes, long size)
{
    return size > 0 && bytes / size > 0 ? bytes / size : 1;
}

/* Sends the stream mode keeps in flight (and receives posted): 32, 4 for
 * messages of 1 MiB and more. */
#define BENCH_STREAM_WINDOW_MAX 32
static inline long bench_stream_window(long size)
{
    return size >= (1L << 20) ? 4 : BENCH_STREAM_WINDOW_MAX;
}

#endif
