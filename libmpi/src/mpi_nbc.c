/*
 * Nonblocking collectives (MPI-3.1 5.12: MPI_Ibarrier ... MPI_Iexscan) and
 * MPI_Alltoallw, as schedules.
 *
 * A call checks its arguments, packs what it sends, and builds a schedule:
 * rounds of messages on the communicator's collective context (tagged
 * with the call's sequence number and the round, as the blocking ones
 * are), each followed by local steps (reduce, copy, unpack) once all its
 * messages are done.  The first round starts in the call; the rest start
 * as the schedule is stepped: by MPI_Test/Wait on its request, and by the
 * engine's progress hook whenever this rank waits in any MPI call, so a
 * rank blocked in a receive or a barrier still does its part of another
 * rank's collective (a schedule never waits inside a call).
 *
 * Shapes are simple and correct rather than the fastest: dissemination for
 * Ibarrier, binomial trees for Ibcast and the reductions (rooted at rank 0
 * so a non-commutative operation sees ranks in order), direct messages for
 * the gathers, scatters and all-to-alls, a chain for the scans.
 * Reductions move typed bytes (the span of count elements), everything
 * else packed bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi_coll.h"

enum { S_SEND, S_RECV, S_REDUCE, S_TCOPY, S_UNPACK };


struct sop {
    int kind, peer, tag;
    void *buf;          /* SEND/RECV: the bytes; REDUCE: inout; TCOPY: to; UNPACK: to */
    const void *src;    /* REDUCE: in; TCOPY: from; UNPACK: packed bytes */
    long len;           /* SEND/RECV: bytes; REDUCE/TCOPY/UNPACK: elements */
    MPI_Datatype type;
    MPI_Op op;
};

struct nbc {
    struct cx x;
    struct sop *ops;
    int nops, cap;
    int *ends, nrounds, rcap;      /* round k's steps: [ends[k-1], ends[k]) */
    int round;                     /* in flight; nrounds: done */
    struct msg_req **reqs;
    int nreqs;
    void **mem;                    /* freed at the end */
    int nmem, memcap;
    MPI_Datatype held[3];          /* derived types its steps use */
    struct nbc *next;              /* the active list */
    struct mreq *req;
};

static struct nbc *active;

struct nbc *mpi_nbc_new(const struct cx *x)
{
    struct nbc *s = calloc(1, sizeof *s);
    if (!s)
        mpi_fatal(x->call, "no memory for a schedule");
    s->x = *x;
    return s;
}

static void *grow(const struct nbc *s, void *p, int *cap, size_t each)
{
    *cap = *cap ? 2 * *cap : 8;
    p = realloc(p, (size_t)*cap * each);
    if (!p)
        mpi_fatal(s->x.call, "no memory for a schedule");
    return p;
}

void *mpi_nbc_alloc(struct nbc *s, long len)
{
    if (s->nmem == s->memcap)
        s->mem = grow(s, s->mem, &s->memcap, sizeof *s->mem);
    return s->mem[s->nmem++] = xmalloc(&s->x, len);
}

static void add(struct nbc *s, struct sop op)
{
    if (s->nops == s->cap)
        s->ops = grow(s, s->ops, &s->cap, sizeof *s->ops);
    s->ops[s->nops++] = op;
}

void mpi_nbc_send(struct nbc *s, int tag, int peer, const void *buf, long len)
{
    add(s, (struct sop){.kind = S_SEND, .tag = tag, .peer = peer, .buf = (void *)buf,
                        .len = len});
}

void mpi_nbc_recv(struct nbc *s, int tag, int peer, void *buf, long len)
{
    add(s, (struct sop){.kind = S_RECV, .tag = tag, .peer = peer, .buf = buf, .len = len});
}

/* Local steps, after the round's messages. */
void mpi_nbc_reduce(struct nbc *s, const void *in, void *inout, long count, MPI_Datatype t,
                   MPI_Op op)
{
    add(s, (struct sop){.kind = S_REDUCE, .src = in, .buf = inout, .len = count, .type = t,
                        .op = op});
}

void mpi_nbc_tcopy(struct nbc *s, const void *from, void *to, long count, MPI_Datatype t)
{
    add(s, (struct sop){.kind = S_TCOPY, .src = from, .buf = to, .len = count, .type = t});
}

void mpi_nbc_unpack(struct nbc *s, const void *packed, void *to, long count, MPI_Datatype t)
{
    add(s, (struct sop){.kind = S_UNPACK, .src = packed, .buf = to, .len = count, .type = t});
}

void mpi_nbc_end_round(struct nbc *s)
{
    if (s->nrounds == s->rcap)
        s->ends = grow(s, s->ends, &s->rcap, sizeof *s->ends);
    s->ends[s->nrounds++] = s->nops;
    if (s->nrounds > 255)
        mpi_fatal(s->x.call, "a schedule of more than 255 rounds");
}

void mpi_nbc_hold(struct nbc *s, MPI_Datatype t)
{
    for (int i = 0; i < 3; i++)
        if (!s->held[i]) {
            if (mpi_type_hold(t))
                s->held[i] = t;
            return;
        }
}

/* A typed copy of count elements of t (holes left alone). */
static void typed_copy(const struct cx *x, const void *from, void *to, long count,
                       MPI_Datatype th)
{
    struct mtype *t = mpi_type_get(th);
    if (!count || !t->size || from == to)
        return;
    if (mpi_contig(t)) {
        memmove(to, from, (size_t)(count * t->size));
        return;
    }
    void *p = xmalloc(x, count * t->size);
    mpi_pack(from, count, t, p);
    mpi_unpack(p, count, t, to);
    free(p);
}

static void start_round(struct nbc *s)
{
    int from = s->round ? s->ends[s->round - 1] : 0, to = s->ends[s->round];
    s->nreqs = 0;
    s->reqs = realloc(s->reqs, sizeof *s->reqs * (size_t)(to - from + 1));
    if (!s->reqs)
        mpi_fatal(s->x.call, "no memory for a schedule");
    /* Receives first: a message to oneself finds its receive posted. */
    for (int i = from; i < to; i++)
        if (s->ops[i].kind == S_RECV)
            s->reqs[s->nreqs++] = crecv(&s->x, s->ops[i].peer, s->ops[i].tag, s->ops[i].buf,
                                        s->ops[i].len);
    for (int i = from; i < to; i++)
        if (s->ops[i].kind == S_SEND)
            s->reqs[s->nreqs++] = csend(&s->x, s->ops[i].peer, s->ops[i].tag, s->ops[i].buf,
                                        s->ops[i].len);
}

static void local_steps(struct nbc *s)
{
    int from = s->round ? s->ends[s->round - 1] : 0, to = s->ends[s->round];
    for (int i = from; i < to; i++) {
        struct sop *o = &s->ops[i];
        if (o->kind == S_REDUCE)
            mpi_op_apply(s->x.call, s->x.h, o->op, o->src, o->buf, o->len, o->type);
        else if (o->kind == S_TCOPY)
            typed_copy(&s->x, o->src, o->buf, o->len, o->type);
        else if (o->kind == S_UNPACK && o->len)
            mpi_unpack(o->src, o->len, mpi_type_get(o->type), o->buf);
    }
}

/* Step s as far as it goes without waiting; true once it is done.  The
 * engine calls it makes run the progress hook: that steps nothing while a
 * step is under way (it would change the round under this one). */
static bool stepping;

static bool step_one(struct nbc *s)
{
    while (s->round < s->nrounds) {
        for (int i = 0; i < s->nreqs; i++)
            if (!s->reqs[i]->done && !msg_test(s->reqs[i]))
                return false;
        for (int i = 0; i < s->nreqs; i++)
            cwait(&s->x, s->reqs[i]);   /* done: checks the length, frees */
        s->nreqs = 0;
        local_steps(s);
        if (++s->round < s->nrounds)
            start_round(s);
    }
    return true;
}

static bool step(struct nbc *s)
{
    if (stepping)
        return s->round >= s->nrounds;
    stepping = true;
    bool done = step_one(s);
    stepping = false;
    return done;
}

static void nbc_free(struct nbc *s)
{
    for (int i = 0; i < s->nmem; i++)
        free(s->mem[i]);
    for (int i = 0; i < 3; i++)
        if (s->held[i])
            mpi_type_drop(s->held[i]);
    free(s->mem);
    free(s->ops);
    free(s->ends);
    free(s->reqs);
    free(s);
}

/* The engine's hook: every active schedule a step further. */
static void step_all(void)
{
    if (stepping)
        return;
    stepping = true;
    for (struct nbc *s = active; s; s = s->next)
        if (s->round < s->nrounds)
            step_one(s);
    stepping = false;
}

/* Start s and give the program its request. */
int mpi_nbc_launch(struct nbc *s, MPI_Request *request)
{
    static bool hooked;
    if (!hooked) {
        mpi_progress_add(step_all);
        hooked = true;
    }
    struct mreq *r = mpi_req_new(s->x.call, s->x.h);
    if (!r) {
        nbc_free(s);
        return MPI_ERR_INTERN;
    }
    r->kind = R_COLL;
    r->active = true;
    r->nbc = s;
    s->req = r;
    s->next = active;
    active = s;
    /* A send may wait for a free send slot, and the engine runs the hook
     * while it waits: nothing is stepped until the round is all posted (a
     * half-posted round would be taken for done, or its unset requests
     * read). */
    if (s->nrounds) {
        bool was = stepping;
        stepping = true;
        start_round(s);
        stepping = was;
    }
    *request = mpi_req_handle(r);
    return MPI_SUCCESS;
}

bool mpi_nbc_test(struct mreq *r)
{
    return step(r->nbc);
}

void mpi_nbc_wait(struct mreq *r)
{
    while (!step(r->nbc))
        msg_progress(true);
}

void mpi_nbc_release(struct mreq *r)
{
    for (struct nbc **p = &active; *p; p = &(*p)->next)
        if (*p == r->nbc) {
            *p = r->nbc->next;
            break;
        }
    nbc_free(r->nbc);
    r->nbc = NULL;
}

/* ---- the calls ---- */

static int begin_nb(struct cx *x, const char *call, MPI_Comm comm, MPI_Request *request)
{
    if (request)
        *request = MPI_REQUEST_NULL;
    return begin(x, call, comm);
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    if (mpi_is_inter(comm))
        return mpi_inter_ibarrier(comm, request);
    struct cx x;
    TRY(begin_nb(&x, "MPI_Ibarrier", comm, request));
    struct nbc *s = mpi_nbc_new(&x);
    for (int d = 1, k = 0; d < x.n; d <<= 1, k++) {
        mpi_nbc_send(s, T_BARRIER + k, (x.me + d) % x.n, NULL, 0);
        mpi_nbc_recv(s, T_BARRIER + k, (x.me - d + x.n) % x.n, NULL, 0);
        mpi_nbc_end_round(s);
    }
    return mpi_nbc_launch(s, request);
}

/* Binomial broadcast of len bytes at p from root (relative ranks): a
 * round to receive from the parent, then one to send to the children. */
static void bcast_rounds(struct nbc *s, void *p, long len, int root)
{
    int n = s->x.n, vr = (s->x.me - root + n) % n, mask = 1;
    while (mask < n) {
        if (vr & mask) {
            mpi_nbc_recv(s, T_BCAST, (vr - mask + root) % n, p, len);
            mpi_nbc_end_round(s);
            break;
        }
        mask <<= 1;
    }
    bool any = false;
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < n) {
            mpi_nbc_send(s, T_BCAST, (vr + mask + root) % n, p, len);
            any = true;
        }
    if (any)
        mpi_nbc_end_round(s);
}

int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
               MPI_Request *request)
{
    if (mpi_is_inter(comm))
        return mpi_inter_ibcast(buffer, count, datatype, root, comm, request);
    struct cx x;
    TRY(begin_nb(&x, "MPI_Ibcast", comm, request));
    struct mtype *t;
    TRY(check_data(&x, buffer, count, datatype, &t));
    TRY(check_root(&x, root));
    struct nbc *s = mpi_nbc_new(&x);
    long len = (long)count * t->size;
    if (x.n > 1 && len) {
        bool contig = mpi_contig(t);
        void *p = contig ? buffer : mpi_nbc_alloc(s, len);
        if (!contig && x.me == root)
            mpi_pack(buffer, count, t, p);
        bcast_rounds(s, p, len, root);
        if (!contig && x.me != root) {
            mpi_nbc_hold(s, datatype);
            mpi_nbc_unpack(s, p, buffer, count, datatype);
            if (!s->nrounds || s->ends[s->nrounds - 1] != s->nops)
                mpi_nbc_end_round(s);
        }
    }
    return mpi_nbc_launch(s, request);
}

/* Room for count elements of t laid out in memory: base points where
 * element 0's offset 0 would be. */
void *mpi_nbc_typed_room(struct nbc *s, const struct mtype *t, long count)
{
    long span = mpi_span(t, count);
    return (char *)mpi_nbc_alloc(s, span > 0 ? span : 1) - t->true_lb;
}

/* The reduction of every rank's acc (typed, count elements) at rank 0,
 * in rank order: a binomial tree over absolute ranks. */
static void reduce_rounds(struct nbc *s, void *acc, long count, MPI_Datatype dt, MPI_Op op)
{
    struct mtype *t = mpi_type_get(dt);
    long span = mpi_span(t, count);
    void *tmp = mpi_nbc_typed_room(s, t, count);
    char *accb = (char *)acc + t->true_lb, *tmpb = (char *)tmp + t->true_lb;
    for (int mask = 1; mask < s->x.n; mask <<= 1) {
        if (s->x.me & mask) {
            mpi_nbc_send(s, T_REDUCE, s->x.me - mask, accb, span);
            mpi_nbc_end_round(s);
            break;
        }
        if (s->x.me + mask < s->x.n) {
            /* acc holds ranks [me, me+mask), the child [me+mask, ...): acc op child */
            mpi_nbc_recv(s, T_REDUCE, s->x.me + mask, tmpb, span);
            mpi_nbc_reduce(s, acc, tmp, count, dt, op);
            mpi_nbc_tcopy(s, tmp, acc, count, dt);
            mpi_nbc_end_round(s);
        }
    }
}

static int check_reduce(struct cx *x, const void *sendbuf, void *recvbuf, int count,
                        MPI_Datatype datatype, MPI_Op op, bool at_me)
{
    struct mtype *t;
    TRY(check_data(x, sendbuf, count, datatype, &t));
    if (at_me)
        TRY(check_data(x, recvbuf, count, datatype, &t));
    return mpi_check_op(x->call, x->h, op, datatype);
}

/* A schedule's accumulator holding this rank's contribution. */
void *mpi_nbc_contribution(struct nbc *s, const void *sendbuf, const void *recvbuf, int count,
                          MPI_Datatype dt)
{
    void *acc = mpi_nbc_typed_room(s, mpi_type_get(dt), count);
    typed_copy(&s->x, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, acc, count, dt);
    return acc;
}

int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                MPI_Op op, int root, MPI_Comm comm, MPI_Request *request)
{
    if (mpi_is_inter(comm))
        return mpi_inter_ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, request);
    struct cx x;
    TRY(begin_nb(&x, "MPI_Ireduce", comm, request));
    TRY(check_root(&x, root));
    TRY(check_reduce(&x, sendbuf, recvbuf, count, datatype, op, x.me == root));
    struct nbc *s = mpi_nbc_new(&x);
    mpi_nbc_hold(s, datatype);
    void *acc = mpi_nbc_contribution(s, sendbuf, recvbuf, count, datatype);
    reduce_rounds(s, acc, count, datatype, op);
    struct mtype *t = mpi_type_get(datatype);
    long span = mpi_span(t, count);
    if (root != 0 && (x.me == 0 || x.me == root)) {
        if (x.me == 0)
            mpi_nbc_send(s, T_TO_ROOT, root, (char *)acc + t->true_lb, span);
        else
            mpi_nbc_recv(s, T_TO_ROOT, 0, (char *)acc + t->true_lb, span);
        mpi_nbc_end_round(s);
    }
    if (x.me == root) {
        mpi_nbc_tcopy(s, acc, recvbuf, count, datatype);
        mpi_nbc_end_round(s);
    }
    return mpi_nbc_launch(s, request);
}

int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    if (mpi_is_inter(comm))
        return mpi_inter_iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request);
    struct cx x;
    TRY(begin_nb(&x, "MPI_Iallreduce", comm, request));
    TRY(check_reduce(&x, sendbuf, recvbuf, count, datatype, op, true));
    struct nbc *s = mpi_nbc_new(&x);
    mpi_nbc_hold(s, datatype);
    void *acc = mpi_nbc_contribution(s, sendbuf, recvbuf, count, datatype);
    reduce_rounds(s, acc, count, datatype, op);
    struct mtype *t = mpi_type_get(datatype);
    bcast_rounds(s, (char *)acc + t->true_lb, mpi_span(t, count), 0);
    mpi_nbc_tcopy(s, acc, recvbuf, count, datatype);
    mpi_nbc_end_round(s);
    return mpi_nbc_launch(s, request);
}

/* Reduce_scatter: the whole reduced at rank 0, which sends each rank its
 * part (counts[i] elements from displ[i]). */
static int reduce_scatter_nb(struct cx *x, const void *sendbuf, void *recvbuf,
                             const int counts[], MPI_Datatype datatype, MPI_Op op,
                             MPI_Request *request)
{
    long total = 0;
    for (int i = 0; i < x->n; i++) {
        if (counts[i] < 0)
            return mpi_error(x->h, MPI_ERR_COUNT, x->call, "count %d of rank %d", counts[i], i);
        total += counts[i];
    }
    if (total > 0x7FFFFFFF)
        return mpi_error(x->h, MPI_ERR_COUNT, x->call, "%ld elements in all", total);
    struct mtype *t;
    TRY(mpi_check_type(x->call, x->h, datatype, &t));
    TRY(mpi_check_op(x->call, x->h, op, datatype));
    struct nbc *s = mpi_nbc_new(x);
    mpi_nbc_hold(s, datatype);
    const void *src = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    void *acc = mpi_nbc_contribution(s, src, recvbuf, (int)total, datatype);
    reduce_rounds(s, acc, total, datatype, op);
    long ext = mpi_extent(t), at = 0;
    void *mine = mpi_nbc_typed_room(s, t, counts[x->me]);
    for (int i = 0; i < x->n; i++) {
        char *part = (char *)acc + at * ext;
        if (x->me == 0 && i != 0 && counts[i])
            mpi_nbc_send(s, T_SCATTER, i, part + t->true_lb, mpi_span(t, counts[i]));
        if (x->me == 0 && i == 0)
            mpi_nbc_tcopy(s, part, mine, counts[i], datatype);
        at += counts[i];
    }
    if (x->me != 0 && counts[x->me])
        mpi_nbc_recv(s, T_SCATTER, 0, (char *)mine + t->true_lb, mpi_span(t, counts[x->me]));
    mpi_nbc_tcopy(s, mine, recvbuf, counts[x->me], datatype);
    mpi_nbc_end_round(s);
    return mpi_nbc_launch(s, request);
}

int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    if (mpi_is_inter(comm))
        return mpi_inter_ireduce_scatter("MPI_Ireduce_scatter", sendbuf, recvbuf, recvcounts, 0,
                                         datatype, op, comm, request);
    struct cx x;
    TRY(begin_nb(&x, "MPI_Ireduce_scatter", comm, request));
    return reduce_scatter_nb(&x, sendbuf, recvbuf, recvcounts, datatype, op, request);
}

int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                              MPI_Request *request)
{
    if (mpi_is_inter(comm))
        return mpi_inter_ireduce_scatter("MPI_Ireduce_scatter_block", sendbuf, recvbuf, NULL,
                                         recvcount, datatype, op, comm, request);
    struct cx x;
    TRY(begin_nb(&x, "MPI_Ireduce_scatter_block", comm, request));
    int *counts = xmalloc(&x, (long)sizeof(int) * x.n);
    for (int i = 0; i < x.n; i++)
        counts[i] = recvcount;
    int rc = reduce_scatter_nb(&x, sendbuf, recvbuf, counts, datatype, op, request);
    free(counts);
    return rc;
}

/* Scans: a chain; rank r takes what ranks 0..r-1 made, adds its own,
 * hands it on. */
static int scan_nb(const char *call, const void *sendbuf, void *recvbuf, int count,
                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request,
                   bool exclusive)
{
    struct cx x;
    TRY(begin_nb(&x, call, comm, request));
    TRY(check_reduce(&x, sendbuf, recvbuf, count, datatype, op, true));
    struct nbc *s = mpi_nbc_new(&x);
    mpi_nbc_hold(s, datatype);
    struct mtype *t = mpi_type_get(datatype);
    long span = mpi_span(t, count);
    void *acc = mpi_nbc_contribution(s, sendbuf, recvbuf, count, datatype);
    if (x.me > 0) {
        void *before = mpi_nbc_typed_room(s, t, count);
        mpi_nbc_recv(s, T_SCAN, x.me - 1, (char *)before + t->true_lb, span);
        if (exclusive)
            mpi_nbc_tcopy(s, before, recvbuf, count, datatype);
        mpi_nbc_reduce(s, before, acc, count, datatype, op);   /* acc = before op mine */
        mpi_nbc_end_round(s);
    }
    if (x.me < x.n - 1) {
        mpi_nbc_send(s, T_SCAN, x.me + 1, (char *)acc + t->true_lb, span);
        mpi_nbc_end_round(s);
    }
    if (!exclusive) {
        mpi_nbc_tcopy(s, acc, recvbuf, count, datatype);
        mpi_nbc_end_round(s);
    }
    return mpi_nbc_launch(s, request);
}

int MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm, MPI_Request *request)
{
    return scan_nb("MPI_Iscan", sendbuf, recvbuf, count, datatype, op, comm, request, false);
}

int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return scan_nb("MPI_Iexscan", sendbuf, recvbuf, count, datatype, op, comm, request, true);
}

/* ---- the v-shaped ones: every other the general all-to-all ---- */

int mpi_nbc_exchange(struct cx *x, const void *sendbuf, struct nbc_side snd, void *recvbuf,
                     struct nbc_side rcv, MPI_Request *request)
{
    /* Listed peers (the neighborhood collectives) may name a rank more
     * than once, themselves too: every entry is a message of its own, in
     * entry order (the engine keeps a pair's messages in order), and none
     * is copied here (which of a rank's entries to itself pairs with which
     * receive is that order's to say). */
    int ns = snd.peers ? snd.n : x->n, nr = rcv.peers ? rcv.n : x->n;
    bool ranks = !snd.peers && !rcv.peers;
    struct nbc *s = mpi_nbc_new(x);
    long *rlen = xmalloc(x, (long)sizeof(long) * nr);
    for (int i = 0; i < nr; i++) {
        struct mtype *rt = rcv.counts && rcv.counts[i] ? mpi_type_get(rcv.types[i]) : NULL;
        rlen[i] = rt ? (long)rcv.counts[i] * rt->size : 0;
    }
    for (int i = 0; i < ns; i++) {
        int peer = snd.peers ? snd.peers[i] : i;
        if (!snd.counts || !snd.counts[i] || peer == MPI_PROC_NULL)
            continue;
        struct mtype *st = mpi_type_get(snd.types[i]);
        long len = (long)snd.counts[i] * st->size;
        const char *from = (const char *)sendbuf + snd.displs[i];
        if (ranks && i == x->me) {
            if (rlen[i] != len)
                mpi_fatal(x->call, "rank %d sends itself %ld bytes but receives %ld", i, len,
                          rlen[i]);
            continue;
        }
        if (!len)
            continue;
        void *p = mpi_nbc_alloc(s, len);
        mpi_pack(from, snd.counts[i], st, p);
        mpi_nbc_send(s, T_ALL, peer, p, len);
    }
    /* Its own part now (its receive buffer is its to write). */
    if (ranks && snd.counts && rcv.counts && snd.counts[x->me] && rlen[x->me]) {
        struct mtype *st = mpi_type_get(snd.types[x->me]);
        void *p = xmalloc(x, rlen[x->me]);
        mpi_pack((const char *)sendbuf + snd.displs[x->me], snd.counts[x->me], st, p);
        mpi_unpack(p, rcv.counts[x->me], mpi_type_get(rcv.types[x->me]),
                   (char *)recvbuf + rcv.displs[x->me]);
        free(p);
    }
    for (int i = 0; i < nr; i++) {
        int peer = rcv.peers ? rcv.peers[i] : i;
        if ((ranks && i == x->me) || peer == MPI_PROC_NULL || !rlen[i])
            continue;
        void *p = mpi_nbc_alloc(s, rlen[i]);
        mpi_nbc_recv(s, T_ALL, peer, p, rlen[i]);
        mpi_nbc_unpack(s, p, (char *)recvbuf + rcv.displs[i], rcv.counts[i], rcv.types[i]);
    }
    free(rlen);
    /* The receive types must outlive the call: hold up to three distinct
     * ones; a w-call with more holds none past three (MPI_Type_free during
     * the operation then is the program's risk, as with MPICH's). */
    for (int i = 0; rcv.counts && i < nr; i++)
        if (rcv.counts[i]) {
            bool have = false;
            for (int k = 0; k < 3; k++)
                have |= s->held[k] == rcv.types[i];
            if (!have)
                mpi_nbc_hold(s, rcv.types[i]);
        }
    if (s->nops)
        mpi_nbc_end_round(s);
    return mpi_nbc_launch(s, request);
}

/* Checks and byte displacements of a v-shaped argument set. */
static int side_of(struct cx *x, const int counts[], const int displs[],
                   const MPI_Datatype types[], MPI_Datatype one_type, long *bd,
                   MPI_Datatype *tv, int count_all, bool bytes)
{
    for (int i = 0; i < x->n; i++) {
        MPI_Datatype th = types ? types[i] : one_type;
        struct mtype *t;
        int c = counts ? counts[i] : count_all;
        TRY(mpi_check_type(x->call, x->h, th, &t));
        TRY(mpi_check_count(x->call, x->h, c));
        tv[i] = th;
        long d = counts ? (displs ? displs[i] : 0) : (long)i * count_all;
        bd[i] = bytes ? d : d * mpi_extent(t);
    }
    return MPI_SUCCESS;
}

static int general(const char *call, const void *sendbuf, const int scounts[],
                   const int sdispls[], const MPI_Datatype stypes[], MPI_Datatype stype,
                   int scount, void *recvbuf, const int rcounts[], const int rdispls[],
                   const MPI_Datatype rtypes[], MPI_Datatype rtype, int rcount, bool bytes,
                   MPI_Comm comm, MPI_Request *request)
{
    struct cx x;
    TRY(begin_nb(&x, call, comm, request));
    long *sd = xmalloc(&x, (long)sizeof(long) * 2 * x.n), *rd = sd + x.n;
    MPI_Datatype *st = xmalloc(&x, (long)sizeof(MPI_Datatype) * 2 * x.n), *rt = st + x.n;
    int *sc = xmalloc(&x, (long)sizeof(int) * 2 * x.n), *rc = sc + x.n;
    int rc_ = side_of(&x, rcounts, rdispls, rtypes, rtype, rd, rt, rcount, bytes);
    bool inplace = sendbuf == MPI_IN_PLACE;
    if (!rc_ && !inplace)
        rc_ = side_of(&x, scounts, sdispls, stypes, stype, sd, st, scount, bytes);
    for (int i = 0; i < x.n; i++) {
        rc[i] = rcounts ? rcounts[i] : rcount;
        sc[i] = inplace ? rc[i] : scounts ? scounts[i] : scount;
        if (inplace) {
            sd[i] = rd[i];
            st[i] = rt[i];
        }
    }
    if (!rc_) {
        /* In place: what goes out is packed from the receive buffer first. */
        const void *from = inplace ? recvbuf : sendbuf;
        struct nbc_side snd = {.counts = sc, .displs = sd, .types = st};
        struct nbc_side rcv = {.counts = rc, .displs = rd, .types = rt};
        rc_ = mpi_nbc_exchange(&x, from, snd, recvbuf, rcv, request);
    }
    free(sd);
    free(st);
    free(sc);
    return rc_;
}

int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    if (mpi_is_inter(comm))
        return mpi_inter_ialltoall("MPI_Ialltoall", sendbuf, NULL, NULL, NULL, sendcount, sendtype,
                                   recvbuf, NULL, NULL, NULL, recvcount, recvtype, comm, request);
    return general("MPI_Ialltoall", sendbuf, NULL, NULL, NULL, sendtype, sendcount, recvbuf,
                   NULL, NULL, NULL, recvtype, recvcount, false, comm, request);
}

int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request *request)
{
    if (mpi_is_inter(comm))
        return mpi_inter_ialltoall("MPI_Ialltoallv", sendbuf, sendcounts, sdispls, NULL, 0,
                                   sendtype, recvbuf, recvcounts, rdispls, NULL, 0, recvtype, comm,
                                   request);
    return general("MPI_Ialltoallv", sendbuf, sendcounts, sdispls, NULL, sendtype, 0, recvbuf,
                   recvcounts, rdispls, NULL, recvtype, 0, false, comm, request);
}

int MPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                   MPI_Request *request)
{
    if (mpi_is_inter(comm))
        return mpi_inter_ialltoall("MPI_Ialltoallw", sendbuf, sendcounts, sdispls, sendtypes, 0,
                                   MPI_DATATYPE_NULL, recvbuf, recvcounts, rdispls, recvtypes, 0,
                                   MPI_DATATYPE_NULL, comm, request);
    return general("MPI_Ialltoallw", sendbuf, sendcounts, sdispls, sendtypes, 0, 0, recvbuf,
                   recvcounts, rdispls, recvtypes, 0, 0, true, comm, request);
}

int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                  const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    if (mpi_is_inter(comm))
        return mpi_inter_alltoallw("MPI_Alltoallw", sendbuf, sendcounts, sdispls, sendtypes, 0,
                                   recvbuf, recvcounts, rdispls, recvtypes, 0, comm);
    MPI_Request r;
    TRY(general("MPI_Alltoallw", sendbuf, sendcounts, sdispls, sendtypes, 0, 0, recvbuf,
                recvcounts, rdispls, recvtypes, 0, 0, true, comm, &r));
    return MPI_Wait(&r, MPI_STATUS_IGNORE);
}

/* Gathers and scatters: the all-to-all with only the root's side. */
static int rooted(const char *call, bool gather, const void *sendbuf, const int *scounts,
                  const int *sdispls, int scount, MPI_Datatype stype, void *recvbuf,
                  const int *rcounts, const int *rdispls, int rcount, MPI_Datatype rtype,
                  int root, bool all, MPI_Comm comm, MPI_Request *request)
{
    struct cx x;
    TRY(begin_nb(&x, call, comm, request));
    if (!all)
        TRY(check_root(&x, root));
    int n = x.n;
    int *sc = xmalloc(&x, (long)sizeof(int) * 2 * n), *rc = sc + n;
    long *sd = xmalloc(&x, (long)sizeof(long) * 2 * n), *rd = sd + n;
    MPI_Datatype *st = xmalloc(&x, (long)sizeof(MPI_Datatype) * 2 * n), *rt = st + n;
    struct mtype *stt = NULL, *rtt = NULL;
    bool root_here = all || x.me == root;
    bool inplace = root_here && (gather ? sendbuf == MPI_IN_PLACE : recvbuf == MPI_IN_PLACE);
    int rcode = MPI_SUCCESS;
    /* Who sends: gathers every rank (one block), scatters the root (n). */
    if (gather ? !inplace : root_here)
        rcode = mpi_check_type(call, comm, stype, &stt);
    if (!rcode && (gather ? root_here : !inplace))
        rcode = mpi_check_type(call, comm, rtype, &rtt);
    for (int i = 0; !rcode && i < n; i++) {
        sc[i] = rc[i] = 0;
        sd[i] = rd[i] = 0;
        st[i] = stype;
        rt[i] = rtype;
    }
    const void *from = sendbuf;
    if (!rcode && gather) {
        for (int i = 0; root_here && i < n; i++) {
            rc[i] = rcounts ? rcounts[i] : rcount;
            rd[i] = (rdispls ? rdispls[i] : (long)i * rcount) * mpi_extent(rtt);
        }
        /* Each rank's block goes to the root, or to every rank; in place,
         * an allgather's block is where the rank's own receive put it. */
        for (int i = 0; i < n; i++)
            if (all || i == root) {
                if (!inplace) {
                    sc[i] = scount;
                } else if (all) {
                    sc[i] = rc[x.me];
                    sd[i] = rd[x.me];
                    st[i] = rtype;
                    from = recvbuf;
                }
            }
    } else if (!rcode) {
        for (int i = 0; root_here && i < n; i++) {
            sc[i] = scounts ? scounts[i] : scount;
            sd[i] = (sdispls ? sdispls[i] : (long)i * scount) * mpi_extent(stt);
        }
        rc[root] = inplace ? 0 : rcount;
    }
    if (!rcode && inplace)
        sc[x.me] = rc[x.me] = 0;   /* the root's own block stays where it is */
    if (!rcode) {
        struct nbc_side snd = {.counts = sc, .displs = sd, .types = st};
        struct nbc_side rcv = {.counts = rc, .displs = rd, .types = rt};
        rcode = mpi_nbc_exchange(&x, from, snd, recvbuf, rcv, request);
    }
    free(sc);
    free(sd);
    free(st);
    return rcode;
}

int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                MPI_Request *request)
{
    if (mpi_is_inter(comm))
        return mpi_inter_igather(sendbuf, sendcount, sendtype, recvbuf, NULL, NULL, recvcount,
                                 recvtype, root, comm, request);
    return rooted("MPI_Igather", true, sendbuf, NULL, NULL, sendcount, sendtype, recvbuf, NULL,
                  NULL, recvcount, recvtype, root, false, comm, request);
}

int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Request *request)
{
    if (mpi_is_inter(comm))
        return mpi_inter_igather(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, 0,
                                 recvtype, root, comm, request);
    return rooted("MPI_Igatherv", true, sendbuf, NULL, NULL, sendcount, sendtype, recvbuf,
                  recvcounts, displs, 0, recvtype, root, false, comm, request);
}

int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request *request)
{
    if (mpi_is_inter(comm))
        return mpi_inter_iscatter(sendbuf, NULL, NULL, sendcount, sendtype, recvbuf, recvcount,
                                  recvtype, root, comm, request);
    return rooted("MPI_Iscatter", false, sendbuf, NULL, NULL, sendcount, sendtype, recvbuf,
                  NULL, NULL, recvcount, recvtype, root, false, comm, request);
}

int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Request *request)
{
    if (mpi_is_inter(comm))
        return mpi_inter_iscatter(sendbuf, sendcounts, displs, 0, sendtype, recvbuf, recvcount,
                                  recvtype, root, comm, request);
    return rooted("MPI_Iscatterv", false, sendbuf, sendcounts, displs, 0, sendtype, recvbuf,
                  NULL, NULL, recvcount, recvtype, root, false, comm, request);
}

int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    if (mpi_is_inter(comm))
        return mpi_inter_iallgather(sendbuf, sendcount, sendtype, recvbuf, NULL, NULL, recvcount,
                                    recvtype, comm, request);
    return rooted("MPI_Iallgather", true, sendbuf, NULL, NULL, sendcount, sendtype, recvbuf,
                  NULL, NULL, recvcount, recvtype, 0, true, comm, request);
}

int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request *request)
{
    if (mpi_is_inter(comm))
        return mpi_inter_iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, 0,
                                    recvtype, comm, request);
    return rooted("MPI_Iallgatherv", true, sendbuf, NULL, NULL, sendcount, sendtype, recvbuf,
                  recvcounts, displs, 0, recvtype, 0, true, comm, request);
}
