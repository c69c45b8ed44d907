/* Every collective against the answer computed here serially, on
 * MPI_COMM_WORLD and on a communicator split from it (reversed order),
 * with several counts (eager and rendezvous sizes), every root, MPI_IN_PLACE,
 * a non-contiguous datatype and a non-commutative user operation.
 * Prints "coll ok on N ranks". */
#include "mpitest.h"

static MPI_Comm comm;
static int me, n;

static double v(int r, long i) { return r * 1000.0 + (double)(i % 997); }

/* Non-commutative: 2x2 integer matrices mod 1009, a (x) b = a * b. */
typedef struct { int m[4]; } mat;
static mat matv(int r, long i)
{
    mat a = {{(r + 1) % 1009, (int)(i % 7), (r * 3 + 1) % 1009, (int)((i + r) % 5) + 1}};
    return a;
}
static mat mul(mat a, mat b)
{
    mat c;
    c.m[0] = (a.m[0] * b.m[0] + a.m[1] * b.m[2]) % 1009;
    c.m[1] = (a.m[0] * b.m[1] + a.m[1] * b.m[3]) % 1009;
    c.m[2] = (a.m[2] * b.m[0] + a.m[3] * b.m[2]) % 1009;
    c.m[3] = (a.m[2] * b.m[1] + a.m[3] * b.m[3]) % 1009;
    return c;
}
static void matmul_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    mat *a = in, *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = mul(a[i], b[i]); /* inout = in (x) inout */
}
static int mateq(mat a, mat b) { return !memcmp(&a, &b, sizeof a); }

static const int counts[] = {0, 1, 5, 1000, 17000}; /* 17000 ints: above the eager limit */
#define NC 5

static void bcast_tests(void)
{
    for (int c = 0; c < NC; c++)
        for (int root = 0; root < n; root++) {
            int cnt = counts[c];
            double *b = malloc(sizeof(double) * (size_t)(cnt + 1));
            for (int i = 0; i < cnt; i++)
                b[i] = me == root ? v(root, i) : -1;
            OK(MPI_Bcast(b, cnt, MPI_DOUBLE, root, comm));
            for (int i = 0; i < cnt; i++)
                CHECK(b[i] == v(root, i), "bcast root %d count %d [%d]=%g", root, cnt, i, b[i]);
            free(b);
        }
    /* Non-contiguous: every other int of 2*k */
    MPI_Datatype vec;
    OK(MPI_Type_vector(100, 1, 2, MPI_INT, &vec));
    OK(MPI_Type_commit(&vec));
    int buf[200];
    for (int i = 0; i < 200; i++)
        buf[i] = me == 0 ? i : (i % 2 ? -7 : -1);
    OK(MPI_Bcast(buf, 1, vec, 0, comm));
    for (int i = 0; i < 200; i++)
        CHECK(buf[i] == (i % 2 && me ? -7 : i % 2 ? i : i), "vector bcast [%d]=%d", i, buf[i]);
    OK(MPI_Type_free(&vec));
}

static void reduce_tests(void)
{
    for (int c = 0; c < NC; c++) {
        int cnt = counts[c];
        double *s = malloc(sizeof(double) * (size_t)(cnt + 1)),
               *r = malloc(sizeof(double) * (size_t)(cnt + 1));
        long *ls = malloc(sizeof(long) * (size_t)(cnt + 1)),
             *lr = malloc(sizeof(long) * (size_t)(cnt + 1));
        for (int i = 0; i < cnt; i++) {
            s[i] = v(me, i);
            ls[i] = (long)me * 3 + i;
        }
        for (int root = 0; root < n; root += (n > 4 ? n / 3 : 1)) {
            OK(MPI_Reduce(s, r, cnt, MPI_DOUBLE, MPI_SUM, root, comm));
            if (me == root)
                for (int i = 0; i < cnt; i++) {
                    double want = 0;
                    for (int k = 0; k < n; k++)
                        want += v(k, i);
                    CHECK(r[i] == want, "reduce sum root %d [%d] %g != %g", root, i, r[i], want);
                }
            /* IN_PLACE at the root */
            for (int i = 0; i < cnt; i++)
                lr[i] = ls[i];
            OK(MPI_Reduce(me == root ? MPI_IN_PLACE : ls, lr, cnt, MPI_LONG, MPI_MAX, root,
                          comm));
            if (me == root)
                for (int i = 0; i < cnt; i++)
                    CHECK(lr[i] == (long)(n - 1) * 3 + i, "reduce max in place [%d]", i);
        }
        OK(MPI_Allreduce(s, r, cnt, MPI_DOUBLE, MPI_MIN, comm));
        for (int i = 0; i < cnt; i++)
            CHECK(r[i] == v(0, i), "allreduce min [%d]", i);
        for (int i = 0; i < cnt; i++)
            lr[i] = ls[i];
        OK(MPI_Allreduce(MPI_IN_PLACE, lr, cnt, MPI_LONG, MPI_SUM, comm));
        for (int i = 0; i < cnt; i++)
            CHECK(lr[i] == 3L * n * (n - 1) / 2 + (long)n * i, "allreduce in place [%d]", i);
        /* Scan / Exscan */
        OK(MPI_Scan(ls, lr, cnt, MPI_LONG, MPI_SUM, comm));
        for (int i = 0; i < cnt; i++)
            CHECK(lr[i] == 3L * me * (me + 1) / 2 + (long)(me + 1) * i, "scan [%d]", i);
        for (int i = 0; i < cnt; i++)
            lr[i] = -5;
        OK(MPI_Exscan(ls, lr, cnt, MPI_LONG, MPI_SUM, comm));
        for (int i = 0; i < cnt && me > 0; i++)
            CHECK(lr[i] == 3L * (me - 1) * me / 2 + (long)me * i, "exscan [%d]", i);
        /* ... and in place: the input is taken from the receive buffer. */
        for (int i = 0; i < cnt; i++)
            lr[i] = ls[i];
        OK(MPI_Scan(MPI_IN_PLACE, lr, cnt, MPI_LONG, MPI_SUM, comm));
        for (int i = 0; i < cnt; i++)
            CHECK(lr[i] == 3L * me * (me + 1) / 2 + (long)(me + 1) * i, "scan in place [%d]", i);
        for (int i = 0; i < cnt; i++)
            lr[i] = ls[i];
        OK(MPI_Exscan(MPI_IN_PLACE, lr, cnt, MPI_LONG, MPI_SUM, comm));
        for (int i = 0; i < cnt && me > 0; i++)
            CHECK(lr[i] == 3L * (me - 1) * me / 2 + (long)me * i, "exscan in place [%d]", i);
        free(s);
        free(r);
        free(ls);
        free(lr);
    }
    /* Non-commutative user operation: results in rank order. */
    MPI_Op op;
    MPI_Datatype mt;
    OK(MPI_Type_contiguous(4, MPI_INT, &mt));
    OK(MPI_Type_commit(&mt));
    OK(MPI_Op_create(matmul_op, 0, &op));
    const int m = 50;
    mat s[50], r[50];
    for (int i = 0; i < m; i++)
        s[i] = matv(me, i);
    for (int root = 0; root < n; root++) {
        OK(MPI_Reduce(s, r, m, mt, op, root, comm));
        if (me == root)
            for (int i = 0; i < m; i++) {
                mat want = matv(0, i);
                for (int k = 1; k < n; k++)
                    want = mul(want, matv(k, i));
                CHECK(mateq(r[i], want), "non-commutative reduce root %d [%d]", root, i);
            }
    }
    OK(MPI_Allreduce(s, r, m, mt, op, comm));
    for (int i = 0; i < m; i++) {
        mat want = matv(0, i);
        for (int k = 1; k < n; k++)
            want = mul(want, matv(k, i));
        CHECK(mateq(r[i], want), "non-commutative allreduce [%d]", i);
    }
    OK(MPI_Scan(s, r, m, mt, op, comm));
    for (int i = 0; i < m; i++) {
        mat want = matv(0, i);
        for (int k = 1; k <= me; k++)
            want = mul(want, matv(k, i));
        CHECK(mateq(r[i], want), "non-commutative scan [%d]", i);
    }
    OK(MPI_Exscan(s, r, m, mt, op, comm));
    for (int i = 0; i < m && me > 0; i++) {
        mat want = matv(0, i);
        for (int k = 1; k < me; k++)
            want = mul(want, matv(k, i));
        CHECK(mateq(r[i], want), "non-commutative exscan [%d]", i);
    }
    int commute = -1;
    OK(MPI_Op_commutative(op, &commute));
    CHECK(commute == 0, "Op_commutative");
    OK(MPI_Op_free(&op));
    OK(MPI_Type_free(&mt));
    /* Reduce_scatter(_block) */
    int *rc = malloc(sizeof(int) * (size_t)n), tot = 0;
    for (int i = 0; i < n; i++)
        tot += rc[i] = i % 3 + 1;
    int *in = malloc(sizeof(int) * (size_t)tot), out[8];
    for (int i = 0; i < tot; i++)
        in[i] = me + i;
    OK(MPI_Reduce_scatter(in, out, rc, MPI_INT, MPI_SUM, comm));
    int off = 0;
    for (int i = 0; i < me; i++)
        off += rc[i];
    for (int i = 0; i < rc[me]; i++)
        CHECK(out[i] == n * (n - 1) / 2 + n * (off + i), "reduce_scatter [%d]", i);
    int *in2 = malloc(sizeof(int) * (size_t)(2 * n));
    for (int i = 0; i < 2 * n; i++)
        in2[i] = me * i;
    OK(MPI_Reduce_scatter_block(in2, out, 2, MPI_INT, MPI_MAX, comm));
    CHECK(out[0] == (n - 1) * 2 * me && out[1] == (n - 1) * (2 * me + 1),
          "reduce_scatter_block %d %d", out[0], out[1]);
    /* In place: the whole input is in the receive buffer, this rank's block
     * of the result goes to its start. */
    for (int i = 0; i < tot; i++)
        in[i] = me + i;
    OK(MPI_Reduce_scatter(MPI_IN_PLACE, in, rc, MPI_INT, MPI_SUM, comm));
    for (int i = 0; i < rc[me]; i++)
        CHECK(in[i] == n * (n - 1) / 2 + n * (off + i), "reduce_scatter in place [%d]=%d", i,
              in[i]);
    for (int i = 0; i < 2 * n; i++)
        in2[i] = me * i;
    OK(MPI_Reduce_scatter_block(MPI_IN_PLACE, in2, 2, MPI_INT, MPI_MAX, comm));
    CHECK(in2[0] == (n - 1) * 2 * me && in2[1] == (n - 1) * (2 * me + 1),
          "reduce_scatter_block in place %d %d", in2[0], in2[1]);
    free(rc);
    free(in);
    free(in2);
}

static void gather_tests(void)
{
    for (int c = 0; c < NC; c++) {
        int cnt = counts[c];
        int *s = malloc(sizeof(int) * (size_t)(cnt + 1));
        int *all = malloc(sizeof(int) * (size_t)(n * cnt + 1));
        for (int i = 0; i < cnt; i++)
            s[i] = me * 100000 + i;
        for (int root = 0; root < n; root++) {
            for (int i = 0; i < n * cnt; i++)
                all[i] = -1;
            if (me == root)
                memcpy(all + root * cnt, s, sizeof(int) * (size_t)cnt);
            OK(MPI_Gather(me == root && c % 2 ? MPI_IN_PLACE : s, cnt, MPI_INT, all, cnt,
                          MPI_INT, root, comm));
            if (me == root)
                for (int k = 0; k < n; k++)
                    for (int i = 0; i < cnt; i++)
                        CHECK(all[k * cnt + i] == k * 100000 + i, "gather root %d from %d [%d]",
                              root, k, i);
            /* Scatter it back */
            for (int i = 0; i < cnt; i++)
                s[i] = -1;
            if (me == root)
                for (int k = 0; k < n; k++)
                    for (int i = 0; i < cnt; i++)
                        all[k * cnt + i] = k * 7 + i + root;
            OK(MPI_Scatter(all, cnt, MPI_INT, s, cnt, MPI_INT, root, comm));
            for (int i = 0; i < cnt; i++)
                CHECK(s[i] == me * 7 + i + root, "scatter root %d [%d]=%d", root, i, s[i]);
            /* In place at the root: its own block stays where it is. */
            for (int i = 0; i < cnt; i++)
                s[i] = -1;
            OK(MPI_Scatter(all, cnt, MPI_INT, me == root ? MPI_IN_PLACE : s, cnt, MPI_INT, root,
                           comm));
            for (int i = 0; i < cnt; i++)
                CHECK(me == root ? s[i] == -1 && all[root * cnt + i] == root * 8 + i
                                 : s[i] == me * 7 + i + root,
                      "scatter in place, root %d [%d]", root, i);
            for (int i = 0; i < cnt; i++)
                s[i] = me * 100000 + i;
        }
        /* Allgather, also in place */
        OK(MPI_Allgather(s, cnt, MPI_INT, all, cnt, MPI_INT, comm));
        for (int k = 0; k < n * cnt; k++)
            CHECK(all[k] == (k / cnt) * 100000 + k % cnt, "allgather [%d]", k);
        for (int k = 0; k < n * cnt; k++)
            all[k] = k / cnt == me ? all[k] : -3;
        OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, cnt, MPI_INT, comm));
        for (int k = 0; k < n * cnt; k++)
            CHECK(all[k] == (k / cnt) * 100000 + k % cnt, "allgather in place [%d]", k);
        free(s);
        free(all);
    }
    /* v-variants: rank k contributes k%4+1 ints at displacement 5k */
    int *rcounts = malloc(sizeof(int) * (size_t)n), *displs = malloc(sizeof(int) * (size_t)n);
    for (int k = 0; k < n; k++) {
        rcounts[k] = k % 4 + 1;
        displs[k] = 5 * k;
    }
    int mine[4], *all = malloc(sizeof(int) * (size_t)(5 * n));
    for (int i = 0; i < rcounts[me]; i++)
        mine[i] = me * 10 + i;
    for (int root = 0; root < n; root++) {
        for (int i = 0; i < 5 * n; i++)
            all[i] = -1;
        OK(MPI_Gatherv(mine, rcounts[me], MPI_INT, all, rcounts, displs, MPI_INT, root, comm));
        if (me == root)
            for (int k = 0; k < n; k++)
                for (int i = 0; i < 5; i++)
                    CHECK(all[5 * k + i] == (i < rcounts[k] ? k * 10 + i : -1),
                          "gatherv root %d [%d][%d]", root, k, i);
        int got[4] = {-1, -1, -1, -1};
        OK(MPI_Scatterv(all, rcounts, displs, MPI_INT, got, rcounts[me], MPI_INT, root, comm));
        for (int i = 0; i < rcounts[me]; i++)
            CHECK(got[i] == me * 10 + i, "scatterv root %d [%d]", root, i);
    }
    for (int i = 0; i < 5 * n; i++)
        all[i] = -1;
    OK(MPI_Allgatherv(mine, rcounts[me], MPI_INT, all, rcounts, displs, MPI_INT, comm));
    for (int k = 0; k < n; k++)
        for (int i = 0; i < 5; i++)
            CHECK(all[5 * k + i] == (i < rcounts[k] ? k * 10 + i : -1), "allgatherv [%d][%d]",
                  k, i);
    /* In place: this rank's part is already at its displacement. */
    for (int i = 0; i < 5 * n; i++)
        all[i] = i >= displs[me] && i < displs[me] + rcounts[me] ? mine[i - displs[me]] : -1;
    OK(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, rcounts, displs, MPI_INT, comm));
    for (int k = 0; k < n; k++)
        for (int i = 0; i < 5; i++)
            CHECK(all[5 * k + i] == (i < rcounts[k] ? k * 10 + i : -1),
                  "allgatherv in place [%d][%d]", k, i);
    free(rcounts);
    free(displs);
    free(all);
}

static void alltoall_tests(void)
{
    for (int c = 0; c < NC; c++) {
        /* 9000 longs, 72 KB a peer, are above the eager limit too, in half
         * the memory: a 64 MiB node holds four ranks of this test
         * (tests/test_yod_ppn.py). */
        int cnt = counts[c] > 9000 ? 9000 : counts[c];
        long *s = malloc(sizeof(long) * (size_t)(n * cnt + 1)),
             *r = malloc(sizeof(long) * (size_t)(n * cnt + 1));
        for (int k = 0; k < n; k++)
            for (int i = 0; i < cnt; i++)
                s[k * cnt + i] = me * 1000000L + k * 1000 + i;
        OK(MPI_Alltoall(s, cnt, MPI_LONG, r, cnt, MPI_LONG, comm));
        for (int k = 0; k < n; k++)
            for (int i = 0; i < cnt; i++)
                CHECK(r[k * cnt + i] == k * 1000000L + me * 1000 + i, "alltoall from %d [%d]",
                      k, i);
        OK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, s, cnt, MPI_LONG, comm));
        for (int k = 0; k < n * cnt; k++)
            CHECK(s[k] == r[k], "alltoall in place [%d]", k);
        free(s);
        free(r);
    }
    /* Alltoallv: rank a sends ((a+b)%3)*scale ints to rank b, small and
     * large (rendezvous) parts; then the same in place, where what goes to
     * rank b is taken from, and replaced in, the receive buffer (the counts
     * are symmetric, as MPI_IN_PLACE needs). */
    static const int scales[] = {1, 11000};   /* 22000 ints: above the eager limit */
    for (int sci = 0; sci < 2; sci++) {
        int scale = scales[sci];
        int *sc = malloc(sizeof(int) * (size_t)n), *sd = malloc(sizeof(int) * (size_t)n),
            *rc = malloc(sizeof(int) * (size_t)n), *rd = malloc(sizeof(int) * (size_t)n);
        int st = 0, rt = 0;
        for (int k = 0; k < n; k++) {
            sc[k] = (me + k) % 3 * scale;
            sd[k] = st;
            st += sc[k] + 1;
            rc[k] = (k + me) % 3 * scale;
            rd[k] = rt;
            rt += rc[k] + 2;
        }
        int *s = malloc(sizeof(int) * (size_t)st + 1), *r = malloc(sizeof(int) * (size_t)rt + 1);
        for (int k = 0; k < n; k++)
            for (int i = 0; i < sc[k]; i++)
                s[sd[k] + i] = me * 100000 + k * 10000 + i;
        for (int i = 0; i < rt; i++)
            r[i] = -9;
        OK(MPI_Alltoallv(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, comm));
        for (int k = 0; k < n; k++)
            for (int i = 0; i < rc[k] + 2; i++)
                CHECK(r[rd[k] + i] == (i < rc[k] ? k * 100000 + me * 10000 + i : -9),
                      "alltoallv scale %d from %d [%d]", scale, k, i);
        for (int i = 0; i < rt; i++)
            r[i] = -9;
        for (int k = 0; k < n; k++)
            for (int i = 0; i < rc[k]; i++)
                r[rd[k] + i] = me * 100000 + k * 10000 + i;
        OK(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, r, rc, rd, MPI_INT, comm));
        for (int k = 0; k < n; k++)
            for (int i = 0; i < rc[k] + 2; i++)
                CHECK(r[rd[k] + i] == (i < rc[k] ? k * 100000 + me * 10000 + i : -9),
                      "alltoallv in place scale %d from %d [%d]", scale, k, i);
        free(sc);
        free(sd);
        free(rc);
        free(rd);
        free(s);
        free(r);
    }
}

static void run(void)
{
    OK(MPI_Comm_rank(comm, &me));
    OK(MPI_Comm_size(comm, &n));
    for (int i = 0; i < 3; i++)
        OK(MPI_Barrier(comm));
    bcast_tests();
    reduce_tests();
    gather_tests();
    alltoall_tests();
    OK(MPI_Barrier(comm));
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    comm = MPI_COMM_WORLD;
    run();
    /* The same on a split: two halves, ranks in reverse order. */
    OK(MPI_Comm_split(MPI_COMM_WORLD, t_rank % 2, -t_rank, &comm));
    run();
    OK(MPI_Comm_free(&comm));
    if (t_rank == 0)
        printf("coll ok on %d ranks\n", t_size);
    OK(MPI_Finalize());
    return 0;
}
