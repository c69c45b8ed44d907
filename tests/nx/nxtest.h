/* Small helpers for the NX test programs (they run on Tern and on MPI). */
#ifndef NXTEST_H
#define NXTEST_H
#include <stdio.h>
#include <stdlib.h>
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

#endif
