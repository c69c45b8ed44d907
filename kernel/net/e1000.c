/* Intel 8254x / 82574 gigabit Ethernet (QEMU's e1000 and e1000e among them)
 * with the legacy descriptor formats every member of the family keeps.
 *
 * Receive: a ring of 2 KiB buffers, long packets off, so a frame longer
 * than 1522 bytes is dropped by the NIC; a frame that still spans several
 * buffers is dropped whole here.  Jumbo frames: the device cannot state the
 * fabric's MTU (virtio-net can), so the kernel command line does (mtu=,
 * which qemu/cluster passes); then long packets are on, each buffer is
 * 16 KiB (taken from the top of the application's memory, as virtio-net's
 * big buffers are) and the MTU is capped at the model's jumbo limit.  Transmit: one descriptor per piece of the
 * caller's frame, the NIC reading the caller's memory directly, except the
 * head netdev_send_async copies: that goes to a buffer of the frame's slot.
 * Many frames are in flight; the NIC works through the ring in order and
 * reports each frame's last descriptor done (RS -> DD), which is how slots
 * and descriptors come back (tx_reclaim, polled on later sends). */
#include "errno.h"
#include "mem.h"
#include "netdev_impl.h"
#include "time.h"

enum { CTRL = 0x0000, STATUS = 0x0008, EERD = 0x0014, ICR = 0x00C0, IMS = 0x00D0,
       IMC = 0x00D8, RCTL = 0x0100, TCTL = 0x0400, TIPG = 0x0410, RDBAL = 0x2800,
       RDBAH = 0x2804, RDLEN = 0x2808, RDH = 0x2810, RDT = 0x2818, RDTR = 0x2820,
       TDBAL = 0x3800, TDBAH = 0x3804, TDLEN = 0x3808, TDH = 0x3810, TDT = 0x3818,
       MTA = 0x5200, RAL0 = 0x5400, RAH0 = 0x5404 };
enum { CTRL_ASDE = 1u << 5, CTRL_SLU = 1u << 6, CTRL_RST = 1u << 26, CTRL_LRST = 1u << 3,
       CTRL_ILOS = 1u << 7, CTRL_VME = 1u << 30, CTRL_PHY_RST = 1u << 31 };
enum { STATUS_LU = 1u << 1 };
enum { RCTL_EN = 1u << 1, RCTL_LPE = 1u << 5, RCTL_BAM = 1u << 15, RCTL_SECRC = 1u << 26,
       RCTL_BSIZE_16K = 1u << 16 | 1u << 25 /* BSIZE 01 with BSEX */ };
#define RX_JUMBO_BUF 16384
enum { TCTL_EN = 1u << 1, TCTL_PSP = 1u << 3, TCTL_CT = 0x0Fu << 4, TCTL_COLD = 0x40u << 12 };
enum { ICR_LSC = 1u << 2, ICR_RXSEQ = 1u << 3, ICR_RXDMT0 = 1u << 4, ICR_RXO = 1u << 6,
       ICR_RXT0 = 1u << 7 };
enum { RAH_AV = 1u << 31 };
enum { RX_DD = 1, RX_EOP = 2 };
enum { TX_EOP = 1, TX_IFCS = 2, TX_RS = 8 };
enum { TX_DD = 1 };

#define NRX 64                     /* 64 x 16 bytes: one page; 64 x 2 KiB buffers */
#define NTX 256                    /* 256 x 16 bytes: one page (a multiple of 8) */
#define TX_FRAMES 64               /* frames in flight, each with a head buffer */

struct rx_desc {
    uint64_t addr;
    uint16_t length, csum;
    uint8_t status, errors;
    uint16_t special;
};
struct tx_desc {
    uint64_t addr;
    uint16_t length;
    uint8_t cso, cmd, status, css;
    uint16_t special;
};

/* Models, by PCI device ID, that share the registers used here.  Older
 * 82542/82543 chips lay out receive registers differently; newer igb/ixgbe
 * parts need their own queue enables. */
/* jumbo: the largest MTU the part takes (frames of 16128 bytes for the
 * 8254x, 9018 for the 82574L, less header and FCS). */
#define JUMBO_8254X 16110
static const struct { uint16_t id; const char *name; bool eerd_v2; unsigned jumbo; } models[] = {
    {0x100E, "Intel 82540EM", false, JUMBO_8254X}, {0x1015, "Intel 82540EM", false, JUMBO_8254X},
    {0x1016, "Intel 82540EP", false, JUMBO_8254X}, {0x1017, "Intel 82540EP", false, JUMBO_8254X},
    {0x101E, "Intel 82540EP", false, JUMBO_8254X}, {0x100C, "Intel 82544GC", false, JUMBO_8254X},
    {0x100F, "Intel 82545EM", false, JUMBO_8254X}, {0x1026, "Intel 82545GM", false, JUMBO_8254X},
    {0x1079, "Intel 82546GB", false, JUMBO_8254X}, {0x1076, "Intel 82541GI", false, JUMBO_8254X},
    {0x107C, "Intel 82541PI", false, JUMBO_8254X}, {0x1075, "Intel 82547GI", false, JUMBO_8254X},
    {0x10D3, "Intel 82574L", true, 9000},
};

struct e1000 {
    struct netdev nd;
    volatile uint32_t *regs;
    struct rx_desc *rx;
    struct tx_desc *tx;
    uint8_t *rx_buf[NRX];
    unsigned rx_len;               /* bytes each receive buffer holds */
    uint64_t rx_big_pa;            /* jumbo buffers' run, or 0: 2 KiB halves of pages */
    unsigned rx_next;
    bool rx_in_long;               /* inside a frame that spans buffers */
    unsigned tx_tail, tx_clean;    /* next descriptor to fill; oldest not reclaimed */
    unsigned tx_first, tx_frames;  /* oldest frame in flight; how many */
    uint16_t tx_last[TX_FRAMES];   /* each frame's last descriptor */
    uint8_t *tx_head[TX_FRAMES];   /* each frame's copy of its head */
};

static struct e1000 e1k;

static uint32_t rd(struct e1000 *e, unsigned reg) { return e->regs[reg / 4]; }
static void wr(struct e1000 *e, unsigned reg, uint32_t v) { e->regs[reg / 4] = v; }

static unsigned e1000_tx_reclaim(struct netdev *nd)
{
    struct e1000 *e = (struct e1000 *)nd;
    while (e->tx_frames) {
        unsigned last = e->tx_last[e->tx_first];
        if (!(((volatile struct tx_desc *)&e->tx[last])->status & TX_DD))
            break;
        e->tx_clean = (last + 1) % NTX;
        e->tx_first = (e->tx_first + 1) % TX_FRAMES;
        e->tx_frames--;
    }
    return e->tx_frames;
}

static void e1000_tx_kick(struct netdev *nd)
{
    struct e1000 *e = (struct e1000 *)nd;
    doorbell_wmb();
    wr(e, TDT, e->tx_tail);
}

static int e1000_xmit(struct netdev *nd, const void *copy, size_t copy_len,
                      const struct net_sg *sg, int nsg)
{
    struct e1000 *e = (struct e1000 *)nd;
    unsigned need = (unsigned)nsg + (copy_len != 0);
    unsigned used = (e->tx_tail + NTX - e->tx_clean) % NTX;
    /* One descriptor stays empty: TDT == TDH means an empty ring. */
    if (e->tx_frames == TX_FRAMES || used + need > NTX - 1)
        return -EBUSY;
    unsigned f = (e->tx_first + e->tx_frames) % TX_FRAMES;
    unsigned t = e->tx_tail;
    for (unsigned i = 0; i < need; i++) {
        bool last = i == need - 1;
        const void *base;
        size_t len;
        if (copy_len && i == 0) {
            memcpy(e->tx_head[f], copy, copy_len);
            base = e->tx_head[f], len = copy_len;
        } else {
            const struct net_sg *p = &sg[i - (copy_len != 0)];
            base = p->base, len = p->len;
        }
        e->tx[t] = (struct tx_desc){
            .addr = net_dma_addr(base), .length = (uint16_t)len,
            .cmd = (uint8_t)(TX_IFCS | (last ? TX_EOP | TX_RS : 0)),
        };
        if (last)
            e->tx_last[f] = (uint16_t)t;
        t = (t + 1) % NTX;
    }
    e->tx_tail = t;
    e->tx_frames++;
    return 0;
}

static bool e1000_rx_pending(struct netdev *nd)
{
    struct e1000 *e = (struct e1000 *)nd;
    return ((volatile struct rx_desc *)&e->rx[e->rx_next])->status & RX_DD;
}

static int e1000_poll(struct netdev *nd, netdev_rx_fn rx, void *arg)
{
    struct e1000 *e = (struct e1000 *)nd;
    int n = 0, seen = 0;
    unsigned last = 0;
    while (seen < NRX && e1000_rx_pending(nd)) {
        __asm__ volatile("" ::: "memory");   /* the descriptor after its DD bit */
        unsigned i = e->rx_next;
        volatile struct rx_desc *d = &e->rx[i];
        uint8_t status = d->status, errors = d->errors;
        uint16_t len = d->length;
        if (!(status & RX_EOP)) {
            e->rx_in_long = true;      /* the rest of it follows: drop it all */
        } else if (e->rx_in_long) {
            e->rx_in_long = false;
            nd->stats.rx_dropped++;
        } else if (errors || len < ETH_HLEN || len > e->rx_len) {
            if (errors)
                LOG_ONCE("net: e1000 receive error 0x%x (frame dropped)\n", errors);
            nd->stats.rx_dropped++;
        } else {
            nd->stats.rx_frames++;
            n++;
            rx(e->rx_buf[i], len, arg);
        }
        d->status = 0;
        last = i;
        e->rx_next = (i + 1) % NRX;
        seen++;
    }
    /* The descriptor just emptied becomes the one the NIC must not fill:
     * RDT == RDH would mean an empty ring to it. */
    if (seen) {
        doorbell_wmb();
        wr(e, RDT, last);
    }
    return n;
}

static bool e1000_link_up(struct netdev *nd)
{
    return rd((struct e1000 *)nd, STATUS) & STATUS_LU;
}

static void e1000_irq_enable(struct netdev *nd, bool on)
{
    struct e1000 *e = (struct e1000 *)nd;
    if (on) {
        /* Causes left from frames already polled would only wake the CPU
         * for nothing; netdev_wait looks at the ring after this. */
        (void)rd(e, ICR);
        wr(e, IMS, ICR_RXT0 | ICR_RXO | ICR_RXDMT0 | ICR_RXSEQ | ICR_LSC);
    } else {
        wr(e, IMC, 0xFFFFFFFF);
    }
}

static bool e1000_irq_ack(struct netdev *nd)
{
    return rd((struct e1000 *)nd, ICR) != 0;   /* reading clears it */
}

static uint16_t eeprom_read(struct e1000 *e, unsigned word, bool v2)
{
    unsigned shift = v2 ? 2 : 8;
    uint32_t done = v2 ? 1u << 1 : 1u << 4;
    wr(e, EERD, (word << shift) | 1);
    uint64_t end = time_monotonic_ns() + 10000000;
    uint32_t v;
    while (!((v = rd(e, EERD)) & done))
        if (time_monotonic_ns() > end)
            return 0xFFFF;
    return (uint16_t)(v >> 16);
}

static bool mac_valid(const uint8_t *m)
{
    bool zero = !(m[0] | m[1] | m[2] | m[3] | m[4] | m[5]);
    return !zero && !(m[0] & 1);
}

/* After reset the NIC has loaded its address from the EEPROM into receive
 * address 0; where it has not, ask the EEPROM. */
static bool read_mac(struct e1000 *e, bool v2)
{
    uint8_t *m = e->nd.mac;
    uint32_t lo = rd(e, RAL0), hi = rd(e, RAH0);
    for (int i = 0; i < 4; i++)
        m[i] = (uint8_t)(lo >> (8 * i));
    m[4] = (uint8_t)hi;
    m[5] = (uint8_t)(hi >> 8);
    if ((hi & RAH_AV) && mac_valid(m))
        return true;
    for (int i = 0; i < 3; i++) {
        uint16_t w = eeprom_read(e, (unsigned)i, v2);
        m[2 * i] = (uint8_t)w;
        m[2 * i + 1] = (uint8_t)(w >> 8);
    }
    if (!mac_valid(m))
        return false;
    wr(e, RAL0, (uint32_t)m[0] | m[1] << 8 | m[2] << 16 | (uint32_t)m[3] << 24);
    wr(e, RAH0, m[4] | m[5] << 8 | RAH_AV);
    return true;
}

static bool rings_init(struct e1000 *e)
{
    e->rx = net_alloc_pages(1);
    e->tx = net_alloc_pages(1);
    if (!e->rx || !e->tx)
        return false;
    const unsigned per_page = 4096 / NETDEV_COPY_MAX;
    for (unsigned i = 0; i < TX_FRAMES; i += per_page) {
        uint8_t *page = net_alloc_pages(1);
        if (!page)
            return false;
        for (unsigned j = 0; j < per_page && i + j < TX_FRAMES; j++)
            e->tx_head[i + j] = page + j * NETDEV_COPY_MAX;
    }
    for (unsigned i = 0; e->rx_big_pa && i < NRX; i++)
        e->rx_buf[i] = (uint8_t *)phys_to_virt(e->rx_big_pa + (uint64_t)i * RX_JUMBO_BUF);
    for (unsigned i = 0; !e->rx_big_pa && i < NRX; i += 2) {
        uint8_t *page = net_alloc_pages(1);
        if (!page)
            return false;
        e->rx_buf[i] = page;
        e->rx_buf[i + 1] = page + NET_RX_BUF_SIZE;
    }
    for (unsigned i = 0; i < NRX; i++)
        e->rx[i].addr = net_dma_addr(e->rx_buf[i]);
    uint64_t rx_pa = net_dma_addr(e->rx), tx_pa = net_dma_addr(e->tx);
    wr(e, RDBAL, (uint32_t)rx_pa);
    wr(e, RDBAH, (uint32_t)(rx_pa >> 32));
    wr(e, RDLEN, NRX * sizeof(struct rx_desc));
    wr(e, RDH, 0);
    wr(e, RDT, NRX - 1);
    wr(e, RDTR, 0);
    wr(e, TDBAL, (uint32_t)tx_pa);
    wr(e, TDBAH, (uint32_t)(tx_pa >> 32));
    wr(e, TDLEN, NTX * sizeof(struct tx_desc));
    wr(e, TDH, 0);
    wr(e, TDT, 0);
    return true;
}

struct netdev *e1000_probe(const struct pci_dev *d, unsigned fabric_mtu)
{
    if (d->vendor != 0x8086)
        return NULL;
    int model = -1;
    for (unsigned i = 0; i < ARRAY_SIZE(models); i++)
        if (models[i].id == d->device)
            model = (int)i;
    if (model < 0)
        return NULL;
    struct e1000 *e = &e1k;
    e->regs = pci_bar_map(d, 0);
    if (!e->regs) {
        kprintf("net: %s: register BAR 0 not reachable (0x%lx)\n", models[model].name,
                d->bar[0].addr);
        return NULL;
    }
    pci_enable(d, false, true);
    wr(e, IMC, 0xFFFFFFFF);
    wr(e, CTRL, rd(e, CTRL) | CTRL_RST);
    /* The reset takes about a microsecond; reading too early may hang the
     * bus on real parts, so wait before polling. */
    uint64_t t = time_monotonic_ns() + 1000000;
    while (time_monotonic_ns() < t)
        ;
    for (t += 50000000; (rd(e, CTRL) & CTRL_RST) && time_monotonic_ns() < t;)
        ;
    if (rd(e, CTRL) & CTRL_RST) {
        kprintf("net: %s does not come out of reset\n", models[model].name);
        return NULL;
    }
    wr(e, IMC, 0xFFFFFFFF);
    (void)rd(e, ICR);
    uint32_t ctrl = rd(e, CTRL);
    ctrl &= ~(CTRL_LRST | CTRL_ILOS | CTRL_VME | CTRL_PHY_RST);
    wr(e, CTRL, ctrl | CTRL_SLU | CTRL_ASDE);
    if (!read_mac(e, models[model].eerd_v2)) {
        kprintf("net: %s has no valid MAC address\n", models[model].name);
        return NULL;
    }
    for (unsigned i = 0; i < 128; i++)
        wr(e, MTA + 4 * i, 0);
    unsigned mtu = NET_DEFAULT_MTU;
    e->rx_len = NET_RX_BUF_SIZE;
    e->rx_big_pa = 0;
    if (fabric_mtu > NET_DEFAULT_MTU) {
        mtu = fabric_mtu < models[model].jumbo ? fabric_mtu : models[model].jumbo;
        if (mtu < fabric_mtu)
            kprintf("net: %s takes frames of at most %u bytes: MTU %u, not %u\n",
                    models[model].name, mtu, mtu, fabric_mtu);
        uint64_t pa = physmem_take_top((uint64_t)NRX * RX_JUMBO_BUF);
        if (pa) {
            e->rx_big_pa = pa;
            e->rx_len = RX_JUMBO_BUF;
            e->nd.app_kib = NRX * RX_JUMBO_BUF / 1024;
            e->nd.mtu_from = "mtu= on the command line";
        } else {
            kprintf("net: no memory for %u KiB of jumbo receive buffers: MTU %u\n",
                    NRX * RX_JUMBO_BUF / 1024, NET_DEFAULT_MTU);
            mtu = NET_DEFAULT_MTU;
        }
    }
    if (!rings_init(e))
        return NULL;
    /* Our address and broadcast only, no CRC in the frame; 2 KiB buffers,
     * or 16 KiB ones with long packets for jumbo frames. */
    wr(e, RCTL, RCTL_EN | RCTL_BAM | RCTL_SECRC |
                    (e->rx_big_pa ? RCTL_LPE | RCTL_BSIZE_16K : 0));
    wr(e, TIPG, 10 | 8 << 10 | 6 << 20);
    wr(e, TCTL, TCTL_EN | TCTL_PSP | TCTL_CT | TCTL_COLD);

    e->nd.model = models[model].name;
    e->nd.mtu = mtu;
    e->nd.xmit = e1000_xmit;
    e->nd.tx_kick = e1000_tx_kick;
    e->nd.tx_reclaim = e1000_tx_reclaim;
    e->nd.poll = e1000_poll;
    e->nd.rx_pending = e1000_rx_pending;
    e->nd.link_up = e1000_link_up;
    e->nd.irq_enable = e1000_irq_enable;
    e->nd.irq_ack = e1000_irq_ack;
    return &e->nd;
}
