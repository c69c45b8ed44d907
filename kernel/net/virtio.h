/* Virtio over PCI for the drivers in this directory: split virtqueues and
 * the two PCI transports, legacy (0.9.5: I/O BAR registers) and modern
 * (1.0: registers found through PCI capabilities, in memory BARs). */
#ifndef TERN_NET_VIRTIO_H
#define TERN_NET_VIRTIO_H
#include "netdev_impl.h"

#define VIRTIO_VENDOR 0x1AF4
#define VIRTIO_F_VERSION_1 (1ULL << 32)
#define VIRTIO_RING_F_INDIRECT_DESC (1ULL << 28)
enum { VIRTIO_ST_ACK = 1, VIRTIO_ST_DRIVER = 2, VIRTIO_ST_DRIVER_OK = 4,
       VIRTIO_ST_FEATURES_OK = 8, VIRTIO_ST_FAILED = 128 };
enum { VRING_DESC_NEXT = 1, VRING_DESC_WRITE = 2, VRING_DESC_INDIRECT = 4 };
enum { VRING_AVAIL_NO_INTERRUPT = 1, VRING_USED_NO_NOTIFY = 1 };

struct vring_desc {
    uint64_t addr;
    uint32_t len;
    uint16_t flags, next;
};
struct vring_used_elem {
    uint32_t id, len;
};

struct virtq {
    uint16_t size, index;
    struct vring_desc *desc;
    volatile uint16_t *avail;      /* flags, idx, ring[size], used_event */
    volatile uint16_t *used;       /* flags, idx, then elements */
    uint16_t avail_idx, last_used;
    volatile uint16_t *notify;     /* modern: this queue's doorbell */
};

struct virtio_pci {
    bool modern;
    bool msix;                     /* modern only: queues that interrupt use entry 0 */
    const struct pci_dev *pci;
    uint16_t io;                   /* legacy: I/O BAR base */
    volatile uint8_t *common, *isr, *device, *notify;
    uint32_t notify_mult;
};

/* Finds the transport (modern preferred), resets the device and sets
 * ACKNOWLEDGE and DRIVER.  False if neither transport is usable. */
bool virtio_pci_init(struct virtio_pci *vp, const struct pci_dev *d);
uint64_t virtio_features(struct virtio_pci *vp);
/* Legacy takes the low 32 bits; modern also needs FEATURES_OK to stick. */
bool virtio_set_features(struct virtio_pci *vp, uint64_t features);
/* Modern transport only: the device's interrupts as MSI-X, entry 0 to
 * `vector`, for the queues virtio_queue_init is told interrupt; vp->msix
 * says whether it took (else INTx stays). */
void virtio_use_msix(struct virtio_pci *vp, uint8_t vector);
/* Sets up queue `index` with at most `want` entries (legacy: whatever the
 * device has) in freshly allocated kernel pages.  irq: the queue's
 * interrupts are wanted (with MSI-X, on entry 0; a device that refuses the
 * entry takes MSI-X off, and INTx is left to the caller). */
bool virtio_queue_init(struct virtio_pci *vp, struct virtq *q, uint16_t index, uint16_t want,
                       bool irq);
void virtio_driver_ok(struct virtio_pci *vp);
void virtio_fail(struct virtio_pci *vp);
uint8_t virtio_isr(struct virtio_pci *vp);       /* reading clears it */
uint8_t virtio_cfg8(struct virtio_pci *vp, unsigned off);
uint16_t virtio_cfg16(struct virtio_pci *vp, unsigned off);

void virtq_post(struct virtq *q, uint16_t head);
void virtq_notify(struct virtio_pci *vp, struct virtq *q);
static inline uint16_t virtq_used_idx(const struct virtq *q) { return q->used[1]; }
static inline bool virtq_has_used(const struct virtq *q) { return virtq_used_idx(q) != q->last_used; }
/* The next used element; call only when virtq_has_used. */
struct vring_used_elem virtq_take_used(struct virtq *q);
#endif
