/* The unexpected list while messages are still arriving: an append that
 * claims a half-received message, AUTO_FREE of overflow entries, gets that
 * matched the overflow list, searches, and a sender vanishing mid-message.
 * Frames from a fake node are injected by hand to stop mid-message. */
#include "tp_craft.h"

#define FAKE 0x1f0
static struct node A, B;
static ptl_pt_index_t pt;
static uint32_t session = 0x500;
static uint8_t frame[2048], pay[3000];

/* Inject fragment k (0-based, 1000 bytes each) of a put of n fragments. */
static void frag(uint32_t sess, int k, int n, ptl_match_bits_t bits,
                 uint64_t msg_id)
{
    struct ptl_wire_hdr h = tp_put_hdr(&B, pt, FAKE, sess, 1000u * n, 0);
    h.flags = PTL_WF_SEQ | (k == 0 ? PTL_WF_FIRST : 0) |
              (k == n - 1 ? PTL_WF_LAST : 0);
    h.seq = (uint32_t)k;
    h.frag_off = 1000u * k;
    h.match_bits = bits;
    h.msg_id = msg_id;
    h.hdr_data = 0xfeed;
    size_t len = tp_craft(frame, &h, pay + 1000 * k, 1000);
    ptl_lib_rx(1, frame, len);
}

static ptl_handle_me_t append(ptl_me_t *me, ptl_list_t l, void *up)
{
    ptl_handle_me_t h;
    OK(PtlMEAppend(B.ni, pt, me, l, up, &h));
    return h;
}

static void claim_incomplete(void)
{
    static char ovf[8192], pri[4096];
    memset(ovf, 0, sizeof(ovf));
    memset(pri, 0x11, sizeof(pri));
    ptl_me_t o = tp_me(ovf, sizeof(ovf), PTL_ME_OP_PUT | PTL_ME_MANAGE_LOCAL |
                       PTL_ME_EVENT_LINK_DISABLE, 0, ~0ull);
    ptl_handle_me_t ho = append(&o, PTL_OVERFLOW_LIST, (void *)0xAA);
    uint32_t s = session++;
    frag(s, 0, 3, 7, 1);
    EXPECT_NO_EVENT(B.eq); /* nothing complete yet */
    ptl_me_t p = tp_me(pri, sizeof(pri), PTL_ME_OP_PUT | PTL_ME_USE_ONCE, 7, 0);
    ptl_handle_me_t hp = append(&p, PTL_PRIORITY_LIST, (void *)0xBB);
    EXPECT_NO_EVENT(B.eq); /* claimed, but the data is not all there */
    CHECK_RC(PtlMEUnlink(hp), PTL_ARG_INVALID); /* consumed, not linked */
    CHECK_RC(PtlMEUnlink(ho), PTL_IN_USE);      /* message in progress */
    frag(s, 2, 3, 7, 1); /* out of order: placed directly */
    EXPECT_NO_EVENT(B.eq);
    frag(s, 1, 3, 7, 1);
    ptl_event_t ev = EXPECT_EVENT(B.eq, PTL_EVENT_PUT);
    CHECK(ev.user_ptr == (void *)0xAA && ev.start == ovf && ev.mlength == 3000);
    ev = EXPECT_EVENT(B.eq, PTL_EVENT_PUT_OVERFLOW);
    CHECK(ev.user_ptr == (void *)0xBB && ev.start == ovf &&
          ev.mlength == 3000 && ev.hdr_data == 0xfeed);
    EXPECT_EVENT(B.eq, PTL_EVENT_AUTO_UNLINK);
    CHECK(memcmp(ovf, pay, 3000) == 0);
    CHECK(pri[0] == 0x11 && pri[2999] == 0x11); /* no copy into the ME */
    OK(PtlMEUnlink(ho));
    printf("claim of a half-received message ok\n");
}

static void auto_free_and_get(void)
{
    static char ovf[4096], pri[64];
    ptl_me_t o = tp_me(ovf, sizeof(ovf), PTL_ME_OP_PUT | PTL_ME_OP_GET |
                       PTL_ME_USE_ONCE, 0, ~0ull);
    append(&o, PTL_OVERFLOW_LIST, (void *)0xCC);
    EXPECT_EVENT(B.eq, PTL_EVENT_LINK);
    frag(session++, 0, 1, 9, 2);
    ptl_event_t ev = EXPECT_EVENT(B.eq, PTL_EVENT_PUT);
    CHECK(ev.user_ptr == (void *)0xCC);
    ev = EXPECT_EVENT(B.eq, PTL_EVENT_AUTO_UNLINK);
    CHECK(ev.user_ptr == (void *)0xCC);
    EXPECT_NO_EVENT(B.eq); /* no AUTO_FREE while a header points at it */
    ptl_me_t p = tp_me(pri, sizeof(pri), PTL_ME_OP_PUT, 9, 0);
    ptl_handle_me_t hp = append(&p, PTL_PRIORITY_LIST, (void *)0xDD);
    ev = EXPECT_EVENT(B.eq, PTL_EVENT_PUT_OVERFLOW);
    CHECK(ev.user_ptr == (void *)0xDD && ev.start == ovf);
    ev = EXPECT_EVENT(B.eq, PTL_EVENT_AUTO_FREE);
    CHECK(ev.user_ptr == (void *)0xCC);
    EXPECT_EVENT(B.eq, PTL_EVENT_LINK);
    OK(PtlMEUnlink(hp));

    /* A get served from the overflow list, reported again on append. */
    static char g[128], got[128];
    tp_fill(g, sizeof(g), 3);
    ptl_me_t og = tp_me(g, sizeof(g), PTL_ME_OP_GET, 0, ~0ull);
    ptl_handle_me_t hog = append(&og, PTL_OVERFLOW_LIST, (void *)0xEE);
    EXPECT_EVENT(B.eq, PTL_EVENT_LINK);
    ptl_handle_md_t md = tp_md(&A, got, sizeof(got), 0, PTL_CT_NONE);
    OK(PtlGet(md, 0, 100, B.id, pt, 0x77, 5, NULL));
    EXPECT_EVENT(A.eq, PTL_EVENT_REPLY);
    CHECK(memcmp(got, g + 5, 100) == 0);
    ev = EXPECT_EVENT(B.eq, PTL_EVENT_GET);
    CHECK(ev.user_ptr == (void *)0xEE);
    ptl_me_t pg = tp_me(NULL, 0, PTL_ME_OP_GET | PTL_ME_USE_ONCE, 0x77, 0);
    append(&pg, PTL_PRIORITY_LIST, (void *)0xFF);
    ev = EXPECT_EVENT(B.eq, PTL_EVENT_GET_OVERFLOW);
    CHECK(ev.user_ptr == (void *)0xFF && ev.mlength == 100 &&
          ev.start == g + 5);
    EXPECT_EVENT(B.eq, PTL_EVENT_AUTO_UNLINK);
    OK(PtlMEUnlink(hog));
    OK(PtlMDRelease(md));
    printf("auto free and overflow gets ok\n");
}

static void search_and_abort(void)
{
    static char ovf[8192];
    ptl_me_t o = tp_me(ovf, sizeof(ovf), PTL_ME_OP_PUT | PTL_ME_MANAGE_LOCAL |
                       PTL_ME_EVENT_LINK_DISABLE, 0, ~0ull);
    ptl_handle_me_t ho = append(&o, PTL_OVERFLOW_LIST, (void *)0x1);
    /* Delete a half-received message by search: reported now, its data
     * still lands in the overflow buffer, nothing else follows. */
    uint32_t s = session++;
    frag(s, 0, 2, 3, 3);
    ptl_me_t probe = tp_me(NULL, 0, PTL_ME_OP_PUT, 3, 0);
    OK(PtlMESearch(B.ni, pt, &probe, PTL_SEARCH_DELETE, (void *)0x2));
    ptl_event_t ev = EXPECT_EVENT(B.eq, PTL_EVENT_PUT_OVERFLOW);
    CHECK(ev.user_ptr == (void *)0x2);
    frag(s, 1, 2, 3, 3);
    EXPECT_EVENT(B.eq, PTL_EVENT_PUT);
    OK(PtlMESearch(B.ni, pt, &probe, PTL_SEARCH_ONLY, NULL));
    CHECK(EXPECT_EVENT(B.eq, PTL_EVENT_SEARCH).ni_fail_type ==
          PTL_NI_NO_MATCH);

    /* The sender restarts (new session) mid-message: the claimed message
     * is reported as failed, the overflow entry is released. */
    s = session++;
    frag(s, 0, 2, 4, 4);
    static char pri[16];
    ptl_me_t p = tp_me(pri, sizeof(pri), PTL_ME_OP_PUT | PTL_ME_USE_ONCE, 4, 0);
    append(&p, PTL_PRIORITY_LIST, (void *)0x3);
    EXPECT_NO_EVENT(B.eq);
    frag(session++, 0, 1, 5, 5); /* new session from the same node */
    ev = EXPECT_EVENT(B.eq, PTL_EVENT_PUT_OVERFLOW);
    CHECK(ev.user_ptr == (void *)0x3 &&
          ev.ni_fail_type == PTL_NI_UNDELIVERABLE);
    EXPECT_EVENT(B.eq, PTL_EVENT_AUTO_UNLINK);
    ev = EXPECT_EVENT(B.eq, PTL_EVENT_PUT); /* the new message */
    CHECK(ev.match_bits == 5);
    /* The remaining header (bits 5) keeps the overflow entry busy only
     * through uh_refs; unlink is allowed and the header stays usable. */
    OK(PtlMEUnlink(ho));
    OK(PtlMESearch(B.ni, pt, &(ptl_me_t){ .options = PTL_ME_OP_PUT,
                                          .ct_handle = PTL_CT_NONE,
                                          .uid = PTL_UID_ANY,
                                          .match_id = { .phys = { PTL_NID_ANY,
                                                                  PTL_PID_ANY } },
                                          .match_bits = 5 },
                   PTL_SEARCH_DELETE, NULL));
    EXPECT_EVENT(B.eq, PTL_EVENT_PUT_OVERFLOW);
    EXPECT_NO_EVENT(B.eq);

    /* The sender falls silent mid-message: after the give-up time the
     * claim is failed and the overflow entry is free again. */
    static char ovf2[4096], pri2[16];
    ptl_me_t o2 = tp_me(ovf2, sizeof(ovf2), PTL_ME_OP_PUT |
                        PTL_ME_EVENT_LINK_DISABLE, 0, ~0ull);
    ptl_handle_me_t ho2 = append(&o2, PTL_OVERFLOW_LIST, (void *)0x6);
    uint32_t silent = session++;
    frag(silent, 0, 3, 8, 6);
    ptl_me_t p2 = tp_me(pri2, sizeof(pri2), PTL_ME_OP_PUT | PTL_ME_USE_ONCE,
                        8, 0);
    append(&p2, PTL_PRIORITY_LIST, (void *)0x7);
    CHECK_RC(PtlMEUnlink(ho2), PTL_IN_USE);
    struct ptl_lib_tunables tun;
    ptl_lib_get_tunables(&tun);
    uint64_t t0 = ptl_test_now();
    ev = EXPECT_EVENT(B.eq, PTL_EVENT_PUT_OVERFLOW);
    CHECK(ev.user_ptr == (void *)0x7 &&
          ev.ni_fail_type == PTL_NI_UNDELIVERABLE);
    CHECK(ptl_test_now() - t0 <= tun.giveup_ns + tun.giveup_ns / 10);
    EXPECT_EVENT(B.eq, PTL_EVENT_AUTO_UNLINK);
    OK(PtlMEUnlink(ho2));
    /* If it comes back, the rest of that message is refused (not acked
     * into nothing): the sender will report the loss itself. */
    struct ptl_lib_stats s0, s1;
    ptl_lib_get_stats(1, &s0);
    frag(silent, 1, 3, 8, 6);
    frag(silent, 2, 3, 8, 6);
    ptl_lib_get_stats(1, &s1);
    CHECK(s1.rx_stale == s0.rx_stale + 2);
    CHECK(s1.acks_sent == s0.acks_sent);
    EXPECT_NO_EVENT(B.eq);
    printf("search delete and sender restart/silence ok\n");
}

int main(void)
{
    ptl_test_host_init(2, 1500);
    OK(PtlInit());
    tp_node(&A, 0, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    tp_node(&B, 1, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    pt = tp_pt(&B, 0);
    tp_fill(pay, sizeof(pay), 77);
    claim_incomplete();
    auto_free_and_get();
    search_and_abort();
    PtlFini();
    printf("test_unexpected: PASS\n");
    return 0;
}
