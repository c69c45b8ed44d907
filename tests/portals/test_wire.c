/* Wire format: CRC32C test vectors and the documented header layout (the
 * kernel and Linux hosts rely on these offsets). */
#include "tp_craft.h"

static uint32_t crc(const void *p, size_t n)
{
    return PTL_CRC32C_FINAL(ptl_crc32c(PTL_CRC32C_INIT, p, n));
}

static uint64_t at(const uint8_t *p, int off, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[off + i];
    return v;
}

static int tap_frames, tap_bad, tap_data_frames;
static bool tap_want_payload_crc;
static void tap(unsigned s, unsigned d, const uint8_t *f, size_t len);

int main(void)
{
    /* RFC 3720 (iSCSI) CRC32C vectors. */
    uint8_t z[32], ff[32], inc[32];
    memset(z, 0, 32);
    memset(ff, 0xff, 32);
    for (int i = 0; i < 32; i++)
        inc[i] = (uint8_t)i;
    CHECK(crc("123456789", 9) == 0xE3069283u);
    CHECK(crc(z, 32) == 0x8A9136AAu);
    CHECK(crc(ff, 32) == 0x62A8AB43u);
    CHECK(crc(inc, 32) == 0x46DD794Eu);
    /* Incremental == one shot. */
    uint32_t c = ptl_crc32c(PTL_CRC32C_INIT, "1234", 4);
    c = ptl_crc32c(c, "56789", 5);
    CHECK(PTL_CRC32C_FINAL(c) == 0xE3069283u);

    struct ptl_wire_hdr h = {
        .version = 1, .op = PTL_WOP_FETCH, .flags = 0x0a0b,
        .crc = 0x0c0d0e0f, .jid = 0x11121314, .uid = 0x15161718,
        .src_nid = 0x21222324, .src_pid = 0x25262728, .dst_nid = 0x31323334,
        .dst_pid = 0x35363738, .src_rank = 0x41424344, .pt_index = 0x45464748,
        .session = 0x51525354, .seq = 0x55565758, .ack_session = 0x61626364,
        .ack = 0x65666768, .sack = 0x7172737475767778ull,
        .match_bits = 0x8182838485868788ull,
        .remote_offset = 0x9192939495969798ull,
        .msg_len = 0xa1a2a3a4a5a6a7a8ull, .frag_off = 0xb1b2b3b4b5b6b7b8ull,
        .frag_len = 0xc1c2c3c4, .ni_type = 3, .ack_req = 2, .atomic_op = 11,
        .atomic_type = 9, .hdr_data = 0xd1d2d3d4d5d6d7d8ull,
        .msg_id = 0xe1e2e3e4e5e6e7e8ull, .operand = 0xf1f2f3f4f5f6f7f8ull,
        .mlength = 0x0102030405060708ull, .fail = 4, .xmit = 7, .ack_xmit = 5,
    };
    uint8_t b[PTL_WIRE_HDR_LEN];
    memset(b, 0xcc, sizeof(b));
    ptl_wire_encode(&h, b);
    CHECK(PTL_WIRE_HDR_LEN == 144 && PTL_ETHERTYPE == 0x88B5);
    CHECK(b[0] == 1 && b[1] == PTL_WOP_FETCH && at(b, 2, 2) == 0x0a0b);
    CHECK(at(b, 4, 4) == 0x0c0d0e0f && b[4] == 0x0f); /* little-endian */
    CHECK(at(b, 8, 4) == h.jid && at(b, 12, 4) == h.uid);
    CHECK(at(b, 16, 4) == h.src_nid && at(b, 20, 4) == h.src_pid);
    CHECK(at(b, 24, 4) == h.dst_nid && at(b, 28, 4) == h.dst_pid);
    CHECK(at(b, 32, 4) == h.src_rank && at(b, 36, 4) == h.pt_index);
    CHECK(at(b, 40, 4) == h.session && at(b, 44, 4) == h.seq);
    CHECK(at(b, 48, 4) == h.ack_session && at(b, 52, 4) == h.ack);
    CHECK(at(b, 56, 8) == h.sack && at(b, 64, 8) == h.match_bits);
    CHECK(at(b, 72, 8) == h.remote_offset && at(b, 80, 8) == h.msg_len);
    CHECK(at(b, 88, 8) == h.frag_off && at(b, 96, 4) == h.frag_len);
    CHECK(b[100] == 3 && b[101] == 2 && b[102] == 11 && b[103] == 9);
    CHECK(at(b, 104, 8) == h.hdr_data && at(b, 112, 8) == h.msg_id);
    CHECK(at(b, 120, 8) == h.operand && at(b, 128, 8) == h.mlength);
    CHECK(b[136] == 4 && b[137] == 7 && b[138] == 5);
    for (int i = 139; i < PTL_WIRE_HDR_LEN; i++)
        CHECK(b[i] == 0);
    struct ptl_wire_hdr d;
    memset(&d, 0, sizeof(d));
    ptl_wire_decode(b, &d);
    CHECK(memcmp(&d.sack, &h.sack, 8) == 0);
    CHECK(d.version == h.version && d.op == h.op && d.flags == h.flags &&
          d.crc == h.crc && d.jid == h.jid && d.uid == h.uid &&
          d.src_nid == h.src_nid && d.src_pid == h.src_pid &&
          d.dst_nid == h.dst_nid && d.dst_pid == h.dst_pid &&
          d.src_rank == h.src_rank && d.pt_index == h.pt_index &&
          d.session == h.session && d.seq == h.seq &&
          d.ack_session == h.ack_session && d.ack == h.ack &&
          d.match_bits == h.match_bits && d.remote_offset == h.remote_offset &&
          d.msg_len == h.msg_len && d.frag_off == h.frag_off &&
          d.frag_len == h.frag_len && d.ni_type == h.ni_type &&
          d.ack_req == h.ack_req && d.atomic_op == h.atomic_op &&
          d.atomic_type == h.atomic_type && d.hdr_data == h.hdr_data &&
          d.msg_id == h.msg_id && d.operand == h.operand &&
          d.mlength == h.mlength && d.fail == h.fail &&
          d.xmit == h.xmit && d.ack_xmit == h.ack_xmit);

    /* Frames the library sends never exceed the interface's frame size.
     * Where the link vouches for its frames they carry no checksum
     * (PTL_WF_LINKCRC, crc zero); where it does not, a valid CRC over
     * header + record + payload. */
    for (int mode = 0; mode < 2; mode++) {
    tap_frames = tap_bad = tap_data_frames = 0;
    tap_want_payload_crc = mode == 1;
    ptl_test_host_init(2, 1500);
    ptl_test_set_payload_crc(tap_want_payload_crc);
    ptl_test_set_tap(tap);
    OK(PtlInit());
    struct node A, B;
    tp_node(&A, 0, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    tp_node(&B, 1, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    static char src[10000], dst[10000];
    tp_fill(src, sizeof(src), 4);
    ptl_pt_index_t pt = tp_pt(&B, 0);
    ptl_me_t me = tp_me(dst, sizeof(dst), PTL_ME_OP_PUT, 0, ~0ull);
    ptl_handle_me_t mh;
    OK(PtlMEAppend(B.ni, pt, &me, PTL_PRIORITY_LIST, NULL, &mh));
    ptl_handle_md_t md = tp_md(&A, src, sizeof(src), 0, PTL_CT_NONE);
    OK(PtlPut(md, 0, sizeof(src), PTL_ACK_REQ, B.id, pt, 0, 0, NULL, 0));
    EXPECT_EVENT(A.eq, PTL_EVENT_SEND);
    EXPECT_EVENT(A.eq, PTL_EVENT_ACK);
    CHECK(memcmp(src, dst, sizeof(src)) == 0);
    CHECK(tap_frames > 0 && tap_bad == 0);
    /* 10000 bytes need ceil(10000 / (1500 - 144)) = 8 data frames. */
    CHECK(tap_data_frames == 8);
    /* A frame without a checksum is refused where frames can be damaged
     * (its flag could be a damaged bit), taken where they cannot. */
    struct ptl_wire_hdr z = tp_put_hdr(&B, pt, 0x1ff, 0x2000, 100, 0);
    z.flags |= PTL_WF_LINKCRC;
    static uint8_t f[PTL_WIRE_HDR_LEN + 100];
    size_t flen = tp_craft(f, &z, src, 100);
    memset(f + 4, 0, 4);
    ptl_event_t ev;
    while (PtlEQGet(B.eq, &ev) == PTL_OK)   /* the put's events */
        ;
    struct ptl_lib_stats st0, st1;
    ptl_lib_get_stats(1, &st0);
    ptl_lib_rx(1, f, flen);
    ptl_lib_get_stats(1, &st1);
    CHECK(st1.rx_bad_crc == st0.rx_bad_crc + (tap_want_payload_crc ? 1 : 0));
    if (tap_want_payload_crc) {
        CHECK_RC(PtlEQGet(B.eq, &ev), PTL_EQ_EMPTY);
    } else {
        OK(PtlEQGet(B.eq, &ev));
        CHECK(ev.type == PTL_EVENT_PUT && ev.mlength == 100);
    }
    PtlFini();
    }
    printf("test_wire: PASS\n");
    return 0;
}

static void tap(unsigned s, unsigned d, const uint8_t *f, size_t len)
{
    (void)d;
    tap_frames++;
    if (len < PTL_WIRE_HDR_LEN || len > 1500) {
        tap_bad++;
        return;
    }
    uint8_t copy[1500];
    memcpy(copy, f, len);
    memset(copy + 4, 0, 4);
    uint64_t flags = at(f, 2, 2);
    bool unchecked = flags & PTL_WF_LINKCRC;
    if (unchecked == tap_want_payload_crc || (flags & PTL_WF_HDRCRC))
        tap_bad++;
    if (unchecked ? at(f, 4, 4) != 0 : crc(copy, len) != (uint32_t)at(f, 4, 4))
        tap_bad++;
    if (s == 0 && f[1] == PTL_WOP_PUT)
        tap_data_frames++;
}
