/* The per-CPU areas: the boot CPU's, and the table of all of them. */
#include "kernel.h"
#include "percpu.h"
#include "process.h"
#include "x86.h"

struct percpu *cpus[MAX_CPUS];
static struct percpu boot_cpu;
extern char boot_stack_top[];

void percpu_setup(struct percpu *c, uint32_t index, uint32_t apic_id, uint64_t stack_top)
{
    c->self = c;
    c->index = index;
    c->apic_id = apic_id;
    c->stack_top = stack_top;
    c->kernel_rsp = stack_top;
    c->process = &proc_main;
}

void percpu_load(struct percpu *c)
{
    wrmsr(MSR_GS_BASE, (uint64_t)c);
    wrmsr(MSR_KERNEL_GS_BASE, 0);
}

void percpu_init_boot(void)
{
    /* The APIC id is filled in by smp_init, once the local APIC is mapped. */
    percpu_setup(&boot_cpu, 0, 0, (uint64_t)boot_stack_top);
    boot_cpu.state = CPU_ONLINE;
    cpus[0] = &boot_cpu;
    percpu_load(&boot_cpu);
}
