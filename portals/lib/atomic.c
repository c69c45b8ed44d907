/* Integer atomic arithmetic (the library lock makes it atomic with respect
 * to other Portals operations).  Float/double live in atomic_fp.c so the
 * kernel can build only that file with SSE enabled. */
#include "ptl_internal.h"

size_t ptl_atomic_size(ptl_datatype_t t)
{
    switch (t) {
    case PTL_INT8_T: case PTL_UINT8_T: return 1;
    case PTL_INT16_T: case PTL_UINT16_T: return 2;
    case PTL_INT32_T: case PTL_UINT32_T: case PTL_FLOAT: return 4;
    case PTL_INT64_T: case PTL_UINT64_T: case PTL_DOUBLE: return 8;
    case PTL_FLOAT_COMPLEX: return 8;
    case PTL_DOUBLE_COMPLEX: return 16;
    default: return 16;
    }
}

/* Complex and long double types are not supported (no FPU code for them). */
bool ptl_atomic_valid(ptl_op_t op, ptl_datatype_t t)
{
    if ((unsigned)op >= PTL_OP_LAST)
        return false;
    if (t <= PTL_UINT64_T && t != PTL_FLOAT)
        return true;
    if (t == PTL_FLOAT || t == PTL_DOUBLE)
        return !(op >= PTL_LOR && op <= PTL_BXOR) && op != PTL_MSWAP;
    return false;
}

#define INT_KERNEL(NAME, T, UT)                                              \
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
            case PTL_SUM: r = (T)((UT)a + (UT)b); break;                     \
            case PTL_PROD: r = (T)((UT)a * (UT)b); break;                    \
            case PTL_LOR: r = (T)((a != 0) || (b != 0)); break;              \
            case PTL_LAND: r = (T)((a != 0) && (b != 0)); break;             \
            case PTL_BOR: r = (T)(a | b); break;                             \
            case PTL_BAND: r = (T)(a & b); break;                            \
            case PTL_LXOR: r = (T)((a != 0) != (b != 0)); break;             \
            case PTL_BXOR: r = (T)(a ^ b); break;                            \
            case PTL_SWAP: r = b; break;                                     \
            case PTL_CSWAP: r = opnd == a ? b : a; break;                    \
            case PTL_CSWAP_NE: r = opnd != a ? b : a; break;                 \
            case PTL_CSWAP_LE: r = opnd <= a ? b : a; break;                 \
            case PTL_CSWAP_LT: r = opnd < a ? b : a; break;                  \
            case PTL_CSWAP_GE: r = opnd >= a ? b : a; break;                 \
            case PTL_CSWAP_GT: r = opnd > a ? b : a; break;                  \
            case PTL_MSWAP: r = (T)((a & (T)~opnd) | (b & opnd)); break;     \
            default: break;                                                  \
            }                                                                \
            memcpy(tgt + i, &r, sizeof(T));                                  \
        }                                                                    \
    }

INT_KERNEL(k_i8, int8_t, uint8_t)
INT_KERNEL(k_u8, uint8_t, uint8_t)
INT_KERNEL(k_i16, int16_t, uint16_t)
INT_KERNEL(k_u16, uint16_t, uint16_t)
INT_KERNEL(k_i32, int32_t, uint32_t)
INT_KERNEL(k_u32, uint32_t, uint32_t)
INT_KERNEL(k_i64, int64_t, uint64_t)
INT_KERNEL(k_u64, uint64_t, uint64_t)

void ptl_atomic_apply(ptl_op_t op, ptl_datatype_t t, uint8_t *tgt,
                      const uint8_t *src, size_t n, const uint8_t *operand)
{
    switch (t) {
    case PTL_INT8_T: k_i8(op, tgt, src, n, operand); break;
    case PTL_UINT8_T: k_u8(op, tgt, src, n, operand); break;
    case PTL_INT16_T: k_i16(op, tgt, src, n, operand); break;
    case PTL_UINT16_T: k_u16(op, tgt, src, n, operand); break;
    case PTL_INT32_T: k_i32(op, tgt, src, n, operand); break;
    case PTL_UINT32_T: k_u32(op, tgt, src, n, operand); break;
    case PTL_INT64_T: k_i64(op, tgt, src, n, operand); break;
    case PTL_UINT64_T: k_u64(op, tgt, src, n, operand); break;
    default: break;
    }
}
