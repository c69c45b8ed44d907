/*
 * Nonblocking collectives on intercommunicators (MPI-3.1 5.12 with 5.2.2):
 * schedules of mpi_nbc.c whose messages all cross between the groups (a
 * schedule's peers on an intercommunicator are the remote group's ranks).
 *
 * Shapes are direct: every block goes straight from the rank that has it
 * to each rank that wants it, and a reduction's contributions straight to
 * each rank that reduces them, in the remote group's rank order.  That is
 * O(local x remote) messages for Ibarrier, Iallreduce, Iallgather and the
 * all-to-alls, and Ireduce_scatter sends every rank the whole vectors (the
 * counts that split them are the other group's to know); correct for any
 * op, simple, and not the fastest.  The blocking ones (mpi_intercoll.c)
 * go through the groups' leaders instead.
 *
 * A root argument: MPI_ROOT at the root, MPI_PROC_NULL at the rest of its
 * group (no part), the root's rank in the other group.
 */
#include <stdlib.h>

#include "mpi_coll.h"

static int begin_inb(struct cx *x, const char *call, MPI_Comm comm, MPI_Request *request)
{
    *request = MPI_REQUEST_NULL;
    x->call = call;
    x->h = comm;
    TRY(mpi_check_comm(call, comm, &x->c));
    x->seq = ++x->c->coll_seq;
    x->n = x->c->rsize; /* a schedule's peers: the remote group */
    x->me = x->c->rank;
    return MPI_SUCCESS;
}

static int check_iroot(const struct cx *x, int root)
{
    if (root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < x->c->rsize))
        return MPI_SUCCESS;
    return mpi_error(x->h, MPI_ERR_ROOT, x->call,
                     "root %d is not MPI_ROOT, MPI_PROC_NULL or in 0..%d of the remote group",
                     root, x->c->rsize - 1);
}

static int no_in_place(const struct cx *x, const void *a, const void *b)
{
    if (a != MPI_IN_PLACE && b != MPI_IN_PLACE)
        return MPI_SUCCESS;
    return mpi_error(x->h, MPI_ERR_BUFFER, x->call, "MPI_IN_PLACE on an intercommunicator");
}

int mpi_inter_ibarrier(MPI_Comm comm, MPI_Request *request)
{
    struct cx x;
    TRY(begin_inb(&x, "MPI_Ibarrier", comm, request));
    /* Done once every remote rank has come: a word from each. */
    struct nbc *s = mpi_nbc_new(&x);
    for (int j = 0; j < x.n; j++) {
        mpi_nbc_send(s, T_BARRIER, j, NULL, 0);
        mpi_nbc_recv(s, T_BARRIER, j, NULL, 0);
    }
    mpi_nbc_end_round(s);
    return mpi_nbc_launch(s, request);
}

int mpi_inter_ibcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
                     MPI_Request *request)
{
    struct cx x;
    TRY(begin_inb(&x, "MPI_Ibcast", comm, request));
    TRY(check_iroot(&x, root));
    struct nbc *s = mpi_nbc_new(&x);
    struct mtype *t;
    if (root != MPI_PROC_NULL)
        TRY(check_data(&x, buf, count, type, &t));
    long len = root == MPI_PROC_NULL ? 0 : (long)count * t->size;
    if (len && root == MPI_ROOT) {
        void *p = mpi_nbc_alloc(s, len);
        mpi_pack(buf, count, t, p);
        for (int j = 0; j < x.n; j++)
            mpi_nbc_send(s, T_BCAST, j, p, len);
        mpi_nbc_end_round(s);
    } else if (len) {
        void *p = mpi_nbc_alloc(s, len);
        mpi_nbc_recv(s, T_BCAST, root, p, len);
        mpi_nbc_hold(s, type);
        mpi_nbc_unpack(s, p, buf, count, type);
        mpi_nbc_end_round(s);
    }
    return mpi_nbc_launch(s, request);
}

/* Reductions: each rank that reduces receives every remote rank's
 * contribution (typed, count elements) and combines them in the remote
 * ranks' order: the last is the accumulator, in = each before it. */
static void reduce_remote(struct nbc *s, int m, void *recvbuf, int count, MPI_Datatype dt,
                          MPI_Op op)
{
    struct mtype *t = mpi_type_get(dt);
    long span = mpi_span(t, count);
    void **in = mpi_nbc_alloc(s, (long)sizeof(void *) * m);
    for (int j = 0; j < m; j++) {
        in[j] = mpi_nbc_typed_room(s, t, count);
        mpi_nbc_recv(s, T_REDUCE, j, (char *)in[j] + t->true_lb, span);
    }
    for (int j = m - 2; j >= 0; j--)
        mpi_nbc_reduce(s, in[j], in[m - 1], count, dt, op);
    mpi_nbc_tcopy(s, in[m - 1], recvbuf, count, dt);
}

static int check_reduction(struct cx *x, const void *sendbuf, void *recvbuf, int count,
                           MPI_Datatype dt, MPI_Op op, bool sends, bool receives)
{
    struct mtype *t;
    TRY(no_in_place(x, sendbuf, recvbuf));
    if (sends)
        TRY(check_data(x, sendbuf, count, dt, &t));
    if (receives)
        TRY(check_data(x, recvbuf, count, dt, &t));
    return mpi_check_op(x->call, x->h, op, dt);
}

int mpi_inter_ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                      MPI_Op op, int root, MPI_Comm comm, MPI_Request *request)
{
    struct cx x;
    TRY(begin_inb(&x, "MPI_Ireduce", comm, request));
    TRY(check_iroot(&x, root));
    struct nbc *s = mpi_nbc_new(&x);
    if (root == MPI_PROC_NULL)
        return mpi_nbc_launch(s, request);
    TRY(check_reduction(&x, sendbuf, recvbuf, count, dt, op, root != MPI_ROOT,
                        root == MPI_ROOT));
    mpi_nbc_hold(s, dt);
    if (count && root == MPI_ROOT) {
        reduce_remote(s, x.n, recvbuf, count, dt, op);
        mpi_nbc_end_round(s);
    } else if (count) {
        struct mtype *t = mpi_type_get(dt);
        void *mine = mpi_nbc_contribution(s, sendbuf, NULL, count, dt);
        mpi_nbc_send(s, T_REDUCE, root, (char *)mine + t->true_lb, mpi_span(t, count));
        mpi_nbc_end_round(s);
    }
    return mpi_nbc_launch(s, request);
}

static int iallreduce(struct cx *x, const void *sendbuf, void *recvbuf, int count,
                      MPI_Datatype dt, MPI_Op op, MPI_Request *request);

int mpi_inter_iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                         MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    struct cx x;
    TRY(begin_inb(&x, "MPI_Iallreduce", comm, request));
    return iallreduce(&x, sendbuf, recvbuf, count, dt, op, request);
}

int mpi_inter_iallreduce_at(const char *call, MPI_Comm comm, uint32_t seq,
                            const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                            MPI_Op op, MPI_Request *request)
{
    struct cx x;
    TRY(begin_inb(&x, call, comm, request));
    x.c->coll_seq--; /* not one of the communicator's own */
    x.seq = seq;
    return iallreduce(&x, sendbuf, recvbuf, count, dt, op, request);
}

static int iallreduce(struct cx *x_, const void *sendbuf, void *recvbuf, int count,
                      MPI_Datatype dt, MPI_Op op, MPI_Request *request)
{
    struct cx x = *x_;
    TRY(check_reduction(&x, sendbuf, recvbuf, count, dt, op, true, true));
    struct nbc *s = mpi_nbc_new(&x);
    mpi_nbc_hold(s, dt);
    if (count) {
        struct mtype *t = mpi_type_get(dt);
        void *mine = mpi_nbc_contribution(s, sendbuf, NULL, count, dt);
        for (int j = 0; j < x.n; j++)
            mpi_nbc_send(s, T_REDUCE, j, (char *)mine + t->true_lb, mpi_span(t, count));
        reduce_remote(s, x.n, recvbuf, count, dt, op);
        mpi_nbc_end_round(s);
    }
    return mpi_nbc_launch(s, request);
}

/* counts: the local group's (NULL: count each); the vectors are their sum. */
int mpi_inter_ireduce_scatter(const char *call, const void *sendbuf, void *recvbuf,
                              const int counts[], int count, MPI_Datatype dt, MPI_Op op,
                              MPI_Comm comm, MPI_Request *request)
{
    struct cx x;
    TRY(begin_inb(&x, call, comm, request));
    long n = 0, at = 0;
    for (int i = 0; i < x.c->size; i++) {
        int c = counts ? counts[i] : count;
        if (c < 0)
            return mpi_error(comm, MPI_ERR_COUNT, call, "count %d of rank %d", c, i);
        if (i == x.me)
            at = n;
        n += c;
    }
    if (n > 0x7FFFFFFF)
        return mpi_error(comm, MPI_ERR_COUNT, call, "%ld elements in all", n);
    int mine = counts ? counts[x.me] : count;
    TRY(check_reduction(&x, sendbuf, recvbuf, (int)n, dt, op, true, false));
    struct mtype *t;
    TRY(check_data(&x, recvbuf, mine, dt, &t));
    struct nbc *s = mpi_nbc_new(&x);
    mpi_nbc_hold(s, dt);
    if (n) {
        void *all = mpi_nbc_contribution(s, sendbuf, NULL, (int)n, dt);
        for (int j = 0; j < x.n; j++)
            mpi_nbc_send(s, T_REDUCE, j, (char *)all + t->true_lb, mpi_span(t, n));
        /* The whole reduction in a room of its own, then this rank's part. */
        void *res = mpi_nbc_typed_room(s, t, n);
        reduce_remote(s, x.n, res, (int)n, dt, op);
        mpi_nbc_tcopy(s, (char *)res + at * mpi_extent(t), recvbuf, mine, dt);
        mpi_nbc_end_round(s);
    }
    return mpi_nbc_launch(s, request);
}

/* ---- the data movers: the general exchange with remote peer lists ---- */

struct side {
    int *counts, *peers;
    long *displs;
    MPI_Datatype *types;
    int n;
};

static int side_new(const struct cx *x, struct side *sd, int n)
{
    sd->n = n;
    sd->counts = calloc((size_t)n + 1, sizeof(int));
    sd->peers = calloc((size_t)n + 1, sizeof(int));
    sd->displs = calloc((size_t)n + 1, sizeof(long));
    sd->types = calloc((size_t)n + 1, sizeof(MPI_Datatype));
    if (!sd->counts || !sd->peers || !sd->displs || !sd->types)
        return mpi_error(x->h, MPI_ERR_NO_MEM, x->call, "no memory");
    return MPI_SUCCESS;
}

static void side_free(struct side *sd)
{
    free(sd->counts);
    free(sd->peers);
    free(sd->displs);
    free(sd->types);
}

/* Entry i: count elements of type to/from peer at byte displacement d. */
static int entry(const struct cx *x, struct side *sd, int i, int peer, int count,
                 MPI_Datatype type, long d)
{
    struct mtype *t;
    TRY(mpi_check_type(x->call, x->h, type, &t));
    TRY(mpi_check_count(x->call, x->h, count));
    sd->peers[i] = peer;
    sd->counts[i] = count;
    sd->types[i] = type;
    sd->displs[i] = d;
    return MPI_SUCCESS;
}

static long extent_of(MPI_Datatype type)
{
    struct mtype *t = mpi_type_get(type);
    return t ? mpi_extent(t) : 0;
}

/* One movement of blocks: what this rank sends (counts/displs/types per
 * remote rank, or one block to every remote rank, or none) and receives. */
struct move {
    const void *sbuf;
    const int *scounts, *sdispls;
    const MPI_Datatype *stypes;
    int scount;
    MPI_Datatype stype;
    enum { NONE, ONE, EACH, TO_ROOT } sto;
    void *rbuf;
    const int *rcounts, *rdispls;
    const MPI_Datatype *rtypes;
    int rcount;
    MPI_Datatype rtype;
    enum { RNONE, REACH, FROM_ROOT } rfrom;
    int root;
    bool bytes; /* w-calls: displacements in bytes */
};

static int run_move(const char *call, MPI_Comm comm, const struct move *mv,
                    MPI_Request *request)
{
    struct cx x;
    TRY(begin_inb(&x, call, comm, request));
    TRY(no_in_place(&x, mv->sbuf, mv->rbuf));
    struct side snd = {0}, rcv = {0};
    int m = x.n;
    int rc = side_new(&x, &snd, mv->sto == NONE ? 0 : mv->sto == TO_ROOT ? 1 : m);
    if (!rc)
        rc = side_new(&x, &rcv, mv->rfrom == RNONE ? 0 : mv->rfrom == FROM_ROOT ? 1 : m);
    for (int j = 0; !rc && j < snd.n; j++) {
        if (mv->sto == ONE || mv->sto == TO_ROOT) {
            rc = entry(&x, &snd, j, mv->sto == TO_ROOT ? mv->root : j, mv->scount, mv->stype, 0);
        } else {
            MPI_Datatype ty = mv->stypes ? mv->stypes[j] : mv->stype;
            int c = mv->scounts ? mv->scounts[j] : mv->scount;
            long d = mv->scounts ? (mv->sdispls ? mv->sdispls[j] : 0) : (long)j * mv->scount;
            rc = entry(&x, &snd, j, j, c, ty, mv->bytes ? d : d * extent_of(ty));
        }
    }
    for (int j = 0; !rc && j < rcv.n; j++) {
        if (mv->rfrom == FROM_ROOT) {
            rc = entry(&x, &rcv, j, mv->root, mv->rcount, mv->rtype, 0);
        } else {
            MPI_Datatype ty = mv->rtypes ? mv->rtypes[j] : mv->rtype;
            int c = mv->rcounts ? mv->rcounts[j] : mv->rcount;
            long d = mv->rcounts ? (mv->rdispls ? mv->rdispls[j] : 0) : (long)j * mv->rcount;
            rc = entry(&x, &rcv, j, j, c, ty, mv->bytes ? d : d * extent_of(ty));
        }
    }
    if (!rc) {
        struct nbc_side s = {.counts = snd.counts, .displs = snd.displs, .types = snd.types,
                             .peers = snd.peers, .n = snd.n};
        struct nbc_side r = {.counts = rcv.counts, .displs = rcv.displs, .types = rcv.types,
                             .peers = rcv.peers, .n = rcv.n};
        rc = mpi_nbc_exchange(&x, mv->sbuf, s, mv->rbuf, r, request);
    }
    side_free(&snd);
    side_free(&rcv);
    return rc;
}

static int rooted(const char *call, bool gather, struct move mv, int root, MPI_Comm comm,
                  MPI_Request *request)
{
    struct cx x;
    *request = MPI_REQUEST_NULL;
    TRY(mpi_check_comm(call, comm, &x.c));
    x.h = comm;
    x.call = call;
    TRY(check_iroot(&x, root));
    mv.root = root;
    if (gather) {
        mv.sto = root >= 0 ? TO_ROOT : NONE;
        mv.rfrom = root == MPI_ROOT ? REACH : RNONE;
    } else {
        mv.sto = root == MPI_ROOT ? EACH : NONE;
        mv.rfrom = root >= 0 ? FROM_ROOT : RNONE;
    }
    /* The side a rank does not use may hold anything (MPI ignores it). */
    if (mv.sto == NONE)
        mv.sbuf = NULL;
    if (mv.rfrom == RNONE)
        mv.rbuf = NULL;
    return run_move(call, comm, &mv, request);
}

int mpi_inter_igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      const int recvcounts[], const int displs[], int recvcount,
                      MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    struct move mv = {.sbuf = sendbuf, .scount = sendcount, .stype = sendtype, .rbuf = recvbuf,
                      .rcounts = recvcounts, .rdispls = displs, .rcount = recvcount,
                      .rtype = recvtype};
    return rooted(recvcounts ? "MPI_Igatherv" : "MPI_Igather", true, mv, root, comm, request);
}

int mpi_inter_iscatter(const void *sendbuf, const int sendcounts[], const int displs[],
                       int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    struct move mv = {.sbuf = sendbuf, .scounts = sendcounts, .sdispls = displs,
                      .scount = sendcount, .stype = sendtype, .rbuf = recvbuf,
                      .rcount = recvcount, .rtype = recvtype};
    return rooted(sendcounts ? "MPI_Iscatterv" : "MPI_Iscatter", false, mv, root, comm,
                  request);
}

int mpi_inter_iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                         void *recvbuf, const int recvcounts[], const int displs[],
                         int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                         MPI_Request *request)
{
    struct move mv = {.sbuf = sendbuf, .scount = sendcount, .stype = sendtype, .sto = ONE,
                      .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = displs,
                      .rcount = recvcount, .rtype = recvtype, .rfrom = REACH};
    return run_move(recvcounts ? "MPI_Iallgatherv" : "MPI_Iallgather", comm, &mv, request);
}

int mpi_inter_ialltoall(const char *call, const void *sendbuf, const int sendcounts[],
                        const int sdispls[], const MPI_Datatype sendtypes[], int sendcount,
                        MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                        const int rdispls[], const MPI_Datatype recvtypes[], int recvcount,
                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    struct move mv = {.sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls,
                      .stypes = sendtypes, .scount = sendcount, .stype = sendtype, .sto = EACH,
                      .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = rdispls,
                      .rtypes = recvtypes, .rcount = recvcount, .rtype = recvtype,
                      .rfrom = REACH, .bytes = sendtypes != NULL};
    return run_move(call, comm, &mv, request);
}
