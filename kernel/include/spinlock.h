/* Kernel spinlocks, safe between CPUs and against this CPU's own interrupt
 * handlers.  Test-and-test-and-set, not a ticket lock: under a hypervisor a
 * waiter whose turn comes while its vCPU is descheduled would stall every
 * waiter behind it.  Hold them for short, bounded work; never halt or wait
 * for the network with one held.
 *
 * The irqsave forms disable interrupts on this CPU for as long as the lock is
 * held, so an interrupt handler that takes the same lock cannot deadlock
 * against the code it interrupted.  Most kernel code already runs with
 * interrupts off (system calls mask them; see docs/kernel.md), so the save is
 * cheap. */
#ifndef TERN_SPINLOCK_H
#define TERN_SPINLOCK_H
#include <stdbool.h>
#include <stdint.h>

typedef struct {
    volatile uint32_t locked;
} spinlock_t;
#define SPINLOCK_INIT {0}

#define RFLAGS_IF (1ULL << 9)

static inline uint64_t irq_save(void)
{
    uint64_t f;
    __asm__ volatile("pushfq; popq %0; cli" : "=r"(f) : : "memory");
    return f;
}

static inline void irq_restore(uint64_t flags)
{
    if (flags & RFLAGS_IF)
        __asm__ volatile("sti" ::: "memory");
}

static inline bool spin_trylock(spinlock_t *l)
{
    return !__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE);
}

static inline void spin_lock(spinlock_t *l)
{
    while (!spin_trylock(l))
        while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED))
            __asm__ volatile("pause");
}

static inline void spin_unlock(spinlock_t *l)
{
    __atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

static inline uint64_t spin_lock_irqsave(spinlock_t *l)
{
    uint64_t f = irq_save();
    spin_lock(l);
    return f;
}

static inline void spin_unlock_irqrestore(spinlock_t *l, uint64_t flags)
{
    spin_unlock(l);
    irq_restore(flags);
}
#endif
