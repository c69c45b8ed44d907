/*
 * Collective operations on intercommunicators (MPI-3.1 5.2.2): data goes
 * from one group to the other.  Each is built of collectives on the
 * groups' own intracommunicators (struct mcomm's local) and messages
 * between the groups on the intercommunicator's collective context: a
 * group gathers or reduces to its rank 0, the two rank 0s (or a root and
 * the other group's rank 0) trade, and the receiving group spreads what
 * came.  Data crosses packed, so the two sides' datatypes need only
 * agree in their type signatures, as MPI asks.
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

/* count elements of t at buf packed (malloc'd; *len its bytes). */
static void *packed(const struct cx *x, const void *buf, long count, const struct mtype *t,
                    long *len)
{
    *len = count * t->size;
    void *p = xmalloc(x, *len);
    if (count)
        mpi_pack(buf, count, t, p);
    return p;
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
    TRY(begin_inter(&x, "MPI_Bcast", comm));
    TRY(check_inter_root(&x, root));
    if (root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    struct mtype *t;
    TRY(check_data(&x, buf, count, type, &t));
    if (root == MPI_ROOT) {
        long len;
        void *p = packed(&x, buf, count, t, &len);
        cwait(&x, csend(&x, 0, 0, p, len));
        free(p);
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
    TRY(begin_inter(&x, "MPI_Reduce", comm));
    TRY(check_inter_root(&x, root));
    if (root == MPI_PROC_NULL)
        return MPI_SUCCESS;
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
        void *p = packed(&x, at, count, t, &len);
        cwait(&x, csend(&x, root, 0, p, len));
        free(p);
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
        void *mine = packed(&x, at, count, t, &len);
        void *tmp, *in = recv_view(&x, recvbuf, count, t, &tmp);
        exchange(&x, 0, mine, len, 0, in, count * t->size, 0);
        recv_done(recvbuf, count, t, tmp);
        free(mine);
    }
    free(res);
    TRY(rc);
    return MPI_Bcast(recvbuf, count, type, 0, x.c->local);
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
    TRY(begin_inter(&x, "MPI_Gather", comm));
    TRY(check_inter_root(&x, root));
    if (root == MPI_PROC_NULL)
        return MPI_SUCCESS;
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
    void *mine = packed(&x, sendbuf, sendcount, t, &bs);
    int rc;
    char *all = gather_here(&x, mine, bs, &rc);
    if (!rc && x.me == 0)
        cwait(&x, csend(&x, root, 0, all, bs * x.n));
    free(all);
    free(mine);
    return rc;
}

int mpi_inter_scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    struct cx x;
    TRY(begin_inter(&x, "MPI_Scatter", comm));
    TRY(check_inter_root(&x, root));
    if (root == MPI_PROC_NULL)
        return MPI_SUCCESS;
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
    void *mine = packed(&x, sendbuf, sendcount, st, &bs);
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
    free(mine);
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
