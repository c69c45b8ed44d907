/* TEST HARNESS ONLY - see ptl_test_host.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ptl_host.h"
#include "ptl_lib.h"
#include "ptl_test_host.h"

#define MAX_IF 8

struct frame {
    struct frame *next;
    struct frame *slow_next;   /* a slow receiver's queue */
    uint64_t at;
    unsigned dst;
    size_t len;
    uint8_t data[];
};

static struct {
    unsigned n_if;
    uint32_t frame_max;
    uint64_t now;
    uint64_t rng;
    struct ptl_test_wire w;
    struct ptl_test_wire_stats st;
    bool dead[MAX_IF];
    uint32_t jid[MAX_IF];      /* 0: PTL_TEST_JID */
    bool payload_crc;
    struct frame *q; /* sorted by arrival time */
    int lock_depth;
    unsigned long fpu;
    int fpu_depth;
    ptl_test_tap_fn tap;
    ptl_test_drop_fn drop;
    ptl_test_sg_fn sg_tap;
    uint64_t idle_jumps;
    /* Slow receivers: cost of a frame, queue bound, frames waiting in
     * arrival order (the first of them is also on H.q, at the time the
     * receiver gets to it), how many, when it is done with the last. */
    uint64_t rx_cost[MAX_IF];
    unsigned rx_queue[MAX_IF], rx_waiting[MAX_IF];
    struct frame *rx_head[MAX_IF], *rx_tail[MAX_IF];
    uint64_t rx_free_at[MAX_IF];
    uint64_t stall_from[MAX_IF], stall_until[MAX_IF];
} H;

uint64_t ptl_test_rand(void)
{
    /* xorshift64* */
    H.rng ^= H.rng >> 12;
    H.rng ^= H.rng << 25;
    H.rng ^= H.rng >> 27;
    return H.rng * 2685821657736338717ull;
}

static bool chance(unsigned pct) { return pct && ptl_test_rand() % 100 < pct; }

void ptl_test_host_init(unsigned n, uint32_t frame_max)
{
    /* Frames a previous run left in flight (a delayed ack) go first. */
    for (unsigned i = 0; i < MAX_IF; i++)
        for (struct frame *f = H.rx_head[i], *next; f; f = next) {
            next = f->slow_next;
            if (f != H.rx_head[i])
                free(f);    /* the head is on H.q too */
        }
    for (struct frame *f = H.q, *next; f; f = next) {
        next = f->next;
        free(f);
    }
    memset(&H, 0, sizeof(H));
    H.n_if = n > MAX_IF ? MAX_IF : n;
    H.frame_max = frame_max;
    H.now = 1000000000ull;
    H.rng = 0x9E3779B97F4A7C15ull;
    H.w.latency_ns = 2000;
}

void ptl_test_wire_config(const struct ptl_test_wire *w)
{
    H.w = *w;
    H.rng = w->seed ? w->seed : 0x9E3779B97F4A7C15ull;
}

void ptl_test_set_rx_cost(unsigned i, uint64_t ns_per_frame, unsigned queue)
{
    if (i < MAX_IF) {
        H.rx_cost[i] = ns_per_frame;
        H.rx_queue[i] = queue;
    }
}

void ptl_test_set_stall(unsigned i, uint64_t from_ns, uint64_t until_ns)
{
    if (i < MAX_IF) {
        H.stall_from[i] = from_ns;
        H.stall_until[i] = until_ns;
    }
}

void ptl_test_set_dead(unsigned i, bool dead) { if (i < MAX_IF) H.dead[i] = dead; }
void ptl_test_set_jid(unsigned i, uint32_t jid) { if (i < MAX_IF) H.jid[i] = jid; }
void ptl_test_set_payload_crc(bool on) { H.payload_crc = on; }
uint64_t ptl_test_now(void) { return H.now; }
void ptl_test_wire_stats(struct ptl_test_wire_stats *s) { *s = H.st; }
void ptl_test_set_tap(ptl_test_tap_fn fn) { H.tap = fn; }
void ptl_test_set_drop(ptl_test_drop_fn fn) { H.drop = fn; }
void ptl_test_set_sg_tap(ptl_test_sg_fn fn) { H.sg_tap = fn; }
unsigned long ptl_test_fpu_sections(void) { return H.fpu; }

/* 0: no limit; else no single allocation above it (a node's small heap). */
static size_t alloc_max;
void ptl_test_alloc_max(size_t bytes) { alloc_max = bytes; }
void *ptl_host_alloc(size_t n) { return alloc_max && n > alloc_max ? NULL : malloc(n); }
void ptl_host_free(void *p) { free(p); }
uint64_t ptl_host_now_ns(void) { return H.now; }

/* Single-threaded harness: a nested lock means a library bug. */
void ptl_host_lock(void)
{
    if (H.lock_depth++) {
        fprintf(stderr, "test host: recursive ptl_host_lock\n");
        abort();
    }
}

void ptl_host_unlock(void)
{
    if (--H.lock_depth) {
        fprintf(stderr, "test host: unbalanced ptl_host_unlock\n");
        abort();
    }
}

void ptl_host_fpu_begin(void)
{
    if (H.fpu_depth++) {
        fprintf(stderr, "test host: nested fpu section\n");
        abort();
    }
    H.fpu++;
}

void ptl_host_fpu_end(void) { H.fpu_depth--; }

int ptl_host_iface_info(unsigned i, struct ptl_host_iface_info *info)
{
    if (i >= H.n_if)
        return -1;
    info->nid = PTL_TEST_NID(i);
    info->pid = PTL_TEST_PID;
    info->uid = PTL_TEST_UID;
    info->jid = H.jid[i] ? H.jid[i] : PTL_TEST_JID;
    info->frame_max = H.frame_max;
    /* A wire that flips bytes is a link without an FCS: payloads need the
     * library's own checksum.  Set the wire before PtlNIInit. */
    info->link_checks_payload = H.w.corrupt_pct == 0 && !H.payload_crc;
    return 0;
}

static void schedule(struct frame *f)
{
    struct frame **pp = &H.q;
    while (*pp && (*pp)->at <= f->at)
        pp = &(*pp)->next;
    f->next = *pp;
    *pp = f;
}

/* The slow receiver dst gets to the first frame waiting for it. */
static void schedule_slow(unsigned dst)
{
    struct frame *f = H.rx_head[dst];
    if (!f)
        return;
    if (f->at < H.rx_free_at[dst])
        f->at = H.rx_free_at[dst];
    schedule(f);
}

static void enqueue(unsigned dst, const uint8_t *data, size_t len,
                    uint64_t at)
{
    if (H.rx_cost[dst] && H.rx_waiting[dst] >= H.rx_queue[dst]) {
        H.st.overrun++;
        return;
    }
    struct frame *f = malloc(sizeof(*f) + len);
    if (!f)
        abort();
    f->at = at;
    f->dst = dst;
    f->len = len;
    f->slow_next = NULL;
    memcpy(f->data, data, len);
    if (!H.rx_cost[dst]) {
        schedule(f);
        return;
    }
    /* Waits behind the frames already there (arrival order). */
    H.rx_waiting[dst]++;
    if (H.rx_tail[dst]) {
        H.rx_tail[dst]->slow_next = f;
        H.rx_tail[dst] = f;
        return;
    }
    H.rx_head[dst] = H.rx_tail[dst] = f;
    schedule_slow(dst);
}

void ptl_host_tx_batch(bool on) { (void)on; }  /* frames are queued in memory */

int ptl_host_send(unsigned iface, uint32_t dst_nid, const struct ptl_sg *sg,
                  int n_sg)
{
    if (H.lock_depth != 1) {
        fprintf(stderr, "test host: send without the lock\n");
        abort();
    }
    uint8_t buf[65536];
    size_t len = 0;
    if (H.sg_tap)
        H.sg_tap(iface, sg, n_sg);
    for (int i = 0; i < n_sg; i++) {
        if (len + sg[i].len > sizeof(buf))
            abort();
        memcpy(buf + len, sg[i].base, sg[i].len);
        len += sg[i].len;
    }
    if (len > H.frame_max) {
        fprintf(stderr, "test host: frame of %zu > %u bytes\n", len,
                H.frame_max);
        abort();
    }
    unsigned dst = dst_nid - PTL_TEST_NID(0);
    H.st.sent++;
    if (dst >= H.n_if)
        return 0; /* no such node: the frame vanishes */
    if (H.tap)
        H.tap(iface, dst, buf, len);
    if (H.dead[iface] || H.dead[dst]) {
        H.st.dead_dropped++;
        return 0;
    }
    if (chance(H.w.loss_pct) || (H.drop && H.drop(iface, dst, buf, len))) {
        H.st.lost++;
        return 0;
    }
    if (chance(H.w.corrupt_pct)) {
        buf[ptl_test_rand() % len] ^= (uint8_t)(1 + ptl_test_rand() % 255);
        H.st.corrupted++;
    }
    uint64_t at = H.now + H.w.latency_ns;
    if (chance(H.w.reorder_pct)) {
        at += ptl_test_rand() % (20 * H.w.latency_ns + 1);
        H.st.reordered++;
    }
    /* Equal times keep their order (schedule): a stall reorders nothing. */
    if (at >= H.stall_from[dst] && at < H.stall_until[dst])
        at = H.stall_until[dst];
    enqueue(dst, buf, len, at);
    if (chance(H.w.dup_pct)) {
        enqueue(dst, buf, len, at + ptl_test_rand() % (5 * H.w.latency_ns + 1));
        H.st.duplicated++;
    }
    return 0;
}

static bool deliver_due(void)
{
    bool any = false;
    /* Bounded batch so a receiver cannot starve the caller's checks. */
    for (int n = 0; n < 64 && H.q && H.q->at <= H.now; n++) {
        struct frame *f = H.q;
        H.q = f->next;
        H.st.delivered++;
        unsigned d = f->dst;
        if (!H.rx_cost[d]) {
            ptl_lib_rx(d, f->data, f->len);
        } else {
            /* Taking the frame in costs rx_cost, a frame the library drops
             * as a known copy before its checksum a 32nd of that. */
            struct ptl_lib_stats a, b;
            ptl_lib_get_stats(d, &a);
            ptl_lib_rx(d, f->data, f->len);
            ptl_lib_get_stats(d, &b);
            uint64_t cost = b.rx_dup_unchecked > a.rx_dup_unchecked ? H.rx_cost[d] / 32
                                                                   : H.rx_cost[d];
            H.rx_free_at[d] = H.now + cost;
            H.rx_waiting[d]--;
            H.rx_head[d] = f->slow_next;
            if (!H.rx_head[d])
                H.rx_tail[d] = NULL;
            schedule_slow(d);
        }
        free(f);
        any = true;
    }
    return any;
}

void ptl_test_drain(void)
{
    for (int guard = 0; H.q && guard < 1000000; guard++) {
        if (H.q->at > H.now)
            H.now = H.q->at;
        deliver_due();
    }
}

void ptl_host_wait(uint64_t deadline)
{
    if (H.lock_depth) {
        fprintf(stderr, "test host: wait with the lock held\n");
        abort();
    }
    if (deliver_due())
        return;
    if (deadline <= H.now)
        return;
    if (H.q && H.q->at <= deadline) {
        uint64_t next = H.q->at;
        H.now = next;
        deliver_due();
        return;
    }
    if (deadline == UINT64_MAX) {
        /* Nothing in flight and no timer: nothing can ever happen. */
        fprintf(stderr, "test host: deadlock - wait forever with no frames "
                        "in flight and no timers\n");
        exit(3);
    }
    H.now = deadline;
}

/* One thread drives every simulated node: nobody else can be waiting. */
void ptl_host_wake(void) {}
