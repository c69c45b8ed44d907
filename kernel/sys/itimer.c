/* Interval timers: alarm, setitimer, getitimer.  Each process has its three
 * (ranks per core: each rank its own, ranks.c), and one one-shot local-APIC
 * timer serves them (time.c's program alarm): that of the process's home
 * CPU, where its first thread runs (CPU 0; a rank's first core), set for
 * whichever of its timers is due first.  The signal goes to that process.
 * ITIMER_VIRTUAL and ITIMER_PROF count real time like ITIMER_REAL: the
 * program owns its CPU, the view CLOCK_PROCESS_CPUTIME_ID takes too
 * (sys/time.c). */
#include "kernel.h"
#include "process.h"
#include "ranks.h"
#include "signal.h"
#include "syscall.h"
#include "time.h"
#include "uaccess.h"

#define NS 1000000000ULL
#define NTIMERS 3

/* By process index (process.h): rank r's are timers[r]. */
static struct { uint64_t next_ns, interval_ns; } timers[MAX_RANKS][NTIMERS];   /* next 0: off */
static const int timer_signal[NTIMERS] = {SIGALRM, SIGVTALRM, SIGPROF};

struct timeval64 { int64_t sec, usec; };
struct itimerval64 { struct timeval64 interval, value; };

static void fire(struct regs *r);

/* The calling CPU's process's index (its timers), and its home CPU. */
static unsigned home(void) { return proc.index < MAX_RANKS ? proc.index : 0; }
static unsigned home_cpu(void) { return proc.cpu_first; }

uint64_t itimer_next_ns(void)
{
    uint64_t first = 0;
    for (int i = 0; i < NTIMERS; i++) {
        uint64_t at = timers[home()][i].next_ns;
        if (at && (!first || at < first))
            first = at;
    }
    return first;
}

static void rearm(void)
{
    uint64_t first = itimer_next_ns();
    time_user_alarm(home_cpu(), first ? fire : NULL, first);
}

/* On the home CPU's timer interrupt, or in a wait of one of the process's
 * threads on any core: `proc` is the process either way. */
static void fire(struct regs *r)
{
    uint64_t now = time_monotonic_ns();
    for (int i = 0; i < NTIMERS; i++) {
        uint64_t *next = &timers[home()][i].next_ns, interval = timers[home()][i].interval_ns;
        if (!*next || now < *next)
            continue;
        signal_raise(timer_signal[i]);
        /* Periods missed while the signal was pending are one signal, as
         * on Linux. */
        *next = interval ? now + interval : 0;
    }
    rearm();
    (void)r;        /* delivered on the interrupt's way back (signal_interrupted) */
}

void itimer_poll(void) { time_alarm_poll(home_cpu()); }

void itimer_reset(void)
{
    memset(timers, 0, sizeof timers);
    for (unsigned c = 0; c < MAX_CPUS; c++)     /* any rank's home, however many cores each */
        time_user_alarm(c, NULL, 0);
}

static uint64_t tv_ns(struct timeval64 tv) { return (uint64_t)tv.sec * NS + (uint64_t)tv.usec * 1000; }

static struct timeval64 ns_tv(uint64_t ns)
{
    ns = (ns + 999) / 1000;          /* whole microseconds, rounded up */
    return (struct timeval64){(int64_t)(ns / 1000000), (int64_t)(ns % 1000000)};
}

static struct itimerval64 current(int which)
{
    uint64_t next = timers[home()][which].next_ns;
    struct itimerval64 v = {ns_tv(timers[home()][which].interval_ns), {0, 0}};
    if (next) {
        uint64_t now = time_monotonic_ns();
        /* Due but not yet rung: still a moment left. */
        v.value = ns_tv(next > now ? next - now : 1000);
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
    timers[home()][which].interval_ns = value ? tv_ns(v->interval) : 0;
    timers[home()][which].next_ns = value ? time_monotonic_ns() + value : 0;
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

SYSCALL(setitimer)
{
    UNUSED_ARGS();
    if (a0 >= NTIMERS)
        return -EINVAL;
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
    struct itimerval64 v = {{0, 0}, {(int64_t)(a0 & 0xFFFFFFFF), 0}}, old;
    set(0, &v, &old);
    /* Seconds that were left, rounded to the nearest, never 0 for some. */
    uint64_t secs = (uint64_t)old.value.sec;
    if ((!secs && old.value.usec) || old.value.usec >= 500000)
        secs++;
    return (long)secs;
}
