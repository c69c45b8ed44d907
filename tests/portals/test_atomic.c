/* Atomic, fetch-atomic and swap on every operation x datatype pair the
 * library supports, checked against values computed here. */
#include "tp.h"

static struct node A, B;
static ptl_pt_index_t PT;
static uint8_t tgt[512];
static uint8_t put_buf[512], get_buf[512];
static ptl_handle_md_t put_md, get_md;

#define NTYPES 10
static const ptl_datatype_t types[NTYPES] = {
    PTL_INT8_T, PTL_UINT8_T, PTL_INT16_T, PTL_UINT16_T, PTL_INT32_T,
    PTL_UINT32_T, PTL_INT64_T, PTL_UINT64_T, PTL_FLOAT, PTL_DOUBLE
};
static size_t tsize(ptl_datatype_t t)
{
    switch (t) {
    case PTL_INT8_T: case PTL_UINT8_T: return 1;
    case PTL_INT16_T: case PTL_UINT16_T: return 2;
    case PTL_INT32_T: case PTL_UINT32_T: case PTL_FLOAT: return 4;
    default: return 8;
    }
}
static int is_fp(ptl_datatype_t t) { return t == PTL_FLOAT || t == PTL_DOUBLE; }
static int op_ok(ptl_op_t op, ptl_datatype_t t)
{
    if (!is_fp(t))
        return 1;
    return !(op >= PTL_LOR && op <= PTL_BXOR) && op != PTL_MSWAP;
}

/* Reference semantics, written out per type. */
#define REF(NAME, T, UT)                                                     \
    static void NAME(ptl_op_t op, uint8_t *tp, const uint8_t *sp, size_t n,  \
                     const uint8_t *opp)                                     \
    {                                                                        \
        T c;                                                                 \
        memcpy(&c, opp, sizeof(T));                                          \
        for (size_t i = 0; i < n / sizeof(T); i++) {                         \
            T t, s;                                                          \
            memcpy(&t, tp + i * sizeof(T), sizeof(T));                       \
            memcpy(&s, sp + i * sizeof(T), sizeof(T));                       \
            T r;                                                             \
            if (op == PTL_MIN) r = s < t ? s : t;                            \
            else if (op == PTL_MAX) r = s > t ? s : t;                       \
            else if (op == PTL_SUM) r = (T)((UT)t + (UT)s);                  \
            else if (op == PTL_PROD) r = (T)((UT)t * (UT)s);                 \
            else if (op == PTL_SWAP) r = s;                                  \
            else if (op == PTL_CSWAP) r = c == t ? s : t;                    \
            else if (op == PTL_CSWAP_NE) r = c != t ? s : t;                 \
            else if (op == PTL_CSWAP_LE) r = c <= t ? s : t;                 \
            else if (op == PTL_CSWAP_LT) r = c < t ? s : t;                  \
            else if (op == PTL_CSWAP_GE) r = c >= t ? s : t;                 \
            else if (op == PTL_CSWAP_GT) r = c > t ? s : t;                  \
            else r = INTOPS(op, t, s, c);                                    \
            memcpy(tp + i * sizeof(T), &r, sizeof(T));                       \
        }                                                                    \
    }
#define INTOPS(op, t, s, c)                                                  \
    (op == PTL_LOR ? (t || s) : op == PTL_LAND ? (t && s)                    \
     : op == PTL_LXOR ? (!t != !s) : op == PTL_BOR ? (t | s)                 \
     : op == PTL_BAND ? (t & s) : op == PTL_BXOR ? (t ^ s)                   \
     : (t & ~c) | (s & c))
REF(ref_i8, int8_t, uint8_t)
REF(ref_u8, uint8_t, uint8_t)
REF(ref_i16, int16_t, uint16_t)
REF(ref_u16, uint16_t, uint16_t)
REF(ref_i32, int32_t, uint32_t)
REF(ref_u32, uint32_t, uint32_t)
REF(ref_i64, int64_t, uint64_t)
REF(ref_u64, uint64_t, uint64_t)
#undef INTOPS
#define INTOPS(op, t, s, c) t
REF(ref_f, float, float)
REF(ref_d, double, double)

static void reference(ptl_op_t op, ptl_datatype_t t, uint8_t *tp,
                      const uint8_t *sp, size_t n, const uint8_t *opnd)
{
    switch (t) {
    case PTL_INT8_T: ref_i8(op, tp, sp, n, opnd); break;
    case PTL_UINT8_T: ref_u8(op, tp, sp, n, opnd); break;
    case PTL_INT16_T: ref_i16(op, tp, sp, n, opnd); break;
    case PTL_UINT16_T: ref_u16(op, tp, sp, n, opnd); break;
    case PTL_INT32_T: ref_i32(op, tp, sp, n, opnd); break;
    case PTL_UINT32_T: ref_u32(op, tp, sp, n, opnd); break;
    case PTL_INT64_T: ref_i64(op, tp, sp, n, opnd); break;
    case PTL_UINT64_T: ref_u64(op, tp, sp, n, opnd); break;
    case PTL_FLOAT: ref_f(op, tp, sp, n, opnd); break;
    default: ref_d(op, tp, sp, n, opnd); break;
    }
}

/* Values that exercise sign, zero and equality; floats stay exact. */
static void gen(ptl_datatype_t t, uint8_t *p, size_t n)
{
    static const double fv[] = { -3.5, -1.0, 0.0, 0.25, 2.0, 7.5 };
    for (size_t i = 0; i < n / tsize(t); i++) {
        uint64_t r = ptl_test_rand();
        if (t == PTL_FLOAT) {
            float f = (float)fv[r % 6];
            memcpy(p + i * 4, &f, 4);
        } else if (t == PTL_DOUBLE) {
            double d = fv[r % 6];
            memcpy(p + i * 8, &d, 8);
        } else {
            if (r % 4 == 0)
                r = r % 3; /* small values, 0 and equal values happen */
            memcpy(p + i * tsize(t), &r, tsize(t));
        }
    }
}

static void run_one(ptl_op_t op, ptl_datatype_t t, int kind)
{
    size_t ts = tsize(t);
    int single = op >= PTL_CSWAP;
    size_t n = single ? ts : 4 * ts;
    uint8_t expect[64], opnd[8] = { 0 }, before[64];
    gen(t, tgt, n);
    gen(t, put_buf, n);
    if (ptl_test_rand() % 2)
        memcpy(opnd, tgt, ts); /* condition often true for CSWAP */
    else
        gen(t, opnd, ts);
    memcpy(before, tgt, n);
    memcpy(expect, tgt, n);
    reference(op, t, expect, put_buf, n, opnd);
    memset(get_buf, 0xcc, n + 8);
    ptl_event_t ev;
    if (kind == 0) {
        OK(PtlAtomic(put_md, 0, n, PTL_ACK_REQ, B.id, PT, 0, 0, NULL, 0, op, t));
        EXPECT_EVENT(A.eq, PTL_EVENT_SEND);
        ev = EXPECT_EVENT(A.eq, PTL_EVENT_ACK);
        CHECK(ev.ni_fail_type == PTL_NI_OK && ev.mlength == n);
        ev = EXPECT_EVENT(B.eq, PTL_EVENT_ATOMIC);
    } else {
        if (kind == 1)
            OK(PtlFetchAtomic(get_md, 0, put_md, 0, n, B.id, PT, 0, 0, NULL, 0,
                              op, t));
        else
            OK(PtlSwap(get_md, 0, put_md, 0, n, B.id, PT, 0, 0, NULL, 0, opnd,
                       op, t));
        EXPECT_EVENT(A.eq, PTL_EVENT_SEND);
        ev = EXPECT_EVENT(A.eq, PTL_EVENT_REPLY);
        CHECK(ev.ni_fail_type == PTL_NI_OK && ev.mlength == n);
        if (memcmp(get_buf, before, n) != 0) {
            fprintf(stderr, "fetch op %d type %d: wrong old value\n", op, t);
            exit(1);
        }
        CHECK(get_buf[n] == 0xcc);
        ev = EXPECT_EVENT(B.eq, PTL_EVENT_FETCH_ATOMIC);
    }
    CHECK(ev.atomic_operation == op && ev.atomic_type == t && ev.mlength == n);
    if (memcmp(tgt, expect, n) != 0) {
        fprintf(stderr, "op %d type %d kind %d: wrong result\n", op, t, kind);
        exit(1);
    }
}

int main(void)
{
    ptl_test_host_init(2, 1500);
    OK(PtlInit());
    tp_node(&A, 0, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    tp_node(&B, 1, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    PT = tp_pt(&B, 0);
    ptl_me_t me = tp_me(tgt, sizeof(tgt), PTL_ME_OP_PUT | PTL_ME_OP_GET |
                        PTL_ME_EVENT_LINK_DISABLE, 0, ~0ull);
    ptl_handle_me_t h;
    OK(PtlMEAppend(B.ni, PT, &me, PTL_PRIORITY_LIST, NULL, &h));
    put_md = tp_md(&A, put_buf, sizeof(put_buf), 0, PTL_CT_NONE);
    get_md = tp_md(&A, get_buf, sizeof(get_buf), 0, PTL_CT_NONE);
    int count = 0;
    for (int ti = 0; ti < NTYPES; ti++) {
        ptl_datatype_t t = types[ti];
        unsigned long fpu0 = ptl_test_fpu_sections();
        for (int op = 0; op < PTL_OP_LAST; op++) {
            int swapish = op >= PTL_SWAP;
            if (!op_ok(op, t)) {
                CHECK_RC(PtlAtomic(put_md, 0, tsize(t), PTL_NO_ACK_REQ, B.id,
                                   PT, 0, 0, NULL, 0, op, t), PTL_ARG_INVALID);
                CHECK_RC(PtlSwap(get_md, 0, put_md, 0, tsize(t), B.id, PT, 0,
                                 0, NULL, 0, put_buf, op, t), PTL_ARG_INVALID);
                continue;
            }
            for (int rep = 0; rep < 3; rep++) {
                if (!swapish) {
                    run_one(op, t, 0);
                    run_one(op, t, 1);
                } else {
                    run_one(op, t, 2);
                }
                count++;
            }
            /* Swap-class ops only through PtlSwap, and vice versa. */
            if (swapish)
                CHECK_RC(PtlAtomic(put_md, 0, tsize(t), PTL_NO_ACK_REQ, B.id,
                                   PT, 0, 0, NULL, 0, op, t), PTL_ARG_INVALID);
            else
                CHECK_RC(PtlSwap(get_md, 0, put_md, 0, tsize(t), B.id, PT, 0,
                                 0, NULL, 0, put_buf, op, t), PTL_ARG_INVALID);
            if (op >= PTL_CSWAP)
                CHECK_RC(PtlSwap(get_md, 0, put_md, 0, 2 * tsize(t), B.id, PT,
                                 0, 0, NULL, 0, put_buf, op, t),
                         PTL_ARG_INVALID);
        }
        /* Floating point went through the host's FPU bracket, integers
         * did not. */
        if (is_fp(t))
            CHECK(ptl_test_fpu_sections() > fpu0);
        else
            CHECK(ptl_test_fpu_sections() == fpu0);
    }
    /* Unsupported types and sizes. */
    CHECK_RC(PtlAtomic(put_md, 0, 8, PTL_NO_ACK_REQ, B.id, PT, 0, 0, NULL, 0,
                       PTL_SUM, PTL_DOUBLE_COMPLEX), PTL_ARG_INVALID);
    CHECK_RC(PtlAtomic(put_md, 0, 6, PTL_NO_ACK_REQ, B.id, PT, 0, 0, NULL, 0,
                       PTL_SUM, PTL_INT32_T), PTL_ARG_INVALID);
    CHECK_RC(PtlAtomic(put_md, 0, 8, PTL_NO_ACK_REQ, B.id, PT, 0, 0, NULL, 0,
                       (ptl_op_t)99, PTL_INT32_T), PTL_ARG_INVALID);
    CHECK_RC(PtlAtomic(put_md, 0, A.lim.max_atomic_size + 8, PTL_NO_ACK_REQ,
                       B.id, PT, 0, 0, NULL, 0, PTL_SUM, PTL_INT64_T),
             PTL_ARG_INVALID);
    /* Largest allowed atomic works end to end. */
    size_t big = A.lim.max_atomic_size;
    CHECK(big >= 64 && big <= sizeof(tgt));
    memset(tgt, 1, big);
    memset(put_buf, 2, big);
    OK(PtlAtomic(put_md, 0, big, PTL_ACK_REQ, B.id, PT, 0, 0, NULL, 0,
                 PTL_SUM, PTL_UINT8_T));
    EXPECT_EVENT(A.eq, PTL_EVENT_SEND);
    EXPECT_EVENT(A.eq, PTL_EVENT_ACK);
    EXPECT_EVENT(B.eq, PTL_EVENT_ATOMIC);
    for (size_t i = 0; i < big; i++)
        CHECK(tgt[i] == 3);
    printf("%d op/type combinations checked\n", count);
    PtlFini();
    printf("test_atomic: PASS\n");
    return 0;
}
