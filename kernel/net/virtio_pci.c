/* Virtio PCI transports and split virtqueues (virtio 1.x spec, sections 2.7
 * and 4.1).  A transitional device (QEMU's default) offers both transports:
 * modern is used when its registers are reachable, legacy otherwise. */
#include "time.h"
#include "virtio.h"
#include "x86.h"

/* Legacy registers, I/O BAR 0.  Device config follows at 0x14 while MSI-X
 * is off, which it stays for a legacy device (MSI-X is modern only here). */
enum { L_HOST_FEATURES = 0x00, L_GUEST_FEATURES = 0x04, L_QUEUE_PFN = 0x08,
       L_QUEUE_SIZE = 0x0C, L_QUEUE_SEL = 0x0E, L_QUEUE_NOTIFY = 0x10, L_STATUS = 0x12,
       L_ISR = 0x13, L_CONFIG = 0x14 };
/* Modern common configuration structure. */
enum { C_DFSELECT = 0x00, C_DF = 0x04, C_GFSELECT = 0x08, C_GF = 0x0C, C_STATUS = 0x14,
       C_Q_SELECT = 0x16, C_Q_SIZE = 0x18, C_Q_MSIX = 0x1A, C_Q_ENABLE = 0x1C,
       C_Q_NOTIFY_OFF = 0x1E, C_Q_DESC = 0x20, C_Q_DRIVER = 0x28, C_Q_DEVICE = 0x30 };
enum { CAP_VENDOR = 0x09, CFG_COMMON = 1, CFG_NOTIFY = 2, CFG_ISR = 3, CFG_DEVICE = 4 };
#define MAX_QUEUE_SIZE 1024

static uint8_t r8(volatile uint8_t *b, unsigned off) { return b[off]; }
static uint16_t r16(volatile uint8_t *b, unsigned off) { return *(volatile uint16_t *)(b + off); }
static uint32_t r32(volatile uint8_t *b, unsigned off) { return *(volatile uint32_t *)(b + off); }
static void w8(volatile uint8_t *b, unsigned off, uint8_t v) { b[off] = v; }
static void w16(volatile uint8_t *b, unsigned off, uint16_t v) { *(volatile uint16_t *)(b + off) = v; }
static void w32(volatile uint8_t *b, unsigned off, uint32_t v) { *(volatile uint32_t *)(b + off) = v; }
static void w64(volatile uint8_t *b, unsigned off, uint64_t v)
{
    w32(b, off, (uint32_t)v);
    w32(b, off + 4, (uint32_t)(v >> 32));
}

static void set_status(struct virtio_pci *vp, uint8_t st)
{
    if (vp->modern)
        w8(vp->common, C_STATUS, st);
    else
        outb(vp->io + L_STATUS, st);
}

static uint8_t get_status(struct virtio_pci *vp)
{
    return vp->modern ? r8(vp->common, C_STATUS) : inb(vp->io + L_STATUS);
}

/* Each structure is a window into a memory BAR; one that is missing,
 * in an I/O BAR, or beyond the direct map rules the modern transport out. */
static bool modern_find(struct virtio_pci *vp, const struct pci_dev *d)
{
    for (unsigned cap = pci_next_cap(d, 0, CAP_VENDOR); cap; cap = pci_next_cap(d, cap, CAP_VENDOR)) {
        uint8_t type = pci_read8(d, cap + 3), bar = pci_read8(d, cap + 4);
        uint32_t off = pci_read32(d, cap + 8), len = pci_read32(d, cap + 12);
        if (bar > 5 || type < CFG_COMMON || type > CFG_DEVICE)
            continue;
        volatile uint8_t *base = pci_bar_map(d, bar);
        if (!base || (uint64_t)off + len > d->bar[bar].size)
            continue;
        volatile uint8_t **slot = type == CFG_COMMON ? &vp->common : type == CFG_NOTIFY ? &vp->notify
                                : type == CFG_ISR ? &vp->isr : &vp->device;
        if (*slot)
            continue;      /* the first of each type is the preferred one */
        *slot = base + off;
        if (type == CFG_NOTIFY)
            vp->notify_mult = pci_read32(d, cap + 16);
    }
    return vp->common && vp->notify && vp->isr && vp->device;
}

bool virtio_pci_init(struct virtio_pci *vp, const struct pci_dev *d)
{
    *vp = (struct virtio_pci){.pci = d};
    if (modern_find(vp, d)) {
        vp->modern = true;
        pci_enable(d, false, true);
    } else if (d->bar[0].io && d->bar[0].addr && d->device < 0x1040) {
        vp->io = (uint16_t)d->bar[0].addr;
        pci_enable(d, true, false);
    } else {
        kprintf("net: virtio device %04x: no usable transport\n", d->device);
        return false;
    }
    set_status(vp, 0);
    /* A modern device may take a while to finish the reset. */
    uint64_t end = time_monotonic_ns() + 100000000;
    while (get_status(vp) != 0 && time_monotonic_ns() < end)
        cpu_relax();
    if (get_status(vp) != 0) {
        kprintf("net: virtio device %04x does not reset\n", d->device);
        return false;
    }
    set_status(vp, VIRTIO_ST_ACK);
    set_status(vp, VIRTIO_ST_ACK | VIRTIO_ST_DRIVER);
    return true;
}

uint64_t virtio_features(struct virtio_pci *vp)
{
    if (!vp->modern)
        return inl(vp->io + L_HOST_FEATURES);
    w32(vp->common, C_DFSELECT, 0);
    uint64_t lo = r32(vp->common, C_DF);
    w32(vp->common, C_DFSELECT, 1);
    return lo | (uint64_t)r32(vp->common, C_DF) << 32;
}

bool virtio_set_features(struct virtio_pci *vp, uint64_t f)
{
    if (!vp->modern) {
        outl(vp->io + L_GUEST_FEATURES, (uint32_t)f);
        return true;
    }
    w32(vp->common, C_GFSELECT, 0);
    w32(vp->common, C_GF, (uint32_t)f);
    w32(vp->common, C_GFSELECT, 1);
    w32(vp->common, C_GF, (uint32_t)(f >> 32));
    set_status(vp, VIRTIO_ST_ACK | VIRTIO_ST_DRIVER | VIRTIO_ST_FEATURES_OK);
    return get_status(vp) & VIRTIO_ST_FEATURES_OK;
}

void virtio_use_msix(struct virtio_pci *vp, uint8_t vector)
{
    vp->msix = vp->modern && pci_msix_setup(vp->pci, vector);
}

bool virtio_queue_init(struct virtio_pci *vp, struct virtq *q, uint16_t index, uint16_t want,
                       bool irq)
{
    uint16_t size;
    if (vp->modern) {
        w16(vp->common, C_Q_SELECT, index);
        size = r16(vp->common, C_Q_SIZE);
        while (size > want && size > 1)
            size /= 2;     /* the device's maximum is a power of two */
    } else {
        outw(vp->io + L_QUEUE_SEL, index);
        size = inw(vp->io + L_QUEUE_SIZE);
    }
    if (size == 0 || size > MAX_QUEUE_SIZE || (size & (size - 1))) {
        kprintf("net: virtio queue %u has size %u: not supported\n", index, size);
        return false;
    }
    /* Legacy fixes the layout: the used ring at the next 4 KiB boundary
     * after the available ring.  Modern takes three addresses; the same
     * layout with 4-byte alignment keeps one allocation. */
    uint64_t align = vp->modern ? 4 : 4096;
    uint64_t used_off = ALIGN_UP(16ULL * size + 2 * (3ULL + size), align);
    uint64_t bytes = ALIGN_UP(used_off + 2 * 3ULL + 8ULL * size, 4096);
    uint8_t *mem = net_alloc_pages((unsigned)(bytes / 4096));
    if (!mem)
        return false;
    *q = (struct virtq){
        .size = size, .index = index, .desc = (struct vring_desc *)mem,
        .avail = (volatile uint16_t *)(mem + 16ULL * size),
        .used = (volatile uint16_t *)(mem + used_off),
    };
    uint64_t pa = net_dma_addr(mem);
    if (!vp->modern) {
        outl(vp->io + L_QUEUE_PFN, (uint32_t)(pa >> 12));
        return true;
    }
    w16(vp->common, C_Q_SIZE, size);
    uint16_t entry = vp->msix && irq ? 0 : 0xFFFF;   /* 0xFFFF: none (INTx and the ISR) */
    w16(vp->common, C_Q_MSIX, entry);
    if (r16(vp->common, C_Q_MSIX) != entry) {
        kprintf("net: virtio queue %u refuses MSI-X entry 0: using INTx\n", index);
        pci_msix_disable(vp->pci);
        vp->msix = false;
    }
    w64(vp->common, C_Q_DESC, pa);
    w64(vp->common, C_Q_DRIVER, pa + 16ULL * size);
    w64(vp->common, C_Q_DEVICE, pa + used_off);
    q->notify = (volatile uint16_t *)(vp->notify + (uint64_t)r16(vp->common, C_Q_NOTIFY_OFF) *
                                                   vp->notify_mult);
    w16(vp->common, C_Q_ENABLE, 1);
    return true;
}

void virtio_driver_ok(struct virtio_pci *vp)
{
    uint8_t st = VIRTIO_ST_ACK | VIRTIO_ST_DRIVER | VIRTIO_ST_DRIVER_OK;
    set_status(vp, vp->modern ? st | VIRTIO_ST_FEATURES_OK : st);
}

void virtio_fail(struct virtio_pci *vp) { set_status(vp, VIRTIO_ST_FAILED); }

uint8_t virtio_isr(struct virtio_pci *vp) { return vp->modern ? r8(vp->isr, 0) : inb(vp->io + L_ISR); }

uint8_t virtio_cfg8(struct virtio_pci *vp, unsigned off)
{
    return vp->modern ? r8(vp->device, off) : inb((uint16_t)(vp->io + L_CONFIG + off));
}

uint16_t virtio_cfg16(struct virtio_pci *vp, unsigned off)
{
    return vp->modern ? r16(vp->device, off) : inw((uint16_t)(vp->io + L_CONFIG + off));
}

void virtq_post(struct virtq *q, uint16_t head)
{
    q->avail[2 + q->avail_idx % q->size] = head;
    dma_wmb();     /* the entry before the index that publishes it */
    q->avail_idx++;
    q->avail[1] = q->avail_idx;
}

void virtq_notify(struct virtio_pci *vp, struct virtq *q)
{
    __asm__ volatile("mfence" ::: "memory");   /* avail->idx visible before the flags are read */
    if (q->used[0] & VRING_USED_NO_NOTIFY)
        return;
    if (vp->modern)
        *q->notify = q->index;
    else
        outw(vp->io + L_QUEUE_NOTIFY, q->index);
}

struct vring_used_elem virtq_take_used(struct virtq *q)
{
    __asm__ volatile("" ::: "memory");         /* the element after the index */
    volatile struct vring_used_elem *e =
        (volatile struct vring_used_elem *)(q->used + 2) + q->last_used % q->size;
    struct vring_used_elem r = {e->id, e->len};
    q->last_used++;
    return r;
}
