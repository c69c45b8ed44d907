/* What a Ptl call that finds nothing costs as the peers an NI knows grow:
 * a process that has heard from K others (a service node's yod after a
 * K-node launch, a rank after an all-to-all), all of them done with it.
 * Every such call runs the library's progress walk; it should cost the same
 * at K = 3000 as at K = 1.
 *
 *     peerwalk K CALLS        prints  R peerwalk K eqget_ns X
 *                                     R peerwalk K eqpoll_ns X
 *
 * The library runs on its in-process test host (portals/host/test): the K
 * peers are made by frames from K made-up nodes, each a put the NI takes
 * and acknowledges, and the run waits until every ack is out.  Built by
 * bench/peer_walk.py against build/portals/libportals-test.a or another
 * build of it. */
#include <time.h>

#include "tp_craft.h"   /* tests/portals: the unit tests' node and frame helpers */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: peerwalk K CALLS\n");
        return 2;
    }
    unsigned k = (unsigned)atoi(argv[1]);
    long calls = atol(argv[2]);
    static unsigned char buf[1 << 16];
    static uint8_t f[PTL_WIRE_HDR_LEN + 8], pay[8];
    ptl_test_host_init(2, 1500);
    struct ptl_test_wire w = {.seed = 1, .latency_ns = 5000};
    ptl_test_wire_config(&w);
    OK(PtlInit());
    struct node S;
    tp_node(&S, 1, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    ptl_pt_index_t pt = tp_pt(&S, 0);
    ptl_me_t e = tp_me(buf, sizeof buf, PTL_ME_OP_PUT | PTL_ME_MANAGE_LOCAL |
                       PTL_ME_EVENT_SUCCESS_DISABLE | PTL_ME_EVENT_LINK_DISABLE, 0, ~0ULL);
    e.min_free = 8;
    ptl_handle_me_t hme;
    OK(PtlMEAppend(S.ni, pt, &e, PTL_PRIORITY_LIST, NULL, &hme));
    for (unsigned n = 0; n < k; n++) {
        struct ptl_wire_hdr h = tp_put_hdr(&S, pt, 0x10000 + n, n + 1, 8, 0);
        ptl_lib_rx(1, f, tp_craft(f, &h, pay, 8));
    }
    ptl_handle_eq_t eq = S.eq;
    /* The acks owed go within the ack delay: wait it out on the test clock. */
    ptl_event_t ev;
    unsigned which;
    for (int i = 0; i < 3; i++)
        PtlEQPoll(&eq, 1, 10, &ev, &which);
    struct ptl_lib_stats st;
    ptl_lib_get_stats(1, &st);
    if (st.rx_frames < k) {
        fprintf(stderr, "peerwalk: %llu of %u frames taken\n",
                (unsigned long long)st.rx_frames, k);
        return 1;
    }
    double t0 = now_s();
    for (long i = 0; i < calls; i++)
        if (PtlEQGet(eq, &ev) != PTL_EQ_EMPTY)
            return 1;
    double t1 = now_s();
    for (long i = 0; i < calls; i++)
        if (PtlEQPoll(&eq, 1, 0, &ev, &which) != PTL_EQ_EMPTY)
            return 1;
    double t2 = now_s();
    printf("R peerwalk %u eqget_ns %.1f\n", k, (t1 - t0) / (double)calls * 1e9);
    printf("R peerwalk %u eqpoll_ns %.1f\n", k, (t2 - t1) / (double)calls * 1e9);
    return 0;
}
