/* A lock the CPU holding it may take again, for the kernel log and the host
 * link: a fault report reaches them while the code it interrupted may hold
 * them.  A holder that does not let go for about a second (a CPU stopped in
 * the middle of a line) loses the lock, so a panic report always gets out. */
#ifndef TERN_RLOCK_H
#define TERN_RLOCK_H
#include "percpu.h"
#include "spinlock.h"

struct rlock {
    spinlock_t l;
    volatile int32_t owner;        /* CPU index, -1: none */
    uint32_t depth;
};
#define RLOCK_INIT {SPINLOCK_INIT, -1, 0}

static inline uint64_t rlock_take(struct rlock *r)
{
    uint64_t f = irq_save();
    int32_t me = (int32_t)this_cpu()->index;
    if (r->owner == me) {
        r->depth++;
        return f;
    }
    for (long spins = 0; !spin_trylock(&r->l) && spins < (1L << 26); spins++)
        __asm__ volatile("pause");
    r->owner = me;
    r->depth = 1;
    return f;
}

static inline void rlock_give(struct rlock *r, uint64_t flags)
{
    if (--r->depth == 0) {
        r->owner = -1;
        spin_unlock(&r->l);
    }
    irq_restore(flags);
}
#endif
