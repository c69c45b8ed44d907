/* Communicators, groups and Cartesian topologies: split (colors, keys,
 * MPI_UNDEFINED), dup, create, free, compare; group incl/excl/range/
 * union/intersection/difference/translate/compare; Cart_create/coords/
 * rank/shift/sub/get and Dims_create; traffic on several communicators at
 * once stays apart; only the thread that called MPI_Init is the main one.
 * Prints "comm ok on N ranks". */
#include <pthread.h>
#include <stdbool.h>

#include "mpitest.h"

static void splits(void)
{
    /* Three colors, keys reversing the order; rank 0 of MPI_COMM_WORLD out. */
    int color = t_rank == 0 ? MPI_UNDEFINED : t_rank % 3;
    MPI_Comm c;
    OK(MPI_Comm_split(MPI_COMM_WORLD, color, t_size - t_rank, &c));
    if (t_rank == 0) {
        CHECK(c == MPI_COMM_NULL, "MPI_UNDEFINED gave a communicator");
    } else {
        int r, n, want_n = 0, want_r = 0;
        for (int k = 1; k < t_size; k++)
            if (k % 3 == color) {
                want_n++;
                if (k > t_rank)
                    want_r++;
            }
        OK(MPI_Comm_rank(c, &r));
        OK(MPI_Comm_size(c, &n));
        CHECK(n == want_n && r == want_r, "split: rank %d of %d, want %d of %d", r, n, want_r,
              want_n);
        /* Their own traffic: sum of world ranks over the color. */
        int s = t_rank, sum;
        OK(MPI_Allreduce(&s, &sum, 1, MPI_INT, MPI_SUM, c));
        int want = 0;
        for (int k = 1; k < t_size; k++)
            if (k % 3 == color)
                want += k;
        CHECK(sum == want, "allreduce on split %d != %d", sum, want);
        /* Translate: my rank in c to MPI_COMM_WORLD. */
        MPI_Group gw, gc;
        OK(MPI_Comm_group(MPI_COMM_WORLD, &gw));
        OK(MPI_Comm_group(c, &gc));
        int w;
        OK(MPI_Group_translate_ranks(gc, 1, &r, gw, &w));
        CHECK(w == t_rank, "translate %d", w);
        OK(MPI_Group_free(&gw));
        OK(MPI_Group_free(&gc));
        int cmp;
        OK(MPI_Comm_compare(c, MPI_COMM_WORLD, &cmp));
        CHECK(cmp == (n == t_size ? MPI_CONGRUENT : MPI_UNEQUAL), "compare %d", cmp);
        OK(MPI_Comm_free(&c));
        CHECK(c == MPI_COMM_NULL, "Comm_free");
    }
}

static void dups_apart(void)
{
    /* The same tag on two communicators: each receive gets its own. */
    MPI_Comm d;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    int cmp;
    OK(MPI_Comm_compare(d, MPI_COMM_WORLD, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "dup compare %d", cmp);
    int right = (t_rank + 1) % t_size, left = (t_rank - 1 + t_size) % t_size;
    int a = 1, b = 2, x = 0, y = 0;
    MPI_Request rq[2];
    OK(MPI_Irecv(&y, 1, MPI_INT, left, 5, d, &rq[0]));
    OK(MPI_Irecv(&x, 1, MPI_INT, left, 5, MPI_COMM_WORLD, &rq[1]));
    OK(MPI_Send(&b, 1, MPI_INT, right, 5, d));
    OK(MPI_Send(&a, 1, MPI_INT, right, 5, MPI_COMM_WORLD));
    OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    CHECK(x == 1 && y == 2, "communicators mixed their messages: %d %d", x, y);
    /* Many communicators alive and freed: context ids are reused. */
    MPI_Comm many[40];
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 40; i++)
            OK(MPI_Comm_dup(d, &many[i]));
        for (int i = 0; i < 40; i++) {
            int s = i + t_rank, sum;
            OK(MPI_Allreduce(&s, &sum, 1, MPI_INT, MPI_SUM, many[i]));
            CHECK(sum == t_size * i + t_size * (t_size - 1) / 2, "dup %d", i);
        }
        for (int i = 0; i < 40; i++)
            OK(MPI_Comm_free(&many[i]));
    }
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    OK(MPI_Comm_set_name(d, "dup of world"));
    OK(MPI_Comm_get_name(d, name, &len));
    CHECK(!strcmp(name, "dup of world") && len == 12, "name %s", name);
    OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK(!strcmp(name, "MPI_COMM_WORLD"), "world's name %s", name);
    /* C keeps MPI_MAX_OBJECT_NAME - 1 characters of a longer name (the
     * buffer holds the NUL); Fortran keeps one more (fbind.f90). */
    char longname[200];
    memset(longname, 'n', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    OK(MPI_Comm_set_name(d, longname));
    OK(MPI_Comm_get_name(d, name, &len));
    CHECK(len == MPI_MAX_OBJECT_NAME - 1 && strlen(name) == (size_t)len &&
              !strncmp(name, longname, (size_t)len), "long name truncated: %d %s", len, name);
    int *tagub, flag;
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tagub, &flag));
    CHECK(flag && *tagub >= 32767, "MPI_TAG_UB");
    OK(MPI_Comm_free(&d));
}

static void groups(void)
{
    MPI_Group w, evens, odds, u, in, diff, r3, ex;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &w));
    int n = t_size, ne = (n + 1) / 2, ev[64], no = n / 2;
    for (int i = 0; i < ne; i++)
        ev[i] = 2 * i;
    OK(MPI_Group_incl(w, ne, ev, &evens));
    OK(MPI_Group_excl(w, ne, ev, &odds));
    int sz, r;
    OK(MPI_Group_size(odds, &sz));
    CHECK(sz == no, "excl size %d", sz);
    OK(MPI_Group_rank(evens, &r));
    CHECK(r == (t_rank % 2 ? MPI_UNDEFINED : t_rank / 2), "group rank %d", r);
    OK(MPI_Group_union(odds, evens, &u));
    OK(MPI_Group_size(u, &sz));
    CHECK(sz == n, "union size %d", sz);
    int cmp;
    OK(MPI_Group_compare(u, w, &cmp));
    CHECK(cmp == (n > 2 ? MPI_SIMILAR : n == 2 ? MPI_SIMILAR : MPI_IDENT), "union compare %d",
          cmp);
    OK(MPI_Group_intersection(u, evens, &in));
    OK(MPI_Group_compare(in, evens, &cmp));
    CHECK(cmp == MPI_IDENT, "intersection compare %d", cmp);
    OK(MPI_Group_difference(w, evens, &diff));
    OK(MPI_Group_compare(diff, odds, &cmp));
    CHECK(cmp == MPI_IDENT, "difference compare %d", cmp);
    int ranges[1][3] = {{n - 1, 0, -2}};
    OK(MPI_Group_range_incl(w, 1, ranges, &r3));
    OK(MPI_Group_size(r3, &sz));
    CHECK(sz == (n + 1) / 2, "range_incl size %d", sz);
    int first = 0, tr;
    OK(MPI_Group_translate_ranks(r3, 1, &first, w, &tr));
    CHECK(tr == n - 1, "range_incl order %d", tr);
    OK(MPI_Group_range_excl(w, 1, ranges, &ex));
    OK(MPI_Group_size(ex, &sz));
    CHECK(sz == n / 2, "range_excl size %d", sz);
    /* A communicator of the odd ranks (create: collective over world). */
    MPI_Comm oc;
    OK(MPI_Comm_create(MPI_COMM_WORLD, odds, &oc));
    if (t_rank % 2) {
        int rr;
        OK(MPI_Comm_rank(oc, &rr));
        CHECK(rr == t_rank / 2, "create rank %d", rr);
        int s = 1, sum;
        OK(MPI_Allreduce(&s, &sum, 1, MPI_INT, MPI_SUM, oc));
        CHECK(sum == no, "create sum");
        OK(MPI_Comm_free(&oc));
    } else {
        CHECK(oc == MPI_COMM_NULL, "non-member got a communicator");
    }
    MPI_Group *gs[] = {&w, &evens, &odds, &u, &in, &diff, &r3, &ex};
    for (int i = 0; i < 8; i++)
        if (*gs[i] != MPI_GROUP_EMPTY)
            OK(MPI_Group_free(gs[i]));
}

static void cart(void)
{
    int dims[3] = {0, 0, 0};
    OK(MPI_Dims_create(t_size, 2, dims));
    CHECK(dims[0] * dims[1] == t_size && dims[0] >= dims[1], "dims %d x %d", dims[0], dims[1]);
    int d3[3] = {0, 2, 0};
    if (t_size % 2 == 0) {
        OK(MPI_Dims_create(t_size, 3, d3));
        CHECK(d3[0] * d3[1] * d3[2] == t_size && d3[1] == 2, "dims3");
    }
    int dd[2] = {0, 0};
    OK(MPI_Dims_create(12, 2, dd));
    CHECK(dd[0] == 4 && dd[1] == 3, "Dims_create(12,2) = %d x %d", dd[0], dd[1]);
    /* As even as can be: 72 is 9 x 8 (12 x 6 before), 5616 in four 13 x 9 x 8 x 6. */
    dd[0] = dd[1] = 0;
    OK(MPI_Dims_create(72, 2, dd));
    CHECK(dd[0] == 9 && dd[1] == 8, "Dims_create(72,2) = %d x %d", dd[0], dd[1]);
    int d4[4] = {0, 0, 0, 0};
    OK(MPI_Dims_create(5616, 4, d4));
    CHECK(d4[0] == 13 && d4[1] == 9 && d4[2] == 8 && d4[3] == 6,
          "Dims_create(5616,4) = %d x %d x %d x %d", d4[0], d4[1], d4[2], d4[3]);
    int periods[2] = {1, 0};
    MPI_Comm c;
    OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &c));
    int r, co[2], st;
    OK(MPI_Comm_rank(c, &r));
    OK(MPI_Topo_test(c, &st));
    CHECK(st == MPI_CART, "topo_test");
    OK(MPI_Cart_coords(c, r, 2, co));
    CHECK(co[0] == r / dims[1] && co[1] == r % dims[1], "coords");
    int back;
    OK(MPI_Cart_rank(c, co, &back));
    CHECK(back == r, "cart_rank");
    int src, dst;
    OK(MPI_Cart_shift(c, 0, 1, &src, &dst));
    CHECK(dst == ((co[0] + 1) % dims[0]) * dims[1] + co[1], "shift periodic dst %d", dst);
    CHECK(src == ((co[0] - 1 + dims[0]) % dims[0]) * dims[1] + co[1], "shift src");
    OK(MPI_Cart_shift(c, 1, 1, &src, &dst));
    CHECK(dst == (co[1] + 1 < dims[1] ? r + 1 : MPI_PROC_NULL), "shift non-periodic %d", dst);
    CHECK(src == (co[1] > 0 ? r - 1 : MPI_PROC_NULL), "shift non-periodic src %d", src);
    /* A halo exchange along the non-periodic dimension */
    int v = r, got = -1;
    OK(MPI_Sendrecv(&v, 1, MPI_INT, dst, 1, &got, 1, MPI_INT, src, 1, c, MPI_STATUS_IGNORE));
    CHECK(got == (src == MPI_PROC_NULL ? -1 : src), "halo got %d", got);
    int keep[2] = {0, 1};
    MPI_Comm row;
    OK(MPI_Cart_sub(c, keep, &row));
    int rr, rn, nd;
    OK(MPI_Comm_rank(row, &rr));
    OK(MPI_Comm_size(row, &rn));
    OK(MPI_Cartdim_get(row, &nd));
    CHECK(rr == co[1] && rn == dims[1] && nd == 1, "cart_sub rank %d of %d", rr, rn);
    int gd[2], gp[2], gc[2];
    OK(MPI_Cart_get(c, 2, gd, gp, gc));
    CHECK(gd[0] == dims[0] && gp[0] == 1 && gp[1] == 0 && gc[1] == co[1], "cart_get");
    OK(MPI_Comm_free(&row));
    OK(MPI_Comm_free(&c));
}

static void *not_main(void *arg)
{
    int *flag = arg;
    OK(MPI_Is_thread_main(flag));
    return NULL;
}

static void main_thread(void)
{
    int flag = -1;
    OK(MPI_Is_thread_main(&flag));
    CHECK(flag == 1, "Is_thread_main in the main thread gave %d", flag);
    pthread_t t;
    flag = -1;
    CHECK(pthread_create(&t, NULL, not_main, &flag) == 0, "pthread_create");
    CHECK(pthread_join(t, NULL) == 0, "pthread_join");
    CHECK(flag == 0, "Is_thread_main in another thread gave %d", flag);
}

/* MPI_COMM_TYPE_SHARED: the ranks on this rank's node, as the processor
 * names say, in world order (alone: each rank by itself, where a node's
 * ranks share no memory); MPI_UNDEFINED gives no communicator.  Memory
 * from MPI_Alloc_mem carries a message. */
static void shared_node(bool alone)
{
    char names[64][MPI_MAX_PROCESSOR_NAME], mine[MPI_MAX_PROCESSOR_NAME] = {0};
    int len;
    CHECK(t_size <= 64, "up to 64 ranks");
    OK(MPI_Get_processor_name(mine, &len));
    OK(MPI_Allgather(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME,
                     MPI_CHAR, MPI_COMM_WORLD));
    int same = 0, below = 0;
    for (int r = 0; r < t_size; r++)
        if (!strcmp(names[r], mine) && (!alone || r == t_rank)) {
            same++;
            below += r < t_rank;
        }
    MPI_Comm node;
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, t_rank, MPI_INFO_NULL, &node));
    int nsize, nrank;
    OK(MPI_Comm_size(node, &nsize));
    OK(MPI_Comm_rank(node, &nrank));
    CHECK(nsize == same && nrank == below, "node communicator: %d of %d, names say %d of %d",
          nrank, nsize, below, same);
    int *buf;
    OK(MPI_Alloc_mem(sizeof(int) * 4, MPI_INFO_NULL, &buf));
    buf[0] = t_rank;
    OK(MPI_Allreduce(MPI_IN_PLACE, buf, 1, MPI_INT, MPI_SUM, node));
    int want = 0;
    for (int r = 0; r < t_size; r++)
        if (!strcmp(names[r], mine) && (!alone || r == t_rank))
            want += r;
    CHECK(buf[0] == want, "sum over the node: %d, not %d", buf[0], want);
    OK(MPI_Free_mem(buf));
    OK(MPI_Comm_free(&node));
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL, &node));
    CHECK(node == MPI_COMM_NULL, "MPI_UNDEFINED gave a communicator");

    /* MPI-4.0's hardware split types: "mpi_shared_memory" is the same group;
     * no type, or one not known, gives none; the unguided split gives it
     * when it is smaller than the whole and says so in the info. */
    MPI_Info info;
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory"));
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, t_rank, info, &node));
    CHECK(node != MPI_COMM_NULL, "HW_GUIDED mpi_shared_memory gave no communicator");
    OK(MPI_Comm_size(node, &nsize));
    OK(MPI_Comm_rank(node, &nrank));
    CHECK(nsize == same && nrank == below, "HW_GUIDED: %d of %d, not %d of %d", nrank, nsize,
          below, same);
    OK(MPI_Comm_free(&node));
    OK(MPI_Info_set(info, "mpi_hw_resource_type", "l7cache"));
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &node));
    CHECK(node == MPI_COMM_NULL, "HW_GUIDED l7cache gave a communicator");
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, MPI_INFO_NULL, &node));
    CHECK(node == MPI_COMM_NULL, "HW_GUIDED without info gave a communicator");
    OK(MPI_Info_free(&info));
    OK(MPI_Info_create(&info));
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, t_rank, info, &node));
    char v[MPI_MAX_INFO_VAL + 1] = "";
    int has = 0;
    OK(MPI_Info_get(info, "mpi_hw_resource_type", MPI_MAX_INFO_VAL, v, &has));
    if (same == t_size) {
        CHECK(node == MPI_COMM_NULL && !has, "HW_UNGUIDED on one node gave a communicator");
    } else {
        CHECK(node != MPI_COMM_NULL && has && !strcmp(v, "mpi_shared_memory"),
              "HW_UNGUIDED: no communicator, or info says '%s'", v);
        OK(MPI_Comm_size(node, &nsize));
        CHECK(nsize == same, "HW_UNGUIDED: %d ranks, not %d", nsize, same);
        OK(MPI_Comm_free(&node));
    }
    OK(MPI_Info_free(&info));
}

/* Attribute caching: copy callbacks at MPI_Comm_dup, delete callbacks at
 * MPI_Comm_delete_attr, a replaced value, MPI_Comm_free, and MPI_Finalize
 * for MPI_COMM_SELF's (main prints after it). */
static int deleted, self_deleted;

static int count_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm, (void)keyval;
    deleted += *(int *)val == *(int *)extra ? 1 : 100;
    return MPI_SUCCESS;
}

static int self_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)keyval, (void)val, (void)extra;
    self_deleted = comm == MPI_COMM_SELF;
    return MPI_SUCCESS;
}

static void attributes(void)
{
    static int value = 7, other = 7;
    int kdup, knone, flag = 0, *got = NULL;
    OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, count_delete, &kdup, &value));
    OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &knone, NULL));
    MPI_Comm a, b;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    OK(MPI_Comm_set_attr(a, kdup, &value));
    OK(MPI_Comm_set_attr(a, knone, &value));
    OK(MPI_Comm_get_attr(a, kdup, &got, &flag));
    CHECK(flag && got == &value, "get_attr: flag %d", flag);
    OK(MPI_Comm_dup(a, &b));
    OK(MPI_Comm_get_attr(b, kdup, &got, &flag));
    CHECK(flag && got == &value, "MPI_COMM_DUP_FN did not copy it");
    OK(MPI_Comm_get_attr(b, knone, &got, &flag));
    CHECK(!flag, "MPI_COMM_NULL_COPY_FN copied it");
    OK(MPI_Comm_set_attr(b, kdup, &other));      /* the old value is deleted */
    CHECK(deleted == 1, "a replaced value: %d deletes", deleted);
    OK(MPI_Comm_delete_attr(a, kdup));
    CHECK(deleted == 2, "MPI_Comm_delete_attr: %d deletes", deleted);
    OK(MPI_Comm_get_attr(a, kdup, &got, &flag));
    CHECK(!flag, "a deleted attribute is still there");
    OK(MPI_Comm_free_keyval(&kdup));             /* b still holds one */
    CHECK(kdup == MPI_KEYVAL_INVALID, "free_keyval left %d", kdup);
    OK(MPI_Comm_free(&b));
    CHECK(deleted == 3, "MPI_Comm_free: %d deletes", deleted);
    OK(MPI_Comm_free(&a));
    OK(MPI_Comm_free_keyval(&knone));
    int kself;
    OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &kself, NULL));
    OK(MPI_Comm_set_attr(MPI_COMM_SELF, kself, NULL));
}

/* Info objects: thousands at once, MPI_Info_get_string's buflen rule,
 * MPI_INFO_ENV, hints on communicators (none kept). */
static void infos(const char *argv0)
{
    enum { N = 5000 };
    static MPI_Info many[N];
    for (int i = 0; i < N; i++) {
        char v[16];
        snprintf(v, sizeof v, "%d", i);
        OK(MPI_Info_create(&many[i]));
        OK(MPI_Info_set(many[i], "i", v));
    }
    for (int i = 0; i < N; i += 997) {
        char v[16];
        int flag, len = sizeof v;
        OK(MPI_Info_get_string(many[i], "i", &len, v, &flag));
        CHECK(flag && atoi(v) == i && len == (int)strlen(v) + 1, "info %d says %s (%d)", i, v,
              len);
    }
    for (int i = 0; i < N; i++)
        OK(MPI_Info_free(&many[i]));
    MPI_Info in;
    OK(MPI_Info_create(&in));
    OK(MPI_Info_set(in, "key", "abcdef"));
    char v[MPI_MAX_INFO_VAL + 1] = "Z";
    int flag = 0, len = 0;
    OK(MPI_Info_get_string(in, "key", &len, v, &flag));
    CHECK(flag && len == 7 && v[0] == 'Z', "buflen 0: len %d, value %s", len, v);
    len = 3;
    OK(MPI_Info_get_string(in, "key", &len, v, &flag));
    CHECK(flag && len == 7 && !strcmp(v, "ab"), "buflen 3: len %d, value %s", len, v);
    len = 3;
    OK(MPI_Info_get_string(in, "nokey", &len, v, &flag));
    CHECK(!flag && !strcmp(v, "ab"), "missing key changed the value to %s", v);
    /* The environment: the command, the job's size. */
    OK(MPI_Info_get(MPI_INFO_ENV, "maxprocs", MPI_MAX_INFO_VAL, v, &flag));
    CHECK(flag && atoi(v) == t_size, "MPI_INFO_ENV's maxprocs: %s", flag ? v : "none");
    OK(MPI_Info_get(MPI_INFO_ENV, "command", MPI_MAX_INFO_VAL, v, &flag));
    CHECK(flag && !strcmp(v, argv0), "MPI_INFO_ENV's command: %s", flag ? v : "none");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(MPI_Info_set(MPI_INFO_ENV, "command", "x") == MPI_ERR_INFO, "MPI_INFO_ENV changed");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    /* Hints are checked and none is kept. */
    MPI_Comm d;
    MPI_Info out;
    int nkeys = -1;
    OK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, in, &d));
    OK(MPI_Comm_set_info(d, in));
    OK(MPI_Comm_get_info(d, &out));
    OK(MPI_Info_get_nkeys(out, &nkeys));
    CHECK(nkeys == 0, "MPI_Comm_get_info gave %d hints", nkeys);
    int sum = 0, one = 1;
    OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, d));
    CHECK(sum == t_size, "the duplicate's sum %d", sum);
    OK(MPI_Info_free(&out));
    OK(MPI_Info_free(&in));
    OK(MPI_Comm_free(&d));
}

/* MPI_Comm_idup: ranks but 0 start it, then send rank 0 a synchronous
 * message it takes before it calls the idup itself (an idup that waited
 * for the others would hang); several at once on overlapping
 * communicators with a blocking Comm_dup among them; an
 * intercommunicator's; each result carries an Allreduce. */
static void idups(void)
{
    MPI_Comm a, b[3], half, ic, ica;
    MPI_Request r, rs[4];
    int x = t_rank, sum = 0;
    if (t_rank == 0) {
        for (int i = 1; i < t_size; i++)
            OK(MPI_Recv(&x, 1, MPI_INT, i, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Comm_idup(MPI_COMM_WORLD, &a, &r));
    } else {
        OK(MPI_Comm_idup(MPI_COMM_WORLD, &a, &r));
        OK(MPI_Ssend(&x, 1, MPI_INT, 0, 5, MPI_COMM_WORLD));
    }
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    x = t_rank;
    OK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, a));
    CHECK(sum == t_size * (t_size - 1) / 2, "sum on an idup'd communicator %d", sum);
    OK(MPI_Comm_split(MPI_COMM_WORLD, t_rank % 2, t_rank, &half));
    OK(MPI_Comm_idup(MPI_COMM_WORLD, &b[0], &rs[0]));
    OK(MPI_Comm_idup(half, &b[1], &rs[1]));
    MPI_Comm blocking;
    OK(MPI_Comm_dup(a, &blocking));
    OK(MPI_Comm_idup(MPI_COMM_WORLD, &b[2], &rs[2]));
    OK(MPI_Waitall(3, rs, MPI_STATUSES_IGNORE));
    int hsize, res;
    OK(MPI_Comm_size(half, &hsize));
    for (int k = 0; k < 3; k++) {
        OK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, k == 1 ? b[1] : b[k]));
        OK(MPI_Comm_compare(k == 1 ? half : MPI_COMM_WORLD, b[k], &res));
        CHECK(res == MPI_CONGRUENT, "idup %d is not congruent to its parent: %d", k, res);
    }
    OK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, blocking));
    CHECK(sum == t_size * (t_size - 1) / 2, "the blocking duplicate's sum %d", sum);
    if (t_size >= 2) {
        OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, t_rank % 2 ? 0 : 1, 9, &ic));
        OK(MPI_Comm_idup(ic, &ica, &r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        int rsize, want = 0;
        OK(MPI_Comm_remote_size(ica, &rsize));
        for (int i = t_rank % 2 ? 0 : 1; i < t_size; i += 2)
            want += i;
        OK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, ica));
        CHECK(sum == want && rsize == t_size - hsize, "idup'd intercommunicator: %d of %d",
              sum, want);
        OK(MPI_Comm_free(&ica));
        OK(MPI_Comm_free(&ic));
    }
    for (int k = 0; k < 3; k++)
        OK(MPI_Comm_free(&b[k]));
    OK(MPI_Comm_free(&blocking));
    OK(MPI_Comm_free(&half));
    OK(MPI_Comm_free(&a));
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    main_thread();
    shared_node(argc > 1 && !strcmp(argv[1], "alone"));
    attributes();
    splits();
    dups_apart();
    groups();
    cart();
    infos(argv[0]);
    idups();
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Finalize());
    if (!self_deleted)
        printf("rank %d: FAILED: MPI_Finalize left MPI_COMM_SELF's attribute\n", t_rank);
    else if (t_rank == 0)
        printf("comm ok on %d ranks\n", t_size);
    return !self_deleted;
}
