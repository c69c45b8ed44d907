/* A Portals call that must succeed, for the kernel-node Portals test
 * programs: otherwise the call and its return code, and exit 1. */
#ifndef TEST_CHECK_H
#define TEST_CHECK_H
#include <stdio.h>
#include <stdlib.h>

#define CHECK(x)                                                              \
    do {                                                                      \
        int rc_ = (x);                                                        \
        if (rc_ != PTL_OK) {                                                  \
            printf("%s failed: %d\n", #x, rc_);                               \
            exit(1);                                                          \
        }                                                                     \
    } while (0)
#endif
