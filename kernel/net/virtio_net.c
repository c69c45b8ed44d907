/* virtio-net (virtio.h for the transport).
 *
 * No offloads and no mergeable receive buffers are negotiated, so every
 * frame arrives whole in one receive buffer behind the virtio-net header
 * (10 bytes, 12 with VIRTIO_F_VERSION_1), and the header sent before each
 * frame is all zero.  Only the MAC, link status and MTU features are taken,
 * and indirect descriptors where offered.
 *
 * MTU: where the device offers VIRTIO_NET_F_MTU (QEMU's host_mtu=), its
 * `mtu` is the node's MTU, and every receive buffer holds a whole frame of
 * that size: frames are handed over in place, so a frame spread over
 * several (mergeable) buffers would need a copy to be contiguous.  Such
 * buffers (64 KiB frames: 16 of them, about 1 MiB; RX_BIG_BYTES) come from
 * the top of the application's memory, as the kernel heap does.  Without
 * the feature the MTU is 1500 and the 64 buffers are 2 KiB halves of kernel
 * pages (128 KiB).  A frame the buffers cannot hold is dropped by the device.
 *
 * Transmit: a ring of slots, each one frame in flight.  A slot holds the
 * (zero) virtio-net header and a copy of the frame's head (the headers the
 * caller built on its stack); the payload pieces are read from the caller's
 * memory.  With indirect descriptors a slot is one ring entry pointing at the
 * slot's own table of up to TX_CHAIN descriptors, so the ring holds as many
 * frames as it has entries; without, each slot owns TX_CHAIN consecutive
 * ring descriptors.  Completion is polled, on later sends (tx_reclaim). */
#include "errno.h"
#include "mem.h"
#include "random.h"
#include "msgtrace.h"
#include "virtio.h"

#define VIRTIO_NET_TRANSITIONAL_ID 0x1000
#define VIRTIO_NET_MODERN_ID 0x1041
enum { F_MTU = 1u << 3, F_MAC = 1u << 5, F_STATUS = 1u << 16 };
/* mac[6], status, max_virtqueue_pairs, mtu (virtio 1.1, 5.1.4) */
enum { CFG_MAC = 0, CFG_STATUS = 6, CFG_MTU = 10 };
enum { RXQ = 0, TXQ = 1 };

#define RX_BUFFERS 64
#define RX_BIG_BYTES (1u << 20)    /* receive buffers for an MTU above 1500: about this much */
#define RX_BIG_MIN 16              /* ... but at least this many buffers */
#define MTU_MIN 68                 /* the least a device may state (IPv4's minimum) */
#define TX_QUEUE_WANT 256
#define TX_SLOTS_MAX 128           /* frames in flight: two peers' full windows */
#define TX_CHAIN (1 + NETDEV_MAX_SG)   /* virtio-net header + the frame's pieces */
#define TX_SLOT_BYTES 512

struct tx_slot {
    struct vring_desc table[TX_CHAIN];     /* the indirect table */
    uint8_t vhdr[16];                      /* virtio-net header: stays zero */
    uint8_t head[NETDEV_COPY_MAX];         /* copy of the frame's head */
};
_Static_assert(sizeof(struct tx_slot) <= TX_SLOT_BYTES, "slots are packed 8 to a page");

struct vnet {
    struct netdev nd;
    struct virtio_pci vp;
    unsigned hdr_len;
    bool has_status;
    struct virtq rx, tx;
    uint8_t *rx_buf[RX_BUFFERS];
    unsigned nrx, rx_len;          /* buffers; bytes each (virtio-net header included) */
    uint64_t rx_big_pa;            /* buffers for a large MTU; 0: 2 KiB kernel page halves */
    bool indirect;
    unsigned nslots, nfree;
    struct tx_slot *slot[TX_SLOTS_MAX];
    uint16_t free_slot[TX_SLOTS_MAX];      /* a stack of free slot numbers */
    bool owned[TX_SLOTS_MAX];              /* slot given to the device */
};

static struct vnet vnet;

static unsigned vnet_tx_reclaim(struct netdev *nd)
{
    struct vnet *v = (struct vnet *)nd;
    while (virtq_has_used(&v->tx)) {
        struct vring_used_elem e = virtq_take_used(&v->tx);
        unsigned s = v->indirect ? e.id : e.id / TX_CHAIN;
        if (s >= v->nslots || (!v->indirect && e.id % TX_CHAIN) || !v->owned[s]) {
            LOG_ONCE("net: virtio-net completed transmit descriptor %u, not in flight\n", e.id);
            continue;      /* a second free would corrupt the stack */
        }
        v->owned[s] = false;
        v->free_slot[v->nfree++] = (uint16_t)s;
    }
    return v->nslots - v->nfree;
}

/* virtq_notify skips it while the device says it is still working through
 * the ring (VRING_USED_F_NO_NOTIFY).  That spared few exits (8 % of a ring's
 * frames): the device is done before the next frame comes.  So a burst's
 * later frames come without it (netdev_tx_batch). */
static void vnet_tx_kick(struct netdev *nd)
{
    struct vnet *v = (struct vnet *)nd;
    PTL_TRACE(TP_TX_NOTIFY);
    virtq_notify(&v->vp, &v->tx);
}

static int vnet_xmit(struct netdev *nd, const void *copy, size_t copy_len,
                     const struct net_sg *sg, int nsg)
{
    struct vnet *v = (struct vnet *)nd;
    if (v->nfree == 0)
        return -EBUSY;
    unsigned s = v->free_slot[--v->nfree];
    struct tx_slot *ts = v->slot[s];
    /* Descriptor numbers in the chain: the slot's own table, or its share
     * of the ring. */
    uint16_t base = v->indirect ? 0 : (uint16_t)(s * TX_CHAIN);
    struct vring_desc *d = v->indirect ? ts->table : &v->tx.desc[base];
    int n = 0;
    d[n++] = (struct vring_desc){net_dma_addr(ts->vhdr), v->hdr_len, 0, 0};
    if (copy_len) {
        memcpy(ts->head, copy, copy_len);
        d[n++] = (struct vring_desc){net_dma_addr(ts->head), (uint32_t)copy_len, 0, 0};
    }
    for (int i = 0; i < nsg; i++)
        d[n++] = (struct vring_desc){net_dma_addr(sg[i].base), (uint32_t)sg[i].len, 0, 0};
    for (int i = 0; i + 1 < n; i++) {
        d[i].flags = VRING_DESC_NEXT;
        d[i].next = (uint16_t)(base + i + 1);
    }
    uint16_t head = base;
    if (v->indirect) {
        v->tx.desc[s] = (struct vring_desc){net_dma_addr(ts->table),
                                            (uint32_t)(n * sizeof(struct vring_desc)),
                                            VRING_DESC_INDIRECT, 0};
        head = (uint16_t)s;
    }
    v->owned[s] = true;
    dma_wmb();
    virtq_post(&v->tx, head);
    return 0;
}

static bool tx_init(struct vnet *v)
{
    v->nslots = v->indirect ? v->tx.size : v->tx.size / TX_CHAIN;
    if (v->nslots > TX_SLOTS_MAX)
        v->nslots = TX_SLOTS_MAX;
    if (v->nslots == 0)
        return false;
    const unsigned per_page = 4096 / TX_SLOT_BYTES;
    for (unsigned i = 0; i < v->nslots; i++) {
        if (i % per_page == 0 && !(v->slot[i] = net_alloc_pages(1)))
            return false;
        if (i % per_page)
            v->slot[i] = (struct tx_slot *)((uint8_t *)v->slot[i - 1] + TX_SLOT_BYTES);
    }
    /* Lowest numbers on top: the first frames use the first slots. */
    for (unsigned i = 0; i < v->nslots; i++)
        v->free_slot[i] = (uint16_t)(v->nslots - 1 - i);
    v->nfree = v->nslots;
    return true;
}

static bool vnet_rx_pending(struct netdev *nd) { return virtq_has_used(&((struct vnet *)nd)->rx); }

static int vnet_poll(struct netdev *nd, netdev_rx_fn rx, void *arg)
{
    struct vnet *v = (struct vnet *)nd;
    int n = 0, posted = 0;
    while (virtq_has_used(&v->rx) && posted < (int)v->nrx) {
        struct vring_used_elem e = virtq_take_used(&v->rx);
        posted++;
        if (e.id >= v->nrx) {
            LOG_ONCE("net: virtio-net returned receive descriptor %u of %u\n", e.id, v->nrx);
            nd->stats.rx_dropped++;
            continue;      /* not ours to recycle */
        }
        if (e.len < v->hdr_len + ETH_HLEN || e.len > v->rx_len) {
            nd->stats.rx_dropped++;
        } else {
            nd->stats.rx_frames++;
            n++;
            rx(v->rx_buf[e.id] + v->hdr_len, e.len - v->hdr_len, arg);
        }
        virtq_post(&v->rx, (uint16_t)e.id);
    }
    if (posted)
        virtq_notify(&v->vp, &v->rx);
    return n;
}

static bool vnet_link_up(struct netdev *nd)
{
    struct vnet *v = (struct vnet *)nd;
    return !v->has_status || (virtio_cfg16(&v->vp, CFG_STATUS) & 1);
}

static void vnet_irq_enable(struct netdev *nd, bool on)
{
    struct vnet *v = (struct vnet *)nd;
    v->rx.avail[0] = on ? 0 : VRING_AVAIL_NO_INTERRUPT;
    /* The flag must be visible before netdev_wait looks at the ring. */
    __asm__ volatile("mfence" ::: "memory");
}

static bool vnet_irq_ack(struct netdev *nd)
{
    struct vnet *v = (struct vnet *)nd;
    if (v->vp.msix)
        return true;               /* an MSI-X message is this device's alone */
    return virtio_isr(&v->vp) != 0;   /* reading lowers INTx */
}

/* Buffers for frames of `mtu` bytes: the 2 KiB halves of kernel pages up to
 * 1500, or a run taken from the top of the application's memory.  False
 * if that memory cannot be spared (the caller then stays at 1500). */
static bool rx_plan(struct vnet *v, unsigned mtu)
{
    v->nrx = RX_BUFFERS;
    if (mtu <= NET_DEFAULT_MTU) {
        v->rx_len = NET_RX_BUF_SIZE;
        v->rx_big_pa = 0;
        return true;
    }
    /* 64-byte steps keep each buffer on its own cache lines. */
    unsigned len = (v->hdr_len + ETH_HLEN + mtu + 63) & ~63u;
    unsigned n = RX_BIG_BYTES / len;
    if (n < RX_BIG_MIN)
        n = RX_BIG_MIN;
    if (n < v->nrx)
        v->nrx = n;
    uint64_t bytes = (uint64_t)v->nrx * len;
    uint64_t pa = physmem_take_top(bytes);
    if (!pa)
        return false;
    v->nd.app_kib = (unsigned)(ALIGN_UP(bytes, PAGE_SIZE) >> 10);
    v->rx_len = len;
    v->rx_big_pa = pa;
    return true;
}

static bool rx_init(struct vnet *v)
{
    if (v->nrx > v->rx.size)
        v->nrx = v->rx.size;    /* a legacy device's queue may be shorter */
    if (v->rx_big_pa) {
        for (unsigned i = 0; i < v->nrx; i++)
            v->rx_buf[i] = (uint8_t *)phys_to_virt(v->rx_big_pa + (uint64_t)i * v->rx_len);
    }
    for (unsigned i = 0; !v->rx_big_pa && i < v->nrx; i += 2) {
        uint8_t *page = net_alloc_pages(1);
        if (!page)
            return false;
        v->rx_buf[i] = page;
        if (i + 1 < v->nrx)
            v->rx_buf[i + 1] = page + NET_RX_BUF_SIZE;
    }
    for (unsigned i = 0; i < v->nrx; i++) {
        v->rx.desc[i] = (struct vring_desc){net_dma_addr(v->rx_buf[i]), v->rx_len,
                                            VRING_DESC_WRITE, 0};
        virtq_post(&v->rx, (uint16_t)i);
    }
    return true;
}

static struct netdev *fail(struct vnet *v)
{
    virtio_fail(&v->vp);
    return NULL;
}

struct netdev *virtio_net_probe(const struct pci_dev *d, uint8_t vector)
{
    if (d->vendor != VIRTIO_VENDOR ||
        (d->device != VIRTIO_NET_TRANSITIONAL_ID && d->device != VIRTIO_NET_MODERN_ID))
        return NULL;
    struct vnet *v = &vnet;
    if (!virtio_pci_init(&v->vp, d))
        return NULL;
    uint64_t offered = virtio_features(&v->vp);
    uint64_t want = offered & (F_MAC | F_STATUS | F_MTU | VIRTIO_RING_F_INDIRECT_DESC);
    if (v->vp.modern) {
        if (!(offered & VIRTIO_F_VERSION_1)) {
            kprintf("net: virtio-net: modern transport without VERSION_1\n");
            return fail(v);
        }
        want |= VIRTIO_F_VERSION_1;
    }
    /* The device's MTU decides the receive buffers before the feature is
     * taken: a driver taking it must be able to receive such frames. */
    unsigned mtu = NET_DEFAULT_MTU;
    v->hdr_len = v->vp.modern ? 12 : 10;
    if (want & F_MTU) {
        unsigned dev_mtu = virtio_cfg16(&v->vp, CFG_MTU);
        if (dev_mtu < MTU_MIN) {
            kprintf("net: virtio-net states MTU %u: using %u\n", dev_mtu, NET_DEFAULT_MTU);
            want &= ~(uint64_t)F_MTU;
        } else if (!rx_plan(v, dev_mtu)) {
            kprintf("net: virtio-net MTU %u: no memory for its receive buffers, using %u\n",
                    dev_mtu, NET_DEFAULT_MTU);
            want &= ~(uint64_t)F_MTU;
        } else {
            mtu = dev_mtu;
        }
    }
    if (!(want & F_MTU))
        rx_plan(v, NET_DEFAULT_MTU);
    v->has_status = want & F_STATUS;
    v->indirect = want & VIRTIO_RING_F_INDIRECT_DESC;
    if (!virtio_set_features(&v->vp, want)) {
        kprintf("net: virtio-net refuses features 0x%lx\n", want);
        return fail(v);
    }
    virtio_use_msix(&v->vp, vector);
    if (!virtio_queue_init(&v->vp, &v->rx, RXQ, RX_BUFFERS, true) ||
        !virtio_queue_init(&v->vp, &v->tx, TXQ, TX_QUEUE_WANT, false) || !tx_init(v))
        return fail(v);
    v->tx.avail[0] = VRING_AVAIL_NO_INTERRUPT;   /* transmit completion is polled */
    v->rx.avail[0] = VRING_AVAIL_NO_INTERRUPT;
    for (int i = 0; i < ETH_ALEN; i++)
        v->nd.mac[i] = virtio_cfg8(&v->vp, CFG_MAC + (unsigned)i);
    if (!(want & F_MAC)) {
        kprintf("net: virtio-net offers no MAC address: using a random one\n");
        random_bytes(v->nd.mac, ETH_ALEN);
        v->nd.mac[0] = (uint8_t)((v->nd.mac[0] & 0xFE) | 0x02);   /* local, unicast */
    }
    if (!rx_init(v))
        return fail(v);
    virtio_driver_ok(&v->vp);
    virtq_notify(&v->vp, &v->rx);
    v->nd.model = v->vp.modern ? "virtio-net" : "virtio-net (legacy)";
    v->nd.mtu = mtu;
    v->nd.mtu_from = (want & F_MTU) ? "from the device" : NULL;
    v->nd.xmit = vnet_xmit;
    v->nd.tx_kick = vnet_tx_kick;
    v->nd.tx_reclaim = vnet_tx_reclaim;
    v->nd.poll = vnet_poll;
    v->nd.rx_pending = vnet_rx_pending;
    v->nd.link_up = vnet_link_up;
    v->nd.irq_enable = vnet_irq_enable;
    v->nd.irq_ack = vnet_irq_ack;
    v->nd.irq_mode = v->vp.msix ? PCI_IRQ_MSIX : PCI_IRQ_NONE;
    return &v->nd;
}
