/* Blocking helper shared by the EQ and CT wait/poll calls. */
#ifndef PTL_WAIT_H
#define PTL_WAIT_H
#include "ptl_internal.h"

#define PTL_WAIT_AGAIN (-1)
#define PTL_WAIT_TIMEOUT (-2)
/* Called with the lock held; returns PTL_WAIT_AGAIN or a final code. */
typedef int (*ptl_cond_fn)(void *arg);
int ptl_wait(ptl_cond_fn cond, void *arg, uint64_t deadline_ns);
uint64_t ptl_deadline_after_ms(ptl_time_t ms);
#endif
