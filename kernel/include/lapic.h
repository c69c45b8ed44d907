/* The local APIC (xAPIC, memory-mapped): each CPU reaches its own at the
 * same address.  Register offsets are the architectural ones. */
#ifndef TERN_LAPIC_H
#define TERN_LAPIC_H
#include <stdint.h>

enum {
    LAPIC_ID = 0x20, LAPIC_EOI = 0xB0, LAPIC_SVR = 0xF0, LAPIC_LVT_TIMER = 0x320,
    LAPIC_TIMER_INIT = 0x380, LAPIC_TIMER_CUR = 0x390, LAPIC_TIMER_DIV = 0x3E0,
};

extern volatile uint32_t *lapic_regs;   /* NULL until lapic_map */
void lapic_map(void);                   /* from the boot CPU's APIC base MSR */
uint32_t lapic_read(unsigned reg);
void lapic_write(unsigned reg, uint32_t v);
void apic_eoi(void);
uint32_t apic_id(void);
#endif
