/* For harnesses whose code under test talks over the in-process test wire
 * (portals/host/test/): run it until nothing moves. */
#ifndef TERN_FUZZ_WIRE_H
#define TERN_FUZZ_WIRE_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "ptl_host.h"
#include "ptl_lib.h"
#include "ptl_test_host.h"

/* take_events() hands every queued event to its owner and says whether
 * there was one; between rounds the wire delivers and simulated time jumps
 * to the next timer.  Code that never goes quiet is a hang: abort. */
static inline void fuzz_settle(bool (*take_events)(void), const char *who)
{
    for (int round = 0; round < 100000; round++) {
        bool any = take_events();
        ptl_test_drain();
        ptl_lib_progress();
        uint64_t next = ptl_lib_next_deadline();
        if (!any && next == UINT64_MAX)
            return;
        if (!any)
            ptl_host_wait(next);
    }
    fprintf(stderr, "%s never went quiet\n", who);
    abort();
}
#endif
