/* Frames that come before the NI they address (portals/lib/park.c).  A
 * job's ranks start apart: node C's first put reached node S before S's
 * program had made its NI, was dropped, and went again only when C's first
 * retransmission timer ran out (10 ms).  With the park, S keeps it and its
 * NI takes it at the program's first wait: no resend, no 10 ms.
 *
 *  - early:   C puts before S's NI exists.  Kept: the ACK comes back with
 *             no retransmission, well inside the first timeout.  Not kept
 *             (park_frames 0, as before): a timeout's resend delivers it.
 *             Handed over only once S's program has looked at its NI: a
 *             hand-over for another NI while S's ME is not appended yet
 *             leaves it where it is.
 *  - job:     the early frame is from another job's node: the hand-over
 *             drops it (no permission violation counted for it); its
 *             resend is refused as any other job's frame is.
 *  - bound:   ten early puts, eight kept (the oldest go): all ten arrive
 *             intact, the first two by resends.
 *  - reset:   frames kept for an interface whose job ended are forgotten
 *             (ptl_lib_iface_reset): the next job's NI never sees them. */
#include "tp.h"

static unsigned char rbuf[4096], sbuf[4096];

static void start(unsigned park_frames)
{
    ptl_test_host_init(3, 1500);
    OK(PtlInit());
    struct ptl_lib_tunables t;
    ptl_lib_get_tunables(&t);
    t.park_frames = park_frames;
    ptl_lib_set_tunables(&t);
}

static struct ptl_lib_stats stats(unsigned iface)
{
    struct ptl_lib_stats s;
    OK(ptl_lib_get_stats(iface, &s));
    return s;
}

/* S: a put ME over rbuf on a fresh portal index 0.  between: run before
 * the ME is appended (the NI and its portal exist, the entry not yet). */
static ptl_pt_index_t target(struct node *S, void (*between)(void))
{
    tp_node(S, 0, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    ptl_pt_index_t pt = tp_pt(S, 0);
    CHECK(pt == 0);
    if (between)
        between();
    ptl_me_t me = tp_me(rbuf, sizeof rbuf, PTL_ME_OP_PUT | PTL_ME_MANAGE_LOCAL | PTL_ME_EVENT_LINK_DISABLE, 0, ~0ull);
    ptl_handle_me_t h;
    OK(PtlMEAppend(S->ni, pt, &me, PTL_PRIORITY_LIST, NULL, &h));
    return pt;
}

static ptl_process_t s_id(void) { return tp_phys(0); }

static struct node C;

/* While S sets up, another program's NI gets ready (its first look at an
 * event queue) and the progress step hands over what is kept: nothing to
 * S's NI, whose program has not looked at it yet (its ME is not there). */
static void other_ready(void)
{
    struct node D;
    tp_node(&D, 2, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    ptl_event_t ev;
    CHECK_RC(PtlEQGet(D.eq, &ev), PTL_EQ_EMPTY);
    CHECK(stats(0).rx_unparked == 0);
}

/* Returns the simulated time from the put to its ACK. */
static uint64_t early_put(unsigned park_frames)
{
    start(park_frames);
    struct node S;
    tp_node(&C, 1, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    tp_fill(sbuf, 64, 7);
    ptl_handle_md_t md = tp_md(&C, sbuf, 64, 0, PTL_CT_NONE);
    uint64_t t0 = ptl_test_now();
    OK(PtlPut(md, 0, 64, PTL_ACK_REQ, s_id(), 0, 0, 0, NULL, 0));
    ptl_test_drain();                 /* it has reached S's node: no NI there */
    target(&S, other_ready);
    ptl_event_t put = EXPECT_EVENT(S.eq, PTL_EVENT_PUT);
    CHECK(put.mlength == 64 && memcmp(rbuf, sbuf, 64) == 0);
    ptl_event_t ack;
    unsigned which;
    do
        OK(PtlEQPoll(&C.eq, 1, 20000, &ack, &which));
    while (ack.type == PTL_EVENT_SEND);
    CHECK(ack.type == PTL_EVENT_ACK);
    uint64_t took = ptl_test_now() - t0;
    CHECK(ack.ni_fail_type == PTL_NI_OK && ack.mlength == 64);
    struct ptl_lib_stats c = stats(1), s = stats(0);
    if (park_frames) {
        CHECK(c.tx_retransmits == 0);
        CHECK(s.rx_parked == 1 && s.rx_unparked == 1);
    } else {
        CHECK(c.tx_timeouts >= 1);
        CHECK(s.rx_parked == 0 && s.rx_unparked == 0 && s.rx_not_for_us >= 1);
    }
    ptl_test_drain();
    PtlFini();
    return took;
}

static void other_job(void)
{
    start(8);
    ptl_test_set_jid(2, 43);          /* node D runs another job */
    struct node D, S;
    tp_node(&D, 2, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    ptl_handle_md_t md = tp_md(&D, sbuf, 64, 0, PTL_CT_NONE);
    OK(PtlPut(md, 0, 64, PTL_ACK_REQ, s_id(), 0, 0, 0, NULL, 0));
    ptl_test_drain();
    target(&S, NULL);
    ptl_event_t ev;
    CHECK_RC(PtlEQGet(S.eq, &ev), PTL_EQ_EMPTY);    /* the hand-over drops it */
    EXPECT_EVENT(D.eq, PTL_EVENT_SEND);
    ptl_event_t ack = EXPECT_EVENT(D.eq, PTL_EVENT_ACK);
    CHECK(ack.ni_fail_type == PTL_NI_PERM_VIOLATION);
    struct ptl_lib_stats s = stats(0);
    CHECK(s.rx_parked == 1 && s.rx_unparked == 0);
    ptl_sr_value_t v;
    OK(PtlNIStatus(S.ni, PTL_SR_PERMISSIONS_VIOLATIONS, &v));
    CHECK(v == 1);                    /* the resend's, not the parked frame's */
    CHECK_RC(PtlEQGet(S.eq, &ev), PTL_EQ_EMPTY);
    ptl_test_drain();
    PtlFini();
}

static void bound(void)
{
    start(8);
    struct node S;
    tp_node(&C, 1, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    tp_fill(sbuf, 10 * 64, 9);
    ptl_handle_md_t md = tp_md(&C, sbuf, 10 * 64, 0, PTL_CT_NONE);
    for (unsigned i = 0; i < 10; i++)
        OK(PtlPut(md, i * 64, 64, PTL_ACK_REQ, s_id(), 0, 0, 0, NULL, 0));
    ptl_test_drain();
    target(&S, NULL);
    ptl_event_t ev;
    unsigned puts = 0;
    /* The eight kept are handed over now; the first two come by resends. */
    int rc = PtlEQGet(S.eq, &ev);
    CHECK(rc == PTL_EQ_EMPTY || (rc == PTL_OK && ev.type == PTL_EVENT_PUT));
    puts += rc == PTL_OK;
    unsigned acks = 0;
    while (acks < 10) {
        ptl_event_t ev;
        unsigned which;
        OK(PtlEQPoll(&C.eq, 1, 20000, &ev, &which));
        CHECK(ev.ni_fail_type == PTL_NI_OK);
        acks += ev.type == PTL_EVENT_ACK;
    }
    for (; puts < 10; puts++)
        EXPECT_EVENT(S.eq, PTL_EVENT_PUT);
    CHECK(memcmp(rbuf, sbuf, 10 * 64) == 0);   /* locally managed: in order */
    struct ptl_lib_stats s = stats(0), c = stats(1);
    CHECK(s.rx_parked == 10 && s.rx_unparked == 8);
    CHECK(c.tx_timeouts >= 1);        /* the two the park had no room for */
    ptl_test_drain();
    PtlFini();
}

static void reset(void)
{
    start(8);
    struct node S;
    tp_node(&C, 1, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    ptl_handle_md_t md = tp_md(&C, sbuf, 64, 0, PTL_CT_NONE);
    OK(PtlPut(md, 0, 64, PTL_NO_ACK_REQ, s_id(), 0, 0, 0, NULL, 0));
    ptl_test_drain();
    CHECK(stats(0).rx_parked == 1);
    ptl_lib_iface_reset(0);           /* S's node: the job ended */
    target(&S, NULL);
    ptl_event_t ev;
    CHECK_RC(PtlEQGet(S.eq, &ev), PTL_EQ_EMPTY);    /* the first progress step */
    CHECK(stats(0).rx_unparked == 0);
    ptl_test_drain();
    PtlFini();
}

int main(void)
{
    uint64_t kept = early_put(8), dropped = early_put(0);
    printf("put before the NI: ACK after %llu us kept, %llu us dropped\n",
           (unsigned long long)kept / 1000, (unsigned long long)dropped / 1000);
    CHECK(kept < 1000000 && dropped >= 10000000);
    other_job();
    bound();
    reset();
    printf("test_park: PASS\n");
    return 0;
}
