/* A copy of a frame already delivered (ptl_rel_rx_dup) says that its
 * sender is there: it must count as hearing from it everywhere, also in
 * the order in which peers are reclaimed.  With the table full of proven
 * peers, a new process gets the place of one silent for longer than
 * giveup_ns; the walk that looks for one goes from the least recently
 * heard and stops at the first heard within giveup_ns.  A peer heard only
 * through a copy, left at the front, stopped it there: the new process was
 * refused although every peer behind it had long been silent. */
#include "tp.h"
#include "ptl_internal.h"

int main(void)
{
    ptl_test_host_init(1, 1500);
    struct ptl_test_wire w = {.seed = 5, .latency_ns = 5000};
    ptl_test_wire_config(&w);
    OK(PtlInit());
    struct node S;
    tp_node(&S, 0, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    struct ptl_ni *ni = ptl_ni_get(S.ni);
    CHECK(ni != NULL);
    struct ptl_lib_tunables tun;
    ptl_lib_get_tunables(&tun);

    /* White box: the table full of made-up processes, each proven (as if
     * it had acknowledged a frame of ours), the first one the oldest. */
    const uint32_t pid = 4242;
    struct ptl_peer *first = NULL;
    for (uint32_t nid = 1000; ni->n_peers < PTL_MAX_PEERS; nid++) {
        struct ptl_peer *p = ptl_peer_get(ni, nid, pid, true);
        CHECK(p != NULL);
        ptl_peer_prove(ni, p);
        if (!first)
            first = p;
    }
    /* Every one falls silent for longer than giveup_ns (simulated time). */
    ptl_event_t ev;
    unsigned which;
    CHECK_RC(PtlEQPoll(&S.eq, 1, (ptl_time_t)(tun.giveup_ns / 1000000 + 1000), &ev, &which),
             PTL_EQ_EMPTY);
    /* Then the oldest sends a copy of a frame S already has. */
    first->rx_valid = true;
    first->rx_session = 7;
    first->rcv_nxt = 5;
    struct ptl_wire_hdr h;
    memset(&h, 0, sizeof(h));
    h.op = PTL_WOP_PUT;
    h.flags = PTL_WF_SEQ;
    h.src_nid = first->nid;
    h.src_pid = pid;
    h.session = 7;
    h.seq = 4;
    ptl_host_lock();                /* as rx.c calls it */
    bool dup = ptl_rel_rx_dup(ni, &h);
    ptl_host_unlock();
    CHECK(dup);

    /* A new process speaks: one of the silent peers makes room for it, and
     * the one just heard stays. */
    CHECK(ptl_peer_get(ni, 999999, pid, true) != NULL);
    CHECK(ptl_peer_get(ni, first->nid, pid, false) == first);
    CHECK(ni->n_peers == PTL_MAX_PEERS);
    printf("test_peer_lru: PASS\n");
    return 0;
}
