/* Nonblocking collectives.
 *
 * 1. NBX (Hoefler's sparse exchange): each rank sends a synchronous message
 *    to a few others it picks, receives whatever comes, and enters
 *    MPI_Ibarrier once its own sends are taken; it leaves when the barrier
 *    is done.  A rank in the barrier must go on receiving, so a barrier that
 *    finished inside MPI_Ibarrier (or progressed only in its own Wait)
 *    would hang here.
 * 2. Every other nonblocking collective, started all at once and finished
 *    in a mixed order with MPI_Waitall, against the blocking call's result;
 *    while they are open the ranks exchange point-to-point messages in a
 *    ring, so nothing finishes a collective but the library's progress.
 * 3. Three Ialltoalls of 40 KiB blocks open at once: more large sends than
 *    the engine has send slots, so posting a round waits for slots (and
 *    runs the progress hook, which must not step the half-posted round).
 * 4. On an intercommunicator between the lower and the upper half of the
 *    ranks: Ibcast from a root to the other group at sizes up to the
 *    engine's eager limit (the root's sends wait for send slots), Ibarrier,
 *    Ireduce, Iallreduce, Ireduce_scatter_block, Iallgather, Ialltoall,
 *    Igather, Iscatter, each against values computed here.
 * 5. Persistent collectives (MPI-4): made once, started many times with new
 *    data, each start checked against the blocking call; the ranks start
 *    two of them in opposite orders (MPI orders the inits, not the starts),
 *    and a derived type freed after the init still serves every start.
 *
 * Prints "nbc ok on N ranks: K messages" on rank 0. */
#include <stdbool.h>

#include "mpitest.h"

static int targets(int me, int n, int *to)
{
    int k = 0;
    for (int d = 1; d < n && k < 3; d += 2)   /* 1, 3, 5 hops ahead */
        to[k++] = (me + d * (me % 2 + 1)) % n;
    return k;
}

static long nbx(void)
{
    int to[3], nt = targets(t_rank, t_size, to), got = 0;
    int mine[3];
    MPI_Request sends[3], bar = MPI_REQUEST_NULL;
    for (int i = 0; i < nt; i++) {
        mine[i] = t_rank * 1000 + to[i];
        OK(MPI_Issend(&mine[i], 1, MPI_INT, to[i], 7, MPI_COMM_WORLD, &sends[i]));
    }
    bool in_barrier = false;
    for (long spins = 0;; spins++) {
        int flag;
        MPI_Status st;
        OK(MPI_Iprobe(MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &flag, &st));
        if (flag) {
            int v;
            OK(MPI_Recv(&v, 1, MPI_INT, st.MPI_SOURCE, 7, MPI_COMM_WORLD, &st));
            CHECK(v == st.MPI_SOURCE * 1000 + t_rank, "NBX: %d from %d", v, st.MPI_SOURCE);
            got++;
        }
        if (!in_barrier) {
            int done;
            OK(MPI_Testall(nt, sends, &done, MPI_STATUSES_IGNORE));
            if (done) {
                OK(MPI_Ibarrier(MPI_COMM_WORLD, &bar));
                in_barrier = true;
            }
        } else {
            int done;
            OK(MPI_Test(&bar, &done, MPI_STATUS_IGNORE));
            if (done)
                break;
        }
        CHECK(spins < 100000000L, "NBX did not end");
    }
    /* Everything sent to this rank came before the barrier ended. */
    int expect = 0;
    for (int r = 0; r < t_size; r++) {
        int tr[3], k = targets(r, t_size, tr);
        for (int i = 0; i < k; i++)
            expect += tr[i] == t_rank;
    }
    CHECK(got == expect, "NBX: %d messages came, %d were sent here", got, expect);
    long all = 0, g = got;
    OK(MPI_Allreduce(&g, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    return all;
}

#define N 37

static void all_at_once(void)
{
    int n = t_size, me = t_rank;
    double v[N], sum[N], sum_b[N], red[N], red_b[N], scan[N], scan_b[N], ex[N], ex_b[N];
    for (int i = 0; i < N; i++)
        v[i] = me * 100 + i + 0.5;
    int *all = malloc(sizeof(int) * (size_t)n * 2), *all_b = all + n;
    int *a2a_in = malloc(sizeof(int) * (size_t)n * 4), *a2a = a2a_in + n, *a2a_b = a2a + n,
        *bc = a2a_b + n;
    int *gv, *gv_b;
    int *counts = malloc(sizeof(int) * (size_t)n * 2), *displs = counts + n;
    long tot = 0;
    for (int r = 0; r < n; r++) {
        counts[r] = r + 1;
        displs[r] = (int)tot;
        tot += r + 1;
    }
    gv = malloc(sizeof(int) * (size_t)(2 * tot + 8));
    gv_b = gv + tot + 4;
    int mine_v[64];
    for (int i = 0; i <= me && i < 64; i++)
        mine_v[i] = me * 10 + i;
    for (int r = 0; r < n; r++)
        a2a_in[r] = me * 1000 + r;
    int root = n - 1, token = me == root ? 4242 : -1;
    bc[0] = token;
    double ex_init = -1;
    for (int i = 0; i < N; i++)
        ex[i] = ex_init;

    MPI_Request rq[8];
    OK(MPI_Iallreduce(v, sum, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[0]));
    OK(MPI_Ireduce(v, red, N, MPI_DOUBLE, MPI_MAX, root, MPI_COMM_WORLD, &rq[1]));
    OK(MPI_Iallgather(&me, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD, &rq[2]));
    OK(MPI_Ialltoall(a2a_in, 1, MPI_INT, a2a, 1, MPI_INT, MPI_COMM_WORLD, &rq[3]));
    OK(MPI_Ibcast(bc, 1, MPI_INT, root, MPI_COMM_WORLD, &rq[4]));
    OK(MPI_Iscan(v, scan, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[5]));
    OK(MPI_Iexscan(v, ex, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[6]));
    OK(MPI_Igatherv(mine_v, me + 1, MPI_INT, gv, counts, displs, MPI_INT, 0, MPI_COMM_WORLD,
                    &rq[7]));
    /* Traffic of its own while they are open: a ring, twice round. */
    for (int k = 0; k < 2; k++) {
        int out = me + k, in = -1;
        OK(MPI_Sendrecv(&out, 1, MPI_INT, (me + 1) % n, 9, &in, 1, MPI_INT, (me - 1 + n) % n,
                        9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(in == (me - 1 + n) % n + k, "ring: %d", in);
    }
    /* Finish them last first. */
    for (int i = 7; i >= 0; i--)
        OK(MPI_Wait(&rq[i], MPI_STATUS_IGNORE));

    OK(MPI_Allreduce(v, sum_b, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    OK(MPI_Reduce(v, red_b, N, MPI_DOUBLE, MPI_MAX, root, MPI_COMM_WORLD));
    OK(MPI_Allgather(&me, 1, MPI_INT, all_b, 1, MPI_INT, MPI_COMM_WORLD));
    OK(MPI_Alltoall(a2a_in, 1, MPI_INT, a2a_b, 1, MPI_INT, MPI_COMM_WORLD));
    OK(MPI_Scan(v, scan_b, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    OK(MPI_Exscan(v, ex_b, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    OK(MPI_Gatherv(mine_v, me + 1, MPI_INT, gv_b, counts, displs, MPI_INT, 0, MPI_COMM_WORLD));
    for (int i = 0; i < N; i++) {
        CHECK(sum[i] == sum_b[i], "Iallreduce[%d] %g, Allreduce %g", i, sum[i], sum_b[i]);
        CHECK(scan[i] == scan_b[i], "Iscan[%d] %g, Scan %g", i, scan[i], scan_b[i]);
        if (me == root)
            CHECK(red[i] == red_b[i], "Ireduce[%d] %g, Reduce %g", i, red[i], red_b[i]);
        if (me > 0)
            CHECK(ex[i] == ex_b[i], "Iexscan[%d] %g, Exscan %g", i, ex[i], ex_b[i]);
    }
    for (int r = 0; r < n; r++) {
        CHECK(all[r] == r && all_b[r] == r, "Iallgather[%d] %d", r, all[r]);
        CHECK(a2a[r] == r * 1000 + me && a2a[r] == a2a_b[r], "Ialltoall[%d] %d", r, a2a[r]);
    }
    CHECK(bc[0] == 4242, "Ibcast gave %d", bc[0]);
    if (me == 0)
        for (long i = 0; i < tot; i++)
            CHECK(gv[i] == gv_b[i], "Igatherv[%ld] %d, Gatherv %d", i, gv[i], gv_b[i]);
    free(all);
    free(a2a_in);
    free(gv);
    free(counts);
}

static void large_rounds(void)
{
    enum { K = 3, B = 40 * 1024 };
    int n = t_size, me = t_rank;
    unsigned char *out[K], *in[K];
    MPI_Request r[K];
    for (int k = 0; k < K; k++) {
        out[k] = malloc((size_t)B * (size_t)n);
        in[k] = malloc((size_t)B * (size_t)n);
        CHECK(out[k] && in[k], "no memory");
        for (int j = 0; j < n; j++)
            fill(out[k] + (size_t)B * (size_t)j, B, (me * n + j) * K + k);
        memset(in[k], 0, (size_t)B * (size_t)n);
        OK(MPI_Ialltoall(out[k], B, MPI_BYTE, in[k], B, MPI_BYTE, MPI_COMM_WORLD, &r[k]));
    }
    OK(MPI_Waitall(K, r, MPI_STATUSES_IGNORE));
    for (int k = 0; k < K; k++) {
        for (int j = 0; j < n; j++)
            CHECK(first_bad(in[k] + (size_t)B * (size_t)j, B, (j * n + me) * K + k) < 0,
                  "Ialltoall %d: the block from rank %d is wrong at %ld", k, j,
                  first_bad(in[k] + (size_t)B * (size_t)j, B, (j * n + me) * K + k));
        free(out[k]);
        free(in[k]);
    }
}

/* Ibcasts of 1 to 16384 ints on inter from the low group's rank 0. */
static void inter_bcasts(MPI_Comm inter, int low, int lrank)
{
    MPI_Request r;
    for (int count = 1; count <= 16384; count *= 2) {
        int *buf = malloc(sizeof(int) * (size_t)count);
        CHECK(buf, "no memory");
        for (int i = 0; i < count; i++)
            buf[i] = low && lrank == 0 ? i * 3 + count : -1;
        int root = low ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        OK(MPI_Ibcast(buf, count, MPI_INT, root, inter, &r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        for (int i = 0; i < count; i++)
            CHECK(buf[i] == (low ? (lrank == 0 ? i * 3 + count : -1) : i * 3 + count),
                  "inter Ibcast of %d: [%d] = %d", count, i, buf[i]);
        free(buf);
    }
}

static void intercomm(void)
{
    int n = t_size, me = t_rank;
    if (n < 2)
        return;
    int half = n / 2, low = me < half, lsize = low ? half : n - half;
    int rsize = n - lsize, rbase = low ? half : 0, lrank = low ? me : me - half;
    MPI_Comm local, inter;
    OK(MPI_Comm_split(MPI_COMM_WORLD, low, me, &local));
    OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, low ? half : 0, 7, &inter));
    MPI_Request r;
    /* Ibcast: the low group's rank 0 to the high group. */
    for (int rep = 0; rep < 4; rep++)
        inter_bcasts(inter, low, lrank);
    OK(MPI_Ibarrier(inter, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    /* Reductions: sums over the other group's world ranks. */
    int rsum = 0;
    for (int j = 0; j < rsize; j++)
        rsum += rbase + j;
    int v[2] = {me, 2 * me}, res[2] = {0, 0};
    OK(MPI_Iallreduce(v, res, 2, MPI_INT, MPI_SUM, inter, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(res[0] == rsum && res[1] == 2 * rsum, "inter Iallreduce %d %d, want %d", res[0],
          res[1], rsum);
    /* The same as a persistent collective, started twice. */
    OK(MPI_Allreduce_init(v, res, 2, MPI_INT, MPI_SUM, inter, MPI_INFO_NULL, &r));
    for (int k = 0; k < 2; k++) {
        res[0] = res[1] = -1;
        OK(MPI_Start(&r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK(res[0] == rsum && res[1] == 2 * rsum, "inter Allreduce_init %d, want %d", res[0],
              rsum);
    }
    OK(MPI_Request_free(&r));
    res[0] = res[1] = -1;
    int root = low ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    OK(MPI_Ireduce(v, res, 2, MPI_INT, MPI_SUM, root, inter, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    if (low && lrank == 0)
        CHECK(res[0] == rsum && res[1] == 2 * rsum, "inter Ireduce %d, want %d", res[0], rsum);
    /* Reduce_scatter_block: vectors of 2 x lsize (= 2 x rsize when the
     * halves are equal; MPI wants the two groups' totals equal). */
    if (lsize == rsize) {
        int *vec = malloc(sizeof(int) * 2 * (size_t)lsize), got[2];
        CHECK(vec, "no memory");
        for (int i = 0; i < 2 * lsize; i++)
            vec[i] = me * 1000 + i;
        OK(MPI_Ireduce_scatter_block(vec, got, 2, MPI_INT, MPI_SUM, inter, &r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        for (int k = 0; k < 2; k++)
            CHECK(got[k] == rsum * 1000 + rsize * (2 * lrank + k),
                  "inter Ireduce_scatter_block[%d] %d", k, got[k]);
        free(vec);
    }
    /* Iallgather, Ialltoall: blocks from every rank of the other group. */
    int *all = malloc(sizeof(int) * 2 * (size_t)n), *out = malloc(sizeof(int) * (size_t)n);
    CHECK(all && out, "no memory");
    OK(MPI_Iallgather(v, 2, MPI_INT, all, 2, MPI_INT, inter, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int j = 0; j < rsize; j++)
        CHECK(all[2 * j] == rbase + j && all[2 * j + 1] == 2 * (rbase + j),
              "inter Iallgather block %d: %d", j, all[2 * j]);
    for (int j = 0; j < rsize; j++)
        out[j] = me * 100 + j;
    OK(MPI_Ialltoall(out, 1, MPI_INT, all, 1, MPI_INT, inter, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int j = 0; j < rsize; j++)
        CHECK(all[j] == (rbase + j) * 100 + lrank, "inter Ialltoall from %d: %d", j, all[j]);
    /* Igather to, and Iscatter from, the high group's rank 0. */
    root = low ? 0 : (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL);
    OK(MPI_Igather(&me, 1, MPI_INT, all, 1, MPI_INT, root, inter, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    if (!low && lrank == 0)
        for (int j = 0; j < rsize; j++)
            CHECK(all[j] == j, "inter Igather from %d: %d", j, all[j]);
    for (int j = 0; j < rsize; j++)
        out[j] = 5000 + j;
    int one = -1;
    OK(MPI_Iscatter(out, 1, MPI_INT, &one, 1, MPI_INT, root, inter, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    if (low)
        CHECK(one == 5000 + lrank, "inter Iscatter gave %d", one);
    free(all);
    free(out);
    OK(MPI_Comm_free(&inter));
    OK(MPI_Comm_free(&local));
}

static void persistent(void)
{
    int n = t_size, me = t_rank;
    int v[4], sum[4], sum_b[4], root_val = -1, *all = malloc(sizeof(int) * 2 * (size_t)n);
    int pair[2], *all_b = malloc(sizeof(int) * 2 * (size_t)n);
    CHECK(all && all_b, "no memory");
    MPI_Request r[4];
    /* pair as a derived type: two ints, freed by the program at once */
    MPI_Datatype two;
    OK(MPI_Type_contiguous(2, MPI_INT, &two));
    OK(MPI_Type_commit(&two));
    OK(MPI_Allreduce_init(v, sum, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]));
    OK(MPI_Bcast_init(&root_val, 1, MPI_INT, n - 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]));
    OK(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &r[2]));
    OK(MPI_Allgather_init(pair, 1, two, all, 2, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &r[3]));
    OK(MPI_Type_free(&two));
    for (int rep = 0; rep < 10; rep++) {
        for (int i = 0; i < 4; i++)
            v[i] = me * 100 + rep * 10 + i;
        pair[0] = me + rep;
        pair[1] = -me * rep;
        if (me == n - 1)
            root_val = 1000 + rep;
        /* opposite orders on even and odd ranks */
        if (me % 2) {
            OK(MPI_Start(&r[2]));
            OK(MPI_Start(&r[1]));
            OK(MPI_Startall(2, (MPI_Request[]){r[0], r[3]}));
        } else {
            OK(MPI_Start(&r[3]));
            OK(MPI_Start(&r[0]));
            OK(MPI_Start(&r[1]));
            OK(MPI_Start(&r[2]));
        }
        OK(MPI_Waitall(4, r, MPI_STATUSES_IGNORE));
        for (int i = 0; i < 4; i++)
            CHECK(r[i] != MPI_REQUEST_NULL, "a persistent request became MPI_REQUEST_NULL");
        OK(MPI_Allreduce(v, sum_b, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        OK(MPI_Allgather(pair, 2, MPI_INT, all_b, 2, MPI_INT, MPI_COMM_WORLD));
        for (int i = 0; i < 4; i++)
            CHECK(sum[i] == sum_b[i], "start %d: Allreduce_init[%d] %d, Allreduce %d", rep, i,
                  sum[i], sum_b[i]);
        CHECK(root_val == 1000 + rep, "start %d: Bcast_init gave %d", rep, root_val);
        for (int i = 0; i < 2 * n; i++)
            CHECK(all[i] == all_b[i], "start %d: Allgather_init[%d] %d, Allgather %d", rep, i,
                  all[i], all_b[i]);
    }
    for (int i = 0; i < 4; i++)
        OK(MPI_Request_free(&r[i]));
    free(all);
    free(all_b);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    long msgs = 0;
    for (int rep = 0; rep < 20; rep++)
        msgs += nbx();
    for (int rep = 0; rep < 5; rep++)
        all_at_once();
    large_rounds();
    intercomm();
    persistent();
    if (t_rank == 0)
        printf("nbc ok on %d ranks: %ld messages\n", t_size, msgs);
    return MPI_Finalize();
}
