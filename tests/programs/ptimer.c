/* POSIX timers (timer_create and the rest), as programs use them for
 * sampling profilers, timeouts and heartbeats.  Each line says yes or no,
 * the same on Linux:
 *   - a periodic SIGEV_SIGNAL timer: its handler sees SI_TIMER and the
 *     timer's value, and it keeps ringing;
 *   - expiries while its signal is blocked are one signal whose si_overrun
 *     (and timer_getoverrun) counts the others;
 *   - timer_gettime of a one-shot timer, SIGEV_NONE, TIMER_ABSTIME on
 *     CLOCK_REALTIME, timer_delete;
 *   - SIGEV_THREAD: the C library's thread runs the function with its value
 *     (glibc and musl build it on SIGEV_THREAD_ID and sigwaitinfo);
 *   - two timers with one signal, both expired while it was blocked: two
 *     signals, one with each timer's value;
 *   - bad arguments: EINVAL. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *yes(int ok) { return ok ? "yes" : "NO"; }

static volatile int ticks, code_ok, value_ok, last_overrun;
/* Signals taken inside the sigprocmask that unblocks (the one pending),
 * and the first one's overruns: a later expiry may come as soon as the
 * call is back, on a host that descheduled the program meanwhile. */
static volatile int unblocking, in_unblock, first_overrun = -1;

static void on_tick(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    ticks++;
    code_ok = si->si_code == SI_TIMER;
    value_ok = si->si_value.sival_int == 1234;
    last_overrun = si->si_overrun;
    if (unblocking && in_unblock++ == 0)
        first_overrun = si->si_overrun;
}

static volatile int pair_count, pair_values;

static void on_pair(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    pair_count++;
    if (si->si_code == SI_TIMER)
        pair_values |= si->si_value.sival_int;
}

static uint64_t now_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Computes (no system call to wait in) for ms milliseconds. */
static void spin(unsigned ms)
{
    uint64_t end = now_ns(CLOCK_MONOTONIC) + ms * 1000000ull;
    while (now_ns(CLOCK_MONOTONIC) < end)
        ;
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int thread_value;

static void on_thread(union sigval v)
{
    pthread_mutex_lock(&mu);
    thread_value = v.sival_int;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_tick;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGRTMIN + 1, &sa, NULL);

    /* Periodic, 10 ms. */
    timer_t t;
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = SIGRTMIN + 1;
    ev.sigev_value.sival_int = 1234;
    if (timer_create(CLOCK_MONOTONIC, &ev, &t)) {
        printf("timer_create: %s\n", strerror(errno));
        return 1;
    }
    struct itimerspec its = {{0, 10000000}, {0, 10000000}};
    timer_settime(t, 0, &its, NULL);
    spin(300);
    int seen = ticks;
    printf("periodic: rang %s, SI_TIMER %s, its value %s\n", yes(seen >= 3), yes(code_ok),
           yes(value_ok));
    spin(100);
    printf("still ringing: %s\n", yes(ticks > seen));

    /* Blocked for 400 ms with a 50 ms period: one signal, the rest
     * overruns.  The unblock waits until the next expiry is at least 30 ms
     * away, so that the signals taken inside it are the pending one alone;
     * a host that stops this program for longer than that lets fresh
     * expiries in, and those are counted from the clock, not failed. */
    struct itimerspec slow = {{0, 50000000}, {0, 50000000}};
    timer_settime(t, 0, &slow, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGRTMIN + 1);
    sigprocmask(SIG_BLOCK, &set, NULL);
    spin(400);
    struct itimerspec cur;
    uint64_t t0, next_ns;
    do {
        t0 = now_ns(CLOCK_MONOTONIC);   /* before the read: the expiry is no earlier than t0 + next_ns */
        timer_gettime(t, &cur);
        next_ns = (uint64_t)cur.it_value.tv_sec * 1000000000u + (uint64_t)cur.it_value.tv_nsec;
    } while (next_ns < 30000000);
    unblocking = 1;
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    unblocking = 0;
    uint64_t t1 = now_ns(CLOCK_MONOTONIC);
    sigprocmask(SIG_BLOCK, &set, NULL);     /* no signal between the two reads */
    int same = timer_getoverrun(t) == last_overrun;
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    /* Expiries that can have fallen inside the unblock, at most. */
    int fresh = t1 - t0 >= next_ns ? 1 + (int)((t1 - t0 - next_ns) / 50000000) : 0;
    printf("blocked 400 ms: one signal %s, si_overrun counts the rest %s, "
           "timer_getoverrun too %s\n", yes(in_unblock >= 1 && in_unblock <= 1 + fresh),
           yes(first_overrun >= 3), yes(same));
    timer_delete(t);
    printf("deleted: timer_gettime EINVAL %s\n",
           yes(timer_gettime(t, &cur) == -1 && errno == EINVAL));

    /* One-shot, read back; SIGEV_NONE counts down and signals nothing. */
    ev.sigev_notify = SIGEV_NONE;
    timer_create(CLOCK_MONOTONIC, &ev, &t);
    struct itimerspec one = {{0, 0}, {10, 0}};
    timer_settime(t, 0, &one, NULL);
    timer_gettime(t, &cur);
    int left_ok = (cur.it_value.tv_sec > 0 || cur.it_value.tv_nsec > 0) &&
                  (cur.it_value.tv_sec < 10 || (cur.it_value.tv_sec == 10 && !cur.it_value.tv_nsec));
    seen = ticks;
    struct itimerspec soon = {{0, 0}, {0, 20000000}};
    timer_settime(t, 0, &soon, NULL);
    spin(60);
    timer_gettime(t, &cur);
    printf("SIGEV_NONE: up to 10 s left after setting %s, nothing rang %s, disarmed after %s\n",
           yes(left_ok && cur.it_interval.tv_sec == 0), yes(ticks == seen),
           yes(cur.it_value.tv_sec == 0 && cur.it_value.tv_nsec == 0));
    timer_delete(t);

    /* Absolute on CLOCK_REALTIME, 50 ms from now. */
    ev.sigev_notify = SIGEV_SIGNAL;
    timer_create(CLOCK_REALTIME, &ev, &t);
    uint64_t at = now_ns(CLOCK_REALTIME) + 50000000;
    struct itimerspec abs = {{0, 0}, {(time_t)(at / 1000000000u), (long)(at % 1000000000u)}};
    seen = ticks;
    timer_settime(t, TIMER_ABSTIME, &abs, NULL);
    spin(20);
    /* Early only if it rang before its time (a host that descheduled this
     * program past it makes it due already). */
    int early = ticks != seen && now_ns(CLOCK_REALTIME) < at;
    spin(200);
    printf("TIMER_ABSTIME on CLOCK_REALTIME: rang once %s, not early %s\n",
           yes(ticks == seen + 1), yes(!early));
    timer_delete(t);

    /* SIGEV_THREAD. */
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_THREAD;
    ev.sigev_notify_function = on_thread;
    ev.sigev_value.sival_int = 77;
    int made = timer_create(CLOCK_MONOTONIC, &ev, &t) == 0;
    if (made) {
        struct itimerspec go = {{0, 0}, {0, 10000000}};
        timer_settime(t, 0, &go, NULL);
        struct timespec limit;
        clock_gettime(CLOCK_REALTIME, &limit);
        limit.tv_sec += 10;
        pthread_mutex_lock(&mu);
        while (!thread_value && pthread_cond_timedwait(&cv, &mu, &limit) == 0)
            ;
        pthread_mutex_unlock(&mu);
        timer_delete(t);
    }
    printf("SIGEV_THREAD: made %s, its function ran with its value %s\n", yes(made),
           yes(thread_value == 77));

    /* Two timers, one signal: each timer's expiry is a signal of its own
     * (Linux queues one per timer), even while both are pending. */
    struct sigaction sb;
    memset(&sb, 0, sizeof sb);
    sb.sa_sigaction = on_pair;
    sb.sa_flags = SA_SIGINFO;
    sigaction(SIGRTMIN + 2, &sb, NULL);
    sigset_t pair;
    sigemptyset(&pair);
    sigaddset(&pair, SIGRTMIN + 2);
    sigprocmask(SIG_BLOCK, &pair, NULL);
    timer_t two[2];
    struct itimerspec once = {{0, 0}, {0, 5000000}};
    for (int i = 0; i < 2; i++) {
        memset(&ev, 0, sizeof ev);
        ev.sigev_notify = SIGEV_SIGNAL;
        ev.sigev_signo = SIGRTMIN + 2;
        ev.sigev_value.sival_int = 1 << i;
        timer_create(CLOCK_MONOTONIC, &ev, &two[i]);
        timer_settime(two[i], 0, &once, NULL);
    }
    spin(50);
    sigprocmask(SIG_UNBLOCK, &pair, NULL);
    spin(10);
    printf("two timers, one signal: two signals %s, one from each %s\n", yes(pair_count == 2),
           yes(pair_values == 3));
    timer_delete(two[0]);
    timer_delete(two[1]);

    /* Bad arguments. */
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = 0;
    int bad_sig = timer_create(CLOCK_MONOTONIC, &ev, &t) == -1 && errno == EINVAL;
    int bad_clock = timer_create((clockid_t)99, NULL, &t) == -1 && errno == EINVAL;
    int bad_id = timer_settime((timer_t)(intptr_t)999, 0, &one, NULL) == -1 && errno == EINVAL;
    printf("EINVAL for signal 0 %s, clock 99 %s, timer 999 %s\n", yes(bad_sig), yes(bad_clock),
           yes(bad_id));
    return 0;
}
