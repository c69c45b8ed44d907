/* Small helpers for the NX test programs (they run on Tern and on MPI). */
#ifndef NXTEST_H
#define NXTEST_H
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <nx.h>

#include "../pattern.h"

#define CHECK(cond, ...)                                                  \
    do {                                                                  \
        if (!(cond)) {                                                    \
            printf("node %ld: FAILED %s:%d: ", mynode(), __FILE__, __LINE__); \
            printf(__VA_ARGS__);                                          \
            printf("\n");                                                 \
            fflush(stdout);                                               \
            exit(1);                                                      \
        }                                                                 \
    } while (0)

/* Computes for the given seconds without calling the library (the clock
 * is read through clock_gettime, not NX). */
static inline void compute_for(double seconds)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double end = ts.tv_sec + ts.tv_nsec * 1e-9 + seconds;
    volatile unsigned long x = 0;
    do {
        x++;
        clock_gettime(CLOCK_MONOTONIC, &ts);
    } while (ts.tv_sec + ts.tv_nsec * 1e-9 < end);
}

#endif
