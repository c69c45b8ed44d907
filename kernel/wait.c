/* The wait hook (wait.h).  The work it does (the job's) is process-wide:
 * with several threads it runs under the serial lock (thread.h), in the
 * wait of the thread that holds it or can take it; the others skip it. */
#include "thread.h"
#include "time.h"
#include "wait.h"

static const struct wait_hook *hook;

void wait_set_hook(const struct wait_hook *h) { hook = h; }

bool wait_hooked(void) { return hook != 0; }

uint64_t wait_bound(uint64_t deadline, bool net_progress_next)
{
    if (!hook)
        return deadline;
    if (hook->period_ns) {
        uint64_t cap = time_monotonic_ns() + hook->period_ns;
        if (deadline > cap)
            deadline = cap;
    }
    if (!net_progress_next && hook->due) {
        uint64_t due = hook->due();
        if (due < deadline)
            deadline = due;
    }
    return deadline;
}

void wait_serve(bool net_progress_next)
{
    if (!hook)
        return;
    if (!threads_many() || serial_held()) {
        hook->serve(net_progress_next);
    } else if (serial_trylock()) {
        hook->serve(net_progress_next);   /* may end the job: no unlock then */
        serial_unlock();
    }
}
