/* Timers that signal: alarm, setitimer and getitimer, and the POSIX timers
 * (timer_create, timer_settime, timer_gettime, timer_getoverrun,
 * timer_delete).  Each process has its three interval timers and up to
 * PROCESS_POSIX_TIMERS POSIX ones (ranks per core: each rank its own,
 * ranks.c), and one one-shot local-APIC timer serves them all (time.c's
 * program alarm): that of the process's home CPU, where its first thread
 * runs (CPU 0; a rank's first core), set for whichever is due first.  The
 * signal goes to that process, or to one of its threads (SIGEV_THREAD_ID,
 * what glibc and musl build SIGEV_THREAD on).  ITIMER_VIRTUAL, ITIMER_PROF
 * and the CPU-time clocks count real time: the program owns its CPU, the
 * view CLOCK_PROCESS_CPUTIME_ID takes too (sys/time.c).  A POSIX timer that
 * expires while its last signal is still pending counts an overrun, and
 * the signal's siginfo says SI_TIMER, the timer's id and value, and the
 * overruns (signal.c and sigwait.c ask itimer_taken).  Timers that share a
 * signal each deliver it. */
#include "kernel.h"
#include "process.h"
#include "ranks.h"
#include "signal.h"
#include "syscall.h"
#include "thread.h"
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
    for (int i = 0; i < PROCESS_POSIX_TIMERS; i++) {
        uint64_t at = proc.ptimers[i].used ? proc.ptimers[i].next_ns : 0;
        if (at && (!first || at < first))
            first = at;
    }
    return first;
}

#define SIGEV_SIGNAL 0
#define SIGEV_NONE 1
#define SIGEV_THREAD_ID 4

/* Makes t's signal pending for whom it tells: a thread of its own
 * (SIGEV_THREAD_ID) or the process. */
static void notify(struct posix_timer *t)
{
    struct thread *to = t->notify == SIGEV_THREAD_ID ? thread_by_tid(t->tid) : NULL;
    if (to && to->process == &proc)
        thread_signal(to, t->sig);
    else if (t->notify == SIGEV_THREAD_ID)
        t->pending = false;            /* its thread is gone: nobody to tell */
    else
        signal_raise(t->sig);
}

/* POSIX timer t is due: its signal, or an overrun while the last one is
 * still pending; the next expiry keeps the period's phase. */
static void posix_fire(struct posix_timer *t, uint64_t now)
{
    uint64_t missed = timer_due(&t->next_ns, t->interval_ns, now) - 1;
    if (t->notify == SIGEV_NONE)
        return;
    int32_t add = missed > INT32_MAX ? INT32_MAX : (int32_t)missed;
    if (__atomic_exchange_n(&t->pending, true, __ATOMIC_SEQ_CST)) {
        add = add < INT32_MAX ? add + 1 : add;
        t->overrun = t->overrun > INT32_MAX - add ? INT32_MAX : t->overrun + add;
        return;
    }
    t->overrun = add;
    notify(t);
}

bool itimer_taken(int sig, struct timer_expiry *e)
{
    bool taken = false;
    for (int i = 0; i < PROCESS_POSIX_TIMERS; i++) {
        struct posix_timer *t = &proc.ptimers[i];
        if (!t->used || t->sig != sig)
            continue;
        if (taken) {
            /* Another timer's signal is pending too: each timer's is a
             * signal of its own, as Linux queues one per timer, so the
             * signal stays pending for it (it was one for both). */
            if (__atomic_load_n(&t->pending, __ATOMIC_SEQ_CST))
                notify(t);
            continue;
        }
        if (__atomic_exchange_n(&t->pending, false, __ATOMIC_SEQ_CST)) {
            t->last_overrun = t->overrun;
            t->overrun = 0;
            *e = (struct timer_expiry){i, t->last_overrun, t->value};
            taken = true;
        }
    }
    return taken;
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
    for (int i = 0; i < PROCESS_POSIX_TIMERS; i++) {
        struct posix_timer *t = &proc.ptimers[i];
        if (t->used && t->next_ns && now >= t->next_ns)
            posix_fire(t, now);
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

/* ---- POSIX timers ------------------------------------------------------------ */

#define TIMER_ABSTIME 1

struct sigevent64 {
    uint64_t value;
    int32_t signo, notify;
    int32_t tid;                       /* SIGEV_THREAD_ID */
    int32_t pad[11];
};
static struct posix_timer *ptimer_of(uint64_t id)
{
    return id < PROCESS_POSIX_TIMERS && proc.ptimers[id].used ? &proc.ptimers[id] : NULL;
}


SYSCALL(timer_create)
{
    UNUSED_ARGS();
    uint64_t now;
    if (clock_now(a0, &now))
        return -EINVAL;                /* a clock the node does not have */
    int id = -1;
    for (int i = 0; i < PROCESS_POSIX_TIMERS && id < 0; i++)
        if (!proc.ptimers[i].used)
            id = i;
    struct sigevent64 ev = {.value = (uint64_t)(id < 0 ? 0 : id), .signo = SIGALRM,
                            .notify = SIGEV_SIGNAL};
    if (a1 && copy_from_user(&ev, a1, sizeof ev))
        return -EFAULT;
    if (ev.notify != SIGEV_SIGNAL && ev.notify != SIGEV_NONE && ev.notify != SIGEV_THREAD_ID)
        return -EINVAL;                /* SIGEV_THREAD is the C library's, never the kernel's */
    if (ev.notify != SIGEV_NONE && (ev.signo < 1 || ev.signo > NSIG))
        return -EINVAL;
    if (ev.notify == SIGEV_THREAD_ID) {
        struct thread *to = thread_by_tid((uint32_t)ev.tid);
        if (!to || to->process != &proc)
            return -EINVAL;
    }
    if (!user_ok(a2, 4))
        return -EFAULT;
    if (id < 0)
        return -EAGAIN;
    proc.ptimers[id] = (struct posix_timer){
        .used = true, .notify = (uint8_t)ev.notify, .sig = (uint8_t)ev.signo,
        .clock = (uint8_t)a0, .tid = (uint32_t)ev.tid, .value = ev.value};
    int32_t id32 = id;
    return copy_to_user(a2, &id32, 4);
}

/* ---- the arithmetic of a timer, for these and timerfds (evobj.c) ------------------- */

long timer_arm(const struct itimerspec64 *its, bool absolute, uint64_t clk, uint64_t *next,
               uint64_t *interval)
{
    uint64_t value, period;
    if (timespec_ns(its->value, &value) || timespec_ns(its->interval, &period))
        return -EINVAL;
    uint64_t mono = time_monotonic_ns(), at = mono + value;
    if (value && absolute) {
        uint64_t clock;                /* the time it names, on the timer's own clock */
        clock_now(clk, &clock);
        at = value > clock ? mono + (value - clock) : mono;
    }
    *interval = value ? period : 0;
    *next = value ? (at ? at : 1) : 0;
    return 0;
}

struct itimerspec64 timer_left(uint64_t next, uint64_t interval)
{
    struct itimerspec64 v = {ns_timespec(interval), {0, 0}};
    if (next) {
        uint64_t now = time_monotonic_ns();
        v.value = ns_timespec(next > now ? next - now : 1);   /* due, not yet taken */
    }
    return v;
}

uint64_t timer_due(uint64_t *next, uint64_t interval, uint64_t now)
{
    if (!*next || now < *next)
        return 0;
    uint64_t n = 1;
    if (interval) {
        n += (now - *next) / interval;
        *next += n * interval;
    } else {
        *next = 0;
    }
    return n;
}

SYSCALL(timer_settime)
{
    UNUSED_ARGS();
    struct posix_timer *t = ptimer_of(a0);
    if (!t)
        return -EINVAL;
    struct itimerspec64 v;
    if (copy_from_user(&v, a2, sizeof v))
        return -EFAULT;
    if (a3 && !user_ok(a3, sizeof v))
        return -EFAULT;
    struct itimerspec64 old = timer_left(t->next_ns, t->interval_ns);
    long rc = timer_arm(&v, a1 & TIMER_ABSTIME, t->clock, &t->next_ns, &t->interval_ns);
    if (rc)
        return rc;
    rearm();
    return a3 ? copy_to_user(a3, &old, sizeof old) : 0;
}

SYSCALL(timer_gettime)
{
    UNUSED_ARGS();
    struct posix_timer *t = ptimer_of(a0);
    if (!t)
        return -EINVAL;
    struct itimerspec64 v = timer_left(t->next_ns, t->interval_ns);
    return copy_to_user(a1, &v, sizeof v);
}

SYSCALL(timer_getoverrun)
{
    UNUSED_ARGS();
    struct posix_timer *t = ptimer_of(a0);
    return t ? t->last_overrun : -EINVAL;
}

SYSCALL(timer_delete)
{
    UNUSED_ARGS();
    struct posix_timer *t = ptimer_of(a0);
    if (!t)
        return -EINVAL;
    memset(t, 0, sizeof *t);
    rearm();
    return 0;
}
