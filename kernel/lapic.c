/* Local APIC register access, for every part of the kernel that needs it
 * (the timer in time.c, end-of-interrupt for devices, the APIC id). */
#include "kernel.h"
#include "lapic.h"
#include "x86.h"

volatile uint32_t *lapic_regs;

void lapic_map(void) { lapic_regs = phys_to_virt(rdmsr(MSR_APIC_BASE) & ~0xFFFULL); }
uint32_t lapic_read(unsigned reg) { return lapic_regs[reg / 4]; }
void lapic_write(unsigned reg, uint32_t v) { lapic_regs[reg / 4] = v; }
void apic_eoi(void) { lapic_write(LAPIC_EOI, 0); }
uint32_t apic_id(void) { return lapic_read(LAPIC_ID) >> 24; }
