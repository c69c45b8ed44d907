/* API basics: init, limits, handles, put/ack, get/reply, logical addressing,
 * non-matching interfaces, iovecs, status registers. */
#include "tp.h"

static void test_no_init(void)
{
    ptl_handle_ni_t ni;
    ptl_handle_eq_t eq;
    CHECK_RC(PtlNIInit(0, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY, NULL,
                       NULL, &ni), PTL_NO_INIT);
    CHECK_RC(PtlEQAlloc(0x10000000, 10, &eq), PTL_NO_INIT);
}

/* A handle kept after its object went stays dead while new objects come and
 * go: a library unlinking a receive whose entry a message has just used up
 * (its event not read yet) must not unlink the entry made since.  With the
 * lowest free slot taken first, every append reused the same slot, and
 * the 64th (the handle's generation has 6 bits) was named by the old handle:
 * PtlMEUnlink(old) unlinked it. */
static void test_kept_handles(struct node *a)
{
    static char buf[8];
    ptl_pt_index_t pt = tp_pt(a, 0);
    ptl_me_t me = tp_me(buf, sizeof(buf), PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE |
                                              PTL_ME_EVENT_UNLINK_DISABLE, 0, 0);
    ptl_handle_me_t old, cur;
    OK(PtlMEAppend(a->ni, pt, &me, PTL_PRIORITY_LIST, NULL, &old));
    OK(PtlMEUnlink(old));
    ptl_handle_md_t mold = tp_md(a, buf, sizeof(buf), 0, PTL_CT_NONE), mcur;
    OK(PtlMDRelease(mold));
    for (int i = 0; i < 300; i++) {
        OK(PtlMEAppend(a->ni, pt, &me, PTL_PRIORITY_LIST, NULL, &cur));
        CHECK_RC(PtlMEUnlink(old), PTL_ARG_INVALID);
        OK(PtlMEUnlink(cur));
        mcur = tp_md(a, buf, sizeof(buf), 0, PTL_CT_NONE);
        CHECK_RC(PtlMDRelease(mold), PTL_ARG_INVALID);
        OK(PtlMDRelease(mcur));
    }
    OK(PtlPTFree(a->ni, pt));
    /* Counters and event queues too: a freed one's handle must not name
     * the next one allocated, however many come and go. */
    ptl_handle_ct_t cold, ccur;
    ptl_handle_eq_t eold, ecur;
    ptl_ct_event_t cev;
    ptl_event_t ev;
    OK(PtlCTAlloc(a->ni, &cold));
    OK(PtlCTFree(cold));
    OK(PtlEQAlloc(a->ni, 4, &eold));
    OK(PtlEQFree(eold));
    for (int i = 0; i < 300; i++) {
        OK(PtlCTAlloc(a->ni, &ccur));
        CHECK_RC(PtlCTGet(cold, &cev), PTL_ARG_INVALID);
        CHECK_RC(PtlCTFree(cold), PTL_ARG_INVALID);
        OK(PtlCTFree(ccur));
        OK(PtlEQAlloc(a->ni, 4, &ecur));
        CHECK_RC(PtlEQGet(eold, &ev), PTL_ARG_INVALID);
        CHECK_RC(PtlEQFree(eold), PTL_ARG_INVALID);
        OK(PtlEQFree(ecur));
    }
}

static void test_bad_handles(struct node *a)
{
    ptl_handle_eq_t eq;
    ptl_handle_ct_t ct;
    ptl_event_t ev;
    ptl_ct_event_t cev;
    char buf[8];
    CHECK_RC(PtlEQAlloc(PTL_INVALID_HANDLE, 10, &eq), PTL_ARG_INVALID);
    CHECK_RC(PtlEQAlloc(a->eq, 10, &eq), PTL_ARG_INVALID); /* wrong type */
    CHECK_RC(PtlEQGet(PTL_EQ_NONE, &ev), PTL_ARG_INVALID);
    CHECK_RC(PtlEQGet(a->ni, &ev), PTL_ARG_INVALID);
    CHECK_RC(PtlCTGet(PTL_CT_NONE, &cev), PTL_ARG_INVALID);
    CHECK_RC(PtlMEUnlink(0x12345678), PTL_ARG_INVALID);
    CHECK_RC(PtlMDRelease(0xdeadbeef), PTL_ARG_INVALID);
    CHECK_RC(PtlPut(0x6abcdef0, 0, 1, PTL_NO_ACK_REQ, tp_phys(1), 0, 0, 0,
                    NULL, 0), PTL_ARG_INVALID);
    /* Stale handles: freed objects never come back to life. */
    OK(PtlCTAlloc(a->ni, &ct));
    OK(PtlCTFree(ct));
    CHECK_RC(PtlCTGet(ct, &cev), PTL_ARG_INVALID);
    CHECK_RC(PtlCTFree(ct), PTL_ARG_INVALID);
    ptl_handle_md_t md = tp_md(a, buf, sizeof(buf), 0, PTL_CT_NONE);
    OK(PtlMDRelease(md));
    CHECK_RC(PtlMDRelease(md), PTL_ARG_INVALID);
    CHECK_RC(PtlPut(md, 0, 1, PTL_NO_ACK_REQ, tp_phys(1), 0, 0, 0, NULL, 0),
             PTL_ARG_INVALID);
    /* Out-of-range MD access and bad options. */
    md = tp_md(a, buf, sizeof(buf), 0, PTL_CT_NONE);
    CHECK_RC(PtlPut(md, 4, 5, PTL_NO_ACK_REQ, tp_phys(1), 0, 0, 0, NULL, 0),
             PTL_ARG_INVALID);
    CHECK_RC(PtlPut(md, ~0ull, 2, PTL_NO_ACK_REQ, tp_phys(1), 0, 0, 0, NULL,
                    0), PTL_ARG_INVALID);
    OK(PtlMDRelease(md));
    ptl_md_t bad = { buf, 8, 1u << 30, PTL_EQ_NONE, PTL_CT_NONE };
    CHECK_RC(PtlMDBind(a->ni, &bad, &md), PTL_ARG_INVALID);
    bad.options = 0;
    bad.eq_handle = 0x2fffff00;
    CHECK_RC(PtlMDBind(a->ni, &bad, &md), PTL_ARG_INVALID);
    ptl_me_t me = tp_me(buf, 8, PTL_ME_OP_PUT, 0, 0);
    ptl_handle_me_t meh;
    CHECK_RC(PtlMEAppend(a->ni, 200, &me, PTL_PRIORITY_LIST, NULL, &meh),
             PTL_ARG_INVALID);
    CHECK_RC(PtlPTFree(a->ni, 60), PTL_ARG_INVALID);
    CHECK_RC(PtlHandleIsEqual(a->ni, a->ni), PTL_OK);
    CHECK_RC(PtlHandleIsEqual(a->ni, a->eq), PTL_FAIL);
    ptl_handle_ni_t nih;
    OK(PtlNIHandle(a->eq, &nih));
    CHECK(nih == a->ni);
    CHECK_RC(PtlNIHandle(PTL_INVALID_HANDLE, &nih), PTL_ARG_INVALID);
    test_kept_handles(a);
    printf("bad handles ok\n");
}

static void test_put_ack(struct node *a, struct node *b)
{
    static char src[3000], dst[4000];
    tp_fill(src, sizeof(src), 1);
    memset(dst, 0, sizeof(dst));
    ptl_pt_index_t pt = tp_pt(b, 0);
    ptl_me_t me = tp_me(dst, sizeof(dst), PTL_ME_OP_PUT, 0x55, 0);
    ptl_handle_me_t meh;
    OK(PtlMEAppend(b->ni, pt, &me, PTL_PRIORITY_LIST, (void *)0x1234, &meh));
    ptl_event_t ev = EXPECT_EVENT(b->eq, PTL_EVENT_LINK);
    CHECK(ev.user_ptr == (void *)0x1234);
    ptl_handle_md_t md = tp_md(a, src, sizeof(src), 0, PTL_CT_NONE);
    OK(PtlPut(md, 100, 2500, PTL_ACK_REQ, b->id, pt, 0x55, 10, (void *)7,
              0xabcdef));
    ev = EXPECT_EVENT(a->eq, PTL_EVENT_SEND);
    CHECK(ev.user_ptr == (void *)7 && ev.ni_fail_type == PTL_NI_OK);
    ev = EXPECT_EVENT(a->eq, PTL_EVENT_ACK);
    CHECK(ev.mlength == 2500 && ev.remote_offset == 10 &&
          ev.ni_fail_type == PTL_NI_OK && ev.user_ptr == (void *)7);
    ev = EXPECT_EVENT(b->eq, PTL_EVENT_PUT);
    CHECK(ev.rlength == 2500 && ev.mlength == 2500 && ev.remote_offset == 10);
    CHECK(ev.start == dst + 10 && ev.hdr_data == 0xabcdef &&
          ev.match_bits == 0x55 && ev.user_ptr == (void *)0x1234);
    CHECK(ev.initiator.phys.nid == a->id.phys.nid &&
          ev.initiator.phys.pid == a->id.phys.pid);
    CHECK(ev.uid == PTL_TEST_UID && ev.pt_index == pt);
    CHECK(memcmp(dst + 10, src + 100, 2500) == 0);
    for (int i = 0; i < 10; i++)
        CHECK(dst[i] == 0);
    for (size_t i = 2510; i < sizeof(dst); i++)
        CHECK(dst[i] == 0);
    /* MD stays bound until released; an ME with no pending ops unlinks. */
    OK(PtlMEUnlink(meh));
    CHECK_RC(PtlMEUnlink(meh), PTL_ARG_INVALID);
    OK(PtlMDRelease(md));
    OK(PtlPTFree(b->ni, pt));
    printf("put/ack ok\n");
}

static void test_get(struct node *a, struct node *b)
{
    static char data[5000], dst[6000];
    tp_fill(data, sizeof(data), 9);
    memset(dst, 0xee, sizeof(dst));
    ptl_pt_index_t pt = tp_pt(b, 0);
    ptl_me_t me = tp_me(data, sizeof(data), PTL_ME_OP_GET, 3, 0);
    ptl_handle_me_t meh;
    OK(PtlMEAppend(b->ni, pt, &me, PTL_PRIORITY_LIST, NULL, &meh));
    EXPECT_EVENT(b->eq, PTL_EVENT_LINK);
    ptl_handle_md_t md = tp_md(a, dst, sizeof(dst), 0, PTL_CT_NONE);
    OK(PtlGet(md, 50, 4000, b->id, pt, 3, 700, (void *)9));
    ptl_event_t ev = EXPECT_EVENT(a->eq, PTL_EVENT_REPLY);
    CHECK(ev.mlength == 4000 && ev.ni_fail_type == PTL_NI_OK &&
          ev.user_ptr == (void *)9 && ev.remote_offset == 700);
    CHECK(memcmp(dst + 50, data + 700, 4000) == 0);
    CHECK((unsigned char)dst[49] == 0xee && (unsigned char)dst[4050] == 0xee);
    ev = EXPECT_EVENT(b->eq, PTL_EVENT_GET);
    CHECK(ev.mlength == 4000 && ev.rlength == 4000);
    /* Get truncated by the end of the ME buffer. */
    OK(PtlGet(md, 0, 1000, b->id, pt, 3, 4500, NULL));
    ev = EXPECT_EVENT(a->eq, PTL_EVENT_REPLY);
    CHECK(ev.mlength == 500);
    CHECK(memcmp(dst, data + 4500, 500) == 0);
    EXPECT_EVENT(b->eq, PTL_EVENT_GET);
    /* Get from an ME without OP_GET: operation violation. */
    ptl_me_t me2 = tp_me(data, sizeof(data), PTL_ME_OP_PUT, 4, 0);
    ptl_handle_me_t meh2;
    OK(PtlMEAppend(b->ni, pt, &me2, PTL_PRIORITY_LIST, NULL, &meh2));
    EXPECT_EVENT(b->eq, PTL_EVENT_LINK);
    ptl_sr_value_t v0, v1;
    OK(PtlNIStatus(b->ni, PTL_SR_OPERATIONS_VIOLATIONS, &v0));
    OK(PtlGet(md, 0, 10, b->id, pt, 4, 0, NULL));
    ev = EXPECT_EVENT(a->eq, PTL_EVENT_REPLY);
    CHECK(ev.ni_fail_type == PTL_NI_OP_VIOLATION && ev.mlength == 0);
    OK(PtlNIStatus(b->ni, PTL_SR_OPERATIONS_VIOLATIONS, &v1));
    CHECK(v1 == v0 + 1);
    EXPECT_NO_EVENT(b->eq);
    OK(PtlMEUnlink(meh));
    OK(PtlMEUnlink(meh2));
    OK(PtlMDRelease(md));
    OK(PtlPTFree(b->ni, pt));
    printf("get/reply ok\n");
}

static void test_logical(void)
{
    struct node a, b;
    tp_node(&a, 0, PTL_NI_MATCHING | PTL_NI_LOGICAL);
    tp_node(&b, 1, PTL_NI_MATCHING | PTL_NI_LOGICAL);
    ptl_process_t map[2] = { tp_phys(0), tp_phys(1) };
    ptl_process_t id;
    CHECK_RC(PtlGetId(a.ni, &id), PTL_FAIL); /* no map yet */
    OK(PtlSetMap(a.ni, 2, map));
    OK(PtlSetMap(b.ni, 2, map));
    OK(PtlGetId(a.ni, &id));
    CHECK(id.rank == 0);
    OK(PtlGetId(b.ni, &id));
    CHECK(id.rank == 1);
    ptl_process_t got[4];
    ptl_size_t n;
    OK(PtlGetMap(a.ni, 4, got, &n));
    CHECK(n == 2 && got[1].phys.nid == map[1].phys.nid);
    char src[64], dst[64];
    tp_fill(src, sizeof(src), 3);
    memset(dst, 0, sizeof(dst));
    ptl_pt_index_t pt = tp_pt(&b, 0);
    ptl_me_t me = tp_me(dst, sizeof(dst), PTL_ME_OP_PUT, 1, 0);
    me.match_id.rank = 0; /* only rank 0 may match */
    ptl_handle_me_t meh;
    OK(PtlMEAppend(b.ni, pt, &me, PTL_PRIORITY_LIST, NULL, &meh));
    EXPECT_EVENT(b.eq, PTL_EVENT_LINK);
    ptl_handle_md_t md = tp_md(&a, src, sizeof(src), 0, PTL_CT_NONE);
    ptl_process_t r1 = { .rank = 1 }, r9 = { .rank = 9 };
    CHECK_RC(PtlPut(md, 0, 64, PTL_ACK_REQ, r9, pt, 1, 0, NULL, 0),
             PTL_ARG_INVALID);
    OK(PtlPut(md, 0, 64, PTL_ACK_REQ, r1, pt, 1, 0, NULL, 0));
    ptl_event_t ev = EXPECT_EVENT(b.eq, PTL_EVENT_PUT);
    CHECK(ev.initiator.rank == 0);
    CHECK(memcmp(src, dst, 64) == 0);
    EXPECT_EVENT(a.eq, PTL_EVENT_SEND);
    ev = EXPECT_EVENT(a.eq, PTL_EVENT_ACK);
    CHECK(ev.ni_fail_type == PTL_NI_OK);
    OK(PtlMDRelease(md));
    OK(PtlMEUnlink(meh));
    OK(PtlNIFini(a.ni));
    OK(PtlNIFini(b.ni));
    printf("logical ok\n");
}

static void test_nonmatching_iovec(void)
{
    struct node a, b;
    tp_node(&a, 0, PTL_NI_NO_MATCHING | PTL_NI_PHYSICAL);
    tp_node(&b, 1, PTL_NI_NO_MATCHING | PTL_NI_PHYSICAL);
    static char s1[1000], s2[2500], s3[7], d1[3000], d2[1000];
    tp_fill(s1, sizeof(s1), 1);
    tp_fill(s2, sizeof(s2), 2);
    tp_fill(s3, sizeof(s3), 3);
    ptl_iovec_t siov[3] = { { s1, sizeof(s1) }, { s2, sizeof(s2) },
                            { s3, sizeof(s3) } };
    ptl_iovec_t diov[2] = { { d1, sizeof(d1) }, { d2, sizeof(d2) } };
    ptl_pt_index_t pt = tp_pt(&b, 0);
    ptl_le_t le = { .start = diov, .length = 2, .ct_handle = PTL_CT_NONE,
                    .uid = PTL_UID_ANY, .options = PTL_LE_OP_PUT | PTL_IOVEC };
    ptl_handle_le_t leh;
    OK(PtlLEAppend(b.ni, pt, &le, PTL_PRIORITY_LIST, NULL, &leh));
    EXPECT_EVENT(b.eq, PTL_EVENT_LINK);
    /* An ME on a non-matching NI is refused. */
    ptl_me_t me = tp_me(d1, 10, PTL_ME_OP_PUT, 0, 0);
    ptl_handle_me_t meh;
    CHECK_RC(PtlMEAppend(b.ni, pt, &me, PTL_PRIORITY_LIST, NULL, &meh),
             PTL_ARG_INVALID);
    ptl_md_t mdd = { siov, 3, PTL_IOVEC, a.eq, PTL_CT_NONE };
    ptl_handle_md_t md;
    OK(PtlMDBind(a.ni, &mdd, &md));
    OK(PtlPut(md, 0, 3507, PTL_ACK_REQ, b.id, pt, 0, 0, NULL, 0));
    EXPECT_EVENT(a.eq, PTL_EVENT_SEND);
    ptl_event_t ev = EXPECT_EVENT(a.eq, PTL_EVENT_ACK);
    CHECK(ev.mlength == 3507);
    EXPECT_EVENT(b.eq, PTL_EVENT_PUT);
    static char flat_s[3507], flat_d[4000];
    memcpy(flat_s, s1, 1000);
    memcpy(flat_s + 1000, s2, 2500);
    memcpy(flat_s + 3500, s3, 7);
    memcpy(flat_d, d1, 3000);
    memcpy(flat_d + 3000, d2, 1000);
    CHECK(memcmp(flat_s, flat_d, 3507) == 0);
    OK(PtlLEUnlink(leh));
    /* Overflow LE + PtlLESearch on a non-matching NI: every message
     * matches every LE. */
    static char ovf[512];
    ptl_le_t ol = { .start = ovf, .length = sizeof(ovf),
                    .ct_handle = PTL_CT_NONE, .uid = PTL_UID_ANY,
                    .options = PTL_LE_OP_PUT | PTL_LE_OP_GET };
    OK(PtlLEAppend(b.ni, pt, &ol, PTL_OVERFLOW_LIST, NULL, &leh));
    EXPECT_EVENT(b.eq, PTL_EVENT_LINK);
    OK(PtlPut(md, 0, 100, PTL_NO_ACK_REQ, b.id, pt, 0, 0, NULL, 0x99));
    EXPECT_EVENT(a.eq, PTL_EVENT_SEND);
    EXPECT_EVENT(b.eq, PTL_EVENT_PUT);
    ptl_le_t probe = { .ct_handle = PTL_CT_NONE, .uid = PTL_UID_ANY,
                       .options = PTL_LE_OP_PUT };
    OK(PtlLESearch(b.ni, pt, &probe, PTL_SEARCH_ONLY, (void *)4));
    ev = EXPECT_EVENT(b.eq, PTL_EVENT_SEARCH);
    CHECK(ev.ni_fail_type == PTL_NI_OK && ev.hdr_data == 0x99 &&
          ev.user_ptr == (void *)4 && ev.mlength == 100);
    OK(PtlLESearch(b.ni, pt, &probe, PTL_SEARCH_DELETE, NULL));
    EXPECT_EVENT(b.eq, PTL_EVENT_PUT_OVERFLOW);
    OK(PtlLESearch(b.ni, pt, &probe, PTL_SEARCH_ONLY, NULL));
    CHECK(EXPECT_EVENT(b.eq, PTL_EVENT_SEARCH).ni_fail_type ==
          PTL_NI_NO_MATCH);
    /* A zero-length get still gets its REPLY (and the target its GET). */
    OK(PtlGet(md, 0, 0, b.id, pt, 0, 0, (void *)8));
    ev = EXPECT_EVENT(a.eq, PTL_EVENT_REPLY);
    CHECK(ev.mlength == 0 && ev.ni_fail_type == PTL_NI_OK &&
          ev.user_ptr == (void *)8);
    EXPECT_EVENT(b.eq, PTL_EVENT_GET);
    OK(PtlLEUnlink(leh));
    OK(PtlMDRelease(md));
    OK(PtlNIFini(a.ni));
    OK(PtlNIFini(b.ni));
    printf("non-matching + iovec ok\n");
}

/* Outstanding operations are bounded (max_mds): PTL_NO_SPACE, not a
 * crash; slots come back once the operations finish (here: fail). */
static void test_op_limit(void)
{
    ptl_ni_limits_t want = { 0 }, got;
    want.max_mds = 2;
    struct node n;
    n.iface = 0;
    OK(PtlNIInit(0, PTL_NI_NO_MATCHING | PTL_NI_LOGICAL, PTL_PID_ANY, &want,
                 &got, &n.ni));
    CHECK(got.max_mds == 2);
    OK(PtlEQAlloc(n.ni, 16, &n.eq));
    ptl_process_t ghost = { .phys = { PTL_TEST_NID(6), PTL_TEST_PID } };
    OK(PtlSetMap(n.ni, 1, &ghost));
    static char b[16];
    ptl_handle_md_t md = tp_md(&n, b, sizeof(b), 0, PTL_CT_NONE), md2;
    CHECK_RC(PtlMDBind(n.ni, &(ptl_md_t){ b, 1, 0, PTL_EQ_NONE, PTL_CT_NONE },
                       &md2), PTL_OK);
    CHECK_RC(PtlMDBind(n.ni, &(ptl_md_t){ b, 1, 0, PTL_EQ_NONE, PTL_CT_NONE },
                       &md2), PTL_NO_SPACE);
    ptl_process_t r0 = { .rank = 0 };
    OK(PtlPut(md, 0, 8, PTL_NO_ACK_REQ, r0, 0, 0, 0, NULL, 0));
    OK(PtlPut(md, 0, 8, PTL_NO_ACK_REQ, r0, 0, 0, 0, NULL, 0));
    CHECK_RC(PtlPut(md, 0, 8, PTL_NO_ACK_REQ, r0, 0, 0, 0, NULL, 0),
             PTL_NO_SPACE);
    CHECK_RC(PtlMDRelease(md), PTL_IN_USE);
    for (int i = 0; i < 2; i++)
        CHECK(EXPECT_EVENT(n.eq, PTL_EVENT_SEND).ni_fail_type ==
              PTL_NI_UNDELIVERABLE);
    OK(PtlPut(md, 0, 8, PTL_NO_ACK_REQ, r0, 0, 0, 0, NULL, 0));
    CHECK(EXPECT_EVENT(n.eq, PTL_EVENT_SEND).ni_fail_type ==
          PTL_NI_UNDELIVERABLE);
    OK(PtlMDRelease(md));
    OK(PtlNIFini(n.ni));
    printf("operation limit ok\n");
}

/* A process putting to and getting from itself. */
static void test_self(struct node *a)
{
    static char src[5000], dst[5000], back[5000];
    tp_fill(src, sizeof(src), 6);
    ptl_pt_index_t pt = tp_pt(a, 0);
    ptl_me_t me = tp_me(dst, sizeof(dst), PTL_ME_OP_PUT | PTL_ME_OP_GET |
                        PTL_ME_EVENT_LINK_DISABLE, 0, ~0ull);
    ptl_handle_me_t h;
    OK(PtlMEAppend(a->ni, pt, &me, PTL_PRIORITY_LIST, NULL, &h));
    ptl_handle_md_t md = tp_md(a, src, sizeof(src), 0, PTL_CT_NONE);
    ptl_handle_md_t bmd = tp_md(a, back, sizeof(back), 0, PTL_CT_NONE);
    OK(PtlPut(md, 0, sizeof(src), PTL_ACK_REQ, a->id, pt, 0, 0, NULL, 0));
    int seen = 0;
    for (int i = 0; i < 3; i++) {
        ptl_event_t ev;
        unsigned w;
        OK(PtlEQPoll(&a->eq, 1, 20000, &ev, &w));
        CHECK(ev.ni_fail_type == PTL_NI_OK);
        seen |= 1 << ev.type;
    }
    CHECK(seen == (1 << PTL_EVENT_SEND | 1 << PTL_EVENT_ACK |
                   1 << PTL_EVENT_PUT));
    CHECK(memcmp(src, dst, sizeof(src)) == 0);
    OK(PtlGet(bmd, 0, sizeof(back), a->id, pt, 0, 0, NULL));
    seen = 0;
    for (int i = 0; i < 2; i++) {
        ptl_event_t ev;
        unsigned w;
        OK(PtlEQPoll(&a->eq, 1, 20000, &ev, &w));
        seen |= 1 << ev.type;
    }
    CHECK(seen == (1 << PTL_EVENT_REPLY | 1 << PTL_EVENT_GET));
    CHECK(memcmp(back, src, sizeof(src)) == 0);
    OK(PtlMEUnlink(h));
    OK(PtlMDRelease(md));
    OK(PtlMDRelease(bmd));
    OK(PtlPTFree(a->ni, pt));
    printf("self put/get ok\n");
}

int main(void)
{
    test_no_init();
    ptl_test_host_init(2, 1500);
    OK(PtlInit());
    struct node a, b;
    tp_node(&a, 0, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    tp_node(&b, 1, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    CHECK(a.lim.max_pt_index >= 63 && a.lim.max_msg_size >= (16u << 20));
    CHECK(a.lim.max_atomic_size >= 8 && a.lim.max_entries > 0);
    ptl_handle_ni_t again;
    ptl_ni_limits_t lim;
    OK(PtlNIInit(0, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY, NULL,
                 &lim, &again));
    CHECK(again == a.ni && lim.max_entries == a.lim.max_entries);
    OK(PtlNIFini(again));
    CHECK_RC(PtlNIInit(0, PTL_NI_MATCHING | PTL_NI_NO_MATCHING |
                              PTL_NI_PHYSICAL, PTL_PID_ANY, NULL, NULL,
                       &again), PTL_ARG_INVALID);
    CHECK_RC(PtlNIInit(5, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY,
                       NULL, NULL, &again), PTL_ARG_INVALID);
    ptl_ni_limits_t want = { 0 };
    want.max_entries = 10;
    struct node c;
    c.iface = 0;
    OK(PtlNIInit(0, PTL_NI_MATCHING | PTL_NI_LOGICAL, PTL_PID_ANY, &want,
                 &lim, &c.ni));
    CHECK(lim.max_entries == 10);
    OK(PtlNIFini(c.ni));
    /* A smaller max_msg_size is honoured. */
    want.max_entries = 0;
    want.max_msg_size = 1000;
    OK(PtlNIInit(0, PTL_NI_NO_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY, &want,
                 &lim, &c.ni));
    CHECK(lim.max_msg_size == 1000);
    {
        static char big[2000];
        ptl_md_t d = { big, sizeof(big), 0, PTL_EQ_NONE, PTL_CT_NONE };
        ptl_handle_md_t h;
        OK(PtlMDBind(c.ni, &d, &h));
        CHECK_RC(PtlPut(h, 0, 1001, PTL_NO_ACK_REQ, tp_phys(1), 0, 0, 0, NULL,
                        0), PTL_ARG_INVALID);
        OK(PtlMDRelease(h));
    }
    OK(PtlNIFini(c.ni));
    ptl_uid_t uid;
    OK(PtlGetUid(a.ni, &uid));
    CHECK(uid == PTL_TEST_UID);
    CHECK(a.id.phys.nid == PTL_TEST_NID(0) && b.id.phys.nid == PTL_TEST_NID(1));
    test_bad_handles(&a);
    test_put_ack(&a, &b);
    test_get(&a, &b);
    test_logical();
    test_nonmatching_iovec();
    test_op_limit();
    test_self(&a);
    OK(PtlNIFini(a.ni));
    OK(PtlNIFini(b.ni));
    PtlFini();
    printf("test_basic: PASS\n");
    return 0;
}
