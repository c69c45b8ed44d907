/*
 * libnx on Portals 4: what the files of this build share.
 *
 *   nx_portals.c  start-up (environment, NI, map), the event loop, exit, abort
 *   nx_ptl_send.c sends: eager copies, rendezvous, per-target queues, the
 *                 sender's half of flow control, control messages
 *   nx_ptl_recv.c receives, the saved-message queue, probes, mids, NX calls
 *   nx_ptl_flow.c unexpected space and the receiver's half of flow control
 *   nx_ptl_coll.c global operations
 *
 * Portal table entries (the same index on every rank):
 *   PT_DATA  every NX message (FLOWCTRL).  Match bits = type; bit 63 marks
 *            the library's own messages (global operations), so a type
 *            selector -1 never sees them.  Posted receives are priority MEs;
 *            overflow MEs (MANAGE_LOCAL) are the unexpected space.
 *   PT_RDV   senders expose rendezvous buffers here; receivers PtlGet them.
 *   PT_CTL   zero-byte control puts (flow-control PAUSE/ACK/UNPAUSE, start-up
 *            barrier, exit, abort): one persistent wildcard ME, so they never
 *            need buffer space and are never refused for lack of it.
 */
#ifndef NX_PTL_H
#define NX_PTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <portals4.h>

#define PT_DATA 0
#define PT_RDV 1
#define PT_CTL 2

#define MB_INTERNAL (1ULL << 63)
#define MB_TYPES (MB_INTERNAL - 1)
/* Never sent: the end marker of a drain search (see nx_ptl_flow.c). */
#define MB_NEVER (MB_INTERNAL | (1ULL << 62))

/* hdr_data of a data message: bit 63 = rendezvous announcement, then the
 * rendezvous id in bits 40..62 and the message length in bits 0..39. */
#define HD_RDV (1ULL << 63)
#define HD_LEN_MASK ((1ULL << 40) - 1)
#define HD_ID_SHIFT 40
#define HD_ID_MASK ((1ULL << 23) - 1)
#define NX_MAX_LEN ((long)HD_LEN_MASK)

/* hdr_data of a control message: op in bits 56..63, argument below. */
enum ctl_op { CTL_PAUSE = 1, CTL_PAUSE_ACK, CTL_UNPAUSE, CTL_BARRIER, CTL_EXITING, CTL_ABORT };
#define CTL_HD(op, arg) (((uint64_t)(op) << 56) | ((uint64_t)(arg) & ((1ULL << 56) - 1)))

/* Every object whose address travels as a Portals user_ptr starts with its
 * kind, so the event loop knows what an event is about. */
enum obj_kind { OBJ_REQ = 1, OBJ_MSG, OBJ_CTL, OBJ_OVF, OBJ_DRAIN, OBJ_DRAIN_END, OBJ_PROBE,
                OBJ_RELEASE };

struct saved;

/* A send or receive in progress: behind every mid, and behind the internal
 * messages of the global operations. */
struct nx_req {
    int kind; /* OBJ_REQ */
    bool in_use, is_recv, done, ignored, internal;
    int error;            /* EQ code found on completion (EQMSGLONG...) */
    char errmsg[160];
    /* receive */
    void *buf;
    long count;
    uint64_t bits, ignore;
    long nodesel;
    long *info_out;       /* irecvx's info[] */
    long info[4];         /* type, count, node, ptype of the message */
    bool posted;          /* an ME is on the priority list */
    uint64_t post_seq;    /* posting order, for messages to oneself */
    ptl_handle_me_t me;
    struct saved *wait_saved; /* drained message still arriving */
    ptl_handle_md_t get_md;   /* rendezvous pull */
    uint64_t get_len, get_got;
};

/* One data message on its way to a target (eager copy or rendezvous
 * announcement), kept until the target accepted it. */
enum msg_state { MSG_QUEUED, MSG_INFLIGHT, MSG_REJECTED, MSG_ACCEPTED };
struct nx_msg {
    int kind; /* OBJ_MSG */
    enum msg_state state;
    struct nx_msg *next;
    long target;
    uint64_t bits, hd;
    void *data;           /* eager: the copy in the bounce arena */
    size_t len;           /* eager bytes */
    int slot;             /* bounce slot, -1 if none */
    /* rendezvous */
    bool rdv, pulled;
    const void *rdv_buf;
    uint64_t rdv_len, rdv_got;
    ptl_handle_me_t rdv_me;
    struct nx_req *req;   /* completed when pulled (rendezvous) */
};

struct nx_peer {
    struct nx_msg *head, *tail; /* data messages in send order */
    int inflight;               /* data puts awaiting their ACK */
    int ctl_inflight;           /* control puts awaiting their ACK */
    bool paused;                /* its data PT is disabled: send nothing */
    bool pause_owed;            /* answer its PAUSE when inflight drops to 0 */
    uint64_t pause_epoch;
    uint64_t acked_epoch;       /* (we as target) its PAUSE_ACK for our epoch */
    bool exiting;               /* it sent EXITING: never sends data again */
};

/* A message taken off Portals' unexpected list by a drain, kept by the
 * library until a receive or probe wants it. */
struct saved {
    struct saved *next;
    long src;
    uint64_t bits, hd;
    uint64_t len;         /* eager bytes held in data */
    void *data;
    void *ovf_start;      /* where it is still arriving, if pending */
    bool pending;
    struct nx_req *waiter;
};

struct nx_state {
    bool up, aborting, exiting;
    int verbose;          /* TERN_NX_STATS: 1 counters at exit, 2 also trace recoveries */
    long rank, size;
    ptl_handle_ni_t ni;
    ptl_handle_eq_t eq_data, eq_misc;
    ptl_handle_md_t md_bounce, md_zero;
    ptl_ni_limits_t lim;
    size_t eager_max;
    struct nx_peer *peers;
    int ops_inflight, ops_max;
    int exit_pending;     /* our EXITING messages not yet acknowledged */
    bool starved;         /* something waits for an operation slot */
    long rdv_active;      /* rendezvous sends not yet pulled */
    uint64_t rdv_next;
    /* receiver side of flow control */
    bool recovering, draining;
    uint64_t epoch;
    struct saved *saved_head, *saved_tail;
    /* start-up barrier rounds received (bit per round) */
    uint64_t barrier_got;
    /* statistics, printed at exit when TERN_NX_STATS is set */
    uint64_t st_eager, st_rdv, st_unexpected, st_recoveries, st_resent, st_drained;
};
extern struct nx_state nx;

/* nx_portals.c */
void nx_progress(bool block);
void nx_progress_ms(unsigned ms); /* wait at most ms for a first event */
_Noreturn void nx_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
long nx_env_long(const char *name, long dflt);

void nx_control(long from, uint64_t hd); /* a control message arrived */

/* nx_ptl_send.c */
void nx_send_init(void);
struct nx_req *nx_send_raw(const char *call, long node, uint64_t bits, const void *buf, long len,
                           struct nx_req *r);
void nx_send_ack(struct nx_msg *m, const ptl_event_t *ev);
void nx_rdv_pulled(struct nx_msg *m, const ptl_event_t *ev);
void nx_ctl_send(long target, uint64_t hd, bool retry);
void nx_ctl_ack(void *rec, const ptl_event_t *ev);
void nx_peer_pause(long target, uint64_t epoch);
void nx_peer_unpause(long target);
void nx_kick(void);
bool nx_sends_idle(void);
bool nx_ctl_idle(void);

/* nx_ptl_recv.c */
struct nx_req *nx_req_new(const char *call, bool internal);
void nx_req_free(struct nx_req *r);
void nx_recv_post(struct nx_req *r);
void nx_recv_event(struct nx_req *r, const ptl_event_t *ev);
void nx_recv_reply(struct nx_req *r, const ptl_event_t *ev);
void nx_recv_take_saved(struct nx_req *r, struct saved *s);
void nx_probe_event(void *probe, const ptl_event_t *ev);
void nx_wait(struct nx_req *r);
struct nx_req *nx_coll_isend(long node, uint64_t bits, const void *buf, long len);
struct nx_req *nx_coll_irecv(long node, uint64_t bits, void *buf, long len);
void nx_coll_wait(struct nx_req *r); /* and release it */
void nx_self_send(uint64_t bits, const void *buf, long len);

/* nx_ptl_flow.c */
void nx_flow_init(void);
void nx_flow_event(const ptl_event_t *ev);
void nx_flow_pause_ack(long from, uint64_t epoch);
void nx_flow_peer_exiting(long from);
void nx_ovf_claimed(const ptl_event_t *ev);
void nx_saved_append(struct saved *s);
#endif
