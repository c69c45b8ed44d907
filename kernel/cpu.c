/* Descriptor tables, the system-call MSRs and the floating-point unit, for
 * the boot CPU (cpu_init) and each application processor (cpu_init_ap).
 * Each CPU has its own GDT and TSS in its per-CPU area (percpu.h): the TSS's
 * RSP0 is that CPU's kernel stack, IST 1 a separate stack for double
 * faults so a blown kernel stack still gets a report, and IST 2 one for
 * NMIs.  The IDT is shared. */
#include "cpu.h"
#include "kernel.h"
#include "percpu.h"
#include "x86.h"

struct cpu_features cpu;

struct __attribute__((packed)) idt_entry {
    uint16_t off_lo, sel;
    uint8_t ist, type;
    uint16_t off_mid;
    uint32_t off_hi, reserved;
};

struct __attribute__((packed)) dtr {
    uint16_t limit;
    uint64_t base;
};

static struct idt_entry idt[256] __attribute__((aligned(16)));
static uint8_t double_fault_stack[4096] __attribute__((aligned(16)));   /* the boot CPU's */
static uint8_t nmi_stack[4096] __attribute__((aligned(16)));            /* the boot CPU's */

extern uint64_t trap_stubs[];          /* entry.S: stubs for vectors 0..255 */
extern void syscall_entry(void);

static void gdt_init(struct percpu *c, uint64_t double_fault_stack_top, uint64_t nmi_stack_top)
{
    uint64_t *gdt = c->gdt;
    struct tss *tss = &c->tss;
    gdt[0] = 0;
    gdt[1] = 0x00AF9A000000FFFF;       /* 0x08 kernel code, 64-bit */
    gdt[2] = 0x00CF92000000FFFF;       /* 0x10 kernel data */
    gdt[3] = 0x00CFFA000000FFFF;       /* 0x18 user code 32-bit (sysret layout) */
    gdt[4] = 0x00CFF2000000FFFF;       /* 0x20 user data */
    gdt[5] = 0x00AFFA000000FFFF;       /* 0x28 user code, 64-bit */
    uint64_t base = (uint64_t)tss, limit = sizeof *tss - 1;
    gdt[6] = (limit & 0xFFFF) | ((base & 0xFFFFFF) << 16) | (0x89ULL << 40) |
             (((limit >> 16) & 0xF) << 48) | (((base >> 24) & 0xFF) << 56);
    gdt[7] = base >> 32;
    tss->iomap_base = sizeof *tss;
    tss->ist[0] = double_fault_stack_top;
    tss->ist[1] = nmi_stack_top;
    c->nmi_stack_top = nmi_stack_top;
    tss->rsp[0] = c->kernel_rsp;

    struct dtr d = {sizeof c->gdt - 1, (uint64_t)gdt};
    __asm__ volatile("lgdt %0\n"
                     "pushq $0x08\n"
                     "leaq 1f(%%rip), %%rax\n"
                     "pushq %%rax\n"
                     "lretq\n"
                     "1: movw $0x10, %%ax\n"
                     "movw %%ax, %%ds\n movw %%ax, %%es\n movw %%ax, %%ss\n"
                     "movw $0x30, %%ax\n ltr %%ax\n"
                     :
                     : "m"(d)
                     : "rax", "memory");
}

static void idt_load(void)
{
    struct dtr d = {sizeof idt - 1, (uint64_t)idt};
    __asm__ volatile("lidt %0" ::"m"(d));
}

static void idt_init(void)
{
    for (int v = 0; v < 256; v++) {
        uint64_t a = trap_stubs[v];
        idt[v] = (struct idt_entry){
            /* An NMI (smp.c asks a stuck CPU where it is) may come in the
             * system call entry before the kernel stack is loaded: it runs
             * on a stack of its own, never on a user's, nor on the
             * double-fault stack, whose frame it would overwrite. */
            .off_lo = a & 0xFFFF, .sel = KERNEL_CS, .ist = v == 8 ? 1 : v == 2 ? 2 : 0,
            .type = 0x8E, /* present, DPL 0, interrupt gate */
            .off_mid = (a >> 16) & 0xFFFF, .off_hi = a >> 32,
        };
    }
    idt_load();
}

static void features_init(void)
{
    uint32_t r[4];
    cpuid(0, 0, r);
    uint32_t max_leaf = r[0];
    memcpy(cpu.vendor, &r[1], 4);
    memcpy(cpu.vendor + 4, &r[3], 4);
    memcpy(cpu.vendor + 8, &r[2], 4);
    cpuid(1, 0, r);
    cpu.hwcap = r[3];
    cpu.xsave = r[2] & (1u << 26);
    cpu.avx = r[2] & (1u << 28);
    cpu.rdrand = r[2] & (1u << 30);
    cpu.tsc_deadline = r[2] & (1u << 24);
    cpu.x2apic = r[2] & (1u << 21);
    if (max_leaf >= 7) {
        cpuid(7, 0, r);
        cpu.fsgsbase = r[1] & 1;
        cpu.avx512 = r[1] & (1u << 16);
    }
    cpuid(0x80000001, 0, r);
    cpu.pdpe1gb = r[3] & (1u << 26);
}

/* Let the application use x87/SSE/AVX(-512).  The kernel itself is compiled
 * with -mgeneral-regs-only and never touches these registers, so with one
 * application and no context switch there is nothing to save on kernel
 * entry; signal frames save the state with fxsave/xsave (sys/signal.c). */
static void fpu_init(void)
{
    uint64_t cr0 = read_cr0();
    cr0 &= ~(1ULL << 2);               /* EM off */
    cr0 |= (1ULL << 1) | (1ULL << 5);  /* MP, NE */
    cr0 &= ~(1ULL << 3);               /* TS off */
    write_cr0(cr0);
    uint64_t cr4 = read_cr4();
    cr4 |= (1ULL << 9) | (1ULL << 10); /* OSFXSR, OSXMMEXCPT */
    if (cpu.xsave)
        cr4 |= 1ULL << 18;             /* OSXSAVE */
    write_cr4(cr4);
    __asm__ volatile("fninit");
    cpu.xcr0 = 0;
    cpu.xsave_size = 512;
    if (cpu.xsave) {
        uint32_t r[4];
        cpuid(0xD, 0, r);
        uint64_t supported = ((uint64_t)r[3] << 32) | r[0];
        uint64_t want = 0x3;           /* x87, SSE */
        if (cpu.avx)
            want |= 0x4;               /* AVX (YMM upper halves) */
        if (cpu.avx512)
            want |= 0xE0;              /* opmask, ZMM_Hi256, Hi16_ZMM */
        cpu.xcr0 = want & supported;
        xsetbv(0, cpu.xcr0);
        cpuid(0xD, 0, r);
        cpu.xsave_size = r[1];         /* size for the components now enabled */
    }
    /* MXCSR keeps its reset value 0x1F80 (all exceptions masked).  No
     * ldmxcsr here: the instruction emulator of a paravirtual KVM (which
     * emulates all ring-0 code) does not implement it. */
}

static void syscall_init(void)
{
    wrmsr(MSR_EFER, rdmsr(MSR_EFER) | 1 | (1ULL << 11)); /* SCE, NXE */
    wrmsr(MSR_STAR, ((uint64_t)(0x18 | 3) << 48) | ((uint64_t)KERNEL_CS << 32));
    wrmsr(MSR_LSTAR, (uint64_t)syscall_entry);
    /* Clear IF, TF, DF, AC, NT on entry. */
    wrmsr(MSR_SFMASK, (1 << 9) | (1 << 8) | (1 << 10) | (1 << 18) | (1 << 14));
}

bool cpu_use_xsave(void) { return cpu.xcr0 && !cpu.ring0_emulated; }

void fpu_save_area(void *area)
{
    if (cpu_use_xsave()) {
        memset((uint8_t *)area + 512, 0, 64);  /* XSAVE header must start clean */
        __asm__ volatile("xsave (%0)" ::"r"(area), "a"((uint32_t)cpu.xcr0),
                         "d"((uint32_t)(cpu.xcr0 >> 32)) : "memory");
    } else {
        __asm__ volatile("fxsave (%0)" ::"r"(area) : "memory");
    }
}

void fpu_load_area(const void *area)
{
    if (cpu_use_xsave())
        __asm__ volatile("xrstor (%0)" ::"r"(area), "a"((uint32_t)cpu.xcr0),
                         "d"((uint32_t)(cpu.xcr0 >> 32)) : "memory");
    else
        __asm__ volatile("fxrstor (%0)" ::"r"(area) : "memory");
}

void cpu_set_kernel_stack(uint64_t top)
{
    struct percpu *c = this_cpu();
    c->tss.rsp[0] = top;
    c->kernel_rsp = top;
}

/* TSC cycles per iteration of a two-instruction loop in kernel mode, the
 * least of a few short rounds (a round the host preempted counts for
 * nothing).  About 1 on hardware and under ordinary KVM, about 10 under
 * QEMU's TCG, thousands where the hypervisor runs kernel mode through an
 * instruction emulator (kvm_pvm: ~3000, ~1 us an iteration). */
static uint64_t ring0_loop_cycles(void)
{
    enum { ROUNDS = 5, ITERS = 64 };
    uint64_t best = UINT64_MAX;
    for (int r = 0; r < ROUNDS; r++) {
        uint64_t t0 = rdtsc();
        uint32_t n = ITERS;
        __asm__ volatile("1: dec %0\n jnz 1b" : "+r"(n));
        uint64_t t = rdtsc() - t0;
        if (t < best)
            best = t;
    }
    return best / ITERS;
}

void cpu_init(void)
{
    features_init();
    cpu.ring0_loop_cycles = ring0_loop_cycles();
    cpu.ring0_interpreted = cpu.ring0_loop_cycles >= RING0_INTERPRETED_CYCLES;
    /* A binary translator (TCG: ~10 cycles an iteration) copies faster in
     * blocks than with `rep movsq`; hardware, KVM and an interpreter do not. */
    string_copy_blocks(cpu.ring0_loop_cycles >= RING0_TRANSLATED_CYCLES &&
                       !cpu.ring0_interpreted);
    if (cpu.ring0_interpreted)
        kprintf("kernel mode runs in the hypervisor's instruction emulator (%lu TSC cycles "
                "per loop iteration): the kernel keeps to plain instructions\n",
                cpu.ring0_loop_cycles);
    gdt_init(this_cpu(), (uint64_t)double_fault_stack + sizeof double_fault_stack,
             (uint64_t)nmi_stack + sizeof nmi_stack);
    idt_init();
    fpu_init();
    syscall_init();
    if (cpu.fsgsbase)
        write_cr4(read_cr4() | (1ULL << 16)); /* user wrfsbase, as Linux allows */
}

/* An application processor, on its own stack with GS at its area: the same
 * state as the boot CPU (CPUs of a node are taken to be alike; cpu_init has
 * read the features from the boot CPU). */
void cpu_init_ap(struct percpu *c, uint64_t double_fault_stack_top, uint64_t nmi_stack_top)
{
    gdt_init(c, double_fault_stack_top, nmi_stack_top);
    idt_load();
    fpu_init();
    syscall_init();
    if (cpu.fsgsbase)
        write_cr4(read_cr4() | (1ULL << 16));
}
