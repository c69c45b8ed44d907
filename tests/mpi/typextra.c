/* Distributed array datatypes, portable packing and datatype attributes:
 * Type_create_darray (block x cyclic(2) on a 2 x 2 process grid, C and
 * Fortran order; each virtual rank's piece of a global array checked
 * element by element against indices computed here, and sent with it);
 * Pack_external / Unpack_external / Pack_external_size in "external32"
 * (exact big-endian bytes); Type_create_keyval ... Type_delete_attr with
 * copy and delete callbacks counted through Type_dup and Type_free.
 * Any rank count.  Prints "typextra ok on N ranks". */
#include <stddef.h>

#include "mpitest.h"

#define ROWS 6
#define COLS 7

/* The global array element (i, j) holds 100 i + j, laid out in order. */
static void fill_global(int *g, int order)
{
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++)
            g[order == MPI_ORDER_C ? i * COLS + j : i + j * ROWS] = 100 * i + j;
}

/* What virtual rank r of the 2 x 2 grid (row-major) holds, in its local
 * array's order: rows in blocks of rblock, columns cyclic(2).  Returns
 * how many. */
static int expected(int r, int rblock, int order, int *out)
{
    int pr = r / 2, pc = r % 2, n = 0;
    int rows[ROWS], nr = 0, cols[COLS], nc = 0;
    for (int i = 0; i < ROWS; i++)
        if (i / rblock == pr)
            rows[nr++] = i;
    for (int j = 0; j < COLS; j++)
        if ((j / 2) % 2 == pc)
            cols[nc++] = j;
    if (order == MPI_ORDER_C)
        for (int a = 0; a < nr; a++)
            for (int b = 0; b < nc; b++)
                out[n++] = 100 * rows[a] + cols[b];
    else
        for (int b = 0; b < nc; b++)
            for (int a = 0; a < nr; a++)
                out[n++] = 100 * rows[a] + cols[b];
    return n;
}

static MPI_Datatype darray(int r, int darg0, int order)
{
    int gs[2] = {ROWS, COLS}, dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
    int dargs[2] = {darg0, 2}, ps[2] = {2, 2};
    MPI_Datatype t;
    OK(MPI_Type_create_darray(4, r, 2, gs, dist, dargs, ps, order, MPI_INT, &t));
    OK(MPI_Type_commit(&t));
    return t;
}

static void darrays(void)
{
    static const int orders[2] = {MPI_ORDER_C, MPI_ORDER_FORTRAN};
    /* The default block (3 rows each) and blocks of 4 (4 rows, then 2). */
    static const int darg0s[2] = {MPI_DISTRIBUTE_DFLT_DARG, 4};
    int g[ROWS * COLS], want[ROWS * COLS], got[ROWS * COLS];
    for (int o = 0; o < 2; o++)
        for (int k = 0; k < 2; k++)
            for (int r = 0; r < 4; r++) {
                int order = orders[o], rblock = darg0s[k] == 4 ? 4 : 3;
                fill_global(g, order);
                MPI_Datatype t = darray(r, darg0s[k], order);
                int n = expected(r, rblock, order, want), sz, pos = 0;
                MPI_Aint lb, ext;
                OK(MPI_Type_size(t, &sz));
                OK(MPI_Type_get_extent(t, &lb, &ext));
                CHECK(sz == n * 4 && lb == 0 && ext == ROWS * COLS * 4,
                      "darray order %d rank %d: size %d (want %d), lb %ld, extent %ld", order,
                      r, sz, n * 4, (long)lb, (long)ext);
                OK(MPI_Pack(g, 1, t, got, sizeof got, &pos, MPI_COMM_WORLD));
                CHECK(pos == n * 4, "packed %d bytes", pos);
                for (int i = 0; i < n; i++)
                    CHECK(got[i] == want[i], "darray order %d darg %d rank %d: element %d is "
                          "%d, not %d", order, darg0s[k], r, i, got[i], want[i]);
                /* Unpacked into a zeroed array: only its own elements. */
                int back[ROWS * COLS] = {0};
                pos = 0;
                OK(MPI_Unpack(got, sizeof got, &pos, back, 1, t, MPI_COMM_WORLD));
                int seen = 0;
                for (int i = 0; i < ROWS * COLS; i++)
                    if (back[i]) {
                        CHECK(back[i] == g[i], "unpacked [%d] = %d", i, back[i]);
                        seen++;
                    }
                CHECK(seen == n - (r == 0 && want[0] == 0), "unpacked %d of %d", seen, n);
                /* How it was made. */
                int ni, na, nt, comb, ints[12];
                MPI_Aint a[1];
                MPI_Datatype old;
                OK(MPI_Type_get_envelope(t, &ni, &na, &nt, &comb));
                CHECK(comb == MPI_COMBINER_DARRAY && ni == 12 && na == 0 && nt == 1,
                      "envelope %d %d %d %d", comb, ni, na, nt);
                OK(MPI_Type_get_contents(t, 12, 0, 1, ints, a, &old));
                CHECK(ints[0] == 4 && ints[1] == r && ints[2] == 2 && ints[3] == ROWS &&
                      ints[4] == COLS && ints[5] == MPI_DISTRIBUTE_BLOCK &&
                      ints[6] == MPI_DISTRIBUTE_CYCLIC && ints[7] == darg0s[k] &&
                      ints[8] == 2 && ints[9] == 2 && ints[10] == 2 && ints[11] == order &&
                      old == MPI_INT, "contents");
                OK(MPI_Type_free(&t));
            }
    /* Sent with it: rank 0 sends each rank the piece of virtual rank
     * rank % 4 of the C-ordered array; it arrives as plain ints. */
    fill_global(g, MPI_ORDER_C);
    int mine = t_rank % 4, n = expected(mine, 3, MPI_ORDER_C, want);
    MPI_Request rq;
    OK(MPI_Irecv(got, ROWS * COLS, MPI_INT, 0, 7, MPI_COMM_WORLD, &rq));
    if (t_rank == 0)
        for (int d = 0; d < t_size; d++) {
            MPI_Datatype t = darray(d % 4, MPI_DISTRIBUTE_DFLT_DARG, MPI_ORDER_C);
            OK(MPI_Send(g, 1, t, d, 7, MPI_COMM_WORLD));
            OK(MPI_Type_free(&t));
        }
    MPI_Status st;
    OK(MPI_Wait(&rq, &st));
    CHECK(t_count(&st, MPI_INT) == n, "received %d ints, not %d", t_count(&st, MPI_INT), n);
    for (int i = 0; i < n; i++)
        CHECK(got[i] == want[i], "received element %d is %d, not %d", i, got[i], want[i]);
    /* And received with it: each rank sends rank 0 its piece as ints. */
    int back[ROWS * COLS] = {0};
    if (t_rank == 0) {
        MPI_Datatype t = darray(0, MPI_DISTRIBUTE_DFLT_DARG, MPI_ORDER_C);
        OK(MPI_Irecv(back, 1, t, t_size - 1, 8, MPI_COMM_WORLD, &rq));
        OK(MPI_Type_free(&t));   /* the receive holds it */
    }
    if (t_rank == t_size - 1) {
        int p0[ROWS * COLS], n0 = expected(0, 3, MPI_ORDER_C, p0);
        OK(MPI_Send(p0, n0, MPI_INT, 0, 8, MPI_COMM_WORLD));
    }
    if (t_rank == 0) {
        OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        for (int i = 0; i < ROWS; i++)
            for (int j = 0; j < COLS; j++)
                CHECK(back[i * COLS + j] == (i < 3 && (j / 2) % 2 == 0 ? 100 * i + j : 0),
                      "received into (%d, %d): %d", i, j, back[i * COLS + j]);
    }
}

static void darray_errors(void)
{
    int gs[2] = {ROWS, COLS}, dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
    int dargs[2] = {2, 2}, ps[2] = {2, 2}, cls;
    MPI_Datatype t = MPI_DATATYPE_NULL;
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    /* Blocks of 2 on 2 processes cannot hold 6 rows. */
    int rc = MPI_Type_create_darray(4, 0, 2, gs, dist, dargs, ps, MPI_ORDER_C, MPI_INT, &t);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "block too small: class %d", cls);
    /* A grid of 4 for 6 processes. */
    dargs[0] = MPI_DISTRIBUTE_DFLT_DARG;
    rc = MPI_Type_create_darray(6, 0, 2, gs, dist, dargs, ps, MPI_ORDER_C, MPI_INT, &t);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "grid of the wrong size: class %d", cls);
    /* Not distributed, yet on 2 processes. */
    dist[0] = MPI_DISTRIBUTE_NONE;
    rc = MPI_Type_create_darray(4, 0, 2, gs, dist, dargs, ps, MPI_ORDER_C, MPI_INT, &t);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "NONE on 2 processes: class %d", cls);
    /* A rank outside the grid. */
    dist[0] = MPI_DISTRIBUTE_BLOCK;
    rc = MPI_Type_create_darray(4, 4, 2, gs, dist, dargs, ps, MPI_ORDER_C, MPI_INT, &t);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG && t == MPI_DATATYPE_NULL, "rank 4 of 4: class %d", cls);
    /* Only "external32" is a portable representation. */
    MPI_Aint size;
    rc = MPI_Pack_external_size("native", 1, MPI_INT, &size);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_UNSUPPORTED_DATAREP, "datarep native: class %d", cls);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

struct rec {
    int i;
    double d;
    short s;
    char c;
};

static void external32(void)
{
    int bl[4] = {1, 1, 1, 1};
    MPI_Aint dp[4] = {offsetof(struct rec, i), offsetof(struct rec, d), offsetof(struct rec, s),
                      offsetof(struct rec, c)};
    MPI_Datatype ty[4] = {MPI_INT, MPI_DOUBLE, MPI_SHORT, MPI_CHAR}, t;
    OK(MPI_Type_create_struct(4, bl, dp, ty, &t));
    OK(MPI_Type_commit(&t));
    struct rec in[2] = {{-2, 1.5, 0x1234, 'A'}, {7, -2.0, -1, 'z'}}, out[2];
    static const unsigned char want[30] = {
        0xff, 0xff, 0xff, 0xfe, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0, 0x12, 0x34, 'A',
        0, 0, 0, 7, 0xc0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 'z'};
    unsigned char buf[40];
    MPI_Aint size, pos = 3;
    OK(MPI_Pack_external_size("external32", 2, t, &size));
    CHECK(size == 30, "Pack_external_size %ld", (long)size);
    memset(buf, 0x55, sizeof buf);
    OK(MPI_Pack_external("external32", in, 2, t, buf, sizeof buf, &pos));
    CHECK(pos == 33, "position %ld after packing", (long)pos);
    for (int k = 0; k < 30; k++)
        CHECK(buf[3 + k] == want[k], "external32 byte %d is 0x%02x, not 0x%02x", k, buf[3 + k],
              want[k]);
    CHECK(buf[0] == 0x55 && buf[33] == 0x55, "bytes outside the packed ones changed");
    memset(out, 0, sizeof out);
    pos = 3;
    OK(MPI_Unpack_external("external32", buf, sizeof buf, &pos, out, 2, t));
    CHECK(pos == 33, "position %ld after unpacking", (long)pos);
    for (int k = 0; k < 2; k++)
        CHECK(out[k].i == in[k].i && out[k].d == in[k].d && out[k].s == in[k].s &&
              out[k].c == in[k].c, "element %d unpacked as %d %g %d %c", k, out[k].i,
              out[k].d, out[k].s, out[k].c);
    OK(MPI_Type_free(&t));
    /* external32's MPI_LONG is 4 bytes (MPI-3.1 table 13.2). */
    long l = -3, lback = 0;
    pos = 0;
    OK(MPI_Pack_external_size("external32", 1, MPI_LONG, &size));
    OK(MPI_Pack_external("external32", &l, 1, MPI_LONG, buf, sizeof buf, &pos));
    CHECK(size == 4 && pos == 4 && buf[0] == 0xff && buf[3] == 0xfd, "MPI_LONG: %ld bytes",
          (long)size);
    pos = 0;
    OK(MPI_Unpack_external("external32", buf, 4, &pos, &lback, 1, MPI_LONG));
    CHECK(lback == -3, "MPI_LONG back as %ld", lback);
}

static int copies, deletes;
static long last_deleted;

static int copy_fn(MPI_Datatype t, int key, void *extra, void *in, void *out, int *flag)
{
    (void)t, (void)key;
    CHECK(extra == &copies, "extra state %p", extra);
    copies++;
    *(void **)out = (void *)((MPI_Aint)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_fn(MPI_Datatype t, int key, void *val, void *extra)
{
    (void)t, (void)key, (void)extra;
    deletes++;
    last_deleted = (long)(MPI_Aint)val;
    return MPI_SUCCESS;
}

static void attributes(void)
{
    int kv, kv_null, kv_dup, flag, ckv, cls;
    void *v;
    MPI_Datatype t, d, d2, outer;
    OK(MPI_Type_create_keyval(copy_fn, delete_fn, &kv, &copies));
    OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &kv_null, NULL));
    OK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &kv_dup, NULL));
    OK(MPI_Type_contiguous(2, MPI_INT, &t));
    OK(MPI_Type_get_attr(t, kv, &v, &flag));
    CHECK(!flag, "an attribute before any was set");
    OK(MPI_Type_set_attr(t, kv, (void *)10));
    OK(MPI_Type_set_attr(t, kv_null, (void *)50));
    OK(MPI_Type_set_attr(t, kv_dup, (void *)60));
    OK(MPI_Type_get_attr(t, kv, &v, &flag));
    CHECK(flag && v == (void *)10, "attribute %p", v);
    /* Dup: the copy callback gives 11; NULL_COPY gives nothing; DUP the same. */
    OK(MPI_Type_dup(t, &d));
    CHECK(copies == 1 && deletes == 0, "after Type_dup: %d copies, %d deletes", copies, deletes);
    OK(MPI_Type_get_attr(d, kv, &v, &flag));
    CHECK(flag && v == (void *)11, "the duplicate's attribute %p", v);
    OK(MPI_Type_get_attr(d, kv_null, &v, &flag));
    CHECK(!flag, "MPI_TYPE_NULL_COPY_FN copied");
    OK(MPI_Type_get_attr(d, kv_dup, &v, &flag));
    CHECK(flag && v == (void *)60, "MPI_TYPE_DUP_FN gave %p", v);
    OK(MPI_Type_dup(d, &d2));
    CHECK(copies == 2, "second dup: %d copies", copies);
    /* Overwriting deletes the old value. */
    OK(MPI_Type_set_attr(t, kv, (void *)20));
    CHECK(deletes == 1 && last_deleted == 10, "overwrite: %d deletes, last %ld", deletes,
          last_deleted);
    /* d2's record holds d (MPI_Type_get_contents gives it back): d's
     * attributes go with the last hold. */
    OK(MPI_Type_free(&d));
    CHECK(deletes == 1, "deleted while d2 holds it: %d deletes", deletes);
    OK(MPI_Type_free(&d2));
    CHECK(deletes == 3 && last_deleted == 11, "Type_free: %d deletes, last %ld", deletes,
          last_deleted);
    OK(MPI_Type_delete_attr(t, kv));
    CHECK(deletes == 4 && last_deleted == 20, "delete_attr: %d deletes", deletes);
    OK(MPI_Type_get_attr(t, kv, &v, &flag));
    CHECK(!flag, "a deleted attribute is still there");
    /* The same for a type another type was made of. */
    OK(MPI_Type_set_attr(t, kv, (void *)30));
    OK(MPI_Type_contiguous(3, t, &outer));
    OK(MPI_Type_free(&t));
    CHECK(deletes == 4, "deleted while still held: %d", deletes);
    OK(MPI_Type_free(&outer));
    CHECK(deletes == 5 && last_deleted == 30, "after the last hold: %d deletes", deletes);
    /* On a predefined type too. */
    OK(MPI_Type_set_attr(MPI_INT, kv, (void *)40));
    OK(MPI_Type_get_attr(MPI_INT, kv, &v, &flag));
    CHECK(flag && v == (void *)40, "MPI_INT's attribute %p", v);
    OK(MPI_Type_delete_attr(MPI_INT, kv));
    CHECK(deletes == 6 && last_deleted == 40, "MPI_INT's delete");
    /* A freed keyval still names the attributes that hold it. */
    OK(MPI_Type_contiguous(1, MPI_INT, &t));
    OK(MPI_Type_set_attr(t, kv, (void *)70));
    OK(MPI_Type_free_keyval(&kv));
    CHECK(kv == MPI_KEYVAL_INVALID, "keyval after free %d", kv);
    OK(MPI_Type_free(&t));
    CHECK(deletes == 7 && last_deleted == 70, "freed keyval's attribute: %d deletes, last %ld",
          deletes, last_deleted);
    /* A communicator's keyval is not a datatype's. */
    OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &ckv, NULL));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int rc = MPI_Type_set_attr(MPI_INT, ckv, NULL);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_KEYVAL, "a communicator keyval on a type: class %d", cls);
    rc = MPI_Comm_set_attr(MPI_COMM_WORLD, kv_null, NULL);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_KEYVAL, "a datatype keyval on a communicator: class %d", cls);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    OK(MPI_Comm_free_keyval(&ckv));
    OK(MPI_Type_free_keyval(&kv_null));
    OK(MPI_Type_free_keyval(&kv_dup));
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    darrays();
    darray_errors();
    external32();
    attributes();
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (t_rank == 0)
        printf("typextra ok on %d ranks\n", t_size);
    OK(MPI_Finalize());
    return 0;
}
