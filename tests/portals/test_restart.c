/* A peer process restarts with the same nid and pid (NI torn down and
 * created again: all its stream state is gone).  The other side still
 * holds the old session; the new process's first put must be answered
 * (ACK OK) within a few round trips, not fail after giveup_ns. */
#include "tp.h"

int main(void)
{
    static unsigned char sbuf[1 << 20], cbuf[1 << 16];
    ptl_test_host_init(2, 1500);
    struct ptl_test_wire w = { .seed = 7, .latency_ns = 5000 };
    ptl_test_wire_config(&w);
    OK(PtlInit());
    struct node S, C;
    tp_node(&S, 0, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    tp_node(&C, 1, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    ptl_pt_index_t pt = tp_pt(&S, 0);
    ptl_me_t me = tp_me(sbuf, sizeof(sbuf), PTL_ME_OP_PUT | PTL_ME_OP_GET,
                        1, 0);
    ptl_handle_me_t h;
    OK(PtlMEAppend(S.ni, pt, &me, PTL_PRIORITY_LIST, NULL, &h));
    tp_fill(cbuf, sizeof(cbuf), 3);
    /* Enough traffic that the server's stream to the client is far past
     * the sequence numbers a fresh receiver would accept (64). */
    ptl_handle_md_t md = tp_md(&C, cbuf, sizeof(cbuf), 0, PTL_CT_NONE);
    for (int i = 0; i < 100; i++)
        tp_put_acked(&C, md, S.id, pt, (size_t)(i * 997) % sizeof(cbuf));

    for (int round = 0; round < 3; round++) {
        /* Restart: same nid (interface) and pid. */
        OK(PtlNIFini(C.ni));
        tp_node(&C, 1, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
        md = tp_md(&C, cbuf, sizeof(cbuf), 0, PTL_CT_NONE);
        uint64_t t0 = ptl_test_now();
        tp_put_acked(&C, md, S.id, pt, 4096 + (size_t)round);
        uint64_t took = ptl_test_now() - t0;
        printf("restart %d: first put acked after %.3f ms\n", round,
               took / 1e6);
        struct ptl_lib_tunables tun;
        ptl_lib_get_tunables(&tun);
        CHECK(took < tun.giveup_ns / 10);
        /* And the stream keeps working both ways (gets need replies on
         * the server's new stream). */
        for (int i = 0; i < 80; i++)
            tp_put_acked(&C, md, S.id, pt, 100 + (size_t)i);
        ptl_handle_md_t gmd = tp_md(&C, cbuf, sizeof(cbuf), 0, PTL_CT_NONE);
        OK(PtlGet(gmd, 0, 5000, S.id, pt, 1, 0, NULL));
        ptl_event_t ev = EXPECT_EVENT(C.eq, PTL_EVENT_REPLY);
        CHECK(ev.ni_fail_type == PTL_NI_OK && ev.mlength == 5000);
        CHECK(!memcmp(cbuf, sbuf, 5000));
    }
    struct ptl_lib_stats st;
    ptl_lib_get_stats(0, &st);
    printf("server: peer_restarts=%llu peer_failures=%llu\n",
           (unsigned long long)st.peer_restarts,
           (unsigned long long)st.peer_failures);
    CHECK(st.peer_restarts == 3);
    ptl_test_drain();
    PtlFini();
    printf("test_restart: PASS\n");
    return 0;
}
