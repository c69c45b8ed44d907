/* The dissemination barrier libmsg builds from triggered operations
 * (libmsg/msg_barrier.c), on the library alone over a lossy, reordering
 * wire: per node and round a persistent zero-byte ME counting on its CT;
 * barrier e posts, for round k >= 1, a triggered put to node + 2^k and a
 * triggered CTInc of CT k, both when CT k-1 reaches 2e, then puts round 0
 * and increments CT 0 itself; it is done when the last CT reaches 2e.
 *
 * Nodes enter their barriers in a random order, a node entering its next
 * one as soon as its current one is done, so later barriers' rounds arrive
 * while others still wait in earlier ones.  After every step: no node has
 * finished a barrier some node has not entered (the last CT of every node
 * is below 2 (m + 1), m the fewest barriers any node entered).  At the end
 * every CT holds exactly 2 per barrier.  For 2, 3 and 5 nodes. */
#include "tp.h"

#define NODES 5
#define BARRIERS 300
#define MAXR 3

static struct node nd[NODES];
static ptl_pt_index_t pt[NODES];
static ptl_handle_md_t md[NODES];
static ptl_handle_eq_t idle_eq;
static uint64_t rng = 12345;

static unsigned rnd(unsigned n)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)(rng >> 33) % n;
}

/* Let up to ms of simulated time pass. */
static void drive(unsigned ms)
{
    ptl_event_t ev;
    unsigned w;
    CHECK_RC(PtlEQPoll(&idle_eq, 1, ms, &ev, &w), PTL_EQ_EMPTY);
}

static ptl_size_t ct_value(ptl_handle_ct_t ct)
{
    ptl_ct_event_t v;
    OK(PtlCTGet(ct, &v));
    CHECK(v.failure == 0);
    return v.success;
}

static void run(int n)
{
    int rounds = 0;
    while ((1 << rounds) < n)
        rounds++;
    ptl_handle_ct_t ct[NODES][MAXR];
    ptl_handle_me_t me[NODES][MAXR];
    for (int i = 0; i < n; i++)
        for (int k = 0; k < rounds; k++) {
            OK(PtlCTAlloc(nd[i].ni, &ct[i][k]));
            ptl_me_t e = tp_me(NULL, 0, PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE |
                               PTL_ME_EVENT_COMM_DISABLE | PTL_ME_EVENT_UNLINK_DISABLE |
                               PTL_ME_EVENT_CT_COMM, ((ptl_match_bits_t)n << 8) | (unsigned)k, 0);
            e.match_id = nd[(i - (1 << k) % n + n) % n].id;
            e.ct_handle = ct[i][k];
            OK(PtlMEAppend(nd[i].ni, pt[i], &e, PTL_PRIORITY_LIST, NULL, &me[i][k]));
        }
    int entered[NODES] = {0};
    ptl_ct_event_t one = {1, 0};
    for (;;) {
        int ready[NODES], nr = 0, least = BARRIERS;
        for (int i = 0; i < n; i++) {
            if (entered[i] < least)
                least = entered[i];
            if (entered[i] < BARRIERS &&
                ct_value(ct[i][rounds - 1]) >= 2 * (ptl_size_t)entered[i])
                ready[nr++] = i;
        }
        for (int j = 0; j < n; j++)
            CHECK(ct_value(ct[j][rounds - 1]) < 2 * (ptl_size_t)(least + 1));
        if (least == BARRIERS)
            break;
        if (!nr || rnd(3) == 0) {
            drive(rnd(3));
            continue;
        }
        int i = ready[rnd((unsigned)nr)];
        ptl_size_t th = 2 * (ptl_size_t)++entered[i];
        for (int k = 1; k < rounds; k++) {
            ptl_process_t to = nd[(i + (1 << k)) % n].id;
            OK(PtlTriggeredPut(md[i], 0, 0, PTL_NO_ACK_REQ, to, pt[i],
                               ((ptl_match_bits_t)n << 8) | (unsigned)k, 0, NULL, 0,
                               ct[i][k - 1], th));
            OK(PtlTriggeredCTInc(ct[i][k], one, ct[i][k - 1], th));
        }
        OK(PtlPut(md[i], 0, 0, PTL_NO_ACK_REQ, nd[(i + 1) % n].id, pt[i],
                  (ptl_match_bits_t)n << 8, 0, NULL, 0));
        OK(PtlCTInc(ct[i][0], one));
    }
    /* Every node's last barrier done: each counter holds one arrival and
     * one own step per barrier, no more (nothing is still travelling). */
    for (int i = 0; i < n; i++)
        for (int k = 0; k < rounds; k++) {
            OK(PtlCTWait(ct[i][k], 2 * BARRIERS, NULL));
            drive(100);
            CHECK(ct_value(ct[i][k]) == 2 * BARRIERS);
            OK(PtlMEUnlink(me[i][k]));
            OK(PtlCTFree(ct[i][k]));
        }
    printf("%d nodes: %d triggered barriers ok\n", n, BARRIERS);
}

int main(void)
{
    ptl_test_host_init(NODES, 1500);
    struct ptl_test_wire w = {.seed = 7, .loss_pct = 10, .dup_pct = 5, .reorder_pct = 20,
                              .latency_ns = 20000};
    ptl_test_wire_config(&w);
    OK(PtlInit());
    for (int i = 0; i < NODES; i++) {
        tp_node(&nd[i], (unsigned)i, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
        pt[i] = tp_pt(&nd[i], 0);
        CHECK(i == 0 || pt[i] == pt[0]);
        ptl_md_t m = {.start = NULL, .length = 0, .options = 0, .eq_handle = PTL_EQ_NONE,
                      .ct_handle = PTL_CT_NONE};
        OK(PtlMDBind(nd[i].ni, &m, &md[i]));
    }
    OK(PtlEQAlloc(nd[0].ni, 4, &idle_eq));
    run(2);
    run(3);
    run(5);
    PtlFini();
    printf("test_trig_barrier: PASS\n");
    return 0;
}
