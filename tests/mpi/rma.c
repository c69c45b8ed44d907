/* One-sided communication (MPI-3.1 chapter 11): fence epochs with Put, Get
 * and Accumulate in a ring and all-to-all (a vector origin type among
 * them), a counter under MPI_Win_lock_all hammered with MPI_Fetch_and_op,
 * exclusive-lock read-modify-write, Compare_and_swap, a Get of what the
 * target stored before the previous fence, post/start/complete/wait, 3000
 * gets in one epoch, request-based Rput/Rget/Raccumulate/Rget_accumulate,
 * a dynamic window, and errors under MPI_ERRORS_RETURN.  Every result is checked exactly. */
#include "mpitest.h"

#define N 8 /* ints per rank's slot */

static void fences(void)
{
    int n = t_size, me = t_rank;
    int *buf;
    MPI_Win win;
    OK(MPI_Win_allocate((MPI_Aint)(n * N * sizeof(int)), sizeof(int), MPI_INFO_NULL,
                        MPI_COMM_WORLD, &buf, &win));
    for (int i = 0; i < n * N; i++)
        buf[i] = -1;
    int flavor = 0, *fl, model = 0, *md, flag = 0;
    MPI_Aint *sz;
    OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &fl, &flag));
    flavor = *fl;
    CHECK(flag && flavor == MPI_WIN_FLAVOR_ALLOCATE, "flavor %d", flavor);
    OK(MPI_Win_get_attr(win, MPI_WIN_MODEL, &md, &flag));
    model = *md;
    CHECK(flag && model == MPI_WIN_UNIFIED, "model %d", model);
    OK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &sz, &flag));
    CHECK(flag && *sz == (MPI_Aint)(n * N * sizeof(int)), "size %ld", (long)*sz);

    /* All-to-all: every rank puts N ints into its slot at every rank. */
    int src[N];
    for (int k = 0; k < N; k++)
        src[k] = me * 100 + k;
    OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    for (int t = 0; t < n; t++)
        OK(MPI_Put(src, N, MPI_INT, t, me * N, N, MPI_INT, win));
    OK(MPI_Win_fence(0, win));
    for (int r = 0; r < n; r++)
        for (int k = 0; k < N; k++)
            CHECK(buf[r * N + k] == r * 100 + k, "put from %d: buf[%d] = %d", r, k,
                  buf[r * N + k]);

    /* The next epoch's puts may land as soon as a rank leaves the fence:
     * reading the window while they may would be a conflicting access. */
    OK(MPI_Barrier(MPI_COMM_WORLD));
    /* Ring: a vector origin type (every other int of 2N) into the right
     * neighbour's slot 0, and a get of the left neighbour's slot 1. */
    int wide[2 * N], got[N];
    for (int k = 0; k < 2 * N; k++)
        wide[k] = k % 2 ? -7 : me * 1000 + k / 2;
    MPI_Datatype vec;
    OK(MPI_Type_vector(N, 1, 2, MPI_INT, &vec));
    OK(MPI_Type_commit(&vec));
    int right = (me + 1) % n, left = (me + n - 1) % n;
    OK(MPI_Put(wide, 1, vec, right, 0, N, MPI_INT, win));
    if (n > 1) /* one rank's window has no slot 1 */
        OK(MPI_Get(got, N, MPI_INT, left, N, N, MPI_INT, win));
    OK(MPI_Type_free(&vec)); /* the put holds it */
    OK(MPI_Win_fence(0, win));
    for (int k = 0; k < N; k++) {
        CHECK(buf[k] == left * 1000 + k, "vector put: buf[%d] = %d", k, buf[k]);
        /* slot 1 of left holds rank 1's all-to-all put: the ring's put
         * went to slot 0 */
        if (n > 1)
            CHECK(got[k] == 100 + k, "get from %d: got[%d] = %d", left, k, got[k]);
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    /* A derived target type: a vector into every other int of the last slot. */
    OK(MPI_Type_vector(N / 2, 1, 2, MPI_INT, &vec));
    OK(MPI_Type_commit(&vec));
    int four[N / 2];
    for (int k = 0; k < N / 2; k++)
        four[k] = 5000 + me * 10 + k;
    OK(MPI_Put(four, N / 2, MPI_INT, right, (n - 1) * N, 1, vec, win));
    OK(MPI_Win_fence(0, win));
    for (int k = 0; k < N / 2; k++)
        CHECK(buf[(n - 1) * N + 2 * k] == 5000 + left * 10 + k, "target vector: %d",
              buf[(n - 1) * N + 2 * k]);
    OK(MPI_Type_free(&vec));

    /* Accumulate: everyone adds into slot 0 of everyone; MPI_MAX into
     * slot 1 elements; then a Get of what the target changed before the
     * previous fence. */
    OK(MPI_Win_fence(0, win));
    for (int k = 0; k < (n > 1 ? 2 * N : N); k++)
        buf[k] = 0;
    OK(MPI_Win_fence(0, win));
    int ones[N];
    for (int k = 0; k < N; k++)
        ones[k] = me + k;
    for (int t = 0; t < n; t++) {
        OK(MPI_Accumulate(ones, N, MPI_INT, t, 0, N, MPI_INT, MPI_SUM, win));
        if (n > 1)
            OK(MPI_Accumulate(ones, N, MPI_INT, t, N, N, MPI_INT, MPI_MAX, win));
    }
    OK(MPI_Win_fence(0, win));
    int sumranks = n * (n - 1) / 2;
    for (int k = 0; k < N; k++) {
        CHECK(buf[k] == sumranks + n * k, "sum: buf[%d] = %d", k, buf[k]);
        if (n > 1)
            CHECK(buf[N + k] == (n - 1) + k, "max: buf[%d] = %d", N + k, buf[N + k]);
    }
    buf[0] = 4242 + me; /* a local store, then a fence, then the get */
    OK(MPI_Win_fence(0, win));
    int v = 0;
    OK(MPI_Get(&v, 1, MPI_INT, left, 0, 1, MPI_INT, win));
    OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    CHECK(v == 4242 + left, "get after fence: %d", v);
    OK(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "freed window");
}

static void counter(void)
{
    long *cnt;
    MPI_Win win;
    OK(MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &cnt, &win));
    *cnt = 0;
    OK(MPI_Barrier(MPI_COMM_WORLD));
    enum { ROUNDS = 50 };
    long mine[ROUNDS], one = 1;
    OK(MPI_Win_lock_all(0, win));
    for (int i = 0; i < ROUNDS; i++) {
        OK(MPI_Fetch_and_op(&one, &mine[i], MPI_LONG, 0, 0, MPI_SUM, win));
        if (i % 7 == 0)
            OK(MPI_Win_flush(0, win));
    }
    OK(MPI_Win_unlock_all(win));
    /* Every fetched value is distinct across the job: 0..n*ROUNDS-1. */
    long total = (long)t_size * ROUNDS;
    long *all = malloc((size_t)total * sizeof *all);
    char *seen = calloc((size_t)total, 1);
    OK(MPI_Allgather(mine, ROUNDS, MPI_LONG, all, ROUNDS, MPI_LONG, MPI_COMM_WORLD));
    for (long i = 0; i < total; i++) {
        CHECK(all[i] >= 0 && all[i] < total && !seen[all[i]], "fetched %ld twice or wrong",
              all[i]);
        seen[all[i]] = 1;
    }
    for (int i = 1; i < ROUNDS; i++)
        CHECK(mine[i] > mine[i - 1], "fetches in order: %ld then %ld", mine[i - 1], mine[i]);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (t_rank == 0)
        CHECK(*cnt == total, "counter %ld, want %ld", *cnt, total);
    free(all);
    free(seen);

    /* Exclusive lock: read, add, write back, on rank n-1's counter. */
    int tgt = t_size - 1;
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (t_rank == tgt)
        *cnt = 0;
    OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < 5; i++) {
        long x = -1;
        OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, tgt, 0, win));
        OK(MPI_Get(&x, 1, MPI_LONG, tgt, 0, 1, MPI_LONG, win));
        OK(MPI_Win_flush(tgt, win));
        x += t_rank + 1;
        OK(MPI_Put(&x, 1, MPI_LONG, tgt, 0, 1, MPI_LONG, win));
        OK(MPI_Win_unlock(tgt, win));
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (t_rank == tgt)
        CHECK(*cnt == 5L * t_size * (t_size + 1) / 2, "exclusive rmw: %ld", *cnt);

    /* Compare_and_swap: every rank tries to claim rank 0's word; one wins. */
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (t_rank == 0)
        *cnt = -1;
    OK(MPI_Barrier(MPI_COMM_WORLD));
    long want = t_rank, cmp = -1, old = 0;
    OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    OK(MPI_Compare_and_swap(&want, &cmp, &old, MPI_LONG, 0, 0, win));
    OK(MPI_Win_unlock(0, win));
    int won = old == -1, winners = 0;
    OK(MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(winners == 1, "%d ranks won the swap", winners);
    long owner = -2;
    OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    OK(MPI_Get(&owner, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win));
    OK(MPI_Win_unlock(0, win));
    CHECK(owner >= 0 && owner < t_size, "owner %ld", owner);
    if (won)
        CHECK(owner == t_rank, "winner %d but owner %ld", t_rank, owner);
    else
        CHECK(old >= 0 && old < t_size, "loser saw %ld", old);
    OK(MPI_Win_free(&win));
}

static void pscw(void)
{
    int n = t_size, me = t_rank, x[2] = {0, 0};
    MPI_Win win;
    OK(MPI_Win_create(x, sizeof x, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_Group world, nb;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int right = (me + 1) % n, left = (me + n - 1) % n;
    int r1[1] = {right}, r2[1] = {left};
    /* Expose to the left neighbour, access the right one. */
    OK(MPI_Group_incl(world, 1, r2, &nb));
    OK(MPI_Win_post(nb, 0, win));
    MPI_Group_free(&nb);
    OK(MPI_Group_incl(world, 1, r1, &nb));
    OK(MPI_Win_start(nb, 0, win));
    MPI_Group_free(&nb);
    int v = me + 77;
    OK(MPI_Put(&v, 1, MPI_INT, right, 1, 1, MPI_INT, win));
    OK(MPI_Win_complete(win));
    int flag = 0;
    while (!flag)
        OK(MPI_Win_test(win, &flag));
    CHECK(x[1] == left + 77, "pscw put: %d", x[1]);
    MPI_Group_free(&world);
    OK(MPI_Win_free(&win));
}

static MPI_Win deleted_on;
static int on_delete(MPI_Win win, int keyval, void *val, void *extra)
{
    (void)keyval;
    (void)extra;
    CHECK(*(int *)val == 31, "attribute value %d", *(int *)val);
    deleted_on = win;
    return MPI_SUCCESS;
}

static void errors(void)
{
    int x[4] = {0};
    MPI_Win win;
    OK(MPI_Win_create(x, sizeof x, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    OK(MPI_Win_set_name(win, "rma test"));
    char name[MPI_MAX_OBJECT_NAME];
    int len = 0, cls = 0, y = 1;
    OK(MPI_Win_get_name(win, name, &len));
    CHECK(strcmp(name, "rma test") == 0 && len == 8, "name %s", name);
    /* Outside an epoch. */
    int rc = MPI_Put(&y, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RMA_SYNC, "put outside an epoch: %d", rc);
    OK(MPI_Win_fence(0, win));
    rc = MPI_Put(&y, 1, MPI_INT, 0, 4, 1, MPI_INT, win);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RMA_RANGE, "put past the end: %d", rc);
    rc = MPI_Get(&y, 2, MPI_INT, 0, -1, 2, MPI_INT, win);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RMA_RANGE, "get before the start: %d", rc);
    rc = MPI_Put(&y, 1, MPI_INT, t_size, 0, 1, MPI_INT, win);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK, "put to rank %d: %d", t_size, rc);
    rc = MPI_Accumulate(&y, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_OP_NULL, win);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OP, "accumulate with MPI_OP_NULL: %d", rc);
    OK(MPI_Put(&y, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win));
    OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    rc = MPI_Win_unlock(0, win);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RMA_SYNC, "unlock without lock: %d", rc);
    rc = MPI_Win_lock(99, 0, 0, win);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_LOCKTYPE, "lock type 99: %d", rc);
    CHECK(x[0] == 0 && x[1] == 0 && x[2] == 0 && x[3] == 0, "nothing written");
    MPI_Win bad = MPI_WIN_NULL;
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    rc = MPI_Win_fence(0, bad);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_WIN, "fence on MPI_WIN_NULL: %d", rc);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    /* An attribute of the program's: its delete callback gets the window. */
    int key, val = 31, *got = NULL, flag = 0;
    OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, on_delete, &key, NULL));
    OK(MPI_Win_set_attr(win, key, &val));
    OK(MPI_Win_get_attr(win, key, &got, &flag));
    CHECK(flag && got == &val, "window attribute");
    MPI_Win was = win;
    OK(MPI_Win_free(&win));
    CHECK(deleted_on == was, "delete callback on %#x, not the window %#x", (unsigned)deleted_on,
          (unsigned)was);
    OK(MPI_Win_free_keyval(&key));
}

/* More gets in one fence epoch than Portals holds posted receives (2048
 * entries): each answer's receive is posted before its request leaves, so
 * the library must finish some before it starts more. */
static void many_gets(void)
{
    enum { GETS = 3000 };
    int *base = malloc(sizeof(int) * GETS), *got = malloc(sizeof(int) * GETS);
    CHECK(base && got, "no memory");
    for (int i = 0; i < GETS; i++) {
        base[i] = t_rank * 100000 + i;
        got[i] = -1;
    }
    MPI_Win w;
    OK(MPI_Win_create(base, sizeof(int) * GETS, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w));
    int t = (t_rank + 1) % t_size;
    OK(MPI_Win_fence(0, w));
    for (int i = 0; i < GETS; i++)
        OK(MPI_Get(&got[i], 1, MPI_INT, t, GETS - 1 - i, 1, MPI_INT, w));
    OK(MPI_Win_fence(0, w));
    for (int i = 0; i < GETS; i++)
        CHECK(got[i] == t * 100000 + GETS - 1 - i, "get %d of %d gave %d", i, GETS, got[i]);
    OK(MPI_Win_free(&w));
    free(base);
    free(got);
}

/* Request-based operations (MPI-3.1 11.3.5), in a lock_all epoch: an
 * Rget's data is there when its request completes (before any flush or
 * unlock), by MPI_Wait and by a loop of MPI_Test; Rput's request lets the
 * buffer be reused at once; Raccumulate and Rget_accumulate on one word
 * add up and hand out distinct old values; a request freed early and one
 * to MPI_PROC_NULL; outside a passive epoch, MPI_ERR_RMA_SYNC. */
static void requests(void)
{
    int n = t_size, me = t_rank, right = (me + 1) % n, left = (me + n - 1) % n;
    int *buf;
    MPI_Win win;
    OK(MPI_Win_allocate((MPI_Aint)((n + 2) * N * sizeof(int)), sizeof(int), MPI_INFO_NULL,
                        MPI_COMM_WORLD, &buf, &win));
    for (int i = 0; i < (n + 2) * N; i++)
        buf[i] = me * 1000 + i;
    OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    int got[N], got2[N], flag = 0, cls;
    MPI_Request rq, rqs[3];
    OK(MPI_Win_lock_all(0, win));
    /* Words 2N.. (0 and 1 of rank 0 take the accumulates below, which
     * faster ranks may already be making). */
    OK(MPI_Rget(got, N, MPI_INT, right, 2 * N, N, MPI_INT, win, &rq));
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK(rq == MPI_REQUEST_NULL, "MPI_Wait left the Rget's request");
    for (int i = 0; i < N; i++)
        CHECK(got[i] == right * 1000 + 2 * N + i, "Rget [%d] is %d when its request completed",
              i, got[i]);
    OK(MPI_Rget(got2, N, MPI_INT, left, N, N, MPI_INT, win, &rq));
    for (long spins = 0; !flag; spins++) {
        CHECK(spins < 100000000, "an Rget's request never completed under MPI_Test");
        OK(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
    }
    for (int i = 0; i < N; i++)
        CHECK(got2[i] == left * 1000 + N + i, "Rget by MPI_Test [%d] is %d", i, got2[i]);
    /* Rput into the right neighbour's slot (n + 1): the buffer is ours
     * again as soon as the request completes. */
    int out[N];
    for (int i = 0; i < N; i++)
        out[i] = -(me * 100 + i);
    OK(MPI_Rput(out, N, MPI_INT, right, (MPI_Aint)(n + 1) * N, N, MPI_INT, win, &rq));
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    memset(out, 0x55, sizeof out);
    /* Accumulates on rank 0's words 0 and 1. */
    int one = 1, two = 2, old = -1;
    OK(MPI_Raccumulate(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win, &rqs[0]));
    OK(MPI_Rget_accumulate(&two, 1, MPI_INT, &old, 1, MPI_INT, 0, 1, 1, MPI_INT, MPI_SUM, win,
                           &rqs[1]));
    OK(MPI_Rget(got, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win, &rqs[2]));
    OK(MPI_Waitall(3, rqs, MPI_STATUSES_IGNORE));
    /* A request freed before it completed: the epoch's end finishes it. */
    OK(MPI_Rget(got, N, MPI_INT, right, N, N, MPI_INT, win, &rq));
    OK(MPI_Request_free(&rq));
    OK(MPI_Win_unlock_all(win));
    for (int i = 0; i < N; i++)
        CHECK(got[i] == right * 1000 + N + i, "a freed Rget's data after unlock_all: [%d] %d",
              i, got[i]);
    /* The old values of word 1 are 1 + 2k, one k per rank. */
    int *olds = malloc(sizeof(int) * (size_t)n), *seen = calloc((size_t)n, sizeof(int));
    CHECK(olds && seen, "no memory");
    OK(MPI_Allgather(&old, 1, MPI_INT, olds, 1, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < n; r++) {
        int k = (olds[r] - 1) / 2;
        CHECK((olds[r] - 1) % 2 == 0 && k >= 0 && k < n && !seen[k]++,
              "Rget_accumulate gave rank %d the old value %d", r, olds[r]);
    }
    free(olds);
    free(seen);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < N; i++)
        CHECK(buf[(n + 1) * N + i] == -(left * 100 + i), "Rput from rank %d: [%d] is %d", left,
              i, buf[(n + 1) * N + i]);
    if (me == 0)
        CHECK(buf[0] == n && buf[1] == 1 + 2 * n, "accumulated %d and %d, want %d and %d",
              buf[0], buf[1], n, 1 + 2 * n);
    /* Outside a passive-target epoch. */
    OK(MPI_Win_fence(0, win));
    int rc = MPI_Rget(got, 1, MPI_INT, right, 0, 1, MPI_INT, win, &rq);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RMA_SYNC && rq == MPI_REQUEST_NULL, "Rget in a fence epoch: %d", rc);
    OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    OK(MPI_Win_free(&win));
}

/* A dynamic window (MPI-3.1 11.2.4): each rank attaches an array and
 * (as two regions side by side) and tells the others its address; Put and
 * Get by address reach it, across both regions, the
 * flavor is MPI_WIN_FLAVOR_DYNAMIC, an access past the attached bytes is
 * refused by the target (MPI_ERR_RMA_RANGE, nothing written), a second
 * attach that overlaps and a detach of what was never attached are
 * MPI_ERR_RMA_ATTACH, and once detached the memory is not reachable. */
static void dynamic(void)
{
    int n = t_size, me = t_rank, right = (me + 1) % n, cls, flag = 0, *fl;
    int *mem = malloc(sizeof(int) * (N + 4)), *guard = mem + N; /* 4 ints never attached */
    CHECK(mem != NULL, "no memory");
    for (int i = 0; i < N + 4; i++)
        mem[i] = -5;
    MPI_Win win;
    OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &fl, &flag));
    CHECK(flag && *fl == MPI_WIN_FLAVOR_DYNAMIC, "flavor %d", *fl);
    /* Two regions side by side: an access may span both. */
    OK(MPI_Win_attach(win, mem, sizeof(int) * (N / 2)));
    OK(MPI_Win_attach(win, mem + N / 2, sizeof(int) * (N - N / 2)));
    int rc = MPI_Win_attach(win, mem + 2, sizeof(int));
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RMA_ATTACH, "an overlapping attach: class %d", cls);
    MPI_Aint mine, *addr = malloc(sizeof(MPI_Aint) * (size_t)n);
    OK(MPI_Get_address(mem, &mine));
    OK(MPI_Allgather(&mine, 1, MPI_AINT, addr, 1, MPI_AINT, MPI_COMM_WORLD));
    int out[N], back[N];
    for (int i = 0; i < N; i++)
        out[i] = me * 1000 + i;
    OK(MPI_Win_lock_all(0, win));
    OK(MPI_Put(out, N, MPI_INT, right, addr[right], N, MPI_INT, win));
    OK(MPI_Win_flush(right, win));
    OK(MPI_Get(back, N, MPI_INT, right, addr[right], N, MPI_INT, win));
    OK(MPI_Win_flush(right, win));
    CHECK(!memcmp(out, back, sizeof out), "a Put and Get by address: %d %d", back[0],
          back[N - 1]);
    /* Two ints from the last attached one: the second is the guard's. */
    MPI_Request rq;
    OK(MPI_Rget(back, 2, MPI_INT, right, MPI_Aint_add(addr[right], sizeof(int) * (N - 1)), 2,
                MPI_INT, win, &rq));
    rc = MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RMA_RANGE, "a get past the attached bytes: class %d", cls);
    rc = MPI_Put(out, 1, MPI_INT, right, MPI_Aint_add(addr[right], sizeof(int) * N), 1, MPI_INT,
                 win);
    int frc = MPI_Win_flush(right, win);
    MPI_Error_class(rc ? rc : frc, &cls);
    CHECK(cls == MPI_ERR_RMA_RANGE, "a put past the attached bytes: class %d", cls);
    OK(MPI_Win_unlock_all(win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    int left = (me + n - 1) % n;
    for (int i = 0; i < N; i++)
        CHECK(mem[i] == left * 1000 + i, "[%d] is %d after rank %d's put", i, mem[i], left);
    for (int i = 0; i < 4; i++)
        CHECK(guard[i] == -5, "the int past the attached ones was written: %d", guard[i]);
    /* Detached: the same get is refused. */
    OK(MPI_Win_detach(win, mem));
    OK(MPI_Win_detach(win, mem + N / 2));
    rc = MPI_Win_detach(win, mem);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RMA_ATTACH, "detaching twice: class %d", cls);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Win_lock_all(0, win));
    OK(MPI_Rget(back, 1, MPI_INT, right, addr[right], 1, MPI_INT, win, &rq));
    rc = MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RMA_RANGE, "a get of detached memory: class %d", cls);
    OK(MPI_Win_unlock_all(win));
    OK(MPI_Win_free(&win));
    free(addr);
    free(mem);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    fences();
    counter();
    pscw();
    many_gets();
    requests();
    dynamic();
    errors();
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (t_rank == 0)
        printf("rma ok on %d ranks\n", t_size);
    MPI_Finalize();
    return 0;
}
