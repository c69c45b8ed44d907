/*
 * Collective operations, each in O(log N) message steps but the all-to-alls
 * (pairwise exchange, N-1 steps) and Gatherv / Scatterv's large blocks
 * (straight between the root and their rank):
 *
 *   Barrier                 dissemination, forwarded by Portals (triggered
 *                           puts on counters, libmsg/msg_barrier.c); over
 *                           the engine's messages where Portals' resources
 *                           ran out or TERN_MPI_TRIGGERED=0
 *   Bcast                   binomial tree
 *   Reduce                  binomial tree (rank order kept for
 *                           non-commutative operations)
 *   Allreduce               recursive doubling; with N not a power of two
 *                           the first 2*(N-p2) ranks pair up first
 *   Gather, Scatter         binomial trees
 *   Gatherv, Scatterv       binomial trees for small blocks (mpi_gatherv.c)
 *   Allgather(v)            Bruck
 *   Alltoall(v)             pairwise exchange
 *   Reduce_scatter(_block)  recursive-doubling allreduce, each keeps its part
 *   Scan, Exscan            recursive doubling
 *
 * Their messages use the communicator's odd context id (2*ctx+1), so no
 * point-to-point receive can take them; the tag is the communicator's
 * collective sequence number and the step, so a fast rank's next
 * collective is never confused with the current one.  Reductions work on
 * "images": the bytes from the first to the last byte of the data, laid
 * out as in memory, so derived types and user operations see their own
 * layout.  Collective calls that do not match across ranks (different
 * lengths) end the job with a message.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi_coll.h"

/* ---- Barrier ---- */

/* The first barrier on a communicator makes its Portals barrier and agrees
 * with the others whether every member has one (an allreduce: also the
 * barrier itself, and what makes sure no member's triggered put arrives
 * before the entries it aims at exist).  Where one could not, they all
 * keep to messages. */
static void barrier_choose(const struct cx *x)
{
    struct mcomm *c = x->c;
    c->bar_mode = BAR_MESSAGES;
    struct msg_barrier *b = NULL;
    if (msg_env_long("TRIGGERED", 1))
        b = msg_barrier_new((uint64_t)c->ctx, x->n, x->me, c->world);
    int ok = b != NULL, all = 0;
    if (MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, x->h) != MPI_SUCCESS)
        mpi_fatal(x->call, "the agreement on the barrier's kind failed");
    if (all) {
        c->bar = b;
        c->bar_mode = BAR_PORTALS;
    } else {
        msg_barrier_free(b);
    }
}

int MPI_Barrier(MPI_Comm comm)
{
    if (mpi_is_inter(comm))
        return mpi_inter_barrier(comm);
    struct cx x;
    TRY(begin(&x, "MPI_Barrier", comm));
    if (x.n == 1)
        return MPI_SUCCESS;
    if (x.c->bar_mode == BAR_PORTALS) {
        msg_barrier_wait(x.c->bar);
        return MPI_SUCCESS;
    }
    if (x.c->bar_mode == BAR_UNDECIDED) {
        barrier_choose(&x);
        return MPI_SUCCESS;
    }
    int step = 0;
    for (int d = 1; d < x.n; d <<= 1, step++)
        exchange(&x, (x.me + d) % x.n, NULL, 0, (x.me - d + x.n) % x.n, NULL, 0, step);
    return MPI_SUCCESS;
}

/* ---- Bcast ---- */

static void bcast_bytes(const struct cx *x, void *buf, long len, int root)
{
    int n = x->n, vr = (x->me - root + n) % n, mask = 1;
    while (mask < n) {
        if (vr & mask) {
            cwait(x, crecv(x, (vr - mask + root) % n, 0, buf, len));
            break;
        }
        mask <<= 1;
    }
    struct msg_req *s[32];
    int ns = 0;
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < n)
            s[ns++] = csend(x, (vr + mask + root) % n, 0, buf, len);
    for (int i = 0; i < ns; i++)
        cwait(x, s[i]);
}

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    if (mpi_is_inter(comm))
        return mpi_inter_bcast(buffer, count, datatype, root, comm);
    struct cx x;
    TRY(begin(&x, "MPI_Bcast", comm));
    struct mtype *t;
    TRY(check_data(&x, buffer, count, datatype, &t));
    TRY(check_root(&x, root));
    if (x.n == 1 || !count || !t->size)
        return MPI_SUCCESS;
    void *tmp = NULL;
    void *v = buffer;
    if (!mpi_contig(t)) {
        tmp = xmalloc(&x, count * t->size);
        if (x.me == root)
            mpi_pack(buffer, count, t, tmp);
        v = tmp;
    }
    bcast_bytes(&x, v, (long)count * t->size, root);
    if (tmp && x.me != root)
        mpi_unpack(tmp, count, t, buffer);
    free(tmp);
    return MPI_SUCCESS;
}

/* ---- reductions ---- */

struct img {
    char *mem, *base; /* base: where the type map's offset 0 is */
    long span;
};

static void img_new(const struct cx *x, struct img *im, long count, const struct mtype *t)
{
    im->span = mpi_span(t, count);
    im->mem = xmalloc(x, im->span);
    im->base = im->mem - t->true_lb;
}

/* Copy the data (not the holes) of count elements from src to dst. */
static void copy_typed(void *dst, const void *src, long count, const struct mtype *t)
{
    if (mpi_contig(t)) {
        memcpy(dst, src, (size_t)(count * t->size));
        return;
    }
    long ext = mpi_extent(t);
    for (long i = 0; i < count; i++)
        FOR_BLOCKS(t, r, k) {
            long off = i * ext + BLOCK_OFF(t, r, k);
            memcpy((char *)dst + off, (const char *)src + off, (size_t)t->blocks[k].len);
        }
}

static void img_load(struct img *im, const void *buf, long count, const struct mtype *t)
{
    copy_typed(im->base, buf, count, t);
}

static void apply(const struct cx *x, MPI_Op op, const struct img *in, struct img *inout,
                  long count, MPI_Datatype dt)
{
    if (mpi_op_apply(x->call, x->h, op, in->base, inout->base, count, dt))
        mpi_fatal(x->call, "the operation failed");
}

static void img_swap(struct img *a, struct img *b)
{
    struct img t = *a;
    *a = *b;
    *b = t;
}

/* acc (this rank's block of ranks) combined with the partner's in rank
 * order: lower ranks' data on the left of op. */
static void combine(const struct cx *x, MPI_Op op, struct img *acc, struct img *got,
                    bool got_is_lower, long count, MPI_Datatype dt)
{
    if (got_is_lower || mpi_op_commutes(op)) {
        apply(x, op, got, acc, count, dt); /* acc = got op acc */
    } else {
        apply(x, op, acc, got, count, dt); /* got = acc op got */
        img_swap(acc, got);
    }
}

static int check_reduce(struct cx *x, const void *sendbuf, void *recvbuf, int count,
                        MPI_Datatype dt, MPI_Op op, struct mtype **t)
{
    TRY(check_data(x, sendbuf, count, dt, t));
    TRY(check_data(x, recvbuf, count, dt, t));
    return mpi_check_op(x->call, x->h, op, dt);
}

/* Reduce into acc at root (relative ranks; for non-commutative ops root
 * is 0 and ranks are in order). */
static void reduce_img(const struct cx *x, struct img *acc, long count, MPI_Datatype dt,
                       MPI_Op op, int root)
{
    int n = x->n, vr = (x->me - root + n) % n;
    struct img tmp;
    img_new(x, &tmp, count, mpi_type_get(dt));
    for (int mask = 1; mask < n; mask <<= 1) {
        if (vr & mask) {
            cwait(x, csend(x, (vr - mask + root) % n, 1, acc->mem, acc->span));
            break;
        }
        int src = vr | mask;
        if (src < n) {
            cwait(x, crecv(x, (src + root) % n, 1, tmp.mem, tmp.span));
            combine(x, op, acc, &tmp, false, count, dt);
        }
    }
    free(tmp.mem);
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, MPI_Comm comm)
{
    if (mpi_is_inter(comm))
        return mpi_inter_reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
    struct cx x;
    TRY(begin(&x, "MPI_Reduce", comm));
    struct mtype *t;
    TRY(check_root(&x, root));
    TRY(check_data(&x, sendbuf, count, datatype, &t));
    TRY(mpi_check_op(x.call, comm, op, datatype));
    if (x.me == root)
        TRY(check_data(&x, recvbuf, count, datatype, &t));
    if (!count)
        return MPI_SUCCESS;
    const void *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    struct img acc;
    img_new(&x, &acc, count, t);
    img_load(&acc, in, count, t);
    bool commute = mpi_op_commutes(op);
    int r = commute ? root : 0;
    reduce_img(&x, &acc, count, datatype, op, r);
    if (r != root) { /* non-commutative: reduced in rank order at 0, then to root */
        if (x.me == 0)
            cwait(&x, csend(&x, root, 2, acc.mem, acc.span));
        if (x.me == root)
            cwait(&x, crecv(&x, 0, 2, acc.mem, acc.span));
    }
    if (x.me == root)
        copy_typed(recvbuf, acc.base, count, t);
    free(acc.mem);
    return MPI_SUCCESS;
}

static void allreduce_img(const struct cx *x, struct img *acc, long count, MPI_Datatype dt,
                          MPI_Op op)
{
    int n = x->n, me = x->me, p2 = 1;
    while (p2 * 2 <= n)
        p2 *= 2;
    int rem = n - p2, newrank;
    struct img tmp;
    img_new(x, &tmp, count, mpi_type_get(dt));
    if (me < 2 * rem) {
        if (me % 2 == 0) {
            cwait(x, csend(x, me + 1, 1, acc->mem, acc->span));
            newrank = -1;
        } else {
            cwait(x, crecv(x, me - 1, 1, tmp.mem, tmp.span));
            combine(x, op, acc, &tmp, true, count, dt);
            newrank = me / 2;
        }
    } else {
        newrank = me - rem;
    }
    if (newrank >= 0) {
        int step = 2;
        for (int mask = 1; mask < p2; mask <<= 1, step++) {
            int nd = newrank ^ mask, dst = nd < rem ? nd * 2 + 1 : nd + rem;
            exchange(x, dst, acc->mem, acc->span, dst, tmp.mem, tmp.span, step);
            combine(x, op, acc, &tmp, dst < me, count, dt);
        }
    }
    if (me < 2 * rem) {
        if (me % 2)
            cwait(x, csend(x, me - 1, 99, acc->mem, acc->span));
        else
            cwait(x, crecv(x, me + 1, 99, acc->mem, acc->span));
    }
    free(tmp.mem);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm)
{
    if (mpi_is_inter(comm))
        return mpi_inter_allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    struct cx x;
    TRY(begin(&x, "MPI_Allreduce", comm));
    struct mtype *t;
    TRY(check_reduce(&x, sendbuf, recvbuf, count, datatype, op, &t));
    if (!count)
        return MPI_SUCCESS;
    const void *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    if (x.n == 1) {
        if (in != recvbuf)
            copy_typed(recvbuf, in, count, t);
        return MPI_SUCCESS;
    }
    struct img acc;
    img_new(&x, &acc, count, t);
    img_load(&acc, in, count, t);
    allreduce_img(&x, &acc, count, datatype, op);
    copy_typed(recvbuf, acc.base, count, t);
    free(acc.mem);
    return MPI_SUCCESS;
}

static int reduce_scatter(struct cx *x, const void *sendbuf, void *recvbuf,
                          const int recvcounts[], int block, MPI_Datatype datatype, MPI_Op op)
{
    struct mtype *t;
    TRY(mpi_check_type(x->call, x->h, datatype, &t));
    TRY(mpi_check_op(x->call, x->h, op, datatype));
    long total = 0, mine_off = 0;
    for (int i = 0; i < x->n; i++) {
        int c = recvcounts ? recvcounts[i] : block;
        TRY(mpi_check_count(x->call, x->h, c));
        if (i < x->me)
            mine_off += c;
        total += c;
    }
    int mine = recvcounts ? recvcounts[x->me] : block;
    if (!total)
        return MPI_SUCCESS;
    const void *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    struct img acc;
    img_new(x, &acc, total, t);
    img_load(&acc, in, total, t);
    if (x->n > 1)
        allreduce_img(x, &acc, total, datatype, op);
    copy_typed(recvbuf, acc.base + mine_off * mpi_extent(t), mine, t);
    free(acc.mem);
    return MPI_SUCCESS;
}

int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    if (mpi_is_inter(comm))
        return mpi_inter_reduce_scatter("MPI_Reduce_scatter", sendbuf, recvbuf, recvcounts, 0,
                                        datatype, op, comm);
    struct cx x;
    TRY(begin(&x, "MPI_Reduce_scatter", comm));
    return reduce_scatter(&x, sendbuf, recvbuf, recvcounts, 0, datatype, op);
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    if (mpi_is_inter(comm))
        return mpi_inter_reduce_scatter("MPI_Reduce_scatter_block", sendbuf, recvbuf, NULL,
                                        recvcount, datatype, op, comm);
    struct cx x;
    TRY(begin(&x, "MPI_Reduce_scatter_block", comm));
    return reduce_scatter(&x, sendbuf, recvbuf, NULL, recvcount, datatype, op);
}

static int scan(const char *call, const void *sendbuf, void *recvbuf, int count,
                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, bool exclusive)
{
    struct cx x;
    TRY(begin(&x, call, comm));
    struct mtype *t;
    TRY(check_reduce(&x, sendbuf, recvbuf, count, datatype, op, &t));
    if (!count)
        return MPI_SUCCESS;
    const void *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    struct img partial, tmp, res;
    img_new(&x, &partial, count, t);
    img_new(&x, &tmp, count, t);
    img_new(&x, &res, count, t);
    img_load(&partial, in, count, t);
    img_load(&res, in, count, t);
    bool have = !exclusive; /* res holds something */
    int step = 0;
    for (int mask = 1; mask < x.n; mask <<= 1, step++) {
        int dst = x.me ^ mask;
        if (dst >= x.n)
            continue;
        exchange(&x, dst, partial.mem, partial.span, dst, tmp.mem, tmp.span, step);
        if (x.me > dst) {
            if (have) {
                apply(&x, op, &tmp, &res, count, datatype); /* res = tmp op res */
            } else {
                memcpy(res.mem, tmp.mem, (size_t)res.span);
                have = true;
            }
            apply(&x, op, &tmp, &partial, count, datatype);
        } else {
            combine(&x, op, &partial, &tmp, false, count, datatype);
        }
    }
    if (have)
        copy_typed(recvbuf, res.base, count, t);
    free(partial.mem);
    free(tmp.mem);
    free(res.mem);
    return MPI_SUCCESS;
}

int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm)
{
    return scan("MPI_Scan", sendbuf, recvbuf, count, datatype, op, comm, false);
}

int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm)
{
    return scan("MPI_Exscan", sendbuf, recvbuf, count, datatype, op, comm, true);
}

/* ---- Gather, Scatter ---- */

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    if (mpi_is_inter(comm))
        return mpi_inter_gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                root, comm);
    struct cx x;
    TRY(begin(&x, "MPI_Gather", comm));
    TRY(check_root(&x, root));
    struct mtype *st = NULL, *rt = NULL;
    bool inplace = x.me == root && sendbuf == MPI_IN_PLACE;
    if (!inplace)
        TRY(check_data(&x, sendbuf, sendcount, sendtype, &st));
    if (x.me == root)
        TRY(check_data(&x, recvbuf, recvcount, recvtype, &rt));
    long bs = inplace ? (long)recvcount * rt->size : (long)sendcount * st->size;
    int n = x.n, vr = (x.me - root + n) % n;
    /* tmp: blocks of relative ranks vr, vr+1, ... of this subtree */
    int sub = 1;
    while (sub < n && !(vr & sub))
        sub <<= 1;
    if (sub > n - vr)
        sub = n - vr;
    char *tmp = xmalloc(&x, bs * sub);
    if (inplace)
        mpi_pack((char *)recvbuf + (long)root * recvcount * mpi_extent(rt), recvcount, rt, tmp);
    else
        mpi_pack(sendbuf, sendcount, st, tmp);
    for (int mask = 1; mask < n; mask <<= 1) {
        if (vr & mask) {
            int have = mask < n - vr ? mask : n - vr;
            cwait(&x, csend(&x, (vr - mask + root) % n, 0, tmp, bs * have));
            break;
        }
        int src = vr + mask;
        if (src < n) {
            int cnt = mask < n - src ? mask : n - src;
            cwait(&x, crecv(&x, (src + root) % n, 0, tmp + (long)mask * bs, bs * cnt));
        }
    }
    if (x.me == root)
        for (int i = 0; i < n; i++) {
            int r = (i + root) % n;
            if (!(inplace && r == root))
                mpi_unpack(tmp + (long)i * bs, recvcount, rt,
                           (char *)recvbuf + (long)r * recvcount * mpi_extent(rt));
        }
    free(tmp);
    return MPI_SUCCESS;
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    if (mpi_is_inter(comm))
        return mpi_inter_scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                 root, comm);
    struct cx x;
    TRY(begin(&x, "MPI_Scatter", comm));
    TRY(check_root(&x, root));
    struct mtype *st = NULL, *rt = NULL;
    bool inplace = x.me == root && recvbuf == MPI_IN_PLACE;
    if (x.me == root)
        TRY(check_data(&x, sendbuf, sendcount, sendtype, &st));
    if (!inplace)
        TRY(check_data(&x, recvbuf, recvcount, recvtype, &rt));
    long bs = x.me == root ? (long)sendcount * st->size : (long)recvcount * rt->size;
    int n = x.n, vr = (x.me - root + n) % n;
    int sub = 1;
    while (sub < n && !(vr & sub))
        sub <<= 1;
    if (sub > n - vr)
        sub = n - vr;
    char *tmp = xmalloc(&x, bs * sub);
    int mask = 1;
    if (x.me == root) {
        for (int i = 0; i < n; i++)
            mpi_pack((const char *)sendbuf + (long)((i + root) % n) * sendcount * mpi_extent(st),
                     sendcount, st, tmp + (long)i * bs);
        while (mask < n)
            mask <<= 1;
    } else {
        for (; mask < n; mask <<= 1)
            if (vr & mask) {
                cwait(&x, crecv(&x, (vr - mask + root) % n, 0, tmp, bs * sub));
                break;
            }
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < n) {
            int cnt = mask < n - vr - mask ? mask : n - vr - mask;
            cwait(&x, csend(&x, (vr + mask + root) % n, 0, tmp + (long)mask * bs, bs * cnt));
        }
    if (!inplace)
        mpi_unpack(tmp, recvcount, rt, recvbuf);
    free(tmp);
    return MPI_SUCCESS;
}

/* Gatherv and Scatterv: mpi_gatherv.c. */

/* ---- Allgather(v): Bruck ---- */

/* lens[i] bytes from rank i; mine (packed) in; out[i] gets rank i's. */
static void bruck(const struct cx *x, const void *mine, const long *lens, char **out)
{
    int n = x->n, me = x->me;
    long total = 0;
    for (int i = 0; i < n; i++)
        total += lens[i];
    char *tmp = xmalloc(x, total); /* blocks of ranks me, me+1, ... */
    memcpy(tmp, mine, (size_t)lens[me]);
    long used = lens[me];
    int have = 1, step = 0;
    for (int d = 1; d < n; d <<= 1, step++) {
        int cnt = d < n - have ? d : n - have;
        long sb = 0, rb = 0;
        for (int i = 0; i < cnt; i++) {
            sb += lens[(me + i) % n];
            rb += lens[(me + d + i) % n];
        }
        exchange(x, (me - d + n) % n, tmp, sb, (me + d) % n, tmp + used, rb, step);
        used += rb;
        have += cnt;
    }
    long pos = 0;
    for (int i = 0; i < n; i++) {
        int k = (me + i) % n;
        memcpy(out[k], tmp + pos, (size_t)lens[k]);
        pos += lens[k];
    }
    free(tmp);
}

static int allgather(const char *call, const void *sendbuf, int sendcount,
                     MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                     const int displs[], int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    struct cx x;
    TRY(begin(&x, call, comm));
    struct mtype *st = NULL, *rt;
    TRY(mpi_check_type(call, comm, recvtype, &rt));
    bool inplace = sendbuf == MPI_IN_PLACE;
    if (!inplace)
        TRY(check_data(&x, sendbuf, sendcount, sendtype, &st));
    int n = x.n;
    long *lens = xmalloc(&x, sizeof(long) * (size_t)n);
    char **outs = xmalloc(&x, sizeof(char *) * (size_t)n);
    long total = 0;
    for (int i = 0; i < n; i++) {
        int c = recvcounts ? recvcounts[i] : recvcount;
        TRY(mpi_check_count(call, comm, c));
        lens[i] = (long)c * rt->size;
        total += lens[i];
    }
    char *all = xmalloc(&x, total);
    for (int i = 0, pos = 0; i < n; pos += (int)lens[i], i++)
        outs[i] = all + pos;
    long my_elems = recvcounts ? recvcounts[x.me] : recvcount;
    char *myat = (char *)recvbuf + (displs ? displs[x.me] : (long)x.me * recvcount) *
                                       mpi_extent(rt);
    void *mine = xmalloc(&x, lens[x.me]);
    if (inplace)
        mpi_pack(myat, my_elems, rt, mine);
    else
        mpi_pack(sendbuf, sendcount, st, mine);
    bruck(&x, mine, lens, outs);
    for (int i = 0; i < n; i++) {
        int c = recvcounts ? recvcounts[i] : recvcount;
        if (inplace && i == x.me)
            continue;
        mpi_unpack(outs[i], c, rt,
                   (char *)recvbuf + (displs ? displs[i] : (long)i * recvcount) * mpi_extent(rt));
    }
    free(mine);
    free(all);
    free(lens);
    free(outs);
    return MPI_SUCCESS;
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    if (mpi_is_inter(comm))
        return mpi_inter_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                   comm);
    return allgather("MPI_Allgather", sendbuf, sendcount, sendtype, recvbuf, NULL, NULL,
                     recvcount, recvtype, comm);
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm)
{
    if (mpi_is_inter(comm))
        return mpi_inter_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                    recvtype, comm);
    return allgather("MPI_Allgatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                     displs, 0, recvtype, comm);
}

/* ---- Alltoall(v): pairwise exchange ---- */

static int alltoall(const char *call, const void *sendbuf, const int *scounts,
                    const int *sdispls, int scount, MPI_Datatype sendtype, void *recvbuf,
                    const int *rcounts, const int *rdispls, int rcount, MPI_Datatype recvtype,
                    MPI_Comm comm)
{
    struct cx x;
    TRY(begin(&x, call, comm));
    struct mtype *st, *rt;
    TRY(mpi_check_type(call, comm, recvtype, &rt));
    int n = x.n, me = x.me;
    void *inplace_copy = NULL;
    if (sendbuf == MPI_IN_PLACE) {
        /* Send from a copy of what is in recvbuf. */
        long span = 0;
        for (int i = 0; i < n; i++) {
            long end = (rdispls ? rdispls[i] : (long)i * rcount) * mpi_extent(rt) +
                       mpi_span(rt, rcounts ? rcounts[i] : rcount) + rt->true_lb;
            if (end > span)
                span = end;
        }
        inplace_copy = xmalloc(&x, span);
        memcpy(inplace_copy, recvbuf, (size_t)span);
        sendbuf = inplace_copy;
        scounts = rcounts;
        sdispls = rdispls;
        scount = rcount;
        sendtype = recvtype;
    }
    TRY(mpi_check_type(call, comm, sendtype, &st));
    for (int k = 0; k < n; k++) {
        int to = (me + k) % n, from = (me - k + n) % n;
        int sc = scounts ? scounts[to] : scount, rc = rcounts ? rcounts[from] : rcount;
        TRY(mpi_check_count(call, comm, sc));
        TRY(mpi_check_count(call, comm, rc));
        const char *sat = (const char *)sendbuf +
                          (sdispls ? sdispls[to] : (long)to * scount) * mpi_extent(st);
        char *rat = (char *)recvbuf + (rdispls ? rdispls[from] : (long)from * rcount) *
                                          mpi_extent(rt);
        void *stmp, *rtmp;
        const void *sv = send_view(&x, sat, sc, st, &stmp);
        if (k == 0) {
            mpi_unpack(sv, rc, rt, rat);
        } else {
            void *rv = recv_view(&x, rat, rc, rt, &rtmp);
            exchange(&x, to, sv, (long)sc * st->size, from, rv, (long)rc * rt->size, k);
            recv_done(rat, rc, rt, rtmp);
        }
        free(stmp);
    }
    free(inplace_copy);
    return MPI_SUCCESS;
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    if (mpi_is_inter(comm))
        return mpi_inter_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                  comm);
    return alltoall("MPI_Alltoall", sendbuf, NULL, NULL, sendcount, sendtype, recvbuf, NULL,
                    NULL, recvcount, recvtype, comm);
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    if (mpi_is_inter(comm))
        return mpi_inter_alltoallw("MPI_Alltoallv", sendbuf, sendcounts, sdispls, NULL, sendtype,
                                   recvbuf, recvcounts, rdispls, NULL, recvtype, comm);
    return alltoall("MPI_Alltoallv", sendbuf, sendcounts, sdispls, 0, sendtype, recvbuf,
                    recvcounts, rdispls, 0, recvtype, comm);
}

void mpi_coll_init(void) {}
