/* Two Tern nodes talking Portals.  `pingpong server PEER_NID` answers;
 * `pingpong client PEER_NID test` checks data movement (ping-pong 0 B..1 MiB,
 * a 16 MiB put with checksum, gets, integer and float atomic SUMs);
 * `pingpong client PEER_NID bench REPS` prints latency and bandwidth lines
 * (CSV after "bench,").  The server exits when the client says done; it
 * also checks that its x87/SSE registers survive every wait (the kernel
 * computes float atomics meanwhile).  Exit status 0: all went well. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "portals4.h"
#include "ptl_lib.h"
#include "ptl_tern.h"
#include "../../../include/tern/ptl_syscall.h"

enum { MB_PING = 1, MB_GET = 2, MB_ATOM = 3, MB_CTRL = 4, MB_STREAM = 5 };
enum { CTRL_HELLO = 1, CTRL_DONE = 2 };
enum { STREAM_LAST = 1, STREAM_SUM = 2 };
#define BIG (16u << 20)
#define GBUF (1u << 20)

static ptl_handle_ni_t ni;
static ptl_handle_eq_t eq_t, eq_i;   /* target events; initiator events */
static ptl_handle_ct_t ct_s;
static ptl_handle_md_t md_s, md_i, md_r;
static ptl_pt_index_t pt;
static ptl_process_t peer;
static uint8_t *sbuf, *rbuf, *gbuf, *ibuf;
static int errors;

#define CHECK(call)                                                             \
    do {                                                                        \
        int rc_ = (call);                                                       \
        if (rc_ != PTL_OK) {                                                    \
            printf("%s:%d: %s = %d\n", __FILE__, __LINE__, #call, rc_);         \
            exit(2);                                                            \
        }                                                                       \
    } while (0)

static uint8_t pattern(uint64_t i) { return (uint8_t)((i * 2654435761u) >> 13); }
static uint8_t pattern2(uint64_t i) { return (uint8_t)(i * 7 + 3) ^ 0x5a; }

static uint64_t fnv(const uint8_t *p, uint64_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (uint64_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void append(uint64_t mb, void *start, uint64_t len, unsigned opts)
{
    ptl_me_t me = {.start = start, .length = len, .ct_handle = PTL_CT_NONE, .uid = PTL_UID_ANY,
                   .options = opts | PTL_ME_EVENT_LINK_DISABLE,
                   .match_id.phys = {PTL_NID_ANY, PTL_PID_ANY}, .match_bits = mb};
    ptl_handle_me_t h;
    CHECK(PtlMEAppend(ni, pt, &me, PTL_PRIORITY_LIST, NULL, &h));
}

static void setup(int peer_nid, uint64_t rlen)
{
    CHECK(PtlInit());
    CHECK(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY, NULL, NULL,
                    &ni));
    CHECK(PtlEQAlloc(ni, 1024, &eq_t));
    CHECK(PtlEQAlloc(ni, 1024, &eq_i));
    CHECK(PtlCTAlloc(ni, &ct_s));
    CHECK(PtlPTAlloc(ni, 0, eq_t, 0, &pt));
    sbuf = malloc(BIG);
    rbuf = malloc(rlen);
    gbuf = malloc(GBUF);
    ibuf = malloc(4096);
    if (!sbuf || !rbuf || !gbuf || !ibuf)
        exit(3);
    for (uint64_t i = 0; i < BIG; i++)
        sbuf[i] = pattern(i);
    for (uint64_t i = 0; i < GBUF; i++)
        gbuf[i] = pattern2(i);
    memset(ibuf, 0, 4096);
    ptl_md_t md = {.start = sbuf, .length = BIG, .options = PTL_MD_EVENT_CT_SEND,
                   .eq_handle = PTL_EQ_NONE, .ct_handle = ct_s};
    CHECK(PtlMDBind(ni, &md, &md_s));
    md = (ptl_md_t){.start = ibuf, .length = 4096, .eq_handle = eq_i, .ct_handle = PTL_CT_NONE};
    CHECK(PtlMDBind(ni, &md, &md_i));
    md = (ptl_md_t){.start = rbuf, .length = rlen, .eq_handle = PTL_EQ_NONE,
                    .ct_handle = PTL_CT_NONE};
    CHECK(PtlMDBind(ni, &md, &md_r));
    append(MB_PING, rbuf, rlen, PTL_ME_OP_PUT);
    append(MB_STREAM, rbuf, rlen, PTL_ME_OP_PUT);
    append(MB_CTRL, ibuf + 2048, 64, PTL_ME_OP_PUT);
    append(MB_GET, gbuf, GBUF, PTL_ME_OP_GET);
    append(MB_ATOM, ibuf + 3072, 64, PTL_ME_OP_PUT | PTL_ME_OP_GET);
    peer.phys.nid = (ptl_nid_t)peer_nid;
    /* Every application on a Tern node has the same pid (TERN_APP_PID). */
    ptl_process_t self;
    CHECK(PtlGetId(ni, &self));
    peer.phys.pid = self.phys.pid;
}

/* The next target event of type `type` and match bits `mb`; others skipped. */
static ptl_event_t wait_target(ptl_event_kind_t type, uint64_t mb)
{
    for (;;) {
        ptl_event_t ev;
        int rc = PtlEQWait(eq_t, &ev);
        if (rc != PTL_OK && rc != PTL_EQ_DROPPED) {
            printf("PtlEQWait = %d\n", rc);
            exit(2);
        }
        if (ev.type == type && ev.match_bits == mb)
            return ev;
    }
}

static ptl_event_t wait_init(ptl_event_kind_t type)
{
    for (;;) {
        ptl_event_t ev;
        CHECK(PtlEQWait(eq_i, &ev));
        if (ev.type == type)
            return ev;
    }
}

static void put(ptl_handle_md_t md, uint64_t off, uint64_t len, ptl_ack_req_t ack, uint64_t mb,
                uint64_t hdr)
{
    double give_up = now_s() + 30;
    for (;;) {
        int rc = PtlPut(md, off, len, ack, peer, pt, mb, 0, NULL, hdr);
        if (rc == PTL_OK)
            return;
        if (rc != PTL_NO_SPACE || now_s() > give_up) {
            printf("PtlPut = %d\n", rc);
            exit(2);
        }
        ptl_ct_event_t c;
        PtlCTGet(ct_s, &c);      /* progress while the operation slots drain */
    }
}

static void print_stats(const char *who)
{
    struct ptl_lib_stats l;
    struct tern_ptl_node_stats n;
    if (ptl_tern_stats(&l, &n) != PTL_OK)
        return;
    printf("%s stats: frames tx %lu rx %lu, retransmits %lu (timeouts %lu, fast %lu), acks %lu, host busy %lu, rx dup %lu "
           "ooo dropped %lu placed %lu window %lu no-resources %lu bad %lu; nic tx %lu err %lu "
           "rx %lu dropped %lu irq %lu; kmem %lu KiB, peak %lu KiB, fails %lu\n", who,
           (unsigned long)l.tx_frames, (unsigned long)l.rx_frames,
           (unsigned long)l.tx_retransmits, (unsigned long)l.tx_timeouts,
           (unsigned long)l.tx_fast_retransmits, (unsigned long)l.acks_sent,
           (unsigned long)l.tx_host_busy, (unsigned long)l.rx_dup,
           (unsigned long)l.rx_ooo_dropped, (unsigned long)l.rx_ooo_placed,
           (unsigned long)l.rx_window, (unsigned long)l.rx_no_resources,
           (unsigned long)(l.rx_short + l.rx_bad_version + l.rx_bad_crc + l.rx_bad_op +
                           l.rx_bad_field + l.rx_not_for_us + l.rx_stale),
           (unsigned long)n.nic_tx_frames, (unsigned long)n.nic_tx_errors,
           (unsigned long)n.nic_rx_frames, (unsigned long)n.nic_rx_dropped,
           (unsigned long)n.nic_interrupts, (unsigned long)(n.kmem_size >> 10),
           (unsigned long)(n.kmem_peak >> 10), (unsigned long)n.kmem_fails);
}

/* ---- server ---------------------------------------------------------------- */

/* PtlEQWait through the raw call with known values in every vector register
 * and a non-default MXCSR, compared afterwards. */
static int wait_keep_fpu(ptl_event_t *ev, int *fpu_bad)
{
    static const double in[16] = {1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5,
                                  9.5, 10.5, 11.5, 12.5, 13.5, 14.5, 15.5, 16.5};
    double out[16];
    uint32_t mx_in = 0x7F80, mx_out = 0, mx_def = 0x1F80;   /* round toward zero */
    uint64_t args[16] = {eq_t, (uint64_t)(uintptr_t)ev};
    long ret;
    __asm__ volatile(
        "ldmxcsr %[mxi]\n\t"
        "movsd 0(%[in]), %%xmm0\n\t movsd 8(%[in]), %%xmm1\n\t movsd 16(%[in]), %%xmm2\n\t"
        "movsd 24(%[in]), %%xmm3\n\t movsd 32(%[in]), %%xmm4\n\t movsd 40(%[in]), %%xmm5\n\t"
        "movsd 48(%[in]), %%xmm6\n\t movsd 56(%[in]), %%xmm7\n\t movsd 64(%[in]), %%xmm8\n\t"
        "movsd 72(%[in]), %%xmm9\n\t movsd 80(%[in]), %%xmm10\n\t movsd 88(%[in]), %%xmm11\n\t"
        "movsd 96(%[in]), %%xmm12\n\t movsd 104(%[in]), %%xmm13\n\t"
        "movsd 112(%[in]), %%xmm14\n\t movsd 120(%[in]), %%xmm15\n\t"
        "syscall\n\t"
        "movsd %%xmm0, 0(%[out])\n\t movsd %%xmm1, 8(%[out])\n\t movsd %%xmm2, 16(%[out])\n\t"
        "movsd %%xmm3, 24(%[out])\n\t movsd %%xmm4, 32(%[out])\n\t movsd %%xmm5, 40(%[out])\n\t"
        "movsd %%xmm6, 48(%[out])\n\t movsd %%xmm7, 56(%[out])\n\t movsd %%xmm8, 64(%[out])\n\t"
        "movsd %%xmm9, 72(%[out])\n\t movsd %%xmm10, 80(%[out])\n\t"
        "movsd %%xmm11, 88(%[out])\n\t movsd %%xmm12, 96(%[out])\n\t"
        "movsd %%xmm13, 104(%[out])\n\t movsd %%xmm14, 112(%[out])\n\t"
        "movsd %%xmm15, 120(%[out])\n\t"
        "stmxcsr %[mxo]\n\t ldmxcsr %[mxd]"
        : "=a"(ret), [mxo] "=m"(mx_out)
        : "a"((long)TERN_SYS_PORTALS), "D"((long)TPO_EQ_WAIT), "S"(args), [in] "r"(in),
          [out] "r"(out), [mxi] "m"(mx_in), [mxd] "m"(mx_def)
        : "rcx", "r11", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6",
          "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
    if (memcmp(in, out, sizeof in) || mx_out != mx_in)
        ++*fpu_bad;
    return (int)ret;
}

static int server(void)
{
    int fpu_bad = 0, waits = 0;
    uint64_t *ai = (uint64_t *)(ibuf + 3072);
    double *ad = (double *)(ibuf + 3080);
    *ad = 0.5;
    for (;;) {
        ptl_event_t ev;
        int rc = wait_keep_fpu(&ev, &fpu_bad);
        waits++;
        if (rc != PTL_OK && rc != PTL_EQ_DROPPED) {
            printf("server: PtlEQWait = %d\n", rc);
            return 2;
        }
        if (ev.type != PTL_EVENT_PUT)
            continue;
        if (ev.match_bits == MB_PING)
            put(md_r, 0, ev.mlength, PTL_NO_ACK_REQ, MB_PING, 0);   /* echo it */
        if (ev.match_bits == MB_STREAM && (ev.hdr_data & STREAM_LAST)) {
            uint64_t sum = ev.hdr_data & STREAM_SUM ? fnv(rbuf, ev.mlength) : 0;
            put(md_i, 0, 0, PTL_NO_ACK_REQ, MB_CTRL, sum);
        }
        if (ev.match_bits == MB_CTRL && ev.hdr_data == CTRL_DONE) {
            printf("server: done after %d waits; atomics here: %lu %.3f; vector registers "
                   "changed in %d waits\n", waits, (unsigned long)*ai, *ad, fpu_bad);
            /* Stay a moment so the last acknowledgements go out. */
            ptl_event_t e2;
            unsigned which;
            for (int i = 0; i < 5; i++)
                PtlEQPoll(&eq_t, 1, 100, &e2, &which);
            print_stats("server");
            return fpu_bad ? 1 : 0;
        }
    }
}

/* ---- client ------------------------------------------------------------------ */

static void hello(void)
{
    for (int tries = 0; tries < 100; tries++) {
        put(md_i, 0, 0, PTL_ACK_REQ, MB_CTRL, CTRL_HELLO);
        ptl_event_t ev = wait_init(PTL_EVENT_ACK);
        if (ev.ni_fail_type == PTL_NI_OK && ev.mlength == 0)
            return;
        struct timespec ts = {0, 100000000};
        nanosleep(&ts, NULL);
    }
    printf("client: the server never answered\n");
    exit(2);
}

/* One round trip of n bytes; checks the echo when asked. */
static void ping(uint64_t n, int check)
{
    if (check)
        memset(rbuf, 0, n + 1);
    put(md_s, 0, n, PTL_NO_ACK_REQ, MB_PING, 0);
    ptl_event_t ev = wait_target(PTL_EVENT_PUT, MB_PING);
    if (ev.mlength != n) {
        printf("ping %lu: echo of %lu bytes\n", (unsigned long)n, (unsigned long)ev.mlength);
        errors++;
    }
    if (!check)
        return;
    for (uint64_t i = 0; i < n; i++)
        if (rbuf[i] != pattern(i)) {
            printf("ping %lu: byte %lu is %u, not %u\n", (unsigned long)n, (unsigned long)i,
                   rbuf[i], pattern(i));
            errors++;
            return;
        }
    if (rbuf[n] != 0) {
        printf("ping %lu: byte past the end written\n", (unsigned long)n);
        errors++;
    }
}

/* count puts of n bytes back to back; the server answers the last.  Returns
 * seconds from the first put to the answer. */
static double stream(uint64_t n, unsigned count, uint64_t *sum)
{
    double t0 = now_s();
    for (unsigned i = 0; i < count; i++)
        put(md_s, 0, n, PTL_NO_ACK_REQ, MB_STREAM,
            i + 1 == count ? STREAM_LAST | (sum ? STREAM_SUM : 0) : 0);
    ptl_event_t ev = wait_target(PTL_EVENT_PUT, MB_CTRL);
    double t = now_s() - t0;
    if (sum)
        *sum = ev.hdr_data;
    return t;
}

static void get_check(uint64_t roff, uint64_t n)
{
    static uint8_t dst[262144];
    memset(dst, 0, sizeof dst);
    ptl_md_t md = {.start = dst, .length = sizeof dst, .eq_handle = eq_i,
                   .ct_handle = PTL_CT_NONE};
    ptl_handle_md_t h;
    CHECK(PtlMDBind(ni, &md, &h));
    CHECK(PtlGet(h, 0, n, peer, pt, MB_GET, roff, NULL));
    ptl_event_t ev = wait_init(PTL_EVENT_REPLY);
    int bad = ev.ni_fail_type != PTL_NI_OK || ev.mlength != n;
    for (uint64_t i = 0; i < n && !bad; i++)
        bad = dst[i] != pattern2(roff + i);
    printf("get %lu bytes at %lu: %s\n", (unsigned long)n, (unsigned long)roff,
           bad ? "WRONG" : "ok");
    errors += bad;
    CHECK(PtlMDRelease(h));
}

static void atomics(void)
{
    uint64_t *iv = (uint64_t *)ibuf;      /* md_i: operands at 0.., results at 64.. */
    double *dv = (double *)(ibuf + 8);
    for (int k = 1; k <= 10; k++) {
        *iv = (uint64_t)k;
        CHECK(PtlAtomic(md_i, 0, 8, PTL_ACK_REQ, peer, pt, MB_ATOM, 0, NULL, 0, PTL_SUM,
                        PTL_UINT64_T));
        if (wait_init(PTL_EVENT_ACK).ni_fail_type != PTL_NI_OK)
            errors++;
        *dv = 0.25;
        CHECK(PtlAtomic(md_i, 8, 8, PTL_ACK_REQ, peer, pt, MB_ATOM, 8, NULL, 0, PTL_SUM,
                        PTL_DOUBLE));
        if (wait_init(PTL_EVENT_ACK).ni_fail_type != PTL_NI_OK)
            errors++;
    }
    *iv = 0;
    *dv = 0;
    CHECK(PtlFetchAtomic(md_i, 64, md_i, 0, 8, peer, pt, MB_ATOM, 0, NULL, 0, PTL_SUM,
                         PTL_UINT64_T));
    wait_init(PTL_EVENT_REPLY);
    CHECK(PtlFetchAtomic(md_i, 72, md_i, 8, 8, peer, pt, MB_ATOM, 8, NULL, 0, PTL_SUM,
                         PTL_DOUBLE));
    wait_init(PTL_EVENT_REPLY);
    uint64_t isum = *(uint64_t *)(ibuf + 64);
    double dsum = *(double *)(ibuf + 72);
    int bad = isum != 55 || dsum != 3.0;
    printf("atomic SUM: uint64 %lu (want 55), double %.3f (want 3.000): %s\n",
           (unsigned long)isum, dsum, bad ? "WRONG" : "ok");
    errors += bad;
}

static void done(void)
{
    put(md_i, 0, 0, PTL_ACK_REQ, MB_CTRL, CTRL_DONE);
    wait_init(PTL_EVENT_ACK);
}

/* A put from an iovec MD of 12 scattered pieces: more than a NIC frame
 * takes, so the kernel host gathers them; the echo must be their
 * concatenation. */
static void iovec_put(void)
{
    ptl_iovec_t iov[12];
    uint8_t want[12 * 100];
    for (int i = 0; i < 12; i++) {
        iov[i].iov_base = sbuf + 4096 * (uint64_t)i + 7 * i;
        iov[i].iov_len = 100;
        memcpy(want + 100 * i, iov[i].iov_base, 100);
    }
    ptl_md_t md = {.start = iov, .length = 12, .options = PTL_IOVEC, .eq_handle = eq_i,
                   .ct_handle = PTL_CT_NONE};
    ptl_handle_md_t h;
    CHECK(PtlMDBind(ni, &md, &h));
    memset(iov, 0, sizeof iov);          /* the kernel kept its own copy */
    memset(rbuf, 0, sizeof want);
    CHECK(PtlPut(h, 0, sizeof want, PTL_NO_ACK_REQ, peer, pt, MB_PING, 0, NULL, 0));
    ptl_event_t ev = wait_target(PTL_EVENT_PUT, MB_PING);
    wait_init(PTL_EVENT_SEND);
    int bad = ev.mlength != sizeof want || memcmp(rbuf, want, sizeof want);
    printf("iovec put of 12 pieces: %s\n", bad ? "WRONG" : "ok");
    errors += bad;
    CHECK(PtlMDRelease(h));
}

static int client_test(void)
{
    static const uint64_t sizes[] = {0, 1, 8, 64, 512, 1000, 1500, 4096, 9000,
                                     65536, 262144, 1048576};
    double t0 = now_s();
    for (unsigned s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int it = 0; it < 3; it++)
            ping(sizes[s], 1);
    printf("ping-pong 0 B .. 1 MiB: %s (%.2f s)\n", errors ? "WRONG" : "ok", now_s() - t0);
    uint64_t sum = 0;
    double t = stream(BIG, 1, &sum);
    uint64_t want = fnv(sbuf, BIG);
    printf("put 16 MiB: checksum %016lx, want %016lx: %s (%.2f s, %.1f MB/s)\n",
           (unsigned long)sum, (unsigned long)want, sum == want ? "ok" : "WRONG", t,
           BIG / t / 1e6);
    errors += sum != want;
    iovec_put();
    get_check(0, 65536);
    get_check(1000, 5000);
    get_check(GBUF - 262144, 262144);
    atomics();
    done();
    print_stats("client");
    printf("client: %s\n", errors ? "FAILED" : "ok");
    return errors ? 1 : 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int client_bench(int reps)
{
    static const uint64_t lat_sizes[] = {0, 8, 64, 512, 1024, 4096, 16384, 65536};
    static const uint64_t bw_sizes[] = {4096, 65536, 1048576, BIG};
    printf("bench,kind,size,rep,value\n");
    for (int rep = 0; rep < reps; rep++) {
        for (unsigned s = 0; s < sizeof lat_sizes / sizeof lat_sizes[0]; s++) {
            uint64_t n = lat_sizes[s];
            int iters = n <= 4096 ? 200 : 50;
            ping(n, 0);                           /* warm-up */
            double t[200];
            for (int i = 0; i < iters; i++) {
                double a = now_s();
                ping(n, 0);
                t[i] = now_s() - a;
            }
            qsort(t, (size_t)iters, sizeof t[0], cmp_double);
            printf("bench,latency_us,%lu,%d,%.2f\n", (unsigned long)n, rep,
                   t[iters / 2] / 2 * 1e6);
        }
        for (unsigned s = 0; s < sizeof bw_sizes / sizeof bw_sizes[0]; s++) {
            uint64_t n = bw_sizes[s];
            unsigned count = n >= BIG ? 1 : (unsigned)((8u << 20) / n);
            double t = stream(n, count, NULL);
            printf("bench,bandwidth_MBps,%lu,%d,%.2f\n", (unsigned long)n, rep,
                   (double)n * count / t / 1e6);
        }
        fflush(stdout);
    }
    done();
    print_stats("client");
    return errors ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        printf("usage: pingpong server|client PEER_NID [test|bench REPS]\n");
        return 2;
    }
    int client = !strcmp(argv[1], "client");
    setup(atoi(argv[2]), client ? GBUF + 1 : BIG);
    if (!client)
        return server();
    hello();
    if (argc > 4 && !strcmp(argv[3], "bench"))
        return client_bench(atoi(argv[4]));
    return client_test();
}
