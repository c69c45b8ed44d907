/* virtio-net (virtio.h for the transport).
 *
 * No offloads and no mergeable receive buffers are negotiated, so every
 * frame arrives whole in one 2 KiB buffer behind the virtio-net header (10
 * bytes, 12 with VIRTIO_F_VERSION_1), and the header sent before each frame
 * is all zero.  Only the MAC and link status features are taken. */
#include "errno.h"
#include "random.h"
#include "virtio.h"

#define VIRTIO_NET_TRANSITIONAL_ID 0x1000
#define VIRTIO_NET_MODERN_ID 0x1041
enum { F_MAC = 1u << 5, F_STATUS = 1u << 16 };
enum { CFG_MAC = 0, CFG_STATUS = 6 };
enum { RXQ = 0, TXQ = 1 };

#define RX_BUFFERS 64
#define TX_QUEUE_WANT 16           /* one frame in flight: header + NETDEV_MAX_SG */
#define TX_TIMEOUT_NS 1000000000ULL

struct vnet {
    struct netdev nd;
    struct virtio_pci vp;
    unsigned hdr_len;
    bool has_status;
    struct virtq rx, tx;
    uint8_t *rx_buf[RX_BUFFERS];
    unsigned nrx;
    uint8_t *tx_hdr;               /* the zero header, sent before each frame */
    bool tx_busy;                  /* a frame the device has not given back */
};

static struct vnet vnet;

static bool tx_done(struct netdev *nd) { return virtq_has_used(&((struct vnet *)nd)->tx); }

/* The device hands back the one frame in flight. */
static bool tx_reap(struct vnet *v)
{
    if (!virtq_has_used(&v->tx))
        return false;
    while (virtq_has_used(&v->tx))
        (void)virtq_take_used(&v->tx);
    v->tx_busy = false;
    return true;
}

static int vnet_send(struct netdev *nd, const struct net_sg *sg, int nsg, size_t total)
{
    struct vnet *v = (struct vnet *)nd;
    (void)total;
    if (v->tx_busy && !tx_reap(v))
        return -EIO;
    /* The chain always starts at descriptor 0: nothing else is in flight. */
    struct vring_desc *d = v->tx.desc;
    d[0] = (struct vring_desc){net_dma_addr(v->tx_hdr), v->hdr_len, VRING_DESC_NEXT, 1};
    for (int i = 0; i < nsg; i++)
        d[i + 1] = (struct vring_desc){net_dma_addr(sg[i].base), (uint32_t)sg[i].len,
                                       (uint16_t)(i + 1 < nsg ? VRING_DESC_NEXT : 0),
                                       (uint16_t)(i + 2)};
    dma_wmb();
    virtq_post(&v->tx, 0);
    v->tx_busy = true;
    virtq_notify(&v->vp, &v->tx);
    if (!net_spin_until(tx_done, nd, TX_TIMEOUT_NS)) {
        LOG_ONCE("net: virtio-net did not complete a transmit within 1 s\n");
        return -EIO;
    }
    tx_reap(v);
    return 0;
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
        if (e.len < v->hdr_len + ETH_HLEN || e.len > NET_RX_BUF_SIZE) {
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
    return virtio_isr(&((struct vnet *)nd)->vp) != 0;   /* reading lowers INTx */
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

struct netdev *virtio_net_probe(const struct pci_dev *d)
{
    if (d->vendor != VIRTIO_VENDOR ||
        (d->device != VIRTIO_NET_TRANSITIONAL_ID && d->device != VIRTIO_NET_MODERN_ID))
        return NULL;
    struct vnet *v = &vnet;
    if (!virtio_pci_init(&v->vp, d))
        return NULL;
    uint64_t offered = virtio_features(&v->vp);
    uint64_t want = offered & (F_MAC | F_STATUS);
    if (v->vp.modern) {
        if (!(offered & VIRTIO_F_VERSION_1)) {
            kprintf("net: virtio-net: modern transport without VERSION_1\n");
            return fail(v);
        }
        want |= VIRTIO_F_VERSION_1;
    }
    if (!virtio_set_features(&v->vp, want)) {
        kprintf("net: virtio-net refuses features 0x%lx\n", want);
        return fail(v);
    }
    v->has_status = want & F_STATUS;
    v->hdr_len = v->vp.modern ? 12 : 10;
    if (!virtio_queue_init(&v->vp, &v->rx, RXQ, RX_BUFFERS) ||
        !virtio_queue_init(&v->vp, &v->tx, TXQ, TX_QUEUE_WANT) ||
        v->tx.size < NETDEV_MAX_SG + 1 || !(v->tx_hdr = net_alloc_pages(1)))
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
    v->nd.mtu = NET_DEFAULT_MTU;
    v->nd.send = vnet_send;
    v->nd.poll = vnet_poll;
    v->nd.rx_pending = vnet_rx_pending;
    v->nd.link_up = vnet_link_up;
    v->nd.irq_enable = vnet_irq_enable;
    v->nd.irq_ack = vnet_irq_ack;
    return &v->nd;
}
