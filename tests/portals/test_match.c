/* Matching and list semantics on a matching NI. */
#include "tp.h"

static struct node A, B, C; /* A and C initiate, B is the target */
static ptl_handle_md_t mdA, mdC;
static char srcA[8192], srcC[8192];

static void put_from(struct node *n, ptl_handle_md_t md, ptl_size_t len,
                     ptl_pt_index_t pt, ptl_match_bits_t bits,
                     ptl_size_t roff, ptl_hdr_data_t hdr)
{
    OK(PtlPut(md, 0, len, PTL_ACK_REQ, B.id, pt, bits, roff, NULL, hdr));
    EXPECT_EVENT(n->eq, PTL_EVENT_SEND);
}

static ptl_event_t ack_of(struct node *n)
{
    return EXPECT_EVENT(n->eq, PTL_EVENT_ACK);
}

static ptl_handle_me_t append(ptl_pt_index_t pt, ptl_me_t *me,
                              ptl_list_t list, void *up)
{
    ptl_handle_me_t h;
    OK(PtlMEAppend(B.ni, pt, me, list, up, &h));
    if (!(me->options & PTL_ME_EVENT_LINK_DISABLE))
        EXPECT_EVENT(B.eq, PTL_EVENT_LINK);
    return h;
}

static void test_bits_and_drop(void)
{
    static char buf[256];
    ptl_pt_index_t pt = tp_pt(&B, 0);
    ptl_me_t me = tp_me(buf, sizeof(buf), PTL_ME_OP_PUT, 0xF0, 0x0F);
    ptl_handle_me_t h = append(pt, &me, PTL_PRIORITY_LIST, NULL);
    put_from(&A, mdA, 16, pt, 0xF5, 0, 0);
    CHECK(ack_of(&A).ni_fail_type == PTL_NI_OK);
    ptl_event_t ev = EXPECT_EVENT(B.eq, PTL_EVENT_PUT);
    CHECK(ev.match_bits == 0xF5);
    ptl_sr_value_t d0, d1;
    OK(PtlNIStatus(B.ni, PTL_SR_DROP_COUNT, &d0));
    put_from(&A, mdA, 16, pt, 0xE5, 0, 0); /* bit 4 differs, not ignored */
    CHECK(ack_of(&A).ni_fail_type == PTL_NI_DROPPED);
    OK(PtlNIStatus(B.ni, PTL_SR_DROP_COUNT, &d1));
    CHECK(d1 == d0 + 1);
    EXPECT_NO_EVENT(B.eq);
    OK(PtlMEUnlink(h));
    OK(PtlPTFree(B.ni, pt));
    printf("match bits ok\n");
}

static void test_initiator_match(void)
{
    static char b1[64], b2[64];
    ptl_pt_index_t pt = tp_pt(&B, 0);
    ptl_me_t m1 = tp_me(b1, sizeof(b1), PTL_ME_OP_PUT, 1, 0);
    m1.match_id.phys.nid = C.id.phys.nid; /* only C, any pid */
    ptl_me_t m2 = tp_me(b2, sizeof(b2), PTL_ME_OP_PUT, 1, 0);
    m2.match_id.phys.pid = A.id.phys.pid; /* any nid, A's pid */
    ptl_handle_me_t h1 = append(pt, &m1, PTL_PRIORITY_LIST, (void *)1);
    ptl_handle_me_t h2 = append(pt, &m2, PTL_PRIORITY_LIST, (void *)2);
    put_from(&A, mdA, 8, pt, 1, 0, 0);
    ack_of(&A);
    CHECK(EXPECT_EVENT(B.eq, PTL_EVENT_PUT).user_ptr == (void *)2);
    put_from(&C, mdC, 8, pt, 1, 0, 0);
    ack_of(&C);
    CHECK(EXPECT_EVENT(B.eq, PTL_EVENT_PUT).user_ptr == (void *)1);
    OK(PtlMEUnlink(h1));
    OK(PtlMEUnlink(h2));
    /* An exact nid/pid that is nobody's: no match. */
    ptl_me_t m3 = tp_me(b1, sizeof(b1), PTL_ME_OP_PUT, 1, 0);
    m3.match_id.phys.nid = 0x999;
    m3.match_id.phys.pid = PTL_PID_ANY;
    ptl_handle_me_t h3 = append(pt, &m3, PTL_PRIORITY_LIST, NULL);
    put_from(&A, mdA, 8, pt, 1, 0, 0);
    CHECK(ack_of(&A).ni_fail_type == PTL_NI_DROPPED);
    OK(PtlMEUnlink(h3));
    OK(PtlPTFree(B.ni, pt));
    printf("initiator match ok\n");
}

static void test_overflow_and_unexpected(void)
{
    static char ovf[4096], pri[512];
    memset(ovf, 0, sizeof(ovf));
    memset(pri, 0x5a, sizeof(pri));
    ptl_pt_index_t pt = tp_pt(&B, 0);
    ptl_me_t nomatch = tp_me(pri, sizeof(pri), PTL_ME_OP_PUT, 7, 0);
    ptl_handle_me_t hn = append(pt, &nomatch, PTL_PRIORITY_LIST, NULL);
    ptl_me_t om = tp_me(ovf, sizeof(ovf),
                        PTL_ME_OP_PUT | PTL_ME_MANAGE_LOCAL, 0, ~0ull);
    ptl_handle_me_t ho = append(pt, &om, PTL_OVERFLOW_LIST, (void *)0x0f);
    tp_fill(srcA, 300, 11);
    put_from(&A, mdA, 300, pt, 42, 0, 0x4242);
    ack_of(&A);
    ptl_event_t ev = EXPECT_EVENT(B.eq, PTL_EVENT_PUT);
    CHECK(ev.user_ptr == (void *)0x0f && ev.start == ovf);
    CHECK(memcmp(ovf, srcA, 300) == 0);
    tp_fill(srcA, 100, 12);
    put_from(&A, mdA, 100, pt, 43, 0, 0x4343);
    ack_of(&A);
    ev = EXPECT_EVENT(B.eq, PTL_EVENT_PUT);
    CHECK(ev.start == ovf + 300); /* locally managed offset moved on */

    /* PtlMESearch: only probes, then deletes. */
    ptl_me_t probe = tp_me(NULL, 0, PTL_ME_OP_PUT, 43, 0);
    OK(PtlMESearch(B.ni, pt, &probe, PTL_SEARCH_ONLY, (void *)0x5e));
    ev = EXPECT_EVENT(B.eq, PTL_EVENT_SEARCH);
    CHECK(ev.ni_fail_type == PTL_NI_OK && ev.hdr_data == 0x4343 &&
          ev.user_ptr == (void *)0x5e && ev.mlength == 100);
    OK(PtlMESearch(B.ni, pt, &probe, PTL_SEARCH_DELETE, NULL));
    ev = EXPECT_EVENT(B.eq, PTL_EVENT_PUT_OVERFLOW);
    CHECK(ev.hdr_data == 0x4343);
    OK(PtlMESearch(B.ni, pt, &probe, PTL_SEARCH_ONLY, NULL));
    ev = EXPECT_EVENT(B.eq, PTL_EVENT_SEARCH);
    CHECK(ev.ni_fail_type == PTL_NI_NO_MATCH);

    /* Appending a matching priority ME finds the unexpected message: the
     * overflow event points at the overflow buffer; Portals does not copy
     * the data into the new entry (the spec leaves that to the user). */
    ptl_me_t want = tp_me(pri, sizeof(pri), PTL_ME_OP_PUT | PTL_ME_USE_ONCE,
                          42, 0);
    ptl_handle_me_t hw;
    OK(PtlMEAppend(B.ni, pt, &want, PTL_PRIORITY_LIST, (void *)0x77, &hw));
    ev = EXPECT_EVENT(B.eq, PTL_EVENT_PUT_OVERFLOW);
    CHECK(ev.start == ovf && ev.mlength == 300 && ev.rlength == 300 &&
          ev.hdr_data == 0x4242 && ev.user_ptr == (void *)0x77 &&
          ev.match_bits == 42);
    ev = EXPECT_EVENT(B.eq, PTL_EVENT_AUTO_UNLINK);
    CHECK(ev.user_ptr == (void *)0x77);
    CHECK((unsigned char)pri[0] == 0x5a);
    CHECK_RC(PtlMEUnlink(hw), PTL_ARG_INVALID); /* never linked */
    EXPECT_NO_EVENT(B.eq);
    /* Nothing left unexpected: a new append just links. */
    ptl_me_t again = tp_me(pri, sizeof(pri), PTL_ME_OP_PUT, 42, 0);
    ptl_handle_me_t ha = append(pt, &again, PTL_PRIORITY_LIST, NULL);
    OK(PtlMEUnlink(ha));
    OK(PtlMEUnlink(hn));
    OK(PtlMEUnlink(ho));
    OK(PtlPTFree(B.ni, pt));
    printf("overflow/unexpected ok\n");
}

static void test_use_once_local_minfree(void)
{
    static char buf[100];
    memset(buf, 0, sizeof(buf));
    ptl_pt_index_t pt = tp_pt(&B, 0);
    ptl_me_t m = tp_me(buf, sizeof(buf),
                       PTL_ME_OP_PUT | PTL_ME_MANAGE_LOCAL, 5, 0);
    m.min_free = 30;
    append(pt, &m, PTL_PRIORITY_LIST, (void *)0x33);
    tp_fill(srcA, 40, 1);
    put_from(&A, mdA, 40, pt, 5, 999, 0); /* remote offset ignored */
    ptl_event_t ev = ack_of(&A);
    CHECK(ev.remote_offset == 0 && ev.mlength == 40);
    ev = EXPECT_EVENT(B.eq, PTL_EVENT_PUT);
    CHECK(ev.remote_offset == 0 && ev.start == buf);
    CHECK(memcmp(buf, srcA, 40) == 0);
    tp_fill(srcA, 40, 2);
    put_from(&A, mdA, 40, pt, 5, 0, 0);
    ev = ack_of(&A);
    CHECK(ev.remote_offset == 40);
    ev = EXPECT_EVENT(B.eq, PTL_EVENT_PUT);
    CHECK(ev.start == buf + 40 && memcmp(buf + 40, srcA, 40) == 0);
    /* 20 bytes free < min_free 30: unlinked after this message. */
    ev = EXPECT_EVENT(B.eq, PTL_EVENT_AUTO_UNLINK);
    CHECK(ev.user_ptr == (void *)0x33);
    put_from(&A, mdA, 10, pt, 5, 0, 0);
    CHECK(ack_of(&A).ni_fail_type == PTL_NI_DROPPED);

    /* USE_ONCE: one message, then gone. */
    ptl_me_t u = tp_me(buf, sizeof(buf), PTL_ME_OP_PUT | PTL_ME_USE_ONCE, 6, 0);
    ptl_handle_me_t hu = append(pt, &u, PTL_PRIORITY_LIST, NULL);
    put_from(&A, mdA, 10, pt, 6, 0, 0);
    CHECK(ack_of(&A).ni_fail_type == PTL_NI_OK);
    EXPECT_EVENT(B.eq, PTL_EVENT_PUT);
    EXPECT_EVENT(B.eq, PTL_EVENT_AUTO_UNLINK);
    CHECK_RC(PtlMEUnlink(hu), PTL_ARG_INVALID);
    put_from(&A, mdA, 10, pt, 6, 0, 0);
    CHECK(ack_of(&A).ni_fail_type == PTL_NI_DROPPED);
    OK(PtlPTFree(B.ni, pt));
    printf("use once / manage local / min_free ok\n");
}

static void test_truncate(void)
{
    static char small[50], tiny[20];
    ptl_pt_index_t pt = tp_pt(&B, 0);
    ptl_me_t nt = tp_me(small, sizeof(small),
                        PTL_ME_OP_PUT | PTL_ME_NO_TRUNCATE, 9, 0);
    ptl_me_t tr = tp_me(tiny, sizeof(tiny), PTL_ME_OP_PUT, 9, 0);
    ptl_handle_me_t h1 = append(pt, &nt, PTL_PRIORITY_LIST, (void *)1);
    ptl_handle_me_t h2 = append(pt, &tr, PTL_PRIORITY_LIST, (void *)2);
    tp_fill(srcA, 60, 5);
    put_from(&A, mdA, 60, pt, 9, 0, 0);
    ptl_event_t ev = ack_of(&A);
    CHECK(ev.mlength == 20);
    ev = EXPECT_EVENT(B.eq, PTL_EVENT_PUT);
    CHECK(ev.user_ptr == (void *)2 && ev.rlength == 60 && ev.mlength == 20);
    CHECK(memcmp(tiny, srcA, 20) == 0);
    put_from(&A, mdA, 50, pt, 9, 0, 0); /* fits exactly */
    ack_of(&A);
    CHECK(EXPECT_EVENT(B.eq, PTL_EVENT_PUT).user_ptr == (void *)1);
    /* Offset past the end of a truncating ME: zero bytes, still a match. */
    put_from(&A, mdA, 10, pt, 9, 45, 0);
    ev = ack_of(&A);
    CHECK(ev.ni_fail_type == PTL_NI_OK);
    ev = EXPECT_EVENT(B.eq, PTL_EVENT_PUT);
    CHECK(ev.user_ptr == (void *)2 && ev.mlength == 0);
    OK(PtlMEUnlink(h1));
    OK(PtlMEUnlink(h2));
    OK(PtlPTFree(B.ni, pt));
    printf("truncation ok\n");
}

static void test_perm_and_options(void)
{
    static char buf[128];
    ptl_pt_index_t pt = tp_pt(&B, 0);
    ptl_sr_value_t p0, p1;
    OK(PtlNIStatus(B.ni, PTL_SR_PERMISSIONS_VIOLATIONS, &p0));
    ptl_me_t m = tp_me(buf, sizeof(buf), PTL_ME_OP_PUT, 1, 0);
    m.uid = 4242;
    ptl_handle_me_t h = append(pt, &m, PTL_PRIORITY_LIST, NULL);
    put_from(&A, mdA, 10, pt, 1, 0, 0);
    CHECK(ack_of(&A).ni_fail_type == PTL_NI_PERM_VIOLATION);
    OK(PtlNIStatus(B.ni, PTL_SR_PERMISSIONS_VIOLATIONS, &p1));
    CHECK(p1 == p0 + 1);
    OK(PtlMEUnlink(h));
    /* GET-only ME refuses puts. */
    m = tp_me(buf, sizeof(buf), PTL_ME_OP_GET, 1, 0);
    h = append(pt, &m, PTL_PRIORITY_LIST, NULL);
    put_from(&A, mdA, 10, pt, 1, 0, 0);
    CHECK(ack_of(&A).ni_fail_type == PTL_NI_OP_VIOLATION);
    OK(PtlMEUnlink(h));
    /* Event suppression and counting. */
    ptl_handle_ct_t ct;
    OK(PtlCTAlloc(B.ni, &ct));
    m = tp_me(buf, sizeof(buf),
              PTL_ME_OP_PUT | PTL_ME_EVENT_COMM_DISABLE |
              PTL_ME_EVENT_LINK_DISABLE | PTL_ME_EVENT_CT_COMM |
              PTL_ME_EVENT_CT_BYTES | PTL_ME_ACK_DISABLE, 1, 0);
    m.ct_handle = ct;
    h = append(pt, &m, PTL_PRIORITY_LIST, NULL);
    put_from(&A, mdA, 10, pt, 1, 0, 0);
    put_from(&A, mdA, 15, pt, 1, 0, 0);
    ptl_ct_event_t cv;
    OK(PtlCTWait(ct, 25, &cv));
    CHECK(cv.success == 25 && cv.failure == 0);
    EXPECT_NO_EVENT(B.eq);
    EXPECT_NO_EVENT(A.eq); /* ACK_DISABLE: no ACK event at the initiator */
    OK(PtlMEUnlink(h));
    m = tp_me(buf, sizeof(buf),
              PTL_ME_OP_PUT | PTL_ME_EVENT_SUCCESS_DISABLE |
              PTL_ME_EVENT_CT_COMM, 1, 0);
    m.ct_handle = ct;
    h = append(pt, &m, PTL_PRIORITY_LIST, NULL);
    put_from(&A, mdA, 10, pt, 1, 0, 0);
    ack_of(&A);
    OK(PtlCTWait(ct, 26, &cv));
    CHECK(cv.success == 26);
    EXPECT_NO_EVENT(B.eq);
    OK(PtlMEUnlink(h));
    OK(PtlCTFree(ct));
    /* UNEXPECTED_HDR_DISABLE: overflow keeps no header to find later. */
    m = tp_me(buf, sizeof(buf),
              PTL_ME_OP_PUT | PTL_ME_UNEXPECTED_HDR_DISABLE, 0, ~0ull);
    h = append(pt, &m, PTL_OVERFLOW_LIST, NULL);
    put_from(&A, mdA, 10, pt, 77, 0, 0);
    ack_of(&A);
    EXPECT_EVENT(B.eq, PTL_EVENT_PUT);
    ptl_me_t p = tp_me(buf, sizeof(buf), PTL_ME_OP_PUT, 77, 0);
    ptl_handle_me_t hp = append(pt, &p, PTL_PRIORITY_LIST, NULL);
    EXPECT_NO_EVENT(B.eq);
    OK(PtlMEUnlink(hp));
    OK(PtlMEUnlink(h));
    OK(PtlPTFree(B.ni, pt));
    printf("permissions / options ok\n");
}

static void test_list_limits(void)
{
    /* A separate NI with tiny limits: the limits are enforced. */
    ptl_ni_limits_t want = { 0 }, got;
    want.max_entries = 3;
    want.max_list_size = 2;
    ptl_handle_ni_t ni;
    OK(PtlNIInit(1, PTL_NI_MATCHING | PTL_NI_LOGICAL, PTL_PID_ANY, &want,
                 &got, &ni));
    CHECK(got.max_entries == 3 && got.max_list_size == 2);
    ptl_pt_index_t pt;
    OK(PtlPTAlloc(ni, 0, PTL_EQ_NONE, 5, &pt));
    CHECK(pt == 5);
    CHECK_RC(PtlPTAlloc(ni, 0, PTL_EQ_NONE, 5, &pt), PTL_PT_IN_USE);
    CHECK_RC(PtlPTAlloc(ni, PTL_PT_FLOWCTRL, PTL_EQ_NONE, 6, &pt),
             PTL_PT_EQ_NEEDED);
    char buf[4];
    ptl_me_t m = tp_me(buf, 4, PTL_ME_OP_PUT, 0, 0);
    m.match_id.rank = PTL_RANK_ANY;
    ptl_handle_me_t h[4];
    OK(PtlMEAppend(ni, 5, &m, PTL_PRIORITY_LIST, NULL, &h[0]));
    OK(PtlMEAppend(ni, 5, &m, PTL_PRIORITY_LIST, NULL, &h[1]));
    CHECK_RC(PtlMEAppend(ni, 5, &m, PTL_PRIORITY_LIST, NULL, &h[2]),
             PTL_LIST_TOO_LONG);
    OK(PtlMEAppend(ni, 5, &m, PTL_OVERFLOW_LIST, NULL, &h[2]));
    CHECK_RC(PtlMEAppend(ni, 5, &m, PTL_OVERFLOW_LIST, NULL, &h[3]),
             PTL_NO_SPACE);
    CHECK_RC(PtlPTFree(ni, 5), PTL_IN_USE);
    for (int i = 0; i < 3; i++)
        OK(PtlMEUnlink(h[i]));
    OK(PtlPTFree(ni, 5));
    OK(PtlNIFini(ni));
    printf("limits ok\n");
}

int main(void)
{
    ptl_test_host_init(3, 1500);
    OK(PtlInit());
    tp_node(&A, 0, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    tp_node(&B, 1, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    tp_node(&C, 2, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    mdA = tp_md(&A, srcA, sizeof(srcA), 0, PTL_CT_NONE);
    mdC = tp_md(&C, srcC, sizeof(srcC), 0, PTL_CT_NONE);
    test_bits_and_drop();
    test_initiator_match();
    test_overflow_and_unexpected();
    test_use_once_local_minfree();
    test_truncate();
    test_perm_and_options();
    test_list_limits();
    PtlFini();
    printf("test_match: PASS\n");
    return 0;
}
