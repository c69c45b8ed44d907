/* ptl_lib_forget_peer: a host's long-lived NI drops the state of a process
 * that is gone (a Tern kernel and each job's yod).  Peers whose hash homes
 * collide stay reachable after one of their probe run is removed; a peer
 * with something pending is kept; a restarted process (same nid/pid) is
 * answered at once after its predecessor was forgotten. */
#include "tp.h"
#include "ptl_internal.h"

static unsigned home(uint32_t nid, uint32_t pid)
{
    return ((nid * 2654435761u) ^ (pid * 40503u)) % PTL_PEER_SLOTS;
}

int main(void)
{
    static unsigned char sbuf[1 << 16], cbuf[1 << 16];
    ptl_test_host_init(2, 1500);
    struct ptl_test_wire w = {.seed = 3, .latency_ns = 5000};
    ptl_test_wire_config(&w);
    OK(PtlInit());
    struct node S, C;
    tp_node(&S, 0, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    tp_node(&C, 1, PTL_NI_MATCHING | PTL_NI_PHYSICAL);

    /* White box: four made-up processes, three with one home slot h and
     * one whose home is h+1, so the run is h: a, h+1: b, h+2: c, h+3: d. */
    struct ptl_ni *ni = ptl_ni_get(S.ni);
    CHECK(ni != NULL);
    const uint32_t pid = 4242;
    uint32_t a = 1000, same[3], n_same = 0, d = 0;
    unsigned h = home(a, pid);
    same[n_same++] = a;
    for (uint32_t nid = a + 1; nid < 5000000 && (n_same < 3 || !d); nid++) {
        if (n_same < 3 && home(nid, pid) == h)
            same[n_same++] = nid;
        else if (!d && home(nid, pid) == (h + 1) % PTL_PEER_SLOTS)
            d = nid;
    }
    CHECK(n_same == 3 && d);
    uint32_t before = ni->n_peers;
    struct ptl_peer *pa = ptl_peer_get(ni, same[0], pid, true);
    struct ptl_peer *pb = ptl_peer_get(ni, same[1], pid, true);
    struct ptl_peer *pc = ptl_peer_get(ni, same[2], pid, true);
    struct ptl_peer *pd = ptl_peer_get(ni, d, pid, true);
    CHECK(pa && pb && pc && pd && ni->n_peers == before + 4);
    CHECK(ni->peer_tab[h] == pa && ni->peer_tab[(h + 1) % PTL_PEER_SLOTS] == pb);
    CHECK(ptl_lib_forget_peer(0, same[1], pid) == 1);
    CHECK(ni->n_peers == before + 3);
    CHECK(ptl_peer_get(ni, same[0], pid, false) == pa);
    CHECK(ptl_peer_get(ni, same[1], pid, false) == NULL);
    CHECK(ptl_peer_get(ni, same[2], pid, false) == pc);
    CHECK(ptl_peer_get(ni, d, pid, false) == pd);
    CHECK(ptl_lib_forget_peer(0, same[0], pid) == 1);
    CHECK(ptl_peer_get(ni, same[2], pid, false) == pc);
    CHECK(ptl_peer_get(ni, d, pid, false) == pd);
    CHECK(ptl_lib_forget_peer(0, same[1], pid) == 0); /* already gone */
    CHECK(ptl_lib_forget_peer(0, d, pid) == 1);
    CHECK(ptl_lib_forget_peer(0, same[2], pid) == 1);
    CHECK(ni->n_peers == before);
    for (struct ptl_peer *p = ni->peer_list; p; p = p->next)
        CHECK(p->pid != pid);

    /* A real peer: kept while it has something pending, forgotten once
     * idle, and its restarted successor is answered at once. */
    ptl_pt_index_t pt = tp_pt(&S, 0);
    ptl_me_t me = tp_me(sbuf, sizeof(sbuf), PTL_ME_OP_PUT, 1, 0);
    ptl_handle_me_t hme;
    OK(PtlMEAppend(S.ni, pt, &me, PTL_PRIORITY_LIST, NULL, &hme));
    ptl_handle_md_t md = tp_md(&C, cbuf, sizeof(cbuf), 0, PTL_CT_NONE);
    for (int i = 0; i < 100; i++)
        tp_put_acked(&C, md, S.id, pt, (size_t)(i * 331) % sizeof(cbuf));
    /* A message of S's own to C still unacknowledged: busy. */
    ptl_handle_md_t smd = tp_md(&S, sbuf, sizeof(sbuf), 0, PTL_CT_NONE);
    ptl_process_t cid = C.id;
    OK(PtlPut(smd, 0, 60000, PTL_NO_ACK_REQ, cid, 63, 0, 0, NULL, 0));
    CHECK(ptl_lib_forget_peer(0, cid.phys.nid, cid.phys.pid) == 0);
    /* Let everything settle (C drops the put: no portal 63; the frames are
     * still acknowledged), then it goes. */
    int freed = 0;
    for (uint64_t until = ptl_test_now() + 2000000000ULL; !freed && ptl_test_now() < until;) {
        ptl_event_t ev;
        unsigned which;
        ptl_handle_eq_t eqs[2] = {S.eq, C.eq};
        PtlEQPoll(eqs, 2, 1, &ev, &which);
        freed = ptl_lib_forget_peer(0, cid.phys.nid, cid.phys.pid);
    }
    CHECK(freed == 1);
    CHECK(ptl_peer_get(ni, cid.phys.nid, cid.phys.pid, false) == NULL);
    OK(PtlNIFini(C.ni));
    tp_node(&C, 1, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    md = tp_md(&C, cbuf, sizeof(cbuf), 0, PTL_CT_NONE);
    uint64_t t0 = ptl_test_now();
    tp_put_acked(&C, md, S.id, pt, 1234);
    struct ptl_lib_tunables tun;
    ptl_lib_get_tunables(&tun);
    CHECK(ptl_test_now() - t0 < tun.giveup_ns / 10);
    for (int i = 0; i < 80; i++)
        tp_put_acked(&C, md, S.id, pt, 100 + (size_t)i);
    printf("test_forget: PASS\n");
    return 0;
}
