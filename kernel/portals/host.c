/* The Portals host interface (portals/include/ptl_host.h) over the node's
 * NIC.  The library is entered from the Portals system call and the
 * kernel's own waits, with interrupts off (the syscall entry masks them and
 * netdev_wait enables them only while halted; no interrupt handler enters
 * the library).  Its lock is a spinlock that keeps interrupts off while
 * held, ready for other CPUs entering the library (what else here still
 * assumes one CPU: docs/kernel.md).
 *
 * Addressing is the rule shared with the Linux host: nid N is the station
 * with MAC 02:00:00:NN:NN:NN (locally administered, low 24 bits = nid).
 *
 * Interfaces share the NIC: interface 0 is the application's (pid
 * TERN_APP_PID), interface TERN_KERNEL_IFACE the kernel's own (pid
 * YOD_NODE_PID: registration, job loading and control).  With ranks per
 * core, rank r > 0 has interface r + 1 and pid TERN_APP_PID + r
 * (ptl_kernel_rank_iface).  A frame goes to the one its destination pid
 * names.
 *
 * A frame to this node's own nid never comes back from the wire (a switch or
 * bridge does not send a frame out of the port it came in by), so it is
 * looped here instead, as the Linux host does (lh_loop.c): copied into a
 * ring in ptl_host_send and handed to the library at the next poll or wait.
 * Without it a program's message to itself (NX allows one; libnx's
 * flow-control PAUSE goes to every rank, the receiver included) was
 * resent until Portals gave up on its own node. */
#include "boot.h"
#include "cpu.h"
#include "kernel.h"
#include "kmalloc.h"
#include "layout.h"
#include "msgtrace.h"
#include "netdev.h"
#include "process.h"
#include "ptl_host.h"
#include "ptl_kernel.h"
#include "ptl_lib.h"
#include "ptl_wire.h"
#include "ranks.h"
#include "spinlock.h"
#include "thread.h"
#include "time.h"
#include "wait.h"
#include <tern/yod_proto.h>

#define HDR_MAX (PTL_WIRE_HDR_LEN + PTL_WIRE_ACKREC_LEN) /* a header and its ACK record */
#define SMALL_FRAME 1500           /* frames the static buffers below take */

static uint32_t my_nid, app_jid;
/* Portals frames (header + payload) are at most this: the NIC's MTU where
 * the buffers below could be made that large, else SMALL_FRAME. */
static uint32_t frame_max;
/* For frames with more pieces than the NIC takes (iovec buffers of many
 * small pieces): the frame is gathered here and sent synchronously, so one
 * buffer serves all such frames.  A static one for 1500-byte frames; for a
 * larger MTU one of the kernel heap (ptl_kernel_init). */
static uint8_t bounce_small[ETH_HLEN + SMALL_FRAME] __attribute__((aligned(16)));
static uint8_t *bounce_frame = bounce_small;
static size_t bounce_len = sizeof bounce_small;
/* The application's x87/SSE registers while the library computes float
 * atomics (fxsave needs 16-byte alignment). */
static uint8_t fpu_save[512] __attribute__((aligned(16)));
static int fpu_depth;

/* Frames to this node (see the top), in a circular byte ring of records,
 * 8-byte aligned; a record that does not fit before the end is preceded by
 * a wrap marker.  A record holds the Portals header and, where the payload
 * is one piece the kernel can read from any core (the direct map: a rank's
 * buffers, kernel memory), only its address: the library keeps that piece
 * unchanged until the frame is acknowledged (ptl_host.h), as it does for
 * the NIC's DMA, so the receiving side copies it once, straight from the
 * sender's buffer into the matched one (ptl_lib_rx_parts).  Other payloads
 * (an iovec frame's several pieces, a single-process program's own user
 * addresses, read under its page tables only) are copied into the record.
 * Full: the send fails and the library resends later (a lost frame).  128
 * KiB statically (hundreds of frames by reference, 87 copied frames of 1500
 * bytes: more than a window); with a larger MTU one of LOOP_FRAMES copied
 * frames from the kernel heap where that is more. */
#define LOOP_SMALL (128u * 1024u)
#define LOOP_FRAMES 4u
#define LOOP_WRAP 0xFFFFFFFFu
struct loop_rec {
    uint32_t size;           /* of the whole record; LOOP_WRAP: wrap marker */
    uint32_t hdr_len;        /* the header follows this struct */
    const uint8_t *payload;  /* NULL: the payload follows the header */
    uint64_t payload_len;
};
static uint8_t loop_small[LOOP_SMALL] __attribute__((aligned(8)));
static uint8_t *loop_ring = loop_small;
static uint32_t loop_bytes = LOOP_SMALL;
static uint32_t loop_rd, loop_wr, loop_used;
static uint64_t loop_frames, loop_full, loop_by_ref;

static uint32_t loop_rec_size(uint32_t stored)
{
    return (uint32_t)sizeof(struct loop_rec) + ((stored + 7) & ~7u);
}

static bool loop_readable_anywhere(const void *p)
{
    return (uintptr_t)p >= PHYS_BASE;
}

static int loop_send(const struct ptl_sg *sg, int n_sg)
{
    size_t len = 0, pieces = 0;
    const struct ptl_sg *piece = NULL;
    for (int i = 1; i < n_sg; i++) {
        len += sg[i].len;
        if (sg[i].len)
            pieces++, piece = &sg[i];
    }
    if (sg[0].len + len > frame_max)
        return -1;
    bool by_ref = pieces == 1 && loop_readable_anywhere(piece->base);
    uint32_t stored = (uint32_t)(sg[0].len + (by_ref ? 0 : len));
    uint32_t need = loop_rec_size(stored);
    uint32_t tail = loop_bytes - loop_wr;     /* a multiple of 8, at least 8 */
    uint32_t skip = tail < need ? tail : 0;
    if (loop_used + skip + need > loop_bytes) {
        loop_full++;
        return -1;
    }
    if (skip) {
        *(uint32_t *)(loop_ring + loop_wr) = LOOP_WRAP;
        loop_used += skip;
        loop_wr = 0;
    }
    struct loop_rec *r = (struct loop_rec *)(loop_ring + loop_wr);
    r->size = need;
    r->hdr_len = (uint32_t)sg[0].len;
    r->payload = by_ref ? piece->base : NULL;
    r->payload_len = len;
    uint8_t *d = (uint8_t *)(r + 1);
    memcpy(d, sg[0].base, sg[0].len);
    d += sg[0].len;
    for (int i = 1; i < n_sg && !by_ref; i++) {
        memcpy(d, sg[i].base, sg[i].len);
        d += sg[i].len;
    }
    loop_used += need;
    loop_wr = (loop_wr + need) % loop_bytes;
    loop_frames++;
    loop_by_ref += by_ref;
    return 0;
}

static unsigned iface_of(const uint8_t *ptl, size_t len);
static void rx_frame(const void *frame, size_t len, void *arg);

static uint64_t kernel_iface_frames;

uint64_t ptl_kernel_iface_frames(void) { return __atomic_load_n(&kernel_iface_frames, __ATOMIC_RELAXED); }

/* The interface a frame goes to, counted for the kernel's own. */
static unsigned iface_counted(const uint8_t *ptl, size_t len)
{
    unsigned i = iface_of(ptl, len);
    if (i == TERN_KERNEL_IFACE)
        __atomic_add_fetch(&kernel_iface_frames, 1, __ATOMIC_RELAXED);
    return i;
}

/* Hands the looped frames to the library, those its handling loops as well
 * (a put's ACK).  A record is freed only after ptl_lib_rx returns: frames
 * sent meanwhile go elsewhere in the ring.  Returns the frames delivered. */
static int loop_deliver(void)
{
    int n = 0;
    while (loop_used) {
        const struct loop_rec *r = (const struct loop_rec *)(loop_ring + loop_rd);
        if (r->size == LOOP_WRAP) {
            loop_used -= loop_bytes - loop_rd;
            loop_rd = 0;
            continue;
        }
        const uint8_t *h = (const uint8_t *)(r + 1);
        const uint8_t *p = r->payload ? r->payload : h + r->hdr_len;
        ptl_lib_rx_parts(iface_counted(h, r->hdr_len), h, r->hdr_len, p, r->payload_len);
        uint32_t sz = r->size;
        loop_used -= sz;
        loop_rd = (loop_rd + sz) % loop_bytes;
        n++;
    }
    if (!loop_used)
        loop_rd = loop_wr = 0;
    return n;
}

void ptl_kernel_loop_discard(void)
{
    loop_rd = loop_wr = loop_used = 0;
}

void ptl_kernel_loop_stats(uint64_t *frames, uint64_t *full, uint64_t *by_ref)
{
    *frames = loop_frames;
    *full = loop_full;
    *by_ref = loop_by_ref;
}

void ptl_kernel_init(void)
{
    if (!netdev_present())
        return;
    const uint8_t *m = netdev_mac();
    uint32_t from_mac = (uint32_t)m[3] << 16 | (uint32_t)m[4] << 8 | m[5];
    my_nid = options.nid >= 0 ? (uint32_t)options.nid : from_mac;
    bool rule = m[0] == 2 && m[1] == 0 && m[2] == 0 && my_nid == from_mac;
    kprintf("portals: nid %u%s\n", my_nid,
            rule ? "" : " (MAC is not 02:00:00:<nid>: peers using the nid rule will not reach "
                        "this node)");
    if (cpu.ring0_interpreted)
        ptl_crc32c_forbid_hw();    /* the emulator may lack `crc32` (cpu.h) */
    frame_max = SMALL_FRAME < netdev_mtu() ? SMALL_FRAME : netdev_mtu();
    unsigned mtu = netdev_mtu();
    if (mtu > SMALL_FRAME) {
        uint32_t loop_want = LOOP_FRAMES * loop_rec_size(mtu);
        uint8_t *b = kmalloc(ETH_HLEN + mtu);
        uint8_t *l = loop_want > LOOP_SMALL ? kmalloc(loop_want) : loop_small;
        if (b && l) {
            bounce_frame = b, bounce_len = ETH_HLEN + mtu;
            if (l != loop_small)
                loop_ring = l, loop_bytes = loop_want;
            frame_max = mtu;
        } else {
            kfree(b);
            if (l != loop_small)
                kfree(l);
            kprintf("portals: no kernel heap for frames of %u bytes: frames of %u\n", mtu,
                    SMALL_FRAME);
        }
    }
}

_Static_assert(TERN_PTL_IFACES - 1 == TERN_PORTALS_RANKS_PER_NODE,
              "yod's default ranks per node is what the interfaces allow");

unsigned ptl_kernel_rank_iface(unsigned index)
{
    if (index == 0)
        return 0;
    return index + 1 < TERN_PTL_IFACES ? index + 1 : TERN_PTL_IFACES;
}

/* The rank an application interface belongs to, or -1 (no such rank now). */
static int rank_of_iface(unsigned iface)
{
    if (iface == 0)
        return 0;
    if (iface <= TERN_KERNEL_IFACE || iface >= TERN_PTL_IFACES || iface - 1 >= ranks_count())
        return -1;
    return (int)iface - 1;
}

static bool iface_ok(unsigned iface)
{
    return iface == TERN_KERNEL_IFACE || rank_of_iface(iface) >= 0;
}

bool ptl_kernel_available(void) { return netdev_present(); }
void ptl_kernel_set_app_jid(uint32_t jid) { app_jid = jid; }
uint32_t ptl_kernel_nid(void) { return my_nid; }

void *ptl_host_alloc(size_t size) { return kmalloc(size); }
void ptl_host_free(void *p) { kfree(p); }
uint64_t ptl_host_now_ns(void) { return time_monotonic_ns(); }
/* The library's lock, also held around handing frames to it (nic_take):
 * with ranks per core several cores take frames from the NIC and the loop
 * ring, and the exit of one rank (its report to yod) runs beside another's
 * calls without the serial lock, so the NIC's rings and the loop ring are
 * the lock's too.  Recursive on one CPU: ptl_lib_rx takes it again inside,
 * and ptl_host_send, called with it held, loops frames into the ring. */
static spinlock_t lib_lock = SPINLOCK_INIT;
static uint64_t lib_lock_flags;     /* the holder's interrupt state */
static volatile int lib_owner = -1; /* the CPU holding it */
static unsigned lib_depth;

void ptl_host_lock(void)
{
    uint64_t f = irq_save();
    int me = (int)this_cpu()->index;
    if (lib_owner == me) {         /* interrupts were off already */
        lib_depth++;
        return;
    }
    spin_lock(&lib_lock);
    lib_owner = me;
    lib_depth = 1;
    lib_lock_flags = f;
}

void ptl_host_unlock(void)
{
    if (--lib_depth)
        return;
    lib_owner = -1;
    spin_unlock_irqrestore(&lib_lock, lib_lock_flags);
}

/* What has arrived, looped or from the NIC, handed to the library under
 * its lock (above).  Returns the frames. */
static int nic_take(void)
{
    ptl_host_lock();
    int n = loop_deliver();
    n += netdev_poll(rx_frame, NULL);
    ptl_host_unlock();
    return n;
}

int ptl_host_iface_info(unsigned iface, struct ptl_host_iface_info *info)
{
    if (!iface_ok(iface) || !netdev_present())
        return -1;
    info->nid = my_nid;
    if (iface == TERN_KERNEL_IFACE) {
        info->pid = YOD_NODE_PID;
        info->uid = 0;
        info->jid = 0;
    } else {
        info->pid = TERN_APP_PID + (unsigned)rank_of_iface(iface);
        info->uid = options.uid;
        info->jid = app_jid;
    }
    info->frame_max = frame_max;
    /* Both NICs are Ethernet: a damaged frame fails the FCS and is dropped
     * before it reaches a ring (in QEMU, frames move between memories). */
    info->link_checks_payload = !options.payload_crc;
    return 0;
}

void ptl_host_tx_batch(bool on) { netdev_tx_batch(on); }

/* Asynchronous: the Ethernet and Portals headers (the latter valid only
 * during this call) are copied into the NIC's transmit slot; the payload
 * pieces are queued by reference, as the library keeps them unchanged until
 * the frame is acknowledged (ptl_host.h).  So many frames are in flight and
 * the CPU never waits for one to leave. */
int ptl_host_send(unsigned iface, uint32_t dst_nid, const struct ptl_sg *sg, int n_sg)
{
    if (!iface_ok(iface) || n_sg < 1 || sg[0].len > HDR_MAX || dst_nid > 0xFFFFFF)
        return -1;
    if (ETH_HLEN + sg[0].len > NETDEV_COPY_MAX)
        return -1;
    if (dst_nid == my_nid) {
        int rc = loop_send(sg, n_sg);
        /* Another rank of this node may be halted waiting for it. */
        if (rc == 0 && ranks_active())
            netdev_kick_waiters();
        return rc;
    }
    uint8_t h[ETH_HLEN + HDR_MAX];
    const uint8_t *src = netdev_mac();
    h[0] = 0x02, h[1] = 0, h[2] = 0;
    h[3] = (uint8_t)(dst_nid >> 16), h[4] = (uint8_t)(dst_nid >> 8), h[5] = (uint8_t)dst_nid;
    memcpy(h + ETH_ALEN, src, ETH_ALEN);
    h[12] = PTL_ETHERTYPE >> 8, h[13] = PTL_ETHERTYPE & 0xFF;
    memcpy(h + ETH_HLEN, sg[0].base, sg[0].len);
    size_t hlen = ETH_HLEN + sg[0].len;

    struct net_sg out[NETDEV_MAX_SG - 1];
    int n = 0, pieces = 0;
    for (int i = 1; i < n_sg; i++)
        pieces += sg[i].len != 0;
    if (pieces <= NETDEV_MAX_SG - 1) {
        for (int i = 1; i < n_sg; i++)
            if (sg[i].len)
                out[n++] = (struct net_sg){sg[i].base, sg[i].len};
        return netdev_send_async(h, hlen, out, n) == 0 ? 0 : -1;
    }
    memcpy(bounce_frame, h, hlen);
    size_t off = hlen;
    for (int i = 1; i < n_sg; i++) {
        if (off + sg[i].len > bounce_len)
            return -1;
        memcpy(bounce_frame + off, sg[i].base, sg[i].len);
        off += sg[i].len;
    }
    out[0] = (struct net_sg){bounce_frame, off};
    return netdev_send(out, 1) == 0 ? 0 : -1;
}

/* The destination pid picks the interface (a rank's pid its rank's); a
 * frame too short to hold it, or for no pid here, goes to interface 0,
 * whose library counts it. */
static unsigned iface_of(const uint8_t *ptl, size_t len)
{
    if (len < PTL_WIRE_DST_PID_OFF + 4)
        return 0;
    uint32_t pid = ptl_wire_dst_pid(ptl);
    if (pid == YOD_NODE_PID)
        return TERN_KERNEL_IFACE;
    if (pid > TERN_APP_PID && pid - TERN_APP_PID < ranks_count()) {
        unsigned i = ptl_kernel_rank_iface(pid - TERN_APP_PID);
        return i < TERN_PTL_IFACES ? i : 0;
    }
    return 0;
}

static void rx_frame(const void *frame, size_t len, void *arg)
{
    (void)arg;
    const uint8_t *f = frame;
    if (len <= ETH_HLEN || f[12] != PTL_ETHERTYPE >> 8 || f[13] != (PTL_ETHERTYPE & 0xFF))
        return;
    PTL_TRACE(TP_RX_FRAME);
    ptl_lib_rx(iface_counted(f + ETH_HLEN, len - ETH_HLEN), f + ETH_HLEN, len - ETH_HLEN);
}

/* The library takes frames only in ptl_host_wait, and a program that keeps
 * issuing operations without waiting (a stream of puts) would never see the
 * acknowledgements that free its operation slots: hand over whatever has
 * arrived on every Portals call instead.  A look at one descriptor when
 * nothing has. */
int ptl_kernel_poll(void)
{
    if (!netdev_present())
        return 0;
    int n = nic_take();
    if (n && ranks_active())         /* some may be for a rank halted elsewhere */
        netdev_kick_waiters();
    return n;
}

void ptl_host_wait(uint64_t deadline_ns)
{
    if (!netdev_present()) {
        if (deadline_ns != UINT64_MAX)
            time_sleep_until(deadline_ns);
        return;
    }
    uint64_t kicks = netdev_kicks();     /* before looking: see netdev_wait_since */
    if (nic_take() > 0) {
        if (ranks_active())           /* some may be for a rank halted elsewhere */
            netdev_kick_waiters();
        wait_serve(true);
        return;
    }
    /* Woken at least once per the hook's period, so that (while a job
     * runs) a program blocked here still sees its yod go silent.  A thread
     * waiting in the program's Portals call lets the serial lock go while
     * halted: another thread's call (PtlAbort, the put it waits for) must
     * not wait for this wait to end. */
    struct thread *t = thread_current();
    /* The caller's interface mask (ptl_lib_restrict) is the library's one
     * global: while the lock is let go another rank's call sets its own, and
     * the kernel's code (a rank's end report on another core) must find
     * none.  So none while let go, the caller's again once retaken. */
    uint32_t mask = ptl_lib_restrict(0);
    bool released = t && t->portals_wait && serial_release();
    if (!released)
        ptl_lib_restrict(mask);
    netdev_wait_since(wait_bound(deadline_ns, true), kicks);
    serial_retake(released);
    ptl_lib_restrict(mask);
    if (nic_take() > 0 && ranks_active())
        netdev_kick_waiters();
    wait_serve(true);
}

/* The kernel never uses the vector registers, so what is in them belongs to
 * the application: park it, give the library a clean control state (the
 * application may have unmasked exceptions), put it back.  Legacy SSE code
 * leaves the upper halves of AVX registers alone, so fxsave covers all the
 * library can change. */
void ptl_host_fpu_begin(void)
{
    if (fpu_depth++)
        return;
    static const uint32_t mxcsr_default = 0x1F80;
    __asm__ volatile("fxsave64 %0" : "=m"(fpu_save));
    __asm__ volatile("fninit; ldmxcsr %0" ::"m"(mxcsr_default));
}

void ptl_host_fpu_end(void)
{
    if (--fpu_depth)
        return;
    __asm__ volatile("fxrstor64 %0" ::"m"(fpu_save));
}

/* PtlAbort: waits on other cores (ranks per core) look again. */
void ptl_host_wake(void)
{
    if (ranks_active())
        netdev_kick_waiters();
}
