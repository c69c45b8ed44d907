/* Initiator side: issue put/get/atomic operations and turn acknowledgements
 * and replies into SEND/ACK/REPLY events and counts. */
#include "ptl_internal.h"

static bool is_swap_op(uint8_t op)
{
    return op >= PTL_SWAP && op <= PTL_MSWAP;
}

static bool range_ok(const struct ptl_md *md, ptl_size_t off, ptl_size_t len)
{
    return off <= md->r.length && len <= md->r.length - off;
}

int ptl_op_check(struct ptl_ni *ni, const struct ptl_op_args *a)
{
    bool needs_put = a->kind != PTL_K_GET;
    bool needs_get = a->kind == PTL_K_GET || a->kind == PTL_K_FETCH ||
                     a->kind == PTL_K_SWAP;
    if (needs_put && (!a->put_md || !range_ok(a->put_md, a->put_off, a->len)))
        return PTL_ARG_INVALID;
    if (needs_get && (!a->get_md || !range_ok(a->get_md, a->get_off, a->len)))
        return PTL_ARG_INVALID;
    if (a->len > ni->lim.max_msg_size || a->ack_req > PTL_OC_ACK_REQ)
        return PTL_ARG_INVALID;
    if (a->kind == PTL_K_ATOMIC || a->kind == PTL_K_FETCH ||
        a->kind == PTL_K_SWAP) {
        ptl_size_t max = a->kind == PTL_K_ATOMIC ? ni->lim.max_atomic_size
                                                 : ni->lim.max_fetch_atomic_size;
        if (a->atype >= PTL_DATATYPE_LAST || a->aop >= PTL_OP_LAST ||
            !ptl_atomic_valid((ptl_op_t)a->aop, (ptl_datatype_t)a->atype))
            return PTL_ARG_INVALID;
        size_t tsz = ptl_atomic_size((ptl_datatype_t)a->atype);
        if (a->len > max || a->len % tsz)
            return PTL_ARG_INVALID;
        if ((a->kind == PTL_K_SWAP) != is_swap_op(a->aop))
            return PTL_ARG_INVALID;
        if (a->aop != PTL_SWAP && is_swap_op(a->aop) && a->len != tsz)
            return PTL_ARG_INVALID;
    }
    if (ni->wni & PTL_WNI_LOGICAL) {
        if (!ni->map || a->target.rank >= ni->map_size)
            return PTL_ARG_INVALID;
    }
    return PTL_OK;
}

/* The MDs stay busy (PtlMDRelease -> PTL_IN_USE) until the last event of
 * the operation, since its events go to their EQs. */
static void op_free_if_done(struct ptl_ni *ni, struct ptl_op *op)
{
    if (!op->in_use || !op->tx_through || !op->send_done || (op->want_resp && !op->resp_done))
        return;     /* freed already (by a step of the same completion), or not done */
    if (op->put_md)
        op->put_md->busy--;
    if (op->get_md)
        op->get_md->busy--;
    op->in_use = false;
    op->peer->n_ops--;
    op->next_free = ni->op_free;
    ni->op_free = op;
}

int ptl_op_issue(struct ptl_ni *ni, const struct ptl_op_args *a)
{
    PTL_TRACE(TP_PUT_ISSUE);
    ptl_process_t phys = a->target;
    if (ni->wni & PTL_WNI_LOGICAL)
        phys = ni->map[a->target.rank];
    struct ptl_op *op = ni->op_free;
    if (!op)
        return PTL_NO_SPACE;
    struct ptl_peer *peer = ptl_peer_get(ni, phys.phys.nid, phys.phys.pid,
                                         true);
    if (!peer)
        return PTL_NO_SPACE;
    ni->op_free = op->next_free;
    uint32_t serial = op->serial + 1;
    memset(op, 0, sizeof(*op));
    op->in_use = true;
    op->serial = serial;
    op->kind = a->kind;
    op->put_md = a->put_md;
    op->get_md = a->get_md;
    op->put_off = a->put_off;
    op->get_off = a->get_off;
    op->len = a->len;
    op->user_ptr = a->user_ptr;
    op->ack_req = (uint8_t)a->ack_req;
    op->target = a->target;
    op->peer = peer;
    peer->n_ops++;
    op->want_resp = a->kind == PTL_K_GET || a->kind == PTL_K_FETCH ||
                    a->kind == PTL_K_SWAP || a->ack_req != PTL_NO_ACK_REQ;
    if (op->put_md)
        op->put_md->busy++;
    if (op->get_md)
        op->get_md->busy++;

    static const uint8_t wop[] = { PTL_WOP_PUT, PTL_WOP_GET, PTL_WOP_ATOMIC,
                                   PTL_WOP_FETCH, PTL_WOP_SWAP };
    struct ptl_txmsg *m = &op->tx;
    m->kind = PTL_TX_OP;
    m->op = op;
    struct ptl_wire_hdr *h = &m->h;
    h->version = PTL_WIRE_VERSION;
    h->op = wop[a->kind];
    h->jid = ni->jid;
    h->uid = ni->uid;
    h->src_nid = ni->id.phys.nid;
    h->src_pid = ni->id.phys.pid;
    h->src_rank = ni->rank;
    h->dst_nid = phys.phys.nid;
    h->dst_pid = phys.phys.pid;
    h->pt_index = a->pt;
    h->match_bits = a->bits;
    h->remote_offset = a->roff;
    h->msg_len = a->len;
    h->ni_type = ni->wni;
    h->ack_req = a->kind == PTL_K_PUT || a->kind == PTL_K_ATOMIC
                     ? (uint8_t)a->ack_req : PTL_NO_ACK_REQ;
    h->atomic_op = a->aop;
    h->atomic_type = a->atype;
    h->hdr_data = a->hdr;
    h->msg_id = (uint64_t)(op - ni->ops) | ((uint64_t)serial << 32);
    h->operand = a->operand;
    if (a->kind != PTL_K_GET) {
        m->src = a->put_md->r;
        m->src_off = a->put_off;
        m->len = a->len;
    }
    ptl_rel_queue(ni, peer, m);
    ptl_rel_push(ni, peer);
    return PTL_OK;
}

struct ptl_op *ptl_op_lookup(struct ptl_ni *ni, uint64_t msg_id)
{
    uint32_t idx = (uint32_t)msg_id;
    if (idx >= ni->n_ops)
        return NULL;
    struct ptl_op *op = &ni->ops[idx];
    if (!op->in_use || op->serial != (uint32_t)(msg_id >> 32))
        return NULL;
    return op;
}

static void init_event(struct ptl_ni *ni, struct ptl_op *op, struct ptl_md *md,
                       ptl_size_t md_off, ptl_event_kind_t type,
                       ptl_ni_fail_t fail, ptl_size_t mlength,
                       ptl_size_t roff)
{
    const struct ptl_wire_hdr *h = &op->tx.h;
    bool ok = fail == PTL_NI_OK;
    unsigned o = md->options;
    unsigned ct_flag = type == PTL_EVENT_SEND    ? PTL_MD_EVENT_CT_SEND
                       : type == PTL_EVENT_REPLY ? PTL_MD_EVENT_CT_REPLY
                                                 : PTL_MD_EVENT_CT_ACK;
    bool full = !(ok && (o & PTL_MD_EVENT_SUCCESS_DISABLE));
    if (type == PTL_EVENT_SEND && (o & PTL_MD_EVENT_SEND_DISABLE))
        full = false;
    if (type == PTL_EVENT_ACK && op->ack_req != PTL_ACK_REQ)
        full = false; /* CT/OC acks only count */
    if (full && md->eq) {
        ptl_event_t ev;
        memset(&ev, 0, sizeof(ev));
        ev.type = type;
        ev.start = ptl_region_addr(&md->r, md_off);
        ev.user_ptr = op->user_ptr;
        ev.hdr_data = h->hdr_data;
        ev.match_bits = h->match_bits;
        ev.rlength = op->len;
        ev.mlength = mlength;
        ev.remote_offset = roff;
        ev.uid = ni->uid;
        ev.initiator = op->target;
        ev.pt_index = h->pt_index;
        ev.ni_fail_type = fail;
        ev.atomic_operation = (ptl_op_t)h->atomic_op;
        ev.atomic_type = (ptl_datatype_t)h->atomic_type;
        ptl_eq_post(md->eq, &ev);
    }
    if (md->ct && (o & ct_flag)) {
        if (type == PTL_EVENT_ACK && op->ack_req == PTL_OC_ACK_REQ)
            ptl_ct_add(ni, md->ct, 1, 0);
        else if (!ok)
            ptl_ct_add(ni, md->ct, 0, 1);
        else
            ptl_ct_add(ni, md->ct, (o & PTL_MD_EVENT_CT_BYTES) ? mlength : 1,
                       0);
    }
}

static void op_response_done(struct ptl_ni *ni, struct ptl_op *op,
                             ptl_ni_fail_t fail, ptl_size_t mlength,
                             ptl_size_t roff, bool suppressed)
{
    if (op->resp_done)
        return;
    op->resp_done = true;
    if (op->send_done && op->peer->resp_waiting)
        op->peer->resp_waiting--;
    if (op->req_counted) {
        op->req_counted = false;
        op->peer->req_out--;
    }
    if (op->kind == PTL_K_PUT || op->kind == PTL_K_ATOMIC) {
        if (!suppressed && op->put_md)
            init_event(ni, op, op->put_md, op->put_off, PTL_EVENT_ACK, fail,
                       mlength, roff);
    } else {
        init_event(ni, op, op->get_md, op->get_off, PTL_EVENT_REPLY, fail,
                   mlength, roff);
    }
    op_free_if_done(ni, op);
}

/* Whether the ACK of a put or atomic can show at its MD: as a full event
 * (PTL_ACK_REQ and an EQ; failures are never suppressed) or as a count. */
static bool ack_shows(const struct ptl_op *op)
{
    const struct ptl_md *md = op->put_md;
    return (op->ack_req == PTL_ACK_REQ && md->eq) ||
           (md->ct && (md->options & PTL_MD_EVENT_CT_ACK));
}

/* The operation's SEND: its buffer may be reused.  For a get, whose
 * request carries no data, its REPLY's first frame may say so before the
 * request's ack (ptl_op_response). */
static void send_done(struct ptl_ni *ni, struct ptl_op *op, ptl_ni_fail_t fail)
{
    if (op->send_done)
        return;
    op->send_done = true;
    if (op->kind != PTL_K_GET) {
        init_event(ni, op, op->put_md, op->put_off, PTL_EVENT_SEND, fail,
                   op->len, op->tx.h.remote_offset);
    }
    /* An ACK that nothing at the MD will see is no longer the MD's
     * business: the SEND was its last event, PtlMDRelease may go ahead. */
    if ((op->kind == PTL_K_PUT || op->kind == PTL_K_ATOMIC) && op->want_resp &&
        !op->resp_done && fail == PTL_NI_OK && !ack_shows(op)) {
        op->put_md->busy--;
        op->put_md = NULL;
    }
    if (op->want_resp && !op->resp_done) {
        if (fail != PTL_NI_OK) {
            op_response_done(ni, op, fail, 0, 0, false);
            return;
        }
        op->peer->resp_waiting++;
        op->peer->resp_mark = ptl_host_now_ns();
        ptl_peer_busy(ni, op->peer);
    }
    op_free_if_done(ni, op);
}

static void take_ack(struct ptl_ni *ni, struct ptl_op *op, const struct ptl_wire_ackrec *a);

/* All request frames are acknowledged by the target's reliability layer
 * (or the target is unreachable): the buffer may be reused now, and the
 * slot once the response is in too. */
void ptl_op_tx_done(struct ptl_ni *ni, struct ptl_op *op, ptl_ni_fail_t fail)
{
    if (op->tx_through)
        return;
    op->tx_through = true;
    send_done(ni, op, fail);
    if (op->early_ack) {
        op->early_ack = false;
        if (!op->resp_done)      /* a failure to deliver answered it already */
            take_ack(ni, op, &op->early);
    }
    op_free_if_done(ni, op);
}

static void reply_place(struct ptl_ni *ni, struct ptl_rxmsg *c,
                        const struct ptl_wire_hdr *h, const uint8_t *payload)
{
    struct ptl_op *op = c->iop;
    if (op)
        ptl_region_write(&op->get_md->r, op->get_off + h->frag_off, payload,
                         h->frag_len);
    c->got += h->frag_len;
    if (c->got >= c->msg_len) {
        c->active = false;
        if (op)
            op_response_done(ni, op, (ptl_ni_fail_t)c->h.fail, c->h.mlength,
                             c->h.remote_offset, false);
    }
}

/* The operation msg_id names if it awaits its response (an ACK, or a
 * REPLY) from peer, else NULL: a response again (its frame resent) finds
 * it answered. */
static struct ptl_op *awaiting(struct ptl_ni *ni, struct ptl_peer *peer, uint64_t msg_id,
                               bool is_reply)
{
    struct ptl_op *op = ptl_op_lookup(ni, msg_id);
    if (op && (op->peer != peer || op->resp_done || !op->want_resp))
        return NULL;
    if (op && is_reply != (op->kind == PTL_K_GET || op->kind == PTL_K_FETCH ||
                           op->kind == PTL_K_SWAP))
        return NULL;
    return op;
}

/* An ACK before the last of the put's frames is acknowledged: a target
 * that refuses a put answers at its first frame, while the others are still
 * on their way or still to be sent.  It waits for them (ptl_op_tx_done):
 * until then the put's buffer is still read, its message is in the peer's
 * send queue and its frames in the window.  Before, the ACK ended the
 * operation at once and the next put took its slot, queueing the same
 * message a second time: the queue became a loop, and the node spun in it
 * for ever (tests/portals/test_refused_put.c). */
static void take_ack(struct ptl_ni *ni, struct ptl_op *op, const struct ptl_wire_ackrec *a)
{
    if (!op->tx_through) {
        op->early = *a;
        op->early_ack = true;
        return;
    }
    op_response_done(ni, op, (ptl_ni_fail_t)a->fail, a->mlength, a->remote_offset,
                     a->ack_req == PTL_NO_ACK_REQ);
}

/* The noted ACKs, oldest first.  Each is looked up again: its NI may be
 * gone, its operation answered or failed meanwhile (a resent frame, the
 * peer given up), its peer dropped. */
void ptl_acks_later_take_locked(void)
{
    while (ptl_g.n_acks_later) {
        struct ptl_ack_later l[PTL_ACKS_LATER_MAX];
        unsigned n = ptl_g.n_acks_later;
        memcpy(l, ptl_g.acks_later, n * sizeof(l[0]));
        ptl_g.n_acks_later = 0;
        for (unsigned i = 0; i < n; i++) {
            struct ptl_ni *ni = &ptl_g.nis[l[i].ni_idx];
            if (!ni->in_use || ni->gen != l[i].ni_gen)
                continue;
            struct ptl_peer *peer = ptl_peer_get(ni, l[i].nid, l[i].pid, false);
            struct ptl_op *op = peer ? awaiting(ni, peer, l[i].a.msg_id, false) : NULL;
            if (op)
                take_ack(ni, op, &l[i].a);
        }
    }
}

void ptl_op_acked(struct ptl_ni *ni, struct ptl_peer *peer, const struct ptl_wire_ackrec *a)
{
    ptl_acks_later_take_locked();
    struct ptl_op *op = awaiting(ni, peer, a->msg_id, false);
    if (op)
        take_ack(ni, op, a);
}

/* The receiver of an answer that carries the ACK of its own last message
 * (a ping-pong, NX's and MPI's eager protocol) took the ACK in before the
 * answer: its operation, its event and the freeing of its slot, ~2 us of
 * the answer's way to the program under TCG.  Noted here, it is taken in
 * by the program's next call's progress step: the next put's, after its
 * frame has left (api_ops.c), or a look at events that finds none. */
void ptl_op_acked_later(struct ptl_ni *ni, struct ptl_peer *peer,
                        const struct ptl_wire_ackrec *a)
{
    struct ptl_op *op = awaiting(ni, peer, a->msg_id, false);
    if (!op)
        return;
    if ((op->put_md && op->put_md->ct) || ptl_g.n_acks_later == PTL_ACKS_LATER_MAX) {
        ptl_op_acked(ni, peer, a);
        return;
    }
    ptl_g.acks_later[ptl_g.n_acks_later++] =
        (struct ptl_ack_later){(uint16_t)ni->idx, ni->gen, peer->nid, peer->pid, *a};
}

void ptl_op_response(struct ptl_ni *ni, struct ptl_peer *peer,
                     const struct ptl_wire_hdr *h, const uint8_t *payload)
{
    bool is_reply = h->op == PTL_WOP_REPLY;
    if (!is_reply) {
        struct ptl_wire_ackrec a = {h->msg_id, h->mlength, h->remote_offset, h->fail,
                                    h->ack_req};
        ptl_op_acked(ni, peer, &a);
        return;
    }
    struct ptl_op *op = awaiting(ni, peer, h->msg_id, true);
    if (op && h->msg_len > op->len) {
        ptl_g.stats[ni->iface].rx_bad_field++;
        op_response_done(ni, op, PTL_NI_DROPPED, 0, 0, false);
        op = NULL;
    }
    /* The request arrived (it is answered); its slot stays until its own
     * ack comes too (op_free_if_done). */
    if (op)
        send_done(ni, op, PTL_NI_OK);
    struct ptl_rxmsg *c = &peer->cur;
    memset(c, 0, sizeof(*c));
    c->active = true;
    c->op = PTL_WOP_REPLY;
    c->msg_id = h->msg_id;
    c->msg_len = h->msg_len;
    c->h = *h;
    c->iop = op;
    reply_place(ni, c, h, payload);
}

void ptl_reply_data(struct ptl_ni *ni, struct ptl_peer *peer,
                    const struct ptl_wire_hdr *h, const uint8_t *payload)
{
    struct ptl_rxmsg *c = &peer->cur;
    if (h->msg_len != c->msg_len) {
        ptl_g.stats[ni->iface].rx_bad_field++;
        return;
    }
    reply_place(ni, c, h, payload);
}

void ptl_ops_fail_peer(struct ptl_ni *ni, struct ptl_peer *p)
{
    for (uint32_t i = 0; i < ni->n_ops; i++) {
        struct ptl_op *op = &ni->ops[i];
        if (op->in_use && op->peer == p && op->send_done && op->want_resp &&
            !op->resp_done) {
            if (p->cur.active && p->cur.iop == op)
                p->cur.iop = NULL;
            op_response_done(ni, op, PTL_NI_UNDELIVERABLE, 0, 0, false);
        }
    }
    p->resp_waiting = 0;
}

void ptl_ops_peer_timeout(struct ptl_ni *ni, struct ptl_peer *p, uint64_t now)
{
    if (!p->resp_waiting)
        return;
    uint64_t since = p->last_heard > p->resp_mark ? p->last_heard : p->resp_mark;
    if (now >= since + ptl_g.tun.giveup_ns) {
        ptl_g.stats[ni->iface].peer_failures++;
        ptl_ops_fail_peer(ni, p);
    }
}
