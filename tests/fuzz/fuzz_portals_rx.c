/* libFuzzer harness: the Portals receive path (portals/lib/rx.c and all it
 * calls: reliability, matching, placement, atomics, responses), fed
 * arbitrary frames on the in-process test wire (portals/host/test/).
 *
 * The world: node B (interface 1) with a matching physical NI (MEs on the
 * priority and overflow lists: plain, locally managed, use-once, counted,
 * on a flow-controlled portal), a non-matching NI (LEs) and a logical NI
 * (a two-rank map), and node A (interface 0), a live peer that B's acks
 * and replies reach.  Buffers are separate heap blocks of their exact
 * size, so AddressSanitizer catches a byte placed outside them.  Built
 * once (building it per input cost ~1 ms); after each input the entries
 * are re-posted, the portals enabled and the peers the input spoke as
 * forgotten, and every 256 inputs it is rebuilt.
 *
 * Input: a sequence of records  [ctl:1] [len:2, little-endian] [len bytes]
 * handed to B's interface as frames.  ctl bit 0: recompute the CRC (else a
 * frame almost never gets past it); bit 1: set frag_len to the payload the
 * record carries; bit 2: let time pass and the wire deliver afterwards
 * (timers, retransmissions, responses); bit 3: B's program makes its
 * fourth NI (non-matching, logical) now and uses it, so frames kept for it
 * before (park.c: B keeps frames for an NI not yet made, as a Tern node
 * does) are handed over.  The NI goes again at the input's end, with
 * whatever is still kept.  TERN_FUZZ_SEEDS=DIR writes seed inputs
 * (well-formed frames of each kind) into DIR and exits. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "tp_craft.h"
#include "ptl_host.h"
#include "ptl_internal.h"             /* ptl_park_drop_iface: each input starts with none kept */

static struct node A, B, Bn, Bl, Bp;
static ptl_pt_index_t pt_b, pt_fc, pt_n, pt_l, pt_p;
static bool bp_up;
static void *bp_buf;
static ptl_handle_ct_t ct_b;
static ptl_handle_eq_t eq_small;

/* The entries each input starts with; re-posted (fresh, zeroed) after it. */
struct entry {
    struct node *n;
    ptl_pt_index_t *pt;
    size_t len;
    unsigned opts;
    ptl_match_bits_t bits, ignore;
    ptl_list_t list;
    bool le, counted;
    void *buf;
    ptl_handle_me_t h;
};
static struct entry entries[] = {
    {&B, &pt_b, 1000, PTL_ME_OP_PUT | PTL_ME_OP_GET, 0, 0, PTL_PRIORITY_LIST, 0, 0, 0, 0},
    {&B, &pt_b, 4096, PTL_ME_OP_PUT | PTL_ME_OP_GET | PTL_ME_MANAGE_LOCAL, 1, 0,
     PTL_PRIORITY_LIST, 0, 0, 0, 0},
    {&B, &pt_b, 64, PTL_ME_OP_PUT | PTL_ME_OP_GET | PTL_ME_USE_ONCE | PTL_ME_EVENT_CT_COMM, 2,
     0, PTL_PRIORITY_LIST, 0, 1, 0, 0},
    {&B, &pt_b, 256, PTL_ME_OP_PUT | PTL_ME_OP_GET | PTL_ME_NO_TRUNCATE, 3, 0,
     PTL_PRIORITY_LIST, 0, 0, 0, 0},
    {&B, &pt_b, 2048, PTL_ME_OP_PUT | PTL_ME_MANAGE_LOCAL, 0, ~0ull, PTL_OVERFLOW_LIST, 0, 0, 0,
     0},
    {&B, &pt_fc, 1000, PTL_ME_OP_PUT | PTL_ME_OP_GET, 0, ~0ull, PTL_PRIORITY_LIST, 0, 0, 0, 0},
    {&Bn, &pt_n, 512, PTL_ME_OP_PUT | PTL_ME_OP_GET, 0, 0, PTL_PRIORITY_LIST, 1, 0, 0, 0},
    {&Bn, &pt_n, 512, PTL_ME_OP_PUT | PTL_ME_USE_ONCE, 0, 0, PTL_PRIORITY_LIST, 1, 0, 0, 0},
    {&Bl, &pt_l, 1000, PTL_ME_OP_PUT | PTL_ME_OP_GET, 0, ~0ull, PTL_PRIORITY_LIST, 0, 0, 0, 0},
};
#define NENTRIES (sizeof entries / sizeof entries[0])

/* Posts e on a fresh buffer of exactly its length (ASan's bounds). */
static bool post(struct entry *e)
{
    free(e->buf);
    e->buf = calloc(1, e->len);
    if (!e->buf)
        abort();
    ptl_me_t me = tp_me(e->buf, e->len, e->opts, e->bits, e->ignore);
    me.ct_handle = e->counted ? ct_b : PTL_CT_NONE;
    if (e->n == &Bl)          /* a logical NI's wildcard is a rank: any */
        me.match_id.rank = PTL_RANK_ANY;
    if (e->opts & PTL_ME_MANAGE_LOCAL)
        me.min_free = 128;
    if (e->le) {
        ptl_le_t le;
        memset(&le, 0, sizeof le);
        le.start = me.start;
        le.length = me.length;
        le.ct_handle = me.ct_handle;
        le.uid = me.uid;
        le.options = me.options;
        return PtlLEAppend(e->n->ni, *e->pt, &le, e->list, NULL, &e->h) == PTL_OK;
    }
    return PtlMEAppend(e->n->ni, *e->pt, &me, e->list, NULL, &e->h) == PTL_OK;
}

/* Small tables: running out of unexpected headers, response slots or
 * events is reachable. */
static void node_up(struct node *n, unsigned iface, unsigned opts)
{
    ptl_ni_limits_t want = {.max_entries = 32, .max_unexpected_headers = 16,
                            .max_mds = 16, .max_cts = 8, .max_eqs = 8,
                            .max_triggered_ops = 8, .max_iovecs = 16};
    memset(n, 0, sizeof(*n));
    n->iface = iface;
    OK(PtlNIInit(iface, opts, PTL_PID_ANY, &want, &n->lim, &n->ni));
    OK(PtlEQAlloc(n->ni, 64, &n->eq));
    OK(PtlGetPhysId(n->ni, &n->id));
}

static void world_up(void)
{
    ptl_test_host_init(2, 1500);
    OK(PtlInit());
    struct ptl_lib_tunables t;
    ptl_lib_get_tunables(&t);
    t.park_frames = PTL_PARK_MAX;
    ptl_lib_set_tunables(&t);
    node_up(&A, 0, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    node_up(&B, 1, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    node_up(&Bn, 1, PTL_NI_NO_MATCHING | PTL_NI_PHYSICAL);
    node_up(&Bl, 1, PTL_NI_MATCHING | PTL_NI_LOGICAL);
    ptl_process_t map[2] = {tp_phys(0), tp_phys(1)};
    OK(PtlSetMap(Bl.ni, 2, map));
    pt_b = tp_pt(&B, 0);
    OK(PtlCTAlloc(B.ni, &ct_b));
    /* A flow-controlled portal with a tiny event queue: it disables. */
    OK(PtlEQAlloc(B.ni, 2, &eq_small));
    OK(PtlPTAlloc(B.ni, PTL_PT_FLOWCTRL, eq_small, PTL_PT_ANY, &pt_fc));
    pt_n = tp_pt(&Bn, 0);
    pt_l = tp_pt(&Bl, 0);
    for (size_t i = 0; i < NENTRIES; i++)
        CHECK(post(&entries[i]));
}

/* B's late NI: made, given a portal and a 200-byte LE (a kept frame
 * carries at most PTL_PARK_PAYLOAD_MAX), and used (an event queue looked
 * at: ptl_ni_receiving), then progress hands the kept frames to it. */
static void bp_make(void)
{
    if (bp_up)
        return;
    node_up(&Bp, 1, PTL_NI_NO_MATCHING | PTL_NI_LOGICAL);
    ptl_process_t map[2] = {tp_phys(0), tp_phys(1)};
    OK(PtlSetMap(Bp.ni, 2, map));
    pt_p = tp_pt(&Bp, 0);
    free(bp_buf);
    bp_buf = calloc(1, 200);
    if (!bp_buf)
        abort();
    ptl_le_t le;
    memset(&le, 0, sizeof le);
    le.start = bp_buf;
    le.length = 200;
    le.ct_handle = PTL_CT_NONE;
    le.uid = PTL_UID_ANY;
    le.options = PTL_LE_OP_PUT | PTL_LE_OP_GET;
    ptl_handle_le_t h;
    CHECK(PtlLEAppend(Bp.ni, pt_p, &le, PTL_PRIORITY_LIST, NULL, &h) == PTL_OK);
    ptl_event_t ev;
    PtlEQGet(Bp.eq, &ev);
    bp_up = true;
    ptl_lib_progress();
}

static void bp_gone(void)
{
    if (bp_up) {
        ptl_test_drain();
        PtlNIFini(Bp.ni);
        bp_up = false;
    }
    ptl_park_drop_iface(1);
}

static void world_down(void)
{
    bp_gone();
    ptl_test_drain();
    PtlNIFini(Bl.ni);
    PtlNIFini(Bn.ni);
    PtlNIFini(B.ni);
    PtlNIFini(A.ni);
    PtlFini();
    ptl_test_drain();
}

static void drain_eqs(void)
{
    ptl_handle_eq_t eqs[] = {A.eq, B.eq, Bn.eq, Bl.eq, eq_small, Bp.eq};
    ptl_event_t ev;
    for (unsigned i = 0; i < sizeof eqs / sizeof eqs[0] - !bp_up; i++)
        for (int k = 0; k < 4096; k++) {
            int rc = PtlEQGet(eqs[i], &ev);
            if (rc != PTL_OK && rc != PTL_EQ_DROPPED)
                break;
        }
}

/* Time passes until nothing is in flight and no timer is due. */
static void settle(void)
{
    for (int i = 0; i < 64; i++) {
        ptl_test_drain();
        ptl_lib_progress();
        drain_eqs();
        uint64_t next = ptl_lib_next_deadline();
        if (next == UINT64_MAX)
            break;
        /* Returns at the deadline (or a delivery), in simulated time. */
        ptl_host_wait(next);
    }
    ptl_test_drain();
    drain_eqs();
}

/* Back to the state every input starts from: entries re-posted, portals
 * enabled, the peers the input spoke as forgotten.  Now and then (or when
 * that fails) the whole world is rebuilt, which also empties the
 * unexpected-header lists. */
static void reset(const uint32_t (*src)[2], int nsrc)
{
    static unsigned inputs;
    bool ok = ++inputs % 256 != 0;
    bp_gone();
    for (int i = 0; i < nsrc && ok; i++)
        ptl_lib_forget_peer(1, src[i][0], src[i][1]);
    PtlPTEnable(B.ni, pt_fc);
    PtlPTEnable(B.ni, pt_b);
    PtlPTEnable(Bn.ni, pt_n);
    PtlPTEnable(Bl.ni, pt_l);
    for (size_t i = 0; i < NENTRIES && ok; i++) {
        struct entry *e = &entries[i];
        int rc = e->le ? PtlLEUnlink(e->h) : PtlMEUnlink(e->h);
        ok = rc != PTL_IN_USE && post(e);
    }
    if (!ok) {
        world_down();
        world_up();
    }
}

static void fuzz_setup(void) { world_up(); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t f[65536 + 16];
    static uint32_t src[4096][2];
    int nsrc = 0;
    size_t at = 0;
    while (size - at >= 3) {
        uint8_t ctl = data[at];
        size_t len = (size_t)data[at + 1] | (size_t)data[at + 2] << 8;
        at += 3;
        if (len > size - at)
            len = size - at;
        memcpy(f, data + at, len);
        at += len;
        if ((ctl & 2) && len >= PTL_WIRE_HDR_LEN)
            ptl_wput(f + 96, len - PTL_WIRE_HDR_LEN, 4);
        if ((ctl & 1) && len >= 8)
            tp_seal(f, len);
        if (len >= PTL_WIRE_HDR_LEN && nsrc < 4096) {
            src[nsrc][0] = (uint32_t)ptl_wget(f + 16, 4);
            src[nsrc++][1] = ptl_wire_src_pid(f);
        }
        ptl_lib_rx(1, f, len);
        if (ctl & 8)
            bp_make();
        if (ctl & 4)
            settle();
    }
    settle();
    reset(src, nsrc);
    return 0;
}

/* ---- seeds ---------------------------------------------------------------- */

/* Appends one record holding the frame h + payload to rec. */
static size_t record(uint8_t *rec, struct ptl_wire_hdr *h, const void *pay, uint32_t plen,
                     uint8_t ctl)
{
    size_t len = tp_craft(rec + 3, h, pay, plen);
    rec[0] = ctl;
    rec[1] = (uint8_t)len;
    rec[2] = (uint8_t)(len >> 8);
    return 3 + len;
}

static void fuzz_write_seeds(const char *dir)
{
    static uint8_t out[65536], pay[1400];
    memset(pay, 0x5a, sizeof pay);
    static const struct { const char *name; uint8_t op, ni; uint64_t bits; uint32_t len; }
    kinds[] = {
        {"put", PTL_WOP_PUT, 0, 0, 100},         {"put-local", PTL_WOP_PUT, 0, 1, 300},
        {"put-once", PTL_WOP_PUT, 0, 2, 32},     {"put-overflow", PTL_WOP_PUT, 0, 9, 200},
        {"get", PTL_WOP_GET, 0, 0, 100},         {"atomic", PTL_WOP_ATOMIC, 0, 3, 16},
        {"fetch", PTL_WOP_FETCH, 0, 3, 16},      {"swap", PTL_WOP_SWAP, 0, 3, 8},
        {"put-le", PTL_WOP_PUT, 1, 0, 100},      {"get-le", PTL_WOP_GET, 1, 0, 64},
        {"put-logical", PTL_WOP_PUT, 2, 0, 100}, {"ack", PTL_WOP_ACK, 0, 0, 0},
        {"reply", PTL_WOP_REPLY, 0, 0, 64},      {"rack", PTL_WOP_RACK, 0, 0, 0},
    };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        struct node *dst = kinds[k].ni == 1 ? &Bn : kinds[k].ni == 2 ? &Bl : &B;
        ptl_pt_index_t pt = kinds[k].ni == 1 ? pt_n : kinds[k].ni == 2 ? pt_l : pt_b;
        struct ptl_wire_hdr h = tp_put_hdr(dst, pt, PTL_TEST_NID(0), 0x100 + (uint32_t)k,
                                           kinds[k].len, 0);
        h.src_pid = PTL_TEST_PID;
        h.op = kinds[k].op;
        h.match_bits = kinds[k].bits;
        h.ack_req = PTL_ACK_REQ;
        h.ni_type = kinds[k].ni == 1 ? 0 : kinds[k].ni == 2 ? PTL_WNI_MATCHING | PTL_WNI_LOGICAL
                                                            : PTL_WNI_MATCHING;
        if (kinds[k].ni == 2)
            h.src_rank = 0;
        uint32_t plen = kinds[k].len;
        if (h.op == PTL_WOP_GET)
            plen = 0;
        if (h.op >= PTL_WOP_ATOMIC && h.op <= PTL_WOP_SWAP) {
            h.atomic_type = PTL_INT64_T;
            h.atomic_op = h.op == PTL_WOP_SWAP ? PTL_SWAP : PTL_SUM;
        }
        if (h.op == PTL_WOP_RACK) {
            h.flags = PTL_WF_ACKV;
            h.ack = 1;
        }
        size_t n = record(out, &h, pay, plen, 1 | 2);
        if (h.op == PTL_WOP_PUT && kinds[k].ni == 0 && kinds[k].bits == 0) {
            /* and a message in three fragments, the last one twice */
            struct ptl_wire_hdr m = h;
            m.session = 0x200;
            m.msg_len = 3000;
            m.msg_id = 2;
            for (uint32_t s = 0; s < 4; s++) {
                uint32_t fr = s < 3 ? s : 2;
                m.seq = fr;
                m.frag_off = fr * 1000;
                m.flags = PTL_WF_SEQ | (fr == 0 ? PTL_WF_FIRST : 0) | (fr == 2 ? PTL_WF_LAST : 0);
                n += record(out + n, &m, pay, 1000, 1 | 2 | (s == 3 ? 4 : 0));
            }
        }
        fuzz_seed(dir, kinds[k].name, out, n);
    }
    /* A put carrying an ACK in its header (PTL_WF_ACKIN): the record between
     * the header and the payload, frag_len the payload's. */
    struct ptl_wire_hdr h = tp_put_hdr(&B, pt_b, PTL_TEST_NID(0), 0x300, 100, 0);
    h.src_pid = PTL_TEST_PID;
    h.flags |= PTL_WF_ACKIN;
    h.frag_len = 100;
    uint8_t *f = out + 3;
    ptl_wire_encode(&h, f);
    struct ptl_wire_ackrec a = {.msg_id = 1, .mlength = 8, .ack_req = PTL_ACK_REQ};
    ptl_wire_ackrec_encode(&a, f + PTL_WIRE_HDR_LEN);
    memcpy(f + PTL_WIRE_HDR_LEN + PTL_WIRE_ACKREC_LEN, pay, 100);
    size_t len = PTL_WIRE_HDR_LEN + PTL_WIRE_ACKREC_LEN + 100;
    tp_seal(f, len);
    out[0] = 1;                    /* sealed again after mutation; frag_len left alone */
    out[1] = (uint8_t)len;
    out[2] = (uint8_t)(len >> 8);
    fuzz_seed(dir, "put-ackin", out, 3 + len);

    /* Two puts and a get to B's fourth NI before it is made (kept), then
     * the NI made (a record of no frame, ctl bit 3), the kept frames handed
     * over, and the get's reply and the puts' acks sent. */
    size_t n = 0;
    for (uint32_t s = 0; s < 3; s++) {
        struct ptl_wire_hdr p = tp_put_hdr(&B, 0, PTL_TEST_NID(0), 0x400, 64, s * 64);
        p.src_pid = PTL_TEST_PID;
        p.ni_type = PTL_WNI_LOGICAL;
        p.src_rank = 0;
        p.seq = s;
        p.msg_id = s + 1;
        p.ack_req = PTL_ACK_REQ;
        if (s == 2)
            p.op = PTL_WOP_GET;
        n += record(out + n, &p, pay, s == 2 ? 0 : 64, 1 | 2);
    }
    out[n] = 8 | 4;
    out[n + 1] = out[n + 2] = 0;
    fuzz_seed(dir, "park", out, n + 3);
}
