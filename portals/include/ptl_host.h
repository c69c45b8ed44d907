/*
 * The host interface: the only functions a Portals host (the Tern kernel,
 * the Linux AF_PACKET layer, the in-process test wire) implements.  The
 * library in portals/lib calls these and nothing else outside itself, apart
 * from memcpy/memset/memmove/memcmp/strlen.
 *
 * Direction host -> library is in ptl_lib.h (ptl_lib_rx, ptl_lib_progress).
 *
 * Concurrency: the library serialises itself with ptl_host_lock/unlock.  It
 * never calls ptl_host_wait with the lock held, and ptl_lib_rx takes the
 * lock itself, so a host may call ptl_lib_rx from inside ptl_host_wait (the
 * expected design) or from another thread.  A kernel host can make the lock
 * "interrupts off" and the library works for a single-threaded caller that
 * only makes progress inside Ptl* calls.
 */
#ifndef PTL_HOST_H
#define PTL_HOST_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>

/* One piece of a frame.  ptl_host_send gets the Portals header first, then
 * zero or more pieces pointing straight into user buffers (zero copy). */
struct ptl_sg {
    const void *base;
    size_t len;
};

struct ptl_host_iface_info {
    uint32_t nid;      /* this node's id on the Portals network */
    uint32_t pid;      /* pid used when PtlNIInit asks for PTL_PID_ANY */
    uint32_t uid;      /* user id stamped on outgoing frames */
    uint32_t jid;      /* job id stamped on outgoing frames */
    uint32_t frame_max; /* bytes after the Ethernet header: the MTU (1500,
                         * 9000, up to 65520 on the virtual cluster's
                         * fabric); at least 256 */
    /* 1: the link drops frames whose bytes it damaged (Ethernet's FCS,
     * checked by every NIC; memory between virtual NICs), so frames sent
     * here carry no checksum (PTL_WF_LINKCRC).  0, the default of a host
     * that does not say: header and payload are checksummed, for links
     * that may deliver damaged frames, and frames without a checksum are
     * refused. */
    uint32_t link_checks_payload;
};

/* Memory for library objects.  Must not fail silently: return NULL. */
void *ptl_host_alloc(size_t size);
void ptl_host_free(void *p);

/* Monotonic clock in nanoseconds; drives retransmission and give-up. */
uint64_t ptl_host_now_ns(void);

void ptl_host_lock(void);
void ptl_host_unlock(void);

/* Describe interface `iface` (PTL_IFACE_DEFAULT is mapped to 0 by the
 * library).  Return 0, or -1 if there is no such interface. */
int ptl_host_iface_info(unsigned iface, struct ptl_host_iface_info *info);

/* Transmit one frame to node dst_nid on interface iface.  sg[0] is the
 * Portals header (library memory valid only during the call: copy it); the
 * other pieces point into user or library buffers that stay valid and
 * unchanged until the library has seen the frame acknowledged, so they may
 * be DMA'd after return.  The host adds the Ethernet header.  Returns 0 if
 * the frame was queued, negative if not (the library treats that as a lost
 * frame and retransmits later).  Called with the library lock held: it must
 * not call ptl_lib_rx itself.  Frames for the node's own nid (a process
 * talking to itself) must be queued and handed to ptl_lib_rx later, from
 * ptl_host_wait. */
int ptl_host_send(unsigned iface, uint32_t dst_nid, const struct ptl_sg *sg,
                  int n_sg);

/* A burst of ptl_host_send calls: between on and off the host may hold the
 * NIC's doorbell after the burst's first frame, and ring it once at off for
 * the frames queued meanwhile.  Under an emulator each doorbell is an exit
 * of the emulated CPU (about 11 us under TCG), and the device, idle again
 * by the next frame, asked for one per frame.  Called with the lock held;
 * a host whose sends leave at once does nothing. */
void ptl_host_tx_batch(bool on);

/* Block until a frame has been handed to ptl_lib_rx or the clock reaches
 * deadline_ns (UINT64_MAX: no timer pending).  Called without the lock.  May
 * return early (spuriously). */
void ptl_host_wait(uint64_t deadline_ns);

/* Wake every thread blocked in ptl_host_wait now (PtlAbort); they return
 * and the library looks again.  Called with the lock held, so it must not
 * take it.  A single-threaded host does nothing. */
void ptl_host_wake(void);

/* Bracket floating-point work (atomic_fp.c); a kernel built with
 * -mgeneral-regs-only saves/restores the SSE state here. */
void ptl_host_fpu_begin(void);
void ptl_host_fpu_end(void);

#endif /* PTL_HOST_H */
