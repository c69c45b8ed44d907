/* The local APIC (xAPIC, memory-mapped): each CPU reaches its own at the
 * same address.  Register offsets are the architectural ones. */
#ifndef TERN_LAPIC_H
#define TERN_LAPIC_H
#include <stdint.h>

enum {
    LAPIC_ID = 0x20, LAPIC_TPR = 0x80, LAPIC_EOI = 0xB0, LAPIC_SVR = 0xF0, LAPIC_ESR = 0x280,
    LAPIC_ICR_LO = 0x300, LAPIC_ICR_HI = 0x310, LAPIC_LVT_TIMER = 0x320,
    LAPIC_LVT_LINT0 = 0x350, LAPIC_LVT_LINT1 = 0x360, LAPIC_LVT_ERROR = 0x370,
    LAPIC_TIMER_INIT = 0x380, LAPIC_TIMER_CUR = 0x390, LAPIC_TIMER_DIV = 0x3E0,
};
/* Interrupt command register, low word. */
enum {
    ICR_FIXED = 0x000, ICR_NMI = 0x400, ICR_INIT = 0x500, ICR_STARTUP = 0x600,
    ICR_BUSY = 1u << 12, ICR_ASSERT = 1u << 14, ICR_ALL_BUT_SELF = 3u << 18,
};
#define LVT_MASKED (1u << 16)

extern volatile uint32_t *lapic_regs;   /* NULL until lapic_map */
void lapic_map(void);                   /* from the boot CPU's APIC base MSR */
uint32_t lapic_read(unsigned reg);
void lapic_write(unsigned reg, uint32_t v);
void apic_eoi(void);
uint32_t apic_id(void);
/* Sends an interprocessor interrupt (icr_low: vector | delivery mode |
 * shorthand) to apic_id; returns once the APIC has accepted it. */
void lapic_send_icr(uint32_t apic_id, uint32_t icr_low);
/* An application processor's APIC: enabled, accepting every priority, the
 * timer as time_init sets it (masked, divide by 16), LINT0/1 masked. */
void lapic_init_ap(void);
#endif
