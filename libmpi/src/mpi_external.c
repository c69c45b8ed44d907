/*
 * Portable packing (MPI-3.1 4.2.1): MPI_Pack_external, MPI_Unpack_external
 * and MPI_Pack_external_size in the "external32" representation (13.5.2):
 * every value big-endian, byte aligned, of a fixed size whatever the
 * machine's (MPI_WCHAR 2 bytes, long double IEEE binary128 in 16).  Table
 * 13.2 gives MPI_LONG and MPI_UNSIGNED_LONG 4 bytes, an ILP32 long: an
 * LP64 long beyond 32 bits loses its high bits there, as in every MPI
 * (the MPI Forum's issue 157 proposes an "external64" for it).  The type
 * map is walked by mpi_type.c's mpi_walk, as MPI_Pack does; each block (a
 * run of one basic type) is converted here, value by value.
 * MPI-IO's "external32" file views (mpi_file.c) convert the same way.
 */
#include <float.h>
#include <stdint.h>
#include <string.h>

#include "mpi_impl.h"

/* How a basic type is in external32: parts per value (complex: 2), bytes
 * of each part there, and what a part is. */
enum { X_RAW = 1, X_INT, X_UINT, X_BOOL, X_LDBL };
static const struct xrep {
    unsigned char parts, size, kind;
} xreps[B_COUNT_OF] = {
    [B_CHAR] = {1, 1, X_RAW},      [B_SCHAR] = {1, 1, X_RAW},     [B_UCHAR] = {1, 1, X_RAW},
    [B_BYTE] = {1, 1, X_RAW},      [B_PACKED] = {1, 1, X_RAW},    [B_FCHARACTER] = {1, 1, X_RAW},
    [B_WCHAR] = {1, 2, X_UINT},    /* Unicode's 16 bits */
    [B_SHORT] = {1, 2, X_INT},     [B_USHORT] = {1, 2, X_UINT},   [B_INT] = {1, 4, X_INT},
    [B_UINT] = {1, 4, X_UINT},     [B_LONG] = {1, 4, X_INT},      [B_ULONG] = {1, 4, X_UINT},
    [B_LLONG] = {1, 8, X_INT},     [B_ULLONG] = {1, 8, X_UINT},
    /* IEEE floats: their bits as an unsigned integer of their size */
    [B_FLOAT] = {1, 4, X_UINT},    [B_DOUBLE] = {1, 8, X_UINT},   [B_LDOUBLE] = {1, 16, X_LDBL},
    [B_I8] = {1, 1, X_INT},        [B_I16] = {1, 2, X_INT},       [B_I32] = {1, 4, X_INT},
    [B_I64] = {1, 8, X_INT},       [B_U8] = {1, 1, X_UINT},       [B_U16] = {1, 2, X_UINT},
    [B_U32] = {1, 4, X_UINT},      [B_U64] = {1, 8, X_UINT},      [B_BOOL] = {1, 1, X_BOOL},
    [B_CFLOAT] = {2, 4, X_UINT},   [B_CDOUBLE] = {2, 8, X_UINT},  [B_CLDOUBLE] = {2, 16, X_LDBL},
    [B_AINT] = {1, 8, X_INT},      [B_OFFSET] = {1, 8, X_INT},    [B_COUNT] = {1, 8, X_INT},
    [B_FINTEGER] = {1, 4, X_INT},  [B_FREAL] = {1, 4, X_UINT},    [B_FDOUBLE] = {1, 8, X_UINT},
    [B_FCOMPLEX] = {2, 4, X_UINT}, [B_FDCOMPLEX] = {2, 8, X_UINT}, [B_FLOGICAL] = {1, 4, X_INT},
    [B_FINTEGER1] = {1, 1, X_INT}, [B_FINTEGER2] = {1, 2, X_INT}, [B_FINTEGER4] = {1, 4, X_INT},
    [B_FINTEGER8] = {1, 8, X_INT}, [B_FREAL4] = {1, 4, X_UINT},   [B_FREAL8] = {1, 8, X_UINT},
    [B_FCOMPLEX8] = {2, 4, X_UINT}, [B_FCOMPLEX16] = {2, 8, X_UINT},
    /* The value-index pairs are never a block's type: their parts are. */
};

/* An integer of n bytes in memory, widened (sign-extended when signed). */
static uint64_t load(const char *m, int n, bool sign)
{
    switch (n) {
    case 1: { uint8_t v; memcpy(&v, m, 1); return sign ? (uint64_t)(int8_t)v : v; }
    case 2: { uint16_t v; memcpy(&v, m, 2); return sign ? (uint64_t)(int16_t)v : v; }
    case 4: { uint32_t v; memcpy(&v, m, 4); return sign ? (uint64_t)(int32_t)v : v; }
    default: { uint64_t v; memcpy(&v, m, 8); return v; }
    }
}

static void store(char *m, int n, uint64_t v)
{
    switch (n) {
    case 1: { uint8_t x = (uint8_t)v; memcpy(m, &x, 1); break; }
    case 2: { uint16_t x = (uint16_t)v; memcpy(m, &x, 2); break; }
    case 4: { uint32_t x = (uint32_t)v; memcpy(m, &x, 4); break; }
    default: memcpy(m, &v, 8);
    }
}

static void put_be(char *p, int n, uint64_t v)
{
    for (int i = n - 1; i >= 0; i--, v >>= 8)
        p[i] = (char)(v & 0xFF);
}

static uint64_t get_be(const char *p, int n, bool sign)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | (unsigned char)p[i];
    if (sign && n < 8 && (v >> (8 * n - 1)) & 1)
        v |= ~(uint64_t)0 << (8 * n);   /* sign-extend */
    return v;
}

/* long double <-> binary128, big-endian.  x86's long double is the x87
 * 80-bit format (64-bit significand with its leading bit explicit, in 16
 * bytes of memory): the same sign, exponent and bias as binary128, the
 * significand's 63 fraction bits the top of binary128's 112 (unpacking
 * drops the 49 below them). */
#if LDBL_MANT_DIG == 64
static void ldbl_pack(const char *m, char *p)
{
    uint64_t mant;
    uint16_t se;
    memcpy(&mant, m, 8);
    memcpy(&se, m + 8, 2);
    uint64_t frac = mant & 0x7FFFFFFFFFFFFFFFull;
    put_be(p, 8, (uint64_t)se << 48 | frac >> 15);
    put_be(p + 8, 8, frac << 49);
}
static void ldbl_unpack(const char *p, char *m)
{
    uint64_t hi = get_be(p, 8, false), lo = get_be(p + 8, 8, false);
    uint16_t se = (uint16_t)(hi >> 48);
    uint64_t frac = (hi & 0xFFFFFFFFFFFFull) << 15 | lo >> 49;
    uint64_t mant = frac | ((se & 0x7FFF) ? 1ull << 63 : 0);  /* the explicit leading bit */
    memset(m, 0, sizeof(long double));
    memcpy(m, &mant, 8);
    memcpy(m + 8, &se, 2);
}
#elif LDBL_MANT_DIG == 113
/* binary128 already: byte order only. */
static void ldbl_pack(const char *m, char *p)
{
    for (size_t i = 0; i < sizeof(long double); i++)
        p[i] = m[sizeof(long double) - 1 - i];
}
static void ldbl_unpack(const char *p, char *m) { ldbl_pack(p, m); }
#else
#error "long double: neither x87's 80 bits nor IEEE binary128"
#endif

/* A block's basic type is never a pair (mpi_type.c splits them), so every
 * one has a representation; were one missing, its bytes go as they are. */
static const struct xrep raw = {1, 1, X_RAW};
static const struct xrep *xrep_of(int basic)
{
    return xreps[basic].parts ? &xreps[basic] : &raw;
}

/* Packed bytes of len bytes of basic in memory. */
static long xlen(long len, int basic)
{
    const struct xrep *x = xrep_of(basic);
    if (x->kind == X_RAW)
        return len;
    return len / (mpi_basic_size(basic) / x->parts) * x->size;
}

long mpi_external32_block(char *mem, char *packed, long len, int basic, bool pack)
{
    const struct xrep *x = xrep_of(basic);
    int n = (int)(mpi_basic_size(basic) / x->parts), xs = x->size;   /* a part's bytes */
    long parts = len / n;
    if (x->kind == X_RAW) {
        memcpy(pack ? packed : mem, pack ? mem : packed, (size_t)len);
        return len;
    }
    for (long i = 0; i < parts; i++) {
        char *m = mem + i * n, *p = packed + i * xs;
        bool sign = x->kind == X_INT;
        if (x->kind == X_LDBL)
            pack ? ldbl_pack(m, p) : ldbl_unpack(p, m);
        else if (x->kind == X_BOOL)
            pack ? (void)(*p = *m != 0) : (void)(*m = *p != 0);
        else if (pack)
            put_be(p, xs, load(m, n, sign));
        else
            store(m, n, get_be(p, xs, sign));
    }
    return parts * xs;
}

bool mpi_external32_same_size(const struct mtype *t)
{
    for (int k = 0; k < t->nblocks; k++)
        if (xlen(t->blocks[k].len, t->blocks[k].basic) != t->blocks[k].len)
            return false;
    return true;
}

/* The packed size of one element of t in external32. */
static long xsize(const struct mtype *t)
{
    long s = 0;
    for (int k = 0; k < t->nblocks; k++)
        s += xlen(t->blocks[k].len, t->blocks[k].basic);
    return s * t->reps;
}

static int check_datarep(const char *call, const char *datarep)
{
    if (!datarep || strcmp(datarep, "external32") != 0)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_UNSUPPORTED_DATAREP, call,
                         "data representation \"%s\": only \"external32\" is portable",
                         datarep ? datarep : "(null)");
    return MPI_SUCCESS;
}

static int check(const char *call, const char *datarep, int count, MPI_Datatype datatype,
                 struct mtype **t)
{
    NEED_INIT(call);
    TRY(check_datarep(call, datarep));
    TRY(mpi_check_type(call, MPI_COMM_NULL, datatype, t));
    if (count < 0)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_COUNT, call, "count %d is negative", count);
    return MPI_SUCCESS;
}

int MPI_Pack_external(const char datarep[], const void *inbuf, int incount,
                      MPI_Datatype datatype, void *outbuf, MPI_Aint outsize,
                      MPI_Aint *position)
{
    const char *call = "MPI_Pack_external";
    struct mtype *t;
    TRY(check(call, datarep, incount, datatype, &t));
    long need = incount * xsize(t);
    if (*position < 0 || need > outsize - *position)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_TRUNCATE, call,
                         "%ld bytes do not fit in %ld from position %ld", need, (long)outsize,
                         (long)*position);
    *position += mpi_walk((void *)inbuf, incount, t, (char *)outbuf + *position, true,
                          mpi_external32_block);
    return MPI_SUCCESS;
}

int MPI_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize,
                        MPI_Aint *position, void *outbuf, int outcount, MPI_Datatype datatype)
{
    const char *call = "MPI_Unpack_external";
    struct mtype *t;
    TRY(check(call, datarep, outcount, datatype, &t));
    long need = outcount * xsize(t);
    if (*position < 0 || need > insize - *position)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_TRUNCATE, call,
                         "%ld bytes wanted, %ld left from position %ld of %ld", need,
                         (long)(insize - *position), (long)*position, (long)insize);
    *position += mpi_walk(outbuf, outcount, t, (char *)inbuf + *position, false,
                          mpi_external32_block);
    return MPI_SUCCESS;
}

int MPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype,
                           MPI_Aint *size)
{
    struct mtype *t;
    TRY(check("MPI_Pack_external_size", datarep, incount, datatype, &t));
    *size = incount * xsize(t);
    return MPI_SUCCESS;
}
