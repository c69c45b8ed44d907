/* poll, ppoll, select, pselect6.  Files (forwarded under a job) and the
 * console's output are always ready; the console's input is ready when
 * forwarded bytes (or its end) are here, at once when nothing is forwarded
 * (end of file), and always under a job (yod's stdin: a read waits for it).
 * With nothing ready the call waits for its timeout, for forwarded input,
 * or for a signal. */
#include "evobj.h"
#include "fd.h"
#include "job.h"
#include "kernel.h"
#include "signal.h"
#include "syscall.h"
#include "time.h"
#include "uaccess.h"

#define POLLIN 0x1
#define POLLPRI 0x2
#define POLLOUT 0x4
#define POLLERR 0x8
#define POLLHUP 0x10
#define POLLNVAL 0x20
#define POLLRDNORM 0x40
#define POLLWRNORM 0x100
#define NS 1000000000ULL

struct pollfd { int32_t fd; int16_t events, revents; };

/* What a descriptor that is not a pipe, an eventfd or an epoll instance
 * could do now; *stdin_pending: forwarded input is awaited. */
static int plain_ready(const struct fd *f, bool *stdin_pending)
{
    switch (f->kind) {
    case FD_FILE:
        return POLLIN | POLLOUT;
    case FD_CONSOLE_IN:
        if (job.running || !console_in_forwarded() || console_in_wait(0) == 0)
            return POLLIN;
        *stdin_pending = true;
        return 0;
    default:
        return POLLOUT;
    }
}

uint32_t evobj_console_ready(const struct fd *f)
{
    bool pending = false;
    return (uint32_t)plain_ready(f, &pending);
}

/* What fd could do now (POLLIN/POLLOUT, POLLHUP, POLLERR), or -1 when it
 * is not open. */
static int ready(int64_t fd, bool *stdin_pending)
{
    struct fd *f = fd >= 0 ? fd_get((uint64_t)fd) : NULL;
    if (!f)
        return -1;
    return evobj_kind(f->kind) ? (int)evobj_ready(f) : plain_ready(f, stdin_pending);
}

/* Between checks: until the deadline, forwarded input, a change of a pipe,
 * an eventfd or an epoll instance, or a signal. */
static long pause_until(uint64_t deadline, bool stdin_pending)
{
    if (stdin_pending)
        return console_in_wait(deadline);
    return evobj_wait(deadline, "poll() or select() with nothing to wait for");
}

static long do_poll(uint64_t fds_va, uint64_t n, uint64_t deadline)
{
    if (n > MAX_FDS)
        return -EINVAL;
    if (!user_ok(fds_va, n * sizeof(struct pollfd)))
        return -EFAULT;
    struct pollfd *p = (struct pollfd *)fds_va;
    for (;;) {
        long count = 0;
        bool stdin_pending = false;
        for (uint64_t i = 0; i < n; i++) {
            p[i].revents = 0;
            if (p[i].fd < 0)
                continue;
            int can = ready(p[i].fd, &stdin_pending);
            int want = p[i].events | POLLIN * !!(p[i].events & POLLRDNORM) |
                       POLLOUT * !!(p[i].events & POLLWRNORM);
            int got = can < 0 ? POLLNVAL : (can & want) | (can & (POLLERR | POLLHUP));
            if (got & POLLIN)
                got |= p[i].events & POLLRDNORM;
            if (got & POLLOUT)
                got |= p[i].events & POLLWRNORM;
            p[i].revents = (int16_t)(can < 0 ? POLLNVAL
                                             : got & (p[i].events | POLLNVAL | POLLERR | POLLHUP));
            count += p[i].revents != 0;
        }
        if (count || time_monotonic_ns() >= deadline)
            return count;
        long r = pause_until(deadline, stdin_pending);
        if (r == -EINTR)
            return r;
    }
}

SYSCALL(poll)
{
    UNUSED_ARGS();
    int32_t ms = (int32_t)a2;
    uint64_t deadline = ms < 0 ? WAIT_FOREVER : time_monotonic_ns() + (uint64_t)ms * 1000000ULL;
    return do_poll(a0, a1, deadline);     /* EINTR after a handler, as on Linux */
}

SYSCALL(ppoll)
{
    UNUSED_ARGS();
    uint64_t deadline;
    long r = timeout_from_user(a2, false, time_monotonic_ns(), &deadline);
    if (r || (r = signal_wait_mask(a3, a4)))
        return r;
    return signal_wait_mask_end(do_poll(a0, a1, deadline));
}

/* select's three sets over fds [0, n): the number of bits left set. */
static long do_select(uint64_t n, uint64_t sets[3], uint64_t deadline)
{
    if ((int64_t)n < 0)
        return -EINVAL;
    if (n > MAX_FDS)
        n = MAX_FDS;                          /* no descriptor lies beyond */
    uint64_t bytes = (n + 63) / 64 * 8;
    static uint64_t in[3][MAX_FDS / 64], out[3][MAX_FDS / 64];
    for (int s = 0; s < 3; s++) {
        memset(in[s], 0, sizeof in[s]);
        if (sets[s] && copy_from_user(in[s], sets[s], bytes))
            return -EFAULT;
    }
    for (;;) {
        long count = 0;
        bool stdin_pending = false;
        memset(out, 0, sizeof out);
        for (uint64_t fd = 0; fd < n; fd++) {
            uint64_t bit = 1ULL << (fd % 64);
            bool r = in[0][fd / 64] & bit, w = in[1][fd / 64] & bit, e = in[2][fd / 64] & bit;
            if (!r && !w && !e)
                continue;
            int can = ready((int64_t)fd, &stdin_pending);
            if (can < 0)
                return -EBADF;
            /* End of file (a pipe's writers gone) reads; a broken pipe writes. */
            if (r && (can & (POLLIN | POLLHUP)))
                out[0][fd / 64] |= bit, count++;
            if (w && (can & (POLLOUT | POLLERR)))
                out[1][fd / 64] |= bit, count++;
        }
        if (count || time_monotonic_ns() >= deadline) {
            for (int s = 0; s < 3; s++)
                if (sets[s] && copy_to_user(sets[s], out[s], bytes))
                    return -EFAULT;
            return count;
        }
        long r = pause_until(deadline, stdin_pending);
        if (r == -EINTR)
            return r;
    }
}

SYSCALL(select)
{
    UNUSED_ARGS();
    uint64_t sets[3] = {a1, a2, a3}, deadline = WAIT_FOREVER, now = time_monotonic_ns();
    if (a4) {
        int64_t tv[2];
        if (copy_from_user(tv, a4, sizeof tv))
            return -EFAULT;
        if (tv[0] < 0 || tv[1] < 0)
            return -EINVAL;
        /* Microseconds past a second carry over, as Linux takes them. */
        uint64_t us = (uint64_t)tv[1], secs = (uint64_t)tv[0] + us / 1000000;
        deadline = secs > WAIT_FOREVER / 4 / NS ? WAIT_FOREVER / 2 : now + secs * NS + us % 1000000 * 1000;
    }
    long r = do_select(a0, sets, deadline);
    if (a4 && r >= 0) {                       /* Linux leaves the time not waited */
        uint64_t t = time_monotonic_ns(), left = deadline > t ? deadline - t : 0;
        int64_t tv[2] = {(int64_t)(left / NS), (int64_t)(left % NS / 1000)};
        copy_to_user(a4, tv, sizeof tv);
    }
    return r;
}

SYSCALL(pselect6)
{
    UNUSED_ARGS();
    uint64_t sets[3] = {a1, a2, a3}, deadline;
    long r = timeout_from_user(a4, false, time_monotonic_ns(), &deadline);
    if (r)
        return r;
    if (a5) {
        uint64_t sig[2];                      /* { const sigset_t *ss; size_t ss_len; } */
        if (copy_from_user(sig, a5, sizeof sig))
            return -EFAULT;
        if ((r = signal_wait_mask(sig[0], sig[1])))
            return r;
    }
    return signal_wait_mask_end(do_select(a0, sets, deadline));
}
