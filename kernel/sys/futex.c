/* Futexes, and the robust list that goes with them.
 *
 * Every operation is implemented as Linux defines it, over one wait queue
 * of whoever waits, under a lock (threads on other cores wake and requeue
 * at the same time): WAKE and REQUEUE walk it, WAIT compares the word under
 * the same lock and, when it still holds the expected value, blocks the
 * caller on it.  A wake marks the waiter and kicks its thread (thread.c:
 * an IPI to its core, or its turn on a shared core).  With one thread no
 * one else can ever wake a waiter, so a WAIT ends by its timeout or a
 * signal only - and one with neither would wait for ever: sigwait.c ends
 * that program with a report (a deadlock) rather than hang the node.  Keys
 * are user addresses in the calling process (ranks per core: each rank's
 * own address space, the same addresses in every rank); private and shared
 * futexes are the same. */
#include "kernel.h"
#include "process.h"
#include "signal.h"
#include "spinlock.h"
#include "syscall.h"
#include "thread.h"
#include "time.h"
#include "uaccess.h"

#define FUTEX_WAIT 0
#define FUTEX_WAKE 1
#define FUTEX_FD 2
#define FUTEX_REQUEUE 3
#define FUTEX_CMP_REQUEUE 4
#define FUTEX_WAKE_OP 5
#define FUTEX_LOCK_PI 6
#define FUTEX_UNLOCK_PI 7
#define FUTEX_TRYLOCK_PI 8
#define FUTEX_WAIT_BITSET 9
#define FUTEX_WAKE_BITSET 10
#define FUTEX_WAIT_REQUEUE_PI 11
#define FUTEX_CMP_REQUEUE_PI 12
#define FUTEX_LOCK_PI2 13
#define FUTEX_PRIVATE_FLAG 128
#define FUTEX_CLOCK_REALTIME 256
#define FUTEX_BITSET_MATCH_ANY 0xFFFFFFFFu
#define FUTEX_TID_MASK 0x3FFFFFFFu
#define FUTEX_OWNER_DIED 0x40000000u
#define FUTEX_WAITERS 0x80000000u

/* ---- the wait queue --------------------------------------------------------- */

struct futex_waiter {
    uint64_t key;                  /* the word's address ... */
    const struct process *space;   /* ... in this process */
    uint32_t bitset;
    volatile bool woken;
    struct thread *thread;
    struct futex_waiter *next;
};
static struct futex_waiter *queue;
static spinlock_t queue_lock = SPINLOCK_INIT;

static void dequeue(struct futex_waiter *w)
{
    for (struct futex_waiter **p = &queue; *p; p = &(*p)->next)
        if (*p == w) {
            *p = w->next;
            return;
        }
}

/* Wakes up to n waiters on key whose bitset meets bits: how many. */
static long wake(uint64_t key, uint32_t bits, int64_t n)
{
    long woken = 0;
    uint64_t f = spin_lock_irqsave(&queue_lock);
    for (struct futex_waiter **p = &queue; *p && woken < n;) {
        struct futex_waiter *w = *p;
        if (w->key == key && w->space == &proc && (w->bitset & bits)) {
            *p = w->next;
            struct thread *t = w->thread;
            __atomic_store_n(&w->woken, true, __ATOMIC_RELEASE);  /* w may go now */
            if (t)
                thread_kick(t);
            woken++;
        } else {
            p = &w->next;
        }
    }
    spin_unlock_irqrestore(&queue_lock, f);
    return woken;
}

long futex_wake_word(uint64_t uaddr, int n) { return wake(uaddr, FUTEX_BITSET_MATCH_ANY, n); }

/* Moves up to n waiters from key to key2: how many. */
static long requeue(uint64_t key, uint64_t key2, int64_t n)
{
    long moved = 0;
    uint64_t f = spin_lock_irqsave(&queue_lock);
    for (struct futex_waiter *w = queue; w && moved < n; w = w->next)
        if (w->key == key && w->space == &proc) {
            w->key = key2;
            moved++;
        }
    spin_unlock_irqrestore(&queue_lock, f);
    return moved;
}

/* Blocks the caller on the word at uaddr if it still holds val (-EAGAIN
 * if not), until woken (0), the deadline (-ETIMEDOUT) or a signal (-EINTR). */
static long block(uint64_t uaddr, volatile uint32_t *word, uint32_t val, uint32_t bitset,
                  uint64_t deadline)
{
    struct futex_waiter me = {uaddr, &proc, bitset, false, thread_current(), NULL};
    uint64_t f = spin_lock_irqsave(&queue_lock);
    if (__atomic_load_n(word, __ATOMIC_SEQ_CST) != val) {
        spin_unlock_irqrestore(&queue_lock, f);
        return -EAGAIN;
    }
    me.next = queue;
    queue = &me;
    spin_unlock_irqrestore(&queue_lock, f);
    long r = wait_until_done(deadline, 0, false, "a futex wait", &me.woken);
    f = spin_lock_irqsave(&queue_lock);
    if (!me.woken)
        dequeue(&me);
    spin_unlock_irqrestore(&queue_lock, f);
    return me.woken ? 0 : r;
}

void futex_reset(void) { queue = NULL; }   /* a job ended, maybe inside a wait */

/* ---- the word ------------------------------------------------------------------ */

static volatile uint32_t *word(uint64_t uaddr, long *err)
{
    *err = (uaddr & 3) ? -EINVAL : !user_ok(uaddr, 4) ? -EFAULT : 0;
    return *err ? NULL : (volatile uint32_t *)uaddr;
}

/* The monotonic deadline for a timeout at tsva: relative to now, or
 * absolute on CLOCK_MONOTONIC or (realtime) CLOCK_REALTIME. */
static long deadline_of(uint64_t tsva, bool absolute, bool realtime, uint64_t *deadline)
{
    /* Realtime from the same reading: a second clock read would move the
     * deadline earlier by the time between the two. */
    uint64_t mono = time_monotonic_ns();
    uint64_t now = absolute && realtime ? time_boot_epoch() * 1000000000ULL + mono : mono;
    long r = timeout_from_user(tsva, absolute, absolute ? now : mono, deadline);
    if (r || *deadline == WAIT_FOREVER || !absolute)
        return r;
    *deadline = mono + (*deadline > now ? *deadline - now : 0);
    return 0;
}

static long wait_on(uint64_t uaddr, uint32_t val, uint64_t tsva, bool absolute, bool realtime,
                    uint32_t bitset)
{
    uint64_t deadline;
    long r = deadline_of(tsva, absolute, realtime, &deadline);
    if (r)
        return r;
    if (!bitset)
        return -EINVAL;
    volatile uint32_t *w = word(uaddr, &r);
    if (!w)
        return r;
    return block(uaddr, w, val, bitset, deadline);
}

/* FUTEX_WAKE_OP: *uaddr2 = old OP arg, atomically; true when old CMP cmparg. */
static long wake_op(uint64_t uaddr2, uint32_t encoded, bool *cond)
{
    long r;
    volatile uint32_t *w = word(uaddr2, &r);
    if (!w)
        return r;
    unsigned op = (encoded >> 28) & 7, cmp = (encoded >> 24) & 15;
    uint32_t arg = (encoded >> 12) & 0xFFF, cmparg = encoded & 0xFFF;
    if (encoded & (8u << 28))                  /* FUTEX_OP_OPARG_SHIFT */
        arg = arg > 31 ? 0 : 1u << arg;
    uint32_t old = __atomic_load_n(w, __ATOMIC_SEQ_CST), val;
    do {
        switch (op) {
        case 0: val = arg; break;              /* SET */
        case 1: val = old + arg; break;        /* ADD */
        case 2: val = old | arg; break;        /* OR */
        case 3: val = old & ~arg; break;       /* ANDN */
        case 4: val = old ^ arg; break;        /* XOR */
        default: return -ENOSYS;
        }
    } while (!__atomic_compare_exchange_n(w, &old, val, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
    int32_t o = (int32_t)old, c = (int32_t)cmparg;
    switch (cmp) {
    case 0: *cond = o == c; break;
    case 1: *cond = o != c; break;
    case 2: *cond = o < c; break;
    case 3: *cond = o <= c; break;
    case 4: *cond = o > c; break;
    case 5: *cond = o >= c; break;
    default: return -ENOSYS;
    }
    return 0;
}

/* Priority-inheritance locks: the word holds the owner's thread id, and
 * FUTEX_WAITERS while others wait.  A locker finding it owned by a live
 * thread waits on the word and tries again once the owner unlocks (every
 * core runs its own thread, so there is no priority to lend). */
static uint32_t my_tid(void)
{
    struct thread *t = thread_current();
    return t ? t->tid : proc.pid;
}

static long lock_pi(uint64_t uaddr, volatile uint32_t *w, bool try, uint64_t deadline)
{
    uint32_t me = my_tid();
    uint32_t v = __atomic_load_n(w, __ATOMIC_SEQ_CST);
    for (;;) {
        uint32_t owner = v & FUTEX_TID_MASK;
        if (owner == me)
            return -EDEADLK;
        if (owner && !thread_by_tid(owner))
            return -ESRCH;
        if (!owner) {
            if (__atomic_compare_exchange_n(w, &v, me | (v & (FUTEX_OWNER_DIED | FUTEX_WAITERS)),
                                            false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
                return 0;
            continue;
        }
        if (try)
            return -EAGAIN;
        if (!(v & FUTEX_WAITERS) &&
            !__atomic_compare_exchange_n(w, &v, v | FUTEX_WAITERS, false, __ATOMIC_SEQ_CST,
                                         __ATOMIC_SEQ_CST))
            continue;
        long r = block(uaddr, w, v | FUTEX_WAITERS, FUTEX_BITSET_MATCH_ANY, deadline);
        if (r == -ETIMEDOUT || r == -EINTR)
            return r;
        v = __atomic_load_n(w, __ATOMIC_SEQ_CST);
    }
}

static long unlock_pi(uint64_t uaddr, volatile uint32_t *w)
{
    uint32_t v = __atomic_load_n(w, __ATOMIC_SEQ_CST);
    if ((v & FUTEX_TID_MASK) != my_tid())
        return -EPERM;
    /* Free; a waiter (all are woken: they race for it) marks it again. */
    __atomic_store_n(w, 0, __ATOMIC_SEQ_CST);
    if (v & FUTEX_WAITERS)
        wake(uaddr, FUTEX_BITSET_MATCH_ANY, INT32_MAX);
    return 0;
}

SYSCALL(futex)
{
    UNUSED_ARGS();
    uint64_t uaddr = a0, uaddr2 = a4;
    int cmd = (int)(a1 & ~(uint64_t)(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME));
    bool realtime = a1 & FUTEX_CLOCK_REALTIME;
    uint32_t val = (uint32_t)a2, val3 = (uint32_t)a5;
    int64_t val2 = (int32_t)a3;                  /* the timeout argument, as a count */
    if (realtime && cmd != FUTEX_WAIT && cmd != FUTEX_WAIT_BITSET &&
        cmd != FUTEX_WAIT_REQUEUE_PI && cmd != FUTEX_LOCK_PI2)
        return -ENOSYS;
    long r;
    switch (cmd) {
    case FUTEX_WAIT:
        return wait_on(uaddr, val, a3, false, false, FUTEX_BITSET_MATCH_ANY);
    case FUTEX_WAIT_BITSET:
        return wait_on(uaddr, val, a3, true, realtime, val3);
    case FUTEX_WAIT_REQUEUE_PI:
        if (uaddr == uaddr2)
            return -EINVAL;
        return wait_on(uaddr, val, a3, true, realtime, FUTEX_BITSET_MATCH_ANY);
    case FUTEX_WAKE:
    case FUTEX_WAKE_BITSET: {
        uint32_t bits = cmd == FUTEX_WAKE ? FUTEX_BITSET_MATCH_ANY : val3;
        if (!bits)
            return -EINVAL;
        if (!word(uaddr, &r))
            return r;
        return wake(uaddr, bits, (int32_t)val < 0 ? INT32_MAX : (int32_t)val);
    }
    case FUTEX_CMP_REQUEUE:
    case FUTEX_CMP_REQUEUE_PI:
    case FUTEX_REQUEUE: {
        volatile uint32_t *w = word(uaddr, &r);
        if (!w || !word(uaddr2, &r))
            return r;
        if ((int32_t)val < 0 || val2 < 0 || (cmd == FUTEX_CMP_REQUEUE_PI && val != 1))
            return -EINVAL;
        if (cmd != FUTEX_REQUEUE && __atomic_load_n(w, __ATOMIC_SEQ_CST) != val3)
            return -EAGAIN;
        long n = wake(uaddr, FUTEX_BITSET_MATCH_ANY, val);
        long m = requeue(uaddr, uaddr2, val2);
        return cmd == FUTEX_REQUEUE ? n : n + m;
    }
    case FUTEX_WAKE_OP: {
        bool cond = false;
        if (!word(uaddr, &r) || (r = wake_op(uaddr2, val3, &cond)))
            return r;
        long n = wake(uaddr, FUTEX_BITSET_MATCH_ANY, val);
        return n + (cond ? wake(uaddr2, FUTEX_BITSET_MATCH_ANY, val2) : 0);
    }
    case FUTEX_LOCK_PI:
    case FUTEX_LOCK_PI2:
    case FUTEX_TRYLOCK_PI:
    case FUTEX_UNLOCK_PI: {
        volatile uint32_t *w = word(uaddr, &r);
        if (!w)
            return r;
        if (cmd == FUTEX_UNLOCK_PI)
            return unlock_pi(uaddr, w);
        uint64_t deadline = WAIT_FOREVER;
        if (cmd != FUTEX_TRYLOCK_PI &&
            (r = deadline_of(a3, true, cmd == FUTEX_LOCK_PI || realtime, &deadline)))
            return r;
        return lock_pi(uaddr, w, cmd == FUTEX_TRYLOCK_PI, deadline);
    }
    default:                                     /* FUTEX_FD went with Linux 2.6.26 */
        return -ENOSYS;
    }
}

/* ---- thread exit ------------------------------------------------------------- */

/* The robust list is kept (and reported back) only: a thread that dies
 * holding a robust mutex ends the whole program here (a fault ends the
 * rank), so no thread is ever left to see OWNER_DIED. */
#define ROBUST_LIST_HEAD_SIZE 24

SYSCALL(set_robust_list)
{
    UNUSED_ARGS();
    if (a1 != ROBUST_LIST_HEAD_SIZE)
        return -EINVAL;
    proc.robust_list = a0;
    return 0;
}

SYSCALL(get_robust_list)
{
    UNUSED_ARGS();
    if (a0 != 0 && a0 != proc.pid)
        return -ESRCH;
    uint64_t head = proc.robust_list, len = ROBUST_LIST_HEAD_SIZE;
    if (copy_to_user(a1, &head, 8) || copy_to_user(a2, &len, 8))
        return -EFAULT;
    return 0;
}
