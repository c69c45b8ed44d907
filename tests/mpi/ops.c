/* Every predefined reduction operation on every predefined C and Fortran
 * type it is defined for (MPI-3.1 5.9.2), MPI_Allreduce against the answer
 * computed here; combinations MPI does not define return MPI_ERR_OP
 * (under MPI_ERRORS_RETURN).  Prints "ops ok on N ranks: K combinations". */
#include <complex.h>
#include <stdbool.h>
#include <stdint.h>

#include "mpitest.h"

#define CNT 5
static int combos;

/* Value of rank r, element i: small, so sums and products are exact. */
static int ival(int r, int i, bool sign) { return sign ? (r * 7 + i * 3) % 7 - 3 : (r * 5 + i) % 4; }
static int pval(int r, int i, bool sign) { return sign && (r + i) % 3 == 0 ? -1 : 1 + ((r + i) % 5 == 0); }

#define INT_TEST(T, MT, SIGNED, CLOGICAL)                                                   \
    do {                                                                                    \
        MPI_Op ops[] = {MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_BAND, MPI_BOR, MPI_BXOR,   \
                        MPI_LAND, MPI_LOR, MPI_LXOR};                                       \
        int nops = CLOGICAL ? 10 : 7;                                                       \
        for (int o = 0; o < nops; o++) {                                                    \
            T s[CNT], r[CNT];                                                               \
            for (int i = 0; i < CNT; i++)                                                   \
                s[i] = (T)(o == 3 ? pval(t_rank, i, SIGNED) : ival(t_rank, i, SIGNED));     \
            OK(MPI_Allreduce(s, r, CNT, MT, ops[o], MPI_COMM_WORLD));                        \
            for (int i = 0; i < CNT; i++) {                                                 \
                T w = (T)(o == 3 ? pval(0, i, SIGNED) : ival(0, i, SIGNED));                \
                for (int k = 1; k < t_size; k++) {                                          \
                    T x = (T)(o == 3 ? pval(k, i, SIGNED) : ival(k, i, SIGNED));            \
                    switch (o) {                                                            \
                    case 0: w = x > w ? x : w; break;                                       \
                    case 1: w = x < w ? x : w; break;                                       \
                    case 2: w = (T)(w + x); break;                                          \
                    case 3: w = (T)(w * x); break;                                          \
                    case 4: w = (T)(w & x); break;                                          \
                    case 5: w = (T)(w | x); break;                                          \
                    case 6: w = (T)(w ^ x); break;                                          \
                    case 7: w = (T)(w && x); break;                                         \
                    case 8: w = (T)(w || x); break;                                         \
                    case 9: w = (T)(!w != !x); break;                                       \
                    }                                                                       \
                }                                                                           \
                CHECK(r[i] == w, "%s op %d [%d]: %lld != %lld", #MT, o, i, (long long)r[i], \
                      (long long)w);                                                        \
            }                                                                               \
            combos++;                                                                       \
        }                                                                                   \
    } while (0)

#define FLOAT_TEST(T, MT)                                                                   \
    do {                                                                                    \
        MPI_Op ops[] = {MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD};                               \
        for (int o = 0; o < 4; o++) {                                                       \
            T s[CNT], r[CNT];                                                               \
            for (int i = 0; i < CNT; i++)                                                   \
                s[i] = (T)(o == 3 ? pval(t_rank, i, true) : ival(t_rank, i, true) + 0.5);   \
            OK(MPI_Allreduce(s, r, CNT, MT, ops[o], MPI_COMM_WORLD));                        \
            for (int i = 0; i < CNT; i++) {                                                 \
                T w = (T)(o == 3 ? pval(0, i, true) : ival(0, i, true) + 0.5);              \
                for (int k = 1; k < t_size; k++) {                                          \
                    T x = (T)(o == 3 ? pval(k, i, true) : ival(k, i, true) + 0.5);          \
                    w = o == 0 ? (x > w ? x : w) : o == 1 ? (x < w ? x : w)                 \
                               : o == 2 ? w + x : w * x;                                    \
                }                                                                           \
                CHECK(r[i] == w, "%s op %d [%d]: %g != %g", #MT, o, i, (double)r[i],        \
                      (double)w);                                                           \
            }                                                                               \
            combos++;                                                                       \
        }                                                                                   \
    } while (0)

#define COMPLEX_TEST(T, MT)                                                                 \
    do {                                                                                    \
        MPI_Op ops[] = {MPI_SUM, MPI_PROD};                                                 \
        for (int o = 0; o < 2; o++) {                                                       \
            T s[CNT], r[CNT];                                                               \
            for (int i = 0; i < CNT; i++)                                                   \
                s[i] = (T)(pval(t_rank, i, true) + ival(t_rank, i, false) * I);             \
            OK(MPI_Allreduce(s, r, CNT, MT, ops[o], MPI_COMM_WORLD));                        \
            for (int i = 0; i < CNT; i++) {                                                 \
                T w = (T)(pval(0, i, true) + ival(0, i, false) * I);                        \
                for (int k = 1; k < t_size; k++) {                                          \
                    T x = (T)(pval(k, i, true) + ival(k, i, false) * I);                    \
                    w = o == 0 ? w + x : w * x;                                             \
                }                                                                           \
                CHECK(r[i] == w, "%s op %d [%d]", #MT, o, i);                               \
            }                                                                               \
            combos++;                                                                       \
        }                                                                                   \
    } while (0)

#define LOGICAL_TEST(T, MT)                                                                 \
    do {                                                                                    \
        MPI_Op ops[] = {MPI_LAND, MPI_LOR, MPI_LXOR};                                       \
        for (int o = 0; o < 3; o++) {                                                       \
            T s[CNT], r[CNT];                                                               \
            for (int i = 0; i < CNT; i++)                                                   \
                s[i] = (T)((t_rank + i) % (i + 1) != 0 || i == 4);                          \
            OK(MPI_Allreduce(s, r, CNT, MT, ops[o], MPI_COMM_WORLD));                        \
            for (int i = 0; i < CNT; i++) {                                                 \
                int w = (0 + i) % (i + 1) != 0 || i == 4;                                   \
                for (int k = 1; k < t_size; k++) {                                          \
                    int x = (k + i) % (i + 1) != 0 || i == 4;                               \
                    w = o == 0 ? w && x : o == 1 ? w || x : w != x;                         \
                }                                                                           \
                CHECK(r[i] == (T)w, "%s op %d [%d]", #MT, o, i);                            \
            }                                                                               \
            combos++;                                                                       \
        }                                                                                   \
    } while (0)

#define PAIR_TEST(V, J, MT)                                                                 \
    do {                                                                                    \
        struct { V v; J j; } s[CNT], r[CNT];                                                \
        MPI_Op ops[] = {MPI_MAXLOC, MPI_MINLOC};                                            \
        for (int o = 0; o < 2; o++) {                                                       \
            for (int i = 0; i < CNT; i++) {                                                 \
                s[i].v = (V)ival(t_rank, i, true);                                          \
                s[i].j = (J)t_rank;                                                         \
            }                                                                               \
            OK(MPI_Allreduce(s, r, CNT, MT, ops[o], MPI_COMM_WORLD));                        \
            for (int i = 0; i < CNT; i++) {                                                 \
                V w = (V)ival(0, i, true);                                                  \
                J at = 0;                                                                   \
                for (int k = 1; k < t_size; k++) {                                          \
                    V x = (V)ival(k, i, true);                                              \
                    if (o == 0 ? x > w : x < w) {                                           \
                        w = x;                                                              \
                        at = (J)k;                                                          \
                    }                                                                       \
                }                                                                           \
                CHECK(r[i].v == w && r[i].j == at, "%s op %d [%d]", #MT, o, i);             \
            }                                                                               \
            combos++;                                                                       \
        }                                                                                   \
    } while (0)

static void invalid(MPI_Op op, MPI_Datatype t, const char *what)
{
    char buf[64] = {0}, out[64];
    int rc = MPI_Allreduce(buf, out, 1, t, op, MPI_COMM_WORLD);
    CHECK(rc == MPI_ERR_OP, "%s: gave %d, not MPI_ERR_OP", what, rc);
    char s[MPI_MAX_ERROR_STRING];
    int len, cls;
    OK(MPI_Error_string(rc, s, &len));
    OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_OP && strstr(s, "MPI_ERR_OP"), "error string %s", s);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    /* C integers: every op of the integer and logical groups */
    INT_TEST(signed char, MPI_SIGNED_CHAR, true, 1);
    INT_TEST(unsigned char, MPI_UNSIGNED_CHAR, false, 1);
    INT_TEST(short, MPI_SHORT, true, 1);
    INT_TEST(unsigned short, MPI_UNSIGNED_SHORT, false, 1);
    INT_TEST(int, MPI_INT, true, 1);
    INT_TEST(unsigned, MPI_UNSIGNED, false, 1);
    INT_TEST(long, MPI_LONG, true, 1);
    INT_TEST(unsigned long, MPI_UNSIGNED_LONG, false, 1);
    INT_TEST(long long, MPI_LONG_LONG_INT, true, 1);
    INT_TEST(long long, MPI_LONG_LONG, true, 1);
    INT_TEST(unsigned long long, MPI_UNSIGNED_LONG_LONG, false, 1);
    INT_TEST(int8_t, MPI_INT8_T, true, 1);
    INT_TEST(int16_t, MPI_INT16_T, true, 1);
    INT_TEST(int32_t, MPI_INT32_T, true, 1);
    INT_TEST(int64_t, MPI_INT64_T, true, 1);
    INT_TEST(uint8_t, MPI_UINT8_T, false, 1);
    INT_TEST(uint16_t, MPI_UINT16_T, false, 1);
    INT_TEST(uint32_t, MPI_UINT32_T, false, 1);
    INT_TEST(uint64_t, MPI_UINT64_T, false, 1);
    INT_TEST(MPI_Aint, MPI_AINT, true, 1);
    INT_TEST(MPI_Offset, MPI_OFFSET, true, 1);
    INT_TEST(MPI_Count, MPI_COUNT, true, 1);
    /* Fortran integers: arithmetic and bitwise, not logical */
    INT_TEST(int32_t, MPI_INTEGER, true, 0);
    INT_TEST(int8_t, MPI_INTEGER1, true, 0);
    INT_TEST(int16_t, MPI_INTEGER2, true, 0);
    INT_TEST(int32_t, MPI_INTEGER4, true, 0);
    INT_TEST(int64_t, MPI_INTEGER8, true, 0);
    /* floating point */
    FLOAT_TEST(float, MPI_FLOAT);
    FLOAT_TEST(double, MPI_DOUBLE);
    FLOAT_TEST(long double, MPI_LONG_DOUBLE);
    FLOAT_TEST(float, MPI_REAL);
    FLOAT_TEST(double, MPI_DOUBLE_PRECISION);
    FLOAT_TEST(float, MPI_REAL4);
    FLOAT_TEST(double, MPI_REAL8);
    /* complex */
    COMPLEX_TEST(float _Complex, MPI_C_FLOAT_COMPLEX);
    COMPLEX_TEST(float _Complex, MPI_C_COMPLEX);
    COMPLEX_TEST(double _Complex, MPI_C_DOUBLE_COMPLEX);
    COMPLEX_TEST(long double _Complex, MPI_C_LONG_DOUBLE_COMPLEX);
    COMPLEX_TEST(float _Complex, MPI_COMPLEX);
    COMPLEX_TEST(double _Complex, MPI_DOUBLE_COMPLEX);
    COMPLEX_TEST(float _Complex, MPI_COMPLEX8);
    COMPLEX_TEST(double _Complex, MPI_COMPLEX16);
    /* logical */
    LOGICAL_TEST(_Bool, MPI_C_BOOL);
    LOGICAL_TEST(int32_t, MPI_LOGICAL);
    /* byte: the bitwise ones */
    {
        MPI_Op ops[] = {MPI_BAND, MPI_BOR, MPI_BXOR};
        for (int o = 0; o < 3; o++) {
            unsigned char s[CNT], r[CNT];
            for (int i = 0; i < CNT; i++)
                s[i] = (unsigned char)(1 << ((t_rank + i) % 8)) | (unsigned char)i;
            OK(MPI_Allreduce(s, r, CNT, MPI_BYTE, ops[o], MPI_COMM_WORLD));
            for (int i = 0; i < CNT; i++) {
                unsigned w = (1u << (i % 8)) | (unsigned)i;
                for (int k = 1; k < t_size; k++) {
                    unsigned x = (1u << ((k + i) % 8)) | (unsigned)i;
                    w = o == 0 ? w & x : o == 1 ? w | x : w ^ x;
                }
                CHECK(r[i] == (unsigned char)w, "MPI_BYTE op %d [%d]", o, i);
            }
            combos++;
        }
    }
    /* value-index pairs */
    PAIR_TEST(float, int, MPI_FLOAT_INT);
    PAIR_TEST(double, int, MPI_DOUBLE_INT);
    PAIR_TEST(long, int, MPI_LONG_INT);
    PAIR_TEST(int, int, MPI_2INT);
    PAIR_TEST(short, int, MPI_SHORT_INT);
    PAIR_TEST(long double, int, MPI_LONG_DOUBLE_INT);
    PAIR_TEST(float, float, MPI_2REAL);
    PAIR_TEST(double, double, MPI_2DOUBLE_PRECISION);
    PAIR_TEST(int32_t, int32_t, MPI_2INTEGER);
    /* What MPI does not define is an error, not a wrong answer. */
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    invalid(MPI_SUM, MPI_C_BOOL, "SUM on C_BOOL");
    invalid(MPI_BAND, MPI_DOUBLE, "BAND on DOUBLE");
    invalid(MPI_MAX, MPI_C_DOUBLE_COMPLEX, "MAX on complex");
    invalid(MPI_MAXLOC, MPI_INT, "MAXLOC on INT");
    invalid(MPI_LAND, MPI_INTEGER, "LAND on Fortran INTEGER");
    invalid(MPI_SUM, MPI_LOGICAL, "SUM on LOGICAL");
    invalid(MPI_REPLACE, MPI_INT, "REPLACE in a reduction");
    invalid(MPI_OP_NULL, MPI_INT, "MPI_OP_NULL");
    if (t_rank == 0)
        printf("ops ok on %d ranks: %d combinations\n", t_size, combos);
    OK(MPI_Finalize());
    return 0;
}
