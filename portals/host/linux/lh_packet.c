/* The AF_PACKET side of the Linux host: one SOCK_RAW socket bound to the
 * interface with ETH_P_ALL and a BPF filter for EtherType 0x88B5 (a socket
 * bound to one EtherType never sees frames sent out of its own interface,
 * so two Portals processes of one node could not talk), a TPACKET_V2 PACKET_MMAP receive ring
 * (frames are handed to the library straight from the ring, so the payload
 * is copied once, ring -> user buffer), transmission with sendmsg and an
 * iovec that points at the user's buffer (the kernel copies it once into
 * its skb; a TX ring would need a second copy by us), and the per-pid BPF
 * filter described in ptl_linux.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include "lh_internal.h"
#include "ptl_lib.h"
#include "ptl_wire.h"

#define LH_BLOCK_MIN (128u * 1024u)
#define LH_BLOCK_MAX (4u << 20)
#define LH_BLOCK_FRAMES 8          /* frames per block at least: little waste at its end */
/* Destination nid/pid sit at these frame offsets (Ethernet + wire header). */
#define LH_DST_NID_OFF (PTL_ETH_HLEN + PTL_WIRE_DST_NID_OFF)
#define LH_DST_PID_OFF (PTL_ETH_HLEN + PTL_WIRE_DST_PID_OFF)

static struct {
    int fd;
    uint8_t *ring;
    size_t ring_len;
    unsigned block_size, frame_size, frames_per_block, frame_nr, idx;
    uint8_t mac[6];
    uint32_t nid;
    const struct lh_conf *conf;
    pthread_mutex_t rx_m, filter_m;
    uint64_t filter_pid; /* UINT64_MAX: no filter attached */
    struct ptl_linux_stats st;
} P = {
    .fd = -1,
    .rx_m = PTHREAD_MUTEX_INITIALIZER,
    .filter_m = PTHREAD_MUTEX_INITIALIZER,
    .filter_pid = UINT64_MAX,
};

static void bump(uint64_t *c) { __atomic_fetch_add(c, 1, __ATOMIC_RELAXED); }

static int fail(const char *what, const struct lh_conf *c)
{
    int e = errno;
    if (e == EPERM || e == EACCES)
        fprintf(stderr, "tern portals: %s on %s: %s - AF_PACKET needs "
                        "CAP_NET_RAW (run as root or setcap cap_net_raw+ep)\n",
                what, c->ifname, strerror(e));
    else
        fprintf(stderr, "tern portals: %s on %s: %s\n", what, c->ifname,
                strerror(e));
    return -1;
}

static int setup_ring(const struct lh_conf *c)
{
    int v = TPACKET_V2;
    if (setsockopt(P.fd, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)) < 0)
        return fail("PACKET_VERSION", c);
    /* The kernel puts the MAC header at TPACKET_ALIGN(hdr + 16) - 14. */
    unsigned mac_end = TPACKET_ALIGN(TPACKET2_HDRLEN + 16);
    P.frame_size = TPACKET_ALIGN(mac_end + c->frame_max);
    /* A frame never spans blocks: a 64 KiB frame in a 128 KiB block would
     * leave half of it unused, so blocks grow (by powers of two: the kernel
     * allocates them so) until they hold a few frames. */
    P.block_size = LH_BLOCK_MIN;
    while (P.block_size / P.frame_size < LH_BLOCK_FRAMES && P.block_size < LH_BLOCK_MAX)
        P.block_size *= 2;
    P.frames_per_block = P.block_size / P.frame_size;
    unsigned blocks = (unsigned)(((uint64_t)c->ring_kb * 1024 + P.block_size - 1) / P.block_size);
    if (blocks < 2)
        blocks = 2;
    P.frame_nr = P.frames_per_block * blocks;
    struct tpacket_req req = {
        .tp_block_size = P.block_size,
        .tp_block_nr = blocks,
        .tp_frame_size = P.frame_size,
        .tp_frame_nr = P.frame_nr,
    };
    if (setsockopt(P.fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)) < 0)
        return fail("PACKET_RX_RING", c);
    P.ring_len = (size_t)P.block_size * blocks;
    P.ring = mmap(NULL, P.ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, P.fd, 0);
    if (P.ring == MAP_FAILED) {
        P.ring = NULL;
        return fail("mmap of the receive ring", c);
    }
    return 0;
}

static int set_filter(uint32_t pid, bool by_pid);

int lh_packet_open(const struct lh_conf *c)
{
    /* Protocol 0 until bind: no frames from other interfaces slip into the
     * ring between socket() and bind(). */
    P.fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
    if (P.fd < 0)
        return fail("AF_PACKET socket", c);
    /* The EtherType filter goes on before bind(): ETH_P_ALL would
     * otherwise fill the ring with the interface's IP traffic. */
    if (set_filter(0, false)) {
        fail("SO_ATTACH_FILTER", c);
        goto bad;
    }
    if (setup_ring(c))
        goto bad;
    /* Room for a full send window of jumbo frames per peer; FORCE needs
     * CAP_NET_ADMIN, plain SNDBUF is capped by wmem_max. */
    int sb = 8 << 20;
    if (setsockopt(P.fd, SOL_SOCKET, SO_SNDBUFFORCE, &sb, sizeof(sb)) < 0)
        setsockopt(P.fd, SOL_SOCKET, SO_SNDBUF, &sb, sizeof(sb));
    struct sockaddr_ll sll = {
        .sll_family = AF_PACKET,
        .sll_protocol = htons(ETH_P_ALL),
        .sll_ifindex = c->ifindex,
    };
    if (bind(P.fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
        fail("bind", c);
        goto bad;
    }
    memcpy(P.mac, c->mac, 6);
    P.nid = c->nid;
    P.conf = c;
    return 0;
bad:
    if (P.ring)
        munmap(P.ring, P.ring_len);
    P.ring = NULL;
    close(P.fd);
    P.fd = -1;
    return -1;
}

int lh_packet_fd(void) { return P.fd; }

static struct tpacket2_hdr *slot(unsigned i)
{
    return (struct tpacket2_hdr *)(P.ring +
                                   (size_t)(i / P.frames_per_block) * P.block_size +
                                   (size_t)(i % P.frames_per_block) * P.frame_size);
}

bool lh_packet_rx_ready(void)
{
    return __atomic_load_n(&slot(P.idx)->tp_status, __ATOMIC_ACQUIRE) &
           TP_STATUS_USER;
}

static void deliver(struct tpacket2_hdr *h, uint32_t status)
{
    const struct sockaddr_ll *sll =
        (const void *)((uint8_t *)h + TPACKET_ALIGN(sizeof(*h)));
    const uint8_t *eth = (uint8_t *)h + h->tp_mac;
    /* Frames leaving this interface are seen too (ETH_P_ALL): those
     * another process of this node sends to our nid are how local pids
     * reach each other; frames for other nids are not ours.  The kernel
     * never shows a socket its own frames, and a process's frames to
     * itself never reach the wire (lh_loop.c), so nothing arrives twice. */
    if (sll->sll_pkttype == PACKET_OTHERHOST ||
        (sll->sll_pkttype == PACKET_OUTGOING &&
         (h->tp_snaplen < LH_DST_NID_OFF + 4 ||
          ptl_wire_dst_nid(eth + PTL_ETH_HLEN) != P.nid))) {
        bump(&P.st.rx_skipped);
        return;
    }
    if ((status & TP_STATUS_COPY) || h->tp_snaplen < h->tp_len) {
        bump(&P.st.rx_truncated);
        return;
    }
    if (h->tp_snaplen < PTL_ETH_HLEN) {
        bump(&P.st.rx_truncated);
        return;
    }
    /* A frame's source nid is the station it comes from: its Ethernet
     * source must be that nid's MAC (ours for this node's own processes).
     * Who registers with the allocator, and for which MAC, rests on it.
     * (A frame shorter than a header is the library's to count.) */
    if (h->tp_snaplen >= PTL_ETH_HLEN + PTL_WIRE_HDR_LEN) {
        uint32_t src = (uint32_t)ptl_wget(eth + PTL_ETH_HLEN + PTL_WIRE_SRC_NID_OFF, 4);
        uint8_t want[6];
        if (src == P.nid ? memcmp(eth + 6, P.mac, 6) != 0
                         : lh_nid_to_mac(P.conf, src, want) || memcmp(eth + 6, want, 6) != 0) {
            bump(&P.st.rx_spoofed);
            return;
        }
    }
    bump(&P.st.rx_frames);
    ptl_lib_rx(0, eth + PTL_ETH_HLEN, h->tp_snaplen - PTL_ETH_HLEN);
}

int lh_packet_drain(int max, bool wait_turn)
{
    if (wait_turn)
        pthread_mutex_lock(&P.rx_m);
    else if (pthread_mutex_trylock(&P.rx_m))
        return 0;
    int n = 0;
    while (n < max) {
        struct tpacket2_hdr *h = slot(P.idx);
        uint32_t st = __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE);
        if (!(st & TP_STATUS_USER))
            break;
        deliver(h, st);
        __atomic_store_n(&h->tp_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
        P.idx = (P.idx + 1) % P.frame_nr;
        n++;
    }
    pthread_mutex_unlock(&P.rx_m);
    return n;
}

/* EtherType 0x88B5, and with by_pid only frames for `pid` (plus runts
 * too short to carry a pid, which the library counts).  Replacing a
 * filter is atomic in the kernel: no frame sees none. */
static int set_filter(uint32_t pid, bool by_pid)
{
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 12),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PTL_ETHERTYPE, 0, 5),
        BPF_STMT(BPF_LD | BPF_W | BPF_LEN, 0),
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, LH_DST_PID_OFF + 4, 0, 2),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, LH_DST_PID_OFF),
        /* BPF loads big-endian; the wire field is little-endian. */
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __builtin_bswap32(pid), 0, 1),
        BPF_STMT(BPF_RET | BPF_K, 0x40000),
        BPF_STMT(BPF_RET | BPF_K, 0),
    };
    if (!by_pid) /* the EtherType test jumps straight to "accept" */
        code[1] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
                                               PTL_ETHERTYPE, 4, 5);
    struct sock_fprog prog = { .len = sizeof(code) / sizeof(code[0]),
                               .filter = code };
    return setsockopt(P.fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog));
}

/* Admit frames for `pid` only. */
static void attach_filter(uint32_t pid)
{
    if (set_filter(pid, true) == 0)
        __atomic_store_n(&P.filter_pid, pid, __ATOMIC_RELAXED);
}

void lh_packet_reset_filter(void)
{
    pthread_mutex_lock(&P.filter_m);
    if (P.filter_pid != UINT64_MAX && set_filter(0, false) == 0)
        __atomic_store_n(&P.filter_pid, UINT64_MAX, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&P.filter_m);
}

int lh_packet_send(uint32_t src_pid, const struct iovec *iov, int n_iov)
{
    struct msghdr msg = { .msg_iov = (struct iovec *)iov,
                          .msg_iovlen = (size_t)n_iov };
    ssize_t r = sendmsg(P.fd, &msg, MSG_DONTWAIT);
    if (r < 0) {
        bump(errno == EAGAIN || errno == ENOBUFS ? &P.st.tx_busy
                                                 : &P.st.tx_errors);
        return -1;
    }
    bump(&P.st.tx_frames);
    if (__atomic_load_n(&P.filter_pid, __ATOMIC_RELAXED) != src_pid) {
        pthread_mutex_lock(&P.filter_m);
        if (P.filter_pid != src_pid)
            attach_filter(src_pid);
        pthread_mutex_unlock(&P.filter_m);
    }
    return 0;
}

void lh_packet_count_no_route(void) { bump(&P.st.tx_no_route); }

void lh_packet_stats(struct ptl_linux_stats *out)
{
    struct tpacket_stats ts;
    socklen_t len = sizeof(ts);
    /* The kernel zeroes its counters on every read: accumulate. */
    if (getsockopt(P.fd, SOL_PACKET, PACKET_STATISTICS, &ts, &len) == 0)
        __atomic_fetch_add(&P.st.rx_ring_drops, ts.tp_drops, __ATOMIC_RELAXED);
    out->rx_frames = __atomic_load_n(&P.st.rx_frames, __ATOMIC_RELAXED);
    out->rx_skipped = __atomic_load_n(&P.st.rx_skipped, __ATOMIC_RELAXED);
    out->rx_spoofed = __atomic_load_n(&P.st.rx_spoofed, __ATOMIC_RELAXED);
    out->rx_truncated = __atomic_load_n(&P.st.rx_truncated, __ATOMIC_RELAXED);
    out->rx_ring_drops = __atomic_load_n(&P.st.rx_ring_drops, __ATOMIC_RELAXED);
    out->tx_frames = __atomic_load_n(&P.st.tx_frames, __ATOMIC_RELAXED);
    out->tx_busy = __atomic_load_n(&P.st.tx_busy, __ATOMIC_RELAXED);
    out->tx_errors = __atomic_load_n(&P.st.tx_errors, __ATOMIC_RELAXED);
    out->tx_no_route = __atomic_load_n(&P.st.tx_no_route, __ATOMIC_RELAXED);
    out->filter_pid = __atomic_load_n(&P.filter_pid, __ATOMIC_RELAXED);
}
