/* The IOAPIC, only as far as a device's INTx line needs it, and the local
 * APIC's end-of-interrupt.  The legacy 8259 PIC stays masked (time.c). */
#ifndef TERN_IOAPIC_H
#define TERN_IOAPIC_H
#include <stdbool.h>
#include <stdint.h>
#include "lapic.h"             /* apic_eoi, apic_id */

/* Routes global interrupt `gsi` to `vector` on this CPU, masked.  False if
 * there is no IOAPIC or no such pin. */
bool ioapic_route(unsigned gsi, uint8_t vector, bool level, bool active_low);
void ioapic_mask(unsigned gsi, bool masked);
#endif

