/* What the device-independent layer (netdev.c) and the NIC drivers share. */
#ifndef TERN_NET_NETDEV_IMPL_H
#define TERN_NET_NETDEV_IMPL_H
#include "kernel.h"
#include "netdev.h"
#include "pci.h"

#define NET_RX_BUF_SIZE 2048       /* two per page: a buffer never crosses one */
#define NET_DEFAULT_MTU 1500

struct netdev {
    const char *model;
    uint8_t mac[ETH_ALEN];
    unsigned mtu;
    const char *mtu_from;          /* "from the device", "mtu= on the command line";
                                    * NULL: NET_DEFAULT_MTU */
    unsigned app_kib;              /* buffers taken from the application's memory */
    struct netdev_stats stats;
    /* Queues a frame: copy[0..copy_len) copied into the transmit slot's own
     * buffer (copy_len may be 0), then sg[0..nsg-1] by reference.  Checked
     * already: no empty piece, (copy_len != 0) + nsg <= NETDEV_MAX_SG,
     * copy_len <= NETDEV_COPY_MAX, a valid frame length.  -EBUSY when no
     * slot or descriptor is free (call tx_reclaim and retry).  The NIC
     * learns of the frame at the next tx_kick. */
    int (*xmit)(struct netdev *nd, const void *copy, size_t copy_len, const struct net_sg *sg,
                int nsg);
    /* Rings the doorbell for every frame queued so far. */
    void (*tx_kick)(struct netdev *nd);
    /* Takes back the slots of frames the NIC has completed; returns the
     * number of frames it still owns. */
    unsigned (*tx_reclaim)(struct netdev *nd);
    int (*poll)(struct netdev *nd, netdev_rx_fn rx, void *arg);
    bool (*rx_pending)(struct netdev *nd);
    bool (*link_up)(struct netdev *nd);
    /* Receive interrupts on or off at the device: on only while waiting. */
    void (*irq_enable)(struct netdev *nd, bool on);
    /* Reads and clears the interrupt cause; true if the NIC had raised it. */
    bool (*irq_ack)(struct netdev *nd);
    /* PCI_IRQ_MSIX: the driver routed its interrupt itself (to the vector
     * its probe was given); else netdev sets it up (pci_irq_setup). */
    enum pci_irq_mode irq_mode;
};

/* Each returns the started device, or NULL if `d` is not one of its models or
 * could not be brought up (logged). */
struct netdev *virtio_net_probe(const struct pci_dev *d, uint8_t vector);
/* fabric_mtu: kernel mtu= (0: not given); the e1000 cannot learn it from
 * the device. */
struct netdev *e1000_probe(const struct pci_dev *d, unsigned fabric_mtu);

/* Physical address for DMA of a struct net_sg base (see netdev.h). */
uint64_t net_dma_addr(const void *p);
/* `pages` physically contiguous zeroed kernel pages, or NULL (logged) if the
 * kernel pool cannot spare them. */
void *net_alloc_pages(unsigned pages);
/* Waits for *done (which the device sets) with a bound; false on timeout. */
bool net_spin_until(bool (*done)(struct netdev *nd), struct netdev *nd, uint64_t timeout_ns);

static inline void dma_wmb(void) { __asm__ volatile("" ::: "memory"); }  /* x86: stores stay ordered */
static inline void doorbell_wmb(void) { __asm__ volatile("sfence" ::: "memory"); }

#define LOG_ONCE(...)                                                                              \
    do {                                                                                           \
        static bool logged_;                                                                       \
        if (!logged_) {                                                                            \
            logged_ = true;                                                                        \
            kprintf(__VA_ARGS__);                                                                  \
        }                                                                                          \
    } while (0)
#endif
