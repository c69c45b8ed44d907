/* Shared-memory windows (MPI-3.1 11.2.3): MPI_Win_allocate_shared over
 * the ranks MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) groups, each rank a
 * different size (one none): MPI_Win_shared_query finds every segment,
 * one after the other; a store by one rank is seen by a load of another
 * (after MPI_Win_sync and a barrier); an MPI_Put into a neighbour's
 * segment and an MPI_Fetch_and_op on a counter in rank 0's arrive in that
 * memory; MPI_PROC_NULL answers the lowest rank with memory; a window of
 * another flavor shares only a rank's own; a window over ranks of
 * different nodes is refused with MPI_ERR_RMA_SHARED.
 * "shmwin world": then a shared window over MPI_COMM_WORLD, errors fatal
 * (where its ranks cannot share memory, the job ends with the message).
 * Prints "shmwin ok: N ranks, node groups of K" (rank 0). */
#include <stdint.h>

#include "mpitest.h"

static MPI_Aint size_of(int r)
{
    return r == 1 ? 0 : (MPI_Aint)(sizeof(long) * (size_t)(4 + 3 * r));
}

static void shared(MPI_Comm node)
{
    int me, n;
    OK(MPI_Comm_rank(node, &me));
    OK(MPI_Comm_size(node, &n));
    long *mine = NULL;
    MPI_Win win;
    OK(MPI_Win_allocate_shared(size_of(me), sizeof(long), MPI_INFO_NULL, node, &mine, &win));
    int *fl, flag = 0;
    OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &fl, &flag));
    CHECK(flag && *fl == MPI_WIN_FLAVOR_SHARED, "flavor %d", *fl);

    /* Every segment: where the query says, right after the one before
     * (none, NULL, for a rank with no memory). */
    long *seg[64];
    char *end = NULL;
    CHECK(n <= 64, "%d ranks on a node", n);
    for (int r = 0; r < n; r++) {
        MPI_Aint sz = -1;
        int unit = 0;
        OK(MPI_Win_shared_query(win, r, &sz, &unit, &seg[r]));
        CHECK(sz == size_of(r) && unit == (int)sizeof(long), "rank %d: %ld bytes, unit %d", r,
              (long)sz, unit);
        if (sz == 0) {
            CHECK(seg[r] == NULL, "rank %d has no memory, at %p", r, (void *)seg[r]);
            continue;
        }
        CHECK(!end || (char *)seg[r] == end, "rank %d's segment at %p, the one before ends at %p",
              r, (void *)seg[r], (void *)end);
        end = (char *)seg[r] + sz;
    }
    CHECK(seg[me] == mine, "own segment at %p, the query says %p", (void *)mine,
          (void *)seg[me]);
    MPI_Aint sz;
    int unit;
    long *low;
    OK(MPI_Win_shared_query(win, MPI_PROC_NULL, &sz, &unit, &low));
    int first = n > 1 && size_of(0) == 0 ? 1 : 0;
    CHECK(low == seg[first] && sz == size_of(first), "MPI_PROC_NULL gave %p (%ld bytes)",
          (void *)low, (long)sz);

    /* Stores, then loads by the next rank. */
    long words = size_of(me) / (MPI_Aint)sizeof(long);
    OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
    for (long i = 0; i < words; i++)
        mine[i] = 1000000L * me + i;
    OK(MPI_Win_sync(win));
    OK(MPI_Barrier(node));
    OK(MPI_Win_sync(win));
    int next = (me + 1) % n;
    long nw = size_of(next) / (MPI_Aint)sizeof(long);
    for (long i = 0; i < nw; i++)
        CHECK(seg[next][i] == 1000000L * next + i, "rank %d's word %ld is %ld", next, i,
              seg[next][i]);
    OK(MPI_Barrier(node));

    /* A Put into the previous rank's last word, a counter in rank 0's first. */
    int prev = (me + n - 1) % n;
    long pw = size_of(prev) / (MPI_Aint)sizeof(long);
    long v = -7 - me, one = 1, old = -1;
    if (pw > 0)
        OK(MPI_Put(&v, 1, MPI_LONG, prev, pw - 1, 1, MPI_LONG, win));
    if (size_of(0) > 0)
        OK(MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 0, MPI_SUM, win));
    OK(MPI_Win_flush_all(win));
    OK(MPI_Win_unlock_all(win));
    OK(MPI_Barrier(node));
    if (words > 0)
        CHECK(mine[words - 1] == -7 - next, "last word %ld, not rank %d's put", mine[words - 1],
              next);
    if (me == 0 && words > 0)
        CHECK(mine[0] == n, "counter %ld after %d adds", mine[0], n);
    if (size_of(0) > 0)
        CHECK(old >= 0 && old < n, "fetched %ld", old);
    OK(MPI_Barrier(node));
    OK(MPI_Win_free(&win));
}

/* A window MPI_Win_allocate made: the query reaches the rank's own memory only. */
static void other_flavor(void)
{
    long *mine;
    MPI_Win win;
    OK(MPI_Win_allocate(64, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &win));
    MPI_Aint sz = -1;
    int unit = 0;
    long *p = (long *)1;
    OK(MPI_Win_shared_query(win, t_rank, &sz, &unit, &p));
    CHECK(p == mine && sz == 64 && unit == 8, "own: %p %ld %d", (void *)p, (long)sz, unit);
    if (t_size > 1) {
        OK(MPI_Win_shared_query(win, (t_rank + 1) % t_size, &sz, &unit, &p));
        CHECK(p == NULL && sz == 0, "another's: %p %ld", (void *)p, (long)sz);
    }
    OK(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    MPI_Comm node;
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int k;
    OK(MPI_Comm_size(node, &k));
    shared(node);
    shared(MPI_COMM_SELF);
    other_flavor();

    /* Over ranks of different nodes (when the job has them): refused, the
     * same on every rank. */
    int kmin, kmax;
    OK(MPI_Allreduce(&k, &kmin, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    OK(MPI_Allreduce(&k, &kmax, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    if (k < t_size) {
        OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        long *p = NULL;
        MPI_Win win = MPI_WIN_NULL;
        int rc = MPI_Win_allocate_shared(64, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &p, &win);
        int cls = -1;
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_RMA_SHARED && win == MPI_WIN_NULL, "across nodes: class %d", cls);
        OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    }
    OK(MPI_Comm_free(&node));
    if (argc > 1 && !strcmp(argv[1], "world"))
        shared(MPI_COMM_WORLD);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (t_rank == 0)
        printf("shmwin ok: %d ranks, node groups of %d\n", t_size, kmax);
    OK(MPI_Finalize());
    return 0;
}
