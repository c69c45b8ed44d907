/* A put of many frames that the target refuses at its first frame (no
 * entry matches): the target's ACK, with the failure, comes back while the
 * initiator's later frames are still on their way or still to be sent.
 * The operation ends only once they are all acknowledged: its SEND event
 * (the buffer is free) and then its ACK event with the failure.  Before,
 * the ACK completed the operation at once and its slot was reused by the
 * next put while the refused put's message was still in the peer's send
 * queue: the next put queued the same message a second time, the queue
 * became a loop, and the node's kernel spun in it for ever (seen on a Tern
 * node in an NX stream whose receiver refused a message for want of room). */
#include "tp.h"

#define LEN (64 * 1024)      /* 45 frames of 1500 bytes */
#define PUTS 40

int main(void)
{
    ptl_test_host_init(2, 1500);
    struct ptl_test_wire w = {.seed = 11, .latency_ns = 20000};
    ptl_test_wire_config(&w);
    OK(PtlInit());
    struct node A, B;
    tp_node(&A, 0, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    tp_node(&B, 1, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    ptl_pt_index_t pt = tp_pt(&B, 0);          /* no entry: every put refused */
    static char src[LEN];
    tp_fill(src, sizeof(src), 3);
    ptl_handle_md_t md = tp_md(&A, src, sizeof(src), 0, PTL_CT_NONE);
    /* The target takes in a frame every 5 us: the refusal goes back after
     * the first, while the other 44 still wait to be taken in. */
    ptl_test_set_rx_cost(B.iface, 5000, 256);
    for (int i = 0; i < PUTS; i++) {
        /* Right after the last put's events: the slot it freed is taken. */
        OK(PtlPut(md, 0, LEN, PTL_ACK_REQ, B.id, pt, 0, 0, NULL, 0));
        ptl_event_t ev = EXPECT_EVENT(A.eq, PTL_EVENT_SEND);
        CHECK(ev.ni_fail_type == PTL_NI_OK);
        ev = EXPECT_EVENT(A.eq, PTL_EVENT_ACK);
        CHECK(ev.ni_fail_type == PTL_NI_DROPPED && ev.mlength == 0);
    }
    /* Every frame of every put was acknowledged: nothing is left to send. */
    struct ptl_lib_stats s;
    OK(ptl_lib_get_stats(A.iface, &s));
    printf("%d refused puts of %d bytes: %llu frames sent, %llu again\n", PUTS, LEN,
           (unsigned long long)s.tx_frames, (unsigned long long)s.tx_retransmits);
    OK(PtlMDRelease(md));
    PtlFini();
    printf("test_refused_put: PASS\n");
    return 0;
}
