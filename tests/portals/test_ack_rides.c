/* A target's ACK rides in the header of its program's next message to the
 * initiator (PTL_WF_ACKIN), instead of costing a frame of its own; it
 * arrives once also when frames carrying it are lost, repeated and
 * reordered, and when both nodes stream messages of several frames at each
 * other; an ACK nobody answers still arrives; a record in a fragment placed
 * out of order is taken; a malformed record is dropped and counted; link
 * frames carrying several Portals frames (PTL_WF_MORE) are taken apart on
 * receipt, and a malformed one is dropped and counted; an ACK a counter counts
 * is taken in with its frame (it may trigger an operation); the ACK of a put
 * of several frames is not held for an answer. */
#include "ptl_host.h"
#include "tp_craft.h"

#define N 200
#define FAKE_NID 0x1ff

static uint64_t link_frames(void)
{
    struct ptl_test_wire_stats w;
    ptl_test_wire_stats(&w);
    return w.sent;
}

static struct ptl_test_wire_stats wire_stats(void)
{
    struct ptl_test_wire_stats w;
    ptl_test_wire_stats(&w);
    return w;
}

static struct ptl_lib_stats stats(unsigned iface)
{
    struct ptl_lib_stats s;
    OK(ptl_lib_get_stats(iface, &s));
    return s;
}

static void set_hold(uint64_t ns)
{
    struct ptl_lib_tunables t;
    ptl_lib_get_tunables(&t);
    t.ack_hold_ns = ns;
    ptl_lib_set_tunables(&t);
}

static struct node A, B;
static ptl_pt_index_t ptA, ptB;
static char bufA[64], bufB[64], srcA[64], srcB[64];
static ptl_handle_md_t mdA, mdB;

/* N round trips of acknowledged 64-byte puts, data and events checked.
 * One process plays both nodes, and any wait here that halts is a wait of
 * both (it sends what either held): so each side looks at the events of its
 * previous answer only once its next message is on its way.  Returns the
 * link frames the round trips took. */
static uint64_t ping_pong(void)
{
    uint64_t f0 = link_frames();
    for (int i = 0; i < N; i++) {
        tp_fill(srcA, sizeof(srcA), (unsigned)i);
        OK(PtlPut(mdA, 0, sizeof(srcA), PTL_ACK_REQ, B.id, ptB, 0, 0, NULL, 0));
        ptl_event_t ack = {0}, put = {0};
        if (i) {
            EXPECT_EVENT(B.eq, PTL_EVENT_SEND);
            EXPECT_EITHER(B.eq, PTL_EVENT_ACK, PTL_EVENT_PUT, &ack, &put);
            CHECK(ack.ni_fail_type == PTL_NI_OK && ack.mlength == sizeof(srcB));
        } else {
            EXPECT_EVENT(B.eq, PTL_EVENT_PUT);
        }
        CHECK(memcmp(bufB, srcA, sizeof(srcA)) == 0);
        tp_fill(srcB, sizeof(srcB), (unsigned)i + 5000);
        OK(PtlPut(mdB, 0, sizeof(srcB), PTL_ACK_REQ, A.id, ptA, 0, 0, NULL, 0));
        EXPECT_EVENT(A.eq, PTL_EVENT_SEND);
        EXPECT_EITHER(A.eq, PTL_EVENT_ACK, PTL_EVENT_PUT, &ack, &put);
        CHECK(ack.ni_fail_type == PTL_NI_OK && ack.mlength == sizeof(srcA));
        CHECK(memcmp(bufA, srcB, sizeof(srcB)) == 0);
    }
    EXPECT_EVENT(B.eq, PTL_EVENT_SEND);
    EXPECT_EVENT(B.eq, PTL_EVENT_ACK);
    return link_frames() - f0;
}

/* A carried ACK that a counter counts is taken in with the frame that
 * carries it, not noted for the next call (ptl_op_acked_later): an
 * operation triggered by that count goes out before any call of the
 * initiator's.  (The ping-pongs above check the ACKs that are noted.) */
static void counted_ack_triggers(void)
{
    ptl_handle_ct_t ct;
    OK(PtlCTAlloc(A.ni, &ct));
    ptl_handle_md_t md = tp_md(&A, srcA, sizeof(srcA),
                               PTL_MD_EVENT_CT_ACK | PTL_MD_EVENT_SEND_DISABLE |
                               PTL_MD_EVENT_SUCCESS_DISABLE, ct);
    ptl_handle_md_t md2 = tp_md(&A, srcA, 8, PTL_MD_EVENT_SEND_DISABLE, PTL_CT_NONE);
    tp_fill(srcA, sizeof(srcA), 4242);
    OK(PtlTriggeredPut(md2, 0, 8, PTL_NO_ACK_REQ, B.id, ptB, 0, 0, NULL, 0, ct, 1));
    OK(PtlPut(md, 0, sizeof(srcA), PTL_ACK_REQ, B.id, ptB, 0, 0, NULL, 0));
    ptl_test_drain();                  /* B has it; its ACK is held for an answer */
    tp_fill(srcB, sizeof(srcB), 4343);
    OK(PtlPut(mdB, 0, sizeof(srcB), PTL_ACK_REQ, A.id, ptA, 0, 0, NULL, 0));
    uint64_t sent = stats(0).tx_frames, carried = stats(1).tx_carried;
    ptl_test_drain();                  /* A takes B's put and the ACK in its header */
    CHECK(stats(1).tx_carried == carried);   /* it went with the put above */
    CHECK(stats(0).tx_frames > sent);        /* the triggered put, no call of A's between */
    ptl_ct_event_t c;
    OK(PtlCTGet(ct, &c));
    CHECK(c.success == 1 && c.failure == 0);
    EXPECT_EVENT(B.eq, PTL_EVENT_PUT);       /* the first put */
    EXPECT_EVENT(B.eq, PTL_EVENT_PUT);       /* the triggered one */
    EXPECT_EVENT(B.eq, PTL_EVENT_SEND);
    EXPECT_EVENT(B.eq, PTL_EVENT_ACK);
    EXPECT_EVENT(A.eq, PTL_EVENT_PUT);
    CHECK(memcmp(bufA, srcB, sizeof(srcB)) == 0);
    EXPECT_NO_EVENT(A.eq);
    EXPECT_NO_EVENT(B.eq);
    OK(PtlMDRelease(md));
    OK(PtlMDRelease(md2));
    OK(PtlCTFree(ct));
}

/* The ACK of a put of several frames goes at once, held for no answer:
 * that is bulk data from its program's buffer, which waits for the ACK to
 * use it again (libmsg's rendezvous messages that carry their data).  The
 * ACK of a one-frame put is held, and a halting wait sends it. */
#define BULK 6000           /* five frames of a 1500-byte wire */
static char bulk_src[BULK], bulk_dst[BULK];

static void bulk_ack_not_held(void)
{
    ptl_pt_index_t pt = tp_pt(&B, 0);
    ptl_me_t me = tp_me(bulk_dst, BULK, PTL_ME_OP_PUT, 0, ~0ull);
    ptl_handle_me_t mh;
    OK(PtlMEAppend(B.ni, pt, &me, PTL_PRIORITY_LIST, NULL, &mh));
    EXPECT_EVENT(B.eq, PTL_EVENT_LINK);
    ptl_handle_md_t md = tp_md(&A, bulk_src, BULK, 0, PTL_CT_NONE);
    set_hold(10000000000ull);   /* 10 s: what is held stays held here */
    for (size_t len = 64; len <= BULK; len += BULK - 64) {
        tp_fill(bulk_src, len, (unsigned)len);
        OK(PtlPut(md, 0, len, PTL_ACK_REQ, B.id, pt, 0, 0, NULL, 0));
        ptl_test_drain();       /* every frame on the wire is in, no wait */
        ptl_event_t ev;
        OK(PtlEQGet(B.eq, &ev));
        CHECK(ev.type == PTL_EVENT_PUT && ev.mlength == len);
        CHECK(memcmp(bulk_dst, bulk_src, len) == 0);
        bool acked = false;
        while (PtlEQGet(A.eq, &ev) == PTL_OK)
            if (ev.type == PTL_EVENT_ACK)
                acked = true;
        printf("a put of %zu bytes: its ACK %s\n", len, acked ? "came at once" : "is held");
        CHECK(acked == (len == BULK));
        while (!acked) {        /* a halting wait: B sends what it held */
            unsigned which;
            OK(PtlEQPoll(&A.eq, 1, 20000, &ev, &which));
            CHECK(ev.type == PTL_EVENT_SEND || ev.type == PTL_EVENT_ACK);
            acked = ev.type == PTL_EVENT_ACK;
        }
        EXPECT_NO_EVENT(A.eq);
    }
    set_hold(200000);
}

/* Both nodes stream acknowledged puts of several frames each at the same
 * time, on a lossy, reordering wire: each side's ACKs ride in the other
 * way's data frames, first fragments or not, some of them placed out of
 * order.  Every byte and every ACK arrives, once. */
#define XS_N 40
#define XS_SZ 6000          /* five frames of a 1500-byte wire */
static char xs_src[2][XS_N * XS_SZ], xs_dst[2][XS_N * XS_SZ];

static void crossing_streams(void)
{
    struct node *n[2] = {&A, &B};
    ptl_handle_md_t md[2];
    ptl_pt_index_t pt[2];
    for (int k = 0; k < 2; k++) {
        pt[k] = tp_pt(n[k], 0);
        ptl_me_t me = tp_me(xs_dst[k], sizeof(xs_dst[k]), PTL_ME_OP_PUT | PTL_ME_MANAGE_LOCAL,
                            0, ~0ull);
        ptl_handle_me_t mh;
        OK(PtlMEAppend(n[k]->ni, pt[k], &me, PTL_PRIORITY_LIST, NULL, &mh));
        EXPECT_EVENT(n[k]->eq, PTL_EVENT_LINK);
        md[k] = tp_md(n[k], xs_src[k], sizeof(xs_src[k]), 0, PTL_CT_NONE);
        tp_fill(xs_src[k], sizeof(xs_src[k]), 900u + (unsigned)k);
    }
    struct ptl_test_wire lossy = {.seed = 21, .latency_ns = 20000, .loss_pct = 5,
                                  .dup_pct = 5, .reorder_pct = 20};
    ptl_test_wire_config(&lossy);
    struct ptl_lib_stats s0[2] = {stats(0), stats(1)};
    for (int i = 0; i < XS_N; i++)
        for (int k = 0; k < 2; k++)
            OK(PtlPut(md[k], (ptl_size_t)i * XS_SZ, XS_SZ, PTL_ACK_REQ, n[1 - k]->id, pt[1 - k],
                      0, 0, NULL, 0));
    int puts[2] = {0, 0}, acks[2] = {0, 0}, sends[2] = {0, 0};
    while (puts[0] + puts[1] + acks[0] + acks[1] + sends[0] + sends[1] < 6 * XS_N) {
        ptl_handle_eq_t eqs[2] = {A.eq, B.eq};
        ptl_event_t ev;
        unsigned k;
        OK(PtlEQPoll(eqs, 2, 20000, &ev, &k));
        CHECK(ev.ni_fail_type == PTL_NI_OK);
        CHECK(ev.type == PTL_EVENT_PUT || ev.type == PTL_EVENT_ACK ||
              ev.type == PTL_EVENT_SEND);
        CHECK(ev.type == PTL_EVENT_SEND || ev.mlength == XS_SZ);
        if (ev.type == PTL_EVENT_PUT)
            puts[k]++;
        else if (ev.type == PTL_EVENT_ACK)
            acks[k]++;
        else
            sends[k]++;
    }
    for (int k = 0; k < 2; k++) {
        CHECK(puts[k] == XS_N && acks[k] == XS_N && sends[k] == XS_N);
        CHECK(memcmp(xs_dst[k], xs_src[1 - k], sizeof(xs_dst[k])) == 0);
    }
    EXPECT_NO_EVENT(A.eq);
    EXPECT_NO_EVENT(B.eq);
    struct ptl_lib_stats s1[2] = {stats(0), stats(1)};
    uint64_t carried = 0, placed = 0;
    for (int k = 0; k < 2; k++) {
        carried += s1[k].tx_carried - s0[k].tx_carried;
        placed += s1[k].rx_ooo_placed - s0[k].rx_ooo_placed;
    }
    printf("crossing streams: %llu ACKs carried, %llu frames placed out of order\n",
           (unsigned long long)carried, (unsigned long long)placed);
    CHECK(carried > 0);
    struct ptl_test_wire clean = {.seed = 22, .latency_ns = 20000};
    ptl_test_wire_config(&clean);
}

/* h with the ACK record rec, then plen payload bytes, sealed (the checksum
 * covers the header, the record and the payload). */
static size_t craft_carrying(uint8_t *f, struct ptl_wire_hdr *h, const struct ptl_wire_ackrec *rec,
                             const void *payload, uint32_t plen)
{
    h->version = PTL_WIRE_VERSION;
    h->frag_len = plen;
    h->flags |= PTL_WF_ACKIN;
    h->crc = 0;
    ptl_wire_encode(h, f);
    ptl_wire_ackrec_encode(rec, f + PTL_WIRE_HDR_LEN);
    memcpy(f + PTL_WIRE_HDR_LEN + PTL_WIRE_ACKREC_LEN, payload, plen);
    size_t n = PTL_WIRE_HDR_LEN + PTL_WIRE_ACKREC_LEN + plen;
    tp_seal(f, n);
    return n;
}

/* The header of B's first frame to FAKE_NID + 9, as it went onto the wire. */
static struct ptl_wire_hdr to_fake;
static bool to_fake_seen;

static void grab_to_fake(unsigned src, const struct ptl_sg *sg, int n_sg)
{
    if (src != 1 || n_sg < 1 || sg[0].len < PTL_WIRE_HDR_LEN || to_fake_seen)
        return;
    struct ptl_wire_hdr h;
    ptl_wire_decode(sg[0].base, &h);
    if (h.dst_nid == FAKE_NID + 9 && h.op == PTL_WOP_PUT) {
        to_fake = h;
        to_fake_seen = true;
    }
}

/* A record in a fragment placed out of order (a message's third frame
 * before its second): the ACK is taken there, as that frame is
 * acknowledged then and never sent again.  This library's sender carries
 * ACKs in new messages' first frames; the wire allows any frame. */
static void record_in_a_later_fragment(ptl_pt_index_t pt, char *buf_at)
{
    static uint8_t f[4096];
    static char pay[48];
    tp_fill(pay, sizeof(pay), 4242);
    ptl_process_t fake;
    fake.phys.nid = FAKE_NID + 9;
    fake.phys.pid = 5;
    ptl_test_set_sg_tap(grab_to_fake);
    OK(PtlPut(mdB, 0, 8, PTL_ACK_REQ, fake, pt, 0, 0, NULL, 0));
    ptl_test_set_sg_tap(NULL);
    CHECK(to_fake_seen);
    struct ptl_lib_stats s0 = stats(1);
    for (int k = 0; k < 3; k++) {
        int frag = k == 0 ? 0 : k == 1 ? 2 : 1;           /* 0, then 2, then 1 */
        struct ptl_wire_hdr h = tp_put_hdr(&B, pt, FAKE_NID + 9, 0x9000, sizeof(pay), 0);
        h.flags = PTL_WF_SEQ | PTL_WF_ACKV | (frag == 0 ? PTL_WF_FIRST : 0) |
                  (frag == 2 ? PTL_WF_LAST : 0);
        h.seq = (uint32_t)frag;
        h.msg_id = 7;
        h.frag_off = 16u * (unsigned)frag;
        h.ack_session = to_fake.session;      /* B's frame to us is acknowledged */
        h.ack = 1;
        size_t n;
        if (frag == 2) {
            struct ptl_wire_ackrec rec = {.msg_id = to_fake.msg_id, .mlength = 8,
                                          .fail = PTL_NI_OK, .ack_req = PTL_ACK_REQ};
            n = craft_carrying(f, &h, &rec, pay + 32, 16);
        } else {
            n = tp_craft(f, &h, pay + 16 * frag, 16);
        }
        ptl_lib_rx(1, f, n);
    }
    struct ptl_lib_stats s1 = stats(1);
    CHECK(s1.rx_ooo_placed == s0.rx_ooo_placed + 1);
    EXPECT_EVENT(B.eq, PTL_EVENT_SEND);
    ptl_event_t ack = {0}, put = {0};
    EXPECT_EITHER(B.eq, PTL_EVENT_ACK, PTL_EVENT_PUT, &ack, &put);
    CHECK(ack.ni_fail_type == PTL_NI_OK && ack.mlength == 8);
    CHECK(put.mlength == sizeof(pay) && memcmp(buf_at, pay, sizeof(pay)) == 0);
    EXPECT_NO_EVENT(B.eq);
}

/* Frames carrying an ACK record from a fake node: the put in it is
 * delivered whatever the ACK names; a bad record or a frame too short for
 * it is dropped whole, before anything of it is used. */
static void crafted_records(void)
{
    static uint8_t f[4096];
    static char pay[16], buf[64];
    memset(pay, 0x33, sizeof(pay));
    ptl_me_t me = tp_me(buf, sizeof(buf), PTL_ME_OP_PUT | PTL_ME_MANAGE_LOCAL, 0, ~0ull);
    ptl_handle_me_t mh;
    ptl_pt_index_t pt = tp_pt(&B, 0);
    OK(PtlMEAppend(B.ni, pt, &me, PTL_PRIORITY_LIST, NULL, &mh));
    EXPECT_EVENT(B.eq, PTL_EVENT_LINK);
    struct ptl_wire_ackrec rec = {.msg_id = 0x12345678abcdull, .mlength = 8,
                                  .fail = PTL_NI_OK, .ack_req = PTL_ACK_REQ};

    /* An ACK for no operation of B's: ignored; the put arrives. */
    struct ptl_wire_hdr h = tp_put_hdr(&B, pt, FAKE_NID + 1, 0x8000, sizeof(pay), 0);
    size_t n = craft_carrying(f, &h, &rec, pay, sizeof(pay));
    struct ptl_lib_stats s0 = stats(1);
    ptl_lib_rx(1, f, n);
    struct ptl_lib_stats s1 = stats(1);
    CHECK(s1.rx_bad_field == s0.rx_bad_field && s1.rx_short == s0.rx_short);
    ptl_event_t ev = EXPECT_EVENT(B.eq, PTL_EVENT_PUT);
    CHECK(ev.mlength == sizeof(pay) && memcmp(buf, pay, sizeof(pay)) == 0);
    EXPECT_NO_EVENT(B.eq);

    /* A reserved byte of the record set: dropped as a bad field. */
    h = tp_put_hdr(&B, pt, FAKE_NID + 2, 0x8100, sizeof(pay), 0);
    n = craft_carrying(f, &h, &rec, pay, sizeof(pay));
    f[PTL_WIRE_HDR_LEN + 30] = 1;
    tp_seal(f, n);
    s0 = stats(1);
    ptl_lib_rx(1, f, n);
    s1 = stats(1);
    CHECK(s1.rx_bad_field == s0.rx_bad_field + 1);
    EXPECT_NO_EVENT(B.eq);

    /* A failure type no ACK has: dropped as a bad field. */
    struct ptl_wire_ackrec bad = rec;
    bad.fail = 200;
    h = tp_put_hdr(&B, pt, FAKE_NID + 3, 0x8200, sizeof(pay), 0);
    n = craft_carrying(f, &h, &bad, pay, sizeof(pay));
    s0 = stats(1);
    ptl_lib_rx(1, f, n);
    s1 = stats(1);
    CHECK(s1.rx_bad_field == s0.rx_bad_field + 1);
    EXPECT_NO_EVENT(B.eq);

    /* A damaged record fails the checksum. */
    h = tp_put_hdr(&B, pt, FAKE_NID + 4, 0x8300, sizeof(pay), 0);
    n = craft_carrying(f, &h, &rec, pay, sizeof(pay));
    f[PTL_WIRE_HDR_LEN + 3] ^= 0x10;
    s0 = stats(1);
    ptl_lib_rx(1, f, n);
    s1 = stats(1);
    CHECK(s1.rx_bad_crc == s0.rx_bad_crc + 1);
    EXPECT_NO_EVENT(B.eq);

    /* The flag, but the frame ends inside the record: short. */
    h = tp_put_hdr(&B, pt, FAKE_NID + 5, 0x8400, 0, 0);
    n = craft_carrying(f, &h, &rec, pay, 0);
    s0 = stats(1);
    ptl_lib_rx(1, f, n - 8);
    s1 = stats(1);
    CHECK(s1.rx_short == s0.rx_short + 1);
    EXPECT_NO_EVENT(B.eq);

    /* A reliability-only ack cannot carry one. */
    h = tp_put_hdr(&B, pt, FAKE_NID + 6, 0x8500, 0, 0);
    h.op = PTL_WOP_RACK;
    h.flags = PTL_WF_ACKV;
    n = craft_carrying(f, &h, &rec, pay, 0);
    s0 = stats(1);
    ptl_lib_rx(1, f, n);
    s1 = stats(1);
    CHECK(s1.rx_bad_op == s0.rx_bad_op + 1);

    record_in_a_later_fragment(pt, buf + sizeof(pay));
    PtlMEUnlink(mh);
}

static void crafted(void)
{
    static uint8_t f[4096];
    static char pay1[40], pay2[24];
    memset(pay1, 0x11, sizeof(pay1));
    memset(pay2, 0x22, sizeof(pay2));
    static char buf[64];
    ptl_me_t me = tp_me(buf, sizeof(buf), PTL_ME_OP_PUT | PTL_ME_MANAGE_LOCAL, 0, ~0ull);
    ptl_handle_me_t mh;
    ptl_pt_index_t pt = tp_pt(&B, 0);
    OK(PtlMEAppend(B.ni, pt, &me, PTL_PRIORITY_LIST, NULL, &mh));
    EXPECT_EVENT(B.eq, PTL_EVENT_LINK);

    /* Two puts of one stream, seq 0 and 1, in one link frame. */
    struct ptl_wire_hdr h1 = tp_put_hdr(&B, pt, FAKE_NID, 0x5000, sizeof(pay1), 0);
    h1.flags |= PTL_WF_MORE;
    size_t n1 = tp_craft(f, &h1, pay1, sizeof(pay1));
    struct ptl_wire_hdr h2 = tp_put_hdr(&B, pt, FAKE_NID, 0x5000, sizeof(pay2), 0);
    h2.seq = 1;
    h2.msg_id = 2;
    size_t n2 = tp_craft(f + n1, &h2, pay2, sizeof(pay2));
    struct ptl_lib_stats s0 = stats(1);
    ptl_lib_rx(1, f, n1 + n2);
    struct ptl_lib_stats s1 = stats(1);
    CHECK(s1.rx_frames == s0.rx_frames + 2);
    ptl_event_t ev = EXPECT_EVENT(B.eq, PTL_EVENT_PUT);
    CHECK(ev.mlength == sizeof(pay1) && memcmp(buf, pay1, sizeof(pay1)) == 0);
    ev = EXPECT_EVENT(B.eq, PTL_EVENT_PUT);
    CHECK(ev.mlength == sizeof(pay2) &&
          memcmp(buf + sizeof(pay1), pay2, sizeof(pay2)) == 0);

    /* MORE, but what follows the payload cannot hold a header: dropped
     * whole, as short, before anything of it is used. */
    h1 = tp_put_hdr(&B, pt, FAKE_NID, 0x6000, sizeof(pay1), 0);
    h1.flags |= PTL_WF_MORE;
    n1 = tp_craft(f, &h1, pay1, sizeof(pay1));
    memset(f + n1, 0, PTL_WIRE_HDR_LEN - 1);
    s0 = stats(1);
    ptl_lib_rx(1, f, n1 + PTL_WIRE_HDR_LEN - 1);
    s1 = stats(1);
    CHECK(s1.rx_short == s0.rx_short + 1 && s1.rx_frames == s0.rx_frames + 1);
    EXPECT_NO_EVENT(B.eq);

    /* A damaged second frame is dropped; the first is not. */
    h1 = tp_put_hdr(&B, pt, FAKE_NID, 0x7000, 8, 0);
    h1.flags |= PTL_WF_MORE;
    n1 = tp_craft(f, &h1, pay1, 8);
    h2 = tp_put_hdr(&B, pt, FAKE_NID, 0x7000, 8, 0);
    h2.seq = 1;
    h2.msg_id = 2;
    n2 = tp_craft(f + n1, &h2, pay2, 8);
    f[n1 + 70] ^= 0x40;
    s0 = stats(1);
    ptl_lib_rx(1, f, n1 + n2);
    s1 = stats(1);
    CHECK(s1.rx_frames == s0.rx_frames + 2 && s1.rx_bad_crc == s0.rx_bad_crc + 1);
    EXPECT_EVENT(B.eq, PTL_EVENT_PUT);
    EXPECT_NO_EVENT(B.eq);
}

int main(void)
{
    ptl_test_host_init(2, 1500);
    struct ptl_test_wire w = {.seed = 11, .latency_ns = 20000};
    ptl_test_wire_config(&w);
    OK(PtlInit());
    tp_node(&A, 0, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    tp_node(&B, 1, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    ptA = tp_pt(&A, 0);
    ptB = tp_pt(&B, 0);
    ptl_me_t me = tp_me(bufA, sizeof(bufA), PTL_ME_OP_PUT, 0, ~0ull);
    ptl_handle_me_t mh;
    OK(PtlMEAppend(A.ni, ptA, &me, PTL_PRIORITY_LIST, NULL, &mh));
    EXPECT_EVENT(A.eq, PTL_EVENT_LINK);
    me = tp_me(bufB, sizeof(bufB), PTL_ME_OP_PUT, 0, ~0ull);
    OK(PtlMEAppend(B.ni, ptB, &me, PTL_PRIORITY_LIST, NULL, &mh));
    EXPECT_EVENT(B.eq, PTL_EVENT_LINK);
    mdA = tp_md(&A, srcA, sizeof(srcA), 0, PTL_CT_NONE);
    mdB = tp_md(&B, srcB, sizeof(srcB), 0, PTL_CT_NONE);

    /* Each ACK goes at once, standalone: the baseline. */
    set_hold(0);
    uint64_t apart = ping_pong();
    /* Each ACK rides in the answer's header (or the next ping's). */
    set_hold(200000);
    uint64_t c0 = stats(0).tx_carried + stats(1).tx_carried;
    uint64_t p0 = stats(0).tx_frames + stats(1).tx_frames;
    uint64_t riding = ping_pong();
    uint64_t carried = stats(0).tx_carried + stats(1).tx_carried - c0;
    uint64_t portals_frames = stats(0).tx_frames + stats(1).tx_frames - p0;
    printf("link frames for %d acknowledged round trips: %llu with ACKs apart, "
           "%llu with ACKs riding (%llu carried, %llu Portals frames)\n", N,
           (unsigned long long)apart, (unsigned long long)riding,
           (unsigned long long)carried, (unsigned long long)portals_frames);
    CHECK(apart >= 4 * N - N / 20);
    CHECK(riding <= 2 * N + N / 20 && carried >= 2 * N - N / 20);
    /* In the header: no frame of their own, inside a link frame or not. */
    CHECK(portals_frames <= 2 * N + N / 20);

    /* A lossy wire: frames carrying ACKs are lost, repeated and overtaken,
     * and resent with their ACKs; ping_pong checks every ACK arrives once
     * and in order with its answer's data. */
    struct ptl_test_wire lossy = {.seed = 12, .latency_ns = 20000, .loss_pct = 10,
                                  .dup_pct = 5, .reorder_pct = 10};
    ptl_test_wire_config(&lossy);
    struct ptl_test_wire_stats w0 = wire_stats();
    c0 = stats(0).tx_carried + stats(1).tx_carried;
    ping_pong();
    struct ptl_test_wire_stats w1 = wire_stats();
    carried = stats(0).tx_carried + stats(1).tx_carried - c0;
    printf("lossy wire: %llu lost, %llu repeated, %llu reordered; %llu ACKs carried\n",
           (unsigned long long)(w1.lost - w0.lost),
           (unsigned long long)(w1.duplicated - w0.duplicated),
           (unsigned long long)(w1.reordered - w0.reordered), (unsigned long long)carried);
    CHECK(w1.lost - w0.lost >= 10 && carried >= N);
    EXPECT_NO_EVENT(A.eq);
    EXPECT_NO_EVENT(B.eq);
    struct ptl_test_wire clean = {.seed = 13, .latency_ns = 20000};
    ptl_test_wire_config(&clean);

    /* Nobody answers: the ACK goes anyway, once the initiator waits. */
    for (int i = 0; i < 3; i++) {
        tp_fill(srcA, sizeof(srcA), (unsigned)i + 77);
        OK(PtlPut(mdA, 0, sizeof(srcA), PTL_ACK_REQ, B.id, ptB, 0, 0, NULL, 0));
        EXPECT_EVENT(A.eq, PTL_EVENT_SEND);
        ptl_event_t ev = EXPECT_EVENT(A.eq, PTL_EVENT_ACK);
        CHECK(ev.ni_fail_type == PTL_NI_OK);
        EXPECT_EVENT(B.eq, PTL_EVENT_PUT);
        CHECK(memcmp(bufB, srcA, sizeof(srcA)) == 0);
    }

    counted_ack_triggers();
    bulk_ack_not_held();
    crossing_streams();
    crafted();
    crafted_records();
    PtlFini();
    printf("test_ack_rides: PASS\n");
    return 0;
}
