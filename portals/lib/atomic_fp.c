/* Float and double atomic arithmetic: the only floating-point code in the
 * library.  Callers bracket it with ptl_host_fpu_begin/end. */
#include "ptl_internal.h"

#define FP_KERNEL(NAME, T)                                                   \
    static void NAME(ptl_op_t op, uint8_t *tgt, const uint8_t *src,          \
                     size_t n, const uint8_t *operand)                       \
    {                                                                        \
        T opnd;                                                              \
        memcpy(&opnd, operand, sizeof(T));                                   \
        for (size_t i = 0; i + sizeof(T) <= n; i += sizeof(T)) {             \
            T a, b, r;                                                       \
            memcpy(&a, tgt + i, sizeof(T));                                  \
            memcpy(&b, src + i, sizeof(T));                                  \
            r = a;                                                           \
            switch (op) {                                                    \
            case PTL_MIN: r = b < a ? b : a; break;                          \
            case PTL_MAX: r = b > a ? b : a; break;                          \
            case PTL_SUM: r = a + b; break;                                  \
            case PTL_PROD: r = a * b; break;                                 \
            case PTL_SWAP: r = b; break;                                     \
            case PTL_CSWAP: r = opnd == a ? b : a; break;                    \
            case PTL_CSWAP_NE: r = opnd != a ? b : a; break;                 \
            case PTL_CSWAP_LE: r = opnd <= a ? b : a; break;                 \
            case PTL_CSWAP_LT: r = opnd < a ? b : a; break;                  \
            case PTL_CSWAP_GE: r = opnd >= a ? b : a; break;                 \
            case PTL_CSWAP_GT: r = opnd > a ? b : a; break;                  \
            default: break;                                                  \
            }                                                                \
            memcpy(tgt + i, &r, sizeof(T));                                  \
        }                                                                    \
    }

FP_KERNEL(k_float, float)
FP_KERNEL(k_double, double)

void ptl_atomic_fp(ptl_op_t op, ptl_datatype_t t, uint8_t *tgt,
                   const uint8_t *src, size_t n, const uint8_t *operand)
{
    if (t == PTL_FLOAT)
        k_float(op, tgt, src, n, operand);
    else if (t == PTL_DOUBLE)
        k_double(op, tgt, src, n, operand);
}
