/* Zero copy: payload pieces handed to the host point straight into the
 * user's buffer, and PTL_EVENT_SEND (buffer reusable) comes only after the
 * target holds every byte - the library never stages payload. */
#include "tp.h"
#include "ptl_host.h"
#include "ptl_wire.h"

/* User buffers the payload pieces may point into. */
static struct { const unsigned char *lo, *hi; } user[3];
static int n_user;
static unsigned long pieces, in_user, outside;

static void sg_tap(unsigned src, const struct ptl_sg *sg, int n)
{
    if (src != 0)
        return;
    for (int i = 1; i < n; i++) {
        const unsigned char *b = sg[i].base;
        pieces++;
        int ok = 0;
        for (int k = 0; k < n_user; k++)
            ok |= b >= user[k].lo && b + sg[i].len <= user[k].hi;
        if (ok)
            in_user++;
        else
            outside++;
    }
    if (n >= 1)
        CHECK(sg[0].len == PTL_WIRE_HDR_LEN);
}

int main(void)
{
    ptl_test_host_init(2, 1500);
    struct ptl_test_wire w = { .seed = 7, .loss_pct = 10, .dup_pct = 5,
                               .reorder_pct = 10, .latency_ns = 4000 };
    ptl_test_wire_config(&w);
    ptl_test_set_sg_tap(sg_tap);
    OK(PtlInit());
    struct node A, B;
    tp_node(&A, 0, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    tp_node(&B, 1, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    static unsigned char src[300000], dst[300000];
    static unsigned char p1[700], p2[5000], p3[33];
    user[0].lo = src;
    user[0].hi = src + sizeof(src);
    n_user = 1;
    tp_fill(src, sizeof(src), 3);
    ptl_pt_index_t pt = tp_pt(&B, 0);
    ptl_me_t me = tp_me(dst, sizeof(dst), PTL_ME_OP_PUT, 0, ~0ull);
    ptl_handle_me_t h;
    OK(PtlMEAppend(B.ni, pt, &me, PTL_PRIORITY_LIST, NULL, &h));
    EXPECT_EVENT(B.eq, PTL_EVENT_LINK);
    ptl_handle_md_t md = tp_md(&A, src, sizeof(src), 0, PTL_CT_NONE);
    for (int round = 0; round < 3; round++) {
        size_t off = (size_t)round * 1000, n = 250000 - (size_t)round * 7777;
        memset(dst, 0, sizeof(dst));
        OK(PtlPut(md, off, n, PTL_NO_ACK_REQ, B.id, pt, 0, 0, NULL, 0));
        ptl_event_t ev = EXPECT_EVENT(A.eq, PTL_EVENT_SEND);
        CHECK(ev.ni_fail_type == PTL_NI_OK);
        /* At SEND time every byte is already at the target. */
        CHECK(memcmp(dst, src + off, n) == 0);
        /* And the buffer may be reused at once: scribbling on it changes
         * nothing at the target (no late retransmission reads it). */
        memset(src + off, 0xEE, n);
        ev = EXPECT_EVENT(B.eq, PTL_EVENT_PUT);
        CHECK(ev.mlength == n);
        ptl_event_t dummy;
        unsigned wch;
        CHECK_RC(PtlEQPoll(&B.eq, 1, 1000, &dummy, &wch), PTL_EQ_EMPTY);
        tp_fill(src, sizeof(src), 3);
        for (size_t i = 0; i < n; i++)
            if (dst[i] == 0xEE && src[off + i] != 0xEE) {
                fprintf(stderr, "byte %zu changed after SEND\n", i);
                return 1;
            }
    }
    CHECK(pieces > 0 && outside == 0 && in_user == pieces);

    /* Iovec source: pieces point into each iovec element. */
    pieces = in_user = outside = 0;
    ptl_iovec_t iov[3] = { { p1, sizeof(p1) }, { p2, sizeof(p2) },
                           { p3, sizeof(p3) } };
    tp_fill(p1, sizeof(p1), 1);
    tp_fill(p2, sizeof(p2), 2);
    tp_fill(p3, sizeof(p3), 3);
    ptl_md_t d = { iov, 3, PTL_IOVEC, A.eq, PTL_CT_NONE };
    ptl_handle_md_t imd;
    OK(PtlMDBind(A.ni, &d, &imd));
    user[0].lo = p1;
    user[0].hi = p1 + sizeof(p1);
    user[1].lo = p2;
    user[1].hi = p2 + sizeof(p2);
    user[2].lo = p3;
    user[2].hi = p3 + sizeof(p3);
    n_user = 3;
    OK(PtlPut(imd, 0, sizeof(p1) + sizeof(p2) + sizeof(p3), PTL_NO_ACK_REQ,
              B.id, pt, 0, 0, NULL, 0));
    EXPECT_EVENT(A.eq, PTL_EVENT_SEND);
    EXPECT_EVENT(B.eq, PTL_EVENT_PUT);
    CHECK(memcmp(dst, p1, sizeof(p1)) == 0);
    CHECK(memcmp(dst + sizeof(p1), p2, sizeof(p2)) == 0);
    CHECK(memcmp(dst + sizeof(p1) + sizeof(p2), p3, sizeof(p3)) == 0);
    /* 5 frames, two of them spanning two elements: at least 7 pieces. */
    CHECK(pieces >= 7 && outside == 0);
    PtlFini();
    printf("test_zerocopy: PASS\n");
    return 0;
}
