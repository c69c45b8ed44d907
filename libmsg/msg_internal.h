/*
 * The message engine's files share this (the layers see only msg.h).
 *
 *   msg_start.c  start-up (environment, NI, map), the event loop, exit, abort
 *   msg_send.c   sends: eager copies, rendezvous, per-target queues, the
 *                sender's half of flow control, control messages
 *   msg_recv.c   requests, receives, the saved-message queue, probes
 *   msg_mprobe.c matched probes: a message taken out of matching, received later
 *   msg_flow.c   unexpected space and the receiver's half of flow control
 *   msg_cancel.c the cancel of a send: the sender's question, the receiver's
 *                search and answer
 *   msg_barrier.c  barriers on triggered operations and counters
 *
 * Portal table entries (the same index on every rank):
 *   PT_DATA  every message (FLOWCTRL).  Match bits are the layer's.  Posted
 *            receives are priority MEs; overflow MEs (MANAGE_LOCAL) are the
 *            unexpected space.
 *   PT_RDV   senders expose rendezvous buffers here; receivers PtlGet them.
 *   PT_CTL   zero-byte control puts (flow-control PAUSE/ACK/UNPAUSE, start-up
 *            barrier, exit, abort, barrier wake-up): one persistent wildcard
 *            ME, so they never need buffer space and are never refused for
 *            lack of it.
 *   PT_COLL  barriers forwarded by Portals (msg_barrier.c): per barrier
 *            object one persistent zero-byte ME per round, counting on a CT;
 *            only the last round's makes events; no flow control.
 *            Allocated at the first msg_barrier_new.
 */
#ifndef MSG_INTERNAL_H
#define MSG_INTERNAL_H

#include "msg.h"

#define PT_DATA 0
#define PT_RDV 1
#define PT_CTL 2
#define PT_COLL 3

/* hdr_data of a data message: bit 63 = rendezvous announcement, bit 62 =
 * synchronous, then the message's id in bits 40..61 (rendezvous and eager
 * messages count apart; a receiver finds a cancelled send by it), bit 39 = late (its
 * buffer is not exposed: the receive that matches it exposes its own
 * buffer and sends CTL_READY, and the sender puts the message there), and
 * the message length in bits 0..38 (512 GiB, more than any node holds;
 * msg_isend refuses longer).  An announcement that
 * carries the message's first bytes has MSG_BIT_PUSHED in its match bits
 * (msg_send.c).  A synchronous one is pulled even when all of it came with
 * the announcement: it may have landed with no receive yet (msg_flow.c),
 * and only a receive's get may complete the send. */
#define HD_RDV (1ULL << 63)
#define HD_SYNC (1ULL << 62)
#define HD_LATE (1ULL << 39)
#define HD_LEN_MASK ((1ULL << 39) - 1)
#define HD_ID_SHIFT 40
#define HD_ID_MASK ((1ULL << 22) - 1)
/* In the match bits of a receiver's get (PT_RDV, which ignores it): its
 * receive was posted when the announcement came. */
#define RDV_GET_POSTED (1ULL << 62)
/* In the match bits of a late send's put into its receive (PT_RDV, beside
 * the id; no exposure's bits have it). */
#define RDV_LATE_PUT (1ULL << 61)

/* hdr_data of a control message: op in bits 56..63, argument below. */
/* CTL_WAKE: sent by a rank to itself by a triggered put when a barrier of
 * msg_barrier.c is complete (where the last round's arrival did not
 * complete it); its only effect is the event that ends the engine's
 * blocking wait.  CTL_READY: the receive that matched the late rendezvous
 * send with this id (HD_LATE) is exposed, put the message into it. */
enum ctl_op { CTL_PAUSE = 1, CTL_PAUSE_ACK, CTL_UNPAUSE, CTL_BARRIER, CTL_EXITING, CTL_ABORT,
              CTL_WAKE, CTL_READY, CTL_CANCEL, CTL_CANCEL_ANS };
/* CTL_CANCEL: take the unmatched message with this id (CANCEL_RDV: a
 * rendezvous one; the control put's match bits are the message's) out of
 * matching, and answer CTL_CANCEL_ANS with the same bits, CANCEL_DONE set
 * if it was (msg_cancel.c). */
#define CANCEL_RDV (1ULL << 22)
#define CANCEL_DONE (1ULL << 23)
#define CTL_HD(op, arg) (((uint64_t)(op) << 56) | ((uint64_t)(arg) & ((1ULL << 56) - 1)))

/* Every object whose address travels as a Portals user_ptr starts with its
 * kind, so the event loop knows what an event is about. */
enum obj_kind { OBJ_REQ = 1, OBJ_MSG, OBJ_CTL, OBJ_OVF, OBJ_DRAIN, OBJ_DRAIN_END, OBJ_PROBE,
                OBJ_RELEASE, OBJ_MPROBE, OBJ_LATE, OBJ_CANCEL };

/* One data message on its way to a target (eager copy or rendezvous
 * announcement), kept until the target accepted it. */
enum out_state { OUT_QUEUED, OUT_INFLIGHT, OUT_REJECTED, OUT_ACCEPTED };
struct msg_out {
    int kind; /* OBJ_MSG */
    enum out_state state;
    struct msg_out *next;
    long target;
    uint64_t bits, hd;
    void *data;           /* eager: the copy in the bounce arena */
    size_t len;           /* eager bytes */
    int slot;             /* bounce slot, -1 if none */
    /* rendezvous */
    bool rdv, pulled;
    bool push;            /* the announcement carries push_len bytes, from push_md */
    const void *rdv_buf;
    uint64_t rdv_len, rdv_got, push_len;
    ptl_handle_me_t rdv_me;
    ptl_handle_md_t push_md;
    struct msg_req *req;  /* completed when pulled (rendezvous) */
    /* Late (HD_LATE): announced with its buffer not exposed; in its peer's
     * late list until the receiver's CTL_READY. */
    struct msg_out *late_next;
    bool cancelled;       /* the receiver took it out of matching: nobody pulls it */
    uint64_t seq;         /* its place in the sends to its target */
};

struct msg_peer {
    struct msg_out *head, *tail; /* data messages in send order, until accepted */
    uint64_t seq_next;          /* the next data message's place (msg_out seq) */
    int inflight;               /* data puts awaiting their ACK */
    int ctl_inflight;           /* control puts awaiting their ACK */
    bool paused;                /* its data PT is disabled: send nothing */
    bool pause_owed;            /* answer its PAUSE when inflight drops to 0 */
    uint64_t pause_epoch;
    uint64_t acked_epoch;       /* (we as target) its PAUSE_ACK for our epoch */
    bool exiting;               /* it sent EXITING: never sends data again */
    /* Its last rendezvous message from us that carried its data found no
     * receive posted (msg_send.c): announce only, until one of its gets
     * says a receive was waiting. */
    bool pull_only;
    /* Our late sends to it awaiting its CTL_READY, in send order (a
     * receiver matches them mostly in that order: found at the head). */
    struct msg_out *late_head, *late_tail;
    /* (we as receiver) Receives matched to its late sends: CTL_READY sent
     * for at most LATE_READY_MAX at once, the rest parked in order by
     * held_next (msg_recv.c).  The bound keeps the events of its READYs
     * and of their puts within the misc EQ's room for each peer. */
    int ready_out;
    struct msg_req *parked_head, *parked_tail;
};
#define LATE_READY_MAX 4

/* A message taken off Portals' unexpected list by a drain (or sent to
 * oneself), kept by the library until a receive or probe wants it; also a
 * message a matched probe took (msg_mprobe.c), off the queue. */
struct msg_saved {
    struct msg_saved *next;
    long src;
    uint64_t bits, hd;
    uint64_t len;         /* eager bytes held in data */
    void *data;
    void *ovf_start;      /* where it is still arriving, if pending */
    bool pending;
    bool posted;          /* taken by an ME posted before it came (msg_mprobe.c) */
    bool cancelled;       /* its send was cancelled while it was arriving: freed when in */
    struct msg_req *waiter;
};

struct msg_engine {
    bool up, started, finished, aborting, exiting;
    const char *who, *prefix;
    unsigned abort_linger_ms;
    int verbose;          /* _STATS: 1 counters at exit, 2 also trace recoveries */
    long rank, size;
    ptl_handle_ni_t ni;
    ptl_handle_eq_t eq_data, eq_misc;
    ptl_handle_md_t md_bounce, md_zero;
    ptl_ni_limits_t lim;
    size_t eager_max;
    uint64_t push_max;    /* most bytes a rendezvous announcement carries */
    struct msg_peer *peers;
    int ops_inflight, ops_max;
    bool starved;         /* something waits for an operation slot */
    long rdv_active;      /* rendezvous sends exposed, not yet pulled */
    /* The puts of late sends that CTL_READY asked for and that wait for an
     * MD or operation slots, oldest first (msg_send.c). */
    struct late_put *ready_head, *ready_tail;
    /* Some receive matched to a late send waits for a Portals entry to
     * expose its buffer (msg_recv.c; its peer's parked list). */
    bool parked_retry;
    uint64_t rdv_next, eager_next; /* ids of messages sent (hdr_data) */
    /* Sends whose cancel waits for the receiver's answer (msg_cancel.c). */
    struct msg_req *cancel_head;
    /* Cancels' drains whose end marker has not come (msg_cancel.c): like a
     * recovery's, handled to the end before the program runs again, or a
     * receive posted meanwhile would miss the drained messages. */
    int cancel_drains;
    /* receiver side of flow control */
    bool recovering, draining;
    uint64_t epoch;
    struct msg_saved *saved_head, *saved_tail;
    uint64_t saved_bytes, saved_max; /* heap held by saved messages, and its bound */
    uint64_t saved_gen;   /* counts messages added to the saved queue */
    /* receives on Portals' priority list, and how many may be (msg_held.c);
     * the shares of Portals' entries of rendezvous sends and barriers
     * (msg_start.c split_entries) */
    long recv_mes, recv_cap;
    long rdv_max;
    long barrier_entries, barrier_entries_max;
    /* Events this process's own calls may have put on the data EQ since
     * it was last empty (a receive's append that takes an unexpected
     * message, a search).  Portals holds arriving messages back only once
     * the EQ is full, so these must stay within the room its size leaves
     * (msg_start.c): held receives stop at LOCAL_EVENTS_MAX (msg_held.c). */
    int local_events;
    struct msg_req *held_head, *held_tail;
    /* Receives whose pull waits for a Portals MD or operation slot
     * (thousands of rendezvous messages matched at once: the job ended at
     * the first PtlMDBind Portals refused), oldest first, by held_next. */
    struct msg_req *pull_head, *pull_tail;
    /* start-up barrier rounds received (bit per round) */
    uint64_t barrier_got;
    /* statistics, printed at exit when _STATS is set */
    uint64_t st_eager, st_rdv, st_unexpected, st_recoveries, st_resent, st_drained;
    uint64_t st_rdv_pushed;  /* of st_rdv: a posted receive took the announcement's data */
    uint64_t st_push_missed; /* of st_rdv: it carried data, but no receive was posted */
    uint64_t st_received; /* messages from other ranks taken by receives */
    uint64_t st_ptl_barriers; /* barriers Portals forwarded (msg_barrier.c) */
    uint64_t st_ptl_wakes;    /* ... of which needed the self-put wake-up */
    uint64_t st_ptl_waits;    /* blocking event waits in them (each ends on an event) */
    uint64_t st_held;         /* receives held for want of room in Portals (msg_held.c) */
    uint64_t st_held_taken;   /* ... of which took a message that came for them */
    uint64_t st_pulls_waited; /* rendezvous pulls that waited for an MD or slot */
    uint64_t st_rdv_late;     /* rendezvous sends past the exposures: put on CTL_READY */
};
extern struct msg_engine eng;

/* Pieces of Portals' message limit a rendezvous message of len bytes moves
 * in (one get or put each; one for a zero-byte message), counted alike by
 * the side that asks and the side that answers. */
static inline uint64_t msg_pieces(uint64_t len)
{
    return len == 0 ? 1 : (len + eng.lim.max_msg_size - 1) / eng.lim.max_msg_size;
}

/* msg_start.c */
void msg_progress_ms(unsigned ms); /* wait at most ms for a first event */
/* An ME as the engine's all are: no counter, any user; from rank
 * (PTL_RANK_ANY: anyone), matching bits outside ignore. */
ptl_me_t msg_me(void *start, uint64_t length, unsigned options, ptl_rank_t rank, uint64_t bits,
                uint64_t ignore);
void msg_control(long from, uint64_t hd, uint64_t bits); /* a control message arrived */

/* msg_send.c */
void msg_send_init(void);
void msg_send_ack(struct msg_out *m, const ptl_event_t *ev);
void msg_rdv_pulled(struct msg_out *m, const ptl_event_t *ev);
void msg_ctl_send(long target, uint64_t hd, bool retry);
void msg_ctl_send_bits(long target, uint64_t hd, uint64_t bits); /* with match bits */
void msg_ctl_ack(void *rec, const ptl_event_t *ev);
void msg_peer_pause(long target, uint64_t epoch);
void msg_peer_unpause(long target);
void msg_kick(void);
bool msg_sends_idle(void);
/* CTL_READY from `from`: put late send `id` into its receive. */
void msg_send_ready(long from, uint64_t id);
void msg_send_ready_run(void); /* the puts that waited for room */
void msg_send_late_acked(void *late_put, const ptl_event_t *ev);
bool msg_ctl_idle(void);
/* The receiver took r's message out of matching: what of the send is
 * still going (an exposure, a late send's place) goes; its buffer is free. */
void msg_send_cancelled(struct msg_req *r);
/* Has target t accepted our data message seq (and every one before it)? */
bool msg_send_accepted(long t, uint64_t seq);

/* msg_recv.c */
void msg_reqs_init(void);
void msg_recv_event(struct msg_req *r, const ptl_event_t *ev);
void msg_recv_reply(struct msg_req *r, const ptl_event_t *ev);
void msg_recv_take_saved(struct msg_req *r, struct msg_saved *s);
void msg_probe_event(void *probe, const ptl_event_t *ev);
void msg_self_send(uint64_t bits, const void *buf, uint64_t len, uint64_t id);
/* The oldest saved message a receive would take, unlinked if take. */
struct msg_saved *msg_saved_find(uint64_t bits, uint64_t ignore, long srcsel, bool take);
/* Take s (prev before it, NULL if first) out of the saved queue. */
void msg_saved_unlink(struct msg_saved *prev, struct msg_saved *s);
/* The ME of a receive into buf[count]. */
ptl_me_t msg_recv_me(void *buf, uint64_t count, uint64_t bits, uint64_t ignore, long srcsel);
/* What a probe reports of a saved message. */
void msg_saved_info(const struct msg_saved *s, struct msg_probe_info *out);
/* r's ME is h, on Portals' priority list now. */
void msg_recv_posted(struct msg_req *r, ptl_handle_me_t h);
/* Post r: a saved message it matches, else an ME; false when Portals has
 * no room for one (r is then untouched). */
bool msg_recv_post(struct msg_req *r);
#define LOCAL_EVENTS_MAX 256
/* Rendezvous pulls waiting for an MD or an operation slot (eng.pull_head):
 * started as room frees (each progress pass). */
void msg_recv_pulls_waiting(void);
/* A late send's put into receive r arrived (PT_RDV). */
void msg_recv_landed(struct msg_req *r, const ptl_event_t *ev);
void msg_recv_parked_run(void); /* receives waiting for an entry to expose */

/* msg_held.c: receives waiting for room in Portals */
void msg_held_add(struct msg_req *r);
bool msg_held_cancel(struct msg_req *r);
void msg_held_hint(long src, uint64_t bits); /* an unexpected message arrived */
void msg_held_search_event(const ptl_event_t *ev); /* a held receive's search */
void msg_held_run(void); /* after each progress pass */

/* msg_mprobe.c */
void msg_mprobe_event(void *probe, const ptl_event_t *ev);

/* msg_cancel.c */
void msg_cancel_asked(long from, uint64_t arg, uint64_t bits); /* CTL_CANCEL */
void msg_cancel_answered(long from, uint64_t arg, uint64_t bits); /* CTL_CANCEL_ANS */
void msg_cancel_gone(long to, uint64_t arg, uint64_t bits);      /* its CTL_CANCEL lost */
void msg_cancel_event(const ptl_event_t *ev); /* the end of a cancel's drain */
void msg_cancel_kick(long t); /* t accepted a message: ask what waited for that */

/* msg_flow.c */
void msg_flow_init(void);
/* Every unexpected message from src off Portals' list into the saved
 * queue (as a recovery's drain), then one PTL_EVENT_SEARCH for end. */
void msg_flow_drain_from(long src, void *end);
void msg_flow_event(const ptl_event_t *ev);
void msg_flow_pause_ack(long from, uint64_t epoch);
void msg_flow_peer_exiting(long from);
void msg_ovf_claimed(const ptl_event_t *ev);
void msg_saved_append(struct msg_saved *s);
void *msg_saved_alloc(uint64_t len); /* heap for a saved message, within saved_max */
void msg_saved_release(struct msg_saved *s);

/* msg_barrier.c */
void msg_barrier_event(const ptl_event_t *ev);
#endif
