/* Pipes, eventfds, timerfds and epoll instances: objects a process makes
 * for its own threads (a node runs one process per rank, so none crosses
 * processes).
 * Go's runtime opens its network poller - an epoll instance, and a pipe or
 * an eventfd to wake it - the first time a program opens a file: without
 * them every Go program that opened one died ("netpollinit failed").
 * libuv, libevent and the self-pipe trick use the same calls.
 *
 * The objects come from a fixed pool of small records; a pipe's PIPE_CAP
 * bytes and an epoll instance's EPOLL_ITEMS items from the kernel heap
 * (kmalloc.h: a node without a NIC has a small one for them).  The pool is
 * kept small on purpose: the kernel image ends below 2 MiB, and past it the
 * application region would start 2 MiB later.  Their state changes under the serial lock (or with one
 * thread), and a change kicks every thread waiting here: a blocked read or
 * write, epoll_wait, poll and select look again.  A wait nothing could end
 * (one thread reading its own empty pipe) ends the program with a report,
 * as every such wait does (sigwait.c).  Regular files are never ready in
 * epoll's sense: epoll_ctl says EPERM for them, as Linux does, and Go then
 * reads them blocking. */
#include "evobj.h"
#include "kernel.h"
#include "kmalloc.h"
#include "process.h"
#include "signal.h"
#include "spinlock.h"
#include "syscall.h"
#include "thread.h"
#include "time.h"
#include "uaccess.h"

#define MAX_OBJS 64
#define PIPE_CAP 4096
#define EPOLL_ITEMS 64
#define EVENT_MAX 0xfffffffffffffffeULL

#define O_NONBLOCK 04000
#define O_CLOEXEC 02000000
#define O_RDONLY 0
#define O_WRONLY 1
#define O_RDWR 2
#define EFD_SEMAPHORE 1
#define EPOLL_CTL_ADD 1
#define EPOLL_CTL_DEL 2
#define EPOLL_CTL_MOD 3
#define EPOLLEXCLUSIVE (1u << 28)
#define EPOLLWAKEUP (1u << 29)
#define EPOLLONESHOT (1u << 30)
#define EPOLLET (1u << 31)
#define EPOLL_ALWAYS (EV_ERR | EV_HUP)

struct epitem {
    int32_t fd;
    uint32_t events;               /* asked for (EPOLLET, EPOLLONESHOT kept here) */
    uint64_t data;
    uint64_t target;               /* the object's id, or the fd kind for the console */
    uint64_t seen;                 /* edge-triggered: the target's changes last reported */
};

enum { OBJ_FREE, OBJ_PIPE, OBJ_EVENT, OBJ_EPOLL, OBJ_TIMER };

struct kobj {
    uint8_t type;
    uint32_t refs;                 /* descriptors that name it */
    uint32_t readers, writers;     /* a pipe's ends open */
    uint64_t id;                   /* never reused: an epoll item's target */
    uint64_t changes;              /* state changes, for edge-triggered items */
    union {
        struct { uint8_t *buf; uint32_t head, len; } pipe;        /* buf: PIPE_CAP, kmalloc */
        struct { uint64_t count; bool semaphore; } ev;
        struct { struct epitem *item; uint32_t n; } ep;           /* item: EPOLL_ITEMS */
        struct {
            uint64_t next_ns, interval_ns;   /* monotonic; next 0: disarmed */
            uint64_t expired;                /* expiries not yet read */
            uint8_t clock;
        } tm;
    };
};

static struct kobj objs[MAX_OBJS];
static uint64_t next_id = 1;

/* ---- waiting ------------------------------------------------------------------- */

struct waiter {
    struct thread *thread;
    volatile bool woken;
};
#define MAX_WAITERS 64
static struct waiter *waiters[MAX_WAITERS];
static spinlock_t waiters_lock = SPINLOCK_INIT;

/* Something changed: every waiter looks again. */
static void changed(struct kobj *o)
{
    o->changes++;
    uint64_t f = spin_lock_irqsave(&waiters_lock);
    for (int i = 0; i < MAX_WAITERS; i++)
        if (waiters[i]) {
            __atomic_store_n(&waiters[i]->woken, true, __ATOMIC_RELEASE);
            if (waiters[i]->thread)
                thread_kick(waiters[i]->thread);
            waiters[i] = NULL;
        }
    spin_unlock_irqrestore(&waiters_lock, f);
}

static uint64_t next_expiry(void);

long evobj_wait(uint64_t deadline, const char *what)
{
    struct waiter me = {thread_current(), false};
    int slot = -1;
    uint64_t f = spin_lock_irqsave(&waiters_lock);
    for (int i = 0; i < MAX_WAITERS && slot < 0; i++)
        if (!waiters[i])
            waiters[slot = i] = &me;
    spin_unlock_irqrestore(&waiters_lock, f);
    /* More waiters than slots: look again every millisecond instead.  And
     * a timerfd's expiry is a change too: look again then. */
    uint64_t until = slot < 0 && deadline - time_monotonic_ns() > 1000000
                         ? time_monotonic_ns() + 1000000 : deadline;
    uint64_t timer = next_expiry();
    if (timer && timer < until)
        until = timer;
    long r = wait_until_done(until, 0, true, what, &me.woken);
    f = spin_lock_irqsave(&waiters_lock);
    if (slot >= 0 && waiters[slot] == &me)
        waiters[slot] = NULL;
    spin_unlock_irqrestore(&waiters_lock, f);
    return me.woken || (r == -ETIMEDOUT && until != deadline) ? 0 : r;
}

/* ---- objects and descriptors -------------------------------------------------- */

/* A free record of the pool made an object of type, its buffer taken;
 * NULL with *err -ENFILE (the pool is used up) or -ENOMEM (the heap). */
static struct kobj *obj_new(uint8_t type, long *err)
{
    for (int i = 0; i < MAX_OBJS; i++) {
        struct kobj *o = &objs[i];
        if (o->type != OBJ_FREE)
            continue;
        memset(o, 0, sizeof *o);
        if (type == OBJ_PIPE && !(o->pipe.buf = kmalloc(PIPE_CAP))) {
            *err = -ENFILE;            /* what pipe says when pipes may take no more */
            return NULL;
        }
        if (type == OBJ_EPOLL && !(o->ep.item = kmalloc(EPOLL_ITEMS * sizeof(struct epitem)))) {
            *err = -ENOMEM;
            return NULL;
        }
        o->type = type;
        o->id = next_id++;
        return o;
    }
    *err = -ENFILE;
    return NULL;
}

/* The record goes back to the pool, its buffer to the heap. */
static void obj_free(struct kobj *o)
{
    if (o->type == OBJ_PIPE)
        kfree(o->pipe.buf);
    if (o->type == OBJ_EPOLL)
        kfree(o->ep.item);
    o->type = OBJ_FREE;
}

/* A new descriptor naming o, counted in its references. */
static long fd_new(enum fd_kind kind, struct kobj *o, uint32_t flags, bool cloexec)
{
    long fd = fd_install((struct fd){kind, cloexec, flags, {.obj = o}});
    if (fd >= 0)
        evobj_ref(&proc.fds[fd]);
    return fd;
}

void evobj_ref(struct fd *f)
{
    f->obj->refs++;
    if (f->kind == FD_PIPE_R)
        f->obj->readers++;
    if (f->kind == FD_PIPE_W)
        f->obj->writers++;
}

void evobj_close(struct fd *f)
{
    struct kobj *o = f->obj;
    if (f->kind == FD_PIPE_R)
        o->readers--;
    if (f->kind == FD_PIPE_W)
        o->writers--;
    if (--o->refs == 0)
        obj_free(o);
    changed(o);                        /* an end closed: end of file, EPIPE */
}

void evobj_reset(void)
{
    for (int i = 0; i < MAX_OBJS; i++)
        if (objs[i].type != OBJ_FREE)
            obj_free(&objs[i]);
    memset(waiters, 0, sizeof waiters);
}

/* ---- readiness ------------------------------------------------------------------ */

static uint32_t epoll_ready_any(struct kobj *ep, int depth);
static uint64_t timer_expired(struct kobj *t);

/* EV_ bits f could give now; non-object descriptors are the caller's. */
static uint32_t obj_ready(const struct fd *f, int depth)
{
    const struct kobj *o = f->obj;
    switch (f->kind) {
    case FD_PIPE_R:
        return (o->pipe.len ? EV_IN : 0) | (o->writers ? 0 : EV_HUP);
    case FD_PIPE_W:
        return o->readers ? (o->pipe.len < PIPE_CAP ? EV_OUT : 0) : EV_OUT | EV_ERR;
    case FD_EVENT:
        return (o->ev.count ? EV_IN : 0) | (o->ev.count < EVENT_MAX ? EV_OUT : 0);
    case FD_EPOLL:
        return depth < 4 && epoll_ready_any(f->obj, depth + 1) ? EV_IN : 0;
    case FD_TIMER:
        return timer_expired(f->obj) ? EV_IN : 0;
    default:
        return 0;
    }
}

uint32_t evobj_ready(const struct fd *f) { return obj_ready(f, 0); }

uint64_t evobj_id(const struct fd *f) { return f->obj->id; }

/* ---- pipes ------------------------------------------------------------------------ */

static long make_pipe(uint64_t fds_va, uint64_t flags)
{
    if (flags & ~(uint64_t)(O_NONBLOCK | O_CLOEXEC | 040000 /* O_DIRECT */))
        return -EINVAL;
    if (!user_ok(fds_va, 8))
        return -EFAULT;
    if (fd_free_count() < 2)
        return -EMFILE;
    long err;
    struct kobj *o = obj_new(OBJ_PIPE, &err);
    if (!o)
        return err;
    uint32_t nb = flags & O_NONBLOCK;
    int32_t fds[2];
    fds[0] = (int32_t)fd_new(FD_PIPE_R, o, O_RDONLY | nb, flags & O_CLOEXEC);
    fds[1] = (int32_t)fd_new(FD_PIPE_W, o, O_WRONLY | nb, flags & O_CLOEXEC);
    return copy_to_user(fds_va, fds, sizeof fds);
}

SYSCALL(pipe) { UNUSED_ARGS(); return make_pipe(a0, 0); }
SYSCALL(pipe2) { UNUSED_ARGS(); return make_pipe(a0, a1); }

/* After a wait: f still names the object it named (another thread may
 * have closed it, and its slot may name another now: EBADF, not that). */
static bool still(const struct fd *f, enum fd_kind kind, uint64_t id)
{
    return f->kind == kind && f->obj->id == id;
}

/* A read of a pipe, an eventfd or a timerfd; buf already checked. */
long evobj_read(struct fd *f, uint64_t buf, uint64_t len)
{
    struct kobj *o = f->obj;
    enum fd_kind kind = f->kind;
    uint64_t id = o->id;
    if (f->kind == FD_PIPE_W || f->kind == FD_EPOLL)
        return -EINVAL;
    if ((f->kind == FD_EVENT || f->kind == FD_TIMER) && len < 8)
        return -EINVAL;
    for (;;) {
        if (!still(f, kind, id))
            return -EBADF;
        if (f->kind == FD_PIPE_R && (o->pipe.len || !o->writers || !len)) {
            uint64_t n = len < o->pipe.len ? len : o->pipe.len;
            for (uint64_t done = 0; done < n;) {
                uint32_t run = PIPE_CAP - o->pipe.head;
                if (run > n - done)
                    run = (uint32_t)(n - done);
                if (copy_to_user(buf + done, o->pipe.buf + o->pipe.head, run))
                    return done ? (long)done : -EFAULT;
                o->pipe.head = (o->pipe.head + run) % PIPE_CAP;
                o->pipe.len -= run;
                done += run;
            }
            if (n)
                changed(o);
            return (long)n;
        }
        if (f->kind == FD_TIMER && timer_expired(o)) {
            if (copy_to_user(buf, &o->tm.expired, 8))
                return -EFAULT;
            o->tm.expired = 0;
            changed(o);
            return 8;
        }
        if (f->kind == FD_EVENT && o->ev.count) {
            uint64_t v = o->ev.semaphore ? 1 : o->ev.count;
            if (copy_to_user(buf, &v, 8))
                return -EFAULT;
            o->ev.count -= v;
            changed(o);
            return 8;
        }
        if (f->flags & O_NONBLOCK)
            return -EAGAIN;
        long r = evobj_wait(WAIT_FOREVER, f->kind == FD_EVENT   ? "an eventfd read"
                                          : f->kind == FD_TIMER ? "a timerfd read"
                                                                : "a pipe read");
        if (r == -EINTR)
            return -ERESTARTSYS;
    }
}

/* A write; buf already checked.  Up to PIPE_BUF (4096) bytes go in whole. */
long evobj_write(struct fd *f, uint64_t buf, uint64_t len)
{
    struct kobj *o = f->obj;
    enum fd_kind kind = f->kind;
    uint64_t id = o->id;
    if (f->kind == FD_PIPE_R || f->kind == FD_EPOLL || f->kind == FD_TIMER)
        return -EINVAL;
    if (f->kind == FD_EVENT) {
        uint64_t v;
        if (len < 8)
            return -EINVAL;
        if (copy_from_user(&v, buf, 8))
            return -EFAULT;
        if (v == UINT64_MAX)
            return -EINVAL;
        while (o->ev.count > EVENT_MAX - v) {
            if (f->flags & O_NONBLOCK)
                return -EAGAIN;
            if (evobj_wait(WAIT_FOREVER, "an eventfd write") == -EINTR)
                return -ERESTARTSYS;
            if (!still(f, kind, id))
                return -EBADF;
        }
        o->ev.count += v;
        changed(o);
        return 8;
    }
    uint64_t done = 0;
    while (done < len) {
        if (!still(f, kind, id))
            return done ? (long)done : -EBADF;
        if (!o->readers) {
            thread_signal(thread_current(), SIGPIPE);
            return done ? (long)done : -EPIPE;
        }
        uint64_t room = PIPE_CAP - o->pipe.len;
        /* Whole or not at all for a write of at most PIPE_BUF. */
        if (room && !(len <= PIPE_CAP && room < len - done)) {
            uint64_t n = len - done < room ? len - done : room;
            for (uint64_t put = 0; put < n;) {
                uint32_t at = (o->pipe.head + o->pipe.len) % PIPE_CAP;
                uint32_t run = PIPE_CAP - at;
                if (run > n - put)
                    run = (uint32_t)(n - put);
                if (copy_from_user(o->pipe.buf + at, buf + done + put, run))
                    return done + put ? (long)(done + put) : -EFAULT;
                o->pipe.len += run;
                put += run;
            }
            done += n;
            changed(o);
            continue;
        }
        if (f->flags & O_NONBLOCK)
            return done ? (long)done : -EAGAIN;
        long r = evobj_wait(WAIT_FOREVER, "a pipe write");
        if (r == -EINTR)
            return done ? (long)done : -ERESTARTSYS;
    }
    return (long)done;
}

/* ---- eventfd ----------------------------------------------------------------------- */

/* A new object of type under one new descriptor: the descriptor, -ENFILE
 * (the pool is used up) or -EMFILE. */
static long obj_fd(uint8_t type, enum fd_kind kind, uint64_t flags, struct kobj **out)
{
    long err;
    struct kobj *o = obj_new(type, &err);
    if (!o)
        return err;
    long fd = fd_new(kind, o, O_RDWR | (flags & O_NONBLOCK), flags & O_CLOEXEC);
    if (fd < 0)
        obj_free(o);
    *out = o;
    return fd;
}

static long make_eventfd(uint64_t initval, uint64_t flags)
{
    if (flags & ~(uint64_t)(O_NONBLOCK | O_CLOEXEC | EFD_SEMAPHORE) || initval > UINT32_MAX)
        return -EINVAL;
    struct kobj *o = NULL;
    long fd = obj_fd(OBJ_EVENT, FD_EVENT, flags, &o);
    if (fd >= 0) {
        o->ev.count = initval;
        o->ev.semaphore = flags & EFD_SEMAPHORE;
    }
    return fd;
}

SYSCALL(eventfd) { UNUSED_ARGS(); return make_eventfd(a0, 0); }
SYSCALL(eventfd2) { UNUSED_ARGS(); return make_eventfd(a0, a1); }

/* ---- timerfd --------------------------------------------------------------------------- */

#define CLOCK_REALTIME 0
#define CLOCK_MONOTONIC 1
#define CLOCK_BOOTTIME 7
#define CLOCK_REALTIME_ALARM 8
#define CLOCK_BOOTTIME_ALARM 9
#define TFD_TIMER_ABSTIME 1
#define TFD_TIMER_CANCEL_ON_SET 2

/* Counts t's expiries up to now; how many are unread.  Periods missed add
 * up, as Linux counts them. */
static uint64_t timer_expired(struct kobj *t)
{
    uint64_t n = timer_due(&t->tm.next_ns, t->tm.interval_ns, time_monotonic_ns());
    if (n) {
        t->tm.expired += n;
        t->changes++;                  /* a new event for edge-triggered items */
    }
    return t->tm.expired;
}

/* The first armed timerfd's next expiry (monotonic), 0 for none. */
static uint64_t next_expiry(void)
{
    uint64_t first = 0;
    for (int i = 0; i < MAX_OBJS; i++)
        if (objs[i].type == OBJ_TIMER && objs[i].tm.next_ns &&
            (!first || objs[i].tm.next_ns < first))
            first = objs[i].tm.next_ns;
    return first;
}

SYSCALL(timerfd_create)
{
    UNUSED_ARGS();
    if (a1 & ~(uint64_t)(O_NONBLOCK | O_CLOEXEC))
        return -EINVAL;
    if (a0 == CLOCK_REALTIME_ALARM || a0 == CLOCK_BOOTTIME_ALARM)
        return -EPERM;                 /* CAP_WAKE_ALARM: a job has none */
    if (a0 != CLOCK_REALTIME && a0 != CLOCK_MONOTONIC && a0 != CLOCK_BOOTTIME)
        return -EINVAL;
    struct kobj *o = NULL;
    long fd = obj_fd(OBJ_TIMER, FD_TIMER, a1, &o);
    if (fd >= 0)
        o->tm.clock = (uint8_t)a0;
    return fd;
}

static struct kobj *timer_of(uint64_t fd, long *err)
{
    struct fd *f = fd_get(fd);
    *err = !f ? -EBADF : f->kind != FD_TIMER ? -EINVAL : 0;
    return *err ? NULL : f->obj;
}

/* What is left and the period, as timerfd_gettime gives them. */
static struct itimerspec64 timer_now(struct kobj *t)
{
    timer_expired(t);
    return timer_left(t->tm.next_ns, t->tm.interval_ns);
}

SYSCALL(timerfd_settime)
{
    UNUSED_ARGS();
    long err;
    struct kobj *t = timer_of(a0, &err);
    if (!t)
        return err;
    if (a1 & ~(uint64_t)(TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET))
        return -EINVAL;
    struct itimerspec64 its;
    if (copy_from_user(&its, a2, sizeof its))
        return -EFAULT;
    if (a3 && !user_ok(a3, sizeof its))
        return -EFAULT;
    struct itimerspec64 old = timer_now(t);
    long rc = timer_arm(&its, a1 & TFD_TIMER_ABSTIME, t->tm.clock, &t->tm.next_ns,
                        &t->tm.interval_ns);
    if (rc)
        return rc;
    if (a3 && copy_to_user(a3, &old, sizeof old))
        return -EFAULT;
    t->tm.expired = 0;
    changed(t);                        /* a waiter's deadline moves */
    return 0;
}

SYSCALL(timerfd_gettime)
{
    UNUSED_ARGS();
    long err;
    struct kobj *t = timer_of(a0, &err);
    if (!t)
        return err;
    struct itimerspec64 cur = timer_now(t);
    return copy_to_user(a1, &cur, sizeof cur);
}

/* ---- epoll --------------------------------------------------------------------------- */

static long make_epoll(uint64_t flags)
{
    struct kobj *o = NULL;
    return flags & ~(uint64_t)O_CLOEXEC ? -EINVAL : obj_fd(OBJ_EPOLL, FD_EPOLL, flags, &o);
}

SYSCALL(epoll_create) { UNUSED_ARGS(); return (int32_t)a0 <= 0 ? -EINVAL : make_epoll(0); }
SYSCALL(epoll_create1) { UNUSED_ARGS(); return make_epoll(a0); }

/* What an item's descriptor is: its object's id, or its kind (the console);
 * 0 when it is closed. */
static uint64_t target_of(int32_t fd)
{
    struct fd *f = fd >= 0 ? fd_get((uint64_t)fd) : NULL;
    if (!f)
        return 0;
    return evobj_kind(f->kind) ? f->obj->id : (uint64_t)f->kind << 56;
}

/* What the item's descriptor could give now, and its changes so far. */
static uint32_t item_ready(const struct epitem *it, uint64_t *changes, int depth)
{
    struct fd *f = fd_get((uint64_t)it->fd);
    *changes = 0;
    if (!f)
        return 0;
    if (evobj_kind(f->kind)) {
        *changes = f->obj->changes;
        return obj_ready(f, depth);
    }
    return evobj_console_ready(f);
}

/* Drops items whose descriptor was closed (or names another file now):
 * Linux removes an item when its file's last descriptor closes. */
static void prune(struct kobj *ep)
{
    for (uint32_t i = 0; i < ep->ep.n;)
        if (target_of(ep->ep.item[i].fd) != ep->ep.item[i].target)
            ep->ep.item[i] = ep->ep.item[--ep->ep.n];
        else
            i++;
}

static uint32_t epoll_ready_any(struct kobj *ep, int depth)
{
    prune(ep);
    for (uint32_t i = 0; i < ep->ep.n; i++) {
        struct epitem *it = &ep->ep.item[i];
        uint64_t ch;
        uint32_t got = item_ready(it, &ch, depth) & (it->events | EPOLL_ALWAYS);
        if (got && !((it->events & EPOLLET) && ch == it->seen) && (it->events & ~EPOLLET))
            return 1;
    }
    return 0;
}

struct epoll_event {
    uint32_t events;
    uint64_t data;
} __attribute__((packed));

SYSCALL(epoll_ctl)
{
    UNUSED_ARGS();
    struct fd *e = fd_get(a0), *t = fd_get(a2);
    if (!e || !t)
        return -EBADF;
    if (e->kind != FD_EPOLL || a0 == a2)
        return -EINVAL;
    if (t->kind == FD_FILE)
        return -EPERM;                 /* a regular file or directory: never polled */
    struct kobj *ep = e->obj;
    struct epoll_event ev = {0, 0};
    if (a1 != EPOLL_CTL_DEL && copy_from_user(&ev, a3, sizeof ev))
        return -EFAULT;
    prune(ep);
    struct epitem *it = NULL;
    for (uint32_t i = 0; i < ep->ep.n; i++)
        if (ep->ep.item[i].fd == (int32_t)a2)
            it = &ep->ep.item[i];
    switch (a1) {
    case EPOLL_CTL_ADD:
        if (it)
            return -EEXIST;
        if (ep->ep.n == EPOLL_ITEMS)
            return -ENOSPC;
        it = &ep->ep.item[ep->ep.n++];
        *it = (struct epitem){(int32_t)a2, ev.events & ~(EPOLLEXCLUSIVE | EPOLLWAKEUP), ev.data,
                              target_of((int32_t)a2), UINT64_MAX};
        changed(ep);                   /* a waiter may have something now */
        return 0;
    case EPOLL_CTL_MOD:
        if (!it)
            return -ENOENT;
        it->events = ev.events & ~(EPOLLEXCLUSIVE | EPOLLWAKEUP);
        it->data = ev.data;
        it->seen = UINT64_MAX;         /* Linux looks again at a modified item */
        changed(ep);
        return 0;
    case EPOLL_CTL_DEL:
        if (!it)
            return -ENOENT;
        *it = ep->ep.item[--ep->ep.n];
        return 0;
    default:
        return -EINVAL;
    }
}

/* The ready items into events (at most max): how many.  An edge-triggered
 * item is ready once per change of its descriptor; a one-shot item is
 * disabled once reported. */
static long harvest(struct kobj *ep, uint64_t events_va, uint64_t max)
{
    prune(ep);
    long n = 0;
    for (uint32_t i = 0; i < ep->ep.n && (uint64_t)n < max; i++) {
        struct epitem *it = &ep->ep.item[i];
        uint64_t ch;
        uint32_t got = item_ready(it, &ch, 0) & (it->events | EPOLL_ALWAYS);
        if (!got || !(it->events & ~EPOLLET) || ((it->events & EPOLLET) && ch == it->seen))
            continue;
        struct epoll_event out = {got, it->data};
        if (copy_to_user(events_va + (uint64_t)n * sizeof out, &out, sizeof out))
            return n ? n : -EFAULT;
        it->seen = ch;
        if (it->events & EPOLLONESHOT)
            it->events &= EPOLLET;     /* nothing asked until EPOLL_CTL_MOD */
        n++;
    }
    return n;
}

static long epoll_wait_until(uint64_t epfd, uint64_t events_va, uint64_t max, uint64_t deadline)
{
    struct fd *e = fd_get(epfd);
    if (!e)
        return -EBADF;
    if (e->kind != FD_EPOLL)
        return -EINVAL;
    if ((int32_t)max <= 0 || max > 0x7FFFFFFF / sizeof(struct epoll_event))
        return -EINVAL;
    if (!user_ok(events_va, max * sizeof(struct epoll_event)))
        return -EFAULT;
    uint64_t id = e->obj->id;
    for (;;) {
        e = fd_get(epfd);              /* another thread may have closed it */
        if (!e || !still(e, FD_EPOLL, id))
            return -EBADF;
        long n = harvest(e->obj, events_va, max);
        if (n || time_monotonic_ns() >= deadline)
            return n;
        long r = evobj_wait(deadline, "epoll_wait()");
        if (r == -EINTR)
            return r;                  /* never restarted, as on Linux */
    }
}

static uint64_t ms_deadline(int32_t ms)
{
    return ms < 0 ? WAIT_FOREVER : time_monotonic_ns() + (uint64_t)ms * 1000000ULL;
}

SYSCALL(epoll_wait) { UNUSED_ARGS(); return epoll_wait_until(a0, a1, a2, ms_deadline((int32_t)a3)); }

SYSCALL(epoll_pwait)
{
    UNUSED_ARGS();
    long r = a4 ? signal_wait_mask(a4, a5) : 0;
    if (r)
        return r;
    r = epoll_wait_until(a0, a1, a2, ms_deadline((int32_t)a3));
    return a4 ? signal_wait_mask_end(r) : r;
}

SYSCALL(epoll_pwait2)
{
    UNUSED_ARGS();
    uint64_t deadline;
    long r = timeout_from_user(a3, false, time_monotonic_ns(), &deadline);
    if (r || (a4 && (r = signal_wait_mask(a4, a5))))
        return r;
    r = epoll_wait_until(a0, a1, a2, deadline);
    return a4 ? signal_wait_mask_end(r) : r;
}
