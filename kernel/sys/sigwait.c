/* Waiting in a system call: until a deadline, until a signal arrives, or
 * for a signal itself (pause, rt_sigsuspend, rt_sigtimedwait).  A wait with
 * no deadline that nothing can end - no timer armed, no job whose yod could
 * send a signal - would last for ever: the program is ended with a report
 * instead ("never a hang"). */
#include "kernel.h"
#include "signal.h"
#include "syscall.h"
#include "thread.h"
#include "time.h"
#include "uaccess.h"
#include "wait.h"

#define NS 1000000000ULL

long wait_until(uint64_t deadline, uint64_t also, bool job_may_signal, const char *what)
{
    return wait_until_done(deadline, also, job_may_signal, what, NULL);
}

long wait_until_done(uint64_t deadline, uint64_t also, bool job_may_signal, const char *what,
                     volatile bool *done)
{
    for (;;) {
        if (done && __atomic_load_n(done, __ATOMIC_ACQUIRE))
            return 0;
        itimer_poll();
        if (signal_wakes(also))
            return -EINTR;
        uint64_t now = time_monotonic_ns();
        if (now >= deadline)
            return -ETIMEDOUT;
        uint64_t wake = deadline, alarm = itimer_next_ns();
        /* Threads of this process count, not the other ranks' (they cannot
         * wake it); and then done again: the last other thread may have
         * woken this one just before it ended. */
        if (deadline == WAIT_FOREVER && !alarm && !(job_may_signal && wait_hooked()) &&
            !threads_others_in_process() && !(done && __atomic_load_n(done, __ATOMIC_ACQUIRE)))
            program_killed(SIGKILL, "*** %s would wait for ever in %s: no other thread, no timer "
                           "and nothing else can end it (deadlock); ended", proc.name, what);
        if (alarm && alarm < wake)
            wake = alarm;
        if (wait_hooked() && wake - now > NS)
            wake = now + NS;             /* a signal from yod ends the wait too */
        /* One halt, then look again: a wake from another thread ends it.
         * A call that holds the serial lock (pause, sigsuspend, poll with
         * nothing to poll) lets it go meanwhile: it keeps no process state
         * across the halt, and a thread asleep here must not stop the
         * others' calls. */
        bool released = serial_release();
        time_halt_until(wait_bound(wake, false));
        serial_retake(released);
        wait_serve(false);
    }
}

SYSCALL(pause)
{
    UNUSED_ARGS();
    return wait_until(WAIT_FOREVER, 0, true, "pause()");
}

SYSCALL(rt_sigsuspend)
{
    UNUSED_ARGS();
    if (a1 != 8)
        return -EINVAL;
    if (!a0)
        return -EFAULT;
    long r = signal_wait_mask(a0, a1);
    return r ? r : wait_until(WAIT_FOREVER, 0, true, "sigsuspend()");
}

SYSCALL(rt_sigpending)
{
    UNUSED_ARGS();
    if (a1 > 8)
        return -EINVAL;
    uint64_t set = signal_pending_here() & thread_current()->sig_blocked;
    return copy_to_user(a0, &set, a1);
}

long timeout_from_user(uint64_t va, bool absolute, uint64_t now, uint64_t *deadline)
{
    struct timespec64 ts;
    *deadline = WAIT_FOREVER;
    if (!va)
        return 0;
    if (copy_from_user(&ts, va, sizeof ts))
        return -EFAULT;
    uint64_t t;
    if (timespec_ns(ts, &t))
        return -EINVAL;
    *deadline = absolute ? t : now + t;
    return 0;
}

long timespec_ns(struct timespec64 ts, uint64_t *ns)
{
    if (ts.sec < 0 || ts.nsec < 0 || ts.nsec >= (int64_t)NS)
        return -EINVAL;
    *ns = (uint64_t)ts.sec >= (WAIT_FOREVER / 2) / NS ? WAIT_FOREVER / 2
                                                      : (uint64_t)ts.sec * NS + (uint64_t)ts.nsec;
    return 0;
}

/* rt_sigtimedwait(set, info, timeout, size): takes one signal of set. */
SYSCALL(rt_sigtimedwait)
{
    UNUSED_ARGS();
    uint64_t set, deadline;
    if (a3 != 8)
        return -EINVAL;
    if (copy_from_user(&set, a0, 8))
        return -EFAULT;
    set &= ~SIG_UNBLOCKABLE;
    long r = timeout_from_user(a2, false, time_monotonic_ns(), &deadline);
    if (r)
        return r;
    if (!(signal_pending_here() & set)) {
        r = wait_until(deadline, set, true, "sigtimedwait()");
        if (r == -ETIMEDOUT)
            return -EAGAIN;
        if (!(signal_pending_here() & set))
            return -EINTR;              /* a handler of another signal runs */
    }
    int sig = __builtin_ctzll(signal_pending_here() & set) + 1;
    signal_take(sig);
    struct timer_expiry te;
    bool timer = itimer_taken(sig, &te);
    if (a1) {
        /* A timer's SI_TIMER too: glibc's and musl's SIGEV_THREAD helpers wait here. */
        uint8_t info[SIGINFO_SIZE];
        signal_info(info, sig, timer ? &te : NULL);
        if (copy_to_user(a1, info, sizeof info))
            return -EFAULT;
    }
    return sig;
}
