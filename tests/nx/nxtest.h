/* Small helpers for the NX test programs (they run on Tern and on MPI). */
#ifndef NXTEST_H
#define NXTEST_H
#include <stdio.h>
#include <stdlib.h>
#include <nx.h>

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

static inline unsigned char pattern(long seed, long i) { return (unsigned char)(seed * 131 + i * 7 + (i >> 8)); }

static inline void fill(unsigned char *b, long n, long seed)
{
    for (long i = 0; i < n; i++)
        b[i] = pattern(seed, i);
}

static inline long first_bad(const unsigned char *b, long n, long seed)
{
    for (long i = 0; i < n; i++)
        if (b[i] != pattern(seed, i))
            return i;
    return -1;
}
#endif
