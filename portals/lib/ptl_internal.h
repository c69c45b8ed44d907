/*
 * Private data structures of the Portals library.  Layering (as in Cplant):
 *   api_*.c      argument checking, handles, locking       (API)
 *   ni.c pt.c md.c eq.c ct.c list.c match.c target.c
 *   initiator.c triggered.c atomic*.c                       (library)
 *   reliable.c rx.c                                         (network layer)
 * Everything below the API runs with the host lock held.
 */
#ifndef PTL_INTERNAL_H
#define PTL_INTERNAL_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include "portals4.h"
#include "ptl_wire.h"
#include "ptl_host.h"
#include "ptl_lib.h"
#include "ptl_string.h"
#include "ptl_trace.h"

/* Whether a put that shows no completion leaves its ack to the target's ack
 * delay (reliable.c, ack_now_wanted); the Tern kernel builds with 1. */
#ifndef PTL_ACK_LAZY
#define PTL_ACK_LAZY 0
#endif
/* Whether frames that come before their NI are kept for it by default
 * (park.c); the Tern kernel builds with 1. */
#ifndef PTL_PARK_EARLY
#define PTL_PARK_EARLY 0
#endif

/* Interfaces: a host's NICs, or (the Tern kernel) its own interface and one
 * per rank of a node's ranks per core.  32 at most: ptl_lib_restrict's mask. */
#define PTL_MAX_IFACES 32
/* Carried ACKs noted for later before they are taken in at once. */
#define PTL_ACKS_LATER_MAX 8
/* Frames kept for an NI not made yet (park.c): how many at most, and how
 * much payload each may have (start-up's control puts have none). */
#define PTL_PARK_MAX 8
#define PTL_PARK_PAYLOAD_MAX 256
#define PTL_MAX_NIS (PTL_MAX_IFACES * 4)
#define PTL_REL_WIN 64          /* frames in flight per peer = SACK width */
#define PTL_PEER_SLOTS 4096    /* hash slots; peers allocated on demand */
/* Peers one NI keeps at most; a new source beyond that takes the place of
 * an old one (peer.c).  A host with little memory (the Tern kernel's heap)
 * sets a smaller bound. */
#ifndef PTL_MAX_PEERS
#define PTL_MAX_PEERS 3072
#endif
#define PTL_INLINE_MAX 64       /* fetch-atomic results kept for resend */
#define PTL_RESP_CHUNK 64       /* ACK/REPLY messages: the pool grows by this */
#define PTL_PEER_RESP_MAX 64    /* held for one peer at most; also the most
                                 * requests needing an answer we have in
                                 * flight to one peer */
#define PTL_ATOMIC_MAX 512      /* max_atomic_size: fits any frame */
#define PTL_FINI_LINGER_NS 1000000000ull /* PtlNIFini waits this long at
                                          * most for its frames' acks */

/* ---- handles: [type:4][ni:7][index:15][gen:6] --------------------------
 * Types avoid 3, 5 and 15 so PTL_EQ_NONE, PTL_CT_NONE and
 * PTL_INVALID_HANDLE never decode as live objects.  A slot's generation
 * counts its reuses modulo 64 (ptl_gen_next): a handle kept past 64 reuses
 * of its slot is taken for the new object.  MD, ME/LE, CT and EQ slots are
 * reused oldest-freed first (freeq.c), so that takes 64 rounds of all free
 * ones. */
enum ptl_obj_type {
    PTL_OBJ_NI = 1, PTL_OBJ_EQ = 2, PTL_OBJ_CT = 4,
    PTL_OBJ_MD = 6, PTL_OBJ_ME = 7, PTL_OBJ_LE = 8
};
#define PTL_HIDX_BITS 15
#define PTL_HIDX_MAX (1u << PTL_HIDX_BITS)
#define PTL_HNI_BITS 7
#define PTL_HGEN_BITS 6
_Static_assert(PTL_MAX_NIS <= (1u << PTL_HNI_BITS), "every NI has a number in a handle");
_Static_assert(4 + PTL_HNI_BITS + PTL_HIDX_BITS + PTL_HGEN_BITS == 32, "handles are 32 bits");

static inline uint32_t ptl_mkhandle(unsigned type, unsigned ni, unsigned idx,
                                    uint8_t gen)
{
    return ((uint32_t)type << 28) | ((uint32_t)ni << (PTL_HIDX_BITS + PTL_HGEN_BITS)) |
           ((uint32_t)idx << PTL_HGEN_BITS) | (gen & ((1u << PTL_HGEN_BITS) - 1));
}
static inline uint8_t ptl_gen_next(uint8_t gen)
{
    return (uint8_t)((gen + 1) & ((1u << PTL_HGEN_BITS) - 1));
}
#define PTL_H_TYPE(h) ((h) >> 28)
#define PTL_H_NI(h) (((h) >> (PTL_HIDX_BITS + PTL_HGEN_BITS)) & ((1u << PTL_HNI_BITS) - 1))
#define PTL_H_IDX(h) (((h) >> PTL_HGEN_BITS) & (PTL_HIDX_MAX - 1))
#define PTL_H_GEN(h) ((uint8_t)((h) & ((1u << PTL_HGEN_BITS) - 1)))

/* Free slots of a table, freed longest ago first (freeq.c). */
#define PTL_FREEQ_NONE UINT32_MAX
struct ptl_freeq {
    uint32_t *next;       /* per slot: the free slot after it */
    uint32_t head, tail;  /* PTL_FREEQ_NONE: none free */
};
bool ptl_freeq_init(struct ptl_freeq *q, uint32_t n); /* all n free */
void ptl_freeq_fini(struct ptl_freeq *q);
uint32_t ptl_freeq_take(struct ptl_freeq *q);         /* PTL_FREEQ_NONE: none */
void ptl_freeq_put(struct ptl_freeq *q, uint32_t i);

struct ptl_obj {
    bool in_use;
    uint8_t gen;
};

/* A buffer described either contiguously or by an iovec array; `length` is
 * always the byte length. */
struct ptl_region {
    void *start;
    ptl_size_t length;
    const ptl_iovec_t *iov;
    uint32_t niov;
};

struct ptl_ni;
struct ptl_trig;
struct ptl_txmsg;

struct ptl_eq {
    struct ptl_obj o;
    ptl_event_t *ring;
    uint32_t size, head, count;
    uint32_t cap;         /* what the program asked for; size - cap is kept
                           * for PTL_EVENT_PT_DISABLED */
    bool dropped;
};

struct ptl_ct {
    struct ptl_obj o;
    ptl_ct_event_t v;
    struct ptl_trig *trig; /* pending triggered ops, issue order */
};

struct ptl_md {
    struct ptl_obj o;
    unsigned options;
    struct ptl_region r;
    struct ptl_eq *eq;
    struct ptl_ct *ct;
    uint32_t busy; /* operations still reading/writing the buffer */
};

/* ME or LE (an LE is an ME that matches everything). */
struct ptl_entry {
    struct ptl_obj o;
    bool is_me;
    bool linked;       /* on a PT list */
    bool freed;        /* user/auto unlinked; slot released when unused */
    bool unlink_ev;    /* AUTO_UNLINK owed once busy drops to 0 */
    bool free_ev;      /* AUTO_FREE owed once uh_refs drops to 0 */
    uint8_t list;      /* ptl_list_t */
    ptl_pt_index_t pt;
    ptl_me_t me;
    struct ptl_region r;
    struct ptl_ct *ct;
    void *user_ptr;
    ptl_size_t loff;   /* locally managed offset */
    uint32_t busy;     /* messages in progress, replies unacked */
    uint32_t uh_refs;  /* unexpected headers pointing into this buffer */
    struct ptl_entry *next, *prev;
};

/* Unexpected header: a message that landed in an overflow entry. */
struct ptl_uh {
    struct ptl_uh *next;
    struct ptl_entry *ovf;
    ptl_event_t ev;      /* filled as the overflow event */
    bool complete;       /* all data has arrived */
    bool discard;        /* deleted by a search before completing */
    struct ptl_entry *claim; /* priority entry waiting for completion */
};

struct ptl_pt {
    bool allocated, enabled;
    unsigned options;
    struct ptl_eq *eq;
    struct ptl_entry *head[2], *tail[2];
    uint32_t len[2];
    struct ptl_uh *uh_head, *uh_tail;
};

/* ---- reliability --------------------------------------------------------- */
enum ptl_tx_kind { PTL_TX_OP, PTL_TX_ACK, PTL_TX_REPLY };

struct ptl_txmsg {
    struct ptl_txmsg *next;
    uint8_t kind;
    struct ptl_wire_hdr h;   /* template; per-frame fields filled at send */
    struct ptl_region src;   /* payload source (zero copy) */
    ptl_size_t src_off, len;
    ptl_size_t next_off;     /* first byte not yet given a frame */
    uint32_t frames_out;     /* frames sent and not yet acked */
    bool started;
    bool ack_alone;          /* PTL_TX_ACK of a put of several frames: never held */
    struct ptl_op *op;       /* PTL_TX_OP */
    struct ptl_entry *entry; /* PTL_TX_REPLY from an entry buffer */
    struct ptl_peer *resp_peer; /* ACK/REPLY: counted in resp_queued */
    ptl_event_t ev;          /* target event posted once acked (GET) */
    bool post_ev;
    struct ptl_eq *ev_eq;
    struct ptl_ct *ev_ct;
    unsigned ev_opts;
    uint8_t inline_data[PTL_INLINE_MAX];
};

/* ACK/REPLY messages come from chunks allocated as needed. */
struct ptl_resp_chunk {
    struct ptl_resp_chunk *next;
    struct ptl_txmsg m[PTL_RESP_CHUNK];
};
bool ptl_resp_grow(struct ptl_ni *ni);

struct ptl_txfrag {
    struct ptl_txmsg *m;
    struct ptl_txmsg *carried; /* an ACK in this frame's header (PTL_WF_ACKIN) */
    ptl_size_t off;
    uint32_t len;
    uint16_t flags;
    bool live, acked;
    uint16_t tries;
    uint64_t first_sent, sent_at, rto;
};

struct ptl_rxmsg {
    bool active;
    uint64_t msg_id;
    uint8_t op;
    ptl_size_t msg_len, got;
    struct ptl_wire_hdr h;     /* header of the first frame */
    /* target side: where the data goes */
    struct ptl_entry *e;
    struct ptl_region dst;
    ptl_size_t dst_off, mlength;
    ptl_ni_fail_t fail;
    struct ptl_uh *uh;
    struct ptl_txmsg *ack;     /* reserved at match time */
    /* initiator side: the reply's operation (NULL: swallow the data) */
    struct ptl_op *iop;
};

struct ptl_peer {
    struct ptl_peer *next, *prev;         /* all peers of the NI */
    struct ptl_peer *lru_next, *lru_prev; /* its LRU list, oldest first */
    /* On the NI's busy list: anything the progress walk must see (peer.c,
     * ptl_peer_quiet); the walk takes it off once it has nothing. */
    struct ptl_peer *busy_next, *busy_prev;
    bool on_busy_list;
    /* It acknowledged a frame of ours: it receives at the nid it claims, so
     * it is no made-up source.  Proven peers are reclaimed only when idle
     * and long silent; others first (peer.c). */
    bool proven;
    uint32_t nid, pid;
    uint32_t n_ops;         /* our operations that name it */
    uint64_t last_heard;
    /* transmit */
    uint32_t tx_session, snd_una, snd_nxt;
    /* Allocated when we first send to it (a source that only ever sent us
     * a frame costs a few hundred bytes, not the 4 KiB of a window). */
    struct ptl_txfrag *win;
    struct ptl_txmsg *q_head, *q_tail;
    /* Round-trip estimate (Jacobson/Karels) from acks known to answer a
     * frame's last transmission (Karn; reliable.c); srtt == 0: no sample yet. */
    uint64_t srtt, rttvar, rto;
    unsigned backoff;       /* timer expiries since the last clean sample */
    /* No frame goes again by its timer before this: one timeout after the
     * last ack that acknowledged something new, or after the last resend
     * by a timer (reliable.c, ptl_rel_peer_timers). */
    uint64_t rto_gate;
    /* Latest send time of any frame acked so far: an unacked frame sent
     * clearly before it is lost (time-based loss detection, as TCP RACK). */
    uint64_t rack_sent_at;
    uint32_t dupacks;       /* pure acks that acked nothing new */
    bool acked_any;         /* the peer acknowledged part of this session */
    uint32_t acker_session; /* the peer's own session when it did (0: unknown) */
    /* receive */
    bool rx_valid;
    uint32_t rx_session, rx_prev_session, rcv_nxt;
    uint64_t sack;
    uint8_t rx_echo;        /* xmit of the frame that moved rcv_nxt last */
    struct ptl_rxmsg cur;
    uint32_t ack_pending;
    uint64_t ack_due;
    /* An ACK of ours to it waits (ack_hold_ns) to ride in the header of our
     * program's next message to it: until then (0: none waits; a hold
     * released early ends at its enum ptl_held_release, before any time the
     * clock gives). */
    uint64_t hold_until;
    uint32_t resp_waiting;  /* our ops awaiting ACK/REPLY from this peer */
    uint32_t resp_queued;   /* our ACK/REPLY messages to it not yet acked */
    uint32_t req_out;       /* our requests to it started, answer not here */
    uint64_t resp_mark;     /* last time one of them started waiting */
};

/* ---- initiator operations ---------------------------------------------- */
enum ptl_op_kind { PTL_K_PUT, PTL_K_GET, PTL_K_ATOMIC, PTL_K_FETCH,
                   PTL_K_SWAP };

struct ptl_op {
    bool in_use;
    uint32_t serial;
    uint8_t kind;
    struct ptl_md *put_md, *get_md;
    ptl_size_t put_off, get_off, len;
    void *user_ptr;
    uint8_t ack_req;
    bool send_done, resp_done, want_resp;
    bool req_counted;       /* in peer->req_out */
    /* The reliability layer is done with tx: every frame acknowledged, or
     * the peer given up.  Until then tx may be in the peer's send queue and
     * its frames in the window, and the slot is not freed (initiator.c). */
    bool tx_through;
    /* An ACK that came before tx_through (a put refused at its first
     * frame), taken in once it is through. */
    bool early_ack;
    struct ptl_wire_ackrec early;
    ptl_process_t target;
    struct ptl_peer *peer;
    uint64_t sent_at;
    struct ptl_txmsg tx;
    struct ptl_op *next_free;
};

struct ptl_ni {
    bool in_use;
    uint8_t gen;
    unsigned refs;
    unsigned idx, iface;
    unsigned options;
    uint8_t wni;            /* PTL_WNI_* */
    ptl_process_t id;       /* phys id */
    ptl_rank_t rank;        /* own rank in the map, PTL_RANK_ANY if none */
    ptl_uid_t uid;
    ptl_jid_t jid;
    uint32_t frame_max;
    bool link_checks_payload; /* ptl_host_iface_info: send PTL_WF_LINKCRC frames */
    /* The program has moved data or looked for events with it: its portal
     * table entries are set up, and frames kept for it may come (park.c). */
    bool receiving;
    ptl_ni_limits_t lim;
    ptl_sr_value_t sr[PTL_SR_LAST];

    ptl_process_t *map;
    ptl_size_t map_size;

    struct ptl_pt *pts;
    struct ptl_eq *eqs;
    struct ptl_ct *cts;
    struct ptl_md *mds;
    struct ptl_entry *entries;
    struct ptl_freeq md_free, entry_free, ct_free, eq_free;
    uint32_t n_entries_used;
    struct ptl_uh *uh_pool, *uh_free;
    uint32_t uh_used;
    struct ptl_op *ops, *op_free;
    uint32_t n_ops;
    struct ptl_resp_chunk *resp_chunks;
    struct ptl_txmsg *resp_free;
    struct ptl_trig *trig_pool, *trig_free;
    uint32_t trig_used;
    struct ptl_peer **peer_tab; /* open-addressing hash by nid/pid */
    struct ptl_peer *peer_list;
    uint32_t n_peers;
    /* The peers with something pending (timers, queued or unacknowledged
     * frames, acks owed, a message half received, answers awaited): what
     * every progress walk and deadline visits, so that a Ptl call costs
     * the same with ten thousand idle peers as with one.  A walk in
     * progress: the peer it visits and the next (peer.c). */
    struct ptl_peer *busy_head, *busy_cur, *busy_walk;
    /* LRU lists (head: least recently heard), unproven and proven peers */
    struct ptl_peer *lru_head[2], *lru_tail[2];
};

struct ptl_lib {
    unsigned init_refs;
    struct ptl_ni nis[PTL_MAX_NIS];
    /* Bit i: nis[i] is in use.  The walks every call makes (progress,
     * deadlines, held ACKs) visit these only: a process uses one or two of
     * the PTL_MAX_NIS slots, and a pass over all of them cost ~650
     * instructions a call, 16 % of a node's instructions in an NX
     * ping-pong under TCG (docs/performance.md, "Fewer instructions and
     * fewer timers"). */
    uint64_t live[(PTL_MAX_NIS + 63) / 64];
    struct ptl_lib_stats stats[PTL_MAX_IFACES];
    struct ptl_lib_tunables tun;
    uint32_t session_seed;
    uint32_t caller_ifaces;     /* ptl_lib_restrict: 0 = every interface */
    uint32_t abort_gen;         /* PtlAbort calls so far */
    bool acks_held;             /* a peer may hold an ACK (reliable.c) */
    /* The soonest delayed acknowledgement or held ACK due since the last
     * deadline walk (ptl_lib_acks_due_by); may be one already sent. */
    uint64_t exact_due;
    /* ACKs carried in frames' headers, to be taken in by the next progress
     * step (initiator.c, ptl_op_acked_later), oldest first; the NI by its
     * slot and generation (it may be gone by then). */
    struct ptl_ack_later {
        uint16_t ni_idx;
        uint8_t ni_gen;
        uint32_t nid, pid;
        struct ptl_wire_ackrec a;
    } acks_later[PTL_ACKS_LATER_MAX];
    unsigned n_acks_later;
    /* Frames kept for an NI not made yet (park.c), and whether an NI
     * became ready for them since the progress step last handed them over
     * (ptl_ni_receiving). */
    unsigned n_parked;
    bool park_new_ni;
};
extern struct ptl_lib ptl_g;

/* The first NI in use at or after slot *i, or NULL; *i moves past it:
 *     for (unsigned i = 0; (ni = ptl_ni_next_live(&i));) ... */
static inline struct ptl_ni *ptl_ni_next_live(unsigned *i)
{
    while (*i < PTL_MAX_NIS) {
        uint64_t w = ptl_g.live[*i / 64] >> (*i % 64);
        if (w) {
            *i += (unsigned)__builtin_ctzll(w);
            return &ptl_g.nis[(*i)++];
        }
        *i = (*i / 64 + 1) * 64;
    }
    return NULL;
}
bool ptl_iface_allowed(unsigned iface);

/* ---- lookups (handle.c) ------------------------------------------------- */
struct ptl_ni *ptl_ni_get(ptl_handle_ni_t h);
struct ptl_eq *ptl_eq_get(ptl_handle_eq_t h, struct ptl_ni **ni);
struct ptl_ct *ptl_ct_get(ptl_handle_ct_t h, struct ptl_ni **ni);
struct ptl_md *ptl_md_get(ptl_handle_md_t h, struct ptl_ni **ni);
struct ptl_entry *ptl_entry_get(uint32_t h, bool is_me, struct ptl_ni **ni);
ptl_handle_eq_t ptl_eq_handle(struct ptl_ni *ni, struct ptl_eq *eq);
ptl_handle_ct_t ptl_ct_handle(struct ptl_ni *ni, struct ptl_ct *ct);
bool ptl_api_ready(void);
void *ptl_zalloc(size_t n);

/* ---- regions (region.c) ------------------------------------------------- */
int ptl_region_init(struct ptl_region *r, void *start, ptl_size_t length,
                    bool iovec, int max_iovecs);
void ptl_region_write(const struct ptl_region *r, ptl_size_t off,
                      const void *src, ptl_size_t n);
void ptl_region_read(const struct ptl_region *r, ptl_size_t off, void *dst,
                     ptl_size_t n);
void *ptl_region_addr(const struct ptl_region *r, ptl_size_t off);
int ptl_region_sg(const struct ptl_region *r, ptl_size_t off, ptl_size_t n,
                  struct ptl_sg *sg, int max);

/* ---- events and counters (eq.c, ct.c) ------------------------------------ */
void ptl_eq_post(struct ptl_eq *eq, const ptl_event_t *ev);
void ptl_ct_add(struct ptl_ni *ni, struct ptl_ct *ct, ptl_size_t success,
                ptl_size_t failure);
void ptl_ct_check_triggers(struct ptl_ni *ni, struct ptl_ct *ct);
/* ct.c: every change of a counter passes here (ptl_ct_check_triggers
 * calls it), so that a waiter learns the count that met its test. */
void ptl_ct_note_waiters(struct ptl_ct *ct);
/* Unlinks the waiters on ni's counters, which are about to be freed: a wait
 * a job's end abandoned (its kernel stack goes with its thread) must not
 * stay linked to counters a later NI's may reuse. */
void ptl_ct_forget_waiters(struct ptl_ni *ni);

/* ---- lists and matching (list.c, match.c) -------------------------------- */
bool ptl_match_entry(const struct ptl_ni *ni, const struct ptl_entry *e,
                     const ptl_process_t *src, ptl_match_bits_t bits);
void ptl_list_remove(struct ptl_ni *ni, struct ptl_entry *e);
void ptl_entry_auto_unlink(struct ptl_ni *ni, struct ptl_entry *e);
void ptl_entry_settle(struct ptl_ni *ni, struct ptl_entry *e);
void ptl_uh_free(struct ptl_ni *ni, struct ptl_uh *uh);
void ptl_uh_complete(struct ptl_ni *ni, struct ptl_uh *uh);
void ptl_target_event(struct ptl_ni *ni, struct ptl_entry *e,
                      const ptl_event_t *ev, bool overflow_kind);
void ptl_entry_consume(struct ptl_ni *ni, struct ptl_entry *e);
int ptl_append(struct ptl_ni *ni, ptl_pt_index_t pt_index,
               const ptl_me_t *me, bool is_me, ptl_list_t list,
               void *user_ptr, uint32_t *handle);
int ptl_entry_new(struct ptl_ni *ni, ptl_pt_index_t pt_index, const ptl_me_t *me,
                  bool is_me, ptl_list_t list, void *user_ptr, uint32_t *handle,
                  struct ptl_entry **out);
void ptl_entry_link(struct ptl_ni *ni, struct ptl_entry *e);
/* Unlinks an entry for good; a message still using it keeps its slot until
 * it is done (PtlMEUnlink refuses that case with PTL_IN_USE instead). */
void ptl_entry_unlink(struct ptl_ni *ni, struct ptl_entry *e);
ptl_me_t ptl_le_as_me(const ptl_le_t *le);
int ptl_search(struct ptl_ni *ni, ptl_pt_index_t pt_index, const ptl_me_t *me,
               bool is_me, ptl_search_op_t op, void *user_ptr);

/* ---- target (target.c) ------------------------------------------------- */
int ptl_target_start(struct ptl_ni *ni, struct ptl_peer *peer,
                     const struct ptl_wire_hdr *h, const uint8_t *payload);
void ptl_target_data(struct ptl_ni *ni, struct ptl_peer *peer,
                     const struct ptl_wire_hdr *h, const uint8_t *payload);
void ptl_target_abort(struct ptl_ni *ni, struct ptl_peer *peer);

/* ---- initiator (initiator.c) ---------------------------------------------- */
struct ptl_op_args {
    uint8_t kind;
    struct ptl_md *put_md, *get_md;
    ptl_size_t put_off, get_off, len;
    ptl_ack_req_t ack_req;
    ptl_process_t target;
    ptl_pt_index_t pt;
    ptl_match_bits_t bits;
    ptl_size_t roff;
    void *user_ptr;
    ptl_hdr_data_t hdr;
    uint8_t aop, atype;
    uint64_t operand;
};
int ptl_op_check(struct ptl_ni *ni, const struct ptl_op_args *a);
int ptl_op_issue(struct ptl_ni *ni, const struct ptl_op_args *a);
/* The reliability layer is done with op's request (all frames acknowledged,
 * or f: the peer unreachable); an ACK that came earlier is taken in now. */
void ptl_op_tx_done(struct ptl_ni *ni, struct ptl_op *op, ptl_ni_fail_t f);
void ptl_op_response(struct ptl_ni *ni, struct ptl_peer *peer,
                     const struct ptl_wire_hdr *h, const uint8_t *payload);
/* An ACK, from a frame of its own or another's record (PTL_WF_ACKIN):
 * taken in now, after any noted for later. */
void ptl_op_acked(struct ptl_ni *ni, struct ptl_peer *peer, const struct ptl_wire_ackrec *a);
/* An ACK carried in a frame's record, noted to be taken in by the next
 * progress step (ptl_acks_later_take_locked) rather than on the way of the
 * frame that carried it to its program: only an ACK that only an event will
 * show (one a counter counts may trigger operations, and is taken now). */
void ptl_op_acked_later(struct ptl_ni *ni, struct ptl_peer *peer,
                        const struct ptl_wire_ackrec *a);
void ptl_acks_later_take_locked(void);
void ptl_reply_data(struct ptl_ni *ni, struct ptl_peer *peer,
                    const struct ptl_wire_hdr *h, const uint8_t *payload);
struct ptl_op *ptl_op_lookup(struct ptl_ni *ni, uint64_t msg_id);
/* Fails p's operations whose answer it has not given within giveup_ns. */
void ptl_ops_peer_timeout(struct ptl_ni *ni, struct ptl_peer *p, uint64_t now);
void ptl_ops_fail_peer(struct ptl_ni *ni, struct ptl_peer *p);

/* ---- peers (peer.c) and reliability (reliable.c) -------------------------- */
struct ptl_peer *ptl_peer_get(struct ptl_ni *ni, uint32_t nid, uint32_t pid,
                              bool create);
void ptl_peer_heard(struct ptl_ni *ni, struct ptl_peer *p);  /* a frame came */
/* The busy list: p is marked busy wherever it may get something pending
 * (a message queued to it, an ack owed it, an answer awaited from it: a
 * frame that starts a message from it owes an ack); a walk goes through
 * the list with ptl_peer_walk_first/next, which take off the peers it
 * leaves quiet, and ptl_peer_walk_kept says whether the peer being visited
 * is still there (a visit may drop it). */
void ptl_peer_busy(struct ptl_ni *ni, struct ptl_peer *p);
bool ptl_peer_walk_kept(const struct ptl_ni *ni, const struct ptl_peer *p);
bool ptl_peer_quiet(const struct ptl_peer *p);
struct ptl_peer *ptl_peer_walk_first(struct ptl_ni *ni);
struct ptl_peer *ptl_peer_walk_next(struct ptl_ni *ni);
void ptl_peer_prove(struct ptl_ni *ni, struct ptl_peer *p);  /* it acked ours */
/* A fresh stream session number (never 0). */
uint32_t ptl_rel_new_session(void);
void ptl_rel_queue(struct ptl_ni *ni, struct ptl_peer *p, struct ptl_txmsg *m);
void ptl_rel_push(struct ptl_ni *ni, struct ptl_peer *p);
/* Before the frame's checksum is verified: true (and the frame is done
 * with: counted, acknowledged) if its header names a frame the stream has
 * already delivered.  A slow receiver's sender resends its window at each
 * timeout, the copies queue up, and checking each one cost the receiver
 * as much as a new frame.  A header garbled into a false match only loses
 * a frame, which is resent; of the header nothing else is used but that
 * the peer is there (its last_heard). */
bool ptl_rel_rx_dup(struct ptl_ni *ni, const struct ptl_wire_hdr *h);
/* A checked frame; ack: the ACK its header carries (PTL_WF_ACKIN), or NULL. */
void ptl_rel_rx(struct ptl_ni *ni, const struct ptl_wire_hdr *h,
                const struct ptl_wire_ackrec *ack, const uint8_t *payload);
/* The NI a frame's header addresses on iface, or NULL (rx.c). */
struct ptl_ni *ptl_rx_find_ni(unsigned iface, const struct ptl_wire_hdr *h);
/* A frame checked but for what needs its NI (its limits), to that NI;
 * false if those refuse it. */
bool ptl_rx_deliver(struct ptl_ni *ni, const struct ptl_wire_hdr *h,
                    const struct ptl_wire_ackrec *ack, const uint8_t *payload);
/* A checked frame whose NI is not there (park.c): true if kept for it. */
bool ptl_park(unsigned iface, const struct ptl_wire_hdr *h, const struct ptl_wire_ackrec *ack,
              const uint8_t *payload);
/* The program's first put, get, atomic or look at an event queue or
 * counter of ni: what the park waits for, rather than PtlNIInit, after
 * which the program still sets up its portal table (on a Tern node any
 * interrupt may run the progress step in between). */
static inline void ptl_ni_receiving(struct ptl_ni *ni)
{
    if (ni && !ni->receiving) {
        ni->receiving = true;
        ptl_g.park_new_ni = true;
    }
}
/* Kept frames to the NIs ready for them (ptl_ni_receiving), oldest first. */
void ptl_park_hand_over_locked(void);
/* Forget the frames kept on iface (its job has ended). */
void ptl_park_drop_iface(unsigned iface);
/* p's retransmission, ack and give-up timers. */
void ptl_rel_peer_timers(struct ptl_ni *ni, struct ptl_peer *p, uint64_t now);
/* Also lowers *exact_min to the soonest acknowledgement due (unrounded). */
uint64_t ptl_rel_deadline(struct ptl_ni *ni, uint64_t *exact_min);
/* t rounded up to the grain of the retransmission deadlines. */
uint64_t ptl_rel_grain_up(uint64_t t);
/* Sends the acks owed to every peer now, not within the ack delay: an NI
 * going away answers for what it took in, or the peers would resend it and
 * linger in PtlNIFini for an answer that never comes. */
void ptl_rel_send_owed_acks(struct ptl_ni *ni);
void ptl_rel_send_held(struct ptl_ni *ni, enum ptl_held_release why);
void ptl_rel_fail_peer(struct ptl_ni *ni, struct ptl_peer *p);
struct ptl_txmsg *ptl_resp_alloc(struct ptl_ni *ni, struct ptl_peer *p);
bool ptl_resp_available(struct ptl_ni *ni, struct ptl_peer *p);
void ptl_resp_free(struct ptl_ni *ni, struct ptl_txmsg *m);
void ptl_txmsg_done(struct ptl_ni *ni, struct ptl_txmsg *m, ptl_ni_fail_t f);
void ptl_progress_locked(void);

/* ---- atomics (atomic.c, atomic_fp.c) ------------------------------------- */
size_t ptl_atomic_size(ptl_datatype_t t);
bool ptl_atomic_valid(ptl_op_t op, ptl_datatype_t t);
/* target = target OP src, element-wise; old (if not NULL) gets the prior
 * contents.  `n` is a multiple of the type size. */
void ptl_atomic_apply(ptl_op_t op, ptl_datatype_t t, uint8_t *target,
                      const uint8_t *src, size_t n, const uint8_t *operand);
void ptl_atomic_fp(ptl_op_t op, ptl_datatype_t t, uint8_t *target,
                   const uint8_t *src, size_t n, const uint8_t *operand);

/* ---- triggered (triggered.c) ---------------------------------------------- */
enum ptl_trig_kind { PTL_TRIG_OP, PTL_TRIG_CT_INC, PTL_TRIG_CT_SET, PTL_TRIG_LINK,
                     PTL_TRIG_UNLINK };
struct ptl_trig {
    struct ptl_trig *next;
    ptl_size_t threshold;
    uint8_t kind;
    struct ptl_ct *ct_target;     /* CT_INC, CT_SET */
    ptl_ct_event_t ct_val;
    struct ptl_entry *entry;      /* LINK, UNLINK: this entry, if still it */
    uint8_t entry_gen;
    struct ptl_op_args args;      /* OP */
};
/* A free trigger record (zeroed), or NULL; ptl_trig_add queues it on ct
 * and fires it at once if ct has reached its threshold already. */
struct ptl_trig *ptl_trig_alloc(struct ptl_ni *ni);
void ptl_trig_add(struct ptl_ni *ni, struct ptl_ct *ct, struct ptl_trig *t);
void ptl_trig_cancel_all(struct ptl_ni *ni, struct ptl_ct *ct);
/* Drops the counter updates aimed at `target` (it is being freed). */
void ptl_trig_forget_ct(struct ptl_ni *ni, struct ptl_ct *target);

#endif /* PTL_INTERNAL_H */
