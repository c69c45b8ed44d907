/* Searching the unexpected list (PtlMESearch/PtlLESearch) and what an
 * appended entry takes from it: events, counters, the list an event names,
 * and locally managed offsets advanced by unexpected headers. */
#include "tp.h"

static struct node A, B;
static ptl_handle_md_t mdA;
static char srcA[256];

/* Unexpected puts of 8 bytes, one per element of bits[], all acknowledged. */
static void unexpected(ptl_pt_index_t pt, const ptl_match_bits_t *bits, int n)
{
    for (int i = 0; i < n; i++) {
        OK(PtlPut(mdA, 0, 8, PTL_ACK_REQ, B.id, pt, bits[i], 0, NULL, 0));
        EXPECT_EVENT(A.eq, PTL_EVENT_SEND);
        CHECK(EXPECT_EVENT(A.eq, PTL_EVENT_ACK).ni_fail_type == PTL_NI_OK);
    }
}

/* A portal with an overflow entry that takes everything (8 bytes each). */
static ptl_pt_index_t overflow_portal(ptl_handle_me_t *h, char *buf, size_t len)
{
    ptl_pt_index_t pt = tp_pt(&B, 0);
    ptl_me_t o = tp_me(buf, len, PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE |
                                     PTL_ME_EVENT_COMM_DISABLE, 0, ~0ull);
    OK(PtlMEAppend(B.ni, pt, &o, PTL_OVERFLOW_LIST, NULL, h));
    return pt;
}

static ptl_ct_event_t ct_now(ptl_handle_ct_t ct)
{
    ptl_ct_event_t v;
    OK(PtlCTGet(ct, &v));
    return v;
}

static void ct_zero(ptl_handle_ct_t ct)
{
    OK(PtlCTSet(ct, (ptl_ct_event_t){0, 0}));
}

static void test_search_counts(void)
{
    static char obuf[8];
    ptl_handle_me_t oh;
    ptl_pt_index_t pt = overflow_portal(&oh, obuf, sizeof(obuf));
    static const ptl_match_bits_t bits[] = {1, 55, 1, 1, 55};
    unexpected(pt, bits, 5);
    ptl_handle_ct_t ct;
    OK(PtlCTAlloc(B.ni, &ct));
    ptl_me_t s = tp_me(NULL, 0, PTL_ME_OP_PUT | PTL_ME_EVENT_CT_OVERFLOW, 1, 0);
    s.ct_handle = ct;

    /* Search only: every match counted and reported, a failure marks the
     * end; the headers stay. */
    OK(PtlMESearch(B.ni, pt, &s, PTL_SEARCH_ONLY, (void *)7));
    ptl_ct_event_t v = ct_now(ct);
    CHECK(v.success == 3 && v.failure == 1);
    for (int i = 0; i < 3; i++) {
        ptl_event_t ev = EXPECT_EVENT(B.eq, PTL_EVENT_SEARCH);
        CHECK(ev.ni_fail_type == PTL_NI_OK && ev.match_bits == 1 && ev.rlength == 8 &&
              ev.user_ptr == (void *)7 && ev.ptl_list == PTL_OVERFLOW_LIST);
    }
    EXPECT_NO_EVENT(B.eq);
    ct_zero(ct);
    OK(PtlMESearch(B.ni, pt, &s, PTL_SEARCH_ONLY, NULL));
    v = ct_now(ct);
    CHECK(v.success == 3 && v.failure == 1);   /* still all there */
    for (int i = 0; i < 3; i++)
        EXPECT_EVENT(B.eq, PTL_EVENT_SEARCH);

    /* PTL_ME_USE_ONCE: the first match ends the search, no end mark. */
    ct_zero(ct);
    s.options |= PTL_ME_USE_ONCE;
    OK(PtlMESearch(B.ni, pt, &s, PTL_SEARCH_ONLY, NULL));
    v = ct_now(ct);
    CHECK(v.success == 1 && v.failure == 0);
    EXPECT_EVENT(B.eq, PTL_EVENT_SEARCH);
    EXPECT_NO_EVENT(B.eq);

    /* Nothing matches: one SEARCH event saying so, the end mark. */
    ct_zero(ct);
    s.match_bits = 101;
    OK(PtlMESearch(B.ni, pt, &s, PTL_SEARCH_ONLY, NULL));
    v = ct_now(ct);
    CHECK(v.success == 0 && v.failure == 1);
    CHECK(EXPECT_EVENT(B.eq, PTL_EVENT_SEARCH).ni_fail_type == PTL_NI_NO_MATCH);

    /* Search and delete, once: one header goes. */
    ct_zero(ct);
    s.match_bits = 55;
    OK(PtlMESearch(B.ni, pt, &s, PTL_SEARCH_DELETE, NULL));
    v = ct_now(ct);
    CHECK(v.success == 1 && v.failure == 0);
    ptl_event_t ev = EXPECT_EVENT(B.eq, PTL_EVENT_PUT_OVERFLOW);
    CHECK(ev.match_bits == 55 && ev.ptl_list == PTL_OVERFLOW_LIST);
    EXPECT_NO_EVENT(B.eq);

    /* Search and delete, all: the rest of them, then the end mark. */
    ct_zero(ct);
    s.options &= ~(unsigned)PTL_ME_USE_ONCE;
    s.ignore_bits = ~0ull;
    OK(PtlMESearch(B.ni, pt, &s, PTL_SEARCH_DELETE, NULL));
    v = ct_now(ct);
    CHECK(v.success == 4 && v.failure == 1);
    for (int i = 0; i < 4; i++)
        EXPECT_EVENT(B.eq, PTL_EVENT_PUT_OVERFLOW);
    EXPECT_NO_EVENT(B.eq);

    /* The list is empty now. */
    ct_zero(ct);
    OK(PtlMESearch(B.ni, pt, &s, PTL_SEARCH_ONLY, NULL));
    v = ct_now(ct);
    CHECK(v.success == 0 && v.failure == 1);
    CHECK(EXPECT_EVENT(B.eq, PTL_EVENT_SEARCH).ni_fail_type == PTL_NI_NO_MATCH);

    OK(PtlCTFree(ct));
    OK(PtlMEUnlink(oh));
    OK(PtlPTFree(B.ni, pt));
    printf("search counts ok\n");
}

/* PTL_ME_LOCAL_INC_UH_RLENGTH: the headers an appended locally managed
 * entry takes advance its offset; min_free then unlinks it. */
static void test_local_offset_from_headers(void)
{
    static char obuf[8];
    static char buf[48];
    ptl_handle_me_t oh;
    ptl_pt_index_t pt = overflow_portal(&oh, obuf, sizeof(obuf));
    static const ptl_match_bits_t bits[] = {55, 55, 1, 55, 55, 55};
    unexpected(pt, bits, 6);

    /* 48 bytes, min_free 30: after three headers 24 bytes are free. */
    ptl_me_t me = tp_me(buf, sizeof(buf), PTL_ME_OP_PUT | PTL_ME_MANAGE_LOCAL |
                                              PTL_ME_LOCAL_INC_UH_RLENGTH, 55, 0);
    me.min_free = 30;
    ptl_handle_me_t h;
    OK(PtlMEAppend(B.ni, pt, &me, PTL_PRIORITY_LIST, NULL, &h));
    for (int i = 0; i < 3; i++) {
        ptl_event_t ev = EXPECT_EVENT(B.eq, PTL_EVENT_PUT_OVERFLOW);
        CHECK(ev.match_bits == 55 && ev.ptl_list == PTL_OVERFLOW_LIST);
    }
    EXPECT_EVENT(B.eq, PTL_EVENT_AUTO_UNLINK);  /* used up: never linked */
    EXPECT_NO_EVENT(B.eq);
    CHECK_RC(PtlMEUnlink(h), PTL_ARG_INVALID);

    /* Without min_free it takes the two left and is linked, its offset
     * past the headers it took: the next put lands at 16. */
    me.min_free = 0;
    OK(PtlMEAppend(B.ni, pt, &me, PTL_PRIORITY_LIST, NULL, &h));
    EXPECT_EVENT(B.eq, PTL_EVENT_PUT_OVERFLOW);
    EXPECT_EVENT(B.eq, PTL_EVENT_PUT_OVERFLOW);
    CHECK(EXPECT_EVENT(B.eq, PTL_EVENT_LINK).ptl_list == PTL_PRIORITY_LIST);
    memcpy(srcA, "offset!!", 8);
    OK(PtlPut(mdA, 0, 8, PTL_ACK_REQ, B.id, pt, 55, 0, NULL, 0));
    EXPECT_EVENT(A.eq, PTL_EVENT_SEND);
    CHECK(EXPECT_EVENT(A.eq, PTL_EVENT_ACK).ni_fail_type == PTL_NI_OK);
    ptl_event_t ev = EXPECT_EVENT(B.eq, PTL_EVENT_PUT);
    CHECK(ev.remote_offset == 16 && ev.ptl_list == PTL_PRIORITY_LIST);
    CHECK(!memcmp(buf + 16, "offset!!", 8));
    OK(PtlMEUnlink(h));

    /* Without PTL_ME_LOCAL_INC_UH_RLENGTH headers leave the offset alone. */
    unexpected(pt, bits, 1);
    me.options &= ~(unsigned)PTL_ME_LOCAL_INC_UH_RLENGTH;
    OK(PtlMEAppend(B.ni, pt, &me, PTL_PRIORITY_LIST, NULL, &h));
    EXPECT_EVENT(B.eq, PTL_EVENT_PUT_OVERFLOW);
    EXPECT_EVENT(B.eq, PTL_EVENT_LINK);
    OK(PtlPut(mdA, 0, 8, PTL_ACK_REQ, B.id, pt, 55, 0, NULL, 0));
    EXPECT_EVENT(A.eq, PTL_EVENT_SEND);
    EXPECT_EVENT(A.eq, PTL_EVENT_ACK);
    CHECK(EXPECT_EVENT(B.eq, PTL_EVENT_PUT).remote_offset == 0);
    OK(PtlMEUnlink(h));

    /* Clear the one header left (bits 1). */
    ptl_me_t s = tp_me(NULL, 0, PTL_ME_OP_PUT, 0, ~0ull);
    OK(PtlMESearch(B.ni, pt, &s, PTL_SEARCH_DELETE, NULL));
    EXPECT_EVENT(B.eq, PTL_EVENT_PUT_OVERFLOW);
    OK(PtlMEUnlink(oh));
    OK(PtlPTFree(B.ni, pt));
    printf("local offset from unexpected headers ok\n");
}

int main(void)
{
    ptl_test_host_init(2, 1500);
    OK(PtlInit());
    tp_node(&A, 0, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    tp_node(&B, 1, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    mdA = tp_md(&A, srcA, sizeof(srcA), 0, PTL_CT_NONE);
    test_search_counts();
    test_local_offset_from_headers();
    PtlFini();
    printf("test_search: PASS\n");
    return 0;
}
