/* The IOAPIC at its architectural address.  Firmware tables (ACPI MADT) could
 * move it or add more; PCs and QEMU put the first one here, and a device that
 * needs more is better served by MSI anyway (pci.c prefers it). */
#include "ioapic.h"
#include "kernel.h"
#include "x86.h"

#define IOAPIC_PHYS 0xFEC00000ULL
enum { IOREGSEL = 0x00, IOWIN = 0x10 };
enum { IOAPIC_VER = 0x01, IOAPIC_REDTBL = 0x10 };
enum { RTE_MASKED = 1u << 16, RTE_LEVEL = 1u << 15, RTE_ACTIVE_LOW = 1u << 13 };

static volatile uint32_t *ioapic(void) { return phys_to_virt(IOAPIC_PHYS); }

static uint32_t ioapic_read(unsigned reg)
{
    ioapic()[IOREGSEL / 4] = reg;
    return ioapic()[IOWIN / 4];
}

static void ioapic_write(unsigned reg, uint32_t v)
{
    ioapic()[IOREGSEL / 4] = reg;
    ioapic()[IOWIN / 4] = v;
}

static unsigned ioapic_pins(void)
{
    uint32_t ver = ioapic_read(IOAPIC_VER);
    if (ver == 0xFFFFFFFF)       /* nothing decodes the address */
        return 0;
    return ((ver >> 16) & 0xFF) + 1;
}

bool ioapic_route(unsigned gsi, uint8_t vector, bool level, bool active_low)
{
    if (gsi >= ioapic_pins())
        return false;
    uint32_t lo = vector | RTE_MASKED | (level ? RTE_LEVEL : 0) | (active_low ? RTE_ACTIVE_LOW : 0);
    ioapic_write(IOAPIC_REDTBL + 2 * gsi, RTE_MASKED);
    ioapic_write(IOAPIC_REDTBL + 2 * gsi + 1, apic_id() << 24); /* physical destination */
    ioapic_write(IOAPIC_REDTBL + 2 * gsi, lo);
    return true;
}

void ioapic_mask(unsigned gsi, bool masked)
{
    uint32_t lo = ioapic_read(IOAPIC_REDTBL + 2 * gsi);
    lo = masked ? lo | RTE_MASKED : lo & ~RTE_MASKED;
    ioapic_write(IOAPIC_REDTBL + 2 * gsi, lo);
}
