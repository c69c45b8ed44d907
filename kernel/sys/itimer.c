/* Interval timers: alarm, setitimer, getitimer.  One one-shot local-APIC
 * timer serves them all (time.c's program alarm): it is set for whichever
 * timer is due first.  ITIMER_VIRTUAL and ITIMER_PROF count real time like
 * ITIMER_REAL: the program owns its CPU, the view CLOCK_PROCESS_CPUTIME_ID
 * takes too (sys/time.c). */
#include "kernel.h"
#include "process.h"
#include "ranks.h"
#include "signal.h"
#include "syscall.h"
#include "time.h"
#include "uaccess.h"

#define NS 1000000000ULL
#define NTIMERS 3

static struct { uint64_t next_ns, interval_ns; } timers[NTIMERS];   /* next 0: off */
static const int timer_signal[NTIMERS] = {SIGALRM, SIGVTALRM, SIGPROF};

struct timeval64 { int64_t sec, usec; };
struct itimerval64 { struct timeval64 interval, value; };

static void fire(struct regs *r);

static void rearm(void)
{
    uint64_t first = 0;
    for (int i = 0; i < NTIMERS; i++)
        if (timers[i].next_ns && (!first || timers[i].next_ns < first))
            first = timers[i].next_ns;
    time_user_alarm(first ? fire : NULL, first);
}

static void fire(struct regs *r)
{
    uint64_t now = time_monotonic_ns();
    for (int i = 0; i < NTIMERS; i++) {
        if (!timers[i].next_ns || now < timers[i].next_ns)
            continue;
        signal_raise(timer_signal[i]);
        /* Periods missed while the signal was pending are one signal, as
         * on Linux. */
        timers[i].next_ns = timers[i].interval_ns ? now + timers[i].interval_ns : 0;
    }
    rearm();
    (void)r;        /* delivered on the interrupt's way back (signal_interrupted) */
}

uint64_t itimer_next_ns(void)
{
    uint64_t first = 0;
    for (int i = 0; i < NTIMERS; i++)
        if (timers[i].next_ns && (!first || timers[i].next_ns < first))
            first = timers[i].next_ns;
    return first;
}

void itimer_reset(void)
{
    memset(timers, 0, sizeof timers);
    time_user_alarm(NULL, 0);
}

static uint64_t tv_ns(struct timeval64 tv) { return (uint64_t)tv.sec * NS + (uint64_t)tv.usec * 1000; }

static struct timeval64 ns_tv(uint64_t ns)
{
    ns = (ns + 999) / 1000;          /* whole microseconds, rounded up */
    return (struct timeval64){(int64_t)(ns / 1000000), (int64_t)(ns % 1000000)};
}

static struct itimerval64 current(int which)
{
    struct itimerval64 v = {ns_tv(timers[which].interval_ns), {0, 0}};
    if (timers[which].next_ns) {
        uint64_t now = time_monotonic_ns();
        /* Due but not yet rung: still a moment left. */
        v.value = ns_tv(timers[which].next_ns > now ? timers[which].next_ns - now : 1000);
    }
    return v;
}

static bool valid(struct timeval64 tv)
{
    return tv.sec >= 0 && tv.usec >= 0 && tv.usec < 1000000 && (uint64_t)tv.sec < UINT64_MAX / NS / 4;
}

static long set(int which, const struct itimerval64 *v, struct itimerval64 *old)
{
    *old = current(which);
    uint64_t value = tv_ns(v->value);
    timers[which].interval_ns = value ? tv_ns(v->interval) : 0;
    timers[which].next_ns = value ? time_monotonic_ns() + value : 0;
    rearm();
    return 0;
}

SYSCALL(getitimer)
{
    UNUSED_ARGS();
    if (a0 >= NTIMERS)
        return -EINVAL;
    struct itimerval64 v = current((int)a0);
    return copy_to_user(a1, &v, sizeof v);
}

/* The timers are the node's, and their signal goes to CPU 0's process:
 * with ranks per core (ranks.c) that would be rank 0 whichever rank set
 * it, so they are refused there, said once on the console. */
static bool refused_for_ranks(void)
{
    static bool said;
    if (!ranks_active())
        return false;
    if (!said)
        kprintf("itimer: rank %u set an interval timer (alarm, setitimer): not with ranks "
                "per core (ENOSYS)\n", ranks_number(&proc));
    said = true;
    return true;
}

SYSCALL(setitimer)
{
    UNUSED_ARGS();
    if (a0 >= NTIMERS)
        return -EINVAL;
    if (refused_for_ranks())
        return -ENOSYS;
    struct itimerval64 v = {{0, 0}, {0, 0}}, old;
    if (a1 && copy_from_user(&v, a1, sizeof v))
        return -EFAULT;           /* NULL: disarm, as Linux takes it */
    if (!valid(v.value) || !valid(v.interval))
        return -EINVAL;
    if (a2 && !user_ok(a2, sizeof old))
        return -EFAULT;
    set((int)a0, &v, &old);
    return a2 ? copy_to_user(a2, &old, sizeof old) : 0;
}

SYSCALL(alarm)
{
    UNUSED_ARGS();
    if (refused_for_ranks())
        return -ENOSYS;
    struct itimerval64 v = {{0, 0}, {(int64_t)(a0 & 0xFFFFFFFF), 0}}, old;
    set(0, &v, &old);
    /* Seconds that were left, rounded to the nearest, never 0 for some. */
    uint64_t secs = (uint64_t)old.value.sec;
    if ((!secs && old.value.usec) || old.value.usec >= 500000)
        secs++;
    return (long)secs;
}
