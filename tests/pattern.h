/* The byte pattern test programs send and check (tests/nx, tests/mpi):
 * byte i of a buffer made with seed s. */
#ifndef TESTS_PATTERN_H
#define TESTS_PATTERN_H

static inline unsigned char pattern(long seed, long i)
{
    return (unsigned char)(seed * 131 + i * 7 + (i >> 8));
}

static inline void fill(unsigned char *b, long n, long seed)
{
    for (long i = 0; i < n; i++)
        b[i] = pattern(seed, i);
}

/* The first byte that is not the pattern, or -1. */
static inline long first_bad(const unsigned char *b, long n, long seed)
{
    for (long i = 0; i < n; i++)
        if (b[i] != pattern(seed, i))
            return i;
    return -1;
}
#endif
