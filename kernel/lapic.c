/* Local APIC register access, for every part of the kernel that needs it
 * (the timer in time.c, end-of-interrupt for devices, the APIC id). */
#include "kernel.h"
#include "lapic.h"
#include "spinlock.h"
#include "x86.h"

volatile uint32_t *lapic_regs;

void lapic_map(void) { lapic_regs = phys_to_virt(rdmsr(MSR_APIC_BASE) & ~0xFFFULL); }
uint32_t lapic_read(unsigned reg) { return lapic_regs[reg / 4]; }
void lapic_write(unsigned reg, uint32_t v) { lapic_regs[reg / 4] = v; }
void apic_eoi(void) { lapic_write(LAPIC_EOI, 0); }
uint32_t apic_id(void) { return lapic_read(LAPIC_ID) >> 24; }

static void icr_wait_idle(void)
{
    for (long i = 0; i < 10000000 && (lapic_read(LAPIC_ICR_LO) & ICR_BUSY); i++)
        __asm__ volatile("pause");
}

void lapic_send_icr(uint32_t apic_id, uint32_t icr_low)
{
    /* The two halves are one command: an interrupt handler on this CPU
     * sending its own IPI in between would change the destination. */
    uint64_t f = irq_save();
    icr_wait_idle();
    lapic_write(LAPIC_ICR_HI, apic_id << 24);
    lapic_write(LAPIC_ICR_LO, icr_low);
    icr_wait_idle();
    irq_restore(f);
}

void lapic_init_ap(void)
{
    lapic_write(LAPIC_TPR, 0);
    lapic_write(LAPIC_LVT_LINT0, LVT_MASKED);
    lapic_write(LAPIC_LVT_LINT1, LVT_MASKED);
    lapic_write(LAPIC_LVT_ERROR, LVT_MASKED);
    lapic_write(LAPIC_ESR, 0);
    lapic_write(LAPIC_TIMER_DIV, 0x3);
    lapic_write(LAPIC_LVT_TIMER, LVT_MASKED);
    lapic_write(LAPIC_SVR, 0x100 | 0xFF);         /* enabled; spurious vector 0xFF */
    apic_eoi();
}
