/* Target side: match an incoming request, place its data straight into
 * the matched buffer, post events and queue the ACK or REPLY. */
#include "ptl_internal.h"

static ptl_event_kind_t base_kind(uint8_t op)
{
    switch (op) {
    case PTL_WOP_PUT: return PTL_EVENT_PUT;
    case PTL_WOP_GET: return PTL_EVENT_GET;
    case PTL_WOP_ATOMIC: return PTL_EVENT_ATOMIC;
    default: return PTL_EVENT_FETCH_ATOMIC;
    }
}

static void fill_event(struct ptl_ni *ni, ptl_event_t *ev,
                       const struct ptl_wire_hdr *h)
{
    memset(ev, 0, sizeof(*ev));
    ev->type = base_kind(h->op);
    ev->hdr_data = h->hdr_data;
    ev->match_bits = h->match_bits;
    ev->rlength = h->msg_len;
    ev->remote_offset = h->remote_offset;
    ev->uid = h->uid;
    if (ni->wni & PTL_WNI_LOGICAL)
        ev->initiator.rank = h->src_rank;
    else {
        ev->initiator.phys.nid = h->src_nid;
        ev->initiator.phys.pid = h->src_pid;
    }
    ev->pt_index = h->pt_index;
    ev->atomic_operation = (ptl_op_t)h->atomic_op;
    ev->atomic_type = (ptl_datatype_t)h->atomic_type;
}

static void resp_header(struct ptl_ni *ni, struct ptl_txmsg *m,
                        const struct ptl_wire_hdr *req, uint8_t op)
{
    memset(&m->h, 0, sizeof(m->h));
    m->h.version = PTL_WIRE_VERSION;
    m->h.op = op;
    m->h.jid = ni->jid;
    m->h.uid = ni->uid;
    m->h.src_nid = ni->id.phys.nid;
    m->h.src_pid = ni->id.phys.pid;
    m->h.src_rank = ni->rank;
    m->h.dst_nid = req->src_nid;
    m->h.dst_pid = req->src_pid;
    m->h.ni_type = ni->wni;
    m->h.pt_index = req->pt_index;
    m->h.match_bits = req->match_bits;
    m->h.msg_id = req->msg_id;
    m->h.ack_req = req->ack_req;
    m->h.atomic_op = req->atomic_op;
    m->h.atomic_type = req->atomic_type;
}

static void send_ack(struct ptl_ni *ni, struct ptl_peer *peer,
                     struct ptl_txmsg *m, const struct ptl_wire_hdr *req,
                     ptl_size_t mlength, ptl_size_t off, ptl_ni_fail_t fail,
                     bool suppressed)
{
    if (!m)
        m = ptl_resp_alloc(ni, peer);
    if (!m)
        return; /* cannot happen: checked before processing */
    resp_header(ni, m, req, PTL_WOP_ACK);
    m->kind = PTL_TX_ACK;
    m->h.mlength = mlength;
    m->h.remote_offset = off;
    m->h.fail = (uint8_t)fail;
    if (suppressed)
        m->h.ack_req = PTL_NO_ACK_REQ;
    /* The put took more frames than its first: never held for an answer
     * (reliable.c, ptl_rel_push). */
    m->ack_alone = req->msg_len > req->frag_len;
    ptl_rel_queue(ni, peer, m);
}

static bool wants_ack(const struct ptl_wire_hdr *h)
{
    return (h->op == PTL_WOP_PUT || h->op == PTL_WOP_ATOMIC) &&
           h->ack_req != PTL_NO_ACK_REQ;
}

static bool wants_reply(const struct ptl_wire_hdr *h)
{
    return h->op == PTL_WOP_GET || h->op == PTL_WOP_FETCH ||
           h->op == PTL_WOP_SWAP;
}

/* Send a failure back for a request that matched nothing usable. */
static void reject(struct ptl_ni *ni, struct ptl_peer *peer,
                   const struct ptl_wire_hdr *h, ptl_ni_fail_t fail)
{
    if (wants_ack(h))
        send_ack(ni, peer, NULL, h, 0, 0, fail, false);
    else if (wants_reply(h)) {
        struct ptl_txmsg *m = ptl_resp_alloc(ni, peer);
        if (m) {
            resp_header(ni, m, h, PTL_WOP_REPLY);
            m->kind = PTL_TX_REPLY;
            m->h.fail = (uint8_t)fail;
            ptl_rel_queue(ni, peer, m);
        }
    }
    if (h->op == PTL_WOP_PUT && h->msg_len > h->frag_len) {
        /* Swallow the remaining fragments of the rejected message. */
        peer->cur.active = true;
        peer->cur.msg_id = h->msg_id;
        peer->cur.op = h->op;
        peer->cur.msg_len = h->msg_len;
        peer->cur.got = h->frag_len;
        peer->cur.h = *h;
        peer->cur.e = NULL;
        peer->cur.fail = fail;
        peer->cur.uh = NULL;
        peer->cur.ack = NULL;
    }
}

static void pt_flow_control(struct ptl_pt *pt, ptl_pt_index_t idx)
{
    pt->enabled = false;
    ptl_event_t ev;
    memset(&ev, 0, sizeof(ev));
    ev.type = PTL_EVENT_PT_DISABLED;
    ev.pt_index = idx;
    ev.ni_fail_type = PTL_NI_PT_DISABLED;
    ptl_eq_post(pt->eq, &ev);
}

static struct ptl_entry *find_match(struct ptl_ni *ni, struct ptl_pt *pt,
                                    const struct ptl_wire_hdr *h,
                                    const ptl_process_t *src)
{
    for (int l = 0; l < 2; l++)
        for (struct ptl_entry *e = pt->head[l]; e; e = e->next) {
            if (!ptl_match_entry(ni, e, src, h->match_bits))
                continue;
            if (e->is_me && (e->me.options & PTL_ME_NO_TRUNCATE)) {
                ptl_size_t off = (e->me.options & PTL_ME_MANAGE_LOCAL)
                                     ? e->loff : h->remote_offset;
                if (off > e->r.length || h->msg_len > e->r.length - off)
                    continue;
            }
            return e;
        }
    return NULL;
}

/* The EQ holds as many events as the program asked for: one more would
 * overwrite an event it has not seen (the PT_DISABLED event has room of
 * its own, see eq.c). */
static bool eq_full(const struct ptl_eq *eq)
{
    return eq && eq->count >= eq->cap;
}

static void finish_put(struct ptl_ni *ni, struct ptl_peer *peer,
                       struct ptl_rxmsg *c);

/* Apply an atomic to the matched buffer; `old` gets the prior bytes. */
static void do_atomic(struct ptl_entry *e, ptl_size_t off, ptl_size_t n,
                      const struct ptl_wire_hdr *h, const uint8_t *src,
                      uint8_t *old)
{
    uint8_t tmp[PTL_ATOMIC_MAX];
    uint8_t operand[8];
    ptl_wput(operand, h->operand, 8);
    ptl_region_read(&e->r, off, tmp, n);
    if (old)
        memcpy(old, tmp, (size_t)n);
    ptl_op_t op = (ptl_op_t)h->atomic_op;
    ptl_datatype_t t = (ptl_datatype_t)h->atomic_type;
    if (t == PTL_FLOAT || t == PTL_DOUBLE) {
        ptl_host_fpu_begin();
        ptl_atomic_fp(op, t, tmp, src, (size_t)n, operand);
        ptl_host_fpu_end();
    } else {
        ptl_atomic_apply(op, t, tmp, src, (size_t)n, operand);
    }
    ptl_region_write(&e->r, off, tmp, n);
}

/* The ME options an operation needs on the entry it matches. */
static unsigned op_needs(uint8_t op)
{
    switch (op) {
    case PTL_WOP_PUT: case PTL_WOP_ATOMIC: return PTL_ME_OP_PUT;
    case PTL_WOP_GET: return PTL_ME_OP_GET;
    default: return PTL_ME_OP_PUT | PTL_ME_OP_GET;
    }
}

/* The entry a request may use: its portal takes it, an entry matches, the
 * resources are there, the entry allows the sender and the operation.
 * NULL when not: the request is then counted and rejected.  *need_uh: the
 * match is an overflow entry that keeps an unexpected header. */
static struct ptl_entry *admit(struct ptl_ni *ni, struct ptl_peer *peer,
                               const struct ptl_wire_hdr *h, bool *need_uh)
{
    ptl_process_t src;
    if (ni->wni & PTL_WNI_LOGICAL)
        src.rank = h->src_rank;
    else {
        src.phys.nid = h->src_nid;
        src.phys.pid = h->src_pid;
    }
    struct ptl_pt *pt = &ni->pts[h->pt_index];
    if (!pt->allocated) {
        ni->sr[PTL_SR_DROP_COUNT]++;
        reject(ni, peer, h, PTL_NI_DROPPED);
        return NULL;
    }
    if (!pt->enabled) {
        ni->sr[PTL_SR_DROP_COUNT]++;
        reject(ni, peer, h, PTL_NI_PT_DISABLED);
        return NULL;
    }
    bool fc = pt->options & PTL_PT_FLOWCTRL;
    struct ptl_entry *e = find_match(ni, pt, h, &src);
    *need_uh = e && e->list == PTL_OVERFLOW_LIST &&
               !(e->me.options & PTL_ME_UNEXPECTED_HDR_DISABLE);
    if (!e || (*need_uh && !ni->uh_free) || (fc && eq_full(pt->eq))) {
        /* Resource exhaustion: flow control disables the PT, otherwise the
         * message is dropped; either way it is counted and reported. */
        ni->sr[PTL_SR_DROP_COUNT]++;
        if (fc) {
            pt_flow_control(pt, h->pt_index);
            reject(ni, peer, h, PTL_NI_PT_DISABLED);
        } else {
            reject(ni, peer, h, PTL_NI_DROPPED);
        }
        return NULL;
    }
    if (e->me.uid != PTL_UID_ANY && e->me.uid != h->uid) {
        ni->sr[PTL_SR_PERMISSIONS_VIOLATIONS]++;
        reject(ni, peer, h, PTL_NI_PERM_VIOLATION);
        return NULL;
    }
    unsigned need = op_needs(h->op);
    if ((e->me.options & need) != need) {
        ni->sr[PTL_SR_OPERATIONS_VIOLATIONS]++;
        reject(ni, peer, h, PTL_NI_OP_VIOLATION);
        return NULL;
    }
    return e;
}

/* The unexpected header of a message landing in overflow entry e, queued
 * on its portal for a later search or append to find. */
static struct ptl_uh *uh_record(struct ptl_ni *ni, struct ptl_pt *pt, struct ptl_entry *e,
                                const ptl_event_t *ev)
{
    struct ptl_uh *uh = ni->uh_free;
    ni->uh_free = uh->next;
    ni->uh_used++;
    memset(uh, 0, sizeof(*uh));
    uh->ovf = e;
    e->uh_refs++;
    uh->ev = *ev;
    if (pt->uh_tail)
        pt->uh_tail->next = uh;
    else
        pt->uh_head = uh;
    pt->uh_tail = uh;
    return uh;
}

/* A GET: the reply reads straight from the entry's buffer. */
static void start_get(struct ptl_ni *ni, struct ptl_peer *peer, const struct ptl_wire_hdr *h,
                      struct ptl_entry *e, ptl_size_t off, ptl_size_t mlen,
                      const ptl_event_t *ev, struct ptl_uh *uh)
{
    struct ptl_txmsg *m = ptl_resp_alloc(ni, peer);
    resp_header(ni, m, h, PTL_WOP_REPLY);
    m->kind = PTL_TX_REPLY;
    m->h.msg_len = mlen;
    m->h.mlength = mlen;
    m->h.remote_offset = off;
    m->src = e->r;
    m->src_off = off;
    m->len = mlen;
    /* The GET event waits until the reply is acknowledged: only then
     * will Portals no longer read the buffer. */
    m->entry = e;
    m->ev = *ev;
    m->post_ev = true;
    ptl_rel_queue(ni, peer, m);
    if (uh)
        ptl_uh_complete(ni, uh);
}

/* FETCH or SWAP: applied at once; the old bytes go back inline. */
static void start_fetch(struct ptl_ni *ni, struct ptl_peer *peer, const struct ptl_wire_hdr *h,
                        struct ptl_entry *e, ptl_size_t off, ptl_size_t mlen,
                        const ptl_event_t *ev, const uint8_t *payload, struct ptl_uh *uh)
{
    struct ptl_txmsg *m = ptl_resp_alloc(ni, peer);
    if (mlen > sizeof(m->inline_data)) /* rx.c guarantees it cannot */
        mlen = 0;
    resp_header(ni, m, h, PTL_WOP_REPLY);
    m->kind = PTL_TX_REPLY;
    do_atomic(e, off, mlen, h, payload, m->inline_data);
    m->h.msg_len = mlen;
    m->h.mlength = mlen;
    m->h.remote_offset = off;
    m->src.start = m->inline_data;
    m->src.length = mlen;
    m->len = mlen;
    ptl_rel_queue(ni, peer, m);
    ptl_target_event(ni, e, ev, false);
    if (uh)
        ptl_uh_complete(ni, uh);
    e->busy--;
    ptl_entry_settle(ni, e);
}

/* The sender's rank in this NI's map, from what the sender's host stamps
 * (its nid and pid), never from the rank the frame claims alone: the claim
 * is only a hint where to look first.  PTL_RANK_ANY: not in the map. */
static ptl_rank_t trusted_rank(const struct ptl_ni *ni, const struct ptl_wire_hdr *h)
{
    if (!ni->map)
        return PTL_RANK_ANY;
    if (h->src_rank < ni->map_size && ni->map[h->src_rank].phys.nid == h->src_nid &&
        ni->map[h->src_rank].phys.pid == h->src_pid)
        return h->src_rank;
    for (ptl_size_t r = 0; r < ni->map_size; r++)
        if (ni->map[r].phys.nid == h->src_nid && ni->map[r].phys.pid == h->src_pid)
            return (ptl_rank_t)r;
    return PTL_RANK_ANY;
}

int ptl_target_start(struct ptl_ni *ni, struct ptl_peer *peer,
                     const struct ptl_wire_hdr *claimed, const uint8_t *payload)
{
    /* Refuse (unacked, the sender retries) rather than lose a response. */
    if ((wants_ack(claimed) || wants_reply(claimed)) && !ptl_resp_available(ni, peer))
        return -1;
    /* Job isolation: a request reaches only an NI of the sender's own job
     * (the job id is stamped by the sender's host: a node kernel stamps its
     * application's, never the program), and a logical NI only from a
     * process in its map, whose rank it looks up itself.  Everything else
     * is refused (the sender learns PTL_NI_PERM_VIOLATION) and counted. */
    struct ptl_wire_hdr hv = *claimed;
    const struct ptl_wire_hdr *h = &hv;
    if (ni->wni & PTL_WNI_LOGICAL)
        hv.src_rank = trusted_rank(ni, claimed);
    if (h->jid != ni->jid || ((ni->wni & PTL_WNI_LOGICAL) && h->src_rank == PTL_RANK_ANY)) {
        ni->sr[PTL_SR_PERMISSIONS_VIOLATIONS]++;
        reject(ni, peer, h, PTL_NI_PERM_VIOLATION);
        return 0;
    }
    bool need_uh;
    struct ptl_entry *e = admit(ni, peer, h, &need_uh);
    if (!e)
        return 0;
    PTL_TRACE(TP_MATCH);

    /* Where the data goes and how much of it fits. */
    bool local = e->is_me && (e->me.options & PTL_ME_MANAGE_LOCAL);
    ptl_size_t off = local ? e->loff : h->remote_offset;
    ptl_size_t avail = off <= e->r.length ? e->r.length - off : 0;
    ptl_size_t mlen = h->msg_len < avail ? h->msg_len : avail;
    if (h->op != PTL_WOP_PUT && h->op != PTL_WOP_GET) {
        size_t tsz = ptl_atomic_size((ptl_datatype_t)h->atomic_type);
        mlen -= mlen % tsz;
    }
    if (local)
        e->loff += mlen;

    /* The event as of now: what an unexpected header keeps, and what a get
     * or fetch posts.  A put or atomic posts its own once its data is in
     * (finish_put); building this one too was work on every message. */
    ptl_event_t ev;
    bool put_like = h->op == PTL_WOP_PUT || h->op == PTL_WOP_ATOMIC;
    if (need_uh || !put_like) {
        fill_event(ni, &ev, h);
        ev.start = mlen || avail ? ptl_region_addr(&e->r, off) : NULL;
        ev.mlength = mlen;
        ev.remote_offset = off;
        ev.user_ptr = e->user_ptr;
    }

    struct ptl_uh *uh = need_uh ? uh_record(ni, &ni->pts[h->pt_index], e, &ev) : NULL;
    if ((e->me.options & PTL_ME_USE_ONCE) ||
        (local && e->me.min_free && e->r.length - e->loff < e->me.min_free))
        ptl_entry_consume(ni, e);
    e->busy++;

    /* Every field set once (the header is the largest part: no memset of
     * it first). */
    struct ptl_rxmsg *c = &peer->cur;
    c->active = false;
    c->msg_id = h->msg_id;
    c->op = h->op;
    c->msg_len = h->msg_len;
    c->got = 0;
    c->h = *h;
    c->e = e;
    c->dst = e->r;
    c->dst_off = off;
    c->mlength = mlen;
    c->fail = PTL_NI_OK;
    c->uh = uh;
    c->iop = NULL;
    /* The ACK must not fail for lack of a slot later. */
    c->ack = wants_ack(h) ? ptl_resp_alloc(ni, peer) : NULL;

    switch (h->op) {
    case PTL_WOP_PUT:
        c->active = true;
        ptl_target_data(ni, peer, h, payload);
        return 0;
    case PTL_WOP_GET:
        start_get(ni, peer, h, e, off, mlen, &ev, uh);
        return 0;
    case PTL_WOP_ATOMIC:
        do_atomic(e, off, mlen, h, payload, NULL);
        c->got = h->msg_len;
        finish_put(ni, peer, c);
        return 0;
    default: /* FETCH, SWAP */
        start_fetch(ni, peer, h, e, off, mlen, &ev, payload, uh);
        return 0;
    }
}

static void finish_put(struct ptl_ni *ni, struct ptl_peer *peer,
                       struct ptl_rxmsg *c)
{
    c->active = false;
    if (!c->e) { /* rejected message: nothing but the swallowed data */
        return;
    }
    struct ptl_entry *e = c->e;
    ptl_event_t ev;
    fill_event(ni, &ev, &c->h);
    ev.start = ptl_region_addr(&e->r, c->dst_off);
    ev.mlength = c->mlength;
    ev.remote_offset = c->dst_off;
    ev.user_ptr = e->user_ptr;
    ptl_target_event(ni, e, &ev, false);
    if (c->uh)
        ptl_uh_complete(ni, c->uh);
    if (wants_ack(&c->h))
        send_ack(ni, peer, c->ack, &c->h, c->mlength, c->dst_off, PTL_NI_OK,
                 e->me.options & PTL_ME_ACK_DISABLE);
    c->ack = NULL;
    e->busy--;
    ptl_entry_settle(ni, e);
}

/* One fragment of the current put: copy the part that fits, once. */
void ptl_target_data(struct ptl_ni *ni, struct ptl_peer *peer,
                     const struct ptl_wire_hdr *h, const uint8_t *payload)
{
    struct ptl_rxmsg *c = &peer->cur;
    if (c->e && h->frag_off < c->mlength) {
        ptl_size_t n = c->mlength - h->frag_off;
        if (n > h->frag_len)
            n = h->frag_len;
        ptl_region_write(&c->dst, c->dst_off + h->frag_off, payload, n);
    }
    PTL_TRACE(TP_COPY);
    c->got += h->frag_len;
    if (c->got >= c->msg_len)
        finish_put(ni, peer, c);
}

/* The sender vanished mid-message: release what the message held. */
void ptl_target_abort(struct ptl_ni *ni, struct ptl_peer *peer)
{
    struct ptl_rxmsg *c = &peer->cur;
    if (!c->active)
        return;
    c->active = false;
    if (c->op == PTL_WOP_REPLY)
        return; /* the operation itself times out on the initiator path */
    if (c->uh) {
        c->uh->ev.ni_fail_type = PTL_NI_UNDELIVERABLE;
        ptl_uh_complete(ni, c->uh);
    }
    if (c->ack) {
        ptl_resp_free(ni, c->ack);
        c->ack = NULL;
    }
    if (c->e) {
        c->e->busy--;
        ptl_entry_settle(ni, c->e);
    }
}
