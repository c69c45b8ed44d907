/*
 * Requests, receives and probes.
 *
 * A receive first looks at the saved queue (messages a flow-control drain
 * took off Portals' list, and messages to oneself, oldest first), then
 * becomes a priority ME: match bits and ignore bits as the layer gave them,
 * match_id = the source selector.  Portals matches it against its own
 * unexpected list atomically on append (PUT_OVERFLOW: data in unexpected
 * space, copied once) or against later arrivals (PUT: data already in the
 * buffer).  A rendezvous announcement turns into a PtlGet into the buffer;
 * for a late one (HD_LATE, msg_send.c) the receive exposes its buffer on
 * PT_RDV instead and sends CTL_READY, and its sender puts the message.
 * A message longer than the buffer delivers what fits and completes the
 * receive with MSG_ERR_TRUNCATE (the layer reports it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msg_internal.h"

/* The request table: bounded, sized once (PREFIX_REQUESTS). */
static struct msg_req *reqs;
static long n_reqs, free_hint;
static uint64_t post_counter;

struct probe {
    int kind; /* OBJ_PROBE */
    bool got;
    ptl_event_t ev;
};

void msg_reqs_init(void)
{
    n_reqs = msg_env_long("REQUESTS", 4352);
    if (n_reqs < 64)
        n_reqs = 64;
    reqs = calloc((size_t)n_reqs, sizeof *reqs);
    if (!reqs)
        msg_fatal("no memory for %ld requests (%s_REQUESTS)", n_reqs, eng.prefix);
}

struct msg_req *msg_req_new(bool internal)
{
    for (long k = 0; k < n_reqs; k++) {
        long i = (free_hint + k) % n_reqs;
        if (!reqs[i].in_use) {
            memset(&reqs[i], 0, sizeof reqs[i]);
            reqs[i].kind = OBJ_REQ;
            reqs[i].in_use = true;
            reqs[i].internal = internal;
            free_hint = i + 1;
            return &reqs[i];
        }
    }
    return NULL;
}

void msg_req_free(struct msg_req *r)
{
    r->in_use = false;
    long i = r - reqs;
    if (i < free_hint)
        free_hint = i;
}

long msg_req_index(const struct msg_req *r) { return r - reqs; }
long msg_req_capacity(void) { return n_reqs; }

struct msg_req *msg_req_at(long i)
{
    if (i < 0 || i >= n_reqs || !reqs[i].in_use)
        return NULL;
    return &reqs[i];
}

void msg_wait(struct msg_req *r)
{
    while (!r->done)
        msg_progress(true);
}

bool msg_test(struct msg_req *r)
{
    if (!r->done)
        msg_progress(false);
    return r->done;
}

void msg_ignore(struct msg_req *r)
{
    r->ignored = true;
    if (r->done)
        msg_req_free(r);
}

static void finished(struct msg_req *r)
{
    r->done = true;
    if (r->ignored)
        msg_req_free(r);
}

/* Pull a rendezvous message of len bytes, take of them into the buffer,
 * but for the first `landed` (pushed with the announcement): one get per
 * piece of Portals' message limit (msg_pieces), each for what of it is
 * still wanted (maybe nothing), so the sender sees every piece asked for
 * and lets its buffer go, and a zero-byte message (synchronous, or no
 * room) too. */

/* False when there is no room for it now (nothing started). */
static bool start_get(struct msg_req *r, long src, uint64_t id, uint64_t len, uint64_t take,
                      uint64_t landed, bool posted)
{
    if (eng.ops_inflight + (long)msg_pieces(len) > eng.ops_max && eng.ops_inflight > 0)
        return false;
    ptl_md_t md = {.start = take ? r->buf : NULL, .length = take, .options = 0,
                   .eq_handle = eng.eq_misc, .ct_handle = PTL_CT_NONE};
    int rc = PtlMDBind(eng.ni, &md, &r->get_md);
    if (rc == PTL_NO_SPACE)
        return false;
    if (rc != PTL_OK)
        msg_fatal("cannot bind a %llu-byte receive buffer (Portals error %d)",
                  (unsigned long long)take, rc);
    r->get_len = msg_pieces(len);
    r->get_got = 0;
    ptl_process_t from = {.rank = (ptl_rank_t)src};
    for (uint64_t k = 0; k < r->get_len; k++) {
        uint64_t piece = k * eng.lim.max_msg_size, end = piece + eng.lim.max_msg_size;
        uint64_t off = piece > landed ? piece : landed;
        if (end > take)
            end = take;
        uint64_t n = off < end ? end - off : 0;
        rc = PtlGet(r->get_md, n ? off : 0, n, from, PT_RDV, id | (posted ? RDV_GET_POSTED : 0),
                    n ? off : piece, r);
        if (rc != PTL_OK)
            msg_fatal("PtlGet of %llu bytes from node %ld failed (%d)", (unsigned long long)n,
                      src, rc);
        eng.ops_inflight++;
    }
    return true;
}

static void pull(struct msg_req *r, long src, uint64_t id, uint64_t len, uint64_t take,
                 uint64_t landed, bool posted)
{
    if (!eng.pull_head && start_get(r, src, id, len, take, landed, posted))
        return;
    eng.st_pulls_waited++;
    r->pull_id = id;
    r->pull_landed = landed;
    r->pull_posted = posted;
    r->held_next = NULL;
    if (eng.pull_tail)
        eng.pull_tail->held_next = r;
    else
        eng.pull_head = r;
    eng.pull_tail = r;
}

void msg_recv_pulls_waiting(void)
{
    while (eng.pull_head) {
        struct msg_req *r = eng.pull_head;
        uint64_t take = r->len <= r->count ? r->len : r->count;
        if (!start_get(r, r->src, r->pull_id, r->len, take, r->pull_landed, r->pull_posted))
            return;
        eng.pull_head = r->held_next;
        if (!eng.pull_head)
            eng.pull_tail = NULL;
    }
}

/* Receive r matched late send r->pull_id of r->src: expose its buffer for
 * the sender's put (what fits of it: Portals truncates the rest) and ask
 * for it.  False when Portals has no entry now. */
static bool late_expose(struct msg_req *r)
{
    uint64_t take = r->len <= r->count ? r->len : r->count;
    ptl_me_t me = msg_me(take ? r->buf : NULL, take,
                         PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE | PTL_ME_EVENT_UNLINK_DISABLE |
                             (r->get_len == 1 ? PTL_ME_USE_ONCE : 0),
                         (ptl_rank_t)r->src, r->pull_id | RDV_LATE_PUT, 0);
    int rc = PtlMEAppend(eng.ni, PT_RDV, &me, PTL_PRIORITY_LIST, r, &r->me);
    if (rc == PTL_NO_SPACE)
        return false;
    if (rc != PTL_OK)
        msg_fatal("cannot expose a %llu-byte receive buffer (Portals error %d)",
                  (unsigned long long)take, rc);
    msg_ctl_send(r->src, CTL_HD(CTL_READY, r->pull_id), false);
    eng.peers[r->src].ready_out++;
    return true;
}

/* Exposes peer t's parked receives while its READYs are under the bound. */
static void parked_run_peer(long t)
{
    struct msg_peer *p = &eng.peers[t];
    while (p->parked_head && p->ready_out < LATE_READY_MAX) {
        if (!late_expose(p->parked_head)) {
            eng.parked_retry = true; /* no Portals entry: the next progress pass */
            return;
        }
        p->parked_head = p->parked_head->held_next;
        if (!p->parked_head)
            p->parked_tail = NULL;
    }
}

void msg_recv_parked_run(void)
{
    eng.parked_retry = false;
    for (long t = 0; t < eng.size; t++)
        if (eng.peers[t].parked_head)
            parked_run_peer(t);
}

void msg_recv_landed(struct msg_req *r, const ptl_event_t *ev)
{
    if (ev->ni_fail_type != PTL_NI_OK)
        msg_fatal("a message from node %ld failed on arrival (Portals failure %d)", r->src,
                  (int)ev->ni_fail_type);
    if (++r->get_got < r->get_len)
        return;
    if (r->get_len > 1)
        PtlMEUnlink(r->me);
    long src = r->src;
    finished(r);
    eng.peers[src].ready_out--;
    parked_run_peer(src);
}

/* Receive r matched a rendezvous announcement: pull it, or, if it is late
 * (its sender had no exposure for it), expose r's buffer for its put. */
static void pull_or_expose(struct msg_req *r, long src, uint64_t hd, uint64_t take,
                           uint64_t landed, bool posted)
{
    uint64_t id = (hd >> HD_ID_SHIFT) & HD_ID_MASK, len = hd & HD_LEN_MASK;
    if (!(hd & HD_LATE)) {
        pull(r, src, id, len, take, landed, posted);
        return;
    }
    r->pull_id = id;
    r->get_len = msg_pieces(len);
    r->get_got = 0;
    struct msg_peer *p = &eng.peers[src];
    if (!p->parked_head && p->ready_out < LATE_READY_MAX && late_expose(r))
        return;
    r->held_next = NULL;
    if (p->parked_tail)
        p->parked_tail->held_next = r;
    else
        p->parked_head = r;
    p->parked_tail = r;
    if (p->ready_out < LATE_READY_MAX)
        eng.parked_retry = true; /* Portals had no entry */
}

/* A message matched receive r: land what fits.  data: where the message's
 * first `landed` bytes wait, an eager message's all (NULL: Portals put them
 * in the buffer; posted: r was posted before the message came). */
static void deliver(struct msg_req *r, long src, uint64_t bits, uint64_t hd, uint64_t rlength,
                    const void *data, uint64_t landed, bool posted)
{
    bool rdv = hd & HD_RDV;
    uint64_t len = rdv ? hd & HD_LEN_MASK : rlength;
    uint64_t take = len <= r->count ? len : r->count;
    r->src = src;
    r->mbits = bits & ~MSG_BIT_PUSHED;
    r->len = len;
    /* Counted as eager and rendezvous sends are: not a message to oneself
     * (a copy), so a collective's messages per rank can be checked. */
    if (src != eng.rank)
        eng.st_received++;
    if (len > r->count)
        r->error = MSG_ERR_TRUNCATE;
    if (rdv) {
        /* All of it came with the announcement: its ACK tells the sender
         * (msg_send.c).  Otherwise pull the rest, even of a truncated one,
         * and a zero-byte (synchronous) one: the get tells its sender that
         * a receive took it. */
        bool pushed = bits & MSG_BIT_PUSHED;
        if (!pushed)
            landed = 0;
        bool whole = pushed && landed == len && !(hd & HD_SYNC); /* the ACK told the sender */
        /* The rest is asked for first: the copy of what waited in a
         * landing buffer (msg_flow.c) then overlaps its trip.  They fill
         * different bytes, and the request completes only after both. */
        if (!whole)
            pull_or_expose(r, src, hd, take, landed, posted);
        if (data && landed)
            memcpy(r->buf, data, (size_t)(landed < take ? landed : take));
        if (whole)
            finished(r);
        return;
    }
    if (data && take)
        memcpy(r->buf, data, (size_t)take);
    finished(r);
}

void msg_recv_event(struct msg_req *r, const ptl_event_t *ev)
{
    if (r->posted)
        eng.recv_mes--;
    r->posted = false;
    if (ev->ni_fail_type != PTL_NI_OK)
        msg_fatal("a message from node %u failed on arrival (Portals failure %d)",
                  ev->initiator.rank, (int)ev->ni_fail_type);
    /* PUT: Portals put min(length, count) bytes into the buffer already;
     * PUT_OVERFLOW: the data waits in unexpected space. */
    bool posted = ev->type == PTL_EVENT_PUT;
    deliver(r, (long)ev->initiator.rank, ev->match_bits, ev->hdr_data, ev->rlength,
            posted ? NULL : ev->start, ev->mlength, posted);
}

void msg_recv_reply(struct msg_req *r, const ptl_event_t *ev)
{
    if (ev->ni_fail_type != PTL_NI_OK)
        msg_fatal("pulling a message from node %ld failed (Portals failure %d)", r->src,
                  (int)ev->ni_fail_type);
    if (++r->get_got < r->get_len)
        return;
    PtlMDRelease(r->get_md);
    finished(r);
}

void msg_recv_take_saved(struct msg_req *r, struct msg_saved *s)
{
    if (s->pending) { /* completes when its data is in (msg_flow.c) */
        s->waiter = r;
        r->wait_saved = s;
        return;
    }
    r->wait_saved = NULL;
    deliver(r, s->src, s->bits, s->hd, s->len, s->data, s->len, s->posted);
    msg_saved_release(s);
}

static bool saved_matches(const struct msg_saved *s, uint64_t bits, uint64_t ignore, long srcsel)
{
    return ((s->bits ^ bits) & ~(ignore | MSG_BIT_PUSHED)) == 0 &&
           (srcsel == MSG_ANY_SOURCE || srcsel == s->src);
}

void msg_saved_unlink(struct msg_saved *prev, struct msg_saved *s)
{
    if (prev)
        prev->next = s->next;
    else
        eng.saved_head = s->next;
    if (eng.saved_tail == s)
        eng.saved_tail = prev;
}

/* The oldest saved message matching, unlinked from the queue if take. */
struct msg_saved *msg_saved_find(uint64_t bits, uint64_t ignore, long srcsel, bool take)
{
    struct msg_saved *prev = NULL;
    for (struct msg_saved *s = eng.saved_head; s; prev = s, s = s->next) {
        if (!saved_matches(s, bits, ignore, srcsel))
            continue;
        if (take)
            msg_saved_unlink(prev, s);
        return s;
    }
    return NULL;
}

ptl_me_t msg_recv_me(void *buf, uint64_t count, uint64_t bits, uint64_t ignore, long srcsel)
{
    return msg_me(count ? buf : NULL, count,
                  PTL_ME_OP_PUT | PTL_ME_USE_ONCE | PTL_ME_EVENT_LINK_DISABLE |
                      PTL_ME_EVENT_UNLINK_DISABLE,
                  srcsel == MSG_ANY_SOURCE ? PTL_RANK_ANY : (ptl_rank_t)srcsel, bits,
                  ignore | MSG_BIT_PUSHED);
}

void msg_recv_posted(struct msg_req *r, ptl_handle_me_t h)
{
    r->me = h;
    r->posted = true;
    eng.recv_mes++;
}

bool msg_recv_post(struct msg_req *r)
{
    struct msg_saved *s = msg_saved_find(r->bits, r->ignore, r->srcsel, true);
    if (s) {
        msg_recv_take_saved(r, s);
        return true;
    }
    if (eng.recv_mes >= eng.recv_cap)
        return false;
    ptl_me_t me = msg_recv_me(r->buf, r->count, r->bits, r->ignore, r->srcsel);
    ptl_handle_me_t h;
    int rc = PtlMEAppend(eng.ni, PT_DATA, &me, PTL_PRIORITY_LIST, r, &h);
    if (rc == PTL_NO_SPACE)
        return false;
    if (rc != PTL_OK)
        msg_fatal("cannot post a receive (Portals error %d)", rc);
    eng.local_events++; /* if it took an unexpected message */
    msg_recv_posted(r, h);
    return true;
}

void msg_irecv(struct msg_req *r, long srcsel, uint64_t bits, uint64_t ignore, void *buf,
               uint64_t count)
{
    r->is_recv = true;
    r->done = false;
    r->error = MSG_OK;
    r->buf = buf;
    r->count = count;
    r->bits = bits;
    r->ignore = ignore;
    r->srcsel = srcsel;
    r->held = false;
    r->post_seq = ++post_counter;
    /* Behind the receives already waiting, whatever this one matches. */
    if (eng.held_head || !msg_recv_post(r))
        msg_held_add(r);
}

bool msg_cancel_recv(struct msg_req *r)
{
    if (!r->is_recv || r->done)
        return false;
    if (r->held)
        return msg_held_cancel(r);
    if (r->posted && PtlMEUnlink(r->me) == PTL_OK) {
        r->posted = false;
        eng.recv_mes--;
        msg_req_free(r);
        return true;
    }
    return false;
}

/* A message to oneself: into the oldest posted receive it matches, as
 * Portals would (taking that receive's ME back off the list), else into
 * the saved queue like an unexpected message.  Always copied, whatever
 * its length, so the send is complete at once. */
void msg_self_send(uint64_t bits, const void *buf, uint64_t len, uint64_t id)
{
    uint64_t after = 0;
    for (;;) {
        struct msg_req *best = NULL;
        for (long i = 0; i < n_reqs; i++) {
            struct msg_req *r = &reqs[i];
            if (r->in_use && r->is_recv && r->posted && r->post_seq > after &&
                (r->srcsel == MSG_ANY_SOURCE || r->srcsel == eng.rank) &&
                ((bits ^ r->bits) & ~r->ignore) == 0 && (!best || r->post_seq < best->post_seq))
                best = r;
        }
        if (!best)
            break;
        after = best->post_seq;
        /* Fails if a message from the network is matching it right now:
         * then that one has it, try the next. */
        if (PtlMEUnlink(best->me) == PTL_OK) {
            best->posted = false;
            eng.recv_mes--;
            deliver(best, eng.rank, bits, len, len, buf, len, false);
            return;
        }
    }
    struct msg_saved *s = calloc(1, sizeof *s);
    if (!s)
        msg_fatal("no memory for a message to this node");
    s->src = eng.rank;
    s->bits = bits;
    s->hd = len | id << HD_ID_SHIFT; /* the id: a cancel finds it */
    s->len = len;
    s->data = msg_saved_alloc(len);
    if (len)
        memcpy(s->data, buf, (size_t)len);
    msg_saved_append(s);
}

void msg_saved_info(const struct msg_saved *s, struct msg_probe_info *out)
{
    out->src = s->src;
    out->bits = s->bits & ~MSG_BIT_PUSHED;
    out->len = (s->hd & HD_RDV) ? s->hd & HD_LEN_MASK : s->len;
}

bool msg_probe(long srcsel, uint64_t bits, uint64_t ignore, bool block,
               struct msg_probe_info *out)
{
    for (;;) {
        struct msg_saved *s = msg_saved_find(bits, ignore, srcsel, false);
        if (s) {
            msg_saved_info(s, out);
            return true;
        }
        struct probe p = {.kind = OBJ_PROBE};
        /* USE_ONCE: an answer for the oldest match only.  Without it
         * Portals answers once for every matching message, and all but the
         * first came after this probe had returned, to its dead stack frame
         * (a few probes among thousands of messages overflowed the EQ). */
        ptl_me_t me = msg_recv_me(NULL, 0, bits, ignore, srcsel);
        me.options = PTL_ME_OP_PUT | PTL_ME_USE_ONCE;
        int rc = PtlMESearch(eng.ni, PT_DATA, &me, PTL_SEARCH_ONLY, &p);
        if (rc != PTL_OK)
            msg_fatal("PtlMESearch failed (%d)", rc);
        while (!p.got)
            msg_progress(true);
        if (p.ev.ni_fail_type == PTL_NI_OK) {
            out->src = (long)p.ev.initiator.rank;
            out->bits = p.ev.match_bits & ~MSG_BIT_PUSHED;
            out->len = (p.ev.hdr_data & HD_RDV) ? p.ev.hdr_data & HD_LEN_MASK : p.ev.rlength;
            return true;
        }
        if (!block)
            return false;
        msg_progress(true); /* something arrives, then look again */
    }
}

void msg_probe_event(void *probe, const ptl_event_t *ev)
{
    struct probe *p = probe;
    p->ev = *ev;
    p->got = true;
}
