/* PCI configuration space (mechanism #1), bus scan and BAR decoding.
 *
 * The firmware has already assigned BARs and interrupt lines; the kernel
 * reads them and never re-assigns.  The scan follows PCI-to-PCI bridges from
 * bus 0 instead of probing all 256 buses: each config access is a port I/O
 * exit under a hypervisor, and that is slow on some hosts. */
#include "cpu.h"
#include "ioapic.h"
#include "kernel.h"
#include "pci.h"
#include "x86.h"

enum { CFG_ADDR = 0xCF8, CFG_DATA = 0xCFC };
enum { PCI_COMMAND = 0x04, PCI_STATUS = 0x06, PCI_HEADER = 0x0E, PCI_BAR0 = 0x10,
       PCI_SECONDARY = 0x19, PCI_CAPS = 0x34, PCI_INT_LINE = 0x3C, PCI_INT_PIN = 0x3D };
enum { CMD_IO = 1 << 0, CMD_MEM = 1 << 1, CMD_MASTER = 1 << 2, CMD_INTX_OFF = 1 << 10 };
enum { STATUS_CAPS = 1 << 4 };
enum { CAP_MSI = 0x05, CAP_MSIX = 0x11 };
enum { MSIX_ENABLE = 1 << 15, MSIX_MASK_ALL = 1 << 14 };

static struct pci_dev devices[PCI_MAX_DEVICES];
static int ndevices;
static bool scanned;
static uint8_t bus_seen[256 / 8];

static uint32_t cfg_addr(unsigned bus, unsigned dev, unsigned fn, unsigned off)
{
    return 0x80000000u | bus << 16 | dev << 11 | fn << 8 | (off & 0xFC);
}

static uint32_t cfg_read(unsigned bus, unsigned dev, unsigned fn, unsigned off)
{
    outl(CFG_ADDR, cfg_addr(bus, dev, fn, off));
    return inl(CFG_DATA);
}

uint32_t pci_read32(const struct pci_dev *d, unsigned off) { return cfg_read(d->bus, d->dev, d->fn, off); }
uint16_t pci_read16(const struct pci_dev *d, unsigned off) { return (uint16_t)(pci_read32(d, off) >> ((off & 2) * 8)); }
uint8_t pci_read8(const struct pci_dev *d, unsigned off) { return (uint8_t)(pci_read32(d, off) >> ((off & 3) * 8)); }

void pci_write32(const struct pci_dev *d, unsigned off, uint32_t v)
{
    outl(CFG_ADDR, cfg_addr(d->bus, d->dev, d->fn, off));
    outl(CFG_DATA, v);
}

void pci_write16(const struct pci_dev *d, unsigned off, uint16_t v)
{
    outl(CFG_ADDR, cfg_addr(d->bus, d->dev, d->fn, off));
    outw((uint16_t)(CFG_DATA + (off & 2)), v);
}

/* Sizing a BAR means writing all ones to it, so decoding is off meanwhile:
 * the device must not answer at a bogus address. */
static int read_bar(struct pci_dev *d, int i)
{
    unsigned off = PCI_BAR0 + 4 * i;
    uint32_t lo = pci_read32(d, off);
    struct pci_bar *b = &d->bar[i];
    uint16_t cmd = pci_read16(d, PCI_COMMAND);
    pci_write16(d, PCI_COMMAND, cmd & ~(CMD_IO | CMD_MEM));
    pci_write32(d, off, 0xFFFFFFFF);
    uint32_t mask = pci_read32(d, off);
    pci_write32(d, off, lo);
    int used = 1;
    if (lo & 1) {
        b->io = true;
        b->addr = lo & ~3u;
        b->size = (uint32_t)~(mask & ~3u) + 1;
        b->size &= 0xFFFF;
    } else {
        b->prefetch = lo & 8;
        b->is64 = ((lo >> 1) & 3) == 2;
        uint64_t addr = lo & ~0xFu, m = mask & ~0xFu;
        if (b->is64 && i < 5) {
            uint32_t hi = pci_read32(d, off + 4);
            pci_write32(d, off + 4, 0xFFFFFFFF);
            uint32_t mhi = pci_read32(d, off + 4);
            pci_write32(d, off + 4, hi);
            addr |= (uint64_t)hi << 32;
            m |= (uint64_t)mhi << 32;
            used = 2;
        } else {
            m |= 0xFFFFFFFF00000000ULL;
        }
        b->addr = addr;
        b->size = m ? ~m + 1 : 0;
    }
    pci_write16(d, PCI_COMMAND, cmd);
    if (mask == 0 || mask == 0xFFFFFFFF)     /* BAR not implemented */
        *b = (struct pci_bar){0};
    return used;
}

static void scan_bus(unsigned bus);

static void add_function(unsigned bus, unsigned dev, unsigned fn, uint32_t id)
{
    uint32_t cls = cfg_read(bus, dev, fn, 0x08);
    uint8_t header = (uint8_t)(cfg_read(bus, dev, fn, PCI_HEADER & ~3u) >> 16) & 0x7F;
    if (header == 1) {     /* PCI-to-PCI bridge */
        scan_bus((cfg_read(bus, dev, fn, 0x18) >> 8) & 0xFF);
        return;
    }
    if (header != 0 || ndevices == PCI_MAX_DEVICES)
        return;
    struct pci_dev *d = &devices[ndevices++];
    *d = (struct pci_dev){
        .bus = (uint8_t)bus, .dev = (uint8_t)dev, .fn = (uint8_t)fn,
        .vendor = id & 0xFFFF, .device = id >> 16,
        .class_code = cls >> 24, .subclass = (cls >> 16) & 0xFF,
        .prog_if = (cls >> 8) & 0xFF, .revision = cls & 0xFF,
    };
    d->irq_line = pci_read8(d, PCI_INT_LINE);
    d->irq_pin = pci_read8(d, PCI_INT_PIN);
    /* Bridges are left alone: no driver here wants their BARs, and turning
     * off decoding on an ISA/LPC bridge, even briefly, would cut off the
     * legacy devices behind it. */
    if (d->class_code != 0x06)
        for (int i = 0; i < 6;)
            i += read_bar(d, i);
}

static void scan_bus(unsigned bus)
{
    if (bus_seen[bus / 8] & (1 << (bus % 8)))
        return;
    bus_seen[bus / 8] |= (uint8_t)(1 << (bus % 8));
    for (unsigned dev = 0; dev < 32; dev++) {
        uint32_t id = cfg_read(bus, dev, 0, 0);
        if ((id & 0xFFFF) == 0xFFFF)
            continue;
        bool multi = (cfg_read(bus, dev, 0, PCI_HEADER & ~3u) >> 16) & 0x80;
        for (unsigned fn = 0; fn < (multi ? 8u : 1u); fn++) {
            if (fn)
                id = cfg_read(bus, dev, fn, 0);
            if ((id & 0xFFFF) != 0xFFFF)
                add_function(bus, dev, fn, id);
        }
    }
}

int pci_scan(void)
{
    if (scanned)
        return ndevices;
    scanned = true;
    /* No answer at all (0xFFFFFFFF from 0:0.0): no PCI, or not this way. */
    if ((cfg_read(0, 0, 0, 0) & 0xFFFF) == 0xFFFF)
        return 0;
    scan_bus(0);
    /* A multi-function host bridge at 0:0: function n is the host
     * controller for bus n. */
    if ((cfg_read(0, 0, 0, PCI_HEADER & ~3u) >> 16) & 0x80)
        for (unsigned fn = 1; fn < 8; fn++)
            if ((cfg_read(0, 0, fn, 0) & 0xFFFF) != 0xFFFF)
                scan_bus(fn);
    return ndevices;
}

struct pci_dev *pci_device(int i) { return i >= 0 && i < ndevices ? &devices[i] : NULL; }

void pci_enable(const struct pci_dev *d, bool io, bool mem)
{
    uint16_t cmd = pci_read16(d, PCI_COMMAND);
    cmd |= CMD_MASTER | (io ? CMD_IO : 0) | (mem ? CMD_MEM : 0);
    pci_write16(d, PCI_COMMAND, cmd);
}

volatile void *pci_bar_map(const struct pci_dev *d, int bar)
{
    if (bar < 0 || bar > 5)
        return NULL;
    const struct pci_bar *b = &d->bar[bar];
    if (!b->addr || b->io || b->addr + b->size > GiB(4))
        return NULL;
    return phys_to_virt(b->addr);
}

unsigned pci_next_cap(const struct pci_dev *d, unsigned prev, uint8_t id)
{
    if (!(pci_read16(d, PCI_STATUS) & STATUS_CAPS))
        return 0;
    unsigned off = (prev ? pci_read8(d, prev + 1) : pci_read8(d, PCI_CAPS)) & 0xFC;
    /* The bound guards against a list that loops. */
    for (int guard = 0; off >= 0x40 && guard < 48; guard++) {
        if (pci_read8(d, off) == id)
            return off;
        off = pci_read8(d, off + 1) & 0xFC;
    }
    return 0;
}

unsigned pci_find_cap(const struct pci_dev *d, uint8_t id) { return pci_next_cap(d, 0, id); }

static bool msi_setup(const struct pci_dev *d, uint8_t vector)
{
    unsigned cap = pci_find_cap(d, CAP_MSI);
    if (!cap)
        return false;
    uint16_t ctl = pci_read16(d, cap + 2);
    bool is64 = ctl & (1 << 7);
    pci_write32(d, cap + 4, 0xFEE00000u | apic_id() << 12);   /* fixed, physical */
    if (is64) {
        pci_write32(d, cap + 8, 0);
        pci_write16(d, cap + 12, vector);                      /* edge */
    } else {
        pci_write16(d, cap + 8, vector);
    }
    ctl &= ~(7 << 4);                                          /* one vector */
    pci_write16(d, cap + 2, ctl | 1);
    pci_write16(d, PCI_COMMAND, pci_read16(d, PCI_COMMAND) | CMD_INTX_OFF);
    return true;
}

/* An MSI-X message is an edge the device writes straight to the local APIC:
 * no status register to read in the handler and no IOAPIC end-of-interrupt,
 * each of which is a trip through the hypervisor on a virtual node (and
 * under QEMU one taken under its global lock, which the device's own
 * thread holds while it hands the node a frame). */
bool pci_msix_setup(const struct pci_dev *d, uint8_t vector)
{
    unsigned cap = pci_find_cap(d, CAP_MSIX);
    if (!cap)
        return false;
    uint16_t ctl = pci_read16(d, cap + 2);
    unsigned entries = (ctl & 0x7FFu) + 1;
    uint32_t where = pci_read32(d, cap + 4);
    unsigned bar = where & 7;
    uint64_t off = where & ~7u;
    volatile uint8_t *base = bar <= 5 ? pci_bar_map(d, (int)bar) : NULL;
    if (!base || off + entries * 16ULL > d->bar[bar].size)
        return false;
    pci_enable(d, false, true);
    /* Enabled with every entry held back while the table is written. */
    pci_write16(d, cap + 2, ctl | MSIX_ENABLE | MSIX_MASK_ALL);
    volatile uint32_t *t = (volatile uint32_t *)(base + off);
    for (unsigned i = 0; i < entries; i++)
        t[i * 4 + 3] = 1;                                        /* masked */
    t[0] = 0xFEE00000u | apic_id() << 12;                        /* fixed, physical */
    t[1] = 0;
    t[2] = vector;                                               /* edge */
    t[3] = 0;
    pci_write16(d, cap + 2, (uint16_t)((ctl | MSIX_ENABLE) & ~MSIX_MASK_ALL));
    pci_write16(d, PCI_COMMAND, pci_read16(d, PCI_COMMAND) | CMD_INTX_OFF);
    return true;
}

void pci_msix_disable(const struct pci_dev *d)
{
    unsigned cap = pci_find_cap(d, CAP_MSIX);
    if (cap)
        pci_write16(d, cap + 2, pci_read16(d, cap + 2) & (uint16_t)~MSIX_ENABLE);
}

enum pci_irq_mode pci_irq_setup(const struct pci_dev *d, uint8_t vector, unsigned *gsi)
{
    if (msi_setup(d, vector))
        return PCI_IRQ_MSI;
    if (d->irq_pin == 0 || d->irq_line == 0 || d->irq_line == 0xFF)
        return PCI_IRQ_NONE;
    /* The firmware's line is an ISA IRQ number; with no ACPI interpreter it
     * is taken as the IOAPIC pin, which holds where PCI links are routed to
     * ISA IRQs (QEMU's PIIX, many PCs).  Where it does not, the interrupt
     * never comes and netdev falls back to polling.  Pins below 16 carry
     * PCI interrupts as QEMU's MADT describes them (level, active high);
     * pins above are native PCI (level, active low). */
    *gsi = d->irq_line;
    if (!ioapic_route(*gsi, vector, true, *gsi >= 16))
        return PCI_IRQ_NONE;
    pci_write16(d, PCI_COMMAND, pci_read16(d, PCI_COMMAND) & ~CMD_INTX_OFF);
    return PCI_IRQ_INTX;
}
