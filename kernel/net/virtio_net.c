/* virtio-net over PCI, legacy (virtio 0.9.5) interface: registers in I/O
 * BAR 0, rings at page-aligned physical addresses.  QEMU's virtio-net-pci is
 * transitional and offers it by default.
 *
 * No offloads and no mergeable receive buffers are negotiated, so every
 * frame arrives whole in one 2 KiB buffer behind a 10-byte header, and the
 * header sent with each frame is all zero.  Only the MAC and link status
 * features are taken. */
#include "errno.h"
#include "netdev_impl.h"
#include "random.h"
#include "x86.h"

#define VIRTIO_VENDOR 0x1AF4
#define VIRTIO_NET_LEGACY_ID 0x1000

enum { REG_HOST_FEATURES = 0x00, REG_GUEST_FEATURES = 0x04, REG_QUEUE_PFN = 0x08,
       REG_QUEUE_SIZE = 0x0C, REG_QUEUE_SEL = 0x0E, REG_QUEUE_NOTIFY = 0x10,
       REG_STATUS = 0x12, REG_ISR = 0x13, REG_CONFIG = 0x14 /* MSI-X off */ };
enum { ST_ACK = 1, ST_DRIVER = 2, ST_DRIVER_OK = 4, ST_FAILED = 128 };
enum { F_MAC = 1u << 5, F_STATUS = 1u << 16 };
enum { CFG_MAC = 0, CFG_STATUS = 6 };
enum { DESC_NEXT = 1, DESC_WRITE = 2 };
enum { AVAIL_NO_INTERRUPT = 1, USED_NO_NOTIFY = 1 };
enum { RXQ = 0, TXQ = 1 };

#define NET_HDR_LEN 10             /* struct virtio_net_hdr without num_buffers */
#define RX_BUFFERS 64
#define MAX_QUEUE_SIZE 1024
#define TX_TIMEOUT_NS 1000000000ULL

struct vring_desc {
    uint64_t addr;
    uint32_t len;
    uint16_t flags, next;
};
struct vring_used_elem {
    uint32_t id, len;
};

struct vq {
    uint16_t size, index;
    struct vring_desc *desc;
    volatile uint16_t *avail;      /* flags, idx, ring[size], used_event */
    volatile uint16_t *used;       /* flags, idx, then elements */
    uint16_t avail_idx, last_used;
};

struct vnet {
    struct netdev nd;
    uint16_t io;
    bool has_status;
    struct vq rx, tx;
    uint8_t *rx_buf[RX_BUFFERS];
    unsigned nrx;
    uint8_t *tx_hdr;               /* the zero header, sent before each frame */
    bool tx_busy;                  /* a frame the device has not given back */
};

static struct vnet vnet;

static volatile struct vring_used_elem *used_elem(struct vq *q, uint16_t i)
{
    return (volatile struct vring_used_elem *)(q->used + 2) + (i % q->size);
}

static uint16_t used_idx(struct vq *q) { return q->used[1]; }

static bool queue_init(struct vnet *v, struct vq *q, uint16_t index)
{
    outw(v->io + REG_QUEUE_SEL, index);
    uint16_t size = inw(v->io + REG_QUEUE_SIZE);
    if (size == 0 || size > MAX_QUEUE_SIZE || (size & (size - 1))) {
        kprintf("net: virtio-net queue %u has size %u: not supported\n", index, size);
        return false;
    }
    /* Legacy layout: descriptors, then the available ring, then the used
     * ring at the next 4 KiB boundary. */
    uint64_t avail_end = 16ULL * size + 2 * (3ULL + size);
    uint64_t used_off = ALIGN_UP(avail_end, 4096);
    uint64_t bytes = used_off + ALIGN_UP(2 * 3ULL + 8ULL * size, 4096);
    uint8_t *mem = net_alloc_pages((unsigned)(bytes / 4096));
    if (!mem)
        return false;
    q->size = size;
    q->index = index;
    q->desc = (struct vring_desc *)mem;
    q->avail = (volatile uint16_t *)(mem + 16ULL * size);
    q->used = (volatile uint16_t *)(mem + used_off);
    outl(v->io + REG_QUEUE_PFN, (uint32_t)(net_dma_addr(mem) >> 12));
    return true;
}

static void queue_notify(struct vnet *v, struct vq *q)
{
    doorbell_wmb();
    if (!(q->used[0] & USED_NO_NOTIFY))
        outw(v->io + REG_QUEUE_NOTIFY, q->index);
}

static void queue_post(struct vq *q, uint16_t head)
{
    q->avail[2 + q->avail_idx % q->size] = head;
    dma_wmb();     /* the entry before the index that publishes it */
    q->avail_idx++;
    q->avail[1] = q->avail_idx;
}

static bool tx_done(struct netdev *nd)
{
    struct vnet *v = (struct vnet *)nd;
    return used_idx(&v->tx) != v->tx.last_used;
}

/* The device hands back the one frame in flight; its chain always starts at
 * descriptor 0. */
static bool tx_reap(struct vnet *v)
{
    if (!tx_done(&v->nd))
        return false;
    __asm__ volatile("" ::: "memory");
    v->tx.last_used = used_idx(&v->tx);
    v->tx_busy = false;
    return true;
}

static int vnet_send(struct netdev *nd, const struct net_sg *sg, int nsg, size_t total)
{
    struct vnet *v = (struct vnet *)nd;
    (void)total;
    if (v->tx_busy && !tx_reap(v))
        return -EIO;
    struct vring_desc *d = v->tx.desc;
    d[0] = (struct vring_desc){net_dma_addr(v->tx_hdr), NET_HDR_LEN, DESC_NEXT, 1};
    for (int i = 0; i < nsg; i++)
        d[i + 1] = (struct vring_desc){net_dma_addr(sg[i].base), (uint32_t)sg[i].len,
                                       (uint16_t)(i + 1 < nsg ? DESC_NEXT : 0), (uint16_t)(i + 2)};
    dma_wmb();
    queue_post(&v->tx, 0);
    v->tx_busy = true;
    queue_notify(v, &v->tx);
    if (!net_spin_until(tx_done, nd, TX_TIMEOUT_NS)) {
        LOG_ONCE("net: virtio-net did not complete a transmit within 1 s\n");
        return -EIO;
    }
    tx_reap(v);
    return 0;
}

static bool vnet_rx_pending(struct netdev *nd)
{
    struct vnet *v = (struct vnet *)nd;
    return used_idx(&v->rx) != v->rx.last_used;
}

static int vnet_poll(struct netdev *nd, netdev_rx_fn rx, void *arg)
{
    struct vnet *v = (struct vnet *)nd;
    int n = 0, posted = 0;
    while (vnet_rx_pending(nd) && posted < (int)v->nrx) {
        __asm__ volatile("" ::: "memory");     /* the element after the index */
        volatile struct vring_used_elem *e = used_elem(&v->rx, v->rx.last_used);
        uint32_t id = e->id, len = e->len;
        v->rx.last_used++;
        posted++;
        if (id >= v->nrx) {
            LOG_ONCE("net: virtio-net returned receive descriptor %u of %u\n", id, v->nrx);
            nd->stats.rx_dropped++;
            continue;      /* not ours to recycle */
        }
        if (len < NET_HDR_LEN + ETH_HLEN || len > NET_RX_BUF_SIZE) {
            nd->stats.rx_dropped++;
        } else {
            nd->stats.rx_frames++;
            n++;
            rx(v->rx_buf[id] + NET_HDR_LEN, len - NET_HDR_LEN, arg);
        }
        queue_post(&v->rx, (uint16_t)id);
    }
    if (posted)
        queue_notify(v, &v->rx);
    return n;
}

static bool vnet_link_up(struct netdev *nd)
{
    struct vnet *v = (struct vnet *)nd;
    return !v->has_status || (inw(v->io + REG_CONFIG + CFG_STATUS) & 1);
}

static void vnet_irq_enable(struct netdev *nd, bool on)
{
    struct vnet *v = (struct vnet *)nd;
    v->rx.avail[0] = on ? 0 : AVAIL_NO_INTERRUPT;
    /* The device may have used buffers before it saw the flag clear. */
    __asm__ volatile("mfence" ::: "memory");
}

static bool vnet_irq_ack(struct netdev *nd)
{
    struct vnet *v = (struct vnet *)nd;
    return inb(v->io + REG_ISR) != 0;   /* reading clears it and lowers INTx */
}

static bool rx_init(struct vnet *v)
{
    v->nrx = v->rx.size < RX_BUFFERS ? v->rx.size : RX_BUFFERS;
    for (unsigned i = 0; i < v->nrx; i += 2) {
        uint8_t *page = net_alloc_pages(1);
        if (!page)
            return false;
        v->rx_buf[i] = page;
        if (i + 1 < v->nrx)
            v->rx_buf[i + 1] = page + NET_RX_BUF_SIZE;
    }
    for (unsigned i = 0; i < v->nrx; i++) {
        v->rx.desc[i] = (struct vring_desc){net_dma_addr(v->rx_buf[i]), NET_RX_BUF_SIZE,
                                            DESC_WRITE, 0};
        queue_post(&v->rx, (uint16_t)i);
    }
    return true;
}

struct netdev *virtio_net_probe(const struct pci_dev *d)
{
    if (d->vendor != VIRTIO_VENDOR || d->device != VIRTIO_NET_LEGACY_ID)
        return NULL;
    if (!d->bar[0].io || !d->bar[0].addr) {
        kprintf("net: virtio-net without a legacy I/O BAR: not supported\n");
        return NULL;
    }
    struct vnet *v = &vnet;
    v->io = (uint16_t)d->bar[0].addr;
    pci_enable(d, true, false);
    outb(v->io + REG_STATUS, 0);                       /* reset */
    outb(v->io + REG_STATUS, ST_ACK | ST_DRIVER);
    uint32_t offered = inl(v->io + REG_HOST_FEATURES);
    uint32_t want = offered & (F_MAC | F_STATUS);
    outl(v->io + REG_GUEST_FEATURES, want);
    v->has_status = want & F_STATUS;
    if (!queue_init(v, &v->rx, RXQ) || !queue_init(v, &v->tx, TXQ) ||
        !(v->tx_hdr = net_alloc_pages(1))) {
        outb(v->io + REG_STATUS, ST_FAILED);
        return NULL;
    }
    v->tx.avail[0] = AVAIL_NO_INTERRUPT;   /* transmit completion is polled */
    v->rx.avail[0] = AVAIL_NO_INTERRUPT;
    for (int i = 0; i < ETH_ALEN; i++)
        v->nd.mac[i] = inb(v->io + REG_CONFIG + CFG_MAC + i);
    if (!(want & F_MAC)) {
        /* No address from the device: a random locally administered one. */
        kprintf("net: virtio-net offers no MAC address: using a random one\n");
        random_bytes(v->nd.mac, ETH_ALEN);
        v->nd.mac[0] = (uint8_t)((v->nd.mac[0] & 0xFE) | 0x02);
    }
    outb(v->io + REG_STATUS, ST_ACK | ST_DRIVER | ST_DRIVER_OK);
    if (!rx_init(v)) {
        outb(v->io + REG_STATUS, ST_FAILED);
        return NULL;
    }
    queue_notify(v, &v->rx);
    v->nd.model = "virtio-net (legacy)";
    v->nd.mtu = NET_DEFAULT_MTU;
    v->nd.send = vnet_send;
    v->nd.poll = vnet_poll;
    v->nd.rx_pending = vnet_rx_pending;
    v->nd.link_up = vnet_link_up;
    v->nd.irq_enable = vnet_irq_enable;
    v->nd.irq_ack = vnet_irq_ack;
    return &v->nd;
}
