/* The node's network device: one Ethernet NIC, device-independent.
 *
 * Single-threaded by design (one CPU, one application): call from kernel
 * context with interrupts disabled, never from an interrupt handler.
 *
 * Transmit comes in two kinds.  netdev_send() is synchronous: it returns
 * only when the NIC is done with every buffer it was given, so the caller
 * may reuse them at once.  netdev_send_async() only queues the frame: a
 * short head (the headers) is copied into a buffer of the frame's transmit
 * slot, the rest is read by the NIC from the caller's memory later, so many
 * frames can be in flight without the CPU waiting for each.  Slots are
 * reclaimed as the NIC completes them, on later sends.  No payload is copied
 * either way.  Receive hands each frame in place from the receive ring; the
 * buffer is recycled as soon as the callback returns. */
#ifndef TERN_NETDEV_H
#define TERN_NETDEV_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ETH_ALEN 6
#define ETH_HLEN 14
#define NETDEV_MAX_SG 8            /* pieces of one frame in netdev_send */
#define NETDEV_COPY_MAX 320        /* bytes netdev_send_async copies (headers) */

/* One piece of a frame.  `base` is any address the kernel can read: the
 * direct map (kpage_alloc memory), the kernel image, or the running
 * application's memory (validated by the caller; it is physically
 * contiguous, so a piece may cross pages). */
struct net_sg {
    const void *base;
    size_t len;
};

typedef void (*netdev_rx_fn)(const void *frame, size_t len, void *arg);

struct netdev_stats {
    uint64_t tx_frames, tx_errors;     /* errors: rejected or not completed */
    uint64_t rx_frames, rx_dropped;    /* dropped: too long, runt, bad descriptor */
    uint64_t interrupts;
    uint64_t tx_doorbells;             /* doorbells rung: one per frame, or per burst */
};

/* Probes the PCI bus for a supported NIC and starts the first one found,
 * logging its model, MAC, link and MTU.  False if there is none: every other
 * function then fails harmlessly (netdev_send returns -ENODEV). */
/* fabric_mtu: the MTU the fabric carries (kernel mtu=), for a NIC that
 * cannot be told one by the device itself; 0: not known. */
bool netdev_init(unsigned fabric_mtu);
bool netdev_present(void);
const uint8_t *netdev_mac(void);   /* 6 bytes; all zero without a NIC */
unsigned netdev_mtu(void);         /* largest payload after the 14-byte header */
bool netdev_link_up(void);

/* Sends one frame made of sg[0..nsg-1] (Ethernet header included; the NIC
 * adds the FCS and pads short frames where the medium needs it).  Returns 0,
 * or -EINVAL (nsg out of 1..NETDEV_MAX_SG, or a length outside
 * ETH_HLEN..ETH_HLEN+mtu), -ENODEV (no NIC), -EIO (the NIC did not complete
 * the frame in time; it is then treated as still owning the buffers and
 * later sends fail until it catches up). */
int netdev_send(const struct net_sg *sg, int nsg);

/* Queues one frame made of head[0..head_len) (copied before the call
 * returns; Ethernet header first, 1..NETDEV_COPY_MAX bytes) followed by
 * sg[0..nsg-1] (0..NETDEV_MAX_SG-1 pieces), which the NIC reads after the
 * call: they must stay valid and unchanged until it has sent the frame.
 * (Portals guarantees that until the frame is acknowledged, which cannot
 * happen before it was sent.)  Waits only when every transmit slot is taken,
 * for the NIC to complete one.  Returns 0 when queued, or the errors of
 * netdev_send (-EIO: no slot came free within 1 s). */
int netdev_send_async(const void *head, size_t head_len, const struct net_sg *sg, int nsg);

/* Hands every frame received so far to rx(frame, len, arg), without the FCS;
 * len >= ETH_HLEN (a NIC may have padded a short frame to 60 bytes).  The
 * frame is valid only during the call; rx may pass pieces of it to
 * netdev_send (nettest.c does), not to netdev_poll or netdev_wait.  Returns
 * the number of frames handed over. */
int netdev_poll(netdev_rx_fn rx, void *arg);

/* Waits until a frame is ready for netdev_poll or the monotonic clock
 * reaches deadline_ns: polls for 30 us, then halts the CPU (interrupts on
 * only while halted) until the NIC's interrupt or the deadline.  Where the
 * NIC's interrupt is missing or found not to arrive, it halts at most 1 ms
 * at a time instead (logged once).  True if a frame is ready. */
bool netdev_wait(uint64_t deadline_ns);
/* The same, returning (true) as well once netdev_kick_waiters has been
 * called since netdev_kicks() returned kicks_seen: a waiter takes the count
 * before it looks for work, so a kick between the look and the halt is not
 * lost. */
bool netdev_wait_since(uint64_t deadline_ns, uint64_t kicks_seen);
uint64_t netdev_kicks(void);
/* Wakes every other CPU halted in netdev_wait (work for them came from
 * this CPU, not the NIC: ranks per core). */
void netdev_kick_waiters(void);

void netdev_get_stats(struct netdev_stats *s);

/* A burst of netdev_send_async calls (ptl_host_tx_batch): while on, a frame
 * after the burst's first is queued without the doorbell, which is rung once
 * at off, and whenever the ring is full.  Frames of netdev_send ring it at
 * once (their caller waits for them).  Called by whoever sends, with the
 * Portals library's lock held. */
void netdev_tx_batch(bool on);

/* While fn is set (not NULL), receive interrupts stay on while the program
 * runs and one that interrupts it calls fn with its registers: frames are
 * handled on arrival, not at the program's next kernel entry. */
struct regs;
void netdev_user_rx(void (*fn)(struct regs *));

/* net/nettest.c, net/nettest_barrier.c: the nettest=echo, nettest=ping
 * and nettest=barrier boot modes, run instead of a program. */
__attribute__((noreturn)) void nettest_echo(void);
__attribute__((noreturn)) void nettest_ping(void);
__attribute__((noreturn)) void nettest_barrier(void);
#endif
