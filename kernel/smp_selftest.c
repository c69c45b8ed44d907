/* smptest=1: the node checks what its CPUs do for each other (smp.c) before
 * it starts the program, and logs each result, then "smptest: ok" or
 * "smptest: FAILED" (tests/test_kernel_smp.py reads them).  Nothing here is
 * needed to run programs; it is the one place where the primitives later
 * stages build on are exercised on real (virtual) CPUs. */
#include "kernel.h"
#include "lapic.h"
#include "mem.h"
#include "percpu.h"
#include "process.h"
#include "smp.h"
#include "spinlock.h"
#include "time.h"
#include "x86.h"

#define HAMMER 100000
#define TEST_VA 0x7F8000000000ULL      /* PML4 slot 255: the program uses slot 0 */
#define MS ((uint64_t)1000000)

extern uint64_t boot_pml4[512];

static bool failed;

static void check(bool ok, const char *what, const char *detail)
{
    kprintf("smptest: %s: %s%s%s\n", what, ok ? "ok" : "FAILED", detail[0] ? ", " : "", detail);
    failed |= !ok;
}

static bool wait_flag(volatile uint32_t *flag, uint64_t timeout_ns)
{
    uint64_t end = time_monotonic_ns() + timeout_ns;
    while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE))
        if (time_monotonic_ns() > end)
            return false;
    return true;
}

/* 1. Every CPU answers a call, as itself. */
static uint32_t seen_index[MAX_CPUS], seen_apic[MAX_CPUS];

static void whoami(void *arg)
{
    unsigned i = (unsigned)(uint64_t)arg;
    seen_index[i] = this_cpu()->index;
    seen_apic[i] = apic_id();
}

/* 2. All CPUs at once on one lock: they meet first, so their loops overlap
 * (without the lock, increments are lost). */
static spinlock_t hammer_lock = SPINLOCK_INIT;
static volatile uint64_t hammer_count;
static volatile uint32_t hammer_arrived;

static void hammer(void *arg)
{
    (void)arg;
    __atomic_add_fetch(&hammer_arrived, 1, __ATOMIC_ACQ_REL);
    while (__atomic_load_n(&hammer_arrived, __ATOMIC_ACQUIRE) < smp_ncpus())
        cpu_relax();
    for (int i = 0; i < HAMMER; i++) {
        spin_lock(&hammer_lock);
        hammer_count = hammer_count + 1;
        spin_unlock(&hammer_lock);
    }
}

/* 3. A mapping every CPU has used changes; after tlb_shootdown every CPU
 * reads the new page. */
static uint64_t tlb_read[MAX_CPUS];

static void read_test_va(void *arg)
{
    (void)arg;
    tlb_read[this_cpu()->index] = *(volatile uint64_t *)TEST_VA;
}

static void tlb_test(void)
{
    uint64_t *pdpt = kpage_alloc(), *pd = kpage_alloc(), *pt = kpage_alloc();
    uint64_t *old = kpage_alloc(), *new = kpage_alloc();
    old[0] = 0x01D;
    new[0] = 0x0E1;
    boot_pml4[255] = ((uint64_t)pdpt - PHYS_BASE) | 3;
    pdpt[0] = ((uint64_t)pd - PHYS_BASE) | 3;
    pd[0] = ((uint64_t)pt - PHYS_BASE) | 3;
    pt[0] = ((uint64_t)old - PHYS_BASE) | 3;
    smp_call_all(read_test_va, NULL);
    pt[0] = ((uint64_t)new - PHYS_BASE) | 3;
    /* Not a check: how many CPUs would have read the old page without a
     * shootdown (under TCG every one that cached it; hardware may differ). */
    smp_call_all(read_test_va, NULL);
    unsigned stale = 0;
    for (unsigned i = 0; i < smp_ncpus(); i++)
        stale += tlb_read[i] == 0x01D;
    tlb_shootdown(TEST_VA, PAGE_SIZE);
    smp_call_all(read_test_va, NULL);
    unsigned right = 0;
    for (unsigned i = 0; i < smp_ncpus(); i++)
        right += tlb_read[i] == 0x0E1;
    char d[96];
    snprintf(d, sizeof d, "%u of %u CPUs read the new page (%u read the old one before)", right,
             smp_ncpus(), stale);
    check(right == smp_ncpus(), "TLB shootdown", d);
    boot_pml4[255] = 0;
    tlb_shootdown(0, ~0ULL);
    kpage_free(pdpt), kpage_free(pd), kpage_free(pt), kpage_free(old), kpage_free(new);
}

/* 4. Address spaces (ranks per core build on them): two processes, each
 * with its own page tables and a page of its own region mapped at the same
 * address.  A CPU that switches to one reads that one's page, then after a
 * switch the other's (no stale translation), and neither's tables reach
 * what the other maps elsewhere. */
#define SPACE_VA 0x40000000ULL
#define SPACE_VA2 0x40200000ULL

static volatile uint64_t space_read[2];

static void read_in_spaces(void *arg)
{
    struct process **p = arg;
    for (int i = 0; i < 2; i++) {
        process_activate(p[i]);
        space_read[i] = *(volatile uint64_t *)SPACE_VA;
    }
    process_activate(&proc_main);
}

static void space_test(void)
{
    /* The two processes and their pages lie at the top of the application
     * region, where the program's stack goes once this test is over: the
     * structs (45 KiB each) are too big for a kernel stack or for keeping
     * in the kernel image for a test. */
    uint64_t sbytes = ALIGN_UP(sizeof(struct process), PAGE_SIZE);
    uint64_t top = proc_main.region_end, need = 2 * sbytes + 2 * PAGE_SIZE;
    char d[128];
    if (top - proc_main.region_pa < need + MiB(4)) {
        check(false, "address spaces", "no room at the top of the region");
        return;
    }
    uint64_t base = top - need;
    mem_dirty_mark(base, need);
    struct process *p[2] = {phys_to_virt(base), phys_to_virt(base + sbytes)};
    uint64_t page[2] = {base + 2 * sbytes, base + 2 * sbytes + PAGE_SIZE};
    uint64_t pages_before = kpages_free();
    bool made = process_create(p[0], 1, page[0], page[0] + PAGE_SIZE) &&
                process_create(p[1], 2, page[1], page[1] + PAGE_SIZE);
    if (!made) {
        check(false, "address spaces", "no kernel pages for their tables");
        return;
    }
    for (int i = 0; i < 2; i++) {
        *(uint64_t *)phys_to_virt(page[i]) = 0xA5A50000ULL + (uint64_t)i;
        pml4_map(p[i]->pml4, SPACE_VA, page[i], PAGE_SIZE);
    }
    pml4_map(p[1]->pml4, SPACE_VA2, page[1], PAGE_SIZE);

    unsigned last = smp_ncpus() - 1;
    space_read[0] = space_read[1] = 0;
    smp_call(last, read_in_spaces, p);
    uint64_t r0 = space_read[0], r1 = space_read[1];
    bool own = r0 == 0xA5A50000ULL && r1 == 0xA5A50001ULL;
    bool apart = pml4_lookup(p[0]->pml4, SPACE_VA2) == 0 && pml4_lookup(p[1]->pml4, SPACE_VA2) == page[1] &&
                 pml4_lookup(proc_main.pml4, SPACE_VA) == 0;
    bool back = this_cpu()->process == &proc_main && cpus[last]->process == &proc_main;
    process_destroy(p[0]);
    process_destroy(p[1]);
    bool freed = kpages_free() == pages_before;
    memset(phys_to_virt(base), 0, need);
    snprintf(d, sizeof d, "CPU %u read 0x%lx then 0x%lx at one address; %s; tables %s", last, r0,
             r1, apart ? "neither reaches the other's" : "REACHABLE", freed ? "freed" : "LEAKED");
    check(own && apart && back && freed, "address spaces", d);
}

/* 5. A CPU halted without a deadline is woken by cpu_wake; one with a
 * deadline wakes by its own timer, having halted (not spun) meanwhile. */
struct waiter {
    volatile uint32_t flag, done;
    uint64_t elapsed, halts;
};

static void wait_for_flag(void *arg)
{
    struct waiter *w = arg;
    uint64_t t0 = time_monotonic_ns(), h0 = this_cpu()->halts;
    while (!__atomic_load_n(&w->flag, __ATOMIC_ACQUIRE) && time_monotonic_ns() < t0 + 5000 * MS)
        cpu_halt_until(UINT64_MAX);
    w->elapsed = time_monotonic_ns() - t0;
    w->halts = this_cpu()->halts - h0;
    __atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
}

static void sleep_30ms(void *arg)
{
    struct waiter *w = arg;
    uint64_t t0 = time_monotonic_ns(), h0 = this_cpu()->halts;
    while (time_monotonic_ns() < t0 + 30 * MS)
        cpu_halt_until(t0 + 30 * MS);
    w->elapsed = time_monotonic_ns() - t0;
    w->halts = this_cpu()->halts - h0;
    __atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
}

static void wait_tests(void)
{
    unsigned last = smp_ncpus() - 1;
    char d[96];
    static struct waiter w;
    w = (struct waiter){0};
    smp_call_async(last, wait_for_flag, &w);
    uint64_t t0 = time_monotonic_ns();
    while (time_monotonic_ns() < t0 + 20 * MS)
        cpu_relax();
    __atomic_store_n(&w.flag, 1, __ATOMIC_RELEASE);
    cpu_wake(last);
    bool done = wait_flag(&w.done, 6000 * MS);
    snprintf(d, sizeof d, "CPU %u woke after %lu ms, %lu halts", last, w.elapsed / MS, w.halts);
    check(done && w.elapsed < 5000 * MS && w.halts >= 1, "wake by IPI", d);

    static struct waiter s;
    s = (struct waiter){0};
    smp_call_async(last, sleep_30ms, &s);
    done = wait_flag(&s.done, 6000 * MS);
    snprintf(d, sizeof d, "CPU %u slept %lu ms for 30, in %lu halts", last, s.elapsed / MS, s.halts);
    check(done && s.elapsed >= 30 * MS && s.halts >= 1 && s.halts <= 3, "one-shot timer", d);
}

static uint64_t wakeups_of_others(void)
{
    uint64_t n = 0;
    for (unsigned i = 1; i < smp_ncpus(); i++)
        n += cpus[i]->halts + cpus[i]->ipis;
    return n;
}

/* 6. Idle CPUs take no interrupt at all: no tick.  First the others settle
 * (no wakeup for 20 ms, for at most 2 s): the CPU the test before called
 * halts again once its call returns, and under a loaded host that came
 * inside the window (CI saw "2 wakeups on 3 idle CPUs").  A tick never
 * settles, or is caught in the window. */
static void idle_test(void)
{
    uint64_t before = wakeups_of_others(), after;
    for (uint64_t give_up = time_monotonic_ns() + 2000 * MS; time_monotonic_ns() < give_up;) {
        uint64_t t = time_monotonic_ns();
        while (time_monotonic_ns() < t + 20 * MS)
            cpu_relax();
        after = wakeups_of_others();
        if (after == before)
            break;
        before = after;
    }
    uint64_t t0 = time_monotonic_ns();
    while (time_monotonic_ns() < t0 + 300 * MS)
        cpu_relax();
    after = wakeups_of_others();
    char d[64];
    snprintf(d, sizeof d, "%lu wakeups on %u idle CPUs in 300 ms", after - before,
             smp_ncpus() - 1);
    check(after == before, "idle CPUs stay halted", d);
}

/* 7. A call that may not return (smp_call_async_noreturn) waits for its
 * target's IPI handler: a target spinning in a call of its own leaves it
 * alone.  Run there, a call that switched threads for good left that call's
 * frame behind, and with it the other CPU's call slot: the next call to
 * that CPU spun for ever (a node hung after a -ppn job whose last rank
 * ended on CPU 1).  Here CPU 1 posts one to CPU 0 while CPU 0, interrupts
 * off, waits 5 ms for a call of its own to CPU 1. */
static volatile uint32_t nr_in_wait, nr_ran, nr_ran_in_wait;

static void nr_probe(void *arg)
{
    (void)arg;
    nr_ran_in_wait = nr_in_wait;
    __atomic_store_n(&nr_ran, 1, __ATOMIC_RELEASE);
}

static void nr_post_back(void *arg)
{
    (void)arg;
    smp_call_async_noreturn(0, nr_probe, NULL);   /* spins until CPU 0 takes it */
}

static void nr_slow(void *arg)
{
    (void)arg;
    uint64_t t0 = time_monotonic_ns();
    while (time_monotonic_ns() < t0 + 5 * MS)
        cpu_relax();
}

static void noreturn_test(void)
{
    unsigned last = smp_ncpus() - 1;
    struct percpu *me = this_cpu();
    nr_in_wait = nr_ran = nr_ran_in_wait = 0;
    uint64_t f = irq_save();
    smp_call_async(last, nr_post_back, NULL);
    uint64_t end = time_monotonic_ns() + 5000 * MS;
    while (__atomic_load_n(&me->call_seq, __ATOMIC_ACQUIRE) == me->call_taken &&
           time_monotonic_ns() < end)
        cpu_relax();
    bool posted = me->call_seq != me->call_taken;
    nr_in_wait = 1;
    smp_call(last, nr_slow, NULL);     /* CPU 0 spins here 5 ms, taking calls */
    nr_in_wait = 0;
    irq_restore(f);
    end = time_monotonic_ns() + 5000 * MS;
    while (!__atomic_load_n(&nr_ran, __ATOMIC_ACQUIRE) && time_monotonic_ns() < end)
        cpu_halt_until(time_monotonic_ns() + 10 * MS);    /* sti;hlt takes the IPI */
    char d[96];
    snprintf(d, sizeof d, "CPU %u's call to CPU 0 %s", last,
             !posted ? "was NOT POSTED" : !nr_ran ? "NEVER RAN"
             : nr_ran_in_wait ? "RAN INSIDE CPU 0's OWN CALL" : "ran after CPU 0's own call");
    check(posted && nr_ran && !nr_ran_in_wait, "a call that may not return", d);
}

/* 7. A CPU with interrupts off still answers the NMI that asks where it is
 * (a hang's report), on the NMI's own stack: not the double-fault stack,
 * whose frame it would overwrite, nor the kernel stack it interrupted. */
static volatile uint32_t nmi_spinning;

static void nmi_spin(void *arg)
{
    (void)arg;                         /* an IPI's call: interrupts are off */
    __atomic_store_n(&nmi_spinning, 1, __ATOMIC_RELEASE);
    while (__atomic_load_n(&nmi_spinning, __ATOMIC_ACQUIRE) == 1)
        cpu_relax();
}

static void nmi_test(void)
{
    unsigned last = smp_ncpus() - 1;
    nmi_spinning = 0;
    smp_call_async(last, nmi_spin, NULL);
    bool spinning = wait_flag(&nmi_spinning, 5000 * MS);
    uint64_t rip = 0, sp = 0;
    bool answered = spinning && smp_nmi_probe(last, 5000 * MS, &rip, &sp);
    __atomic_store_n(&nmi_spinning, 2, __ATOMIC_RELEASE);
    uint64_t top = cpus[last]->nmi_stack_top;
    bool own_stack = sp < top && sp >= top - PAGE_SIZE;
    bool in_spin = rip >= (uint64_t)nmi_spin && rip < (uint64_t)nmi_spin + 256;
    char d[128];
    snprintf(d, sizeof d, "CPU %u, spinning with interrupts off, answered %s, %s", last,
             !answered ? "NOT AT ALL" : in_spin ? "from its spin" : "FROM ELSEWHERE",
             own_stack ? "on its NMI stack" : "NOT ON ITS NMI STACK");
    check(answered && own_stack && in_spin, "NMI", d);
}

void smp_selftest(void)
{
    unsigned n = smp_ncpus();
    char d[96];
    bool ok = true;
    for (unsigned i = 0; i < n; i++) {
        seen_index[i] = ~0u;
        smp_call(i, whoami, (void *)(uint64_t)i);
        ok = ok && seen_index[i] == i && seen_apic[i] == cpus[i]->apic_id;
    }
    snprintf(d, sizeof d, "%u CPUs each ran it as itself", n);
    check(ok, "call on each CPU", d);

    hammer_count = 0;
    hammer_arrived = 0;
    smp_call_all(hammer, NULL);
    snprintf(d, sizeof d, "%lu of %lu increments", hammer_count, (uint64_t)n * HAMMER);
    check(hammer_count == (uint64_t)n * HAMMER, "spinlock, all CPUs at once", d);

    tlb_test();
    space_test();
    if (n > 1) {
        wait_tests();
        noreturn_test();
        idle_test();
        nmi_test();
    }
    kprintf("smptest: %s\n", failed ? "FAILED" : "ok");
}
