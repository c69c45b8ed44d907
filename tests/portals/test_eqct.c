/* Event queues, counting events, initiator event options, flow control. */
#include "tp.h"

static struct node A, B;
static char src[4096], dst[65536];

static void test_eq_overflow(void)
{
    ptl_handle_eq_t small;
    OK(PtlEQAlloc(A.ni, 4, &small));
    ptl_md_t d = { src, sizeof(src), 0, small, PTL_CT_NONE };
    ptl_handle_md_t md;
    OK(PtlMDBind(A.ni, &d, &md));
    ptl_pt_index_t pt = tp_pt(&B, 0);
    ptl_me_t me = tp_me(dst, sizeof(dst), PTL_ME_OP_PUT |
                        PTL_ME_EVENT_COMM_DISABLE, 0, ~0ull);
    ptl_handle_me_t h;
    OK(PtlMEAppend(B.ni, pt, &me, PTL_PRIORITY_LIST, NULL, &h));
    EXPECT_EVENT(B.eq, PTL_EVENT_LINK);
    /* 200 SEND+ACK events into an EQ of 4: it keeps the newest 4. */
    ptl_handle_ct_t ct;
    OK(PtlCTAlloc(B.ni, &ct));
    for (int i = 0; i < 100; i++)
        OK(PtlPut(md, 0, 8, PTL_ACK_REQ, B.id, pt, 0, 0, (void *)(long)i, 0));
    ptl_event_t ev;
    int rc, n = 0, dropped = 0;
    unsigned which;
    /* Let everything complete first, then read. */
    for (int i = 0; i < 200; i++)
        PtlEQPoll(&B.eq, 1, 5, &ev, &which);
    while ((rc = PtlEQGet(small, &ev)) != PTL_EQ_EMPTY) {
        CHECK(rc == PTL_OK || rc == PTL_EQ_DROPPED);
        dropped += rc == PTL_EQ_DROPPED;
        n++;
        CHECK(n <= 1000);
    }
    CHECK(dropped == 1);
    CHECK(n == 4);
    /* The survivors are the newest events: the last ACK is there. */
    CHECK(ev.type == PTL_EVENT_ACK && ev.user_ptr == (void *)99L);
    CHECK_RC(PtlEQFree(small), PTL_OK);
    CHECK_RC(PtlEQGet(small, &ev), PTL_ARG_INVALID);
    OK(PtlMDRelease(md));
    OK(PtlMEUnlink(h));
    OK(PtlCTFree(ct));
    OK(PtlPTFree(B.ni, pt));
    printf("eq overflow ok\n");
}

static void test_md_events_and_counts(void)
{
    ptl_pt_index_t pt = tp_pt(&B, 0);
    ptl_me_t me = tp_me(dst, sizeof(dst), PTL_ME_OP_PUT | PTL_ME_OP_GET, 0,
                        ~0ull);
    ptl_handle_me_t h;
    OK(PtlMEAppend(B.ni, pt, &me, PTL_PRIORITY_LIST, NULL, &h));
    EXPECT_EVENT(B.eq, PTL_EVENT_LINK);
    ptl_handle_ct_t ct;
    OK(PtlCTAlloc(A.ni, &ct));
    /* Success events disabled, counting bytes of SEND and ACK. */
    ptl_handle_md_t md = tp_md(&A, src, sizeof(src),
                               PTL_MD_EVENT_SUCCESS_DISABLE |
                               PTL_MD_EVENT_CT_SEND | PTL_MD_EVENT_CT_ACK |
                               PTL_MD_EVENT_CT_BYTES, ct);
    OK(PtlPut(md, 0, 1000, PTL_ACK_REQ, B.id, pt, 0, 0, NULL, 0));
    OK(PtlPut(md, 0, 300, PTL_CT_ACK_REQ, B.id, pt, 0, 4000, NULL, 0));
    ptl_ct_event_t cv;
    OK(PtlCTWait(ct, 2600, &cv));
    CHECK(cv.success == 2600 && cv.failure == 0);
    EXPECT_NO_EVENT(A.eq);
    EXPECT_EVENT(B.eq, PTL_EVENT_PUT);
    EXPECT_EVENT(B.eq, PTL_EVENT_PUT);
    /* Failures still produce events and count as one each. */
    OK(PtlPut(md, 0, 10, PTL_ACK_REQ, B.id, 60, 0, 0, NULL, 0));
    ptl_event_t ev = EXPECT_EVENT(A.eq, PTL_EVENT_ACK);
    CHECK(ev.ni_fail_type == PTL_NI_DROPPED);
    OK(PtlCTWait(ct, 2611, &cv));
    CHECK(cv.failure == 1 && cv.success == 2610);
    OK(PtlMDRelease(md));
    /* SEND_DISABLE + counting operations on REPLY. */
    OK(PtlCTSet(ct, (ptl_ct_event_t){ 0, 0 }));
    md = tp_md(&A, src, sizeof(src), PTL_MD_EVENT_SEND_DISABLE |
               PTL_MD_EVENT_CT_REPLY | PTL_MD_EVENT_CT_SEND, ct);
    OK(PtlPut(md, 0, 10, PTL_NO_ACK_REQ, B.id, pt, 0, 0, NULL, 0));
    OK(PtlGet(md, 0, 10, B.id, pt, 0, 0, NULL));
    ev = EXPECT_EVENT(A.eq, PTL_EVENT_REPLY);
    OK(PtlCTWait(ct, 2, &cv));
    CHECK(cv.success == 2);
    EXPECT_NO_EVENT(A.eq);
    EXPECT_EVENT(B.eq, PTL_EVENT_PUT);
    EXPECT_EVENT(B.eq, PTL_EVENT_GET);
    /* OC ack counts the operation even if it failed at the target. */
    OK(PtlCTSet(ct, (ptl_ct_event_t){ 0, 0 }));
    OK(PtlMDRelease(md));
    md = tp_md(&A, src, sizeof(src), PTL_MD_EVENT_CT_ACK, ct);
    OK(PtlPut(md, 0, 10, PTL_OC_ACK_REQ, B.id, 61, 0, 0, NULL, 0));
    EXPECT_EVENT(A.eq, PTL_EVENT_SEND);
    OK(PtlCTWait(ct, 1, &cv));
    CHECK(cv.success == 1 && cv.failure == 0);
    EXPECT_NO_EVENT(A.eq); /* OC/CT acks never make full events */
    OK(PtlMDRelease(md));
    /* CT API. */
    OK(PtlCTInc(ct, (ptl_ct_event_t){ 5, 0 }));
    OK(PtlCTInc(ct, (ptl_ct_event_t){ 0, 2 }));
    OK(PtlCTGet(ct, &cv));
    CHECK(cv.success == 6 && cv.failure == 2);
    unsigned which = 99;
    ptl_size_t test = 100;
    CHECK_RC(PtlCTPoll(&ct, &test, 1, 10, &cv, &which), PTL_CT_NONE_REACHED);
    test = 8;
    OK(PtlCTPoll(&ct, &test, 1, 10, &cv, &which));
    CHECK(which == 0);
    OK(PtlCTFree(ct));
    OK(PtlMEUnlink(h));
    OK(PtlPTFree(B.ni, pt));
    printf("md events and counts ok\n");
}

static void test_flow_control(void)
{
    ptl_handle_eq_t teq;
    OK(PtlEQAlloc(B.ni, 64, &teq));
    ptl_pt_index_t pt;
    OK(PtlPTAlloc(B.ni, PTL_PT_FLOWCTRL, teq, PTL_PT_ANY, &pt));
    ptl_handle_md_t md = tp_md(&A, src, sizeof(src), 0, PTL_CT_NONE);
    ptl_me_t me = tp_me(dst, 100, PTL_ME_OP_PUT | PTL_ME_USE_ONCE |
                        PTL_ME_EVENT_LINK_DISABLE | PTL_ME_EVENT_UNLINK_DISABLE,
                        1, 0);
    ptl_handle_me_t h;
    OK(PtlMEAppend(B.ni, pt, &me, PTL_PRIORITY_LIST, NULL, &h));
    ptl_sr_value_t d0, d1;
    OK(PtlNIStatus(B.ni, PTL_SR_DROP_COUNT, &d0));
    tp_fill(src, 300, 4);
    for (int i = 0; i < 3; i++)
        OK(PtlPut(md, i * 100, 100, PTL_ACK_REQ, B.id, pt, 1, 0,
                  (void *)(long)i, 0));
    int ok = 0, disabled = 0;
    for (int i = 0; i < 6; i++) {
        ptl_event_t ev;
        unsigned w;
        OK(PtlEQPoll(&A.eq, 1, 20000, &ev, &w));
        if (ev.type != PTL_EVENT_ACK)
            continue;
        if (ev.ni_fail_type == PTL_NI_OK) {
            CHECK(ev.user_ptr == (void *)0L);
            ok++;
        } else {
            CHECK(ev.ni_fail_type == PTL_NI_PT_DISABLED);
            disabled++;
        }
    }
    CHECK(ok == 1 && disabled == 2);
    EXPECT_EVENT(teq, PTL_EVENT_PUT);
    ptl_event_t ev = EXPECT_EVENT(teq, PTL_EVENT_PT_DISABLED);
    CHECK(ev.pt_index == pt);
    EXPECT_NO_EVENT(teq); /* only the first drop disables; once */
    OK(PtlNIStatus(B.ni, PTL_SR_DROP_COUNT, &d1));
    CHECK(d1 == d0 + 2);
    CHECK(memcmp(dst, src, 100) == 0);
    /* Gets learn it from the REPLY. */
    OK(PtlGet(md, 0, 10, B.id, pt, 1, 0, NULL));
    ev = EXPECT_EVENT(A.eq, PTL_EVENT_REPLY);
    CHECK(ev.ni_fail_type == PTL_NI_PT_DISABLED);
    /* Recover: post a buffer, re-enable, resend. */
    OK(PtlMEAppend(B.ni, pt, &me, PTL_PRIORITY_LIST, NULL, &h));
    OK(PtlPTEnable(B.ni, pt));
    OK(PtlPut(md, 100, 100, PTL_ACK_REQ, B.id, pt, 1, 0, NULL, 0));
    EXPECT_EVENT(A.eq, PTL_EVENT_SEND);
    ev = EXPECT_EVENT(A.eq, PTL_EVENT_ACK);
    CHECK(ev.ni_fail_type == PTL_NI_OK);
    EXPECT_EVENT(teq, PTL_EVENT_PUT);
    CHECK(memcmp(dst, src + 100, 100) == 0);
    /* Manual disable: messages are refused, no PT_DISABLED event. */
    OK(PtlPTDisable(B.ni, pt));
    OK(PtlPut(md, 0, 10, PTL_ACK_REQ, B.id, pt, 1, 0, NULL, 0));
    EXPECT_EVENT(A.eq, PTL_EVENT_SEND);
    CHECK(EXPECT_EVENT(A.eq, PTL_EVENT_ACK).ni_fail_type ==
          PTL_NI_PT_DISABLED);
    EXPECT_NO_EVENT(teq);
    OK(PtlPTEnable(B.ni, pt));
    /* The EQ may go while the PT still names it (spec: PtlEQFree answers
     * only OK, NO_INIT or ARG_INVALID): the PT works on without events,
     * and an EQ that takes the slot next hears nothing from it. */
    OK(PtlEQFree(teq));
    ptl_handle_eq_t next;
    OK(PtlEQAlloc(B.ni, 16, &next));
    ptl_me_t pm = tp_me(dst, 100, PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE, 1, 0);
    OK(PtlMEAppend(B.ni, pt, &pm, PTL_PRIORITY_LIST, NULL, &h));
    OK(PtlPut(md, 0, 10, PTL_ACK_REQ, B.id, pt, 1, 0, NULL, 0));
    EXPECT_EVENT(A.eq, PTL_EVENT_SEND);
    CHECK(EXPECT_EVENT(A.eq, PTL_EVENT_ACK).ni_fail_type == PTL_NI_OK);
    EXPECT_NO_EVENT(next);
    OK(PtlEQFree(next));
    OK(PtlMEUnlink(h));
    OK(PtlPTFree(B.ni, pt));
    OK(PtlMDRelease(md));
    printf("flow control ok\n");
}

static void test_flow_control_eq_full(void)
{
    /* A full target EQ is also resource exhaustion under flow control. */
    ptl_handle_eq_t teq;
    OK(PtlEQAlloc(B.ni, 2, &teq));
    ptl_pt_index_t pt;
    OK(PtlPTAlloc(B.ni, PTL_PT_FLOWCTRL, teq, PTL_PT_ANY, &pt));
    ptl_me_t me = tp_me(dst, sizeof(dst), PTL_ME_OP_PUT |
                        PTL_ME_EVENT_LINK_DISABLE, 0, ~0ull);
    ptl_handle_me_t h;
    OK(PtlMEAppend(B.ni, pt, &me, PTL_PRIORITY_LIST, NULL, &h));
    ptl_handle_md_t md = tp_md(&A, src, sizeof(src), 0, PTL_CT_NONE);
    int fails = 0, oks = 0, rounds = 0;
    while (!fails && rounds++ < 500) {
        OK(PtlPut(md, 0, 8, PTL_ACK_REQ, B.id, pt, 0, 0, NULL, 0));
        EXPECT_EVENT(A.eq, PTL_EVENT_SEND);
        ptl_event_t ev = EXPECT_EVENT(A.eq, PTL_EVENT_ACK);
        if (ev.ni_fail_type == PTL_NI_PT_DISABLED)
            fails++;
        else
            oks++;
    }
    /* The EQ holds the 2 events asked for: the third message finds it
     * full and disables the portal (its PT_DISABLED event has room). */
    CHECK(fails == 1 && oks == 2);
    ptl_event_t ev;
    int puts = 0, dis = 0, rc;
    while ((rc = PtlEQGet(teq, &ev)) == PTL_OK) {
        puts += ev.type == PTL_EVENT_PUT;
        dis += ev.type == PTL_EVENT_PT_DISABLED;
    }
    CHECK(rc == PTL_EQ_EMPTY); /* nothing was lost from the EQ */
    CHECK(puts == oks && dis == 1);
    OK(PtlMEUnlink(h));
    OK(PtlPTFree(B.ni, pt));
    OK(PtlEQFree(teq));
    OK(PtlMDRelease(md));
    printf("flow control on full EQ ok\n");
}

int main(void)
{
    ptl_test_host_init(2, 1500);
    OK(PtlInit());
    tp_node(&A, 0, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    tp_node(&B, 1, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    test_eq_overflow();
    test_md_events_and_counts();
    test_flow_control();
    test_flow_control_eq_full();
    PtlFini();
    printf("test_eqct: PASS\n");
    return 0;
}
