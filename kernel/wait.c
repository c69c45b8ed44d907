/* The wait hook (wait.h): one per CPU, and there is one CPU. */
#include "time.h"
#include "wait.h"

static const struct wait_hook *hook;

void wait_set_hook(const struct wait_hook *h) { hook = h; }

bool wait_hooked(void) { return hook != 0; }

uint64_t wait_bound(uint64_t deadline)
{
    if (!hook || !hook->period_ns)
        return deadline;
    uint64_t cap = time_monotonic_ns() + hook->period_ns;
    return deadline > cap ? cap : deadline;
}

void wait_serve(void)
{
    if (hook)
        hook->serve();
}
