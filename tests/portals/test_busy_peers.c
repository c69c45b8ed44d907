/* The busy list (portals/lib/peer.c): the progress walk and the deadline
 * visit only peers with something pending, so a Ptl call costs the same
 * with thousands of idle peers as with one (bench/peer_walk.py).  What
 * must hold for that to be safe:
 * - a peer with anything a timer must see is on the list, at every frame
 *   any node sends, through puts, gets and their losses, copies and
 *   reordering among four nodes (a peer off the list would never have a
 *   lost frame resent, and its operations would hang);
 * - once the traffic is over and the acks owed are out, no peer is on it;
 * - a peer that went quiet and left the list is timed again when it gets
 *   work: a put to it whose every first transmission is lost completes. */
#include "tp.h"
#include "ptl_internal.h"

#define NODES 4

static struct node nodes[NODES];
static unsigned long checks;

static unsigned busy_count(struct ptl_ni *ni)
{
    unsigned n = 0;
    for (struct ptl_peer *p = ni->busy_head; p; p = p->busy_next)
        n++;
    return n;
}

/* Every peer with something pending is on its NI's busy list. */
static void check_invariant(void)
{
    for (unsigned i = 0; i < NODES; i++) {
        struct ptl_ni *ni = ptl_ni_get(nodes[i].ni);
        if (!ni)
            continue;
        for (struct ptl_peer *p = ni->peer_list; p; p = p->next) {
            if (!ptl_peer_quiet(p) && !p->on_busy_list) {
                fprintf(stderr, "node %u: peer %x has work (q %p, una %u nxt %u, acks %u, "
                        "hold %llu, rx %d, waiting %u) and is off the busy list\n", i,
                        p->nid, (void *)p->q_head, p->snd_una, p->snd_nxt, p->ack_pending,
                        (unsigned long long)p->hold_until, p->cur.active, p->resp_waiting);
                exit(1);
            }
        }
        checks++;
    }
}

static void tap(unsigned src, unsigned dst, const uint8_t *f, size_t len)
{
    (void)src, (void)dst, (void)f, (void)len;
    check_invariant();
}

/* Drop the first transmission of every frame from node 0 to node 1. */
static bool lose_firsts;
static bool drop(unsigned src, unsigned dst, const uint8_t *f, size_t len)
{
    if (!lose_firsts || src != 0 || dst != 1 || len < PTL_WIRE_HDR_LEN)
        return false;
    struct ptl_wire_hdr h;
    ptl_wire_decode(f, &h);
    return h.op != PTL_WOP_RACK && h.xmit == 1;
}

int main(void)
{
    static unsigned char src[NODES][8192], dst[NODES][NODES * 8192], gbuf[NODES][8192];
    ptl_test_host_init(NODES, 1500);
    struct ptl_test_wire w = {.seed = 11, .loss_pct = 10, .dup_pct = 5, .reorder_pct = 10,
                              .latency_ns = 5000};
    ptl_test_wire_config(&w);
    ptl_test_set_tap(tap);
    ptl_test_set_drop(drop);
    OK(PtlInit());
    ptl_pt_index_t pt[NODES];
    ptl_handle_md_t md[NODES];
    for (unsigned i = 0; i < NODES; i++) {
        tp_node(&nodes[i], i, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
        pt[i] = tp_pt(&nodes[i], 0);
        CHECK(pt[i] == pt[0]);
        ptl_me_t me = tp_me(dst[i], sizeof dst[i], PTL_ME_OP_PUT | PTL_ME_OP_GET | PTL_ME_EVENT_LINK_DISABLE, 0,
                            ~0ULL);
        ptl_handle_me_t h;
        OK(PtlMEAppend(nodes[i].ni, pt[i], &me, PTL_PRIORITY_LIST, NULL, &h));
        md[i] = tp_md(&nodes[i], src[i], sizeof src[i], 0, PTL_CT_NONE);
    }
    /* Rounds of puts (1 to 5 frames, acknowledged) and gets between every
     * pair, all in flight at once; then every event taken. */
    for (int round = 0; round < 20; round++) {
        int want[NODES] = {0};
        for (unsigned i = 0; i < NODES; i++)
            for (unsigned j = 0; j < NODES; j++) {
                if (i == j)
                    continue;
                size_t len = (size_t)(round * 397 + i * 131 + j * 17) % sizeof src[i];
                OK(PtlPut(md[i], 0, len, PTL_ACK_REQ, nodes[j].id, pt[j], 0, i * 8192, NULL,
                          0));
                ptl_md_t gm = {.start = gbuf[i], .length = sizeof gbuf[i],
                               .eq_handle = nodes[i].eq, .ct_handle = PTL_CT_NONE};
                ptl_handle_md_t gh;
                OK(PtlMDBind(nodes[i].ni, &gm, &gh));
                OK(PtlGet(gh, 0, 1000, nodes[j].id, pt[j], 0, 0, NULL));
                want[i] += 3;   /* SEND, ACK, REPLY */
                want[j] += 2;   /* PUT, GET */
            }
        for (unsigned i = 0; i < NODES; i++)
            for (int k = 0; k < want[i]; k++) {
                ptl_event_t ev;
                unsigned which;
                OK(PtlEQPoll(&nodes[i].eq, 1, 20000, &ev, &which));
                CHECK(ev.ni_fail_type == PTL_NI_OK);
                check_invariant();
            }
    }
    /* Quiet: the acks owed go within the ack delay; then every walk finds
     * nothing and leaves no peer listed. */
    ptl_event_t ev;
    for (unsigned i = 0; i < NODES; i++)
        EXPECT_NO_EVENT(nodes[i].eq);
    for (unsigned i = 0; i < NODES; i++) {
        CHECK_RC(PtlEQGet(nodes[i].eq, &ev), PTL_EQ_EMPTY);
        struct ptl_ni *ni = ptl_ni_get(nodes[i].ni);
        CHECK(ni->n_peers == NODES - 1);
        CHECK(busy_count(ni) == 0);
    }
    /* A quiet peer's next put: every first transmission from 0 to 1 lost,
     * so only node 0's retransmission timer delivers it. */
    lose_firsts = true;
    struct ptl_lib_stats before, after;
    ptl_lib_get_stats(0, &before);
    tp_put_acked(&nodes[0], md[0], nodes[1].id, pt[1], 4000);
    EXPECT_EVENT(nodes[1].eq, PTL_EVENT_PUT);
    ptl_lib_get_stats(0, &after);
    CHECK(after.tx_timeouts + after.tx_fast_retransmits >
          before.tx_timeouts + before.tx_fast_retransmits);
    printf("test_busy_peers: %lu checks\n", checks);
    printf("test_busy_peers: PASS\n");
    return 0;
}
