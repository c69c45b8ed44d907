/*
 * Unexpected space and the receiver's half of flow control.
 *
 * Unexpected space: a few overflow MEs (MANAGE_LOCAL, min_free = the eager
 * limit) that take any message no posted receive matched.  Portals retires a
 * buffer when less than an eager message is left in it (AUTO_UNLINK) and
 * tells us when nothing refers to it any more (AUTO_FREE); then it goes back
 * on the overflow list.  They take no rendezvous message that carries its
 * data (MSG_BIT_PUSHED, msg_send.c).  Those land in landing buffers of
 * their own (N_LAND of LAND_PUSHES pushes each, managed the same way, a
 * share of the unexpected space where that is large enough): a
 * receive posted later copies what landed and pulls only the rest.  When
 * no landing buffer has room, a zero-length ME behind them (the catch)
 * keeps only the header and the receive pulls it all; the sender then
 * counts the push as missed.  So pushes never take eager unexpected space,
 * and never disable the portal.  A landing buffer back on the list goes
 * behind the catch, so a new catch is appended behind it before the old
 * one goes: there is always one.
 *
 * When Portals runs short (no overflow buffer, no unexpected-header slot, or
 * the data EQ nearly full) it disables PT_DATA, refuses the message with
 * PTL_NI_PT_DISABLED in its ACK and posts PTL_EVENT_PT_DISABLED.  Then:
 *   1. drain: PtlMESearch(SEARCH_DELETE) takes every unexpected message off
 *      Portals' list into the library's saved queue (heap copies), which
 *      frees the headers and the overflow buffers;
 *   2. PAUSE every rank; each answers once nothing of its own is in flight
 *      to us, so everything it sent after its first refusal was refused too;
 *   3. PtlPTEnable and UNPAUSE: senders resend their refused messages in
 *      order.  Nothing is lost and pair-wise order holds.
 * Receives look at the saved queue before posting to Portals: what was
 * drained is older than anything Portals still holds from the same sender.
 *
 * A drained message may still be arriving (its unexpected header existed,
 * its data not all there).  It is saved as pending, keyed by where its data
 * lands; the overflow buffer's PUT event for that address completes it.
 * To tell the two cases apart we keep the set of complete, unclaimed
 * messages (by address) from the overflow PUT events.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msg_internal.h"

#define N_OVF 8
#define N_LAND 2
#define LAND_PUSHES 2

struct ovf {
    int kind; /* OBJ_OVF */
    char *buf;
    size_t size;
    bool linked;
    bool landing; /* takes pushed messages only */
};
static struct ovf ovfs[N_OVF], lands[N_LAND];
static struct ovf push_catch = {.kind = OBJ_OVF};
static ptl_handle_me_t catch_me;
static struct { int kind; } drain_mark = {OBJ_DRAIN}, drain_end = {OBJ_DRAIN_END};

/* Pending drained messages: at most one per sender is ever incomplete. */
static struct msg_saved **pending;
static int n_pending, cap_pending;

/* ---- set of complete unexpected messages, by address ------------------ */
static void **set;
static size_t set_cap; /* power of two */

static size_t slot_of(const void *p) { return ((uintptr_t)p * 0x9E3779B97F4A7C15ULL >> 20) & (set_cap - 1); }

static void set_add(void *p)
{
    size_t i = slot_of(p);
    while (set[i])
        i = (i + 1) & (set_cap - 1);
    set[i] = p;
}

static bool set_remove(const void *p)
{
    size_t i = slot_of(p);
    while (set[i] && set[i] != p)
        i = (i + 1) & (set_cap - 1);
    if (!set[i])
        return false;
    set[i] = NULL;
    /* Backward-shift deletion keeps probe chains intact. */
    for (size_t j = (i + 1) & (set_cap - 1); set[j]; j = (j + 1) & (set_cap - 1)) {
        size_t h = slot_of(set[j]);
        bool between = i <= j ? (h > i && h <= j) : (h > i || h <= j);
        if (!between) {
            set[i] = set[j];
            set[j] = NULL;
            i = j;
        }
    }
    return true;
}

/* ---- unexpected space --------------------------------------------------- */

static void ovf_link(struct ovf *o)
{
    /* Eager space: MSG_BIT_PUSHED clear; landing space: set. */
    ptl_me_t me = msg_me(o->buf, o->size,
                         PTL_ME_OP_PUT | PTL_ME_MANAGE_LOCAL | PTL_ME_EVENT_LINK_DISABLE,
                         PTL_RANK_ANY, o->landing ? MSG_BIT_PUSHED : 0, ~MSG_BIT_PUSHED);
    me.min_free = o->landing ? eng.push_max : eng.eager_max;
    ptl_handle_me_t h;
    int rc = PtlMEAppend(eng.ni, PT_DATA, &me, PTL_OVERFLOW_LIST, o, &h);
    if (rc != PTL_OK)
        msg_fatal("cannot post unexpected space (Portals error %d)", rc);
    o->linked = true;
}

/* Catches replaced but still linked: Portals refuses to unlink one while
 * a message is arriving into it (PTL_IN_USE).  Until it goes, pushes stop
 * at it, ahead of the landing buffer behind it: missed, not lost.  Tried
 * again when a caught message has arrived, when a receive takes an
 * unexpected message, and at the next replacement. */
static ptl_handle_me_t *old_catches;
static int n_old_catches, cap_old_catches;

static void catches_retire(void)
{
    int kept = 0;
    for (int i = 0; i < n_old_catches; i++) {
        int rc = PtlMEUnlink(old_catches[i]);
        if (rc == PTL_IN_USE)
            old_catches[kept++] = old_catches[i];
        else if (rc != PTL_OK)
            msg_fatal("cannot take back an old overflow entry of pushed messages (Portals "
                      "error %d)", rc);
    }
    n_old_catches = kept;
}

/* The catch of pushed messages no landing buffer took, appended behind
 * everything now on the overflow list; the one it replaces goes after. */
static void catch_link(void)
{
    ptl_me_t me = msg_me(NULL, 0, PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE, PTL_RANK_ANY,
                         MSG_BIT_PUSHED, ~MSG_BIT_PUSHED);
    ptl_handle_me_t h;
    int rc = PtlMEAppend(eng.ni, PT_DATA, &me, PTL_OVERFLOW_LIST, &push_catch, &h);
    if (rc != PTL_OK)
        msg_fatal("cannot post the overflow entry of pushed messages (Portals error %d)", rc);
    if (push_catch.linked) {
        if (n_old_catches == cap_old_catches) {
            int cap = cap_old_catches ? 2 * cap_old_catches : 8;
            ptl_handle_me_t *n = realloc(old_catches, sizeof *n * (size_t)cap);
            if (!n)
                msg_fatal("no memory for the overflow entries of pushed messages");
            old_catches = n;
            cap_old_catches = cap;
        }
        old_catches[n_old_catches++] = catch_me;
        catches_retire();
    }
    catch_me = h;
    push_catch.linked = true;
}

static void space_init(struct ovf *o, size_t size, bool landing)
{
    o->kind = OBJ_OVF;
    o->size = size;
    o->landing = landing;
    o->buf = malloc(size);
    if (!o->buf)
        msg_fatal("no memory for %zu bytes of unexpected space", size);
    ovf_link(o);
}

void msg_flow_init(void)
{
    ptl_pt_index_t pt;
    int rc = PtlPTAlloc(eng.ni, PTL_PT_FLOWCTRL, eng.eq_data, PT_DATA, &pt);
    if (rc != PTL_OK)
        msg_fatal("PtlPTAlloc(data) failed (%d)", rc);
    size_t total = (size_t)msg_env_long("UNEXPECTED", 4L << 20);
    eng.saved_max = (uint64_t)msg_env_long("SAVED_MAX", 64L << 20);
    /* Landing space is a quarter of it at most, where that holds N_LAND
     * buffers of LAND_PUSHES pushes (1 MiB of the default 4 MiB): a rank
     * of a many-rank node has little memory to spare. */
    size_t land = LAND_PUSHES * eng.push_max;
    bool landing = eng.push_max && N_LAND * land <= total / 4;
    if (landing)
        total -= N_LAND * land;
    size_t each = total / N_OVF;
    if (each < 2 * eng.eager_max + 64)
        each = 2 * eng.eager_max + 64;
    set_cap = 1024;
    while (set_cap < 4 * (size_t)eng.lim.max_unexpected_headers)
        set_cap <<= 1;
    for (int i = 0; landing && i < N_LAND; i++)
        space_init(&lands[i], land, true);
    catch_link();
    set = calloc(set_cap, sizeof *set);
    cap_pending = (int)eng.size + 1;
    pending = calloc((size_t)cap_pending, sizeof *pending);
    if (!set || !pending)
        msg_fatal("no memory for the unexpected-message tables");
    for (int i = 0; i < N_OVF; i++)
        space_init(&ovfs[i], each, false);
}

/* ---- flow control ------------------------------------------------------- */

static void start_recovery(void)
{
    if (eng.recovering)
        return;
    eng.recovering = eng.draining = true;
    eng.epoch++;
    eng.st_recoveries++;
    if (eng.verbose > 1)
        fprintf(stderr, "%s node %ld: PT disabled, recovery %llu\n", eng.who, eng.rank,
                (unsigned long long)eng.epoch);
    ptl_me_t me = msg_me(NULL, 0, PTL_ME_OP_PUT, PTL_RANK_ANY, 0, ~0ULL);
    int rc = PtlMESearch(eng.ni, PT_DATA, &me, PTL_SEARCH_DELETE, &drain_mark);
    /* A search for bits nobody sends posts one NO_MATCH event after all
     * the drain's events: the end marker. */
    me.ignore_bits = 0;
    me.match_bits = MSG_BITS_RESERVED;
    if (rc == PTL_OK)
        rc = PtlMESearch(eng.ni, PT_DATA, &me, PTL_SEARCH_ONLY, &drain_end);
    if (rc != PTL_OK)
        msg_fatal("PtlMESearch failed (%d)", rc);
}

void msg_flow_drain_from(long src, void *end)
{
    /* All of src's, not only the one a cancel looks for: receives look at
     * the saved queue first, so what stays in Portals must be newer than
     * anything saved from the same sender. */
    ptl_me_t me = msg_me(NULL, 0, PTL_ME_OP_PUT, (ptl_rank_t)src, 0, ~0ULL);
    int rc = PtlMESearch(eng.ni, PT_DATA, &me, PTL_SEARCH_DELETE, &drain_mark);
    me.ignore_bits = 0;
    me.match_bits = MSG_BITS_RESERVED;
    if (rc == PTL_OK)
        rc = PtlMESearch(eng.ni, PT_DATA, &me, PTL_SEARCH_ONLY, end);
    if (rc != PTL_OK)
        msg_fatal("PtlMESearch failed (%d)", rc);
}

/* Messages the library keeps (drained, or sent to oneself) hold heap up to
 * PREFIX_SAVED_MAX bytes: past that the job ends with a message saying
 * so, rather than the node running out of memory with no word of why. */
void *msg_saved_alloc(uint64_t len)
{
    if (eng.saved_bytes + len > eng.saved_max)
        msg_fatal("more than %llu bytes of unexpected messages held (%s_SAVED_MAX): receives "
                  "are not keeping up with what is sent to this rank",
                  (unsigned long long)eng.saved_max, eng.prefix);
    void *p = malloc(len ? len : 1);
    if (!p)
        msg_fatal("no memory to keep an unexpected message of %llu bytes",
                  (unsigned long long)len);
    eng.saved_bytes += len;
    return p;
}

void msg_saved_release(struct msg_saved *s)
{
    if (s->data)
        eng.saved_bytes -= s->len;
    free(s->data);
    free(s);
}

void msg_saved_append(struct msg_saved *s)
{
    eng.saved_gen++;
    s->next = NULL;
    if (eng.saved_tail)
        eng.saved_tail->next = s;
    else
        eng.saved_head = s;
    eng.saved_tail = s;
}

static void drained(const ptl_event_t *ev)
{
    struct msg_saved *s = calloc(1, sizeof *s);
    if (!s)
        msg_fatal("no memory to keep an unexpected message");
    s->src = (long)ev->initiator.rank;
    s->bits = ev->match_bits;      /* receives and probes ignore MSG_BIT_PUSHED */
    s->hd = ev->hdr_data;
    /* An eager message's data, or what of a pushed one landed: kept (the
     * sender of one that landed whole is done with its buffer). */
    if (ev->mlength) {
        s->len = ev->mlength;
        s->data = msg_saved_alloc(s->len);
        if (set_remove(ev->start)) {
            memcpy(s->data, ev->start, s->len);
        } else {
            s->pending = true;
            s->ovf_start = ev->start;
            if (n_pending == cap_pending)
                msg_fatal("more incomplete unexpected messages than senders");
            pending[n_pending++] = s;
        }
    }
    eng.st_drained++;
    msg_saved_append(s);
}

static void check_enable(void)
{
    if (!eng.recovering || eng.draining)
        return;
    for (long r = 0; r < eng.size; r++)
        if (eng.peers[r].acked_epoch != eng.epoch && !eng.peers[r].exiting)
            return;
    int rc = PtlPTEnable(eng.ni, PT_DATA);
    if (rc != PTL_OK)
        msg_fatal("PtlPTEnable failed (%d)", rc);
    eng.recovering = false;
    if (eng.verbose > 1)
        fprintf(stderr, "%s node %ld: recovery %llu done, %llu drained so far\n", eng.who, eng.rank,
                (unsigned long long)eng.epoch, (unsigned long long)eng.st_drained);
    for (long r = 0; r < eng.size; r++)
        if (!eng.peers[r].exiting)
            msg_ctl_send(r, CTL_HD(CTL_UNPAUSE, eng.epoch), false);
}

static void drain_done(void)
{
    /* Overflow buffers the drain freed were re-posted by their AUTO_FREE
     * events, which came before this marker. */
    eng.draining = false;
    if (eng.verbose > 1)
        fprintf(stderr, "%s node %ld: drained, pausing every node\n", eng.who, eng.rank);
    for (long r = 0; r < eng.size; r++)
        if (!eng.peers[r].exiting)
            msg_ctl_send(r, CTL_HD(CTL_PAUSE, eng.epoch), false);
    check_enable();
}

/* Data of an unexpected message is complete in an overflow buffer. */
static void arrived(const ptl_event_t *ev)
{
    eng.st_unexpected++;
    if (!ev->mlength)
        return;
    for (int i = 0; i < n_pending; i++)
        if (pending[i]->ovf_start == ev->start) {
            struct msg_saved *s = pending[i];
            pending[i] = pending[--n_pending];
            if (s->cancelled) { /* out of matching already (msg_cancel.c) */
                msg_saved_release(s);
                return;
            }
            memcpy(s->data, ev->start, s->len);
            s->pending = false;
            s->ovf_start = NULL;
            if (s->waiter)
                msg_recv_take_saved(s->waiter, s);
            return;
        }
    set_add(ev->start);
}

void msg_flow_event(const ptl_event_t *ev)
{
    int kind = ev->user_ptr ? *(const int *)ev->user_ptr : 0;
    switch (ev->type) {
    case PTL_EVENT_PT_DISABLED:
        if (ev->pt_index == PT_DATA)
            start_recovery();
        break;
    case PTL_EVENT_PUT:
        if (kind == OBJ_OVF)
            arrived(ev);
        if (ev->user_ptr == &push_catch && n_old_catches)
            catches_retire();
        break;
    case PTL_EVENT_PUT_OVERFLOW:
        if (kind == OBJ_DRAIN)
            drained(ev);
        break;
    case PTL_EVENT_SEARCH:
        if (kind == OBJ_DRAIN_END)
            drain_done();
        break;
    case PTL_EVENT_AUTO_UNLINK:
        if (kind == OBJ_OVF)
            ((struct ovf *)ev->user_ptr)->linked = false;
        break;
    case PTL_EVENT_AUTO_FREE:
        if (kind == OBJ_OVF) {
            struct ovf *o = ev->user_ptr;
            ovf_link(o);
            if (o->landing)
                catch_link(); /* behind it again */
        }
        break;
    default:
        break;
    }
}

void msg_ovf_claimed(const ptl_event_t *ev)
{
    if (ev->mlength)
        set_remove(ev->start);
    if (n_old_catches)
        catches_retire();
}

void msg_flow_pause_ack(long from, uint64_t epoch)
{
    if (!eng.recovering || epoch != eng.epoch)
        return;
    eng.peers[from].acked_epoch = epoch;
    check_enable();
}

void msg_flow_peer_exiting(long from)
{
    (void)from;
    check_enable();
}
