/*
 * Barriers whose rounds Portals forwards by itself (msg.h msg_barrier_*):
 * a dissemination barrier in which, once a rank has posted its operations,
 * every later round is sent by a triggered put the moment its condition
 * holds, inside Portals (on a Tern node: in the kernel, as the frame
 * arrives), and the program wakes once, when the last round is in.
 *
 * Resources, per barrier object (a communicator, or NX's one engine):
 *   PT_COLL  one portal for every barrier of the process, no flow
 *            control: its entries are persistent and take zero bytes, so a
 *            put aimed at them can never be refused.
 *   ME k     round k's entry: match bits (id << 8) | k, only from the rank
 *            that sends round k to this one (me - 2^k mod n); it counts on
 *            CT k; only the last round's makes events (below).
 *   CT k     round k's counter, cumulative over the object's life.
 *
 * Round k of dissemination may go out when this rank has received round
 * k-1 AND has itself passed round k-1 (sent it, having received every
 * round before).  Triggering on the arrival alone is not a barrier: the
 * message would vouch only for a chain of k+1 ranks, not for 2^k (with 8
 * ranks rank i would never hear of rank i-5).  So CT k counts both: each
 * arrival of round k, and this rank's own passage of round k (a
 * triggered CTInc, or the PtlCTInc at entry for round 0).  Barrier number
 * e (1, 2, ...) then posts, for k >= 1,
 *     PtlTriggeredPut(round k to me + 2^k)   when CT k-1 reaches 2e
 *     PtlTriggeredCTInc(CT k, 1)             when CT k-1 reaches 2e
 * puts round 0 and increments CT 0 itself, and is done when CT last
 * reaches 2e.
 *
 * Why counts of 2e are safe although a fast rank's next barrier may
 * already be arriving: each CT gets exactly one arrival and one own step
 * per barrier.  Before the first rank anywhere finishes barrier e, no rank
 * has entered e+1, so no CT holds more than e of either kind, and 2e means
 * "both, for barrier e": the textbook dissemination barrier, so that first
 * rank finishes only after every rank entered e.  Later, a CT may reach 2e
 * with e+1 arrivals and e-1 own steps; the round it releases then vouches
 * for "everyone entered e", which is already true.  Every CT ends barrier
 * e at exactly 2e at every rank, so nothing is re-posted but the triggered
 * operations, and after an object's last barrier no put to it is still
 * travelling (its owner may free it then; a new object with the same id
 * starts from zero).
 *
 * Waking: the engine must keep making progress while a rank waits (MPI's
 * progress rule: a peer's rendezvous send to a receive posted before the
 * barrier, flow-control PAUSEs, which go to every rank), so the wait is
 * the engine's own blocking event wait, not PtlCTWait.  The last round's
 * entry, alone of them, also makes a full event (on the engine's misc
 * queue): its arrival is usually what completes the barrier (it comes
 * from a rank log2 n rounds away, this rank's own chain is one round
 * shorter; 75-85 % of the barriers at 8 host ranks), so that event is the
 * one wake-up.  When it came and the
 * counter is still short (this rank's own chain is late), the wait posts
 * a triggered zero-byte control put to this rank itself (CTL_WAKE) on the
 * last counter, whose event ends the wait when the chain completes.
 * Between rounds nothing reaches the program.
 */
#include <stdlib.h>
#include <string.h>

#include "msg_internal.h"

#define ROUND_BITS 8

struct msg_barrier {
    struct msg_barrier *next; /* the live objects, for their events */
    uint64_t id;
    uint64_t arrived;       /* last-round events seen (one per barrier) */
    int rounds;             /* ceil(log2 n): 0 for one member */
    uint64_t epoch;         /* barriers this object has done */
    ptl_process_t *to;      /* round k's target */
    ptl_handle_ct_t *ct;
    ptl_handle_me_t *me;
    int made;               /* CTs and MEs that exist (for a partial free) */
};

static enum { COLL_UNTRIED, COLL_READY, COLL_NONE } coll_state;
static struct msg_barrier *live;
static ptl_handle_md_t md_coll;
static char coll_byte;

static bool coll_setup(void)
{
    if (coll_state == COLL_UNTRIED) {
        ptl_pt_index_t pt;
        ptl_md_t md = {.start = &coll_byte, .length = 0, .options = 0,
                       .eq_handle = PTL_EQ_NONE, .ct_handle = PTL_CT_NONE};
        bool ok = PtlPTAlloc(eng.ni, 0, eng.eq_misc, PT_COLL, &pt) == PTL_OK;
        if (ok && PtlMDBind(eng.ni, &md, &md_coll) != PTL_OK) {
            PtlPTFree(eng.ni, PT_COLL);
            ok = false;
        }
        coll_state = ok ? COLL_READY : COLL_NONE;
    }
    return coll_state == COLL_READY;
}

static uint64_t round_bits(const struct msg_barrier *b, int k)
{
    return (b->id << ROUND_BITS) | (uint64_t)k;
}

/* A last-round arrival (msg_start.c dispatch).  Found by the id in its
 * match bits: an object may be gone by the time its event is read. */
void msg_barrier_event(const ptl_event_t *ev)
{
    for (struct msg_barrier *b = live; b; b = b->next)
        if (b->id == ev->match_bits >> ROUND_BITS) {
            b->arrived++;
            return;
        }
}

void msg_barrier_free(struct msg_barrier *b)
{
    if (!b)
        return;
    for (struct msg_barrier **pp = &live; *pp; pp = &(*pp)->next)
        if (*pp == b) {
            *pp = b->next;
            break;
        }
    for (int k = 0; k < b->made; k++) {
        PtlMEUnlink(b->me[k]);
        PtlCTFree(b->ct[k]);
    }
    eng.barrier_entries -= b->made;
    free(b->to);
    free(b->ct);
    free(b->me);
    free(b);
}

struct msg_barrier *msg_barrier_new(uint64_t id, long n, long me, const int *world)
{
    if (n < 1 || me < 0 || me >= n || id >= (1ULL << (64 - ROUND_BITS)))
        return NULL;
    struct msg_barrier *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->id = id;
    while ((1L << b->rounds) < n)
        b->rounds++;
    if (b->rounds == 0)
        return b;
    b->to = calloc((size_t)b->rounds, sizeof *b->to);
    b->ct = calloc((size_t)b->rounds, sizeof *b->ct);
    b->me = calloc((size_t)b->rounds, sizeof *b->me);
    if (!b->to || !b->ct || !b->me || !coll_setup())
        goto fail;
    /* Within the barriers' share of Portals' entries (msg_start.c
     * split_entries): past it the caller's barrier is made of messages. */
    if (eng.barrier_entries + b->rounds > eng.barrier_entries_max)
        goto fail;
    for (int k = 0; k < b->rounds; k++) {
        long d = 1L << k, to = (me + d) % n, from = (me - d % n + n) % n;
        b->to[k].rank = (ptl_rank_t)(world ? world[to] : to);
        if (PtlCTAlloc(eng.ni, &b->ct[k]) != PTL_OK)
            goto fail;
        ptl_me_t e;
        memset(&e, 0, sizeof e);
        e.start = &coll_byte;
        e.length = 0;
        e.ct_handle = b->ct[k];
        e.uid = PTL_UID_ANY;
        e.options = PTL_ME_OP_PUT | PTL_ME_EVENT_CT_COMM | PTL_ME_EVENT_LINK_DISABLE |
                    PTL_ME_EVENT_UNLINK_DISABLE;
        if (k != b->rounds - 1)
            e.options |= PTL_ME_EVENT_COMM_DISABLE;
        e.match_id.rank = (ptl_rank_t)(world ? world[from] : from);
        e.match_bits = round_bits(b, k);
        e.ignore_bits = 0;
        if (PtlMEAppend(eng.ni, PT_COLL, &e, PTL_PRIORITY_LIST, NULL, &b->me[k]) != PTL_OK) {
            PtlCTFree(b->ct[k]);
            goto fail;
        }
        b->made = k + 1;
        eng.barrier_entries++;
    }
    b->next = live;
    live = b;
    return b;
fail:
    msg_barrier_free(b);
    return NULL;
}

static void must(int rc, const char *what)
{
    if (rc != PTL_OK)
        msg_fatal("barrier: %s failed (Portals error %d)", what, rc);
}

void msg_barrier_wait(struct msg_barrier *b)
{
    if (b->rounds == 0)
        return;
    ptl_size_t th = 2 * ++b->epoch;
    int last = b->rounds - 1;
    ptl_ct_event_t one = {.success = 1, .failure = 0};
    for (int k = 1; k <= last; k++) {
        must(PtlTriggeredPut(md_coll, 0, 0, PTL_NO_ACK_REQ, b->to[k], PT_COLL, round_bits(b, k),
                             0, NULL, 0, b->ct[k - 1], th),
             "PtlTriggeredPut");
        must(PtlTriggeredCTInc(b->ct[k], one, b->ct[k - 1], th), "PtlTriggeredCTInc");
    }
    must(PtlPut(md_coll, 0, 0, PTL_NO_ACK_REQ, b->to[0], PT_COLL, round_bits(b, 0), 0, NULL, 0),
         "PtlPut");
    must(PtlCTInc(b->ct[0], one), "PtlCTInc");
    for (bool backup = false;;) {
        ptl_ct_event_t v;
        must(PtlCTGet(b->ct[last], &v), "PtlCTGet");
        if (v.failure)
            msg_fatal("barrier: a triggered operation failed (Portals resources)");
        if (v.success >= th) {
            eng.st_ptl_barriers++;
            return;
        }
        if (!backup && b->arrived >= b->epoch) {
            /* The last round is in but this rank's own chain is not: wake
             * when it is (fires at once if it is by now). */
            ptl_process_t self = {.rank = (ptl_rank_t)eng.rank};
            must(PtlTriggeredPut(md_coll, 0, 0, PTL_NO_ACK_REQ, self, PT_CTL, 0, 0, NULL,
                                 CTL_HD(CTL_WAKE, 0), b->ct[last], th),
                 "PtlTriggeredPut (wake-up)");
            backup = true;
            eng.st_ptl_wakes++;
        }
        eng.st_ptl_waits++;
        msg_progress(true);
    }
}

int msg_barrier_rounds(const struct msg_barrier *b) { return b->rounds; }
