/* The first messages of a stream over a wire that reorders (nothing lost):
 * a window of acknowledged puts, so that the target's RACKs and its first
 * ACK messages are on the wire together and a RACK can overtake the first
 * data frame of the target's own stream.  That frame opens a session the
 * initiator has not seen yet and carries an older ack than the RACK did;
 * it was taken for a restarted peer, and the puts in flight failed with
 * PTL_NI_UNDELIVERABLE (Linux, netem reordering: test_stream_lossy). */
#include "tp.h"

#define WINDOW 16

int main(void)
{
    static unsigned char sbuf[1 << 16], cbuf[1 << 16];
    unsigned failed_runs = 0;
    for (uint64_t seed = 1; seed <= 300; seed++) {
        ptl_test_host_init(2, 1500);
        struct ptl_test_wire w = { .seed = seed, .reorder_pct = 40, .latency_ns = 5000 };
        ptl_test_wire_config(&w);
        OK(PtlInit());
        struct node S, C;
        tp_node(&S, 0, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
        tp_node(&C, 1, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
        ptl_pt_index_t pt = tp_pt(&S, 0);
        ptl_me_t me = tp_me(sbuf, sizeof(sbuf), PTL_ME_OP_PUT, 1, 0);
        ptl_handle_me_t h;
        OK(PtlMEAppend(S.ni, pt, &me, PTL_PRIORITY_LIST, NULL, &h));
        tp_fill(cbuf, sizeof(cbuf), (unsigned)seed);
        ptl_handle_md_t md = tp_md(&C, cbuf, sizeof(cbuf), 0, PTL_CT_NONE);
        for (unsigned i = 0; i < WINDOW; i++)
            OK(PtlPut(md, 0, 1 + i * 300, PTL_ACK_REQ, S.id, pt, 1, 0, NULL, 0));
        unsigned acks = 0, bad = 0;
        while (acks < WINDOW) {
            ptl_event_t ev;
            unsigned which;
            OK(PtlEQPoll(&C.eq, 1, 20000, &ev, &which));
            if (ev.type != PTL_EVENT_ACK && ev.type != PTL_EVENT_SEND) {
                fprintf(stderr, "seed %llu: unexpected event %s\n",
                        (unsigned long long)seed, tp_kind(ev.type));
                return 1;
            }
            bad += ev.ni_fail_type != PTL_NI_OK;
            acks += ev.type == PTL_EVENT_ACK;
        }
        struct ptl_lib_stats st;
        ptl_lib_get_stats(1, &st);
        if (bad || st.peer_restarts) {
            printf("seed %llu: %u puts failed, peer_restarts=%llu\n",
                   (unsigned long long)seed, bad, (unsigned long long)st.peer_restarts);
            failed_runs++;
        }
        ptl_test_drain();
        PtlFini();
    }
    CHECK(failed_runs == 0);
    printf("test_reorder_start: PASS\n");
    return 0;
}
