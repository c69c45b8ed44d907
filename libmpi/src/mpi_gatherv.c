/*
 * MPI_Gatherv and MPI_Scatterv: small blocks along a binomial tree
 * (O(log N) message steps), large ones straight between the root and
 * their rank (what the linear algorithm did for every block).
 *
 * In MPI the counts are known at the root only (recvcounts, sendcounts
 * and displs are significant there alone); every other rank knows its own
 * block and nothing of the others'.  So each block takes its way by its own
 * size in bytes, which its rank and the root both know (MPI requires the
 * type signatures to match): at most TERN_MPI_VTREE_MAX bytes (default
 * VTREE_MAX_DEFAULT) and it travels in the tree, above that in one message
 * of its own, crossing one link instead of up to log2 N: where bytes, not
 * messages, take the time, that moves fewer of them.  The variable must be
 * the same on every rank (yod gives every rank its environment).
 *
 * The tree is Gather's, over ranks relative to the root: relative rank v's
 * subtree is v .. v + min(lowbit(v), N - v) - 1 (the root's: all), its
 * children v + 1, v + 2, v + 4, ... below lowbit(v).  Every non-root rank
 * exchanges exactly one tree message with its parent, also when its whole
 * subtree's blocks are large or empty.  A tree message is its subtree's
 * records in relative rank order, one per rank:
 *
 *     uint64 the length of the rank's block in bytes (large or not)
 *     its packed bytes, only when that length is at most TERN_MPI_VTREE_MAX
 *
 * A child's subtree is a run of consecutive records, so Scatterv forwards
 * slices of what it received without copying them, and Gatherv receives its
 * children's messages one after the other into one buffer behind its own
 * record and sends that on.  A non-root rank cannot know how long its
 * children's (Gatherv) or its parent's (Scatterv) message is: it probes for
 * it first.  The root checks every record's length against its counts and
 * names the rank whose count differs; in Scatterv every rank checks its own
 * record.  Either way the job ends with a message, as for other collectives
 * whose counts do not match, before anyone waits for a large block that
 * would never come.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi_coll.h"

/* bench/gatherv.py on 8 and 16 Tern nodes: the tree took 0.5-0.7 of the
 * linear time at 512-byte blocks, 0.8-1.3 at 1 KiB, twice it at 4 KiB. */
#define VTREE_MAX_DEFAULT 512
#define REC_HEAD ((long)sizeof(uint64_t))
/* The steps (tags) of the two kinds of message. */
enum { STEP_TREE = 0, STEP_DIRECT = 1 };

static long vtree_max(void)
{
    static long max = -1;
    if (max < 0)
        max = msg_env_long("VTREE_MAX", VTREE_MAX_DEFAULT);
    if (max < 0) /* below 0 reads as 0: only empty blocks in the tree */
        max = 0;
    return max;
}

static bool in_tree(long len) { return len <= vtree_max(); }

static long record_len(long len) { return REC_HEAD + (in_tree(len) ? len : 0); }

static uint64_t record_get(const char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static void record_put(char *p, uint64_t v) { memcpy(p, &v, sizeof v); }

/* The lowest set bit of relative rank vr; for the root, a power of two
 * past every rank. */
static int lowbit(int vr, int n)
{
    if (vr)
        return vr & -vr;
    int p = 1;
    while (p < n)
        p <<= 1;
    return p;
}

/* Ranks in the subtree of the child at relative rank c (= vr + mask). */
static int child_size(int c, int mask, int n) { return mask < n - c ? mask : n - c; }

/* comm rank of relative rank v */
static int rank_of(int v, int root, int n) { return (v + root) % n; }

/* The tree message from comm rank `from`, of a length this rank cannot
 * know: probed, then received whole.  *len: its bytes. */
static char *recv_unknown(const struct cx *x, int from, long *len)
{
    struct msg_probe_info pi;
    msg_probe(mpi_world_of(x->c, from), cbits(x, STEP_TREE), 0, true, &pi);
    *len = (long)pi.len;
    char *buf = xmalloc(x, *len);
    cwait(x, crecv(x, from, STEP_TREE, buf, *len));
    return buf;
}

_Noreturn static void count_mismatch(const struct cx *x, int rank, uint64_t got, long want)
{
    mpi_fatal(x->call, "rank %d's block is %llu bytes where the root's counts and type make "
              "it %ld: do all ranks call the same collectives with matching counts and types?",
              rank, (unsigned long long)got, want);
}

_Noreturn static void malformed(const struct cx *x, int from)
{
    mpi_fatal(x->call, "the tree message from rank %d does not hold its subtree's records: do "
              "all ranks call the same collectives with the same TERN_MPI_VTREE_MAX?", from);
}

/* The relative ranks of vr's children, in ascending order; how many. */
static int children(int vr, int n, int c[32])
{
    int lb = lowbit(vr, n), nc = 0;
    for (int mask = 1; mask < lb && vr + mask < n; mask <<= 1)
        c[nc++] = vr + mask;
    return nc;
}

/* ---- Gatherv ---- */

/* A buffer of head bytes kept for this rank's own record (the caller's to
 * write) followed by its children's tree messages in relative rank order;
 * *len: bytes in all.  Each child's length is probed first, then all are
 * received into their places at once. */
static char *gather_children(const struct cx *x, int vr, int root, long head, long *len)
{
    int n = x->n, c[32], nc = children(vr, n, c);
    long at[33];
    at[0] = head;
    for (int i = 0; i < nc; i++) {
        struct msg_probe_info pi;
        msg_probe(mpi_world_of(x->c, rank_of(c[i], root, n)), cbits(x, STEP_TREE), 0, true,
                  &pi);
        at[i + 1] = at[i] + (long)pi.len;
    }
    *len = at[nc];
    char *buf = xmalloc(x, *len);
    struct msg_req *r[32];
    for (int i = 0; i < nc; i++)
        r[i] = crecv(x, rank_of(c[i], root, n), STEP_TREE, buf + at[i], at[i + 1] - at[i]);
    for (int i = 0; i < nc; i++)
        cwait(x, r[i]);
    return buf;
}

static void gatherv_leaf(const struct cx *x, const void *sendbuf, long count,
                         const struct mtype *st, int root)
{
    int n = x->n, vr = (x->me - root + n) % n;
    long mine = count * st->size;
    struct msg_req *direct = NULL;
    void *tmp = NULL;
    if (!in_tree(mine)) /* on its way while the subtree's blocks come in */
        direct = csend(x, root, STEP_DIRECT, send_view(x, sendbuf, count, st, &tmp), mine);
    long head = record_len(mine), len;
    char *buf = gather_children(x, vr, root, head, &len);
    record_put(buf, (uint64_t)mine);
    if (in_tree(mine))
        mpi_pack(sendbuf, count, st, buf + REC_HEAD);
    int parent = rank_of(vr - (vr & -vr), root, n);
    cwait(x, csend(x, parent, STEP_TREE, buf, len));
    free(buf);
    if (direct)
        cwait(x, direct);
    free(tmp);
}

static void gatherv_root(const struct cx *x, void *recvbuf, const int recvcounts[],
                         const int displs[], const struct mtype *rt)
{
    int n = x->n, root = x->me;
    long ext = mpi_extent(rt);
    struct msg_req **direct = xmalloc(x, (long)sizeof *direct * n);
    void **tmps = xmalloc(x, (long)sizeof *tmps * n);
    for (int r = 0; r < n; r++) { /* posted before the tree's messages come */
        long want = (long)recvcounts[r] * rt->size;
        char *at = (char *)recvbuf + (long)displs[r] * ext;
        direct[r] = NULL;
        tmps[r] = NULL;
        if (r != root && !in_tree(want))
            direct[r] = crecv(x, r, STEP_DIRECT, recv_view(x, at, recvcounts[r], rt, &tmps[r]),
                              want);
    }
    long len;
    char *buf = gather_children(x, 0, root, 0, &len), *p = buf, *end = buf + len;
    for (int v = 1; v < n; v++) {
        int r = rank_of(v, root, n);
        long want = (long)recvcounts[r] * rt->size;
        if (end - p < REC_HEAD)
            malformed(x, r);
        uint64_t got = record_get(p);
        p += REC_HEAD;
        if (got != (uint64_t)want)
            count_mismatch(x, r, got, want);
        if (in_tree(want)) {
            if (end - p < want)
                malformed(x, r);
            mpi_unpack(p, recvcounts[r], rt, (char *)recvbuf + (long)displs[r] * ext);
            p += want;
        }
    }
    if (p != end)
        malformed(x, rank_of(n - 1, root, n));
    free(buf);
    for (int r = 0; r < n; r++)
        if (direct[r]) {
            cwait(x, direct[r]);
            recv_done((char *)recvbuf + (long)displs[r] * ext, recvcounts[r], rt, tmps[r]);
        }
    free(direct);
    free(tmps);
}

int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm)
{
    if (mpi_is_inter(comm))
        return mpi_inter_gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                 recvtype, root, comm);
    struct cx x;
    TRY(begin(&x, "MPI_Gatherv", comm));
    TRY(check_root(&x, root));
    struct mtype *st = NULL, *rt = NULL;
    bool inplace = x.me == root && sendbuf == MPI_IN_PLACE;
    if (!inplace)
        TRY(check_data(&x, sendbuf, sendcount, sendtype, &st));
    if (x.me != root) {
        gatherv_leaf(&x, sendbuf, sendcount, st, root);
        return MPI_SUCCESS;
    }
    TRY(mpi_check_type(x.call, comm, recvtype, &rt));
    for (int i = 0; i < x.n; i++)
        TRY(mpi_check_count(x.call, comm, recvcounts[i]));
    if (!inplace) {
        long want = (long)recvcounts[root] * rt->size;
        if ((long)sendcount * st->size != want)
            count_mismatch(&x, root, (uint64_t)sendcount * (uint64_t)st->size, want);
        void *tmp;
        const void *v = send_view(&x, sendbuf, sendcount, st, &tmp);
        mpi_unpack(v, recvcounts[root], rt, (char *)recvbuf + (long)displs[root] * mpi_extent(rt));
        free(tmp);
    }
    gatherv_root(&x, recvbuf, recvcounts, displs, rt);
    return MPI_SUCCESS;
}

/* ---- Scatterv ---- */

/* Sends each child of relative rank vr its slice of msg, whose records
 * start at off[v - vr] for relative rank v (off has one more entry, the
 * end); the biggest subtree first, as it has the longest way down. */
static void scatter_children(const struct cx *x, int vr, int root, const char *msg,
                             const long *off)
{
    int n = x->n, c[32], nc = children(vr, n, c);
    struct msg_req *s[32];
    for (int i = nc - 1; i >= 0; i--) {
        int first = c[i] - vr, last = first + child_size(c[i], c[i] - vr, n);
        s[i] = csend(x, rank_of(c[i], root, n), STEP_TREE, msg + off[first],
                     off[last] - off[first]);
    }
    for (int i = 0; i < nc; i++)
        cwait(x, s[i]);
}

static void scatterv_root(const struct cx *x, const void *sendbuf, const int sendcounts[],
                          const int displs[], const struct mtype *st)
{
    int n = x->n, root = x->me;
    long ext = mpi_extent(st), total = 0;
    long *off = xmalloc(x, (long)sizeof *off * (n + 1));
    for (int v = 1; v < n; v++)
        total += record_len((long)sendcounts[rank_of(v, root, n)] * st->size);
    char *msg = xmalloc(x, total);
    off[0] = off[1] = 0;
    for (int v = 1; v < n; v++) {
        int r = rank_of(v, root, n);
        long len = (long)sendcounts[r] * st->size;
        record_put(msg + off[v], (uint64_t)len);
        if (in_tree(len))
            mpi_pack((const char *)sendbuf + (long)displs[r] * ext, sendcounts[r], st,
                     msg + off[v] + REC_HEAD);
        off[v + 1] = off[v] + record_len(len);
    }
    scatter_children(x, 0, root, msg, off);
    free(msg);
    free(off);
    struct msg_req **direct = xmalloc(x, (long)sizeof *direct * n);
    void **tmps = xmalloc(x, (long)sizeof *tmps * n);
    for (int r = 0; r < n; r++) {
        long len = (long)sendcounts[r] * st->size;
        direct[r] = NULL;
        tmps[r] = NULL;
        if (r != root && !in_tree(len))
            direct[r] = csend(x, r, STEP_DIRECT,
                              send_view(x, (const char *)sendbuf + (long)displs[r] * ext,
                                        sendcounts[r], st, &tmps[r]), len);
    }
    for (int r = 0; r < n; r++) {
        if (direct[r])
            cwait(x, direct[r]);
        free(tmps[r]);
    }
    free(direct);
    free(tmps);
}

static void scatterv_leaf(const struct cx *x, void *recvbuf, long count, const struct mtype *rt,
                          int root)
{
    int n = x->n, vr = (x->me - root + n) % n, sub = child_size(vr, lowbit(vr, n), n);
    long mine = count * rt->size, len;
    struct msg_req *direct = NULL;
    void *tmp = NULL;
    if (!in_tree(mine))
        direct = crecv(x, root, STEP_DIRECT, recv_view(x, recvbuf, count, rt, &tmp), mine);
    int parent = rank_of(vr - (vr & -vr), root, n);
    char *msg = recv_unknown(x, parent, &len);
    long *off = xmalloc(x, (long)sizeof *off * (sub + 1));
    off[0] = 0;
    for (int i = 0; i < sub; i++) { /* the records of this subtree, checked */
        if (len - off[i] < REC_HEAD)
            malformed(x, parent);
        uint64_t got = record_get(msg + off[i]);
        if (i == 0 && got != (uint64_t)mine)
            mpi_fatal(x->call, "the root sends %llu bytes where this rank's count and type "
                      "make %ld: do all ranks call the same collectives with matching counts "
                      "and types?", (unsigned long long)got, mine);
        off[i + 1] = off[i] + REC_HEAD + (got <= (uint64_t)vtree_max() ? (long)got : 0);
        if (off[i + 1] > len)
            malformed(x, parent);
    }
    if (off[sub] != len)
        malformed(x, parent);
    if (in_tree(mine))
        mpi_unpack(msg + REC_HEAD, count, rt, recvbuf);
    scatter_children(x, vr, root, msg, off);
    free(msg);
    free(off);
    if (direct) {
        cwait(x, direct);
        recv_done(recvbuf, count, rt, tmp);
    }
}

int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm)
{
    if (mpi_is_inter(comm))
        return mpi_inter_scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                                  recvtype, root, comm);
    struct cx x;
    TRY(begin(&x, "MPI_Scatterv", comm));
    TRY(check_root(&x, root));
    struct mtype *st = NULL, *rt = NULL;
    bool inplace = x.me == root && recvbuf == MPI_IN_PLACE;
    if (!inplace)
        TRY(check_data(&x, recvbuf, recvcount, recvtype, &rt));
    if (x.me != root) {
        scatterv_leaf(&x, recvbuf, recvcount, rt, root);
        return MPI_SUCCESS;
    }
    TRY(mpi_check_type(x.call, comm, sendtype, &st));
    for (int i = 0; i < x.n; i++)
        TRY(mpi_check_count(x.call, comm, sendcounts[i]));
    if (!inplace) {
        long have = (long)sendcounts[root] * st->size;
        if ((long)recvcount * rt->size != have)
            count_mismatch(&x, root, (uint64_t)recvcount * (uint64_t)rt->size, have);
        void *tmp;
        const void *v = send_view(&x, (const char *)sendbuf + (long)displs[root] *
                                  mpi_extent(st), sendcounts[root], st, &tmp);
        mpi_unpack(v, recvcount, rt, recvbuf);
        free(tmp);
    }
    scatterv_root(&x, sendbuf, sendcounts, displs, st);
    return MPI_SUCCESS;
}
