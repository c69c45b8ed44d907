/* Malformed frames are dropped and counted, never write outside a buffer,
 * never crash; then random garbage and mutated frames (fuzzing). */
#include "tp_craft.h"

#define FAKE_NID 0x1ff /* a node that does not exist on the test wire */
#define GUARD 4096

static struct node A, B;
static ptl_pt_index_t PT;
static uint32_t fake_session = 0x1000;
static unsigned char *arena;          /* guard | buf | guard */
static unsigned char *buf;            /* B's ME buffer */
static const size_t BUFLEN = 1000;

static size_t craft(uint8_t *f, struct ptl_wire_hdr *h, const void *payload,
                    uint32_t plen)
{
    return tp_craft(f, h, payload, plen);
}

static struct ptl_wire_hdr put_hdr(uint64_t msg_len, uint64_t roff)
{
    return tp_put_hdr(&B, PT, FAKE_NID, fake_session++, msg_len, roff);
}

static void check_guards(void)
{
    for (size_t i = 0; i < GUARD; i++) {
        CHECK(arena[i] == 0xEE);
        CHECK(arena[GUARD + BUFLEN + i] == 0xEE);
    }
}

static struct ptl_lib_stats st;
static uint64_t *field(struct ptl_lib_stats *s, int k)
{
    uint64_t *f[] = { &s->rx_short, &s->rx_bad_version, &s->rx_bad_crc,
                      &s->rx_bad_op, &s->rx_bad_field, &s->rx_not_for_us };
    return f[k];
}
enum { SHORT, VERSION, CRC, OP, FIELD, NOTUS };

/* Inject; exactly counter `k` must move, and by one. */
static void expect_drop(const uint8_t *f, size_t len, int k, int line)
{
    struct ptl_lib_stats before, after;
    ptl_lib_get_stats(1, &before);
    ptl_lib_rx(1, f, len);
    ptl_lib_get_stats(1, &after);
    for (int i = 0; i <= NOTUS; i++) {
        uint64_t want = *field(&before, i) + (i == k);
        if (*field(&after, i) != want) {
            fprintf(stderr, "line %d: counter %d is %llu, want %llu\n", line,
                    i, (unsigned long long)*field(&after, i),
                    (unsigned long long)want);
            exit(1);
        }
    }
    CHECK(after.rx_frames == before.rx_frames + 1);
}
#define DROP(f, len, k) expect_drop(f, len, k, __LINE__)

static void classes(void)
{
    static uint8_t f[4096], pay[2048];
    memset(pay, 0x77, sizeof(pay));
    struct ptl_wire_hdr h = put_hdr(100, 0);
    size_t len = craft(f, &h, pay, 100);

    DROP(f, 0, SHORT);
    DROP(f, 10, SHORT);
    DROP(f, PTL_WIRE_HDR_LEN - 1, SHORT);
    f[0] = 2;
    tp_seal(f, len);
    DROP(f, len, VERSION);
    f[0] = PTL_WIRE_VERSION;
    tp_seal(f, len);
    f[PTL_WIRE_HDR_LEN + 3] ^= 1; /* payload bit flip */
    DROP(f, len, CRC);
    f[PTL_WIRE_HDR_LEN + 3] ^= 1;
    f[20] ^= 0x40; /* header bit flip */
    DROP(f, len, CRC);
    f[20] ^= 0x40;
    DROP(f, len - 1, SHORT); /* truncated: frag_len says more than arrived */
    f[1] = 99;
    tp_seal(f, len);
    DROP(f, len, OP);
    f[1] = PTL_WOP_PUT;
    f[3] = 0x80; /* unknown flag */
    tp_seal(f, len);
    DROP(f, len, OP);
    f[3] = 0;

    /* PTL_WF_HDRCRC frames: the crc covers the header only, and the flag
     * is part of what it covers. */
    struct ptl_wire_hdr y = put_hdr(100, 0);
    y.flags |= PTL_WF_HDRCRC;
    len = craft(f, &y, pay, 100);  /* sealed over header + payload */
    DROP(f, len, CRC);             /* the flag says header only: mismatch */
    tp_seal_hdr(f);
    f[20] ^= 0x40;                 /* header bit flip */
    DROP(f, len, CRC);
    f[20] ^= 0x40;
    f[2] ^= PTL_WF_HDRCRC;         /* the flag lost: now it claims header + payload */
    DROP(f, len, CRC);
    f[2] ^= PTL_WF_HDRCRC;
    DROP(f, PTL_WIRE_HDR_LEN + 99, SHORT); /* truncated: frag_len says 100 */

    /* PTL_WF_LINKCRC frames carry no checksum: crc zero.  One with a crc,
     * or with the header-only flag beside it, is a damaged frame. */
    struct ptl_wire_hdr z = put_hdr(100, 0);
    z.flags |= PTL_WF_LINKCRC;
    len = craft(f, &z, pay, 100);  /* sealed: its crc is not zero */
    DROP(f, len, CRC);
    memset(f + 4, 0, 4);
    f[2] ^= PTL_WF_HDRCRC;
    DROP(f, len, CRC);
    f[2] ^= PTL_WF_HDRCRC;
    DROP(f, PTL_WIRE_HDR_LEN + 99, SHORT); /* still checked for its length */

    struct ptl_wire_hdr x;
    /* frag_len disagrees with the frame length */
    x = put_hdr(100, 0);
    len = craft(f, &x, pay, 100);
    ptl_wput(f + 96, 150, 4);
    tp_seal(f, len);
    DROP(f, len, SHORT);
    /* fragment beyond the message; offsets that overflow */
    x = put_hdr(100, 0);
    x.flags = PTL_WF_SEQ;
    x.frag_off = 50;
    len = craft(f, &x, pay, 100);
    DROP(f, len, FIELD);
    x.frag_off = ~0ull - 10;
    len = craft(f, &x, pay, 100);
    DROP(f, len, FIELD);
    /* first fragment not at offset 0 */
    x = put_hdr(300, 0);
    x.flags = PTL_WF_SEQ | PTL_WF_FIRST;
    x.frag_off = 100;
    len = craft(f, &x, pay, 100);
    DROP(f, len, FIELD);
    /* message larger than max_msg_size */
    x = put_hdr(B.lim.max_msg_size + 1, 0);
    x.flags = PTL_WF_SEQ | PTL_WF_FIRST;
    len = craft(f, &x, pay, 100);
    DROP(f, len, FIELD);
    /* portal index that cannot exist */
    x = put_hdr(100, 0);
    x.pt_index = 4000;
    len = craft(f, &x, pay, 100);
    DROP(f, len, FIELD);
    /* atomics: bad type, bad op, ragged length, split over frames */
    x = put_hdr(8, 0);
    x.op = PTL_WOP_ATOMIC;
    x.atomic_type = 77;
    len = craft(f, &x, pay, 8);
    DROP(f, len, FIELD);
    x.atomic_type = PTL_INT32_T;
    x.atomic_op = 55;
    len = craft(f, &x, pay, 8);
    DROP(f, len, FIELD);
    x.atomic_op = PTL_SUM;
    x.msg_len = 6;
    len = craft(f, &x, pay, 6);
    DROP(f, len, FIELD);
    x.atomic_op = PTL_BOR;
    x.atomic_type = PTL_DOUBLE;
    x.msg_len = 8;
    len = craft(f, &x, pay, 8);
    DROP(f, len, FIELD);
    x = put_hdr(16, 0);
    x.op = PTL_WOP_ATOMIC;
    x.atomic_type = PTL_INT64_T;
    len = craft(f, &x, pay, 8); /* claims 16, carries 8 */
    DROP(f, len, FIELD);
    /* fetching atomics larger than max_fetch_atomic_size (their old
     * values are kept for the reply), compare-and-swap on two elements */
    x = put_hdr(B.lim.max_fetch_atomic_size + 8, 0);
    x.op = PTL_WOP_FETCH;
    x.atomic_op = PTL_SUM;
    x.atomic_type = PTL_INT64_T;
    len = craft(f, &x, pay, (uint32_t)x.msg_len);
    DROP(f, len, FIELD);
    x = put_hdr(16, 0);
    x.op = PTL_WOP_SWAP;
    x.atomic_op = PTL_CSWAP;
    x.atomic_type = PTL_INT64_T;
    len = craft(f, &x, pay, 16);
    DROP(f, len, FIELD);
    /* a get carrying payload; bad ack type; reliability ack with data */
    x = put_hdr(100, 0);
    x.op = PTL_WOP_GET;
    len = craft(f, &x, pay, 10);
    DROP(f, len, FIELD);
    x = put_hdr(100, 0);
    x.ack_req = 9;
    len = craft(f, &x, pay, 100);
    DROP(f, len, FIELD);
    x = put_hdr(10, 0);
    x.op = PTL_WOP_RACK;
    x.flags = PTL_WF_ACKV;
    len = craft(f, &x, pay, 10);
    DROP(f, len, OP);
    /* not for us: wrong nid, wrong pid, NI type nobody opened */
    x = put_hdr(100, 0);
    x.dst_nid = 0x555;
    len = craft(f, &x, pay, 100);
    DROP(f, len, NOTUS);
    x.dst_nid = B.id.phys.nid;
    x.dst_pid = 3;
    len = craft(f, &x, pay, 100);
    DROP(f, len, NOTUS);
    x.dst_pid = B.id.phys.pid;
    x.ni_type = PTL_WNI_LOGICAL;
    len = craft(f, &x, pay, 100);
    DROP(f, len, NOTUS);
    check_guards();
    printf("malformed classes dropped and counted\n");
}

/* Well-formed frames whose lengths/offsets exceed the target buffer: the
 * data is truncated to the buffer, never written past it. */
static void bounds(void)
{
    static uint8_t f[4096], pay[1400];
    memset(pay, 0x33, sizeof(pay));
    memset(buf, 0, BUFLEN);
    /* Offset near the end, long message in several frames. */
    struct ptl_wire_hdr x = put_hdr(5000, BUFLEN - 10);
    x.flags = PTL_WF_SEQ | PTL_WF_FIRST;
    size_t len = craft(f, &x, pay, 1000);
    ptl_lib_rx(1, f, len);
    check_guards();
    for (size_t i = BUFLEN - 10; i < BUFLEN; i++)
        CHECK(buf[i] == 0x33);
    /* Later fragments, in order and out of order, all past the end. */
    uint32_t sess = x.session;
    for (int k = 3; k >= 1; k--) {
        x.flags = PTL_WF_SEQ | (k == 4 ? PTL_WF_LAST : 0);
        x.seq = (uint32_t)k;
        x.frag_off = (uint64_t)k * 1000;
        x.session = sess;
        len = craft(f, &x, pay, 1000);
        ptl_lib_rx(1, f, len);
        check_guards();
    }
    x.flags = PTL_WF_SEQ | PTL_WF_LAST;
    x.seq = 4;
    x.frag_off = 4000;
    len = craft(f, &x, pay, 1000);
    ptl_lib_rx(1, f, len);
    check_guards();
    ptl_event_t ev = EXPECT_EVENT(B.eq, PTL_EVENT_PUT);
    CHECK(ev.rlength == 5000 && ev.mlength == 10 &&
          ev.start == buf + BUFLEN - 10);
    for (size_t i = 0; i < BUFLEN - 10; i++)
        CHECK(buf[i] == 0);
    /* Offset entirely past the end: zero bytes. */
    x = put_hdr(1000, BUFLEN + 5);
    len = craft(f, &x, pay, 1000);
    ptl_lib_rx(1, f, len);
    ev = EXPECT_EVENT(B.eq, PTL_EVENT_PUT);
    CHECK(ev.mlength == 0);
    x = put_hdr(1000, ~0ull - 3);
    len = craft(f, &x, pay, 1000);
    ptl_lib_rx(1, f, len);
    ev = EXPECT_EVENT(B.eq, PTL_EVENT_PUT);
    CHECK(ev.mlength == 0);
    check_guards();
    printf("bounds ok\n");
}

static void fuzz(int iters)
{
    static uint8_t f[4096];
    uint64_t frames0;
    ptl_lib_get_stats(1, &st);
    frames0 = st.rx_frames;
    for (int i = 0; i < iters; i++) {
        size_t len;
        int mode = (int)(ptl_test_rand() % 4);
        if (mode == 3) {
            /* Protocol-valid frames with hostile contents: they pass the
             * checks and drive matching, placement, responses and the
             * sequence/session logic of a few fake peers. */
            struct ptl_wire_hdr x = put_hdr(0, 0);
            static const uint8_t ops[] = { PTL_WOP_PUT, PTL_WOP_PUT,
                                           PTL_WOP_GET, PTL_WOP_ATOMIC,
                                           PTL_WOP_FETCH, PTL_WOP_SWAP,
                                           PTL_WOP_ACK, PTL_WOP_REPLY,
                                           PTL_WOP_RACK };
            x.op = ops[ptl_test_rand() % sizeof(ops)];
            x.session = (uint32_t)(ptl_test_rand() % 3);
            x.src_pid = (uint32_t)(ptl_test_rand() % 3);
            x.seq = (uint32_t)(ptl_test_rand() % 6);
            x.msg_id = ptl_test_rand() % 3;
            x.msg_len = ptl_test_rand() % 2500;
            uint32_t plen = (uint32_t)(ptl_test_rand() % 1300);
            if (plen > x.msg_len)
                plen = (uint32_t)x.msg_len;
            x.frag_off = x.msg_len - plen ? ptl_test_rand() % (x.msg_len - plen + 1)
                                          : 0;
            x.flags = PTL_WF_SEQ;
            if (ptl_test_rand() % 2) {
                x.flags |= PTL_WF_FIRST;
                x.frag_off = 0;
            }
            if (x.frag_off + plen == x.msg_len)
                x.flags |= PTL_WF_LAST;
            if (ptl_test_rand() % 2) {
                x.flags |= PTL_WF_ACKV;
                x.ack_session = (uint32_t)(ptl_test_rand() % 3);
                x.ack = (uint32_t)(ptl_test_rand() % 8);
                x.sack = ptl_test_rand();
            }
            if (x.op == PTL_WOP_GET)
                plen = 0;
            if (x.op >= PTL_WOP_ATOMIC && x.op <= PTL_WOP_SWAP) {
                x.atomic_type = PTL_INT32_T;
                x.atomic_op = x.op == PTL_WOP_SWAP ? PTL_CSWAP : PTL_SUM;
                x.msg_len = plen = 4 * (uint32_t)(1 + ptl_test_rand() % 160);
                if (x.op == PTL_WOP_SWAP)
                    x.msg_len = plen = 4;
                x.frag_off = 0;
                x.flags |= PTL_WF_FIRST | PTL_WF_LAST;
            }
            if (x.op == PTL_WOP_RACK) {
                x.flags = PTL_WF_ACKV;
                x.msg_len = plen = 0;
                x.frag_off = 0;
            }
            x.ack_req = (uint8_t)(ptl_test_rand() % 4);
            x.remote_offset = ptl_test_rand() % 3 ? ptl_test_rand() % 1200
                                                  : ptl_test_rand();
            x.match_bits = ptl_test_rand() % 3;
            static uint8_t pay[1400];
            for (uint32_t k = 0; k < plen; k++)
                pay[k] = (uint8_t)ptl_test_rand();
            len = craft(f, &x, pay, plen);
        } else if (mode == 0) {
            /* Pure garbage, any length. */
            len = (size_t)(ptl_test_rand() % 2000);
            for (size_t k = 0; k < len; k++)
                f[k] = (uint8_t)ptl_test_rand();
        } else {
            /* A plausible frame with random fields, resealed so it gets
             * past the CRC and exercises the field checks. */
            struct ptl_wire_hdr x = put_hdr(0, 0);
            x.op = (uint8_t)(1 + ptl_test_rand() % 9);
            x.flags = (uint16_t)(ptl_test_rand() & 0x3f);
            x.msg_len = ptl_test_rand() % 3 ? ptl_test_rand() % 3000
                                            : ptl_test_rand();
            x.frag_off = ptl_test_rand() % 2 ? 0 : ptl_test_rand() % 4000;
            x.remote_offset = ptl_test_rand() % 2 ? ptl_test_rand() % 1200
                                                  : ptl_test_rand();
            x.seq = (uint32_t)(ptl_test_rand() % 80);
            x.session = (uint32_t)(ptl_test_rand() % 8);
            x.src_pid = (uint32_t)(ptl_test_rand() % 4);
            x.atomic_op = (uint8_t)(ptl_test_rand() % 20);
            x.atomic_type = (uint8_t)(ptl_test_rand() % 16);
            x.ack_req = (uint8_t)(ptl_test_rand() % 5);
            x.msg_id = ptl_test_rand() % 4;
            x.match_bits = ptl_test_rand() % 3;
            x.pt_index = ptl_test_rand() % 4 ? PT : ptl_test_rand() % 300;
            x.ack = (uint32_t)(ptl_test_rand() % 100);
            x.sack = ptl_test_rand();
            x.ack_session = (uint32_t)(ptl_test_rand() % 8);
            uint32_t plen = (uint32_t)(ptl_test_rand() % 1300);
            for (uint32_t k = 0; k < plen; k++)
                f[PTL_WIRE_HDR_LEN + k] = (uint8_t)ptl_test_rand();
            static uint8_t pay[1400];
            memcpy(pay, f + PTL_WIRE_HDR_LEN, plen);
            len = craft(f, &x, pay, plen);
            if (mode == 2) { /* and then damaged */
                f[ptl_test_rand() % len] ^= (uint8_t)(1 + ptl_test_rand() % 255);
                if (ptl_test_rand() % 2)
                    tp_seal(f, len);
            }
        }
        ptl_lib_rx(1, f, len);
        if (i % 1000 == 0) {
            ptl_lib_progress();
            ptl_event_t ev;
            while (PtlEQGet(B.eq, &ev) != PTL_EQ_EMPTY)
                ;
        }
    }
    ptl_lib_get_stats(1, &st);
    CHECK(st.rx_frames - frames0 == (uint64_t)iters);
    check_guards();
    /* Drain events the fuzz may legitimately have produced (puts that
     * matched); the EQ is sized to absorb them. */
    ptl_event_t ev;
    int rc;
    while ((rc = PtlEQGet(B.eq, &ev)) == PTL_OK || rc == PTL_EQ_DROPPED)
        ;
    printf("fuzz: %d frames; short %llu version %llu crc %llu op %llu field "
           "%llu notus %llu stale %llu dup %llu window %llu ooo %llu+%llu\n",
           iters,
           (unsigned long long)st.rx_short,
           (unsigned long long)st.rx_bad_version,
           (unsigned long long)st.rx_bad_crc, (unsigned long long)st.rx_bad_op,
           (unsigned long long)st.rx_bad_field,
           (unsigned long long)st.rx_not_for_us,
           (unsigned long long)st.rx_stale, (unsigned long long)st.rx_dup,
           (unsigned long long)st.rx_window,
           (unsigned long long)st.rx_ooo_placed,
           (unsigned long long)st.rx_ooo_dropped);
}

/* A frame handed over with its header and payload apart (ptl_lib_rx_parts:
 * a host looping frames between processes of one node by reference) is
 * checked as a whole one: the payload checksummed where the header says so,
 * a short one or a header of any other length refused;
 * a good one lands in the matched buffer, copied from where the payload lay. */
static void parts(void)
{
    static uint8_t f[4096], pay[100];
    for (size_t i = 0; i < sizeof(pay); i++)
        pay[i] = (uint8_t)(i * 7 + 1);
    struct ptl_lib_stats before, after;
    struct ptl_wire_hdr x = put_hdr(100, 0);
    craft(f, &x, pay, 100);
    ptl_lib_get_stats(1, &before);
    pay[3] ^= 1;                   /* damaged where it lies: the crc covers it */
    ptl_lib_rx_parts(1, f, PTL_WIRE_HDR_LEN, pay, 100);
    pay[3] ^= 1;
    ptl_lib_rx_parts(1, f, PTL_WIRE_HDR_LEN, pay, 99);      /* cut short */
    ptl_lib_rx_parts(1, f, PTL_WIRE_HDR_LEN - 1, pay, 100); /* no whole header */
    ptl_lib_rx_parts(1, f, PTL_WIRE_HDR_LEN, NULL, 100);    /* no payload: ignored */
    ptl_lib_get_stats(1, &after);
    CHECK(after.rx_bad_crc == before.rx_bad_crc + 1);
    CHECK(after.rx_short == before.rx_short + 2);
    CHECK(after.rx_frames == before.rx_frames + 3);
    memset(buf, 0, BUFLEN);
    ptl_lib_rx_parts(1, f, PTL_WIRE_HDR_LEN, pay, 100);
    ptl_event_t ev = EXPECT_EVENT(B.eq, PTL_EVENT_PUT);
    CHECK(ev.mlength == 100 && ev.start == buf);
    CHECK(memcmp(buf, pay, 100) == 0);
    /* Header-only checksum (PTL_WF_HDRCRC): the payload is the link's. */
    x = put_hdr(100, 0);
    x.flags |= PTL_WF_HDRCRC;
    craft(f, &x, pay, 100);
    tp_seal_hdr(f);
    memset(buf, 0, BUFLEN);
    ptl_lib_rx_parts(1, f, PTL_WIRE_HDR_LEN, pay, 100);
    ev = EXPECT_EVENT(B.eq, PTL_EVENT_PUT);
    CHECK(ev.mlength == 100 && memcmp(buf, pay, 100) == 0);
    /* No checksum at all (PTL_WF_LINKCRC): the frame is the link's. */
    x = put_hdr(100, 0);
    x.flags |= PTL_WF_LINKCRC;
    craft(f, &x, pay, 100);
    memset(f + 4, 0, 4);
    memset(buf, 0, BUFLEN);
    ptl_lib_rx_parts(1, f, PTL_WIRE_HDR_LEN, pay, 100);
    ev = EXPECT_EVENT(B.eq, PTL_EVENT_PUT);
    CHECK(ev.mlength == 100 && memcmp(buf, pay, 100) == 0);
    check_guards();
    printf("frames in parts checked as whole ones\n");
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 200000;
    ptl_test_host_init(2, 1500);
    OK(PtlInit());
    tp_node(&A, 0, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    tp_node(&B, 1, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    arena = malloc(2 * GUARD + BUFLEN);
    CHECK(arena);
    memset(arena, 0xEE, 2 * GUARD + BUFLEN);
    buf = arena + GUARD;
    memset(buf, 0, BUFLEN);
    PT = tp_pt(&B, 0);
    ptl_me_t me = tp_me(buf, BUFLEN, PTL_ME_OP_PUT | PTL_ME_OP_GET |
                        PTL_ME_EVENT_LINK_DISABLE, 0, ~0ull);
    ptl_handle_me_t h;
    OK(PtlMEAppend(B.ni, PT, &me, PTL_PRIORITY_LIST, NULL, &h));
    classes();
    bounds();
    parts();
    fuzz(iters);
    /* The node still works normally afterwards. */
    static char src[3000];
    tp_fill(src, sizeof(src), 8);
    ptl_handle_md_t md = tp_md(&A, src, sizeof(src), 0, PTL_CT_NONE);
    OK(PtlPut(md, 0, BUFLEN, PTL_ACK_REQ, B.id, PT, 0, 0, NULL, 0));
    CHECK(EXPECT_EVENT(A.eq, PTL_EVENT_SEND).ni_fail_type == PTL_NI_OK);
    CHECK(EXPECT_EVENT(A.eq, PTL_EVENT_ACK).ni_fail_type == PTL_NI_OK);
    CHECK(memcmp(buf, src, BUFLEN) == 0);
    check_guards();
    PtlFini();
    printf("test_malformed: PASS\n");
    return 0;
}
