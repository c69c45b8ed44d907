/*
 * Linux host for Portals (service-node programs): ptl_host.h implemented on
 * an AF_PACKET socket bound to one Ethernet interface and EtherType 0x88B5.
 * Link a program with build/portals/libportals.a (library + this host).
 *
 * Privilege: AF_PACKET sockets need CAP_NET_RAW (root, or
 * `setcap cap_net_raw+ep prog`).  Without it PtlNIInit fails with
 * PTL_ARG_INVALID and a message on stderr says why.
 *
 * Environment (read once, at the first PtlNIInit):
 *   TERN_IFACE       interface name (required), e.g. eth0 or a veth.
 *   TERN_NID         this node's nid.  Default: from the interface MAC by
 *                    the rule below, or by its line in TERN_NIDMAP.
 *   TERN_PID         pid used when PtlNIInit asks for PTL_PID_ANY.  Default:
 *                    the Linux process id folded into 0x100..0xfeff, which
 *                    can collide: set TERN_PID when processes share a node.
 *   TERN_NIDMAP      file of "nid mac" lines (# comments) mapping nids to
 *                    MAC addresses.  Without it: nid N <-> MAC
 *                    02:00:00:NN:NN:NN (locally administered, low 24 bits =
 *                    nid), so nids are limited to 24 bits.
 *   TERN_UID, TERN_JID  uid / job id stamped on frames (default getuid(), 0).
 *   TERN_FRAME_MAX   bytes after the Ethernet header per frame.  Default:
 *                    the interface MTU (SIOCGIFMTU) capped at 65535 (the
 *                    largest a virtio-net device states; a tap carries
 *                    65521); smaller values allowed, >= 256.
 *   TERN_RING_KB     size of the PACKET_MMAP receive ring (default 4096, or
 *                    room for 128 frames where that is more: 8.5 MiB with
 *                    64 KiB frames).
 *   TERN_PAYLOAD_CRC 1: checksum every frame sent, header and payload
 *                    (default 0: no software checksum, PTL_WF_LINKCRC).
 *                    An Ethernet NIC drops frames that fail its FCS, and a
 *                    veth moves memory, so the check is only for links
 *                    that can deliver damaged frames (a `tc netem corrupt`
 *                    veth, an FCS-less tunnel); with it, frames without a
 *                    checksum are refused.  Frames received are otherwise
 *                    checked the way their sender chose.
 *
 * Several Portals processes on one interface: each process opens its own
 * socket bound with ETH_P_ALL and a classic BPF filter admitting only
 * EtherType 0x88B5, so the kernel hands every Portals frame on the
 * interface - arriving, and leaving it (PACKET_OUTGOING) - to every
 * process.  Leaving frames are accepted only when their destination nid is
 * this node's own: that is how processes of one node (same nid, different
 * pids: allocator daemon, yod, fyod on the service node) reach each other
 * through the one interface.  The kernel never shows a socket its own
 * frames, and a frame a process sends to its own nid and pid never reaches
 * the wire (queued in memory, delivered by the next wait or library call),
 * so nothing arrives twice.  The library drops frames whose destination
 * pid is not its own (rx_not_for_us); to keep that from costing every
 * process a copy of every frame, once this host knows its pid (the source
 * pid of the first frame it sends) the filter also requires that
 * destination pid (frames too short to carry one still pass, so the
 * library counts them).  Until a process first sends, it sees the frames
 * for every pid of the node.
 *
 * Progress: a thread (lh_progress.c), started by the first PtlNIInit, takes
 * frames as they arrive and runs the retransmission timers, so a process
 * that computes without calling Portals still answers gets and atomics,
 * takes puts and acknowledges frames (spec: progress must not depend on
 * the application calling in).  Waits (PtlEQWait, PtlCTWait, the polls)
 * sleep until the thread has handed over a batch.  TERN_PTL_PROGRESS=0
 * turns it off: frames are then handed to the library only inside
 * ptl_host_wait (poll() on the socket, bounded by the deadline) and before
 * every library call takes its lock (whatever already sits in the receive
 * ring), so polling calls progress but a computing process does not.  A
 * child of fork() has no thread and works the second way.
 */
#ifndef PTL_LINUX_H
#define PTL_LINUX_H

#include <stdint.h>

struct ptl_linux_stats {
    uint64_t rx_frames;     /* frames handed to ptl_lib_rx */
    uint64_t rx_skipped;    /* other hosts' / our own outgoing frames */
    uint64_t rx_spoofed;    /* source nid not the MAC they came from */
    uint64_t rx_truncated;  /* longer than a ring slot */
    uint64_t rx_ring_drops; /* kernel: ring full (PACKET_STATISTICS) */
    uint64_t tx_frames;
    uint64_t tx_busy;       /* socket buffer full: library resends */
    uint64_t tx_errors;     /* other sendmsg failures */
    uint64_t tx_no_route;   /* no MAC for the destination nid */
    uint64_t filter_pid;    /* pid the BPF filter admits, or UINT64_MAX */
};

/* Host-level counters; 0, or -1 if the host is not set up yet. */
int ptl_linux_get_stats(struct ptl_linux_stats *out);

/* The MAC of nid by this host's rule or TERN_NIDMAP (this host's own
 * interface MAC for its own nid): 0, or -1 when it has none or the host is
 * not set up.  Frames whose Ethernet source is not their source nid's MAC
 * are dropped (rx_spoofed). */
int ptl_linux_nid_to_mac(uint32_t nid, uint8_t mac[6]);

/* "aa:bb:cc:dd:ee:ff" (six hex numbers up to ff) into mac: 0, or -1
 * when s is anything else. */
int ptl_linux_parse_mac(const char *s, uint8_t mac[6]);

#endif
