/* The reliable wire protocol over a lossy in-memory wire: loss,
 * duplication, reordering and corruption; fragmentation of messages from
 * 0 B to 16 MiB; unreachable peers. */
#include "tp.h"

#define MiB (1024u * 1024u)

static uint64_t fnv(const void *p, size_t n)
{
    const unsigned char *c = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ c[i]) * 1099511628211ull;
    return h;
}

static int heavy; /* 30 % loss + 10 % corruption instead of 10 % + 3 % */

static void lossy(uint64_t seed)
{
    struct ptl_test_wire w = { .seed = seed, .loss_pct = 10, .dup_pct = 5,
                               .reorder_pct = 10, .corrupt_pct = 3,
                               .latency_ns = 5000 };
    if (heavy) {
        w.loss_pct = 30;
        w.dup_pct = 10;
        w.corrupt_pct = 10;
    }
    ptl_test_wire_config(&w);
}

/* A stream of puts A->B (locally managed ME, so placement follows
 * message order) and gets B<-A, all in flight together. */
static void stream(unsigned frame_max, const size_t *sizes, int n,
                   uint64_t seed)
{
    ptl_test_host_init(2, frame_max);
    lossy(seed);
    OK(PtlInit());
    struct node A, B;
    tp_node(&A, 0, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    tp_node(&B, 1, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    size_t total = 0, maxsz = 0;
    for (int i = 0; i < n; i++) {
        total += sizes[i];
        if (sizes[i] > maxsz)
            maxsz = sizes[i];
    }
    size_t srclen = maxsz + 4096;
    unsigned char *src = malloc(srclen);
    unsigned char *dst = malloc(total + 64);
    unsigned char *gsrc = malloc(maxsz + 64), *gdst = malloc(maxsz + 64);
    CHECK(src && dst && gsrc && gdst);
    for (size_t i = 0; i < srclen; i++)
        src[i] = (unsigned char)(ptl_test_rand() >> 24);
    for (size_t i = 0; i < maxsz + 64; i++)
        gsrc[i] = (unsigned char)(ptl_test_rand() >> 24);
    memset(dst, 0xA5, total + 64);
    memset(gdst, 0x5A, maxsz + 64);

    ptl_pt_index_t pt = tp_pt(&B, 0);
    ptl_me_t me = tp_me(dst, total, PTL_ME_OP_PUT | PTL_ME_MANAGE_LOCAL |
                        PTL_ME_EVENT_LINK_DISABLE, 1, 0);
    ptl_handle_me_t h;
    OK(PtlMEAppend(B.ni, pt, &me, PTL_PRIORITY_LIST, NULL, &h));
    ptl_me_t gme = tp_me(gsrc, maxsz + 64, PTL_ME_OP_GET |
                         PTL_ME_EVENT_LINK_DISABLE, 2, 0);
    OK(PtlMEAppend(B.ni, pt, &gme, PTL_PRIORITY_LIST, NULL, &h));
    ptl_handle_md_t md = tp_md(&A, src, srclen, 0, PTL_CT_NONE);
    ptl_handle_md_t gmd = tp_md(&A, gdst, maxsz + 64, 0, PTL_CT_NONE);

    uint64_t t0 = ptl_test_now();
    for (int i = 0; i < n; i++) {
        size_t off = (size_t)(ptl_test_rand() % 4096);
        OK(PtlPut(md, off, sizes[i], PTL_ACK_REQ, B.id, pt, 1, 0,
                  (void *)(long)i, (ptl_hdr_data_t)off << 16 | (unsigned)i));
    }
    /* Two gets of the largest size interleaved with the puts' traffic. */
    OK(PtlGet(gmd, 0, maxsz / 2, B.id, pt, 2, 0, (void *)100L));
    OK(PtlGet(gmd, maxsz / 2, maxsz - maxsz / 2, B.id, pt, 2, maxsz / 2,
              (void *)101L));

    int sends = 0, acks = 0, replies = 0, puts = 0, gets = 0;
    size_t placed = 0;
    unsigned char seen_send[256] = { 0 }, seen_ack[256] = { 0 };
    for (int guard = 0; guard < 100000; guard++) {
        if (sends == n && acks == n && replies == 2 && puts == n && gets == 2)
            break;
        ptl_event_t ev;
        unsigned which;
        ptl_handle_eq_t eqs[2] = { A.eq, B.eq };
        int rc = PtlEQPoll(eqs, 2, 60000, &ev, &which);
        CHECK(rc == PTL_OK); /* no dropped events, no timeout */
        CHECK(ev.ni_fail_type == PTL_NI_OK);
        long up = (long)ev.user_ptr;
        switch (ev.type) {
        case PTL_EVENT_SEND:
            CHECK(up >= 0 && up < n && !seen_send[up]);
            seen_send[up] = 1;
            sends++;
            break;
        case PTL_EVENT_ACK:
            CHECK(up >= 0 && up < n && seen_send[up] && !seen_ack[up]);
            CHECK(ev.mlength == sizes[up]);
            seen_ack[up] = 1;
            acks++;
            break;
        case PTL_EVENT_PUT: {
            /* In order, complete, correct bytes. */
            int i = (int)(ev.hdr_data & 0xffff);
            size_t off = (size_t)(ev.hdr_data >> 16);
            CHECK(i == puts);
            CHECK(ev.rlength == sizes[i] && ev.mlength == sizes[i]);
            CHECK(ev.remote_offset == placed);
            CHECK(fnv(dst + placed, sizes[i]) == fnv(src + off, sizes[i]));
            placed += sizes[i];
            puts++;
            break;
        }
        case PTL_EVENT_REPLY:
            CHECK(up == 100 || up == 101);
            replies++;
            break;
        case PTL_EVENT_GET:
            gets++;
            break;
        default:
            fprintf(stderr, "unexpected event %s\n", tp_kind(ev.type));
            exit(1);
        }
    }
    CHECK(sends == n && acks == n && replies == 2 && puts == n && gets == 2);
    CHECK(memcmp(gdst, gsrc, maxsz) == 0);
    CHECK(gdst[maxsz] == 0x5A); /* nothing beyond the get */
    for (int i = 0; i < 64; i++)
        CHECK(dst[total + i] == 0xA5);
    /* Nothing more trickles in: no duplicate events. */
    ptl_handle_eq_t eqs[2] = { A.eq, B.eq };
    ptl_event_t ev;
    unsigned which;
    CHECK_RC(PtlEQPoll(eqs, 2, 500, &ev, &which), PTL_EQ_EMPTY);

    struct ptl_test_wire_stats ws;
    struct ptl_lib_stats sa, sb;
    ptl_test_wire_stats(&ws);
    ptl_lib_get_stats(0, &sa);
    ptl_lib_get_stats(1, &sb);
    printf("frame %u: %d msgs, %zu bytes in %.3f s simulated; wire: sent %llu "
           "lost %llu dup %llu reordered %llu corrupted %llu; retransmits "
           "%llu+%llu, bad crc %llu+%llu, dup %llu+%llu, ooo placed %llu+%llu "
           "dropped %llu+%llu\n",
           frame_max, n, total, (ptl_test_now() - t0) / 1e9,
           (unsigned long long)ws.sent, (unsigned long long)ws.lost,
           (unsigned long long)ws.duplicated, (unsigned long long)ws.reordered,
           (unsigned long long)ws.corrupted,
           (unsigned long long)sa.tx_retransmits,
           (unsigned long long)sb.tx_retransmits,
           (unsigned long long)sa.rx_bad_crc, (unsigned long long)sb.rx_bad_crc,
           (unsigned long long)sa.rx_dup, (unsigned long long)sb.rx_dup,
           (unsigned long long)sa.rx_ooo_placed,
           (unsigned long long)sb.rx_ooo_placed,
           (unsigned long long)sa.rx_ooo_dropped,
           (unsigned long long)sb.rx_ooo_dropped);
    /* The wire really was hostile and the protocol really recovered. */
    CHECK(ws.lost > 0 && ws.duplicated > 0 && ws.corrupted > 0);
    CHECK(sa.tx_retransmits + sb.tx_retransmits > 0);
    CHECK(sa.rx_bad_crc + sb.rx_bad_crc > 0);
    CHECK(sa.rx_dup + sb.rx_dup > 0);
    /* Out-of-order fragments of a matched message were placed directly
     * (selective acks), not only resent. */
    CHECK(sa.rx_ooo_placed + sb.rx_ooo_placed > 0);
    CHECK(sa.peer_failures == 0 && sb.peer_failures == 0);
    OK(PtlMDRelease(md));
    OK(PtlMDRelease(gmd));
    PtlFini();
    free(src);
    free(dst);
    free(gsrc);
    free(gdst);
}

/* Reply frames from B stop after the first one: B "dies" mid-reply. */
static int kill_after_reply;
static void tap_kill(unsigned s, unsigned d, const uint8_t *f, size_t len)
{
    (void)d;
    (void)len;
    if (kill_after_reply && s == 1 && f[1] == 7 /* REPLY */) {
        ptl_test_set_dead(1, true);
        kill_after_reply = 0;
    }
}

static void unreachable(void)
{
    ptl_test_host_init(3, 1500);
    OK(PtlInit());
    struct ptl_lib_tunables tun;
    ptl_lib_get_tunables(&tun);
    uint64_t giveup = tun.giveup_ns;
    struct node A, B, C;
    tp_node(&A, 0, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    tp_node(&B, 1, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    tp_node(&C, 2, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    static char buf[1 << 20], dst[1 << 20];
    ptl_handle_md_t md = tp_md(&A, buf, sizeof(buf), 0, PTL_CT_NONE);
    ptl_pt_index_t pt = tp_pt(&C, 0);
    ptl_me_t me = tp_me(dst, sizeof(dst), PTL_ME_OP_PUT | PTL_ME_OP_GET |
                        PTL_ME_EVENT_LINK_DISABLE, 0, ~0ull);
    ptl_handle_me_t h;
    OK(PtlMEAppend(C.ni, pt, &me, PTL_PRIORITY_LIST, NULL, &h));

    /* C never answers. */
    ptl_test_set_dead(2, true);
    uint64_t t0 = ptl_test_now();
    OK(PtlPut(md, 0, 100000, PTL_ACK_REQ, C.id, pt, 0, 0, (void *)1, 0));
    OK(PtlGet(md, 0, 5000, C.id, pt, 0, 0, (void *)2));
    ptl_event_t ev = EXPECT_EVENT(A.eq, PTL_EVENT_SEND);
    CHECK(ev.ni_fail_type == PTL_NI_UNDELIVERABLE && ev.user_ptr == (void *)1);
    ev = EXPECT_EVENT(A.eq, PTL_EVENT_ACK);
    CHECK(ev.ni_fail_type == PTL_NI_UNDELIVERABLE);
    ev = EXPECT_EVENT(A.eq, PTL_EVENT_REPLY);
    CHECK(ev.ni_fail_type == PTL_NI_UNDELIVERABLE && ev.user_ptr == (void *)2);
    uint64_t took = ptl_test_now() - t0;
    printf("unreachable peer reported after %.3f s (give-up %.3f s)\n",
           took / 1e9, giveup / 1e9);
    CHECK(took >= giveup / 2 && took <= giveup + giveup / 2);
    CHECK_RC(PtlMDRelease(md), PTL_OK); /* nothing left pinned */
    md = tp_md(&A, buf, sizeof(buf), 0, PTL_CT_NONE);

    /* C comes back: a new session, traffic flows again. */
    ptl_test_set_dead(2, false);
    tp_fill(buf, 3000, 5);
    OK(PtlPut(md, 0, 3000, PTL_ACK_REQ, C.id, pt, 0, 0, NULL, 0));
    CHECK(EXPECT_EVENT(A.eq, PTL_EVENT_SEND).ni_fail_type == PTL_NI_OK);
    CHECK(EXPECT_EVENT(A.eq, PTL_EVENT_ACK).ni_fail_type == PTL_NI_OK);
    CHECK(memcmp(dst, buf, 3000) == 0);

    /* B accepts a get and dies while replying: the initiator is told,
     * through the response time-out, not left waiting. */
    ptl_pt_index_t bpt = tp_pt(&B, 0);
    OK(PtlMEAppend(B.ni, bpt, &me, PTL_PRIORITY_LIST, NULL, &h));
    ptl_test_set_tap(tap_kill);
    kill_after_reply = 1;
    t0 = ptl_test_now();
    OK(PtlGet(md, 0, 500000, B.id, bpt, 0, 0, (void *)3));
    ev = EXPECT_EVENT(A.eq, PTL_EVENT_REPLY);
    CHECK(ev.ni_fail_type == PTL_NI_UNDELIVERABLE && ev.user_ptr == (void *)3);
    took = ptl_test_now() - t0;
    CHECK(took <= 2 * giveup + giveup / 2);
    ptl_test_set_tap(NULL);
    OK(PtlMDRelease(md));
    PtlFini();
    printf("unreachable ok\n");
}

/* Four nodes all talking to each other at once over the lossy wire:
 * puts of random sizes to every other node plus atomic increments of a
 * counter on node 0.  Exercises many peers' state at the same time. */
static void mesh(uint64_t seed)
{
    enum { NN = 4, PER = 12, MAXSZ = 150000 };
    ptl_test_host_init(NN, 1500);
    lossy(seed);
    OK(PtlInit());
    struct node nd[NN];
    static unsigned char src[NN][MAXSZ];
    static unsigned char dst[NN][NN][PER][MAXSZ / 8]; /* [to][from][i] */
    size_t sz[NN][NN][PER];
    ptl_handle_md_t md[NN], one_md[NN];
    static int64_t counter, one = 1;
    ptl_pt_index_t pt[NN];
    counter = 0;
    for (int i = 0; i < NN; i++) {
        tp_node(&nd[i], (unsigned)i, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
        pt[i] = tp_pt(&nd[i], 0);
        for (size_t k = 0; k < MAXSZ; k++)
            src[i][k] = (unsigned char)ptl_test_rand();
        md[i] = tp_md(&nd[i], src[i], MAXSZ, 0, PTL_CT_NONE);
        one_md[i] = tp_md(&nd[i], &one, 8, 0, PTL_CT_NONE);
        for (int f = 0; f < NN; f++)
            for (int k = 0; k < PER; k++) {
                ptl_me_t me = tp_me(dst[i][f][k], MAXSZ / 8,
                                    PTL_ME_OP_PUT | PTL_ME_USE_ONCE |
                                    PTL_ME_EVENT_LINK_DISABLE |
                                    PTL_ME_EVENT_UNLINK_DISABLE,
                                    (ptl_match_bits_t)(f << 8 | k), 0);
                ptl_handle_me_t h;
                OK(PtlMEAppend(nd[i].ni, pt[i], &me, PTL_PRIORITY_LIST, NULL,
                               &h));
            }
    }
    ptl_me_t cme = tp_me(&counter, 8, PTL_ME_OP_PUT |
                         PTL_ME_EVENT_LINK_DISABLE | PTL_ME_EVENT_COMM_DISABLE,
                         0xC0FFEE, 0);
    ptl_handle_me_t ch;
    OK(PtlMEAppend(nd[0].ni, pt[0], &cme, PTL_PRIORITY_LIST, NULL, &ch));
    int expect_puts[NN] = { 0 };
    for (int k = 0; k < PER; k++)
        for (int f = 0; f < NN; f++)
            for (int t = 0; t < NN; t++) {
                if (t == f)
                    continue;
                sz[t][f][k] = (size_t)(ptl_test_rand() % (MAXSZ / 8));
                OK(PtlPut(md[f], (ptl_size_t)(f * 1000 + k), sz[t][f][k],
                          PTL_NO_ACK_REQ, nd[t].id, pt[t],
                          (ptl_match_bits_t)(f << 8 | k), 0, NULL, 0));
                expect_puts[t]++;
                OK(PtlAtomic(one_md[f], 0, 8, PTL_NO_ACK_REQ, nd[0].id, pt[0],
                             0xC0FFEE, 0, NULL, 0, PTL_SUM, PTL_INT64_T));
            }
    int sends = 0, puts[NN] = { 0 };
    int want_sends = 2 * NN * (NN - 1) * PER;
    for (int guard = 0; guard < 100000; guard++) {
        int done = sends == want_sends;
        for (int t = 0; t < NN; t++)
            done &= puts[t] == expect_puts[t];
        if (done)
            break;
        ptl_handle_eq_t eqs[NN];
        for (int i = 0; i < NN; i++)
            eqs[i] = nd[i].eq;
        ptl_event_t ev;
        unsigned w;
        OK(PtlEQPoll(eqs, NN, 60000, &ev, &w));
        CHECK(ev.ni_fail_type == PTL_NI_OK);
        if (ev.type == PTL_EVENT_SEND) {
            sends++;
        } else {
            CHECK(ev.type == PTL_EVENT_PUT);
            int f = (int)(ev.match_bits >> 8), k = (int)(ev.match_bits & 0xff);
            CHECK(ev.mlength == sz[w][f][k]);
            CHECK(fnv(dst[w][f][k], sz[w][f][k]) ==
                  fnv(src[f] + f * 1000 + k, sz[w][f][k]));
            puts[w]++;
        }
    }
    CHECK(sends == want_sends);
    for (int t = 0; t < NN; t++)
        CHECK(puts[t] == expect_puts[t]);
    CHECK(counter == NN * (NN - 1) * PER);
    struct ptl_test_wire_stats ws;
    ptl_test_wire_stats(&ws);
    CHECK(ws.lost > 0);
    printf("mesh: %d nodes, %d puts + %d atomics, counter %lld\n", NN,
           NN * (NN - 1) * PER, NN * (NN - 1) * PER, (long long)counter);
    PtlFini();
}

int main(int argc, char **argv)
{
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 12345;
    static const size_t mix[] = {
        0, 1, 100, 1355, 1356, 1357, 1500, 4096, 9000, 65536, 100000,
        16 * MiB, 0, 7, 2 * MiB + 3, 1 * MiB, 333333, 2, 12345, 64 * 1024 + 1,
        3, 8191, 200000, 0, 1 * MiB - 1
    };
    int n = (int)(sizeof(mix) / sizeof(mix[0]));
    stream(1500, mix, n, seed);
    static const size_t jumbo[] = { 16 * MiB, 0, 8999, 9000, 9001, 4 * MiB,
                                    1, 777777 };
    stream(9000, jumbo, 8, seed + 1);
    mesh(seed + 2);
    /* Much worse wire: slower, but still complete and no false give-ups. */
    heavy = 1;
    static const size_t bad[] = { 0, 1, 1500, 65536, 2 * MiB, 7, 300000 };
    stream(1500, bad, 7, seed + 3);
    mesh(seed + 4);
    heavy = 0;
    unreachable();
    printf("test_reliable: PASS\n");
    return 0;
}
