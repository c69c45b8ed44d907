/* Per-CPU state.  Each CPU's GS base points at its struct percpu while it
 * runs kernel code (the application's GS base is swapped in with `swapgs` on
 * the way to user mode, see arch/entry.S), so this_cpu() is one instruction:
 * mov %gs:0, reg.  The boot CPU's area is static; an application processor's
 * comes with its stacks from smp.c. */
#ifndef TERN_PERCPU_H
#define TERN_PERCPU_H

/* Offsets entry.S uses (checked against the struct below). */
#define PCPU_SELF       0
#define PCPU_KERNEL_RSP 8
#define PCPU_USER_RSP   16

#define MAX_CPUS 256               /* xAPIC ids are 8 bits; 255 is broadcast */

#ifndef __ASSEMBLER__
#include <stddef.h>
#include <stdint.h>
#include "spinlock.h"
struct process;
struct regs;
struct thread;

struct __attribute__((packed)) tss {
    uint32_t reserved0;
    uint64_t rsp[3];
    uint64_t reserved1;
    uint64_t ist[7];
    uint64_t reserved2;
    uint16_t reserved3, iomap_base;
};

enum cpu_state { CPU_OFFLINE, CPU_STARTING, CPU_ONLINE };

struct percpu {
    struct percpu *self;           /* PCPU_SELF: what this_cpu() reads */
    uint64_t kernel_rsp;           /* PCPU_KERNEL_RSP: stack for syscalls (TSS rsp0 too) */
    uint64_t user_rsp;             /* PCPU_USER_RSP: the user's rsp during syscall entry */
    uint32_t index;                /* 0 .. smp_ncpus()-1; 0 is the boot CPU */
    uint32_t apic_id;
    volatile uint32_t state;       /* enum cpu_state */

    /* "Call a function on this CPU" (smp.c): callers serialise on call_lock,
     * post fn/arg with call_seq, and the IPI handler answers in call_taken
     * (picked up) and call_done (returned).  call_irq_only: the call may
     * not return, and is taken only by the IPI handler (smp.c). */
    spinlock_t call_lock;
    void (*call_fn)(void *);
    void *call_arg;
    volatile uint32_t call_seq, call_taken, call_done;
    bool call_irq_only;

    /* TSC against CPU 0, measured at start (smp.c): offset and the
     * measurement's uncertainty, in TSC cycles. */
    int64_t tsc_offset;
    uint64_t tsc_bound;

    uint64_t ipis;                 /* IPIs handled */
    uint64_t halts;                /* halts begun by cpu_halt_until */
    uint64_t ptl_calls;            /* Portals system calls made here (sys/portals.c) */
    uint64_t stack_top;            /* this CPU's kernel stack */
    uint64_t nmi_stack_top;        /* IST 2 (cpu.c) */

    /* The program's threads here (thread.c): the one running (NULL: idle),
     * the context the idle loop runs in, how many threads the core holds,
     * when the running one's time slice ends (0: no slice, one thread),
     * and whether the core was stopped because the program is ending. */
    struct process *process;       /* the process this CPU runs (process.h's `proc`) */
    struct regs *sys_regs;         /* the system call being handled (syscall.h) */
    struct thread *current;
    uint32_t current_gen;          /* the program generation it was switched in for */
    struct thread *idle;
    volatile uint32_t nthreads;
    uint64_t slice_end;
    volatile bool parked;

    /* When this CPU's local-APIC timer is set to ring (ns, time.c's
     * clock); 0: not set, or it has rung. */
    uint64_t timer_at;

    /* The program's alarm on this CPU (time.c, time_user_alarm): the
     * interval timers of the process whose home this CPU is (sys/itimer.c),
     * and whether another CPU moved it while this one ran (re-armed at the
     * wake). */
    void (*alarm_fn)(struct regs *);
    uint64_t alarm_at;
    volatile bool alarm_moved;

    uint64_t gdt[9] __attribute__((aligned(16)));
    struct tss tss __attribute__((aligned(16)));
};

_Static_assert(offsetof(struct percpu, self) == PCPU_SELF, "entry.S offset");
_Static_assert(offsetof(struct percpu, kernel_rsp) == PCPU_KERNEL_RSP, "entry.S offset");
_Static_assert(offsetof(struct percpu, user_rsp) == PCPU_USER_RSP, "entry.S offset");

static inline struct percpu *this_cpu(void)
{
    struct percpu *c;
    __asm__("movq %%gs:0, %0" : "=r"(c));
    return c;
}

extern struct percpu *cpus[MAX_CPUS];  /* by index; NULL past the CPUs started */

/* Points GS at the boot CPU's area: the first thing kmain does, as locks and
 * the log use this_cpu(). */
void percpu_init_boot(void);
/* Fills in a fresh area for CPU `index` (zeroed by the caller); smp.c
 * enters it in cpus[] once the CPU runs. */
void percpu_setup(struct percpu *c, uint32_t index, uint32_t apic_id, uint64_t stack_top);
/* Makes c this CPU's area (GS base; the user's GS base starts at 0). */
void percpu_load(struct percpu *c);
#endif
#endif
