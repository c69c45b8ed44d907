/* Job isolation in the library (docs/security.md): a request reaches only
 * an NI of its own job id, and a logical NI only from a process in its map,
 * whose rank it looks up itself whatever the frame claims.  Refused
 * requests post no event and count in PTL_SR_PERMISSIONS_VIOLATIONS. */
#include "tp_craft.h"

#define FAKE_NID 0x1ff     /* peers that do not exist on the test wire */
#define STRANGER_NID 0x2ff

static struct node P, L;    /* a physical and a logical NI on iface 1 */
static uint32_t session = 0x2000;

static void inject(const struct node *dst, ptl_pt_index_t pt, uint32_t src_nid, uint32_t jid,
                   uint32_t claimed_rank, uint8_t ni_type)
{
    static uint8_t f[512];
    static const char pay[] = "hello";
    struct ptl_wire_hdr h = tp_put_hdr(dst, pt, src_nid, session++, sizeof pay, 0);
    h.jid = jid;
    h.src_rank = claimed_rank;
    h.ni_type = ni_type;
    ptl_lib_rx(1, f, tp_craft(f, &h, pay, sizeof pay));
}

static void expect_nothing(const struct node *n)
{
    ptl_event_t ev;
    CHECK_RC(PtlEQGet(n->eq, &ev), PTL_EQ_EMPTY);
}

static ptl_sr_value_t refused(const struct node *n)
{
    ptl_sr_value_t v = 0;
    OK(PtlNIStatus(n->ni, PTL_SR_PERMISSIONS_VIOLATIONS, &v));
    return v;
}

int main(void)
{
    ptl_test_host_init(2, 1500);
    OK(PtlInit());
    tp_node(&P, 1, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    tp_node(&L, 1, PTL_NI_MATCHING | PTL_NI_LOGICAL);
    static char pbuf[4096], lbuf[4096];
    ptl_pt_index_t ppt = tp_pt(&P, 0), lpt = tp_pt(&L, 0);
    ptl_me_t me = tp_me(pbuf, sizeof pbuf, PTL_ME_OP_PUT | PTL_ME_MANAGE_LOCAL |
                        PTL_ME_EVENT_LINK_DISABLE, 0, ~0ULL);
    ptl_handle_me_t h;
    OK(PtlMEAppend(P.ni, ppt, &me, PTL_PRIORITY_LIST, NULL, &h));

    /* Another job's put: refused, counted, no event; its own job's: taken. */
    inject(&P, ppt, FAKE_NID, PTL_TEST_JID + 1, PTL_RANK_ANY, PTL_WNI_MATCHING);
    expect_nothing(&P);
    CHECK(refused(&P) == 1);
    inject(&P, ppt, FAKE_NID, PTL_TEST_JID, PTL_RANK_ANY, PTL_WNI_MATCHING);
    ptl_event_t ev = EXPECT_EVENT(P.eq, PTL_EVENT_PUT);
    CHECK(ev.initiator.phys.nid == FAKE_NID && ev.mlength == 6);
    CHECK(refused(&P) == 1);

    /* The logical NI's map: rank 0 is FAKE_NID (pid 5, as tp_put_hdr
     * sends from), rank 1 itself. */
    ptl_process_t map[2];
    map[0].phys.nid = FAKE_NID;
    map[0].phys.pid = 5;
    map[1] = L.id;
    OK(PtlSetMap(L.ni, 2, map));
    me = tp_me(lbuf, sizeof lbuf, PTL_ME_OP_PUT | PTL_ME_MANAGE_LOCAL |
               PTL_ME_EVENT_LINK_DISABLE, 0, ~0ULL);
    me.match_id.rank = PTL_RANK_ANY;
    OK(PtlMEAppend(L.ni, lpt, &me, PTL_PRIORITY_LIST, NULL, &h));
    const uint8_t logical = PTL_WNI_MATCHING | PTL_WNI_LOGICAL;
    /* Rank 0 claiming to be rank 1: its rank is what the map says. */
    inject(&L, lpt, FAKE_NID, PTL_TEST_JID, 1, logical);
    ev = EXPECT_EVENT(L.eq, PTL_EVENT_PUT);
    CHECK(ev.initiator.rank == 0);
    /* A process of the job that is not in the map, claiming rank 0. */
    inject(&L, lpt, STRANGER_NID, PTL_TEST_JID, 0, logical);
    expect_nothing(&L);
    CHECK(refused(&L) == 1);
    /* Another job's process that happens to be at a mapped address. */
    inject(&L, lpt, FAKE_NID, PTL_TEST_JID + 1, 0, logical);
    expect_nothing(&L);
    CHECK(refused(&L) == 2);
    printf("other jobs and strangers refused and counted; ranks from the map\n");
    printf("test_isolation: PASS\n");
    return 0;
}
