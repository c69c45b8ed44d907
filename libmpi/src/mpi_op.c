/*
 * Reduction operations: every predefined operation on every predefined
 * type it is defined for (MPI-3.1 5.9.2), element by element over the type
 * map, and operations the program makes with MPI_Op_create.
 *
 *   MAX MIN               C and Fortran integers, floating point
 *   SUM PROD              those and complex
 *   LAND LOR LXOR         C integers, logical (C _Bool, Fortran LOGICAL)
 *   BAND BOR BXOR         C and Fortran integers, MPI_BYTE
 *   MAXLOC MINLOC         the value-index pairs
 */
#include <complex.h>
#include <string.h>

#include "mpi_impl.h"

#define FIRST_USER 16
#define MAX_OPS 256
static struct {
    bool in_use, commute;
    MPI_User_function *fn;
} ops[MAX_OPS];

enum { O_MAX = 1, O_MIN, O_SUM, O_PROD, O_LAND, O_BAND, O_LOR, O_BOR, O_LXOR, O_BXOR, O_MINLOC,
       O_MAXLOC, O_REPLACE, O_NO_OP };
static const char *const op_names[] = {
    "", "MPI_MAX", "MPI_MIN", "MPI_SUM", "MPI_PROD", "MPI_LAND", "MPI_BAND", "MPI_LOR",
    "MPI_BOR", "MPI_LXOR", "MPI_BXOR", "MPI_MINLOC", "MPI_MAXLOC", "MPI_REPLACE", "MPI_NO_OP"};

/* ---- kernels ---- */

#define LOOP(T, expr)                                    \
    do {                                                 \
        const T *a = in;                                 \
        T *b = inout;                                    \
        for (long i = 0; i < n; i++)                     \
            b[i] = (expr);                               \
    } while (0)

/* Integers: arithmetic in the unsigned type of the same width, so
 * overflow wraps as the hardware does instead of being undefined. */
#define INT_OPS(T, U)                                                          \
    switch (op) {                                                              \
    case O_MAX: LOOP(T, a[i] > b[i] ? a[i] : b[i]); return 0;                  \
    case O_MIN: LOOP(T, a[i] < b[i] ? a[i] : b[i]); return 0;                  \
    case O_SUM: LOOP(T, (T)((U)a[i] + (U)b[i])); return 0;                     \
    case O_PROD: LOOP(T, (T)((U)a[i] * (U)b[i])); return 0;                    \
    case O_BAND: LOOP(T, a[i] & b[i]); return 0;                               \
    case O_BOR: LOOP(T, a[i] | b[i]); return 0;                                \
    case O_BXOR: LOOP(T, a[i] ^ b[i]); return 0;                               \
    case O_LAND: if (!fortran) { LOOP(T, (T)(a[i] && b[i])); return 0; } break; \
    case O_LOR: if (!fortran) { LOOP(T, (T)(a[i] || b[i])); return 0; } break;  \
    case O_LXOR: if (!fortran) { LOOP(T, (T)(!a[i] != !b[i])); return 0; } break; \
    }                                                                          \
    return -1

#define FLOAT_OPS(T)                                                 \
    switch (op) {                                                    \
    case O_MAX: LOOP(T, a[i] > b[i] ? a[i] : b[i]); return 0;        \
    case O_MIN: LOOP(T, a[i] < b[i] ? a[i] : b[i]); return 0;        \
    case O_SUM: LOOP(T, a[i] + b[i]); return 0;                      \
    case O_PROD: LOOP(T, a[i] * b[i]); return 0;                     \
    }                                                                \
    return -1

#define COMPLEX_OPS(T)                                               \
    switch (op) {                                                    \
    case O_SUM: LOOP(T, a[i] + b[i]); return 0;                      \
    case O_PROD: LOOP(T, a[i] * b[i]); return 0;                     \
    }                                                                \
    return -1

#define LOGICAL_OPS(T, TRUE)                                                     \
    switch (op) {                                                                \
    case O_LAND: LOOP(T, (a[i] && b[i]) ? TRUE : 0); return 0;                   \
    case O_LOR: LOOP(T, (a[i] || b[i]) ? TRUE : 0); return 0;                    \
    case O_LXOR: LOOP(T, (!a[i] != !b[i]) ? TRUE : 0); return 0;                 \
    }                                                                            \
    return -1

/* MAXLOC / MINLOC: the better value; on a tie the smaller index.  Field by
 * field: a pair's padding is no data, and the buffer may end before the
 * last pair's padding (a reduction's buffer holds data, not extents). */
#define PAIR_OPS(V, I)                                                            \
    do {                                                                          \
        struct p { V v; I i; };                                                   \
        const struct p *a = in;                                                   \
        struct p *b = inout;                                                      \
        if (op != O_MAXLOC && op != O_MINLOC)                                     \
            return -1;                                                            \
        for (long k = 0; k < n; k++) {                                            \
            bool better = op == O_MAXLOC ? a[k].v > b[k].v : a[k].v < b[k].v;     \
            if (better) {                                                         \
                b[k].v = a[k].v;                                                  \
                b[k].i = a[k].i;                                                  \
            } else if (a[k].v == b[k].v && a[k].i < b[k].i)                         \
                b[k].i = a[k].i;                                                  \
        }                                                                         \
        return 0;                                                                 \
    } while (0)

/* inout[i] = in[i] op inout[i] for n elements of one basic type; -1 if op
 * is not defined on it. */
static int apply_basic(int op, int basic, const void *in, void *inout, long n)
{
    bool fortran = false;
    switch (basic) {
    case B_SCHAR: case B_I8: { INT_OPS(int8_t, uint8_t); }
    case B_UCHAR: case B_U8: { INT_OPS(uint8_t, uint8_t); }
    case B_SHORT: case B_I16: { INT_OPS(int16_t, uint16_t); }
    case B_USHORT: case B_U16: { INT_OPS(uint16_t, uint16_t); }
    case B_INT: case B_I32: { INT_OPS(int32_t, uint32_t); }
    case B_UINT: case B_U32: { INT_OPS(uint32_t, uint32_t); }
    case B_LONG: case B_LLONG: case B_I64: case B_AINT: case B_OFFSET: case B_COUNT: {
        INT_OPS(int64_t, uint64_t);
    }
    case B_ULONG: case B_ULLONG: case B_U64: { INT_OPS(uint64_t, uint64_t); }
    case B_FINTEGER: case B_FINTEGER4: { fortran = true; INT_OPS(int32_t, uint32_t); }
    case B_FINTEGER1: { fortran = true; INT_OPS(int8_t, uint8_t); }
    case B_FINTEGER2: { fortran = true; INT_OPS(int16_t, uint16_t); }
    case B_FINTEGER8: { fortran = true; INT_OPS(int64_t, uint64_t); }
    case B_BYTE:
        switch (op) {
        case O_BAND: LOOP(uint8_t, a[i] & b[i]); return 0;
        case O_BOR: LOOP(uint8_t, a[i] | b[i]); return 0;
        case O_BXOR: LOOP(uint8_t, a[i] ^ b[i]); return 0;
        }
        return -1;
    case B_FLOAT: case B_FREAL: case B_FREAL4: { FLOAT_OPS(float); }
    case B_DOUBLE: case B_FDOUBLE: case B_FREAL8: { FLOAT_OPS(double); }
    case B_LDOUBLE: { FLOAT_OPS(long double); }
    case B_CFLOAT: case B_FCOMPLEX: case B_FCOMPLEX8: { COMPLEX_OPS(float _Complex); }
    case B_CDOUBLE: case B_FDCOMPLEX: case B_FCOMPLEX16: { COMPLEX_OPS(double _Complex); }
    case B_CLDOUBLE: { COMPLEX_OPS(long double _Complex); }
    case B_BOOL: { LOGICAL_OPS(_Bool, 1); }
    case B_FLOGICAL: { LOGICAL_OPS(int32_t, 1); } /* gfortran: .TRUE. is 1 */
    case B_FLOAT_INT: PAIR_OPS(float, int);
    case B_DOUBLE_INT: PAIR_OPS(double, int);
    case B_LONG_INT: PAIR_OPS(long, int);
    case B_2INT: PAIR_OPS(int, int);
    case B_SHORT_INT: PAIR_OPS(short, int);
    case B_LDOUBLE_INT: PAIR_OPS(long double, int);
    case B_F2REAL: PAIR_OPS(float, float);
    case B_F2DOUBLE: PAIR_OPS(double, double);
    case B_F2INTEGER: PAIR_OPS(int32_t, int32_t);
    default:
        return -1;
    }
}

static long basic_size(int basic)
{
    struct mtype *t = mpi_type_get(H_MAKE(K_TYPE, basic));
    return t->size;
}

/* What an operation works on in block b: the pair that starts there, or
 * its basic elements. */
static int block_kind(const struct block *b)
{
    return b->pair ? b->pair : b->basic;
}

static bool op_valid(MPI_Op op)
{
    return H_KIND(op) == K_OP && H_IDX(op) > 0 && H_IDX(op) < MAX_OPS &&
           (H_IDX(op) < FIRST_USER ? H_IDX(op) <= O_NO_OP : ops[H_IDX(op)].in_use);
}

bool mpi_op_commutes(MPI_Op op)
{
    return H_IDX(op) < FIRST_USER || ops[H_IDX(op)].commute;
}

int mpi_check_op(const char *call, MPI_Comm comm, MPI_Op op, MPI_Datatype dt)
{
    if (!op_valid(op))
        return mpi_error(comm, MPI_ERR_OP, call, "%s is not an operation",
                         op == MPI_OP_NULL ? "MPI_OP_NULL" : "the handle given");
    int o = H_IDX(op);
    if (o >= FIRST_USER)
        return MPI_SUCCESS;
    if (o == O_REPLACE || o == O_NO_OP)
        return mpi_error(comm, MPI_ERR_OP, call, "%s is for one-sided accumulates only",
                         op_names[o]);
    struct mtype *t = mpi_type_get(dt);
    if (!t)
        return MPI_SUCCESS; /* the type check reports it */
    char probe[64] = {0}, probe2[64] = {0};
    for (int k = 0; k < t->nblocks; k++) {
        if (mpi_pair_index(t, k))
            continue;
        int basic = block_kind(&t->blocks[k]);
        if (apply_basic(o, basic, probe, probe2, 0) < 0)
            return mpi_error(comm, MPI_ERR_OP, call, "%s is not defined on %s", op_names[o],
                             mpi_type_get(H_MAKE(K_TYPE, basic))->name);
    }
    return MPI_SUCCESS;
}

/* A predefined op over count elements of t; dt is t's handle, or
 * MPI_DATATYPE_NULL for a type that has none (a window's target type as
 * the origin described it, mpi_rma.c). */
static int apply_type(const char *call, MPI_Comm comm, MPI_Op op, const void *in, void *inout,
                      long count, const struct mtype *t, MPI_Datatype dt)
{
    int o = H_IDX(op);
    if (mpi_contig(t)) { /* one run of elements (or of whole pairs): one call */
        const struct block *b = &t->blocks[0];
        long n = b->pair ? count : count * (b->len / basic_size(b->basic));
        if (apply_basic(o, block_kind(b), in, inout, n) < 0)
            goto undefined;
        return MPI_SUCCESS;
    }
    long ext = mpi_extent(t);
    for (long i = 0; i < count; i++)
        FOR_BLOCKS(t, r, k) {
            const struct block *b = &t->blocks[k];
            if (mpi_pair_index(t, k))
                continue; /* taken with its value */
            long off = i * ext + BLOCK_OFF(t, r, k);
            if (apply_basic(o, block_kind(b), (const char *)in + off, (char *)inout + off,
                            b->pair ? 1 : b->len / basic_size(b->basic)) < 0)
                goto undefined;
        }
    return MPI_SUCCESS;
undefined:
    if (dt != MPI_DATATYPE_NULL)
        return mpi_check_op(call, comm, op, dt);
    return mpi_error(comm, MPI_ERR_OP, call, "%s is not defined on the target's datatype",
                     op_valid(op) && o < FIRST_USER ? op_names[o] : "the operation");
}

int mpi_op_apply(const char *call, MPI_Comm comm, MPI_Op op, const void *in, void *inout,
                 long count, MPI_Datatype dt)
{
    if (count <= 0)
        return MPI_SUCCESS;
    int o = H_IDX(op);
    if (o >= FIRST_USER) {
        int n = (int)count;
        ops[o].fn((void *)in, inout, &n, &dt);
        return MPI_SUCCESS;
    }
    return apply_type(call, comm, op, in, inout, count, mpi_type_get(dt), dt);
}

int mpi_op_apply_type(const char *call, MPI_Comm comm, MPI_Op op, const void *in, void *inout,
                      long count, const struct mtype *t)
{
    if (count <= 0)
        return MPI_SUCCESS;
    if (!op_valid(op) || H_IDX(op) >= FIRST_USER || H_IDX(op) >= O_REPLACE)
        return mpi_error(comm, MPI_ERR_OP, call, "not a predefined reduction operation");
    return apply_type(call, comm, op, in, inout, count, t, MPI_DATATYPE_NULL);
}

bool mpi_op_predefined(MPI_Op op) { return op_valid(op) && H_IDX(op) < FIRST_USER; }

int MPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    NEED_INIT("MPI_Op_create");
    for (int i = FIRST_USER; i < MAX_OPS; i++)
        if (!ops[i].in_use) {
            ops[i].in_use = true;
            ops[i].commute = commute != 0;
            ops[i].fn = user_fn;
            *op = H_MAKE(K_OP, i);
            return MPI_SUCCESS;
        }
    return mpi_error(MPI_COMM_NULL, MPI_ERR_INTERN, "MPI_Op_create",
                     "all %d user operations in use", MAX_OPS - FIRST_USER);
}

int MPI_Op_free(MPI_Op *op)
{
    NEED_INIT("MPI_Op_free");
    if (!op_valid(*op) || H_IDX(*op) < FIRST_USER)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_OP, "MPI_Op_free",
                         "not an operation made by MPI_Op_create");
    ops[H_IDX(*op)].in_use = false;
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}

int MPI_Op_commutative(MPI_Op op, int *commute)
{
    NEED_INIT("MPI_Op_commutative");
    if (!op_valid(op))
        return mpi_error(MPI_COMM_NULL, MPI_ERR_OP, "MPI_Op_commutative", "not an operation");
    *commute = mpi_op_commutes(op);
    return MPI_SUCCESS;
}

int MPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype,
                     MPI_Op op)
{
    NEED_INIT("MPI_Reduce_local");
    struct mtype *t;
    TRY(mpi_check_type("MPI_Reduce_local", MPI_COMM_NULL, datatype, &t));
    TRY(mpi_check_op("MPI_Reduce_local", MPI_COMM_NULL, op, datatype));
    return mpi_op_apply("MPI_Reduce_local", MPI_COMM_NULL, op, inbuf, inoutbuf, count,
                        datatype);
}
