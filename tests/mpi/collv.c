/* MPI_Gatherv and MPI_Scatterv against the answer computed here serially:
 * uneven counts, zero counts, every block empty, blocks small enough for
 * the tree beside large ones that go straight to their rank (eager and
 * rendezvous sizes: libmpi/src/mpi_gatherv.c), displacements with gaps and
 * in falling rank order, MPI_IN_PLACE at the root, derived datatypes
 * (different type maps of the same signature on the two sides, holes that
 * must stay untouched), on MPI_COMM_WORLD and on a split of it in reversed
 * order.  Every root where the communicator is small, four roots where it
 * is not.  Prints "collv ok on N ranks: C calls".
 *
 *     collv            the checks
 *     collv count K    K Scatterv of 4-byte blocks from rank 0 and nothing
 *                      else (tests/test_mpi_host.py reads the ranks' send
 *                      and receive counts, TERN_MPI_STATS=1)
 *     collv count K gatherv   the same with K Gatherv to rank 0 */
#include <stdbool.h>

#include "mpitest.h"

static MPI_Comm comm;
static int me, n, calls;

enum { PATTERNS = 4, LAYOUTS = 2 };

/* Elements (ints, or pairs of ints with typed) of rank k's block. */
static int count_of(int pattern, int k)
{
    switch (pattern) {
    case 0: return (k * 7 + 3) % 5;                         /* 0..4, uneven */
    case 1: return k % 3 == 0 ? 0 : k % 3 == 1 ? 3 : 700;    /* small beside large */
    case 2: return k == n - 1 ? 17000 : k % 2;               /* past the eager limit */
    default: return 0;                                       /* all empty */
    }
}

/* Displacements (in receive-type extents) with gaps, ascending or falling
 * rank order; the buffer's length in extents. */
static int layout(int lay, const int *cnt, int *displs)
{
    int at = 0;
    for (int i = 0; i < n; i++) {
        int k = lay ? n - 1 - i : i;
        displs[k] = at + k % 3;
        at = displs[k] + cnt[k];
    }
    return at + 2;
}

static int val(int k, int i) { return k * 100000 + i * 7 + 1; }

/* typed: the root's side is PAIR (2 ints, a hole between, a hole after:
 * extent 4 ints), a rank's side one vector of its 2c ints at every other
 * int; plain: ints on both sides. */
static MPI_Datatype pair_type(void)
{
    MPI_Datatype v, p;
    OK(MPI_Type_vector(2, 1, 2, MPI_INT, &v));
    OK(MPI_Type_create_resized(v, 0, 4 * (MPI_Aint)sizeof(int), &p));
    OK(MPI_Type_commit(&p));
    OK(MPI_Type_free(&v));
    return p;
}

static MPI_Datatype strided(int c)
{
    MPI_Datatype v;
    OK(MPI_Type_vector(2 * c, 1, 2, MPI_INT, &v));
    OK(MPI_Type_commit(&v));
    return v;
}

/* The root's buffer as it must be: -1 everywhere but the blocks. */
static int *root_image(int typed, const int *cnt, const int *displs, int len)
{
    int w = typed ? 4 : 1, *b = malloc(sizeof(int) * (size_t)(len * w));
    for (int i = 0; i < len * w; i++)
        b[i] = -1;
    for (int k = 0; k < n; k++)
        for (int j = 0; j < cnt[k] * (typed ? 2 : 1); j++)
            b[typed ? (displs[k] + j / 2) * 4 + (j % 2) * 2 : displs[k] + j] = val(k, j);
    return b;
}

/* A rank's own side: its values at every int (plain) or every other int
 * (typed, -5 between), -9 after. */
static int *rank_side(int typed, int c, int fill)
{
    int m = typed ? 4 * c : c, *b = malloc(sizeof(int) * (size_t)(m + 4));
    for (int i = 0; i < m + 4; i++)
        b[i] = -9;
    for (int j = 0; j < (typed ? 2 * c : c); j++) {
        b[typed ? 2 * j : j] = fill ? val(me, j) : -9;
        if (typed)
            b[2 * j + 1] = -5;
    }
    return b;
}

static void gatherv_case(int pattern, int lay, int typed, int inplace, int root)
{
    int cnt[64], displs[64];
    for (int k = 0; k < n; k++)
        cnt[k] = count_of(pattern, k);
    int len = layout(lay, cnt, displs), w = typed ? 4 : 1;
    MPI_Datatype pair = typed ? pair_type() : MPI_INT, st = typed ? strided(cnt[me]) : MPI_INT;
    int *mine = rank_side(typed, cnt[me], 1);
    int *want = root_image(typed, cnt, displs, len), *got = NULL;
    if (me == root) {
        got = malloc(sizeof(int) * (size_t)(len * w));
        for (int i = 0; i < len * w; i++)
            got[i] = -1;
        if (inplace) /* the root's own block is already in place */
            for (int j = 0; j < cnt[me] * w; j++)
                got[displs[me] * w + j] = want[displs[me] * w + j];
    }
    OK(MPI_Gatherv(me == root && inplace ? MPI_IN_PLACE : mine, typed ? 1 : cnt[me], st, got,
                   cnt, displs, pair, root, comm));
    calls++;
    if (me == root)
        for (int i = 0; i < len * w; i++)
            CHECK(got[i] == want[i], "gatherv pattern %d layout %d typed %d in place %d root %d: "
                  "[%d] = %d, want %d", pattern, lay, typed, inplace, root, i, got[i], want[i]);
    free(mine);
    free(want);
    free(got);
    if (typed) {
        OK(MPI_Type_free(&pair));
        OK(MPI_Type_free(&st));
    }
}

static void scatterv_case(int pattern, int lay, int typed, int inplace, int root)
{
    int cnt[64], displs[64];
    for (int k = 0; k < n; k++)
        cnt[k] = count_of(pattern, k);
    int len = layout(lay, cnt, displs), w = typed ? 4 : 1;
    MPI_Datatype pair = typed ? pair_type() : MPI_INT, rt = typed ? strided(cnt[me]) : MPI_INT;
    int *all = root_image(typed, cnt, displs, len), *copy = NULL;
    if (me == root) {
        copy = malloc(sizeof(int) * (size_t)(len * w));
        memcpy(copy, all, sizeof(int) * (size_t)(len * w));
    }
    int *got = rank_side(typed, cnt[me], 0), *want = rank_side(typed, cnt[me], 1);
    int m = (typed ? 4 * cnt[me] : cnt[me]) + 4;
    OK(MPI_Scatterv(all, cnt, displs, pair, me == root && inplace ? MPI_IN_PLACE : got,
                    typed ? 1 : cnt[me], rt, root, comm));
    calls++;
    if (!(me == root && inplace))
        for (int i = 0; i < m; i++)
            CHECK(got[i] == want[i],
                  "scatterv pattern %d layout %d typed %d in place %d root %d: [%d] = %d, "
                  "want %d", pattern, lay, typed, inplace, root, i, got[i], want[i]);
    if (me == root)
        CHECK(!memcmp(copy, all, sizeof(int) * (size_t)(len * w)), "scatterv changed sendbuf");
    free(all);
    free(copy);
    free(got);
    free(want);
    if (typed) {
        OK(MPI_Type_free(&pair));
        OK(MPI_Type_free(&rt));
    }
}

static void run(void)
{
    OK(MPI_Comm_rank(comm, &me));
    OK(MPI_Comm_size(comm, &n));
    CHECK(n <= 64, "collv: at most 64 ranks");
    int roots[4] = {0, 1, n / 2, n - 1}, nroots = n > 4 ? 4 : n;
    for (int ri = 0; ri < nroots; ri++) {
        int root = n > 4 ? roots[ri] : ri;
        for (int pattern = 0; pattern < PATTERNS; pattern++)
            for (int lay = 0; lay < LAYOUTS; lay++)
                for (int typed = 0; typed < 2; typed++)
                    for (int inplace = 0; inplace < 2; inplace++) {
                        gatherv_case(pattern, lay, typed, inplace, root);
                        scatterv_case(pattern, lay, typed, inplace, root);
                    }
    }
}

static void count_mode(int k, bool gather)
{
    int *cnt = malloc(sizeof(int) * (size_t)t_size), *displs = malloc(sizeof(int) * (size_t)t_size);
    int *all = malloc(sizeof(int) * (size_t)t_size), got = -1;
    for (int i = 0; i < t_size; i++) {
        cnt[i] = 1;
        displs[i] = i;
        all[i] = i * 3;
    }
    for (int i = 0; i < k && !gather; i++) {
        OK(MPI_Scatterv(all, cnt, displs, MPI_INT, &got, 1, MPI_INT, 0, MPI_COMM_WORLD));
        CHECK(got == t_rank * 3, "count scatterv %d", got);
    }
    for (int i = 0; i < k && gather; i++) {
        int mine = t_rank * 3 + i;
        memset(all, 0xff, sizeof(int) * (size_t)t_size);
        OK(MPI_Gatherv(&mine, 1, MPI_INT, all, cnt, displs, MPI_INT, 0, MPI_COMM_WORLD));
        for (int j = 0; t_rank == 0 && j < t_size; j++)
            CHECK(all[j] == j * 3 + i, "count gatherv %d from %d", all[j], j);
    }
    free(cnt);
    free(displs);
    free(all);
    if (t_rank == 0)
        printf("collv count ok on %d ranks: %d calls of %s\n", t_size, k,
               gather ? "MPI_Gatherv" : "MPI_Scatterv");
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    if (argc > 2 && !strcmp(argv[1], "count")) {
        count_mode(atoi(argv[2]), argc > 3 && !strcmp(argv[3], "gatherv"));
        OK(MPI_Finalize());
        return 0;
    }
    comm = MPI_COMM_WORLD;
    run();
    OK(MPI_Comm_split(MPI_COMM_WORLD, t_rank % 2, -t_rank, &comm));
    run();
    OK(MPI_Comm_free(&comm));
    int total = 0;
    OK(MPI_Reduce(&calls, &total, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD));
    if (t_rank == 0)
        printf("collv ok on %d ranks: %d calls\n", t_size, total);
    OK(MPI_Finalize());
    return 0;
}
