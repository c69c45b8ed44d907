/* The CPUs of a node (docs/kernel.md, "CPUs").
 *
 * smp_init reads the ACPI MADT and sets memory aside for each application
 * processor (AP): a page for its struct percpu, an NMI stack, a double-fault
 * stack and a kernel stack, cut off the top of the application region like
 * the kernel heap.  smp_start starts them with INIT-SIPI-SIPI through a
 * real-mode trampoline (arch/smp_trampoline.S) in a page below 1 MiB, one
 * at a time:
 * each comes up in long mode on the kernel's page tables, loads its own GDT,
 * TSS and GS base, enables its local APIC, checks its TSC against CPU 0's
 * and halts.  An idle AP stays halted with interrupts on, its APIC timer
 * masked: no tick ever; an IPI wakes it.
 *
 * A malformed or missing MADT, or an AP that does not come up, costs CPUs,
 * never the boot: the node goes on with those that did. */
#include "acpi.h"
#include "cpu.h"
#include "kernel.h"
#include "lapic.h"
#include "mem.h"
#include "percpu.h"
#include "smp.h"
#include "spinlock.h"
#include "time.h"
#include "x86.h"

/* One AP's memory: [struct percpu][NMI stack][double-fault stack][kernel
 * stack].  A kernel stack that overflows runs into its own CPU's spare
 * stack first. */
#define AP_PERCPU    PAGE_SIZE
#define AP_NMI_STACK PAGE_SIZE
#define AP_DF_STACK  PAGE_SIZE
#define AP_BLOCK     (AP_PERCPU + AP_NMI_STACK + AP_DF_STACK + KERNEL_STACK_SIZE)
#define SIPI_GAP_NS 200000ULL           /* between the two SIPIs */
#define INIT_WAIT_NS 10000000ULL        /* after INIT (Intel SDM, MP start-up) */
#define START_TIMEOUT_NS 5000000000ULL  /* a loaded TCG host is slow to run a new vCPU */
#define CALL_WARN_NS 1000000000ULL
#define SYNC_ROUNDS 16
#define SYNC_BUDGET_NS 20000000ULL      /* per measurement, after two rounds */
#define SYNC_TIMEOUT_NS 2000000000ULL

_Static_assert(sizeof(struct percpu) <= AP_PERCPU, "struct percpu fits its page");

extern char smp_tramp_start[], smp_tramp_end[], smp_tramp_params[], smp_tramp_pm32[],
    smp_tramp_lm64[];
extern uint64_t boot_pml4[512];
__attribute__((noreturn)) void smp_ap_main(struct percpu *c);

static struct acpi_cpus madt;
static uint32_t ap_apic[MAX_CPUS];      /* the APs to start, MADT order */
static unsigned nap;
static uint64_t ap_mem;                  /* physical start of their blocks */
static unsigned ncpus = 1;               /* running: cpus[0 .. ncpus-1] */
static uint64_t kernel_cr3, boot_cr0, boot_cr4;

unsigned smp_ncpus_found(void) { return 1 + nap; }
unsigned smp_ncpus(void) { return ncpus; }

static const void *map_phys(uint64_t pa, uint64_t len, void *ctx)
{
    (void)ctx;
    if (pa + len < pa || pa + len > GiB(4))   /* the direct map's reach at boot */
        return NULL;
    return phys_to_virt(pa);
}

/* --- IPIs and calls ---------------------------------------------------- */

static bool reached(uint32_t have, uint32_t want) { return (int32_t)(have - want) >= 0; }

/* The call posted to c, if it has not been picked up yet.  from_irq: c's
 * IPI handler asks; otherwise c is spinning in a call of its own (post,
 * wait_for), and takes the call there so that two CPUs calling each other
 * do not deadlock, but not one that may never return: that one waits for
 * the IPI, still pending, which c takes once its interrupts are on again. */
static void run_posted_call(struct percpu *c, bool from_irq)
{
    uint32_t seq = __atomic_load_n(&c->call_seq, __ATOMIC_ACQUIRE);
    if (seq == c->call_taken || (c->call_irq_only && !from_irq))
        return;
    void (*fn)(void *) = c->call_fn;
    void *arg = c->call_arg;
    __atomic_store_n(&c->call_taken, seq, __ATOMIC_RELEASE);
    fn(arg);
    /* A call picked up with smp_call_async may halt, and a later call then
     * runs nested in it and ends first: call_done only moves forward. */
    if (!reached(c->call_done, seq))
        __atomic_store_n(&c->call_done, seq, __ATOMIC_RELEASE);
}

static void ipi_call_irq(struct regs *r)
{
    (void)r;
    struct percpu *c = this_cpu();
    apic_eoi();                 /* first: the call may halt and need the timer */
    c->ipis++;
    run_posted_call(c, true);
}

static void (*volatile wake_hook)(struct regs *);
void smp_set_wake_hook(void (*fn)(struct regs *)) { wake_hook = fn; }

static void ipi_wake_irq(struct regs *r)
{
    this_cpu()->ipis++;
    apic_eoi();
    if (wake_hook && (r->cs & 3) == 3)
        wake_hook(r);
}

static void ipi_stop_irq(struct regs *r)
{
    (void)r;
    for (;;)
        __asm__ volatile("cli; hlt");
}

void smp_send_ipi(unsigned cpu, uint8_t vector)
{
    if (cpu < ncpus)
        lapic_send_icr(cpus[cpu]->apic_id, ICR_FIXED | vector);
}

void smp_send_ipi_others(uint8_t vector)
{
    if (ncpus > 1)
        lapic_send_icr(0, ICR_FIXED | ICR_ALL_BUT_SELF | vector);
}

void cpu_wake(unsigned cpu) { smp_send_ipi(cpu, IPI_WAKE_VECTOR); }

static void (*volatile idle_hook)(void);
void smp_set_idle_hook(void (*fn)(void)) { idle_hook = fn; }

void smp_stop_others(void) { smp_send_ipi_others(IPI_STOP_VECTOR); }

/* Where a CPU that does not answer is: an NMI, which interrupts off do not
 * hold back, notes its frame (nmi_irq), and the CPU that waits for it
 * prints that, with the kernel addresses on its stack (addr2line -e
 * build/tern.elf).  A hang of the node is then a console line that names
 * the code, not a silence. */
struct stuck_note {
    volatile uint32_t seq;
    uint64_t rip, rflags, rsp, calls[8];
    unsigned ncalls;
    uint64_t handler_sp;               /* where the NMI's own frame was (smptest) */
};
static struct stuck_note stuck[MAX_CPUS];
extern char _kernel_start[], _load_end[];

static void nmi_irq(struct regs *r)
{
    struct percpu *c = this_cpu();
    struct stuck_note *n = &stuck[c->index];
    n->rip = r->rip;
    n->rflags = r->rflags;
    n->rsp = r->rsp;
    n->ncalls = 0;
    n->handler_sp = (uint64_t)__builtin_frame_address(0);
    if ((r->cs & 3) == 0) {
        /* Return addresses among the words above its stack pointer: up to
         * the top of this CPU's stack, or a page's worth on a thread's
         * (kernel memory either way). */
        const uint64_t *sp = (const uint64_t *)(r->rsp & ~7ull);
        unsigned words = 512;
        if (r->rsp < c->stack_top && c->stack_top - r->rsp < KERNEL_STACK_SIZE)
            words = (unsigned)((c->stack_top - (uint64_t)sp) / 8);
        for (unsigned i = 0; i < words && n->ncalls < 8; i++)
            if (sp[i] >= (uint64_t)_kernel_start && sp[i] < (uint64_t)_load_end)
                n->calls[n->ncalls++] = sp[i];
    }
    __atomic_store_n(&n->seq, n->seq + 1, __ATOMIC_RELEASE);
}

/* Sends t an NMI and waits up to wait_ns for its note. */
static bool ask_where(struct percpu *t, uint64_t wait_ns)
{
    struct stuck_note *n = &stuck[t->index];
    uint32_t seq = __atomic_load_n(&n->seq, __ATOMIC_ACQUIRE);
    lapic_send_icr(t->apic_id, ICR_NMI);
    uint64_t until = time_monotonic_ns() + wait_ns;
    while (__atomic_load_n(&n->seq, __ATOMIC_ACQUIRE) == seq && time_monotonic_ns() < until)
        cpu_relax();
    return __atomic_load_n(&n->seq, __ATOMIC_ACQUIRE) != seq;
}

bool smp_nmi_probe(unsigned cpu, uint64_t wait_ns, uint64_t *rip, uint64_t *handler_sp)
{
    if (cpu >= ncpus || cpu == this_cpu()->index || !ask_where(cpus[cpu], wait_ns))
        return false;
    *rip = stuck[cpu].rip;
    *handler_sp = stuck[cpu].handler_sp;
    return true;
}

static void report_stuck(struct percpu *t)
{
    struct stuck_note *n = &stuck[t->index];
    if (!ask_where(t, 100000000ull)) {
        kprintf("smp: CPU %u does not take an NMI either\n", t->index);
        return;
    }
    char calls[8 * 20 + 1];
    size_t len = 0;
    calls[0] = 0;
    for (unsigned i = 0; i < n->ncalls; i++)
        len += (size_t)snprintf(calls + len, sizeof calls - len, " %lx", n->calls[i]);
    kprintf("smp: CPU %u is at rip %lx, rflags %lx, rsp %lx; on its stack:%s\n", t->index,
            n->rip, n->rflags, n->rsp, n->ncalls ? calls : " nothing of the kernel's");
}

/* Takes t's call slot and posts fn there; returns the call's number.
 * Interrupts are off.  irq_only: see run_posted_call. */
static uint32_t post(struct percpu *t, void (*fn)(void *), void *arg, bool irq_only)
{
    struct percpu *me = this_cpu();
    uint64_t warn = time_monotonic_ns() + CALL_WARN_NS;
    while (!spin_trylock(&t->call_lock)) {
        run_posted_call(me, false);
        cpu_relax();
        if (warn && time_monotonic_ns() > warn) {
            /* Said once: a slot held this long was likely left behind by a
             * caller that never came back to release it. */
            kprintf("smp: CPU %u has waited 1 s for CPU %u's call slot (call %u, %s)\n",
                    me->index, t->index, t->call_seq,
                    t->call_taken == t->call_seq ? "taken" : "not taken");
            report_stuck(t);
            warn = 0;
        }
    }
    t->call_fn = fn;
    t->call_arg = arg;
    t->call_irq_only = irq_only;
    uint32_t seq = t->call_seq + 1;
    __atomic_store_n(&t->call_seq, seq, __ATOMIC_RELEASE);
    lapic_send_icr(t->apic_id, ICR_FIXED | IPI_CALL_VECTOR);
    return seq;
}

static void wait_for(struct percpu *t, volatile uint32_t *counter, uint32_t seq)
{
    struct percpu *me = this_cpu();
    uint64_t warn = time_monotonic_ns() + CALL_WARN_NS;
    while (!reached(__atomic_load_n(counter, __ATOMIC_ACQUIRE), seq)) {
        run_posted_call(me, false);
        cpu_relax();
        if (warn && time_monotonic_ns() > warn) {
            kprintf("smp: CPU %u has not answered CPU %u's call (%p%s) for 1 s "
                    "(interrupts off there?)\n", t->index, me->index, (void *)t->call_fn,
                    t->call_irq_only ? ", by interrupt only" : "");
            report_stuck(t);
            warn = 0;
        }
    }
}

static struct percpu *target(unsigned cpu)
{
    if (cpu >= ncpus)
        panic("smp: call to CPU %u, but %u CPUs run", cpu, ncpus);
    return cpus[cpu];
}

/* Waits for the call to have returned, or (async) only to be picked up. */
static void call_one(unsigned cpu, void (*fn)(void *), void *arg, bool async, bool irq_only)
{
    uint64_t f = irq_save();
    struct percpu *t = target(cpu);
    if (t == this_cpu()) {
        fn(arg);
    } else {
        uint32_t seq = post(t, fn, arg, irq_only);
        wait_for(t, async ? &t->call_taken : &t->call_done, seq);
        spin_unlock(&t->call_lock);
    }
    irq_restore(f);
}

void smp_call(unsigned cpu, void (*fn)(void *), void *arg)
{
    call_one(cpu, fn, arg, false, false);
}

void smp_call_async(unsigned cpu, void (*fn)(void *), void *arg)
{
    call_one(cpu, fn, arg, true, false);
}

void smp_call_async_noreturn(unsigned cpu, void (*fn)(void *), void *arg)
{
    call_one(cpu, fn, arg, true, true);
}

/* fn on every other CPU (slots taken in index order, so two CPUs doing this
 * at once cannot deadlock), and here too if `here`. */
static void call_many(void (*fn)(void *), void *arg, bool here)
{
    uint32_t seq[MAX_CPUS];
    uint64_t f = irq_save();
    struct percpu *me = this_cpu();
    for (unsigned i = 0; i < ncpus; i++)
        if (cpus[i] != me)
            seq[i] = post(cpus[i], fn, arg, false);
    if (here)
        fn(arg);
    for (unsigned i = 0; i < ncpus; i++) {
        if (cpus[i] == me)
            continue;
        wait_for(cpus[i], &cpus[i]->call_done, seq[i]);
        spin_unlock(&cpus[i]->call_lock);
    }
    irq_restore(f);
}

void smp_call_others(void (*fn)(void *), void *arg) { call_many(fn, arg, false); }
void smp_call_all(void (*fn)(void *), void *arg) { call_many(fn, arg, true); }

struct flush_range {
    uint64_t va, len;
};

static void flush_here(void *arg)
{
    const struct flush_range *r = arg;
    if (r->len > 64 * PAGE_SIZE) {
        write_cr3(read_cr3());
        return;
    }
    for (uint64_t va = ALIGN_DOWN(r->va, PAGE_SIZE); va < r->va + r->len; va += PAGE_SIZE)
        __asm__ volatile("invlpg (%0)" ::"r"(va) : "memory");
}

void tlb_shootdown(uint64_t va, uint64_t len)
{
    struct flush_range r = {va, len};
    smp_call_all(flush_here, &r);
}

/* --- halting ------------------------------------------------------------ */

void cpu_halt_until(uint64_t deadline)
{
    if (this_cpu()->index == 0) {
        /* CPU 0 runs the program, whose tick (time.c) shares the timer. */
        uint64_t f = irq_save();
        time_halt_until(deadline);
        irq_restore(f);
        return;
    }
    uint64_t f = irq_save();
    bool timed = false;
    if (deadline != UINT64_MAX) {
        uint64_t now = time_monotonic_ns();
        if (now >= deadline) {
            irq_restore(f);
            return;
        }
        timed = time_timer_need(deadline);    /* set lazily, left set (time.c) */
    }
    this_cpu()->halts++;
    if (deadline == UINT64_MAX || timed)
        __asm__ volatile("sti; hlt; cli" ::: "memory");
    else
        cpu_relax();              /* no calibrated timer: the caller polls */
    irq_restore(f);
}

/* --- the TSC ------------------------------------------------------------ */

/* CPU 0 and a new AP in lock step: CPU 0 reads its TSC, tells the AP to read
 * its own, and reads again when the AP answers; the AP's reading belongs
 * between the two.  The closest round of SYNC_ROUNDS gives the offset and
 * its uncertainty (half that round's round trip). */
enum { SYNC_SAMPLE, SYNC_ADJUST, SYNC_DONE };
static volatile uint32_t sync_go, sync_ack, sync_cmd;
static volatile uint64_t sync_tsc;
static volatile int64_t sync_adjust;

static uint64_t rdtsc_ordered(void)
{
    __asm__ volatile("lfence" ::: "memory");
    return rdtsc();
}

static bool sync_step(uint32_t cmd)
{
    sync_cmd = cmd;
    uint32_t n = sync_go + 1;
    __atomic_store_n(&sync_go, n, __ATOMIC_RELEASE);
    uint64_t end = time_monotonic_ns() + SYNC_TIMEOUT_NS;
    while (__atomic_load_n(&sync_ack, __ATOMIC_ACQUIRE) != n) {
        if (time_monotonic_ns() > end)
            return false;
        cpu_relax();
    }
    return true;
}

static bool tsc_measure(int64_t *offset, uint64_t *bound)
{
    uint64_t best = UINT64_MAX, good = time_tsc_hz() / 100000;   /* 10 us */
    uint64_t give_up = time_monotonic_ns() + SYNC_BUDGET_NS;
    for (int r = 0; r < SYNC_ROUNDS; r++) {
        /* Enough: a close round, or (a host too busy to run both vCPUs at
         * once) the time budget spent. */
        if (r >= 4 && best <= good)
            break;
        if (r >= 2 && time_monotonic_ns() > give_up)
            break;
        uint64_t t0 = rdtsc_ordered();
        if (!sync_step(SYNC_SAMPLE))
            return false;
        uint64_t t1 = rdtsc_ordered();
        if (t1 - t0 < best) {
            best = t1 - t0;
            *offset = (int64_t)(sync_tsc - t0 - (t1 - t0) / 2);
        }
    }
    *bound = best / 2 + 1;
    return true;
}

static bool tsc_in_step(const struct percpu *c)
{
    int64_t o = c->tsc_offset;
    return (uint64_t)(o < 0 ? -o : o) <= c->tsc_bound;
}

/* CPU 0's side; returns false if the AP stopped answering. */
static bool tsc_check(struct percpu *c)
{
    bool ok = tsc_measure(&c->tsc_offset, &c->tsc_bound);
    uint32_t r[4];
    cpuid(7, 0, r);
    if (ok && !tsc_in_step(c) && (r[1] & (1u << 1))) {      /* IA32_TSC_ADJUST */
        int64_t was = c->tsc_offset;
        sync_adjust = was;
        ok = sync_step(SYNC_ADJUST) && tsc_measure(&c->tsc_offset, &c->tsc_bound);
        kprintf("smp: CPU %u's TSC was %ld cycles off CPU 0's: adjusted, now %ld (+-%lu)\n",
                c->index, was, c->tsc_offset, c->tsc_bound);
    }
    if (ok && !tsc_in_step(c))
        kprintf("smp: CPU %u's TSC is %ld cycles off CPU 0's and cannot be adjusted: clock "
                "readings there are off by that much\n", c->index, c->tsc_offset);
    return ok && sync_step(SYNC_DONE);
}

/* The AP's side. */
static void tsc_answer(void)
{
    uint32_t seen = 0;
    for (;;) {
        uint64_t end = time_monotonic_ns() + SYNC_TIMEOUT_NS;
        uint32_t go;
        while ((go = __atomic_load_n(&sync_go, __ATOMIC_ACQUIRE)) == seen) {
            if (time_monotonic_ns() > end)
                return;
            cpu_relax();
        }
        seen = go;
        uint32_t cmd = sync_cmd;
        if (cmd == SYNC_SAMPLE)
            sync_tsc = rdtsc_ordered();
        else if (cmd == SYNC_ADJUST)
            wrmsr(MSR_TSC_ADJUST, rdmsr(MSR_TSC_ADJUST) - (uint64_t)sync_adjust);
        __atomic_store_n(&sync_ack, go, __ATOMIC_RELEASE);
        if (cmd == SYNC_DONE)
            return;
    }
}

/* --- finding and starting ---------------------------------------------- */

void smp_init(void)
{
    struct percpu *boot = this_cpu();
    boot->apic_id = apic_id();
    irq_set_handler(IPI_CALL_VECTOR, ipi_call_irq);
    irq_set_handler(IPI_WAKE_VECTOR, ipi_wake_irq);
    irq_set_handler(IPI_STOP_VECTOR, ipi_stop_irq);
    irq_set_handler(2, nmi_irq);

    const char *why = acpi_find_cpus(map_phys, NULL, &madt);
    if (why) {
        kprintf("smp: %s: using the boot CPU only\n", why);
        return;
    }
    bool boot_listed = false;
    unsigned disabled = 0, unusable = 0;
    for (unsigned i = 0; i < madt.n; i++) {
        const struct acpi_cpu *a = &madt.cpu[i];
        if (!a->enabled)
            disabled++;
        else if (a->apic_id == boot->apic_id)
            boot_listed = true;
        else if (a->apic_id >= 255 || nap + 1 >= MAX_CPUS)
            unusable++;              /* x2APIC ids: this kernel drives the xAPIC */
        else
            ap_apic[nap++] = a->apic_id;
    }
    if (!boot_listed) {
        kprintf("smp: MADT: the boot CPU (APIC id %u) is not listed: using it only\n",
                boot->apic_id);
        nap = 0;
        return;
    }
    char ids[160];
    size_t n = 0;
    n += (size_t)snprintf(ids + n, sizeof ids - n, "%u", boot->apic_id);
    for (unsigned i = 0; i < nap && n < sizeof ids; i++)
        n += (size_t)snprintf(ids + n, sizeof ids - n, " %u", ap_apic[i]);
    kprintf("smp: ACPI MADT (%s): %u CPU%s, APIC id%s %s%s\n", madt.xsdt ? "XSDT" : "RSDT",
            1 + nap, nap ? "s" : "", nap ? "s" : "", ids, n >= sizeof ids ? "..." : "");
    if (disabled || unusable || madt.dropped)
        kprintf("smp: not used: %u listed disabled, %u with APIC ids this kernel cannot reach, "
                "%u beyond its %u CPUs\n", disabled, unusable, madt.dropped, MAX_CPUS);
    if (madt.lapic_phys != (rdmsr(MSR_APIC_BASE) & ~0xFFFULL))
        kprintf("smp: MADT local APIC address 0x%lx differs from the APIC base MSR; the MSR's "
                "is used\n", madt.lapic_phys);
    unsigned wanted = nap;
    while (nap && !(ap_mem = physmem_take_top(nap * AP_BLOCK)))
        nap--;
    if (nap < wanted)
        kprintf("smp: memory for only %u of the %u other CPUs can be set aside\n", nap, wanted);
}

/* The page tables the trampoline switches paging on with: the kernel's
 * halves, and the low 2 MiB identity-mapped (the trampoline runs there). */
static uint64_t trampoline_tables(void *pages[3])
{
    uint64_t *pml4 = pages[0] = kpage_alloc(), *pdpt = pages[1] = kpage_alloc(),
             *pd = pages[2] = kpage_alloc();
    for (int i = 256; i < 512; i++)
        pml4[i] = boot_pml4[i];
    pml4[0] = ((uint64_t)pdpt - PHYS_BASE) | 0x3;
    pdpt[0] = ((uint64_t)pd - PHYS_BASE) | 0x3;
    pd[0] = 0x83;                                   /* 2 MiB at 0: P, W, PS */
    return (uint64_t)pml4 - PHYS_BASE;
}

static bool start_ap(struct percpu *c, uint8_t *params, uint64_t tramp_pa)
{
    volatile uint32_t *alive = (volatile uint32_t *)(params + TP_ALIVE);
    *alive = 0;
    *(uint32_t *)(params + TP_APIC) = c->apic_id;
    *(uint64_t *)(params + TP_STACK) = c->stack_top;
    *(uint64_t *)(params + TP_PERCPU) = (uint64_t)c;
    c->state = CPU_STARTING;
    sync_go = sync_ack = 0;            /* the TSC check's handshake starts afresh */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    uint32_t sipi = ICR_STARTUP | (uint32_t)(tramp_pa >> 12);
    lapic_send_icr(c->apic_id, sipi);
    uint64_t t = time_monotonic_ns() + SIPI_GAP_NS;
    while (!*alive && time_monotonic_ns() < t)
        cpu_relax();
    if (!*alive)
        lapic_send_icr(c->apic_id, sipi);   /* ignored by a CPU already on its way */
    uint64_t end = time_monotonic_ns() + START_TIMEOUT_NS;
    while (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) != CPU_ONLINE) {
        if (time_monotonic_ns() > end)
            return false;
        cpu_relax();
    }
    return true;
}

static void noop(void *arg) { (void)arg; }

void smp_start(void)
{
    static bool started;
    if (!nap || started)
        return;
    started = true;
    uint64_t t0 = time_monotonic_ns();
    uint8_t *tramp = kpage_alloc();
    uint64_t tramp_pa = (uint64_t)tramp - PHYS_BASE;
    if (tramp_pa < 0x1000 || tramp_pa >= 0x100000) {
        kprintf("smp: no free page below 1 MiB for the start-up code: using the boot CPU only\n");
        kpage_free(tramp);
        return;
    }
    memcpy(tramp, smp_tramp_start, (size_t)(smp_tramp_end - smp_tramp_start));
    uint64_t poff = (uint64_t)(smp_tramp_params - smp_tramp_start);
    uint8_t *params = tramp + poff;
    uint64_t *gdt = (uint64_t *)(params + TP_GDT);
    gdt[0] = 0;
    gdt[1] = 0x00CF9A000000FFFF;                    /* 0x08: 32-bit code */
    gdt[2] = 0x00CF92000000FFFF;                    /* 0x10: data */
    gdt[3] = 0x00AF9A000000FFFF;                    /* 0x18: 64-bit code */
    *(uint16_t *)(params + TP_GDTR) = 4 * 8 - 1;
    *(uint32_t *)(params + TP_GDTR + 2) = (uint32_t)(tramp_pa + poff + TP_GDT);
    *(uint32_t *)(params + TP_FAR32) = (uint32_t)(tramp_pa + (smp_tramp_pm32 - smp_tramp_start));
    *(uint16_t *)(params + TP_FAR32 + 4) = 0x08;
    *(uint32_t *)(params + TP_FAR64) = (uint32_t)(tramp_pa + (smp_tramp_lm64 - smp_tramp_start));
    *(uint16_t *)(params + TP_FAR64 + 4) = 0x18;
    void *tables[3];
    *(uint32_t *)(params + TP_CR3) = (uint32_t)trampoline_tables(tables);
    *(uint64_t *)(params + TP_ENTRY) = (uint64_t)smp_ap_main;
    kernel_cr3 = read_cr3();
    boot_cr0 = read_cr0();
    boot_cr4 = read_cr4();

    /* INIT every AP, wait once, then SIPI them one at a time: the parameter
     * block serves one CPU at a time. */
    for (unsigned i = 0; i < nap; i++)
        lapic_send_icr(ap_apic[i], ICR_INIT | ICR_ASSERT);
    uint64_t t = time_monotonic_ns() + INIT_WAIT_NS;
    while (time_monotonic_ns() < t)
        cpu_relax();

    unsigned failed = 0;
    bool tsc_ok = true;
    uint64_t worst_bound = 0;
    for (unsigned i = 0; i < nap; i++) {
        uint8_t *block = phys_to_virt(ap_mem + i * AP_BLOCK);
        struct percpu *c = (struct percpu *)block;
        memset(c, 0, sizeof *c);
        percpu_setup(c, ncpus, ap_apic[i], (uint64_t)block + AP_BLOCK);
        if (!start_ap(c, params, tramp_pa)) {
            kprintf("smp: the CPU with APIC id %u did not start within %llu s: not used\n",
                    c->apic_id, START_TIMEOUT_NS / 1000000000ULL);
            failed++;
            continue;
        }
        if (!tsc_check(c)) {
            kprintf("smp: CPU %u (APIC id %u) stopped answering while its TSC was checked\n",
                    c->index, c->apic_id);
            failed++;
            continue;
        }
        tsc_ok = tsc_ok && tsc_in_step(c);
        if (c->tsc_bound > worst_bound)
            worst_bound = c->tsc_bound;
        cpus[ncpus] = c;
        __atomic_store_n(&ncpus, ncpus + 1, __ATOMIC_RELEASE);
    }
    *(uint32_t *)(params + TP_APIC) = 0xFFFFFFFF;   /* a late CPU halts in the trampoline */
    if (!failed) {
        kpage_free(tramp);
        for (int i = 0; i < 3; i++)
            kpage_free(tables[i]);
    }
    uint64_t took = time_monotonic_ns() - t0;

    /* A call to every AP, timed: the IPI path works, and what it costs. */
    uint64_t worst_call = 0;
    for (unsigned i = 1; i < ncpus; i++) {
        uint64_t a = time_monotonic_ns();
        smp_call(i, noop, NULL);
        uint64_t d = time_monotonic_ns() - a;
        if (d > worst_call)
            worst_call = d;
    }
    char ids[160];
    size_t n = 0;
    for (unsigned i = 0; i < ncpus && n < sizeof ids; i++)
        n += (size_t)snprintf(ids + n, sizeof ids - n, "%s%u", i ? " " : "", cpus[i]->apic_id);
    uint64_t bound_ns = worst_bound * 1000000000ULL / time_tsc_hz();
    kprintf("smp: %u of %u CPUs running (APIC ids %s%s), started in %lu ms; TSC %s "
            "(within %lu ns); slowest call round trip %lu us\n",
            ncpus, 1 + nap, ids, n >= sizeof ids ? "..." : "", took / 1000000,
            tsc_ok ? "in step" : "NOT in step", bound_ns, worst_call / 1000);
}

static __attribute__((noreturn)) void ap_idle(void);

/* An AP, from the trampoline: on its own stack, still on the trampoline's
 * page tables. */
void smp_ap_main(struct percpu *c)
{
    write_cr3(kernel_cr3);
    write_cr0(boot_cr0);
    write_cr4(boot_cr4);
    percpu_load(c);
    cpu_init_ap(c, (uint64_t)c + AP_PERCPU + AP_NMI_STACK + AP_DF_STACK,
                (uint64_t)c + AP_PERCPU + AP_NMI_STACK);
    lapic_init_ap();
    __atomic_store_n(&c->state, CPU_ONLINE, __ATOMIC_RELEASE);
    tsc_answer();
    ap_idle();
}

/* An AP's idle loop: run what is placed here, else halt. */
static void ap_idle(void)
{
    for (;;) {
        if (idle_hook)
            idle_hook();
        cpu_halt_until(UINT64_MAX);
    }
}

void smp_idle_again(void)
{
    struct percpu *c = this_cpu();
    write_cr3(kernel_cr3);
    cpu_set_kernel_stack(c->stack_top);
    __asm__ volatile("cli; mov %0, %%rsp; xor %%ebp, %%ebp; call *%1; ud2"
                     :: "r"(c->stack_top), "r"(ap_idle) : "memory");
    __builtin_unreachable();
}
