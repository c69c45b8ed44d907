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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "portals4.h"
#include "ptl_lib.h"
#include "ptl_test_host.h"
#include "ptl_wire.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void must(int rc, const char *what)
{
    if (rc != PTL_OK) {
        fprintf(stderr, "peerwalk: %s: %d\n", what, rc);
        exit(1);
    }
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
    static uint8_t f[PTL_WIRE_HDR_LEN + 8];
    ptl_test_host_init(2, 1500);
    struct ptl_test_wire w = {.seed = 1, .latency_ns = 5000};
    ptl_test_wire_config(&w);
    must(PtlInit(), "PtlInit");
    ptl_handle_ni_t ni;
    ptl_ni_limits_t lim;
    must(PtlNIInit(1, PTL_NI_MATCHING | PTL_NI_PHYSICAL, 9, NULL, &lim, &ni), "PtlNIInit");
    ptl_process_t me;
    must(PtlGetPhysId(ni, &me), "PtlGetPhysId");
    ptl_handle_eq_t eq;
    must(PtlEQAlloc(ni, 64, &eq), "PtlEQAlloc");
    ptl_pt_index_t pt;
    must(PtlPTAlloc(ni, 0, eq, 0, &pt), "PtlPTAlloc");
    ptl_me_t e;
    memset(&e, 0, sizeof e);
    e.start = buf;
    e.length = sizeof buf;
    e.ct_handle = PTL_CT_NONE;
    e.uid = PTL_UID_ANY;
    e.match_id.phys.nid = PTL_NID_ANY;
    e.match_id.phys.pid = PTL_PID_ANY;
    e.options = PTL_ME_OP_PUT | PTL_ME_MANAGE_LOCAL | PTL_ME_EVENT_SUCCESS_DISABLE |
                PTL_ME_EVENT_LINK_DISABLE;
    e.min_free = 8;
    ptl_handle_me_t hme;
    must(PtlMEAppend(ni, pt, &e, PTL_PRIORITY_LIST, NULL, &hme), "PtlMEAppend");
    for (unsigned n = 0; n < k; n++) {
        struct ptl_wire_hdr h;
        memset(&h, 0, sizeof h);
        h.version = PTL_WIRE_VERSION;
        h.op = PTL_WOP_PUT;
        h.flags = PTL_WF_SEQ | PTL_WF_FIRST | PTL_WF_LAST;
        h.uid = PTL_TEST_UID;
        h.jid = PTL_TEST_JID;
        h.src_nid = 0x10000 + n;
        h.src_pid = 5;
        h.dst_nid = me.phys.nid;
        h.dst_pid = me.phys.pid;
        h.pt_index = pt;
        h.session = n + 1;
        h.msg_len = h.frag_len = 8;
        h.ni_type = PTL_WNI_MATCHING;
        h.msg_id = 1;
        ptl_wire_encode(&h, f);
        memset(f + PTL_WIRE_HDR_LEN, 0, 8);
        uint32_t c = ptl_crc32c(PTL_CRC32C_INIT, f, sizeof f);
        ptl_wput(f + 4, PTL_CRC32C_FINAL(c), 4);
        ptl_lib_rx(1, f, sizeof f);
    }
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
