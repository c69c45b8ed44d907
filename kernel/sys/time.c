/* Clocks and sleeping.  The application owns the CPU, so its CPU time is
 * the time since it started. */
#include "kernel.h"
#include "syscall.h"
#include "time.h"
#include "uaccess.h"

#define CLOCK_REALTIME 0
#define CLOCK_MONOTONIC 1
#define CLOCK_PROCESS_CPUTIME_ID 2
#define CLOCK_THREAD_CPUTIME_ID 3
#define CLOCK_MONOTONIC_RAW 4
#define CLOCK_REALTIME_COARSE 5
#define CLOCK_MONOTONIC_COARSE 6
#define CLOCK_BOOTTIME 7
#define TIMER_ABSTIME 1
#define NS 1000000000ULL


static uint64_t start_ns;
void time_mark_app_start(void) { start_ns = time_monotonic_ns(); }

long clock_now(uint64_t clk, uint64_t *ns)
{
    switch (clk) {
    case CLOCK_REALTIME: case CLOCK_REALTIME_COARSE:
        *ns = time_realtime_ns(); return 0;
    case CLOCK_MONOTONIC: case CLOCK_MONOTONIC_RAW: case CLOCK_MONOTONIC_COARSE: case CLOCK_BOOTTIME:
        *ns = time_monotonic_ns(); return 0;
    case CLOCK_PROCESS_CPUTIME_ID: case CLOCK_THREAD_CPUTIME_ID:
        *ns = time_monotonic_ns() - start_ns; return 0;
    default:
        return -EINVAL;
    }
}

SYSCALL(clock_gettime)
{
    UNUSED_ARGS();
    uint64_t ns;
    long r = clock_now(a0, &ns);
    if (r)
        return r;
    struct timespec64 ts = ns_timespec(ns);
    return copy_to_user(a1, &ts, sizeof ts);
}

SYSCALL(clock_getres)
{
    UNUSED_ARGS();
    uint64_t ns;
    long r = clock_now(a0, &ns);
    if (r)
        return r;
    struct timespec64 ts = {0, 1};
    return a1 ? copy_to_user(a1, &ts, sizeof ts) : 0;
}

SYSCALL(gettimeofday)
{
    UNUSED_ARGS();
    uint64_t ns = time_realtime_ns();
    if (a0) {
        int64_t tv[2] = {(int64_t)(ns / NS), (int64_t)(ns % NS / 1000)};
        if (copy_to_user(a0, tv, sizeof tv))
            return -EFAULT;
    }
    if (a1) {
        int32_t tz[2] = {0, 0};
        if (copy_to_user(a1, tz, sizeof tz))
            return -EFAULT;
    }
    return 0;
}

SYSCALL(time)
{
    UNUSED_ARGS();
    int64_t t = (int64_t)(time_realtime_ns() / NS);
    if (a0 && copy_to_user(a0, &t, sizeof t))
        return -EFAULT;
    return t;
}

/* Sleeps until the request (relative, or absolute on clk) or until a
 * signal arrives: then -EINTR, and for a relative sleep the time left in
 * rem, as Linux gives it. */
static long sleep_common(uint64_t clk, bool absolute, uint64_t req_va, uint64_t rem_va)
{
    uint64_t now, until;
    if (!req_va)
        return -EFAULT;
    long r = clock_now(clk, &now);
    if (r)
        return r;
    if ((r = timeout_from_user(req_va, absolute, now, &until)))
        return r;
    if (rem_va && !absolute && !user_ok(rem_va, sizeof(struct timespec64)))
        return -EFAULT;
    uint64_t start = time_monotonic_ns();
    uint64_t deadline = start + (until > now ? until - now : 0);
    r = wait_until(deadline, 0, true, "nanosleep()");
    if (r != -EINTR)
        return 0;
    if (rem_va && !absolute) {
        uint64_t t = time_monotonic_ns(), left = deadline > t ? deadline - t : 0;
        struct timespec64 ts = ns_timespec(left);
        copy_to_user(rem_va, &ts, sizeof ts);
    }
    return -EINTR;
}

SYSCALL(nanosleep) { UNUSED_ARGS(); return sleep_common(CLOCK_MONOTONIC, false, a0, a1); }

SYSCALL(clock_nanosleep)
{
    UNUSED_ARGS();
    if (a0 == CLOCK_THREAD_CPUTIME_ID)
        return -EINVAL;
    return sleep_common(a0, a1 & TIMER_ABSTIME, a2, a3);
}

SYSCALL(times)
{
    UNUSED_ARGS();
    uint64_t ticks = (time_monotonic_ns() - start_ns) / (NS / 100);
    if (a0) {
        uint64_t t[4] = {ticks, 0, 0, 0};
        if (copy_to_user(a0, t, sizeof t))
            return -EFAULT;
    }
    return (long)(time_monotonic_ns() / (NS / 100));
}

SYSCALL(getrusage)
{
    UNUSED_ARGS();
    uint64_t ns = time_monotonic_ns() - start_ns;
    uint64_t ru[18] = {0};
    ru[0] = ns / NS;
    ru[1] = ns % NS / 1000;
    ru[4] = (proc.vend - proc.vbase) >> 10;  /* max RSS in KiB: all of it is real */
    return copy_to_user(a1, ru, sizeof ru);
}
