/*
 * Collective operations on intercommunicators (MPI-3.1 5.2.2): data goes
 * from one group to the other.  Each is built of collectives on the
 * groups' own intracommunicators (struct mcomm's local) and messages
 * between the groups on the intercommunicator's collective context: a
 * group gathers or reduces to its rank 0, the two rank 0s (or a root and
 * the other group's rank 0) trade, and the receiving group spreads what
 * came.  The v-shaped ones (Gatherv, Scatterv, Allgatherv, Alltoallv/w),
 * whose counts only the receiving or sending side knows, send each block
 * straight between its two ranks.  Data crosses packed, so the two sides'
 * datatypes need only agree in their type signatures, as MPI asks.
 *
 * A root argument: in the root's group MPI_ROOT at the root and
 * MPI_PROC_NULL at the others; in the other group the root's rank there.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi_coll.h"

static int begin_inter(struct cx *x, const char *call, MPI_Comm comm)
{
    x->call = call;
    x->h = comm;
    TRY(mpi_check_comm(call, comm, &x->c));
    x->seq = ++x->c->coll_seq;
    x->n = x->c->size;
    x->me = x->c->rank;
    return MPI_SUCCESS;
}

bool mpi_is_inter(MPI_Comm comm)
{
    struct mcomm *c = mpi_comm_get(comm);
    return c && c->inter;
}

static int check_inter_root(const struct cx *x, int root)
{
    if (root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < x->c->rsize))
        return MPI_SUCCESS;
    return mpi_error(x->h, MPI_ERR_ROOT, x->call,
                     "root %d is not MPI_ROOT, MPI_PROC_NULL or in 0..%d of the remote group",
                     root, x->c->rsize - 1);
}

/* A rooted collective's start: false when the rank goes on; true when it
 * is done (x->rc: an error, or MPI_SUCCESS for an MPI_PROC_NULL rank of
 * the root's group, which takes no part). */
static bool begin_rooted(struct cx *x, const char *call, MPI_Comm comm, int root)
{
    x->rc = begin_inter(x, call, comm);
    if (!x->rc)
        x->rc = check_inter_root(x, root);
    return x->rc || root == MPI_PROC_NULL;
}

/* The bytes of count elements of t at buf (*len of them): buf itself when
 * contiguous, else a packed copy in *tmp (free it). */
static const void *packed(const struct cx *x, const void *buf, long count,
                          const struct mtype *t, long *len, void **tmp)
{
    *len = count * t->size;
    return send_view(x, buf, count, t, tmp);
}

int mpi_inter_barrier(MPI_Comm comm)
{
    struct cx x;
    TRY(begin_inter(&x, "MPI_Barrier", comm));
    MPI_Comm local = x.c->local;
    /* Everyone here has come; the leaders learn the other group has too;
     * nobody leaves the second barrier before its leader joins it. */
    TRY(MPI_Barrier(local));
    if (x.me == 0)
        exchange(&x, 0, NULL, 0, 0, NULL, 0, 0);
    return MPI_Barrier(local);
}

int mpi_inter_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    struct cx x;
    if (begin_rooted(&x, "MPI_Bcast", comm, root))
        return x.rc;
    struct mtype *t;
    TRY(check_data(&x, buf, count, type, &t));
    if (root == MPI_ROOT) {
        long len;
        void *tmp;
        const void *p = packed(&x, buf, count, t, &len, &tmp);
        cwait(&x, csend(&x, 0, 0, p, len));
        free(tmp);
        return MPI_SUCCESS;
    }
    if (x.me == 0) {
        void *tmp, *in = recv_view(&x, buf, count, t, &tmp);
        cwait(&x, crecv(&x, root, 0, in, count * t->size));
        recv_done(buf, count, t, tmp);
    }
    return MPI_Bcast(buf, count, type, 0, x.c->local);
}

/* The group's reduction of sendbuf at its rank 0 (into res there). */
static int reduce_here(const struct cx *x, const void *sendbuf, void *res, int count,
                       MPI_Datatype type, MPI_Op op)
{
    return MPI_Reduce(sendbuf, res, count, type, op, 0, x->c->local);
}

int mpi_inter_reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                     MPI_Op op, int root, MPI_Comm comm)
{
    struct cx x;
    if (begin_rooted(&x, "MPI_Reduce", comm, root))
        return x.rc;
    struct mtype *t;
    if (root == MPI_ROOT) {
        TRY(check_data(&x, recvbuf, count, type, &t));
        void *tmp, *in = recv_view(&x, recvbuf, count, t, &tmp);
        cwait(&x, crecv(&x, 0, 0, in, count * t->size));
        recv_done(recvbuf, count, t, tmp);
        return MPI_SUCCESS;
    }
    TRY(check_data(&x, sendbuf, count, type, &t));
    /* The reduction lands laid out as type says: room for its span. */
    long span = mpi_span(t, count);
    char *res = x.me == 0 ? xmalloc(&x, span) : NULL;
    void *at = res ? res - t->true_lb : NULL;
    int rc = reduce_here(&x, sendbuf, at, count, type, op);
    if (!rc && x.me == 0) {
        long len;
        void *tmp;
        const void *p = packed(&x, at, count, t, &len, &tmp);
        cwait(&x, csend(&x, root, 0, p, len));
        free(tmp);
    }
    free(res);
    return rc;
}

int mpi_inter_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                        MPI_Op op, MPI_Comm comm)
{
    struct cx x;
    TRY(begin_inter(&x, "MPI_Allreduce", comm));
    struct mtype *t;
    TRY(check_data(&x, sendbuf, count, type, &t));
    TRY(check_data(&x, recvbuf, count, type, &t));
    long span = mpi_span(t, count);
    char *res = x.me == 0 ? xmalloc(&x, span) : NULL;
    void *at = res ? res - t->true_lb : NULL;
    int rc = reduce_here(&x, sendbuf, at, count, type, op);
    if (!rc && x.me == 0) {
        long len;
        void *stmp, *rtmp;
        const void *mine = packed(&x, at, count, t, &len, &stmp);
        void *in = recv_view(&x, recvbuf, count, t, &rtmp);
        exchange(&x, 0, mine, len, 0, in, count * t->size, 0);
        recv_done(recvbuf, count, t, rtmp);
        free(stmp);
    }
    free(res);
    TRY(rc);
    return MPI_Bcast(recvbuf, count, type, 0, x.c->local);
}

/* MPI-3.1 5.10: group A's vectors (n elements, n the sum of either
 * group's counts) reduced and scattered over group B by B's counts, and
 * the other way: each group reduces at its rank 0, the two rank 0s trade
 * their results, and each scatters what came (counts NULL: count each). */
int mpi_inter_reduce_scatter(const char *call, const void *sendbuf, void *recvbuf,
                             const int counts[], int count, MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm)
{
    struct cx x;
    TRY(begin_inter(&x, call, comm));
    struct mtype *t;
    int *cs = xmalloc(&x, (long)sizeof(int) * x.n), *ds = xmalloc(&x, (long)sizeof(int) * x.n);
    long n = 0;
    for (int i = 0; i < x.n; i++) {
        cs[i] = counts ? counts[i] : count;
        ds[i] = (int)n;
        n += cs[i];
    }
    int rc = n > 0x7FFFFFFF ? mpi_error(comm, MPI_ERR_COUNT, call, "%ld elements in all", n)
             : cs[x.me] < 0 ? mpi_error(comm, MPI_ERR_COUNT, call, "count %d", cs[x.me])
                            : MPI_SUCCESS;
    if (!rc && !(rc = check_data(&x, sendbuf, (int)n, type, &t)))
        rc = mpi_check_op(call, comm, op, type);
    if (!rc && sendbuf == MPI_IN_PLACE)
        rc = mpi_error(comm, MPI_ERR_BUFFER, call, "MPI_IN_PLACE on an intercommunicator");
    char *mine = NULL, *theirs = NULL;
    if (!rc && x.me == 0) {
        long span = mpi_span(t, n);
        mine = xmalloc(&x, span);
        theirs = xmalloc(&x, span);
    }
    if (!rc)
        rc = reduce_here(&x, sendbuf, mine ? mine - t->true_lb : NULL, (int)n, type, op);
    if (!rc && x.me == 0) {
        long len;
        void *stmp, *rtmp;
        const void *out = packed(&x, mine - t->true_lb, n, t, &len, &stmp);
        void *in = recv_view(&x, theirs - t->true_lb, n, t, &rtmp);
        exchange(&x, 0, out, len, 0, in, n * t->size, 0);
        recv_done(theirs - t->true_lb, n, t, rtmp);
        free(stmp);
    }
    if (!rc)
        rc = MPI_Scatterv(theirs ? theirs - t->true_lb : NULL, cs, ds, type, recvbuf, cs[x.me],
                          type, 0, x.c->local);
    free(mine);
    free(theirs);
    free(cs);
    free(ds);
    return rc;
}

/* The group's packed blocks (bs bytes a rank) gathered at its rank 0:
 * a buffer there, NULL elsewhere. */
static char *gather_here(const struct cx *x, const void *block, long bs, int *rc)
{
    char *all = x->me == 0 ? xmalloc(x, bs * x->n) : NULL;
    *rc = MPI_Gather(block, (int)bs, MPI_BYTE, all, (int)bs, MPI_BYTE, 0, x->c->local);
    return all;
}

int mpi_inter_gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    struct cx x;
    if (begin_rooted(&x, "MPI_Gather", comm, root))
        return x.rc;
    struct mtype *t;
    if (root == MPI_ROOT) {
        int rn = x.c->rsize;
        TRY(check_data(&x, recvbuf, recvcount, recvtype, &t));
        long bs = recvcount * t->size;
        char *all = xmalloc(&x, bs * rn);
        cwait(&x, crecv(&x, 0, 0, all, bs * rn));
        for (int i = 0; i < rn; i++)
            mpi_unpack(all + i * bs, recvcount, t,
                       (char *)recvbuf + (long)i * recvcount * mpi_extent(t));
        free(all);
        return MPI_SUCCESS;
    }
    TRY(check_data(&x, sendbuf, sendcount, sendtype, &t));
    long bs;
    void *tmp;
    const void *mine = packed(&x, sendbuf, sendcount, t, &bs, &tmp);
    int rc;
    char *all = gather_here(&x, mine, bs, &rc);
    if (!rc && x.me == 0)
        cwait(&x, csend(&x, root, 0, all, bs * x.n));
    free(all);
    free(tmp);
    return rc;
}

int mpi_inter_scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    struct cx x;
    if (begin_rooted(&x, "MPI_Scatter", comm, root))
        return x.rc;
    struct mtype *t;
    if (root == MPI_ROOT) {
        int rn = x.c->rsize;
        TRY(check_data(&x, sendbuf, sendcount, sendtype, &t));
        long bs = sendcount * t->size;
        char *all = xmalloc(&x, bs * rn);
        for (int i = 0; i < rn; i++)
            mpi_pack((const char *)sendbuf + (long)i * sendcount * mpi_extent(t), sendcount, t,
                     all + i * bs);
        cwait(&x, csend(&x, 0, 0, all, bs * rn));
        free(all);
        return MPI_SUCCESS;
    }
    TRY(check_data(&x, recvbuf, recvcount, recvtype, &t));
    long bs = recvcount * t->size;
    char *all = x.me == 0 ? xmalloc(&x, bs * x.n) : NULL;
    if (x.me == 0)
        cwait(&x, crecv(&x, root, 0, all, bs * x.n));
    char *mine = xmalloc(&x, bs);
    int rc = MPI_Scatter(all, (int)bs, MPI_BYTE, mine, (int)bs, MPI_BYTE, 0, x.c->local);
    if (!rc && bs)
        mpi_unpack(mine, recvcount, t, recvbuf);
    free(mine);
    free(all);
    return rc;
}

int mpi_inter_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                        void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    struct cx x;
    TRY(begin_inter(&x, "MPI_Allgather", comm));
    struct mtype *st, *rt;
    TRY(check_data(&x, sendbuf, sendcount, sendtype, &st));
    TRY(check_data(&x, recvbuf, recvcount, recvtype, &rt));
    int rn = x.c->rsize;
    long bs, rbs = recvcount * rt->size;
    void *tmp;
    const void *mine = packed(&x, sendbuf, sendcount, st, &bs, &tmp);
    int rc;
    char *all = gather_here(&x, mine, bs, &rc);
    char *theirs = xmalloc(&x, rbs * rn);
    if (!rc && x.me == 0)
        exchange(&x, 0, all, bs * x.n, 0, theirs, rbs * rn, 0);
    if (!rc)
        rc = MPI_Bcast(theirs, (int)(rbs * rn), MPI_BYTE, 0, x.c->local);
    if (!rc)
        for (int i = 0; i < rn; i++)
            mpi_unpack(theirs + i * rbs, recvcount, rt,
                       (char *)recvbuf + (long)i * recvcount * mpi_extent(rt));
    free(theirs);
    free(all);
    free(tmp);
    return rc;
}

/* Every rank to every rank of the other group, directly. */
int mpi_inter_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                       void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    struct cx x;
    TRY(begin_inter(&x, "MPI_Alltoall", comm));
    struct mtype *st, *rt;
    TRY(check_data(&x, sendbuf, sendcount, sendtype, &st));
    TRY(check_data(&x, recvbuf, recvcount, recvtype, &rt));
    int rn = x.c->rsize;
    long sbs = sendcount * st->size, rbs = recvcount * rt->size;
    char *out = xmalloc(&x, sbs * rn), *in = xmalloc(&x, rbs * rn);
    for (int i = 0; i < rn; i++)
        mpi_pack((const char *)sendbuf + (long)i * sendcount * mpi_extent(st), sendcount, st,
                 out + i * sbs);
    struct msg_req **r = xmalloc(&x, (long)sizeof *r * 2 * rn);
    for (int i = 0; i < rn; i++) {
        r[2 * i] = crecv(&x, i, 0, in + i * rbs, rbs);
        r[2 * i + 1] = csend(&x, i, 0, out + i * sbs, sbs);
    }
    for (int i = 0; i < 2 * rn; i++)
        cwait(&x, r[i]);
    for (int i = 0; i < rn; i++)
        mpi_unpack(in + i * rbs, recvcount, rt,
                   (char *)recvbuf + (long)i * recvcount * mpi_extent(rt));
    free(r);
    free(out);
    free(in);
    return MPI_SUCCESS;
}

/* ---- the v-shaped ones: direct messages between the groups ---- */

/* One block to or from each remote rank (count 0: none), packed. */
struct blocks {
    const int *counts;           /* NULL: one count for all */
    int count;
    const long *bdispls;         /* bytes from the buffer */
    const MPI_Datatype *types;   /* NULL: one type for all */
    MPI_Datatype type;
};

static int blk_count(const struct blocks *b, int i) { return b->counts ? b->counts[i] : b->count; }
static MPI_Datatype blk_type(const struct blocks *b, int i) { return b->types ? b->types[i] : b->type; }

/* Send out[i] to remote rank i and take in[i] from it, all at once; NULL
 * sides send or take nothing. */
static int direct(const struct cx *x, const void *sendbuf, const struct blocks *out,
                  void *recvbuf, const struct blocks *in)
{
    int rn = x->c->rsize;
    struct msg_req **r = xmalloc(x, (long)sizeof *r * 2 * rn);
    void **pk = xmalloc(x, (long)sizeof *pk * 2 * rn);
    int nr = 0;
    for (int i = 0; i < 2 * rn; i++)
        pk[i] = NULL;
    for (int i = 0; in && i < rn; i++) {
        int c = blk_count(in, i);
        struct mtype *t;
        TRY(check_data(x, recvbuf, c, blk_type(in, i), &t));
        if (!c || !t->size)
            continue;
        pk[i] = xmalloc(x, c * t->size);
        r[nr++] = crecv(x, i, 0, pk[i], c * t->size);
    }
    for (int i = 0; out && i < rn; i++) {
        int c = blk_count(out, i);
        struct mtype *t;
        TRY(check_data(x, sendbuf, c, blk_type(out, i), &t));
        if (!c || !t->size)
            continue;
        pk[rn + i] = xmalloc(x, c * t->size);
        mpi_pack((const char *)sendbuf + out->bdispls[i], c, t, pk[rn + i]);
        r[nr++] = csend(x, i, 0, pk[rn + i], c * t->size);
    }
    for (int i = 0; i < nr; i++)
        cwait(x, r[i]);
    for (int i = 0; in && i < rn; i++)
        if (pk[i])
            mpi_unpack(pk[i], blk_count(in, i), mpi_type_get(blk_type(in, i)),
                       (char *)recvbuf + in->bdispls[i]);
    for (int i = 0; i < 2 * rn; i++)
        free(pk[i]);
    free(pk);
    free(r);
    return MPI_SUCCESS;
}

/* Byte displacements of the remote ranks' blocks: displs[i] elements of
 * type th (types NULL), or displs[i] bytes (types given: MPI_Alltoallw). */
static long *byte_displs(const struct cx *x, const int *displs, MPI_Datatype th,
                         const MPI_Datatype *types)
{
    int rn = x->c->rsize;
    long *d = xmalloc(x, (long)sizeof(long) * (rn ? rn : 1));
    struct mtype *t = mpi_type_get(th);
    for (int i = 0; i < rn; i++)
        d[i] = types ? displs[i] : (long)displs[i] * (t ? mpi_extent(t) : 0);
    return d;
}

int mpi_inter_gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                      int root, MPI_Comm comm)
{
    struct cx x;
    if (begin_rooted(&x, "MPI_Gatherv", comm, root))
        return x.rc;
    if (root == MPI_ROOT) {
        TRY(mpi_check_type(x.call, comm, recvtype, &(struct mtype *){0}));
        long *d = byte_displs(&x, displs, recvtype, NULL);
        struct blocks in = {.counts = recvcounts, .bdispls = d, .type = recvtype};
        int rc = direct(&x, NULL, NULL, recvbuf, &in);
        free(d);
        return rc;
    }
    /* One block, to the root alone. */
    int rn = x.c->rsize;
    int *c = xmalloc(&x, (long)sizeof(int) * rn);
    long *d = xmalloc(&x, (long)sizeof(long) * rn);
    for (int i = 0; i < rn; i++) {
        c[i] = i == root ? sendcount : 0;
        d[i] = 0;
    }
    struct blocks out = {.counts = c, .bdispls = d, .type = sendtype};
    int rc = direct(&x, sendbuf, &out, NULL, NULL);
    free(c);
    free(d);
    return rc;
}

int mpi_inter_scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                       MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    struct cx x;
    if (begin_rooted(&x, "MPI_Scatterv", comm, root))
        return x.rc;
    if (root == MPI_ROOT) {
        TRY(mpi_check_type(x.call, comm, sendtype, &(struct mtype *){0}));
        long *d = byte_displs(&x, displs, sendtype, NULL);
        struct blocks out = {.counts = sendcounts, .bdispls = d, .type = sendtype};
        int rc = direct(&x, sendbuf, &out, NULL, NULL);
        free(d);
        return rc;
    }
    int rn = x.c->rsize;
    int *c = xmalloc(&x, (long)sizeof(int) * rn);
    long *d = xmalloc(&x, (long)sizeof(long) * rn);
    for (int i = 0; i < rn; i++) {
        c[i] = i == root ? recvcount : 0;
        d[i] = 0;
    }
    struct blocks in = {.counts = c, .bdispls = d, .type = recvtype};
    int rc = direct(&x, NULL, NULL, recvbuf, &in);
    free(c);
    free(d);
    return rc;
}

int mpi_inter_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                         void *recvbuf, const int recvcounts[], const int displs[],
                         MPI_Datatype recvtype, MPI_Comm comm)
{
    struct cx x;
    TRY(begin_inter(&x, "MPI_Allgatherv", comm));
    TRY(mpi_check_type(x.call, comm, recvtype, &(struct mtype *){0}));
    int rn = x.c->rsize;
    long *zero = xmalloc(&x, (long)sizeof(long) * rn);
    for (int i = 0; i < rn; i++)
        zero[i] = 0;
    long *d = byte_displs(&x, displs, recvtype, NULL);
    struct blocks out = {.count = sendcount, .bdispls = zero, .type = sendtype};
    struct blocks in = {.counts = recvcounts, .bdispls = d, .type = recvtype};
    int rc = direct(&x, sendbuf, &out, recvbuf, &in);
    free(zero);
    free(d);
    return rc;
}

/* Alltoallv (types NULL: one type each side, element displacements) and
 * Alltoallw (byte displacements, a type per rank). */
int mpi_inter_alltoallw(const char *call, const void *sendbuf, const int sendcounts[],
                        const int sdispls[], const MPI_Datatype sendtypes[],
                        MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                        const int rdispls[], const MPI_Datatype recvtypes[],
                        MPI_Datatype recvtype, MPI_Comm comm)
{
    struct cx x;
    TRY(begin_inter(&x, call, comm));
    if (!sendtypes) {
        TRY(mpi_check_type(call, comm, sendtype, &(struct mtype *){0}));
        TRY(mpi_check_type(call, comm, recvtype, &(struct mtype *){0}));
    }
    long *sd = byte_displs(&x, sdispls, sendtype, sendtypes);
    long *rd = byte_displs(&x, rdispls, recvtype, recvtypes);
    struct blocks out = {.counts = sendcounts, .bdispls = sd, .types = sendtypes,
                         .type = sendtype};
    struct blocks in = {.counts = recvcounts, .bdispls = rd, .types = recvtypes,
                        .type = recvtype};
    int rc = direct(&x, sendbuf, &out, recvbuf, &in);
    free(sd);
    free(rd);
    return rc;
}
