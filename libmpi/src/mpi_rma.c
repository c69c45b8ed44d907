/*
 * One-sided operations (MPI-3.1 11.3): MPI_Put, MPI_Get, MPI_Accumulate,
 * MPI_Get_accumulate, MPI_Fetch_and_op, MPI_Compare_and_swap; at the
 * origin, messages to the target (mpi_rma.h says what they carry), and at
 * the target, applying them as its progress finds them.
 *
 * The origin checks what it can know: the epoch (MPI_ERR_RMA_SYNC), the
 * types, and the range against the target window's size it learnt at
 * MPI_Win_create (MPI_ERR_RMA_RANGE).  The target checks the range again
 * before it touches memory and refuses what falls outside, never writing
 * there: an answer then carries the error, and the next acknowledgement
 * (unlock, flush) counts it.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi_rma.h"
#include "mpi_thread.h"

static uint64_t rbits(const struct mwin *w, int tag)
{
    return mpi_bits(2 * mpi_comm_get(w->comm)->ctx, tag);
}

/* Operations of a window waiting for an answer or a send at once. */
#define RMA_MAX_PENDING 256

static long world_of(const struct mwin *w, int r) { return mpi_world_of(mpi_comm_get(w->comm), r); }

static struct msg_req *new_req(struct mwin *w, const char *call)
{
    struct msg_req *r = msg_req_new(true);
    if (!r && w) {
        /* The table is full of this window's operations: finish them. */
        mpi_rma_complete(w, -1);
        r = msg_req_new(true);
    }
    if (!r)
        mpi_fatal(call, "no engine request left for a one-sided operation");
    return r;
}

/* Do count elements of a type whose true extent is [tlb, tub) and extent
 * ext, at byte disp, lie inside a window of size bytes? */
static bool in_range(long disp, long count, long ext, long tlb, long tub, long size)
{
    if (count <= 0)
        return disp >= 0 && disp <= size;
    long first = (count - 1) * ext;
    long lo = disp + tlb + (first < 0 ? first : 0), hi = disp + tub + (first > 0 ? first : 0);
    return lo >= 0 && hi <= size;
}

/* ---- the target ---- */

void mpi_rma_tsend(struct mwin *w, int to, int tag, const void *data, long len)
{
    struct rma_tsend *s = malloc(sizeof *s);
    void *buf = malloc(len > 0 ? (size_t)len : 1);
    if (!s || !buf)
        mpi_fatal("MPI one-sided", "no memory for an answer");
    memcpy(buf, data, (size_t)len);
    s->buf = buf;
    s->r = new_req(NULL, "MPI one-sided");
    msg_isend(s->r, world_of(w, to), rbits(w, tag), buf, (uint64_t)len, 0);
    s->next = w->tsends;
    w->tsends = s;
}

void mpi_rma_reap(struct mwin *w, bool all)
{
    for (struct rma_tsend **p = &w->tsends; *p;) {
        struct rma_tsend *s = *p;
        if (all)
            msg_wait(s->r);
        if (!s->r->done && !msg_test(s->r)) {
            p = &s->next;
            continue;
        }
        msg_req_free(s->r);
        free(s->buf);
        *p = s->next;
        free(s);
    }
}

/* The same for a dynamic window: every byte lies in an attached region
 * (disp is an address). */
static bool attached(const struct mwin *w, long disp, long count, long ext, long tlb, long tub)
{
    if (count <= 0)
        return count == 0;
    long first, lo, hi; /* a hostile header's sums must not wrap */
    if (__builtin_mul_overflow(count - 1, ext, &first) ||
        __builtin_add_overflow(disp, tlb + (first < 0 ? first : 0), &lo) ||
        __builtin_add_overflow(disp, tub + (first > 0 ? first : 0), &hi))
        return false;
    /* Every byte attached: regions side by side may carry one access. */
    for (long at = lo; at < hi;) {
        long next = at;
        for (int i = 0; i < w->nregions; i++) {
            long b = (long)(uintptr_t)w->regions[i].base, e = b + (long)w->regions[i].size;
            if (b <= at && at < e)
                next = e;
        }
        if (next == at)
            return false;
        at = next;
    }
    return lo <= hi;
}

static bool grantable(const struct mwin *w, int type)
{
    return w->excl < 0 && (type == MPI_LOCK_SHARED || w->shared == 0);
}

static void grant(struct mwin *w, int rank, int type)
{
    if (type == MPI_LOCK_SHARED)
        w->shared++;
    else
        w->excl = rank;
    mpi_rma_tsend(w, rank, T_RMA_GRANT, &type, sizeof type);
}

/* Grants in the order asked for: a shared lock waits behind an exclusive
 * one asked for before it, so writers are not starved. */
static void grant_queued(struct mwin *w)
{
    while (w->queue && grantable(w, w->queue->type)) {
        struct rma_lockq *q = w->queue;
        w->queue = q->next;
        grant(w, q->rank, q->type);
        free(q);
    }
}

static void lock_request(struct mwin *w, int src, int type)
{
    if (!w->queue && grantable(w, type)) {
        grant(w, src, type);
        return;
    }
    struct rma_lockq *q = calloc(1, sizeof *q), **p = &w->queue;
    if (!q)
        mpi_fatal("MPI_Win_lock", "no memory for a lock request");
    q->rank = src;
    q->type = type;
    while (*p)
        p = &(*p)->next;
    *p = q;
}

static void acknowledge(struct mwin *w, int src)
{
    int refused = w->errs[src];
    w->errs[src] = 0;
    mpi_rma_tsend(w, src, T_RMA_ACK, &refused, sizeof refused);
}

/* The answer to a get or fetch: a status word, then the data. */
static void answer(struct mwin *w, int src, int tag, int err, const void *data, long len)
{
    char *m = malloc((size_t)len + 8);
    if (!m)
        mpi_fatal("MPI one-sided", "no memory for an answer");
    memset(m, 0, 8);
    memcpy(m, &err, sizeof err);
    if (len)
        memcpy(m + 8, data, (size_t)len);
    mpi_rma_tsend(w, src, tag, m, len + 8);
    free(m);
}

static void apply(struct mwin *w, int src, const char *msg, long len)
{
    const struct rma_hdr *h = (const void *)msg;
    if (h->kind == RMA_LOCK) {
        lock_request(w, src, h->op);
        return;
    }
    if (h->kind == RMA_UNLOCK) {
        if (w->excl == src)
            w->excl = -1;
        else if (w->shared > 0)
            w->shared--;
        acknowledge(w, src);
        grant_queued(w);
        return;
    }
    if (h->kind == RMA_FLUSH) {
        acknowledge(w, src);
        return;
    }
    if (h->counted)
        w->applied[src]++;
    /* The target type as the origin described it. */
    struct mtype t = {.in_use = true, .committed = true, .nblocks = h->nblocks,
                      .blocks = (struct block *)(msg + sizeof *h), .lb = h->lb, .ub = h->ub,
                      .true_lb = h->true_lb, .true_ub = h->true_ub, .size = h->size,
                      .reps = h->reps, .rep_stride = h->rep_stride};
    const char *data = msg + sizeof *h + (size_t)h->nblocks * sizeof(struct block);
    long n = h->count, bytes = n * t.size;
    long need = h->kind == RMA_CAS ? 2 * bytes
                : h->kind == RMA_GET || (h->kind == RMA_GACC && h->op == MPI_NO_OP) ? 0 : bytes;
    bool ok = data + need <= msg + len &&
              (w->flavor == MPI_WIN_FLAVOR_DYNAMIC
                   ? attached(w, h->disp, n, mpi_extent(&t), t.true_lb, t.true_ub)
                   : in_range(h->disp, n, mpi_extent(&t), t.true_lb, t.true_ub,
                              (long)w->wsize));
    bool answers = h->kind == RMA_GET || h->kind == RMA_GACC || h->kind == RMA_CAS;
    if (!ok) {
        /* A get learns it from its answer; the others from the next
         * flush or unlock acknowledgement (counted once, not both). */
        if (answers)
            answer(w, src, h->reply_tag, MPI_ERR_RMA_RANGE, NULL, 0);
        else
            w->errs[src]++;
        return;
    }
    /* A dynamic window's displacement is the address itself. */
    char *at = w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? (char *)(uintptr_t)h->disp
                                                   : w->base + h->disp;
    char *old = NULL;
    if (answers) {
        old = malloc(bytes > 0 ? (size_t)bytes : 1);
        if (!old)
            mpi_fatal("MPI one-sided", "no memory for %ld bytes of an answer", bytes);
        mpi_pack(at, n, &t, old);
    }
    int err = MPI_SUCCESS;
    switch (h->kind) {
    case RMA_PUT:
        mpi_unpack(data, n, &t, at);
        break;
    case RMA_CAS:
        if (memcmp(old, data + bytes, (size_t)bytes) == 0)
            mpi_unpack(data, n, &t, at);
        break;
    case RMA_ACC:
    case RMA_GACC:
        if (h->op == MPI_REPLACE) {
            mpi_unpack(data, n, &t, at);
        } else if (h->op != MPI_NO_OP && n > 0) {
            /* The origin's elements laid out as the window's, then reduced
             * into it. */
            long span = mpi_span(&t, n);
            char *room = malloc(span > 0 ? (size_t)span : 1);
            if (!room)
                mpi_fatal("MPI_Accumulate", "no memory for %ld bytes", span);
            mpi_unpack(data, n, &t, room - t.true_lb);
            err = mpi_op_apply_type("MPI_Accumulate", w->comm, h->op, room - t.true_lb,
                                    at, n, &t);
            free(room);
        }
        break;
    }
    if (answers)
        answer(w, src, h->reply_tag, err, old, bytes);
    free(old);
}

void mpi_rma_serve(struct mwin *w)
{
    uint64_t bits = rbits(w, T_RMA_REQ);
    struct msg_probe_info pi;
    struct msg_saved *taken;
    /* A matched probe: the request found is this call's alone, though the
     * receive may wait (and, under MPI_THREAD_MULTIPLE, another thread
     * serve the window meanwhile). */
    while ((taken = msg_mprobe(MSG_ANY_SOURCE, bits, 0, false, &pi))) {
        char *m = malloc(pi.len > 0 ? (size_t)pi.len : 1);
        if (!m)
            mpi_fatal("MPI one-sided", "no memory for a request of %llu bytes",
                      (unsigned long long)pi.len);
        struct msg_req *r = new_req(NULL, "MPI one-sided");
        msg_mrecv(r, taken, m, pi.len);
        msg_wait(r);
        int src = mpi_rank_of(mpi_comm_get(w->comm), (int)r->src);
        msg_req_free(r);
        if (src >= 0 && pi.len >= sizeof(struct rma_hdr))
            apply(w, src, m, (long)pi.len);
        free(m);
    }
    mpi_rma_reap(w, false);
}

/* ---- the origin ---- */

static void pend_add(struct mwin *w, struct msg_req *r, int target, void *buf)
{
    struct rma_pend *p = calloc(1, sizeof *p);
    if (!p)
        mpi_fatal("MPI one-sided", "no memory");
    p->r = r;
    p->target = target;
    p->seq = w->pend_seq++;
    p->buf = buf;
    p->dtype = MPI_DATATYPE_NULL;
    p->next = w->pend;
    w->pend = p;
    w->npend++;
}

/* Finish one: wait, unpack an answer; its error code. */
static int pend_finish(struct rma_pend *p)
{
    mpi_win_wait_req(p->r);
    int err = MPI_SUCCESS;
    if (p->r->is_recv) {
        memcpy(&err, p->buf, sizeof err);
        if (err == MPI_SUCCESS && p->dcount)
            mpi_unpack((char *)p->buf + 8, p->dcount, mpi_type_get(p->dtype), p->dst);
        if (p->held)
            mpi_type_drop(p->dtype);
    }
    msg_req_free(p->r);
    free(p->buf);
    if (p->req) { /* MPI_Rget ...: its request completes with it */
        mpi_status_set(&p->req->status, MPI_ANY_SOURCE, MPI_ANY_TAG, err, 0);
        p->req->done_now = true;
        p->req->rma = NULL;
    }
    return err;
}

/* Finishing an entry waits, and under MPI_THREAD_MULTIPLE other threads
 * add, finish and take entries meanwhile: so an entry stays in the list,
 * marked, while its thread waits for it, and is taken out (found again
 * from the head) after. */
static int finish_listed(struct mwin *w, struct rma_pend *p)
{
    p->finishing = true;
    int e = pend_finish(p);
    for (struct rma_pend **pp = &w->pend; *pp; pp = &(*pp)->next)
        if (*pp == p) {
            *pp = p->next;
            break;
        }
    w->npend--;
    free(p);
    return e;
}

/* Every operation to target (-1: all) issued before the call, by any
 * thread.  Those not yet claimed are claimed in one pass and finished in
 * list order, then taken out in one more pass (O(n), as a flush of many
 * operations needs); those another thread is finishing are waited for. */
int mpi_rma_complete(struct mwin *w, int target)
{
    int rc = MPI_SUCCESS;
    uint32_t upto = w->pend_seq;
    int n = 0;
    for (struct rma_pend *p = w->pend; p; p = p->next)
        if ((target < 0 || p->target == target) && (int32_t)(p->seq - upto) < 0 &&
            !p->finishing) {
            p->finishing = true;
            p->claim = &rc;
            n++;
        }
    /* Finishing one waits and lets other threads change the list, but only
     * this call takes its claimed entries out, and others add at the head:
     * a claimed entry stays listed, its next pointer current. */
    struct rma_pend *p = w->pend;
    for (int left = n; left > 0; p = p->next) {
        if (p->claim != &rc)
            continue;
        int e = pend_finish(p);
        left--;
        if (e && !rc)
            rc = e;
    }
    for (struct rma_pend **pp = &w->pend; *pp;) {
        struct rma_pend *p = *pp;
        if (p->claim == &rc) {
            *pp = p->next;
            w->npend--;
            free(p);
        } else {
            pp = &p->next;
        }
    }
    for (;;) { /* another thread's, issued before this call */
        bool others = false;
        for (struct rma_pend *p = w->pend; p && !others; p = p->next)
            others = (target < 0 || p->target == target) && (int32_t)(p->seq - upto) < 0;
        if (!others)
            return rc;
        mpi_thread_yield();
    }
}

int mpi_rma_control(struct mwin *w, const char *call, int target, int kind, int type)
{
    struct rma_hdr *h = calloc(1, sizeof *h);
    if (!h)
        return mpi_win_error(w, MPI_ERR_NO_MEM, call, "no memory");
    h->kind = kind;
    h->op = type;
    struct msg_req *r = new_req(w, call);
    msg_isend(r, world_of(w, target), rbits(w, T_RMA_REQ), h, sizeof *h, 0);
    pend_add(w, r, target, h);
    return MPI_SUCCESS;
}

void mpi_rma_await(struct mwin *w, int target, int kind, int *refused)
{
    int v = 0;
    struct msg_req *r = new_req(w, "MPI one-sided");
    msg_irecv(r, world_of(w, target), rbits(w, kind == RMA_LOCK ? T_RMA_GRANT : T_RMA_ACK), 0,
              &v, sizeof v);
    mpi_win_wait_req(r);
    msg_req_free(r);
    if (refused)
        *refused = v;
}

struct opargs {
    int kind;
    const void *origin;
    int ocount;
    MPI_Datatype otype;
    const void *compare;
    void *result;
    int rcount;
    MPI_Datatype rtype;
    int target;
    MPI_Aint disp;
    int tcount;
    MPI_Datatype ttype;
    MPI_Op op;
};

static int check_types(const char *call, struct mwin *w, const struct opargs *a,
                       struct mtype **ot, struct mtype **rt, struct mtype **tt)
{
    MPI_Comm c = w->comm;
    TRY(mpi_check_type(call, c, a->ttype, tt));
    TRY(mpi_check_count(call, c, a->tcount));
    long tbytes = (long)a->tcount * (*tt)->size;
    bool sends = a->kind == RMA_PUT || a->kind == RMA_ACC || a->kind == RMA_CAS ||
                 (a->kind == RMA_GACC && a->op != MPI_NO_OP);
    if (sends) {
        TRY(mpi_check_type(call, c, a->otype, ot));
        TRY(mpi_check_count(call, c, a->ocount));
        TRY(mpi_check_buf(call, c, a->origin, a->ocount, *ot));
        if ((long)a->ocount * (*ot)->size != tbytes)
            return mpi_error(c, MPI_ERR_TYPE, call,
                             "the origin's %ld bytes of data do not fill the target's %ld",
                             (long)a->ocount * (*ot)->size, tbytes);
    }
    if (a->kind == RMA_GET || a->kind == RMA_GACC || a->kind == RMA_CAS) {
        TRY(mpi_check_type(call, c, a->rtype, rt));
        TRY(mpi_check_count(call, c, a->rcount));
        TRY(mpi_check_buf(call, c, a->result, a->rcount, *rt));
        if ((long)a->rcount * (*rt)->size != tbytes)
            return mpi_error(c, MPI_ERR_TYPE, call,
                             "the result's %ld bytes do not hold the target's %ld",
                             (long)a->rcount * (*rt)->size, tbytes);
    }
    if (a->kind == RMA_ACC || a->kind == RMA_GACC) {
        if (!mpi_op_predefined(a->op))
            return mpi_error(c, MPI_ERR_OP, call,
                             "one-sided accumulates take predefined operations only");
        if (a->op != MPI_REPLACE && a->op != MPI_NO_OP)
            TRY(mpi_check_op(call, c, a->op, a->ttype));
    }
    return MPI_SUCCESS;
}

/* A request-based call's request (request not NULL): complete at once
 * (MPI_PROC_NULL, or an operation whose origin data is packed and gone
 * with the call), or tied to the pending answer of a get. */
static bool req_test(struct mreq *r);
static void req_wait(struct mreq *r);
static void req_release(struct mreq *r);
static const struct mpi_req_ops req_ops = {req_test, req_wait, req_release};

static int rma_request(const char *call, struct mwin *w, MPI_Request *request,
                       struct mreq **out)
{
    mpi_req_kind_register(R_RMA, &req_ops);
    struct mreq *q = mpi_req_new(call, w->comm);
    if (!q)
        return MPI_ERR_INTERN; /* raised by mpi_req_new */
    q->kind = R_RMA;
    q->active = true;
    q->done_now = true;
    q->rma_win = w;
    mpi_status_empty(&q->status);
    *request = mpi_req_handle(q);
    *out = q;
    return MPI_SUCCESS;
}

static int rma_op(const char *call, MPI_Win win, const struct opargs *a, MPI_Request *request)
{
    NEED_INIT(call);
    struct mwin *w = NULL;
    TRY(mpi_win_check(call, win, &w));
    struct mreq *q = NULL;
    if (request)
        *request = MPI_REQUEST_NULL;
    if (a->target == MPI_PROC_NULL)
        return request ? rma_request(call, w, request, &q) : MPI_SUCCESS;
    if (a->target < 0 || a->target >= w->size)
        return mpi_win_error(w, MPI_ERR_RANK, call, "target rank %d is not in 0..%d",
                             a->target, w->size - 1);
    int t = a->target;
    bool passive = w->lock_all || w->locked[t];
    if (request && !passive) /* MPI-3.1 11.3.5 */
        return mpi_win_error(w, MPI_ERR_RMA_SYNC, call,
                             "request-based operations need a passive-target epoch on rank %d "
                             "(MPI_Win_lock or MPI_Win_lock_all)", t);
    if (!passive && !w->fence && !(w->started && w->access[t]))
        return mpi_win_error(w, MPI_ERR_RMA_SYNC, call,
                             "no access epoch to rank %d is open on this window "
                             "(MPI_Win_fence, _start or _lock first)", t);
    struct mtype *ot = NULL, *rt = NULL, *tt = NULL;
    TRY(mpi_win_raise(w, check_types(call, w, a, &ot, &rt, &tt)));
    long tbytes = (long)a->tcount * tt->size;
    long disp = (long)a->disp * w->units[t];
    /* A dynamic window's target checks against what it has attached. */
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC &&
        !in_range(disp, a->tcount, mpi_extent(tt), tt->true_lb, tt->true_ub, (long)w->sizes[t]))
        return mpi_win_error(w, MPI_ERR_RMA_RANGE, call,
                             "%d elements at displacement %ld are not inside rank %d's "
                             "window of %ld bytes", a->tcount, (long)a->disp, t,
                             (long)w->sizes[t]);
    bool sends = a->kind == RMA_PUT || a->kind == RMA_ACC || a->kind == RMA_CAS ||
                 (a->kind == RMA_GACC && a->op != MPI_NO_OP);
    long dlen = sends ? (a->kind == RMA_CAS ? 2 * tbytes : tbytes) : 0;
    long hlen = (long)sizeof(struct rma_hdr) + (long)tt->nblocks * (long)sizeof(struct block);
    int rc;
    char *m = malloc((size_t)(hlen + dlen));
    if (!m)
        return mpi_win_error(w, MPI_ERR_NO_MEM, call, "no memory for %ld bytes", hlen + dlen);
    struct rma_hdr *h = (void *)m;
    memset(h, 0, sizeof *h);
    *h = (struct rma_hdr){.kind = a->kind, .counted = !passive, .disp = disp,
                          .count = a->tcount, .op = a->op, .nblocks = tt->nblocks,
                          .lb = tt->lb, .ub = tt->ub, .true_lb = tt->true_lb,
                          .true_ub = tt->true_ub, .size = tt->size, .reps = tt->reps,
                          .rep_stride = tt->rep_stride};
    memcpy(m + sizeof *h, tt->blocks, (size_t)tt->nblocks * sizeof(struct block));
    if (sends) {
        mpi_pack(a->origin, a->ocount, ot, m + hlen);
        if (a->kind == RMA_CAS)
            mpi_pack(a->compare, a->ocount, ot, m + hlen + tbytes);
    }
    if ((a->kind == RMA_GET || a->kind == RMA_GACC || a->kind == RMA_CAS) &&
        w->npend >= RMA_MAX_PENDING) {
        /* Each answer waits in a posted receive, which Portals holds only
         * so many of: an epoch of thousands of gets finishes what it has
         * started first (MPICH's rma/manyget ended the job). */
        int e = mpi_rma_complete(w, -1);
        if (e) {
            free(m);
            return mpi_win_error(w, e, call, "an earlier operation of this epoch failed");
        }
    }
    if (request && (rc = rma_request(call, w, request, &q))) {
        free(m);
        return rc;
    }
    if (a->kind == RMA_GET || a->kind == RMA_GACC || a->kind == RMA_CAS) {
        /* The answer's receive is posted before the request leaves. */
        h->reply_tag = T_RMA_REPLY + (int)(w->next_tag++ % (uint32_t)(TAG_UB - T_RMA_REPLY));
        char *room = malloc((size_t)tbytes + 8);
        if (!room) {
            free(m);
            if (q)
                MPI_Request_free(request);
            return mpi_win_error(w, MPI_ERR_NO_MEM, call, "no memory for %ld bytes", tbytes);
        }
        struct msg_req *r = new_req(w, call);
        msg_irecv(r, world_of(w, t), rbits(w, h->reply_tag), 0, room, (uint64_t)tbytes + 8);
        pend_add(w, r, t, room);
        w->pend->dst = a->result;
        w->pend->dcount = a->rcount;
        w->pend->dtype = a->rtype;
        w->pend->held = mpi_type_hold(a->rtype);
        if (q) { /* complete when the answer is in */
            q->done_now = false;
            q->rma = w->pend;
            w->pend->req = q;
        }
    }
    if (!passive)
        w->sent[t]++;
    struct msg_req *r = new_req(w, call);
    msg_isend(r, world_of(w, t), rbits(w, T_RMA_REQ), m, (uint64_t)(hlen + dlen), 0);
    if (r->done) { /* sent eagerly: the buffer is free already */
        msg_req_free(r);
        free(m);
    } else {
        pend_add(w, r, t, m);
    }
    return MPI_SUCCESS;
}

int MPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
            int target_rank, MPI_Aint target_disp, int target_count,
            MPI_Datatype target_datatype, MPI_Win win)
{
    struct opargs a = {.kind = RMA_PUT, .origin = origin_addr, .ocount = origin_count,
                       .otype = origin_datatype, .target = target_rank, .disp = target_disp,
                       .tcount = target_count, .ttype = target_datatype, .op = MPI_REPLACE};
    return rma_op("MPI_Put", win, &a, NULL);
}

int MPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
            MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    struct opargs a = {.kind = RMA_GET, .result = origin_addr, .rcount = origin_count,
                       .rtype = origin_datatype, .target = target_rank, .disp = target_disp,
                       .tcount = target_count, .ttype = target_datatype, .op = MPI_NO_OP};
    return rma_op("MPI_Get", win, &a, NULL);
}

int MPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                   int target_rank, MPI_Aint target_disp, int target_count,
                   MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    struct opargs a = {.kind = RMA_ACC, .origin = origin_addr, .ocount = origin_count,
                       .otype = origin_datatype, .target = target_rank, .disp = target_disp,
                       .tcount = target_count, .ttype = target_datatype, .op = op};
    return rma_op("MPI_Accumulate", win, &a, NULL);
}

int MPI_Get_accumulate(const void *origin_addr, int origin_count,
                       MPI_Datatype origin_datatype, void *result_addr, int result_count,
                       MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                       int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    struct opargs a = {.kind = RMA_GACC, .origin = origin_addr, .ocount = origin_count,
                       .otype = origin_datatype, .result = result_addr,
                       .rcount = result_count, .rtype = result_datatype,
                       .target = target_rank, .disp = target_disp, .tcount = target_count,
                       .ttype = target_datatype, .op = op};
    return rma_op("MPI_Get_accumulate", win, &a, NULL);
}

int MPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                     int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
    struct opargs a = {.kind = RMA_GACC, .origin = origin_addr, .ocount = 1, .otype = datatype,
                       .result = result_addr, .rcount = 1, .rtype = datatype,
                       .target = target_rank, .disp = target_disp, .tcount = 1,
                       .ttype = datatype, .op = op};
    return rma_op("MPI_Fetch_and_op", win, &a, NULL);
}

int MPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                         MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                         MPI_Win win)
{
    struct opargs a = {.kind = RMA_CAS, .origin = origin_addr, .ocount = 1, .otype = datatype,
                       .compare = compare_addr, .result = result_addr, .rcount = 1,
                       .rtype = datatype, .target = target_rank, .disp = target_disp,
                       .tcount = 1, .ttype = datatype, .op = MPI_REPLACE};
    return rma_op("MPI_Compare_and_swap", win, &a, NULL);
}

/* ---- request-based operations (MPI-3.1 11.3.5) ----
 * As their blocking forms, in a passive-target epoch only; the request
 * completes when the origin's buffer may be used again: at once for
 * Rput and Raccumulate (their data is packed into the message by the
 * call), when the answer is unpacked for Rget and Rget_accumulate. */

int MPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count,
             MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    struct opargs a = {.kind = RMA_PUT, .origin = origin_addr, .ocount = origin_count,
                       .otype = origin_datatype, .target = target_rank, .disp = target_disp,
                       .tcount = target_count, .ttype = target_datatype, .op = MPI_REPLACE};
    return rma_op("MPI_Rput", win, &a, request);
}

int MPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
             MPI_Request *request)
{
    struct opargs a = {.kind = RMA_GET, .result = origin_addr, .rcount = origin_count,
                       .rtype = origin_datatype, .target = target_rank, .disp = target_disp,
                       .tcount = target_count, .ttype = target_datatype, .op = MPI_NO_OP};
    return rma_op("MPI_Rget", win, &a, request);
}

int MPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    struct opargs a = {.kind = RMA_ACC, .origin = origin_addr, .ocount = origin_count,
                       .otype = origin_datatype, .target = target_rank, .disp = target_disp,
                       .tcount = target_count, .ttype = target_datatype, .op = op};
    return rma_op("MPI_Raccumulate", win, &a, request);
}

int MPI_Rget_accumulate(const void *origin_addr, int origin_count,
                        MPI_Datatype origin_datatype, void *result_addr, int result_count,
                        MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                        int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                        MPI_Request *request)
{
    struct opargs a = {.kind = RMA_GACC, .origin = origin_addr, .ocount = origin_count,
                       .otype = origin_datatype, .result = result_addr,
                       .rcount = result_count, .rtype = result_datatype,
                       .target = target_rank, .disp = target_disp, .tcount = target_count,
                       .ttype = target_datatype, .op = op};
    return rma_op("MPI_Rget_accumulate", win, &a, request);
}

/* Its pending answer out of the window's list, finished (which completes
 * the request). */
static void finish_req(struct mreq *r)
{
    struct mwin *w = r->rma_win;
    for (struct rma_pend *p = w->pend; p; p = p->next)
        if (p == r->rma) {
            if (p->finishing) /* another thread's flush has it */
                mpi_thread_yield();
            else
                finish_listed(w, p);
            return;
        }
}

static bool req_test(struct mreq *r)
{
    if (!r->done_now) {
        mpi_win_serve_all();
        msg_progress(false);
        if (r->rma && r->rma->r->done)
            finish_req(r);
    }
    return r->done_now;
}

static void req_wait(struct mreq *r)
{
    while (!r->done_now && r->rma)
        finish_req(r); /* waits, serving the windows meanwhile */
}

/* Freed before it completed: the answer still arrives, and the epoch's
 * end (flush, unlock) finishes it with nothing to tell. */
static void req_release(struct mreq *r)
{
    if (r->rma)
        r->rma->req = NULL;
    r->rma = NULL;
}
