/* The monotonic clock in seconds, for the time limits of the kernel-node
 * Portals test programs (each is built from its one .c file). */
#ifndef TEST_CLOCK_H
#define TEST_CLOCK_H
#include <time.h>

static inline double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}
#endif
