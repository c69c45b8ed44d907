/* The program's threads: the table, their kernel stacks, which core each
 * runs on, switching between threads that share a core, and ending them
 * all.  Policy and interface: include/thread.h; docs/kernel.md ("Threads").
 *
 * There is no run queue: a core's threads are the table's entries with its
 * index (at most MAX_THREADS to scan).  A thread is picked to run when it
 * is runnable (TS_RUN, switched out at a slice end or a yield) or sleeping
 * with its deadline past or a wake since (kicked); a wait loop that is
 * picked early simply looks again and sleeps again.  Kernel code runs with
 * interrupts off, so a switch happens only where the code calls for one:
 * in a wait (time_halt_until's hook), a yield, an exit, or the shared
 * core's slice interrupt taken in user mode. */
#include "boot.h"
#include "kernel.h"
#include "layout.h"
#include "mem.h"
#include "percpu.h"
#include "process.h"
#include "signal.h"
#include "smp.h"
#include "spinlock.h"
#include "syscall.h"
#include "thread.h"
#include "time.h"
#include "uaccess.h"
#include "x86.h"

#define FPU_AREA 4096
#define SLOT_BYTES (KERNEL_STACK_SIZE + FPU_AREA)

extern char boot_stack_top[];
extern struct thread *thread_switch(uint64_t *save_ksp, uint64_t new_ksp, struct thread *prev);
extern char thread_first[];

static struct thread table[MAX_THREADS];
static struct thread idle_ctx[MAX_CPUS];
static uint64_t slots_pa;              /* kernel stacks and vector-register areas */
static unsigned max_threads = 1;
static spinlock_t table_lock = SPINLOCK_INIT;
volatile uint32_t threads_alive_count;   /* thread.h */
volatile uint32_t threads_gen;           /* thread.h */
static uint32_t next_tid;
static bool had_many;                  /* the program created a thread */
static volatile int ender = -1;        /* the CPU ending the program */
static volatile bool cpu0_ending;
static volatile bool cpu0_forwarded;   /* CPU 0 runs an end another CPU handed it */
static void (*volatile fwd_rest)(void *);
static void *volatile fwd_arg;

/* The serial lock (thread.h): its owner, and the threads waiting for it. */
static struct thread *volatile serial_owner;
static volatile uint64_t serial_waiters;

static uint64_t halt_hook(uint64_t deadline);
static void slice_end_irq(struct regs *r);
static void idle_turn(void);

void threads_init(void)
{
    /* Taken now, before the program is loaded: like the other CPUs' stacks,
     * they come off the top of the application region, which the program
     * can never map. */
    if (cpu.xsave_size > FPU_AREA) {
        kprintf("threads: vector state of %u bytes does not fit: one thread only\n",
                cpu.xsave_size);
        return;
    }
    slots_pa = physmem_take_top((MAX_THREADS - 1) * SLOT_BYTES + FPU_AREA);
    if (!slots_pa) {
        kprintf("threads: no memory for thread stacks: one thread only\n");
        return;
    }
    max_threads = MAX_THREADS;
    time_set_halt_hook(halt_hook);
    time_set_slice_hook(slice_end_irq);
    smp_set_idle_hook(idle_turn);
}

/* Slot 0 (the first thread, on the boot stack) has only a vector area. */
static void *slot_fpu(unsigned i)
{
    return phys_to_virt(slots_pa + (i ? (uint64_t)(i - 1) * SLOT_BYTES + KERNEL_STACK_SIZE
                                      : (MAX_THREADS - 1) * (uint64_t)SLOT_BYTES));
}

static uint64_t slot_stack_top(unsigned i)
{
    return (uint64_t)phys_to_virt(slots_pa + (uint64_t)(i - 1) * SLOT_BYTES + KERNEL_STACK_SIZE);
}

/* Every core without a thread of the program, and the ending undone.  The
 * table is emptied before a parked core is let go: a core woken between
 * the two (a late wake) picked a thread of the ended program and ran it,
 * through the rest of the clean-up, until its code was unmapped under it
 * ("instruction fetch from unmapped address" after a job killed by yod,
 * once in 414 jobs of a stress run that mixed ends, faults, signals and
 * messages; no test makes that wake come on purpose). */
static void cores_reset(void)
{
    unsigned n = smp_ncpus();
    for (unsigned i = 0; i < MAX_THREADS; i++)
        table[i].state = TS_FREE, table[i].on_cpu = false;
    threads_gen++;                     /* a thread still running anywhere is a stray */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    for (unsigned i = 0; i < n; i++) {
        idle_ctx[i].kstack_top = cpus[i]->stack_top;
        idle_ctx[i].cpu = i;
        cpus[i]->idle = &idle_ctx[i];
        cpus[i]->current = NULL;
        cpus[i]->nthreads = 0;
        cpus[i]->slice_end = 0;
        __atomic_store_n(&cpus[i]->parked, false, __ATOMIC_RELEASE);
    }
    threads_alive_count = 0;
    had_many = false;
    paging_set_shared(false);
    ender = -1;
    cpu0_ending = false;
    cpu0_forwarded = false;
    serial_owner = NULL;
    serial_waiters = 0;
}

void threads_start(uint32_t pid)
{
    cores_reset();
    struct thread *t = &table[0];
    memset(t, 0, sizeof *t);
    t->tid = pid;
    t->gen = threads_gen;
    t->process = &proc;
    t->state = TS_RUN;
    t->on_cpu = true;
    t->kstack_top = (uint64_t)boot_stack_top;
    t->fpu = slots_pa ? slot_fpu(0) : NULL;
    cpus[0]->current = t;
    cpus[0]->current_gen = t->gen;
    cpus[0]->nthreads = 1;
    threads_alive_count = 1;
    next_tid = pid + 1;
    proc.cpu_first = 0;                /* the whole node; ranks.c shares it out */
    proc.cpu_count = smp_ncpus();
    proc.threads_ending = false;
}

void threads_reset(void)
{
    cores_reset();
    /* A stray thread (thread.h) still in user mode is stopped now, not at
     * whatever interrupt comes next. */
    for (unsigned i = 1; i < smp_ncpus(); i++)
        cpu_wake(i);
}

struct thread *thread_current(void) { return this_cpu()->current; }

/* A live thread of the calling CPU's process: with ranks per core
 * (ranks.c) the table holds other processes' threads too, which a signal
 * or a thread id of this one must never reach. */
static bool mine(const struct thread *t)
{
    return (t->state == TS_RUN || t->state == TS_SLEEP) && !t->zombie && t->process == &proc;
}

struct thread *thread_by_tid(uint32_t tid)
{
    for (unsigned i = 0; i < max_threads; i++)
        if (table[i].tid == tid && mine(&table[i]))
            return &table[i];
    return NULL;
}

unsigned threads_in_process(void)
{
    unsigned n = 0;
    for (unsigned i = 0; i < max_threads; i++)
        n += mine(&table[i]);
    return n;
}

bool threads_others_in_process(void)
{
    for (unsigned i = 0; i < max_threads; i++)
        if (mine(&table[i]) && &table[i] != this_cpu()->current)
            return true;
    return false;
}

uint64_t threads_blocked_by_all(void)
{
    uint64_t all = ~0ULL;
    for (unsigned i = 0; i < max_threads; i++)
        if (mine(&table[i]))
            all &= table[i].sig_blocked;
    return all;
}

void threads_kick_all(void)
{
    for (unsigned i = 0; i < max_threads; i++)
        if (mine(&table[i]) && &table[i] != this_cpu()->current)
            thread_kick(&table[i]);
}

void thread_signal(struct thread *t, int sig)
{
    __atomic_fetch_or(&t->sig_pending, 1ULL << (sig - 1), __ATOMIC_SEQ_CST);
    if (t != this_cpu()->current)
        thread_kick(t);
}

void threads_kill_others_in_process(void)
{
    uint64_t f = spin_lock_irqsave(&table_lock);
    proc.threads_ending = true;        /* thread_create looks under the same lock */
    for (unsigned i = 0; i < max_threads; i++)
        if (mine(&table[i]) && &table[i] != this_cpu()->current)
            thread_signal(&table[i], SIGKILL);
    spin_unlock_irqrestore(&table_lock, f);
}

/* ---- switching ------------------------------------------------------------ */

/* The next thread to run on c after `after` (round robin), or NULL.  any:
 * sleepers too, whatever their deadline (a thread leaving for good lets
 * them look again). */
static struct thread *pick(struct percpu *c, const struct thread *after, bool any)
{
    uint64_t now = time_monotonic_ns();
    /* after may be a core's idle context, which is not in the table */
    unsigned start = after >= table && after < table + MAX_THREADS ? after->slot + 1 : 0;
    for (unsigned k = 0; k < max_threads; k++) {
        struct thread *t = &table[(start + k) % max_threads];
        if (t == after || t->cpu != c->index || t->on_cpu)
            continue;
        if (t->state == TS_RUN ||
            (t->state == TS_SLEEP && (any || t->kicked || now >= t->sleep_until)))
            return t;
    }
    return NULL;
}

/* from's registers are saved: another core may run it now.  A thread that
 * moved away (thread_move) was passed over by its new core while they were
 * still live here (pick: on_cpu), and that core may have gone back to halt:
 * it is woken to look again.  (An idle context never moves.) */
static void switched_out(struct thread *from)
{
    __atomic_store_n(&from->on_cpu, false, __ATOMIC_SEQ_CST);
    if (from->cpu != this_cpu()->index && from->state != TS_DEAD)
        cpu_wake(from->cpu);
}

static void switch_to(struct thread *prev, struct thread *next)
{
    struct percpu *c = this_cpu();
    if (prev->fpu)
        fpu_save_area(prev->fpu);
    prev->fs_base = rdmsr(MSR_FS_BASE);
    prev->gs_base = rdmsr(MSR_KERNEL_GS_BASE);
    next->on_cpu = true;
    next->kicked = false;
    c->current = next == c->idle ? NULL : next;
    c->current_gen = next->gen;
    cpu_set_kernel_stack(next->kstack_top);
    if (c->current) {
        process_activate(next->process);   /* a rank's own page tables (ranks.c) */
        wrmsr(MSR_FS_BASE, next->fs_base);
        wrmsr(MSR_KERNEL_GS_BASE, next->gs_base);
        if (next->fpu)
            fpu_load_area(next->fpu);
    }
    c->slice_end = c->current && c->nthreads > 1 ? time_monotonic_ns() + THREAD_SLICE_NS : 0;
    struct thread *from = thread_switch(&prev->ksp, next->ksp, prev);
    switched_out(from);
}

/* A new thread's first moments, from thread_first (arch/entry.S). */
void thread_started(struct thread *from);
void thread_started(struct thread *from)
{
    switched_out(from);
    time_arm_user();
}

/* time_halt_until's hook: another thread of this core runs meanwhile (0:
 * this one was switched out and is back), or the deadline to halt until. */
static uint64_t halt_hook(uint64_t deadline)
{
    struct percpu *c = this_cpu();
    struct thread *me = c->current;
    if (!me || c->nthreads <= 1 || c->parked)
        return deadline;
    struct thread *next = pick(c, me, false);
    if (next) {
        me->state = TS_SLEEP;
        me->sleep_until = deadline;
        switch_to(me, next);
        me->state = TS_RUN;
        return 0;
    }
    for (unsigned i = 0; i < max_threads; i++)   /* wake for the first sleeper due */
        if (table[i].cpu == c->index && table[i].state == TS_SLEEP && !table[i].on_cpu &&
            table[i].sleep_until < deadline)
            deadline = table[i].sleep_until;
    return deadline;
}

/* The shared core's slice is over, in user mode: the next thread's turn. */
static void slice_end_irq(struct regs *r)
{
    (void)r;
    struct percpu *c = this_cpu();
    struct thread *me = c->current;
    c->slice_end = 0;
    if (!me || c->nthreads <= 1)
        return;
    struct thread *next = pick(c, me, false);
    if (next)
        switch_to(me, next);
    else
        c->slice_end = time_monotonic_ns() + THREAD_SLICE_NS;
}

/* An idle core's turn (smp.c's idle loop): run a thread placed here. */
static void idle_turn(void)
{
    struct percpu *c = this_cpu();
    if (c->parked || !c->idle || c->current)
        return;
    struct thread *next = pick(c, NULL, true);
    if (next)
        switch_to(c->idle, next);
    time_arm_user();               /* back in the idle loop: no slice */
}

void thread_yield(void)
{
    struct percpu *c = this_cpu();
    struct thread *me = c->current;
    if (!me || c->nthreads <= 1)
        return;
    struct thread *next = pick(c, me, false);
    if (next)
        switch_to(me, next);
    time_arm_user();
}

void thread_kick(struct thread *t)
{
    t->kicked = true;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (t->cpu != this_cpu()->index)
        cpu_wake(t->cpu);
}

/* Makes core `cpu`, which now holds more than one thread, start slicing. */
static void slice_here(void *arg)
{
    (void)arg;
    struct percpu *c = this_cpu();
    if (c->current && c->nthreads > 1 && !c->slice_end) {
        c->slice_end = time_monotonic_ns() + THREAD_SLICE_NS;
        time_arm_user();
    }
}

static void placed(unsigned cpu, bool was_empty)
{
    if (cpu == this_cpu()->index)
        slice_here(NULL);
    else if (was_empty)
        cpu_wake(cpu);             /* its idle loop picks the thread */
    else
        smp_call_async(cpu, slice_here, NULL);
}

/* The core for a new thread: one of its process's cores with no thread
 * (the node's, or its rank's share), else the last of them, which the
 * process's extra threads share. */
static unsigned place(void)
{
    unsigned first = proc.cpu_first, end = first + proc.cpu_count;
    if (!proc.cpu_count || end > smp_ncpus())
        first = 0, end = smp_ncpus();
    for (unsigned i = first; i < end; i++)
        if (cpus[i]->nthreads == 0)
            return i;
    return end - 1;
}

long thread_create(const struct regs *r, uint64_t stack, uint64_t tls, uint64_t clear_tid,
                   uint64_t set_tid1, uint64_t set_tid2)
{
    uint64_t f = spin_lock_irqsave(&table_lock);
    struct thread *t = NULL;
    /* With ranks per core a rank has its share of the table, as of the
     * cores: one rank's thread storm leaves the others theirs. */
    unsigned n = smp_ncpus(), share = max_threads, have = 0;
    if (proc.cpu_count && proc.cpu_count < n)
        share = max_threads * proc.cpu_count / n;
    for (unsigned i = 0; i < max_threads; i++)
        have += mine(&table[i]);
    for (unsigned i = 1; i < max_threads && !t && have < share && !proc.threads_ending; i++)
        if (table[i].state == TS_FREE || (table[i].state == TS_DEAD && !table[i].on_cpu))
            t = &table[i];
    if (!t) {
        spin_unlock_irqrestore(&table_lock, f);
        return -EAGAIN;
    }
    unsigned slot = (unsigned)(t - table);
    memset(t, 0, sizeof *t);
    t->slot = slot;
    t->tid = next_tid++;
    t->gen = threads_gen;
    t->kstack_top = slot_stack_top(slot);
    t->fpu = slot_fpu(slot);
    fpu_save_area(t->fpu);             /* a copy of the creator's, as on Linux */
    t->fs_base = tls ? tls : rdmsr(MSR_FS_BASE);
    t->gs_base = rdmsr(MSR_KERNEL_GS_BASE);
    t->clear_child_tid = clear_tid;
    t->process = &proc;
    t->sig_blocked = this_cpu()->current ? this_cpu()->current->sig_blocked : 0;

    /* The first switch to it "returns" into thread_first, which leaves
     * through these registers: the creator's, with 0 from the call. */
    struct regs *nr = (struct regs *)(t->kstack_top - sizeof *nr);
    *nr = *r;
    nr->rax = 0;
    if (stack)
        nr->rsp = stack;
    nr->cs = USER_CS;
    nr->ss = USER_DS;
    nr->rflags |= 1ULL << 9;
    uint64_t *sp = (uint64_t *)nr;
    *--sp = (uint64_t)thread_first;
    for (int i = 0; i < 6; i++)
        *--sp = 0;                     /* rbp rbx r12-r15 */
    t->ksp = (uint64_t)sp;

    /* The tid words (CLONE_PARENT_SETTID, CLONE_CHILD_SETTID) are written
     * before the thread can run: it may exit, clearing its word for
     * pthread_join, before its creator returns from clone. */
    uint32_t tid32 = t->tid;
    if (set_tid1)
        copy_to_user(set_tid1, &tid32, 4);
    if (set_tid2)
        copy_to_user(set_tid2, &tid32, 4);
    unsigned cpu = place();
    bool was_empty = cpus[cpu]->nthreads == 0;
    t->cpu = cpu;
    cpus[cpu]->nthreads++;
    threads_alive_count++;
    had_many = true;
    paging_set_shared(true);
    __atomic_store_n(&t->state, TS_RUN, __ATOMIC_RELEASE);
    spin_unlock_irqrestore(&table_lock, f);
    placed(cpu, was_empty);
    return t->tid;
}

long thread_move(unsigned cpu)
{
    struct percpu *c = this_cpu();
    struct thread *me = c->current;
    if (cpu >= smp_ncpus() || !me)
        return -EINVAL;
    if (cpu == c->index)
        return 0;
    uint64_t f = spin_lock_irqsave(&table_lock);
    bool was_empty = cpus[cpu]->nthreads == 0;
    c->nthreads--;
    cpus[cpu]->nthreads++;
    me->cpu = cpu;
    spin_unlock_irqrestore(&table_lock, f);
    /* Off this core: to another of its threads, or its idle loop (CPU 0
     * always has the first thread, living or not). */
    struct thread *next = pick(c, me, true);
    if (!next)
        next = c->idle;
    placed(cpu, was_empty);
    switch_to(me, next);
    time_arm_user();
    return 0;
}

long thread_set_core(struct thread *t, unsigned cpu)
{
    if (t == this_cpu()->current)
        return thread_move(cpu);
    __atomic_store_n(&t->move_to, cpu + 1, __ATOMIC_SEQ_CST);
    thread_kick(t);
    return 0;
}

void thread_move_asked(void)
{
    struct thread *me = this_cpu()->current;
    uint32_t to = __atomic_exchange_n(&me->move_to, 0, __ATOMIC_SEQ_CST);
    if (to)
        thread_move(to - 1);
}

__attribute__((noreturn)) static void leave_locked(uint64_t f);

__attribute__((noreturn)) static void zombie(void)
{
    /* The first thread exited while others run: CPU 0 stays with the job
     * (its waits serve yod) and lends its time to threads placed here. */
    for (;;)
        time_sleep_until(time_monotonic_ns() + 1000000000ULL);
}

void thread_exit(int code)
{
    struct percpu *c = this_cpu();
    struct thread *me = c->current;
    if (me && me->clear_child_tid) {
        /* What pthread_join waits for: the tid word cleared and woken. */
        uint32_t zero = 0;
        if (copy_to_user(me->clear_child_tid, &zero, 4) == 0)
            futex_wake_word(me->clear_child_tid, 1);
        me->clear_child_tid = 0;
    }
    uint64_t f = spin_lock_irqsave(&table_lock);
    bool others = false;
    for (unsigned i = 0; i < max_threads && me && !others; i++)
        others = mine(&table[i]) && &table[i] != me;
    if (!others) {
        spin_unlock_irqrestore(&table_lock, f);
        /* The process's last thread: the program's status, or with ranks
         * per core its rank's (ranks.c). */
        node_end(END_EXIT, code);
    }
    leave_locked(f);
}

void thread_leave(void) { leave_locked(spin_lock_irqsave(&table_lock)); }

/* With the table locked since the caller decided this thread is not the
 * last (two threads exiting at once must not both think so). */
static void leave_locked(uint64_t f)
{
    struct percpu *c = this_cpu();
    struct thread *me = c->current;
    threads_alive_count--;
    if (me == &table[0]) {
        me->zombie = true;
        spin_unlock_irqrestore(&table_lock, f);
        zombie();
    }
    me->state = TS_DEAD;
    c->nthreads--;
    spin_unlock_irqrestore(&table_lock, f);
    struct thread *next = pick(c, me, true);
    switch_to(me, next ? next : c->idle);
    __builtin_unreachable();
}

long thread_start_rank(struct process *p, unsigned cpu, uint64_t rip, uint64_t rsp)
{
    uint64_t f = spin_lock_irqsave(&table_lock);
    struct thread *t = NULL;
    for (unsigned i = 1; i < max_threads && !t; i++)
        if (table[i].state == TS_FREE)
            t = &table[i];
    if (!t || cpu >= smp_ncpus()) {
        spin_unlock_irqrestore(&table_lock, f);
        return -EAGAIN;
    }
    unsigned slot = (unsigned)(t - table);
    memset(t, 0, sizeof *t);
    t->slot = slot;
    t->tid = p->pid;
    t->gen = threads_gen;
    t->process = p;
    /* Thread ids follow every rank's pid: a thread whose tid were a pid
     * would pass for its process's first thread (gettid() == getpid()). */
    if (next_tid <= p->pid)
        next_tid = p->pid + 1;
    t->kstack_top = slot_stack_top(slot);
    t->fpu = slot_fpu(slot);
    fpu_save_area(t->fpu);             /* user_start clears what a program sees */
    /* Its first switch "returns" into thread_first, which leaves through
     * these registers: a program's first entry, all clean but rip and rsp. */
    struct regs *nr = (struct regs *)(t->kstack_top - sizeof *nr);
    memset(nr, 0, sizeof *nr);
    nr->rip = rip;
    nr->rsp = rsp;
    nr->cs = USER_CS;
    nr->ss = USER_DS;
    nr->rflags = 0x202;
    uint64_t *sp = (uint64_t *)nr;
    *--sp = (uint64_t)thread_first;
    for (int i = 0; i < 6; i++)
        *--sp = 0;
    t->ksp = (uint64_t)sp;
    bool was_empty = cpus[cpu]->nthreads == 0;
    t->cpu = cpu;
    cpus[cpu]->nthreads++;
    threads_alive_count++;
    had_many = true;                   /* an end on another core goes through CPU 0 */
    paging_set_shared(true);
    __atomic_store_n(&t->state, TS_RUN, __ATOMIC_RELEASE);
    spin_unlock_irqrestore(&table_lock, f);
    placed(cpu, was_empty);
    return t->tid;
}

/* ---- a thread no program has ---------------------------------------------- */

static __attribute__((noreturn)) void stray_leave(struct percpu *c)
{
    c->current = NULL;
    c->slice_end = 0;
    time_arm_user();                   /* no slice timer for it */
    smp_idle_again();
}

void thread_stray_stop(const struct regs *r)
{
    struct percpu *c = this_cpu();
    if (r->vector < 0)
        kprintf("CPU %u: a thread that belongs to no program made system call %lu at rip 0x%lx; "
                "stopped it\n", c->index, r->rax, r->rip);
    else
        kprintf("CPU %u: a thread that belongs to no program took vector %ld at rip 0x%lx; "
                "stopped it\n", c->index, r->vector, r->rip);
    stray_leave(c);
}

/* ---- ending the program ------------------------------------------------- */

/* Stops this core's thread for good (the program is ending). */
static void park_here(void *arg)
{
    (void)arg;
    struct percpu *c = this_cpu();
    c->parked = true;
    c->slice_end = 0;
    if (c->current) {
        switch_to(c->current, c->idle);   /* the idle loop halts from now on */
        /* Back here: a core ran the thread again after its program's end,
         * a stray (thread.h) that would go on in the kernel, where no way
         * in from user mode would see it (an ending thread's halt below). */
        kprintf("CPU %u: a thread of an ended program ran again; stopped it\n", c->index);
        stray_leave(c);
    }
    time_arm_user();
}

static void run_rest(void *arg)
{
    (void)arg;
    if (!cpu0_ending) {
        cpu0_forwarded = true;
        fwd_rest(fwd_arg);
    }
}

void threads_end_begin(void (*rest)(void *), void *arg)
{
    if (!had_many)
        return;
    struct percpu *c = this_cpu();
    if (c->index == 0) {
        if (cpu0_ending)
            return;
        /* Ours unless another CPU's end got here first.  That one leaves
         * ender at 0 once it has handed its end over (run_rest): only the
         * handed-over end itself may take that 0 for its own.  CPU 0's own
         * end took it too, and parked the other CPU with interrupts off
         * while that CPU, interrupts off, waited for CPU 0 to take its
         * end: the node hung (two threads calling exit_group at once,
         * or a rank's last exit and its killed thread). */
        int expect = -1;
        if (!__atomic_compare_exchange_n(&ender, &expect, 0, false, __ATOMIC_SEQ_CST,
                                         __ATOMIC_SEQ_CST) && !(expect == 0 && cpu0_forwarded))
            for (;;)                   /* another CPU's end is on its way here */
                __asm__ volatile("sti; hlt; cli" ::: "memory");
        cpu0_ending = true;
        for (unsigned i = 1; i < smp_ncpus(); i++)
            smp_call_async_noreturn(i, park_here, NULL);
        /* A parked thread may have held the serial lock: the end's own
         * waits serve the job now. */
        serial_owner = c->current;
        serial_waiters = 0;
        return;
    }
    int expect = -1;
    if (__atomic_compare_exchange_n(&ender, &expect, (int)c->index, false, __ATOMIC_SEQ_CST,
                                    __ATOMIC_SEQ_CST)) {
        fwd_rest = rest;
        fwd_arg = arg;
        __atomic_store_n(&ender, 0, __ATOMIC_SEQ_CST);
        smp_call_async_noreturn(0, run_rest, NULL);
    }
    park_here(NULL);
    for (;;)
        __asm__ volatile("sti; hlt; cli" ::: "memory");
}

/* ---- the serial lock -------------------------------------------------------- */

bool serial_held(void)
{
    struct thread *me = this_cpu()->current;
    return me && serial_owner == me;
}

bool serial_trylock(void)
{
    struct thread *me = this_cpu()->current;
    struct thread *none = NULL;
    return me && __atomic_compare_exchange_n(&serial_owner, &none, me, false, __ATOMIC_ACQUIRE,
                                             __ATOMIC_RELAXED);
}

bool serial_trylock_or_recall(void)
{
    if (serial_trylock())
        return true;
    struct thread *me = this_cpu()->current;
    __atomic_fetch_or(&serial_waiters, 1ULL << me->slot, __ATOMIC_SEQ_CST);
    return serial_trylock();    /* the holder may have let go before it saw the bit */
}

void serial_lock(void)
{
    struct thread *me = this_cpu()->current;
    while (!serial_trylock()) {
        __atomic_fetch_or(&serial_waiters, 1ULL << me->slot, __ATOMIC_SEQ_CST);
        if (serial_owner)
            time_halt_until(time_monotonic_ns() + 100000000ULL);
    }
}

bool serial_release(void)
{
    if (!serial_held())
        return false;
    serial_unlock();
    return true;
}

void serial_retake(bool released)
{
    if (released)
        serial_lock();
}

void serial_unlock(void)
{
    __atomic_store_n(&serial_owner, NULL, __ATOMIC_RELEASE);
    uint64_t w = __atomic_exchange_n(&serial_waiters, 0, __ATOMIC_SEQ_CST);
    while (w) {
        unsigned i = (unsigned)__builtin_ctzll(w);
        w &= w - 1;
        thread_kick(&table[i]);
    }
}
