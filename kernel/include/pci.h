/* PCI: configuration space through the legacy ports 0xCF8/0xCFC, one scan of
 * the buses at boot, BARs decoded, and interrupt set-up (MSI when the device
 * has it, else INTx through the IOAPIC; MSI-X for drivers that ask). */
#ifndef TERN_PCI_H
#define TERN_PCI_H
#include <stdbool.h>
#include <stdint.h>

#define PCI_MAX_DEVICES 64

struct pci_bar {
    uint64_t addr;                 /* port number or physical address; 0: absent */
    uint64_t size;
    bool io, is64, prefetch;
};

struct pci_dev {
    uint8_t bus, dev, fn;
    uint16_t vendor, device;
    uint8_t class_code, subclass, prog_if, revision;
    uint8_t irq_line, irq_pin;     /* as the firmware left them; pin 0: none */
    struct pci_bar bar[6];
};

enum pci_irq_mode { PCI_IRQ_NONE, PCI_IRQ_MSI, PCI_IRQ_MSIX, PCI_IRQ_INTX };

/* Scans every bus reachable from bus 0 (once; later calls return the same
 * table).  Returns the number of functions found. */
int pci_scan(void);
struct pci_dev *pci_device(int i);

uint32_t pci_read32(const struct pci_dev *d, unsigned off);
uint16_t pci_read16(const struct pci_dev *d, unsigned off);
uint8_t pci_read8(const struct pci_dev *d, unsigned off);
void pci_write32(const struct pci_dev *d, unsigned off, uint32_t v);
void pci_write16(const struct pci_dev *d, unsigned off, uint16_t v);

/* Turns on I/O and/or memory decoding and bus mastering. */
void pci_enable(const struct pci_dev *d, bool io, bool mem);
/* Kernel address of a memory BAR (uncached direct map), or NULL if the BAR
 * is absent, an I/O BAR, or above the 4 GiB the direct map covers. */
volatile void *pci_bar_map(const struct pci_dev *d, int bar);
/* Offset of capability `id` in configuration space, or 0. */
unsigned pci_find_cap(const struct pci_dev *d, uint8_t id);
/* The next capability `id` after the one at `prev` (0: the first), or 0. */
unsigned pci_next_cap(const struct pci_dev *d, unsigned prev, uint8_t id);
/* Routes the device's interrupt to `vector` on this CPU: MSI if offered,
 * else the INTx line through the IOAPIC (level-triggered; *gsi receives the
 * pin so the caller can mask it).  The interrupt stays masked at the device;
 * the driver enables it. */
enum pci_irq_mode pci_irq_setup(const struct pci_dev *d, uint8_t vector, unsigned *gsi);
/* MSI-X for a driver that tells its device which table entry each of its
 * interrupts uses (virtio): entry 0 to `vector` on this CPU, every other
 * entry masked, INTx off.  False (nothing changed) if the device has no
 * MSI-X or its table is out of reach.  pci_msix_disable undoes it. */
bool pci_msix_setup(const struct pci_dev *d, uint8_t vector);
void pci_msix_disable(const struct pci_dev *d);
#endif
