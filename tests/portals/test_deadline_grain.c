/* The time a halting wait is woken for (ptl_lib_next_deadline): a frame's
 * retransmission is due on a 2^22 ns (about 4 ms) grain, no earlier than
 * its time-out and less than a grain after it, so that a stream of
 * messages keeps asking for the same wake-up; the lost frame is still
 * resent, and its data arrives.  (A delayed acknowledgement and a held
 * ACK keep their exact times; this library's frames here are acknowledged
 * at once, so none is owed for long enough to look at.) */
#include "tp.h"

#define GRAIN (1ull << 22)

static bool lose_all;

static bool drop(unsigned src, unsigned dst, const uint8_t *f, size_t len)
{
    (void)src, (void)dst, (void)f, (void)len;
    return lose_all;
}

int main(void)
{
    ptl_test_host_init(2, 1500);
    ptl_test_set_drop(drop);
    OK(PtlInit());
    struct ptl_lib_tunables tun;
    ptl_lib_get_tunables(&tun);
    struct node A, B;
    tp_node(&A, 0, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    tp_node(&B, 1, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    static unsigned char src[64], dst[64];
    for (unsigned i = 0; i < sizeof src; i++)
        src[i] = (unsigned char)(i * 7 + 1);
    ptl_pt_index_t pt = tp_pt(&B, 0);
    ptl_me_t me = tp_me(dst, sizeof dst, PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE, 1, 0);
    ptl_handle_me_t h;
    OK(PtlMEAppend(B.ni, pt, &me, PTL_PRIORITY_LIST, NULL, &h));
    ptl_handle_md_t md = tp_md(&A, src, sizeof src, PTL_MD_EVENT_SEND_DISABLE, PTL_CT_NONE);

    /* One message through first: the round trip is measured. */
    OK(PtlPut(md, 0, 8, PTL_ACK_REQ, B.id, pt, 1, 0, NULL, 0));
    EXPECT_EVENT(B.eq, PTL_EVENT_PUT);
    ptl_event_t ev = EXPECT_EVENT(A.eq, PTL_EVENT_ACK);
    CHECK(ev.ni_fail_type == PTL_NI_OK);

    /* A lost frame: its resend is due on the grain, within a grain of its
     * time-out. */
    lose_all = true;
    uint64_t sent = ptl_test_now();
    OK(PtlPut(md, 0, sizeof src, PTL_ACK_REQ, B.id, pt, 1, 0, NULL, 0));
    struct ptl_lib_stats before;
    ptl_lib_get_stats(0, &before);
    uint64_t d = ptl_lib_next_deadline();
    CHECK(d % GRAIN == 0);
    CHECK(d >= sent + tun.rto_min_ns);
    CHECK(d < ptl_test_now() + tun.rto_max_ns + GRAIN);
    /* Two more puts later on keep that wake-up: the first frame's is the
     * soonest, and theirs fall on it or a later grain. */
    CHECK_RC(PtlEQPoll(&A.eq, 1, 0, &ev, NULL), PTL_EQ_EMPTY);
    OK(PtlPut(md, 0, 8, PTL_NO_ACK_REQ, B.id, pt, 1, 0, NULL, 0));
    CHECK(ptl_lib_next_deadline() == d);

    /* The wire heals; a wait resends and the data arrives. */
    lose_all = false;
    ev = EXPECT_EVENT(A.eq, PTL_EVENT_ACK);
    CHECK(ev.ni_fail_type == PTL_NI_OK);
    CHECK(ev.mlength == sizeof src);
    struct ptl_lib_stats after;
    ptl_lib_get_stats(0, &after);
    CHECK(after.tx_retransmits > before.tx_retransmits);
    CHECK(!memcmp(dst, src, sizeof src));
    OK(PtlNIFini(A.ni));
    OK(PtlNIFini(B.ni));
    PtlFini();
    printf("test_deadline_grain: PASS\n");
    return 0;
}
