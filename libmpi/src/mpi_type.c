/*
 * Datatypes.  Every type is kept flattened: its type map as a list of
 * blocks (offset, length, what basic type the bytes are) in order, merged
 * where adjacent and alike.  Sending a non-contiguous type packs it into a
 * temporary buffer (one copy), receiving unpacks.  The table holds the
 * predefined types and MAX_DERIVED derived ones.
 */
#include <complex.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

#define FIRST_DERIVED 64
#define MAX_DERIVED 4096
#define MAX_TYPES (FIRST_DERIVED + MAX_DERIVED)

static struct mtype types[MAX_TYPES];
static struct block predef_blocks[B_COUNT_OF][2];

struct pair_float_int { float v; int i; };
struct pair_double_int { double v; int i; };
struct pair_long_int { long v; int i; };
struct pair_short_int { short v; int i; };
struct pair_ldouble_int { long double v; int i; };

static const struct {
    const char *name;
    long size, align;
} predef[B_COUNT_OF] = {
#define P(b, n, t) [b] = {n, sizeof(t), _Alignof(t)}
    P(B_CHAR, "MPI_CHAR", char), P(B_SCHAR, "MPI_SIGNED_CHAR", signed char),
    P(B_UCHAR, "MPI_UNSIGNED_CHAR", unsigned char), P(B_BYTE, "MPI_BYTE", unsigned char),
    P(B_WCHAR, "MPI_WCHAR", int), P(B_SHORT, "MPI_SHORT", short),
    P(B_USHORT, "MPI_UNSIGNED_SHORT", unsigned short), P(B_INT, "MPI_INT", int),
    P(B_UINT, "MPI_UNSIGNED", unsigned), P(B_LONG, "MPI_LONG", long),
    P(B_ULONG, "MPI_UNSIGNED_LONG", unsigned long), P(B_LLONG, "MPI_LONG_LONG_INT", long long),
    P(B_ULLONG, "MPI_UNSIGNED_LONG_LONG", unsigned long long), P(B_FLOAT, "MPI_FLOAT", float),
    P(B_DOUBLE, "MPI_DOUBLE", double), P(B_LDOUBLE, "MPI_LONG_DOUBLE", long double),
    P(B_I8, "MPI_INT8_T", int8_t), P(B_I16, "MPI_INT16_T", int16_t),
    P(B_I32, "MPI_INT32_T", int32_t), P(B_I64, "MPI_INT64_T", int64_t),
    P(B_U8, "MPI_UINT8_T", uint8_t), P(B_U16, "MPI_UINT16_T", uint16_t),
    P(B_U32, "MPI_UINT32_T", uint32_t), P(B_U64, "MPI_UINT64_T", uint64_t),
    P(B_BOOL, "MPI_C_BOOL", _Bool), P(B_CFLOAT, "MPI_C_FLOAT_COMPLEX", float _Complex),
    P(B_CDOUBLE, "MPI_C_DOUBLE_COMPLEX", double _Complex),
    P(B_CLDOUBLE, "MPI_C_LONG_DOUBLE_COMPLEX", long double _Complex),
    P(B_AINT, "MPI_AINT", MPI_Aint), P(B_OFFSET, "MPI_OFFSET", MPI_Offset),
    P(B_COUNT, "MPI_COUNT", MPI_Count), P(B_PACKED, "MPI_PACKED", unsigned char),
    P(B_FLOAT_INT, "MPI_FLOAT_INT", struct pair_float_int),
    P(B_DOUBLE_INT, "MPI_DOUBLE_INT", struct pair_double_int),
    P(B_LONG_INT, "MPI_LONG_INT", struct pair_long_int), P(B_2INT, "MPI_2INT", int[2]),
    P(B_SHORT_INT, "MPI_SHORT_INT", struct pair_short_int),
    P(B_LDOUBLE_INT, "MPI_LONG_DOUBLE_INT", struct pair_ldouble_int),
    /* Fortran, as gfortran lays them out by default */
    P(B_FINTEGER, "MPI_INTEGER", int32_t), P(B_FREAL, "MPI_REAL", float),
    P(B_FDOUBLE, "MPI_DOUBLE_PRECISION", double), P(B_FCOMPLEX, "MPI_COMPLEX", float _Complex),
    P(B_FDCOMPLEX, "MPI_DOUBLE_COMPLEX", double _Complex), P(B_FLOGICAL, "MPI_LOGICAL", int32_t),
    P(B_FCHARACTER, "MPI_CHARACTER", char), P(B_FINTEGER1, "MPI_INTEGER1", int8_t),
    P(B_FINTEGER2, "MPI_INTEGER2", int16_t), P(B_FINTEGER4, "MPI_INTEGER4", int32_t),
    P(B_FINTEGER8, "MPI_INTEGER8", int64_t), P(B_FREAL4, "MPI_REAL4", float),
    P(B_FREAL8, "MPI_REAL8", double), P(B_FCOMPLEX8, "MPI_COMPLEX8", float _Complex),
    P(B_FCOMPLEX16, "MPI_COMPLEX16", double _Complex), P(B_F2REAL, "MPI_2REAL", float[2]),
    P(B_F2DOUBLE, "MPI_2DOUBLE_PRECISION", double[2]),
    P(B_F2INTEGER, "MPI_2INTEGER", int32_t[2]),
#undef P
};

/* The value-index pairs are C structs in MPI's eyes (MPI-3.1 5.9.4):
 * MPI_DOUBLE_INT's type map is {(double, 0), (int, 8)}, 12 bytes of data
 * in an extent of 16.  Its padding is no data: not sent, not written. */
static const struct pair_layout {
    int v, i;   /* basic types of the value and the index */
    long ioff;  /* where the index is */
} pairs[B_COUNT_OF] = {
#define Q(b, V, I, t) [b] = {V, I, offsetof(t, i)}
    Q(B_FLOAT_INT, B_FLOAT, B_INT, struct pair_float_int),
    Q(B_DOUBLE_INT, B_DOUBLE, B_INT, struct pair_double_int),
    Q(B_LONG_INT, B_LONG, B_INT, struct pair_long_int),
    Q(B_SHORT_INT, B_SHORT, B_INT, struct pair_short_int),
    Q(B_LDOUBLE_INT, B_LDOUBLE, B_INT, struct pair_ldouble_int),
#undef Q
    [B_2INT] = {B_INT, B_INT, sizeof(int)},
    [B_F2REAL] = {B_FREAL, B_FREAL, sizeof(float)},
    [B_F2DOUBLE] = {B_FDOUBLE, B_FDOUBLE, sizeof(double)},
    [B_F2INTEGER] = {B_FINTEGER, B_FINTEGER, sizeof(int32_t)},
};

void mpi_types_init(void)
{
    for (int b = 1; b < B_COUNT_OF; b++) {
        struct block *bl = predef_blocks[b];
        const struct pair_layout *p = &pairs[b];
        int n = 1;
        long size = predef[b].size;
        if (!p->v) {
            bl[0] = (struct block){0, size, b, 0};
        } else {
            long vs = predef[p->v].size, is = predef[p->i].size;
            size = vs + is;
            if (p->ioff == vs && p->v == p->i) /* touching: one block */
                bl[0] = (struct block){0, size, p->v, b};
            else {
                bl[0] = (struct block){0, vs, p->v, b};
                bl[1] = (struct block){p->ioff, is, p->i, 0};
                n = 2;
            }
        }
        types[b] = (struct mtype){.in_use = true, .committed = true, .predefined = true,
                                  .combiner = MPI_COMBINER_NAMED, .size = size,
                                  .lb = 0, .ub = predef[b].size, .true_lb = 0,
                                  .true_ub = bl[n - 1].off + bl[n - 1].len, .nblocks = n,
                                  .reps = 1, .blocks = bl, .name = predef[b].name};
    }
}

bool mpi_pair_index(const struct mtype *t, int k)
{
    if (k <= 0)
        return false;
    const struct block *v = &t->blocks[k - 1], *i = &t->blocks[k];
    const struct pair_layout *p = &pairs[v->pair];
    return v->pair && v->len == predef[p->v].size && i->pair == 0 && i->basic == p->i &&
           i->off == v->off + p->ioff && i->len == predef[p->i].size;
}

struct mtype *mpi_type_get(MPI_Datatype t)
{
    if (H_KIND(t) != K_TYPE || H_IDX(t) <= 0 || H_IDX(t) >= MAX_TYPES)
        return NULL;
    return types[H_IDX(t)].in_use ? &types[H_IDX(t)] : NULL;
}

MPI_Datatype mpi_type_handle(const struct mtype *t) { return H_MAKE(K_TYPE, (int)(t - types)); }

int mpi_check_type(const char *call, MPI_Comm comm, MPI_Datatype t, struct mtype **out)
{
    *out = mpi_type_get(t);
    if (!*out)
        return mpi_error(comm, MPI_ERR_TYPE, call, "%s is not a datatype",
                         t == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL" : "the handle given");
    if (!(*out)->committed)
        return mpi_error(comm, MPI_ERR_TYPE, call, "the datatype is not committed");
    return MPI_SUCCESS;
}

/* A type argument to a constructor or an inquiry: committed or not. */
int mpi_check_type_any(const char *call, MPI_Datatype t, struct mtype **out)
{
    NEED_INIT(call);
    *out = mpi_type_get(t);
    if (!*out)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_TYPE, call, "%s is not a datatype",
                         t == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL" : "the handle given");
    return MPI_SUCCESS;
}

long mpi_span(const struct mtype *t, long count)
{
    return count > 0 ? (count - 1) * mpi_extent(t) + t->true_ub - t->true_lb : 0;
}

long mpi_basic_size(int basic) { return predef[basic].size; }

/* The one walk over count elements' type maps, block by block, in order:
 * each block moved between memory and the packed buffer as is (f NULL)
 * or by f, which says how many packed bytes it made or took. */
long mpi_walk(void *buf, long count, const struct mtype *t, void *packed, bool pack,
              mpi_block_fn *f)
{
    char *p = packed;
    long ext = mpi_extent(t);
    for (long i = 0; i < count; i++) {
        char *base = (char *)buf + i * ext;
        FOR_BLOCKS(t, r, b) {
            char *m = base + BLOCK_OFF(t, r, b);
            long len = t->blocks[b].len;
            if (f)
                p += f(m, p, len, t->blocks[b].basic, pack);
            else {
                memcpy(pack ? p : m, pack ? m : p, (size_t)len);
                p += len;
            }
        }
    }
    return p - (char *)packed;
}

void mpi_pack(const void *buf, long count, const struct mtype *t, void *out)
{
    mpi_walk((void *)buf, count, t, out, true, NULL);   /* buf only read */
}

void mpi_unpack(const void *in, long count, const struct mtype *t, void *buf)
{
    mpi_walk(buf, count, t, (void *)in, false, NULL);   /* in only read */
}

/* bytes of packed data into elements of t at buf: the whole elements,
 * then what there is of the next one in type-map order.  A message shorter
 * than the receive buffer fills its first part (MPI-3.1 3.2.4), also when
 * that ends inside an element of a derived type. */
void mpi_unpack_bytes(const void *in, long bytes, const struct mtype *t, void *buf)
{
    long whole = t->size ? bytes / t->size : 0, rest = bytes - whole * t->size;
    mpi_unpack(in, whole, t, buf);
    const char *p = (const char *)in + whole * t->size;
    char *base = (char *)buf + whole * mpi_extent(t);
    FOR_BLOCKS(t, r, b) {
        long take = rest < t->blocks[b].len ? rest : t->blocks[b].len;
        if (take <= 0)
            return;
        memcpy(base + BLOCK_OFF(t, r, b), p, (size_t)take);
        p += take;
        rest -= take;
    }
}

/* ---- building derived types ---- */

/* A type being built: blocks appended in type-map order, merged. */
struct builder {
    struct block *b;
    int n, cap;
    long size, lb, ub, tlb, tub;
    bool any, anydata;
    long align;
    long reps, rep_stride; /* 0 or 1: no repetition */
};

/* A pair's value block takes in nothing but its own touching index, so a
 * reduction finds each pair whole and nothing else inside it. */
static bool merges(const struct block *prev, long off, long len, int basic, int pair)
{
    if (pair || prev->off + prev->len != off || prev->basic != basic)
        return false;
    if (!prev->pair)
        return true;
    const struct pair_layout *p = &pairs[prev->pair];
    long vs = predef[p->v].size;
    return prev->len == vs && p->ioff == vs && p->i == basic && len == predef[p->i].size;
}

static int add_block(struct builder *x, long off, long len, int basic, int pair)
{
    if (!len)
        return 0;
    if (x->n && merges(&x->b[x->n - 1], off, len, basic, pair)) {
        x->b[x->n - 1].len += len;
    } else {
        if (x->n == x->cap) {
            int cap = x->cap ? 2 * x->cap : 16;
            struct block *nb = realloc(x->b, sizeof *nb * (size_t)cap);
            if (!nb)
                return -1;
            x->b = nb;
            x->cap = cap;
        }
        x->b[x->n++] = (struct block){off, len, basic, pair};
    }
    x->size += len;
    if (!x->anydata || off < x->tlb)
        x->tlb = off;
    if (!x->anydata || off + len > x->tub)
        x->tub = off + len;
    x->anydata = true;
    return 0;
}

/* Append count copies of old, the first at displacement disp, one extent
 * apart. */
static int add_copies(struct builder *x, const struct mtype *old, long disp, long count)
{
    long ext = mpi_extent(old);
    for (long i = 0; i < count; i++) {
        long d = disp + i * ext;
        FOR_BLOCKS(old, r, k)
            if (add_block(x, d + BLOCK_OFF(old, r, k), old->blocks[k].len, old->blocks[k].basic,
                          old->blocks[k].pair))
                return -1;
        if (!x->any || d + old->lb < x->lb)
            x->lb = d + old->lb;
        if (!x->any || d + old->ub > x->ub)
            x->ub = d + old->ub;
        x->any = true;
    }
    return 0;
}

static long type_align(const struct mtype *t)
{
    long a = 1;
    for (int k = 0; k < t->nblocks; k++)
        if (predef[t->blocks[k].basic].align > a)
            a = predef[t->blocks[k].basic].align;
    return a;
}

static int finish(const char *call, struct builder *x, int combiner, MPI_Datatype *newtype)
{
    if (x->n < 0) {
        free(x->b);
        return mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, call, "no memory for the type map");
    }
    for (int i = FIRST_DERIVED; i < MAX_TYPES; i++)
        if (!types[i].in_use) {
            struct mtype *t = &types[i];
            memset(t, 0, sizeof *t);
            t->in_use = true;
            t->refs = 1;
            t->combiner = combiner;
            t->size = x->size;
            t->lb = x->any ? x->lb : 0;
            t->ub = x->any ? x->ub : 0;
            t->true_lb = x->anydata ? x->tlb : 0;
            t->true_ub = x->anydata ? x->tub : 0;
            t->nblocks = x->n;
            t->blocks = x->b;
            t->reps = x->reps > 1 ? x->reps : 1;
            t->rep_stride = x->rep_stride;
            /* A struct's extent is rounded up to its strictest member's
             * alignment, as C lays out arrays of structs (MPI-3.1 4.1.6). */
            if (combiner == MPI_COMBINER_STRUCT && x->align > 1) {
                long ext = t->ub - t->lb, r = ext % x->align;
                if (r)
                    t->ub += x->align - r;
            }
            *newtype = H_MAKE(K_TYPE, i);
            return MPI_SUCCESS;
        }
    free(x->b);
    return mpi_error(MPI_COMM_NULL, MPI_ERR_INTERN, call, "all %d derived datatypes in use",
                     MAX_DERIVED);
}

static int bad_count(const char *call, int count)
{
    return mpi_error(MPI_COMM_NULL, MPI_ERR_COUNT, call, "count %d is negative", count);
}

int MPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    struct mtype *o;
    TRY(mpi_check_type_any("MPI_Type_contiguous", oldtype, &o));
    if (count < 0)
        return bad_count("MPI_Type_contiguous", count);
    struct builder x = {0};
    if (add_copies(&x, o, 0, count))
        x.n = -1;
    TRY(finish("MPI_Type_contiguous", &x, MPI_COMBINER_CONTIGUOUS, newtype));
    return mpi_type_record(*newtype, MPI_COMBINER_CONTIGUOUS, 1, &count, 0, NULL, 1, &oldtype);
}

static int hvector(const char *call, int count, int blocklength, long stride_bytes,
                   MPI_Datatype oldtype, MPI_Datatype *newtype, int combiner)
{
    struct mtype *o;
    TRY(mpi_check_type_any(call, oldtype, &o));
    if (count < 0 || blocklength < 0)
        return bad_count(call, count < 0 ? count : blocklength);
    /* One block of blocklength copies, repeated count times stride_bytes
     * apart: a vector of a million elements stays a few blocks. */
    struct builder x = {0};
    if (add_copies(&x, o, 0, blocklength))
        x.n = -1;
    if (count == 0) {
        free(x.b);
        x = (struct builder){0};
    } else if (count > 1 && x.n >= 0) {
        long span = (long)(count - 1) * stride_bytes;
        x.reps = count;
        x.rep_stride = stride_bytes;
        x.size *= count;
        if (x.any) {
            x.lb = x.lb + (span < 0 ? span : 0);
            x.ub = x.ub + (span > 0 ? span : 0);
        }
        if (x.anydata) {
            x.tlb = x.tlb + (span < 0 ? span : 0);
            x.tub = x.tub + (span > 0 ? span : 0);
        }
        /* Back to back: one block after all. */
        if (x.n == 1 && x.b[0].len == stride_bytes) {
            x.b[0].len *= count;
            x.reps = 1;
        }
    }
    return finish(call, &x, combiner, newtype);
}

int MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                    MPI_Datatype *newtype)
{
    struct mtype *o;
    TRY(mpi_check_type_any("MPI_Type_vector", oldtype, &o));
    TRY(hvector("MPI_Type_vector", count, blocklength, (long)stride * mpi_extent(o), oldtype,
                newtype, MPI_COMBINER_VECTOR));
    int ints[3] = {count, blocklength, stride};
    return mpi_type_record(*newtype, MPI_COMBINER_VECTOR, 3, ints, 0, NULL, 1, &oldtype);
}

int MPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                            MPI_Datatype *newtype)
{
    TRY(hvector("MPI_Type_create_hvector", count, blocklength, stride, oldtype, newtype,
                MPI_COMBINER_HVECTOR));
    int ints[2] = {count, blocklength};
    return mpi_type_record(*newtype, MPI_COMBINER_HVECTOR, 2, ints, 1, &stride, 1, &oldtype);
}

int MPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                     MPI_Datatype *newtype)
{
    return MPI_Type_create_hvector(count, blocklength, stride, oldtype, newtype);
}

/* displacements in bytes (disp_b) or in old's extents (disp_e) */
static int hindexed(const char *call, int count, const int blens[], const MPI_Aint disp_b[],
                    const int disp_e[], int blen_all, MPI_Datatype oldtype,
                    MPI_Datatype *newtype, int combiner)
{
    struct mtype *o;
    TRY(mpi_check_type_any(call, oldtype, &o));
    if (count < 0)
        return bad_count(call, count);
    struct builder x = {0};
    for (int i = 0; i < count && x.n >= 0; i++) {
        int bl = blens ? blens[i] : blen_all;
        if (bl < 0) {
            free(x.b);
            return bad_count(call, bl);
        }
        long d = disp_b ? disp_b[i] : (long)disp_e[i] * mpi_extent(o);
        if (add_copies(&x, o, d, bl))
            x.n = -1;
    }
    TRY(finish(call, &x, combiner, newtype));
    /* MPI_Type_get_contents's integers: count, then the block lengths
     * (one for the _block kinds), then the displacements in extents. */
    int ni = 1 + (blens ? count : 1) + (disp_e ? count : 0);
    int *ints = malloc(sizeof(int) * (size_t)ni);
    if (!ints)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, call, "no memory");
    ints[0] = count;
    int k = 1;
    if (blens)
        for (int i = 0; i < count; i++)
            ints[k++] = blens[i];
    else
        ints[k++] = blen_all;
    if (disp_e)
        for (int i = 0; i < count; i++)
            ints[k++] = disp_e[i];
    int rc = mpi_type_record(*newtype, combiner, ni, ints, disp_b ? count : 0, disp_b, 1,
                             &oldtype);
    free(ints);
    return rc;
}

int MPI_Type_indexed(int count, const int array_of_blocklengths[],
                     const int array_of_displacements[], MPI_Datatype oldtype,
                     MPI_Datatype *newtype)
{
    return hindexed("MPI_Type_indexed", count, array_of_blocklengths, NULL,
                    array_of_displacements, 0, oldtype, newtype, MPI_COMBINER_INDEXED);
}

int MPI_Type_create_indexed_block(int count, int blocklength,
                                  const int array_of_displacements[], MPI_Datatype oldtype,
                                  MPI_Datatype *newtype)
{
    return hindexed("MPI_Type_create_indexed_block", count, NULL, NULL, array_of_displacements,
                    blocklength, oldtype, newtype, MPI_COMBINER_INDEXED_BLOCK);
}

int MPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                             const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                             MPI_Datatype *newtype)
{
    return hindexed("MPI_Type_create_hindexed", count, array_of_blocklengths,
                    array_of_displacements, NULL, 0, oldtype, newtype, MPI_COMBINER_HINDEXED);
}

int MPI_Type_hindexed(int count, const int array_of_blocklengths[],
                      const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                      MPI_Datatype *newtype)
{
    return MPI_Type_create_hindexed(count, array_of_blocklengths, array_of_displacements,
                                    oldtype, newtype);
}

int MPI_Type_create_hindexed_block(int count, int blocklength,
                                   const MPI_Aint array_of_displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return hindexed("MPI_Type_create_hindexed_block", count, NULL, array_of_displacements,
                    NULL, blocklength, oldtype, newtype, MPI_COMBINER_HINDEXED_BLOCK);
}

int MPI_Type_create_struct(int count, const int array_of_blocklengths[],
                           const MPI_Aint array_of_displacements[],
                           const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    NEED_INIT("MPI_Type_create_struct");
    if (count < 0)
        return bad_count("MPI_Type_create_struct", count);
    struct builder x = {0};
    x.align = 1;
    for (int i = 0; i < count; i++) {
        struct mtype *o;
        int rc = mpi_check_type_any("MPI_Type_create_struct", array_of_types[i], &o);
        if (rc || array_of_blocklengths[i] < 0) {
            free(x.b);
            return rc ? rc : bad_count("MPI_Type_create_struct", array_of_blocklengths[i]);
        }
        if (x.n >= 0 && add_copies(&x, o, array_of_displacements[i], array_of_blocklengths[i]))
            x.n = -1;
        long a = type_align(o);
        if (a > x.align)
            x.align = a;
    }
    TRY(finish("MPI_Type_create_struct", &x, MPI_COMBINER_STRUCT, newtype));
    int *ints = malloc(sizeof(int) * (size_t)(count + 1));
    if (!ints)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Type_create_struct", "no memory");
    ints[0] = count;
    memcpy(ints + 1, array_of_blocklengths, sizeof(int) * (size_t)count);
    int rc = mpi_type_record(*newtype, MPI_COMBINER_STRUCT, count + 1, ints, count,
                             array_of_displacements, count, array_of_types);
    free(ints);
    return rc;
}

int MPI_Type_struct(int count, const int array_of_blocklengths[],
                    const MPI_Aint array_of_displacements[], const MPI_Datatype array_of_types[],
                    MPI_Datatype *newtype)
{
    return MPI_Type_create_struct(count, array_of_blocklengths, array_of_displacements,
                                  array_of_types, newtype);
}

int MPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                            MPI_Datatype *newtype)
{
    struct mtype *o;
    TRY(mpi_check_type_any("MPI_Type_create_resized", oldtype, &o));
    struct builder x = {0};
    if (add_copies(&x, o, 0, 1))
        x.n = -1;
    x.lb = lb;
    x.ub = lb + extent;
    x.any = true;
    TRY(finish("MPI_Type_create_resized", &x, MPI_COMBINER_RESIZED, newtype));
    MPI_Aint a[2] = {lb, extent};
    return mpi_type_record(*newtype, MPI_COMBINER_RESIZED, 0, NULL, 2, a, 1, &oldtype);
}

int MPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    struct mtype *o;
    TRY(mpi_check_type_any("MPI_Type_dup", oldtype, &o));
    struct builder x = {0};
    if (add_copies(&x, o, 0, 1))
        x.n = -1;
    x.lb = o->lb;
    x.ub = o->ub;
    TRY(finish("MPI_Type_dup", &x, MPI_COMBINER_DUP, newtype));
    mpi_type_get(*newtype)->committed = o->committed;
    TRY(mpi_type_record(*newtype, MPI_COMBINER_DUP, 0, NULL, 0, NULL, 1, &oldtype));
    /* A copy callback's error leaves no duplicate (MPI-3.1 6.7.4). */
    int rc = mpi_attrs_copy("MPI_Type_dup", oldtype, *newtype);
    if (rc) {
        MPI_Type_free(newtype);
        *newtype = MPI_DATATYPE_NULL;
    }
    return rc;
}

int MPI_Type_commit(MPI_Datatype *datatype)
{
    struct mtype *t;
    TRY(mpi_check_type_any("MPI_Type_commit", *datatype, &t));
    t->committed = true;
    return MPI_SUCCESS;
}

int MPI_Type_free(MPI_Datatype *datatype)
{
    struct mtype *t;
    TRY(mpi_check_type_any("MPI_Type_free", *datatype, &t));
    if (t->predefined)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_TYPE, "MPI_Type_free",
                         "%s is predefined and cannot be freed", t->name);
    /* Types built from it hold their own flattened copy of its blocks;
     * only MPI_Type_get_contents's record of them holds it, and requests.
     * Its attributes go with the last hold; when that is the program's,
     * a delete callback's error is returned here and the type stays. */
    if (t->refs == 1)
        TRY(mpi_attrs_delete("MPI_Type_free", *datatype));
    mpi_type_unref(t);
    *datatype = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}

int MPI_Type_size(MPI_Datatype datatype, int *size)
{
    struct mtype *t;
    TRY(mpi_check_type_any("MPI_Type_size", datatype, &t));
    *size = t->size > 0x7FFFFFFF ? MPI_UNDEFINED : (int)t->size;
    return MPI_SUCCESS;
}

int MPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
    struct mtype *t;
    TRY(mpi_check_type_any("MPI_Type_size_x", datatype, &t));
    *size = t->size;
    return MPI_SUCCESS;
}

/* The _x forms: MPI_Count and MPI_Aint are both 64 bits here. */
int MPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    MPI_Aint l, e;
    TRY(MPI_Type_get_extent(datatype, &l, &e));
    *lb = l;
    *extent = e;
    return MPI_SUCCESS;
}
int MPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    MPI_Aint l, e;
    TRY(MPI_Type_get_true_extent(datatype, &l, &e));
    *lb = l;
    *extent = e;
    return MPI_SUCCESS;
}
int MPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    struct mtype *t;
    TRY(mpi_check_type_any("MPI_Type_get_extent", datatype, &t));
    *lb = t->lb;
    *extent = mpi_extent(t);
    return MPI_SUCCESS;
}

int MPI_Type_extent(MPI_Datatype datatype, MPI_Aint *extent)
{
    MPI_Aint lb;
    return MPI_Type_get_extent(datatype, &lb, extent);
}

int MPI_Type_lb(MPI_Datatype datatype, MPI_Aint *displacement)
{
    MPI_Aint ext;
    return MPI_Type_get_extent(datatype, displacement, &ext);
}

int MPI_Type_ub(MPI_Datatype datatype, MPI_Aint *displacement)
{
    MPI_Aint lb, ext;
    TRY(MPI_Type_get_extent(datatype, &lb, &ext));
    *displacement = lb + ext;
    return MPI_SUCCESS;
}

int MPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent)
{
    struct mtype *t;
    TRY(mpi_check_type_any("MPI_Type_get_true_extent", datatype, &t));
    *true_lb = t->true_lb;
    *true_extent = t->true_ub - t->true_lb;
    return MPI_SUCCESS;
}

int MPI_Get_address(const void *location, MPI_Aint *address)
{
    *address = (MPI_Aint)location;
    return MPI_SUCCESS;
}

int MPI_Address(void *location, MPI_Aint *address) { return MPI_Get_address(location, address); }

/* Addresses are plain byte addresses here (MPI_Get_address), so the sum
 * and the difference are integer arithmetic. */
MPI_Aint MPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
    return base + disp;
}

MPI_Aint MPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
    return addr1 - addr2;
}

int MPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize,
             int *position, MPI_Comm comm)
{
    struct mcomm *c;
    TRY(mpi_check_comm("MPI_Pack", comm, &c));
    struct mtype *t;
    TRY(mpi_check_type("MPI_Pack", comm, datatype, &t));
    TRY(mpi_check_count("MPI_Pack", comm, incount));
    long need = (long)incount * t->size;
    if (*position < 0 || need > (long)outsize - *position)
        return mpi_error(comm, MPI_ERR_TRUNCATE, "MPI_Pack",
                         "%ld bytes do not fit in %d from position %d", need, outsize,
                         *position);
    mpi_pack(inbuf, incount, t, (char *)outbuf + *position);
    *position += (int)need;
    return MPI_SUCCESS;
}

int MPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
               MPI_Datatype datatype, MPI_Comm comm)
{
    struct mcomm *c;
    TRY(mpi_check_comm("MPI_Unpack", comm, &c));
    struct mtype *t;
    TRY(mpi_check_type("MPI_Unpack", comm, datatype, &t));
    TRY(mpi_check_count("MPI_Unpack", comm, outcount));
    long need = (long)outcount * t->size;
    if (*position < 0 || need > (long)insize - *position)
        return mpi_error(comm, MPI_ERR_TRUNCATE, "MPI_Unpack",
                         "%ld bytes wanted, %d left from position %d of %d", need,
                         insize - *position, *position, insize);
    mpi_unpack((const char *)inbuf + *position, outcount, t, outbuf);
    *position += (int)need;
    return MPI_SUCCESS;
}

int MPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
    struct mcomm *c;
    TRY(mpi_check_comm("MPI_Pack_size", comm, &c));
    struct mtype *t;
    TRY(mpi_check_type("MPI_Pack_size", comm, datatype, &t));
    TRY(mpi_check_count("MPI_Pack_size", comm, incount));
    *size = (int)((long)incount * t->size);
    return MPI_SUCCESS;
}

/* A subarray: the innermost dimension (the last in C order, the first in
 * Fortran's) a contiguous run, each outer one a vector of the inner with
 * the full array's stride, the whole placed at the starts and given the
 * full array's extent (lower bound 0), as MPI-3.1 4.1.3 defines it. */
int MPI_Type_create_subarray(int ndims, const int array_of_sizes[],
                             const int array_of_subsizes[], const int array_of_starts[],
                             int order, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    const char *call = "MPI_Type_create_subarray";
    struct mtype *o;
    TRY(mpi_check_type_any(call, oldtype, &o));
    if (ndims <= 0 || (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN))
        return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, call, "ndims %d, order %d", ndims, order);
    for (int d = 0; d < ndims; d++)
        if (array_of_sizes[d] < 1 || array_of_subsizes[d] < 0 ||
            array_of_subsizes[d] > array_of_sizes[d] || array_of_starts[d] < 0 ||
            array_of_starts[d] > array_of_sizes[d] - array_of_subsizes[d])
            return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, call,
                             "dimension %d: size %d, subsize %d, start %d", d,
                             array_of_sizes[d], array_of_subsizes[d], array_of_starts[d]);
    MPI_Datatype t = oldtype;
    long stride = mpi_extent(o), disp = 0;
    int rc;
    for (int k = 0; k < ndims; k++) {
        int d = order == MPI_ORDER_FORTRAN ? k : ndims - 1 - k;
        MPI_Datatype n;
        rc = k == 0 ? MPI_Type_contiguous(array_of_subsizes[d], t, &n)
                    : MPI_Type_create_hvector(array_of_subsizes[d], 1, stride, t, &n);
        if (k > 0)
            MPI_Type_free(&t);
        if (rc)
            return rc;
        t = n;
        disp += (long)array_of_starts[d] * stride;
        stride *= array_of_sizes[d];
    }
    MPI_Datatype placed;
    int one = 1;
    MPI_Aint at = disp;
    rc = MPI_Type_create_hindexed(1, &one, &at, t, &placed);
    MPI_Type_free(&t);
    if (rc)
        return rc;
    rc = MPI_Type_create_resized(placed, 0, stride, newtype);
    MPI_Type_free(&placed);
    if (rc)
        return rc;
    /* What it was made of, for MPI_Type_get_contents: not the steps above. */
    int *ints = malloc(sizeof(int) * (size_t)(3 * ndims + 2));
    if (!ints)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, call, "no memory");
    ints[0] = ndims;
    for (int d = 0; d < ndims; d++) {
        ints[1 + d] = array_of_sizes[d];
        ints[1 + ndims + d] = array_of_subsizes[d];
        ints[1 + 2 * ndims + d] = array_of_starts[d];
    }
    ints[1 + 3 * ndims] = order;
    rc = mpi_type_record(*newtype, MPI_COMBINER_SUBARRAY, 3 * ndims + 2, ints, 0, NULL, 1,
                         &oldtype);
    free(ints);
    return rc;
}
