/*
 * Library entry points for hosts (the reverse direction of ptl_host.h) and
 * introspection used by tests.
 */
#ifndef PTL_LIB_H
#define PTL_LIB_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

/* A received frame, starting at the Portals header (Ethernet header already
 * stripped).  The library copies the payload at most once, straight into the
 * matched buffer, and never keeps a pointer to `frame` after returning. */
void ptl_lib_rx(unsigned iface, const void *frame, size_t len);
/* The same frame with its header (PTL_WIRE_HDR_LEN bytes) and payload apart:
 * for a host that loops a frame between processes of one node by reference
 * (the header copied, the payload read from the sender's buffer here, which
 * the sender keeps unchanged until the frame is acknowledged), so that a
 * message between them is copied once, sender's buffer to matched buffer. */
void ptl_lib_rx_parts(unsigned iface, const void *hdr, size_t hdr_len,
                      const void *payload, size_t payload_len);

/* Run due timers (retransmissions, delayed acks, give-up) and push queued
 * frames.  Ptl* calls do this themselves; hosts may call it from a timer. */
void ptl_lib_progress(void);
/* Whether an event waits in EQ h (a ptl_handle_eq_t; false for a bad
 * handle), without the progress walk every Ptl* call makes first: for a
 * host that has just run one, or will right after (kernel/job/knode.c, in
 * a Portals wait). */
bool ptl_lib_eq_pending(uint32_t h);
/* For a host whose callers are not equally trusted (a kernel serving an
 * application beside its own NIs): until called again with 0, handles of
 * NIs on interfaces outside iface_mask (bit i = interface i) are invalid and
 * PtlNIInit refuses those interfaces. */
uint32_t ptl_lib_restrict(uint32_t iface_mask);     /* returns the mask it replaces */
/* Releases every NI of an interface and everything on it, however many
 * PtlNIInit references it has (a kernel ending an application's job). */
void ptl_lib_iface_reset(unsigned iface);
/* Forgets the state kept for the process nid/pid on every NI of an interface
 * (peers are otherwise kept as long as the NI), where nothing is pending
 * with it: no message queued or unacknowledged either way, no operation of
 * ours referring to it, no ACK/REPLY of ours to it outstanding.  For a host
 * whose long-lived NI talks to a stream of short-lived processes (a kernel
 * and each job's launcher).  Returns how many peers were freed. */
int ptl_lib_forget_peer(unsigned iface, uint32_t nid, uint32_t pid);
/* Whether the MD, ME or LE that handle h names still exists (an entry
 * unlinked but still busy counts) and its buffer is the iovec array iov:
 * for a host that gave the library a copy of a caller's iovec array (a
 * kernel that cannot let the application rewrite it later) and frees the
 * copy once nothing uses it. */
bool ptl_lib_iovec_in_use(uint32_t h, const void *iov);

/* Whether md is a live MD over the whole address space (start NULL, length
 * PTL_SIZE_MAX): its offsets are addresses, which a host that must keep a
 * caller inside its own memory checks per operation. */
bool ptl_lib_md_whole(uint32_t md);

/* Why an ACK held for the program's next message (ack_hold_ns) went
 * alone before its hold ran out; each is counted (struct ptl_lib_stats). */
enum ptl_held_release {
    PTL_HELD_WAIT = 1,  /* the program waits: it sends nothing meanwhile */
    PTL_HELD_FRAME,     /* a frame came in that asked for an ack, or while the program computes */
    PTL_HELD_DUE,       /* the peer's acknowledgement was due (ack_delay_ns) */
};

/* The caller will not send for a while (it is about to halt: PTL_HELD_WAIT,
 * or it took frames in while the program computes: PTL_HELD_FRAME): ACKs
 * held for the program's next message go now, standalone. */
void ptl_lib_send_held(enum ptl_held_release why);

/* Earliest time ptl_lib_progress has work to do; UINT64_MAX if none. */
uint64_t ptl_lib_next_deadline(void);

/* When a host whose program computes after a call should come back to the
 * library (ptl_lib_progress) for the acknowledgements it delays on its own
 * (an ack owed, an ACK held for the program's answer): the first boundary
 * of the library's timer grain (about 4 ms) after the earliest of them;
 * UINT64_MAX if none.  It may still count one that already went.  No lock
 * and no walk, so a host may ask after every call.  Rounded because the
 * library's retransmission deadlines are, so a timer already set for them
 * usually serves: under an emulator a timer write wakes its I/O thread,
 * and one at the exact time after every message cost a 2-node NX
 * ping-pong 15-25 % of its latency (docs/performance.md). */
uint64_t ptl_lib_acks_due_by(void);

/* Frame-level counters per interface.  Every dropped frame lands in exactly
 * one rx_bad_* / rx_* drop counter. */
struct ptl_lib_stats {
    uint64_t rx_frames;      /* Portals frames received (PTL_WF_MORE: several a link frame) */
    uint64_t rx_short;       /* shorter than the header / length mismatch */
    uint64_t rx_bad_version;
    uint64_t rx_bad_crc;
    uint64_t rx_bad_op;      /* unknown op or flags */
    uint64_t rx_bad_field;   /* lengths/offsets/types inconsistent */
    uint64_t rx_not_for_us;  /* wrong nid, or no NI with that pid/type */
    uint64_t rx_stale;       /* old session */
    uint64_t rx_dup;         /* duplicate frames (re-acked, dropped) */
    uint64_t rx_ooo_dropped; /* out of order, not placeable: sender resends */
    uint64_t rx_ooo_placed;  /* out of order, placed and selectively acked */
    uint64_t rx_window;      /* beyond the receive window */
    uint64_t rx_no_resources; /* no response slot: dropped unacked */
    uint64_t tx_frames;
    uint64_t tx_retransmits;
    uint64_t tx_host_busy;   /* ptl_host_send refused a frame */
    uint64_t acks_sent;      /* standalone reliability acks */
    uint64_t peer_failures;  /* peers given up on (ops -> UNDELIVERABLE) */
    /* Added later; hosts that only copy the struct need no change. */
    uint64_t tx_timeouts;    /* of tx_retransmits: sent because a timer ran out */
    uint64_t tx_fast_retransmits; /* of tx_retransmits: loss seen in acks */
    uint64_t peer_restarts;  /* peer came back without our stream's state */
    uint64_t rx_dup_unchecked; /* of rx_dup: known copies, dropped before the checksum */
    uint64_t peers_reclaimed; /* the table was full: an old peer made room */
    uint64_t tx_carried;     /* ACKs sent in another frame's header (PTL_WF_ACKIN), not in tx_frames */
    /* ACKs held for the program's next message that went alone instead:
     * the hold ran out (the program answered later than ack_hold_ns, or the
     * peer's acknowledgement was due first), or it was released early
     * (enum ptl_held_release).  On a slow host the first two grow with the
     * program's delays and the peer's resends; a release with no cause of
     * these kinds would cost a frame for nothing. */
    uint64_t acks_alone_time;
    uint64_t acks_alone_wait;
    uint64_t acks_alone_frame;
    /* Frames that came before the NI they address, kept (tunables'
     * park_frames) and then handed to it once made. */
    uint64_t rx_parked;
    uint64_t rx_unparked;
};
int ptl_lib_get_stats(unsigned iface, struct ptl_lib_stats *out);

/* Reliability timing; defaults suit a LAN.  Tests shorten them. */
struct ptl_lib_tunables {
    uint64_t rto_init_ns;  /* first retransmission timeout */
    uint64_t rto_max_ns;   /* backoff cap */
    uint64_t giveup_ns;    /* unanswered this long: peer is unreachable */
    uint64_t ack_delay_ns; /* max delay of a standalone ack */
    /* The retransmission timeout adapts to the measured round trip
     * (rto_init_ns is only used before the first sample); it never goes
     * below rto_min_ns (0: 200 us) nor above rto_max_ns. */
    uint64_t rto_min_ns;
    /* How long an ACK may wait for the program's next message to the same
     * peer, to ride in its header (PTL_WF_ACKIN); 0: sent at once.  Held
     * only while nothing else waits on it: ptl_lib_send_held. */
    uint64_t ack_hold_ns;
    /* How many frames (8 at most, 256 payload bytes each) that come before
     * the NI they address are kept for it, to be handed over once it is
     * made; 0: dropped, as frames to no NI.  For a host whose programs'
     * NIs appear after their peers may send (a Tern node).  A Linux
     * process, which sees its node's other processes' frames, keeps none. */
    uint64_t park_frames;
};
void ptl_lib_get_tunables(struct ptl_lib_tunables *t);
void ptl_lib_set_tunables(const struct ptl_lib_tunables *t);

#endif /* PTL_LIB_H */
