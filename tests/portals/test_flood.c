/* A flood of frames from 10,000 made-up sources (puts that ask for an ACK,
 * first frames of messages that never go on) costs the flood, not the NI:
 * the peer table stays bounded, and after every thousand flood frames a
 * process the NI has never heard of gets its put through at once, as does
 * the peer it knew before the flood. */
#include "tp_craft.h"
#include "ptl_internal.h"

#define FLOOD 10000

int main(void)
{
    static unsigned char sbuf[1 << 16], cbuf[4096];
    static uint8_t f[4096], pay[64];
    ptl_test_host_init(3, 1500);
    struct ptl_test_wire w = {.seed = 7, .latency_ns = 5000};
    ptl_test_wire_config(&w);
    OK(PtlInit());
    struct node S, C;
    tp_node(&S, 1, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    tp_node(&C, 0, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    ptl_pt_index_t pt = tp_pt(&S, 0);
    ptl_me_t me = tp_me(sbuf, sizeof(sbuf), PTL_ME_OP_PUT, 1, ~0ULL);
    ptl_handle_me_t hme;
    OK(PtlMEAppend(S.ni, pt, &me, PTL_PRIORITY_LIST, NULL, &hme));
    ptl_handle_md_t cmd = tp_md(&C, cbuf, sizeof(cbuf), 0, PTL_CT_NONE);
    tp_put_acked(&C, cmd, S.id, pt, 100);           /* C is known before */

    struct ptl_ni *ni = ptl_ni_get(S.ni);
    struct ptl_lib_tunables tun;
    ptl_lib_get_tunables(&tun);
    for (uint32_t n = 0; n < FLOOD; n++) {
        struct ptl_wire_hdr h = tp_put_hdr(&S, pt, 0x10000 + n, n + 1, 8, 0);
        h.match_bits = 1;
        if (n % 4 == 1)
            h.ack_req = PTL_ACK_REQ;      /* an ACK to nowhere, never acked */
        if (n % 4 == 2) {
            h.msg_len = 1 << 20;          /* a message that never goes on */
            h.flags = PTL_WF_SEQ | PTL_WF_FIRST;
        }
        ptl_lib_rx(1, f, tp_craft(f, &h, pay, 8));
        CHECK(ni->n_peers <= PTL_MAX_PEERS);
        if (n % 1000 != 999)
            continue;
        /* A process S has never heard of (a new pid on node 2). */
        struct node N;
        memset(&N, 0, sizeof(N));
        OK(PtlNIInit(2, PTL_NI_MATCHING | PTL_NI_PHYSICAL, 200 + n / 1000, NULL, &N.lim,
                     &N.ni));
        OK(PtlEQAlloc(N.ni, 64, &N.eq));
        OK(PtlGetPhysId(N.ni, &N.id));
        CHECK(N.id.phys.pid == 200 + n / 1000);
        ptl_handle_md_t md = tp_md(&N, cbuf, sizeof(cbuf), 0, PTL_CT_NONE);
        uint64_t t0 = ptl_test_now();
        tp_put_acked(&N, md, S.id, pt, 64);
        CHECK(ptl_test_now() - t0 < tun.giveup_ns / 10);
        OK(PtlMDRelease(md));
        OK(PtlNIFini(N.ni));
    }
    struct ptl_lib_stats st;
    ptl_lib_get_stats(1, &st);
    CHECK(st.peers_reclaimed >= FLOOD - PTL_MAX_PEERS);
    uint64_t t0 = ptl_test_now();
    tp_put_acked(&C, cmd, S.id, pt, 200);           /* and C still is */
    CHECK(ptl_test_now() - t0 < tun.giveup_ns / 10);
    CHECK(ptl_peer_get(ni, C.id.phys.nid, C.id.phys.pid, false) != NULL);
    printf("test_flood: %u peers kept, %llu reclaimed\n", ni->n_peers,
           (unsigned long long)st.peers_reclaimed);
    printf("test_flood: PASS\n");
    return 0;
}
