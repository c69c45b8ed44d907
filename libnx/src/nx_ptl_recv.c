/*
 * Receives, probes, message ids and the NX point-to-point calls.
 *
 * A receive first looks at the saved queue (messages a flow-control drain
 * took off Portals' list, oldest first), then becomes a priority ME:
 * match bits = type (ignore bits for -1, never the library's bit 63),
 * match_id = the node selector.  Portals matches it against its own
 * unexpected list atomically on append (PUT_OVERFLOW: data in unexpected
 * space, copied once) or against later arrivals (PUT: data already in the
 * buffer).  A rendezvous announcement turns into a PtlGet into the buffer.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nx.h"
#include "nx_impl.h"
#include "nx_ptl.h"

#define N_REQ (NX_MAX_MIDS + 256)

static struct nx_req reqs[N_REQ];
static int user_reqs;
static uint64_t post_counter;
static struct { int kind; } release_obj = {OBJ_RELEASE};

struct probe {
    int kind; /* OBJ_PROBE */
    bool got;
    ptl_event_t ev;
};

struct nx_req *nx_req_new(const char *call, bool internal)
{
    if (!internal && user_reqs >= NX_MAX_MIDS) {
        nx_fail(call, EQNOMID, "all %d message ids in use", NX_MAX_MIDS);
        return NULL;
    }
    for (int i = 0; i < N_REQ; i++)
        if (!reqs[i].in_use) {
            memset(&reqs[i], 0, sizeof reqs[i]);
            reqs[i].kind = OBJ_REQ;
            reqs[i].in_use = true;
            reqs[i].internal = internal;
            if (!internal)
                user_reqs++;
            return &reqs[i];
        }
    nx_fail(call, EQNOMID, "no request slot left");
    return NULL;
}

void nx_req_free(struct nx_req *r)
{
    if (!r->internal)
        user_reqs--;
    r->in_use = false;
}

void nx_wait(struct nx_req *r)
{
    while (!r->done)
        nx_progress(true);
}

static void finished(struct nx_req *r)
{
    r->done = true;
    if (r->ignored)
        nx_req_free(r);
}

static void start_get(struct nx_req *r, long src, uint64_t id, uint64_t len)
{
    ptl_md_t md = {.start = r->buf, .length = len, .options = 0, .eq_handle = nx.eq_misc,
                   .ct_handle = PTL_CT_NONE};
    int rc = PtlMDBind(nx.ni, &md, &r->get_md);
    if (rc != PTL_OK)
        nx_fatal("cannot bind a %llu-byte receive buffer (Portals error %d)",
                 (unsigned long long)len, rc);
    r->get_len = len;
    r->get_got = 0;
    ptl_process_t from = {.rank = (ptl_rank_t)src};
    for (uint64_t off = 0; off < len; off += nx.lim.max_msg_size) {
        uint64_t n = len - off < nx.lim.max_msg_size ? len - off : nx.lim.max_msg_size;
        rc = PtlGet(r->get_md, off, n, from, PT_RDV, id, off, r);
        if (rc != PTL_OK)
            nx_fatal("PtlGet of %llu bytes from node %ld failed (%d)", (unsigned long long)n,
                     src, rc);
        nx.ops_inflight++;
    }
}

/* A message matched receive r: check it fits, then land it. */
static void deliver(struct nx_req *r, long src, uint64_t bits, uint64_t hd, uint64_t rlength,
                    const void *data)
{
    bool rdv = hd & HD_RDV;
    uint64_t len = rdv ? hd & HD_LEN_MASK : rlength;
    long type = (long)(bits & MB_TYPES);
    long v[4] = {type, (long)len, src, 0};
    memcpy(r->info, v, sizeof v);
    if (len > (uint64_t)r->count) {
        r->error = EQMSGLONG;
        snprintf(r->errmsg, sizeof r->errmsg,
                 "message of %llu bytes (type %ld from node %ld) is longer than the buffer of %ld",
                 (unsigned long long)len, type, src, r->count);
        if (rdv) { /* let the sender go: a zero-byte pull completes it */
            ptl_process_t from = {.rank = (ptl_rank_t)src};
            if (PtlGet(nx.md_zero, 0, 0, from, PT_RDV, (hd >> HD_ID_SHIFT) & HD_ID_MASK, 0,
                       &release_obj) == PTL_OK)
                nx.ops_inflight++;
        }
        finished(r);
        return;
    }
    if (rdv) {
        start_get(r, src, (hd >> HD_ID_SHIFT) & HD_ID_MASK, len);
        return;
    }
    if (data && len)
        memcpy(r->buf, data, (size_t)len);
    finished(r);
}

void nx_recv_event(struct nx_req *r, const ptl_event_t *ev)
{
    r->posted = false;
    if (ev->ni_fail_type != PTL_NI_OK)
        nx_fatal("a message from node %u failed on arrival (Portals failure %d)",
                 ev->initiator.rank, (int)ev->ni_fail_type);
    deliver(r, (long)ev->initiator.rank, ev->match_bits, ev->hdr_data, ev->rlength,
            ev->type == PTL_EVENT_PUT_OVERFLOW ? ev->start : NULL);
}

void nx_recv_reply(struct nx_req *r, const ptl_event_t *ev)
{
    if (ev->ni_fail_type != PTL_NI_OK)
        nx_fatal("pulling a message from node %ld failed (Portals failure %d)", r->info[2],
                 (int)ev->ni_fail_type);
    r->get_got += ev->mlength;
    if (r->get_got < r->get_len)
        return;
    PtlMDRelease(r->get_md);
    finished(r);
}

void nx_recv_take_saved(struct nx_req *r, struct saved *s)
{
    if (s->pending) { /* completes when its data is in (nx_ptl_flow.c) */
        s->waiter = r;
        r->wait_saved = s;
        return;
    }
    r->wait_saved = NULL;
    deliver(r, s->src, s->bits, s->hd, s->len, s->data);
    free(s->data);
    free(s);
}

static bool saved_matches(const struct saved *s, uint64_t bits, uint64_t ignore, long nodesel)
{
    return ((s->bits ^ bits) & ~ignore) == 0 && (nodesel == -1 || nodesel == s->src);
}

/* The oldest saved message matching, unlinked from the queue if take. */
static struct saved *saved_find(uint64_t bits, uint64_t ignore, long nodesel, bool take)
{
    struct saved *prev = NULL;
    for (struct saved *s = nx.saved_head; s; prev = s, s = s->next) {
        if (!saved_matches(s, bits, ignore, nodesel))
            continue;
        if (take) {
            if (prev)
                prev->next = s->next;
            else
                nx.saved_head = s->next;
            if (nx.saved_tail == s)
                nx.saved_tail = prev;
        }
        return s;
    }
    return NULL;
}

static ptl_me_t recv_me(void *buf, long count, uint64_t bits, uint64_t ignore, long nodesel)
{
    ptl_me_t me;
    memset(&me, 0, sizeof me);
    me.start = count ? buf : NULL;
    me.length = (ptl_size_t)count;
    me.ct_handle = PTL_CT_NONE;
    me.uid = PTL_UID_ANY;
    me.options = PTL_ME_OP_PUT | PTL_ME_USE_ONCE | PTL_ME_EVENT_LINK_DISABLE |
                 PTL_ME_EVENT_UNLINK_DISABLE;
    me.match_id.rank = nodesel == -1 ? PTL_RANK_ANY : (ptl_rank_t)nodesel;
    me.match_bits = bits;
    me.ignore_bits = ignore;
    return me;
}

void nx_recv_post(struct nx_req *r)
{
    struct saved *s = saved_find(r->bits, r->ignore, r->nodesel, true);
    if (s) {
        nx_recv_take_saved(r, s);
        return;
    }
    ptl_me_t me = recv_me(r->buf, r->count, r->bits, r->ignore, r->nodesel);
    int rc = PtlMEAppend(nx.ni, PT_DATA, &me, PTL_PRIORITY_LIST, r, &r->me);
    if (rc != PTL_OK)
        nx_fatal("cannot post a receive (Portals error %d): too many receives posted?", rc);
    r->posted = true;
    r->post_seq = ++post_counter;
}

/* A message to oneself: into the oldest posted receive it matches, as
 * Portals would (taking that receive's ME back off the list), else into
 * the saved queue like an unexpected message.  Always copied, whatever
 * its length, so the send is complete at once. */
void nx_self_send(uint64_t bits, const void *buf, long len)
{
    uint64_t after = 0;
    for (;;) {
        struct nx_req *best = NULL;
        for (int i = 0; i < N_REQ; i++) {
            struct nx_req *r = &reqs[i];
            if (r->in_use && r->is_recv && r->posted && r->post_seq > after &&
                (r->nodesel == -1 || r->nodesel == nx.rank) &&
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
            deliver(best, nx.rank, bits, (uint64_t)len, (uint64_t)len, buf);
            return;
        }
    }
    struct saved *s = calloc(1, sizeof *s);
    if (!s || (len && !(s->data = malloc((size_t)len))))
        nx_fatal("no memory for a %ld-byte message to this node", len);
    s->src = nx.rank;
    s->bits = bits;
    s->hd = (uint64_t)len;
    s->len = (uint64_t)len;
    if (len)
        memcpy(s->data, buf, (size_t)len);
    nx_saved_append(s);
}

/* ---- argument checks (the same conditions and words as libnx-mpi) ---- */

static int check_node(const char *call, long node, bool any_ok)
{
    if ((any_ok && node == -1) || (node >= 0 && node < nx.size))
        return 0;
    return nx_fail(call, EQNODE, "node %ld is not in 0..%ld", node, nx.size - 1);
}

static int check_buf(const char *call, const void *buf, long count)
{
    if (count < 0)
        return nx_fail(call, EQLEN, "negative length %ld", count);
    if (count > 0 && !buf)
        return nx_fail(call, EQPBUF, "NULL buffer for %ld bytes", count);
    if (count > NX_MAX_LEN)
        return nx_fail(call, EQLEN, "length %ld exceeds this build's limit of %ld", count,
                       NX_MAX_LEN);
    return 0;
}

static int check_type(const char *call, long type, bool sel)
{
    if (type >= 0 || (sel && type == -1))
        return 0;
    return nx_fail(call, EQTYPE, "type %ld is negative", type);
}

static void sel_bits(long typesel, uint64_t *bits, uint64_t *ignore)
{
    *bits = typesel == -1 ? 0 : (uint64_t)typesel;
    *ignore = typesel == -1 ? MB_TYPES : 0; /* never the library's own */
}

static void report_info(struct nx_req *r)
{
    memcpy(nx_info_last, r->info, sizeof r->info);
    if (r->info_out)
        memcpy(r->info_out, r->info, sizeof r->info);
}

/* Completion seen by the caller: report the error, if any, or the info. */
static long complete_user(const char *call, struct nx_req *r)
{
    bool recv = r->is_recv;
    int err = r->error;
    char msg[sizeof r->errmsg];
    memcpy(msg, r->errmsg, sizeof msg);
    if (!err && recv)
        report_info(r);
    nx_req_free(r);
    if (err)
        return nx_fail(call, err, "%s", msg);
    return 1;
}

/* ---- the NX calls ---------------------------------------------------- */

static long do_isend(const char *call, long type, void *buf, long count, long node, long ptype,
                     bool internal_req)
{
    if (check_type(call, type, false) || check_node(call, node, false) ||
        check_buf(call, buf, count))
        return -1;
    if (ptype != 0 && ptype != -1)
        return nx_fail(call, EQPID, "ptype %ld (only 0 exists)", ptype);
    struct nx_req *r = nx_req_new(call, internal_req);
    if (!r)
        return -1;
    if (!nx_send_raw(call, node, (uint64_t)type, buf, count, r)) {
        nx_req_free(r);
        return -1;
    }
    return r - reqs;
}

long nx_do_send(const char *call, long type, void *buf, long count, long node, long ptype)
{
    long i = do_isend(call, type, buf, count, node, ptype, true);
    if (i < 0)
        return -1;
    nx_wait(&reqs[i]);
    nx_req_free(&reqs[i]);
    return 0;
}



static long do_irecv(const char *call, long typesel, void *buf, long count, long nodesel,
                     long *info, bool internal_req)
{
    if (check_type(call, typesel, true) || check_node(call, nodesel, true) ||
        check_buf(call, buf, count))
        return -1;
    struct nx_req *r = nx_req_new(call, internal_req);
    if (!r)
        return -1;
    r->is_recv = true;
    r->buf = buf;
    r->count = count;
    r->nodesel = nodesel;
    r->info_out = info;
    sel_bits(typesel, &r->bits, &r->ignore);
    nx_recv_post(r);
    return r - reqs;
}

long nx_do_isend(const char *call, long type, void *buf, long count, long node, long ptype)
{
    return do_isend(call, type, buf, count, node, ptype, false);
}

long nx_do_irecv(const char *call, long typesel, void *buf, long count, long nodesel,
                 long *info)
{
    return do_irecv(call, typesel, buf, count, nodesel, info, false);
}

long nx_do_recv(const char *call, long typesel, void *buf, long count, long nodesel,
                    long *info)
{
    long i = do_irecv(call, typesel, buf, count, nodesel, info, true);
    if (i < 0)
        return -1;
    nx_wait(&reqs[i]);
    return complete_user(call, &reqs[i]) < 0 ? -1 : 0;
}





static struct nx_req *get_mid(const char *call, long mid)
{
    if (mid < 0 || mid >= N_REQ || !reqs[mid].in_use || reqs[mid].internal ||
        reqs[mid].ignored) {
        nx_fail(call, EQMID, "message id %ld is not active", mid);
        return NULL;
    }
    return &reqs[mid];
}

long msgdone(long mid)
{
    struct nx_req *r = get_mid("msgdone", mid);
    if (!r)
        return -1;
    if (!r->done)
        nx_progress(false);
    return r->done ? complete_user("msgdone", r) : 0;
}

long nx_do_wait(const char *call, long mid)
{
    struct nx_req *r = get_mid(call, mid);
    if (!r)
        return -1;
    nx_wait(r);
    return complete_user(call, r) < 0 ? -1 : 0;
}


void msgignore(long mid)
{
    struct nx_req *r = get_mid("msgignore", mid);
    if (!r)
        return;
    r->ignored = true;
    if (r->done)
        nx_req_free(r);
}

long msgcancel(long mid)
{
    struct nx_req *r = get_mid("msgcancel", mid);
    if (!r)
        return -1;
    /* A receive nothing matched yet comes off the list; anything already
     * matched (or a send) runs to completion first. */
    if (r->is_recv && r->posted && PtlMEUnlink(r->me) == PTL_OK) {
        nx_req_free(r);
        return 0;
    }
    nx_wait(r);
    nx_req_free(r);
    return 0;
}

/* Info of an unexpected message from its header. */
static void probe_info(long *info, long src, uint64_t bits, uint64_t hd, uint64_t rlength)
{
    long v[4] = {(long)(bits & MB_TYPES), (long)((hd & HD_RDV) ? hd & HD_LEN_MASK : rlength),
                 src, 0};
    memcpy(nx_info_last, v, sizeof v);
    if (info)
        memcpy(info, v, sizeof v);
}

long nx_do_probe(const char *call, long typesel, long nodesel, long *info, bool block)
{
    if (check_type(call, typesel, true) || check_node(call, nodesel, true))
        return -1;
    uint64_t bits, ignore;
    sel_bits(typesel, &bits, &ignore);
    for (;;) {
        struct saved *s = saved_find(bits, ignore, nodesel, false);
        if (s) {
            probe_info(info, s->src, s->bits, s->hd, s->len);
            return 1;
        }
        struct probe p = {.kind = OBJ_PROBE};
        ptl_me_t me = recv_me(NULL, 0, bits, ignore, nodesel);
        me.options = PTL_ME_OP_PUT;
        int rc = PtlMESearch(nx.ni, PT_DATA, &me, PTL_SEARCH_ONLY, &p);
        if (rc != PTL_OK)
            nx_fatal("PtlMESearch failed (%d)", rc);
        while (!p.got)
            nx_progress(true);
        if (p.ev.ni_fail_type == PTL_NI_OK) {
            probe_info(info, (long)p.ev.initiator.rank, p.ev.match_bits, p.ev.hdr_data,
                       p.ev.rlength);
            return 1;
        }
        if (!block)
            return 0;
        nx_progress(true); /* something arrives, then look again */
    }
}

void nx_probe_event(void *probe, const ptl_event_t *ev)
{
    struct probe *p = probe;
    p->ev = *ev;
    p->got = true;
}




/* ---- for the global operations (nx_ptl_coll.c) ------------------------ */

struct nx_req *nx_coll_isend(long node, uint64_t bits, const void *buf, long len)
{
    struct nx_req *r = nx_req_new("global operation", true);
    if (r && !nx_send_raw("global operation", node, bits, buf, len, r))
        nx_fatal("global operation: send to node %ld failed", node);
    return r;
}

struct nx_req *nx_coll_irecv(long node, uint64_t bits, void *buf, long len)
{
    struct nx_req *r = nx_req_new("global operation", true);
    if (!r)
        nx_fatal("global operation: no request slot");
    r->is_recv = true;
    r->buf = buf;
    r->count = len;
    r->nodesel = node;
    r->bits = bits;
    r->ignore = 0;
    nx_recv_post(r);
    return r;
}

void nx_coll_wait(struct nx_req *r)
{
    nx_wait(r);
    if (r->error)
        nx_fatal("global operation: %s (do all nodes call the same global operations "
                 "with the same lengths?)", r->errmsg);
    nx_req_free(r);
}
