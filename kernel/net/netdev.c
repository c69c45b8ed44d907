/* The device-independent network layer: picks the NIC, checks what callers
 * give it, and owns the NIC's interrupt and the idle wait.
 *
 * The interrupt ends a halt: receive work happens in netdev_poll, in the
 * caller's context.  Receive interrupts are enabled at the device inside
 * netdev_wait and, while a hook is registered (netdev_user_rx: a job runs),
 * also while the program runs: one that interrupts the program (ring 3) calls
 * the hook, so frames are handled when they arrive even if the program
 * computes without entering the kernel.  Without a hook a running program is
 * never disturbed by network traffic. */
#include "cpu.h"
#include "errno.h"
#include "ioapic.h"
#include "mem.h"
#include "netdev_impl.h"
#include "percpu.h"
#include "msgtrace.h"
#include "process.h"
#include "smp.h"
#include "time.h"
#include "x86.h"

#define NETDEV_VECTOR 0x48
#define SPIN_NS 30000ULL                /* poll this long before halting */
#define UNPROVEN_POLL_NS 50000000ULL    /* halt at most this long until an interrupt is seen */
#define BROKEN_POLL_NS 1000000ULL       /* ... and this long once interrupts are known lost */
#define KPAGES_RESERVE 64               /* left for page tables and the rest */
#define TX_TIMEOUT_NS 1000000000ULL     /* a NIC completing nothing this long is stuck */

static struct netdev *nd;
static enum pci_irq_mode irq_mode;
static unsigned irq_gsi;
static enum { IRQ_UNPROVEN, IRQ_WORKS, IRQ_LOST } irq_state;
static volatile uint64_t irq_ours;
static unsigned irq_foreign, irq_missed;
static const uint8_t no_mac[ETH_ALEN];
static unsigned pages_used;

static void irq_give_up(const char *why)
{
    if (irq_state == IRQ_LOST)
        return;
    irq_state = IRQ_LOST;
    if (irq_mode == PCI_IRQ_INTX)
        ioapic_mask(irq_gsi, true);
    kprintf("net: %s: polling every %llu us while idle\n", why, BROKEN_POLL_NS / 1000);
}

static void (*user_rx_fn)(struct regs *);
/* The CPUs halted in netdev_wait (bit i: CPU i; CPUs past 63 are not
 * recorded and wake at their deadline): the interrupt goes to CPU 0, and a
 * thread or rank waiting on another core must hear of the frame too.
 * `kicks` counts netdev_kick_waiters: a wait that began before a kick
 * returns rather than halt (ranks on one node: a frame one rank looped to
 * another, or handed to another's interface, arrives without the NIC). */
static volatile uint64_t rx_waiters;
static volatile uint64_t kicks;

static void wake_others(uint64_t mask)
{
    unsigned self = this_cpu()->index;
    if (self < 64)
        mask &= ~(1ULL << self);
    while (mask) {
        unsigned i = (unsigned)__builtin_ctzll(mask);
        mask &= mask - 1;
        cpu_wake(i);
    }
}

uint64_t netdev_kicks(void) { return __atomic_load_n(&kicks, __ATOMIC_SEQ_CST); }

void netdev_kick_waiters(void)
{
    __atomic_fetch_add(&kicks, 1, __ATOMIC_SEQ_CST);
    wake_others(__atomic_load_n(&rx_waiters, __ATOMIC_SEQ_CST));
}

/* Receive interrupts off, or left on for the program's hook. */
static void irq_rest(void)
{
    nd->irq_enable(nd, user_rx_fn && irq_state != IRQ_LOST);
}

void netdev_user_rx(void (*fn)(struct regs *))
{
    user_rx_fn = fn;
    if (nd)
        irq_rest();
}

static void netdev_irq(struct regs *r)
{
    PTL_TRACE(TP_NET_IRQ);
    bool ours = false;
    if (nd && nd->irq_ack(nd)) {
        ours = true;
        irq_ours++;
        irq_foreign = 0;
        nd->stats.interrupts++;
        if (irq_state == IRQ_UNPROVEN)
            irq_state = IRQ_WORKS;
    } else if (irq_mode == PCI_IRQ_INTX && ++irq_foreign >= 100) {
        /* A level line held by some device this kernel does not drive
         * would interrupt forever. */
        irq_give_up("interrupt line shared with another device");
    }
    apic_eoi();
    if (ours)
        wake_others(rx_waiters);
    /* Interrupts stay off in the handler: the hook cannot be re-entered,
     * and the program it interrupted holds no kernel lock. */
    if (ours && user_rx_fn && (r->cs & 3) == 3)
        user_rx_fn(r);
}

static const char *irq_mode_name(void)
{
    static char buf[32];
    switch (irq_mode) {
    case PCI_IRQ_MSI: return "MSI";
    case PCI_IRQ_MSIX: return "MSI-X";
    case PCI_IRQ_INTX: snprintf(buf, sizeof buf, "IOAPIC pin %u", irq_gsi); return buf;
    default: return "none (polling)";
    }
}

bool netdev_init(unsigned fabric_mtu)
{
    int n = pci_scan();
    irq_set_handler(NETDEV_VECTOR, netdev_irq);     /* a probe may route the vector itself */
    for (int i = 0; i < n && !nd; i++) {
        const struct pci_dev *d = pci_device(i);
        nd = virtio_net_probe(d, NETDEV_VECTOR);
        if (!nd)
            nd = e1000_probe(d, fabric_mtu);
        if (!nd)
            continue;
        irq_mode = nd->irq_mode == PCI_IRQ_MSIX ? PCI_IRQ_MSIX
                                                : pci_irq_setup(d, NETDEV_VECTOR, &irq_gsi);
        if (irq_mode == PCI_IRQ_INTX)
            ioapic_mask(irq_gsi, false);
        if (irq_mode == PCI_IRQ_NONE)
            irq_give_up("no interrupt");
        const uint8_t *m = nd->mac;
        kprintf("net: %s at %02x:%02x.%x, MAC %02x:%02x:%02x:%02x:%02x:%02x, link %s, MTU %u "
                "(%s), interrupt %s, %u KiB of rings and buffers\n",
                nd->model, d->bus, d->dev, d->fn, m[0], m[1], m[2], m[3], m[4], m[5],
                nd->link_up(nd) ? "up" : "down", nd->mtu,
                nd->mtu_from ? nd->mtu_from : "default", irq_mode_name(),
                pages_used * 4 + nd->app_kib);
    }
    return nd != NULL;
}

bool netdev_present(void) { return nd != NULL; }
const uint8_t *netdev_mac(void) { return nd ? nd->mac : no_mac; }
unsigned netdev_mtu(void) { return nd ? nd->mtu : 0; }
bool netdev_link_up(void) { return nd && nd->link_up(nd); }

/* Checks a frame of copy_len copied bytes and sg[0..nsg-1], leaving out
 * empty pieces; the number of pieces kept, or -EINVAL. */
static int tx_check(size_t copy_len, const struct net_sg *sg, int nsg, struct net_sg *pieces)
{
    int max = NETDEV_MAX_SG - (copy_len != 0);
    if (nsg < 0 || nsg > max || copy_len > NETDEV_COPY_MAX)
        return -EINVAL;
    int n = 0;
    size_t total = copy_len;
    for (int i = 0; i < nsg; i++) {
        if (sg[i].len == 0)
            continue;      /* a zero-length descriptor is not allowed by every NIC */
        total += sg[i].len;
        if (sg[i].len > ETH_HLEN + nd->mtu || total > ETH_HLEN + nd->mtu)
            return -EINVAL;
        pieces[n++] = sg[i];
    }
    if (total < ETH_HLEN || total > ETH_HLEN + nd->mtu || (n == 0 && copy_len == 0))
        return -EINVAL;
    return n;
}

/* Frames queue without waiting; only a full ring makes the CPU wait, for the
 * NIC to complete the oldest frames.  A NIC that completes nothing for
 * TX_TIMEOUT_NS is declared stuck: sends then fail at once while the ring is
 * full, instead of spinning a second each. */
static bool tx_stuck;

/* netdev_tx_batch: a burst is on; its first frame has rung the doorbell;
 * frames queued since the last ring.  Only the sender touches them (the
 * Portals library's lock held): a burst ends within the call that began it,
 * so no frame is left unrung when the lock is let go.  A wait on another
 * CPU, without that lock, must not ring for it: its "rung" could cover a
 * frame queued after its doorbell. */
static bool tx_batching, tx_batch_rang, tx_unrung;

static void tx_ring(void)
{
    nd->tx_kick(nd);
    nd->stats.tx_doorbells++;
    tx_unrung = false;
}

void netdev_tx_batch(bool on)
{
    if (!nd)
        return;
    tx_batching = on;
    tx_batch_rang = false;
    if (!on && tx_unrung)
        tx_ring();
}

/* hold_ok: the frame may wait for the burst's last doorbell. */
static int tx_queue(const void *copy, size_t copy_len, const struct net_sg *sg, int nsg,
                    bool hold_ok)
{
    struct net_sg pieces[NETDEV_MAX_SG];
    int n = tx_check(copy_len, sg, nsg, pieces);
    if (n < 0) {
        nd->stats.tx_errors++;
        return n;
    }
    nd->tx_reclaim(nd);
    PTL_TRACE(TP_TX_QUEUE);
    uint64_t end = 0;
    int r;
    while ((r = nd->xmit(nd, copy, copy_len, pieces, n)) == -EBUSY) {
        if (tx_unrung)
            tx_ring();         /* the NIC must be told of what it is to complete */
        uint64_t now = time_monotonic_ns();
        if (tx_stuck || (end && now > end)) {
            if (!tx_stuck)
                kprintf("net: %s completed no transmit within 1 s\n", nd->model);
            tx_stuck = true;
            r = -EIO;
            break;
        }
        if (!end)
            end = now + TX_TIMEOUT_NS;
        cpu_relax();
        nd->tx_reclaim(nd);
    }
    if (r < 0) {
        nd->stats.tx_errors++;
        return r;
    }
    tx_stuck = false;
    nd->stats.tx_frames++;
    tx_unrung = true;
    if (!(hold_ok && tx_batching && tx_batch_rang)) {
        tx_ring();
        tx_batch_rang = tx_batching;
    }
    PTL_TRACE(TP_TX_DONE);
    return 0;
}

static bool tx_idle(struct netdev *dev) { return dev->tx_reclaim(dev) == 0; }

int netdev_send(const struct net_sg *sg, int nsg)
{
    if (!nd)
        return -ENODEV;
    int r = tx_queue(NULL, 0, sg, nsg, false);
    if (r < 0)
        return r;
    /* The caller may reuse its buffers once we return: wait until the NIC
     * has completed this frame (and so every frame before it). */
    if (!net_spin_until(tx_idle, nd, TX_TIMEOUT_NS)) {
        nd->stats.tx_errors++;
        LOG_ONCE("net: %s did not complete a transmit within 1 s\n", nd->model);
        return -EIO;
    }
    return 0;
}

int netdev_send_async(const void *head, size_t head_len, const struct net_sg *sg, int nsg)
{
    if (!nd)
        return -ENODEV;
    if (head_len == 0) {
        nd->stats.tx_errors++;
        return -EINVAL;
    }
    return tx_queue(head, head_len, sg, nsg, true);
}

int netdev_poll(netdev_rx_fn rx, void *arg)
{
    return nd ? nd->poll(nd, rx, arg) : 0;
}

bool netdev_wait(uint64_t deadline) { return netdev_wait_since(deadline, netdev_kicks()); }

bool netdev_wait_since(uint64_t deadline, uint64_t kicks_seen)
{
    if (!nd) {
        time_sleep_until(deadline);
        return false;
    }
    uint64_t now = time_monotonic_ns();
    uint64_t spin_end = now + SPIN_NS < deadline ? now + SPIN_NS : deadline;
    do {
        if (nd->rx_pending(nd) || netdev_kicks() != kicks_seen) {
            PTL_TRACE(TP_NET_WAKE);
            return true;
        }
        cpu_relax();
    } while (time_monotonic_ns() < spin_end);

    for (;;) {
        uint64_t seen = irq_ours;
        /* Checked after enabling: a frame that arrived in between has
         * raised the interrupt, which stays pending until the halt. */
        nd->irq_enable(nd, true);
        if (nd->rx_pending(nd)) {
            irq_rest();
            PTL_TRACE(TP_NET_WAKE);
            return true;
        }
        now = time_monotonic_ns();
        if (now >= deadline) {
            irq_rest();
            return false;
        }
        uint64_t wake = deadline;
        if (irq_state != IRQ_WORKS) {
            uint64_t cap = irq_state == IRQ_LOST ? BROKEN_POLL_NS : UNPROVEN_POLL_NS;
            if (now + cap < wake)
                wake = now + cap;
        }
        unsigned self = this_cpu()->index;
        uint64_t bit = self < 64 ? 1ULL << self : 0;
        __atomic_fetch_or(&rx_waiters, bit, __ATOMIC_SEQ_CST);
        if (netdev_kicks() != kicks_seen) {     /* a kick before the bit was seen */
            __atomic_fetch_and(&rx_waiters, ~bit, __ATOMIC_SEQ_CST);
            irq_rest();
            return true;
        }
        PTL_TRACE(TP_HALT);
        time_halt_until(wake);
        __atomic_fetch_and(&rx_waiters, ~bit, __ATOMIC_SEQ_CST);
        if (netdev_kicks() != kicks_seen) {
            irq_rest();
            return true;
        }
        irq_rest();
        if (nd->rx_pending(nd)) {
            PTL_TRACE(TP_NET_WAKE);
            if (irq_ours == seen && irq_state == IRQ_UNPROVEN && ++irq_missed >= 3)
                irq_give_up("frames arrive without an interrupt");
            return true;
        }
    }
}

void netdev_get_stats(struct netdev_stats *s)
{
    if (nd)
        *s = nd->stats;
    else
        *s = (struct netdev_stats){0};
}

uint64_t net_dma_addr(const void *p)
{
    uint64_t va = (uint64_t)p;
    if (va >= KERNEL_VMA)
        return va - KERNEL_VMA;
    if (va >= PHYS_BASE)
        return va - PHYS_BASE;
    return user_va_to_phys(va);
}

void *net_alloc_pages(unsigned pages)
{
    if (kpages_free() < pages + KPAGES_RESERVE) {
        kprintf("net: %u kernel pages needed, %lu free: NIC not started\n", pages, kpages_free());
        return NULL;
    }
    /* The pool hands out pages in address order; a gap (a boot module, the
     * end of a range) restarts the run, wasting what came before it. */
    uint8_t *first = kpage_alloc();
    unsigned got = 1;
    pages_used++;
    while (got < pages) {
        if (kpages_free() < KPAGES_RESERVE / 2) {
            kprintf("net: no %u contiguous kernel pages: NIC not started\n", pages);
            return NULL;
        }
        uint8_t *p = kpage_alloc();
        pages_used++;
        if (p == first + got * PAGE_SIZE) {
            got++;
        } else {
            first = p;
            got = 1;
        }
    }
    return first;
}

bool net_spin_until(bool (*done)(struct netdev *), struct netdev *dev, uint64_t timeout_ns)
{
    uint64_t end = time_monotonic_ns() + timeout_ns;
    for (;;) {
        for (int i = 0; i < 64; i++) {
            if (done(dev))
                return true;
            cpu_relax();
        }
        if (time_monotonic_ns() > end)
            return done(dev);
    }
}
