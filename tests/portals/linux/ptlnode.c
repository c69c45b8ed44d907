/* A Portals process on the Linux host, driven by tests/test_portals_linux.py:
 *   ptlnode serve N MAX        target: round-trip area, atomics, and a stream
 *                              of N messages (sizes pl_size(i, MAX)) checked
 *                              for order, length, placement and content;
 *                              stdin: "stats" prints counters, "quit" exits.
 *   ptlnode target N MAX SECS  the same target without stdin (a Tern node has
 *                              none): "ptlnode ctl" puts ask for STATS or
 *                              quit; a finished stream of N > 0 messages
 *                              also ends it.  Either way it keeps answering
 *                              2 s more (a peer may still wait for an
 *                              acknowledgement the wire lost), prints STATS
 *                              and exits; fails if not done within SECS.
 *   ptlnode ctl NID PID CMD    CMD stats|quit to a target.
 *   ptlnode rt NID PID         put/get/atomic round trips against a server.
 *   ptlnode stream NID PID N MAX WINDOW   send the stream, WINDOW in flight.
 *   ptlnode compute SECS       the round-trip and atomic areas of a server,
 *                              "READY", then SECS of computing without one
 *                              Portals call, "DONE": only a progress thread
 *                              answers an "rt" client meanwhile.
 *   ptlnode dead NID PID GIVEUP_MS   one put, "CONNECTED", wait for a stdin
 *                              line (the test kills the server), put again:
 *                              must fail PTL_NI_UNDELIVERABLE.
 * Output lines start with READY/OK/STREAM_DONE/STATS/ERROR for the test. */
#include <poll.h>
#include <unistd.h>
#include "pl.h"

#define RT_LEN (1u << 20)

static struct pl P;

static ptl_process_t peer(char **argv)
{
    ptl_process_t t;
    t.phys.nid = (ptl_nid_t)strtoul(argv[0], NULL, 0);
    t.phys.pid = (ptl_pid_t)strtoul(argv[1], NULL, 0);
    return t;
}

static void serve_stream_event(const ptl_event_t *ev, unsigned *next,
                               uint64_t *off, uint8_t *base, unsigned n,
                               uint64_t max)
{
    unsigned i = (unsigned)(ev->hdr_data >> 32);
    uint64_t len = pl_size(*next, max);
    if (ev->ni_fail_type != PTL_NI_OK)
        DIE("stream msg %u fail %d", i, ev->ni_fail_type);
    if (i != *next)
        DIE("stream out of order: got %u expected %u", i, *next);
    if (ev->mlength != len || ev->rlength != len)
        DIE("stream msg %u length %llu/%llu expected %llu", i,
            (unsigned long long)ev->mlength, (unsigned long long)ev->rlength,
            (unsigned long long)len);
    if (len && (uint8_t *)ev->start != base + *off)
        DIE("stream msg %u placed at %td expected %llu", i,
            (uint8_t *)ev->start - base, (unsigned long long)*off);
    const uint8_t *d = base + *off;
    for (uint64_t j = 0; j < len; j++)
        if (d[j] != pl_byte(i, j))
            DIE("stream msg %u byte %llu is %u", i, (unsigned long long)j,
                d[j]);
    if (pl_fnv(d, len) != (uint32_t)ev->hdr_data)
        DIE("stream msg %u checksum", i);
    *off += len;
    if (++*next == n) {
        printf("STREAM_DONE msgs=%u bytes=%llu\n", n, (unsigned long long)*off);
        fflush(stdout);
    }
}

static int serve_loop(unsigned n, uint64_t max, double secs, bool use_stdin)
{
    uint64_t total = pl_total(n, max);
    uint8_t *rt = calloc(1, RT_LEN);
    int64_t *at = calloc(8, sizeof(int64_t));
    uint8_t *st = malloc(total ? total : 1);
    static uint8_t ctl[8];
    if (!rt || !at || !st)
        DIE("out of memory");
    pl_init(&P, 4096);
    pl_me(&P, rt, RT_LEN, PL_MB_RT, 0);
    pl_me(&P, at, 8 * sizeof(int64_t), PL_MB_ATOMIC, 0);
    pl_me(&P, st, total, PL_MB_STREAM, PTL_ME_MANAGE_LOCAL);
    pl_me(&P, ctl, sizeof(ctl), PL_MB_CTL, 0);
    printf("READY nid=%u pid=%u\n", P.me.phys.nid, P.me.phys.pid);
    fflush(stdout);
    unsigned next = 0;
    uint64_t off = 0;
    double end = pl_now() + secs, linger_end = 0;
    char line[64];
    while (!linger_end || pl_now() < linger_end) {
        if (pl_now() > end) {
            if (use_stdin)
                break;
            DIE("target: not done after %.0f s (%u of %u stream messages)", secs, next, n);
        }
        ptl_event_t ev;
        unsigned which;
        int rc = PtlEQPoll(&P.eq, 1, 20, &ev, &which);
        if (rc == PTL_OK || rc == PTL_EQ_DROPPED) {
            if (rc == PTL_EQ_DROPPED)
                DIE("server EQ overflowed");
            if (ev.type == PTL_EVENT_PUT && ev.match_bits == PL_MB_STREAM) {
                serve_stream_event(&ev, &next, &off, st, n, max);
                if (!use_stdin && next == n && !linger_end)
                    linger_end = pl_now() + 2;
            }
            if (ev.type == PTL_EVENT_PUT && ev.match_bits == PL_MB_CTL) {
                if (ev.hdr_data == PL_CTL_STATS)
                    pl_print_stats(&P);
                else if (ev.hdr_data == PL_CTL_QUIT && !linger_end)
                    linger_end = pl_now() + 2;
            }
        } else if (rc != PTL_EQ_EMPTY) {
            DIE("PtlEQPoll %d", rc);
        }
        if (!use_stdin)
            continue;
        struct pollfd pfd = { .fd = 0, .events = POLLIN };
        if (poll(&pfd, 1, 0) > 0) {
            if (!fgets(line, sizeof(line), stdin) || !strncmp(line, "quit", 4))
                break;
            if (!strncmp(line, "stats", 5))
                pl_print_stats(&P);
        }
    }
    if (!use_stdin)
        pl_print_stats(&P);
    return 0;
}

static int serve(int argc, char **argv)
{
    if (argc < 2)
        DIE("serve N MAX");
    return serve_loop((unsigned)strtoul(argv[0], NULL, 0), strtoull(argv[1], NULL, 0), 300, true);
}

static int target(int argc, char **argv)
{
    if (argc < 3)
        DIE("target N MAX SECS");
    return serve_loop((unsigned)strtoul(argv[0], NULL, 0), strtoull(argv[1], NULL, 0),
                      strtod(argv[2], NULL), false);
}

static ptl_event_t complete(const char *what, bool want_ack)
{
    ptl_event_t ev;
    if (pl_wait(&P, want_ack ? PTL_EVENT_ACK : PTL_EVENT_REPLY, &ev, 20))
        DIE("%s: no completion", what);
    if (ev.ni_fail_type != PTL_NI_OK)
        DIE("%s: ni_fail_type %d", what, ev.ni_fail_type);
    return ev;
}

static void rt_putget(ptl_process_t t, uint64_t len, uint64_t roff,
                      uint8_t *src, uint8_t *dst, ptl_handle_md_t ms,
                      ptl_handle_md_t md, unsigned tag)
{
    for (uint64_t j = 0; j < len; j++)
        src[j] = pl_byte(tag, j);
    memset(dst, 0xA5, len + 1);
    OK(PtlPut(ms, 0, len, PTL_ACK_REQ, t, PL_PT, PL_MB_RT, roff, NULL, 0));
    ptl_event_t ev = complete("put", true);
    if (ev.mlength != len)
        DIE("put mlength %llu != %llu", (unsigned long long)ev.mlength,
            (unsigned long long)len);
    OK(PtlGet(md, 0, len, t, PL_PT, PL_MB_RT, roff, NULL));
    ev = complete("get", false);
    if (ev.mlength != len || memcmp(src, dst, len) || dst[len] != 0xA5)
        DIE("get of %llu bytes at %llu returned other data",
            (unsigned long long)len, (unsigned long long)roff);
}

static int64_t fetch(ptl_handle_md_t mr, ptl_handle_md_t mo, int64_t *res,
                     ptl_process_t t, ptl_op_t op)
{
    OK(PtlFetchAtomic(mr, 0, mo, 0, 8, t, PL_PT, PL_MB_ATOMIC, 0, NULL, 0,
                      op, PTL_INT64_T));
    complete("fetch", false);
    return *res;
}

static int rt(int argc, char **argv)
{
    if (argc < 2)
        DIE("rt NID PID");
    ptl_process_t t = peer(argv);
    uint8_t *src = malloc(RT_LEN), *dst = malloc(RT_LEN + 1);
    if (!src || !dst)
        DIE("out of memory");
    pl_init(&P, 1024);
    ptl_handle_md_t ms = pl_md(&P, src, RT_LEN);
    ptl_handle_md_t md = pl_md(&P, dst, RT_LEN + 1);
    static const uint64_t lens[] = { 0, 1, 143, 1500, 8999, 65536, 300001,
                                     RT_LEN };
    for (unsigned k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
        uint64_t roff = (k * 4099u) % (RT_LEN - lens[k] + 1);
        rt_putget(t, lens[k], roff, src, dst, ms, md, k + 1);
    }
    /* Atomics on int64 element 0 of the server's array. */
    int64_t v[2] = { 5, 0 }, res = -1;
    ptl_handle_md_t mv = pl_md(&P, v, sizeof(v));
    ptl_handle_md_t mr = pl_md(&P, &res, sizeof(res));
    /* PTL_SWAP to 0 first, so the sequence holds on a reused server. */
    int64_t zero = 0;
    ptl_handle_md_t mz = pl_md(&P, &zero, sizeof(zero));
    OK(PtlSwap(mr, 0, mz, 0, 8, t, PL_PT, PL_MB_ATOMIC, 0, NULL, 0, NULL,
               PTL_SWAP, PTL_INT64_T));
    complete("swap to 0", false);
    OK(PtlAtomic(mv, 0, 8, PTL_ACK_REQ, t, PL_PT, PL_MB_ATOMIC, 0, NULL, 0,
                 PTL_SUM, PTL_INT64_T));
    complete("atomic", true);
    v[0] = 7;
    int64_t got = fetch(mr, mv, &res, t, PTL_SUM);
    if (got != 5)
        DIE("fetch-sum returned %lld, expected 5", (long long)got);
    v[0] = 3;
    got = fetch(mr, mv, &res, t, PTL_PROD);
    if (got != 12)
        DIE("fetch-prod returned %lld, expected 12", (long long)got);
    /* CSWAP: operand 36 equals the value, so 99 goes in. */
    int64_t operand = 36;
    v[0] = 99;
    OK(PtlSwap(mr, 0, mv, 0, 8, t, PL_PT, PL_MB_ATOMIC, 0, NULL, 0, &operand,
               PTL_CSWAP, PTL_INT64_T));
    complete("swap", false);
    if (res != 36)
        DIE("cswap returned %lld, expected 36", (long long)res);
    v[0] = 0;
    got = fetch(mr, mv, &res, t, PTL_SUM);
    if (got != 99)
        DIE("after cswap the value is %lld, expected 99", (long long)got);
    printf("OK rt\n");
    pl_print_stats(&P);
    return 0;
}

static int stream(int argc, char **argv)
{
    if (argc < 5)
        DIE("stream NID PID N MAX WINDOW");
    ptl_process_t t = peer(argv);
    unsigned n = (unsigned)strtoul(argv[2], NULL, 0);
    uint64_t max = strtoull(argv[3], NULL, 0);
    unsigned window = (unsigned)strtoul(argv[4], NULL, 0);
    uint64_t total = pl_total(n, max);
    uint8_t *buf = malloc(total ? total : 1);
    if (!buf)
        DIE("out of memory");
    uint64_t off = 0;
    for (unsigned i = 0; i < n; i++) {
        uint64_t len = pl_size(i, max);
        for (uint64_t j = 0; j < len; j++)
            buf[off + j] = pl_byte(i, j);
        off += len;
    }
    pl_init(&P, 4096);
    ptl_handle_md_t md = pl_md(&P, buf, total);
    double t0 = pl_now();
    unsigned sent = 0, acked = 0;
    off = 0;
    while (acked < n) {
        while (sent < n && sent - acked < window) {
            uint64_t len = pl_size(sent, max);
            uint64_t hd = (uint64_t)sent << 32 | pl_fnv(buf + off, len);
            OK(PtlPut(md, off, len, PTL_ACK_REQ, t, PL_PT, PL_MB_STREAM, 0,
                      (void *)(uintptr_t)sent, hd));
            off += len;
            sent++;
        }
        ptl_event_t ev;
        if (pl_wait(&P, PTL_EVENT_ACK, &ev, 60))
            DIE("stream: no ack after %u of %u", acked, n);
        unsigned i = (unsigned)(uintptr_t)ev.user_ptr;
        if (ev.ni_fail_type != PTL_NI_OK || ev.mlength != pl_size(i, max)) {
            pl_print_stats(&P);
            DIE("stream msg %u: fail %d mlength %llu", i, ev.ni_fail_type,
                (unsigned long long)ev.mlength);
        }
        if (i != acked)
            DIE("ack for %u while expecting %u", i, acked);
        acked++;
    }
    double dt = pl_now() - t0;
    printf("OK stream msgs=%u bytes=%llu secs=%.3f MBps=%.1f\n", n,
           (unsigned long long)total, dt, (double)total / dt / 1e6);
    pl_print_stats(&P);
    return 0;
}

static int dead(int argc, char **argv)
{
    if (argc < 3)
        DIE("dead NID PID GIVEUP_MS");
    ptl_process_t t = peer(argv);
    struct ptl_lib_tunables tun;
    ptl_lib_get_tunables(&tun);
    tun.giveup_ns = strtoull(argv[2], NULL, 0) * 1000000ull;
    ptl_lib_set_tunables(&tun);
    static uint8_t buf[4096];
    pl_init(&P, 1024);
    ptl_handle_md_t md = pl_md(&P, buf, sizeof(buf));
    OK(PtlPut(md, 0, sizeof(buf), PTL_ACK_REQ, t, PL_PT, PL_MB_RT, 0, NULL, 0));
    complete("first put", true);
    printf("CONNECTED\n");
    fflush(stdout);
    char line[16];
    if (!fgets(line, sizeof(line), stdin))
        DIE("stdin closed");
    double t0 = pl_now();
    OK(PtlPut(md, 0, sizeof(buf), PTL_ACK_REQ, t, PL_PT, PL_MB_RT, 0, NULL, 0));
    int send_fail = -1, ack_fail = -1;
    while (send_fail < 0 || ack_fail < 0) {
        ptl_event_t ev;
        unsigned which;
        int rc = PtlEQPoll(&P.eq, 1, 100, &ev, &which);
        if (pl_now() - t0 > 60)
            DIE("no failure after 60 s");
        if (rc != PTL_OK)
            continue;
        if (ev.type == PTL_EVENT_SEND)
            send_fail = ev.ni_fail_type;
        if (ev.type == PTL_EVENT_ACK)
            ack_fail = ev.ni_fail_type;
        if (ev.type == PTL_EVENT_SEND && ev.ni_fail_type != PTL_NI_OK)
            break; /* no ACK follows a message that was never delivered */
    }
    printf("DEAD send_fail=%d ack_fail=%d undeliverable=%d secs=%.3f\n",
           send_fail, ack_fail, PTL_NI_UNDELIVERABLE, pl_now() - t0);
    pl_print_stats(&P);
    return 0;
}

static int ctl(int argc, char **argv)
{
    if (argc < 3)
        DIE("ctl NID PID stats|quit");
    ptl_process_t t = peer(argv);
    uint64_t cmd = !strcmp(argv[2], "stats") ? PL_CTL_STATS
                 : !strcmp(argv[2], "quit")  ? PL_CTL_QUIT : 0;
    if (!cmd)
        DIE("ctl: unknown command %s", argv[2]);
    static uint8_t none[1];
    pl_init(&P, 64);
    ptl_handle_md_t md = pl_md(&P, none, sizeof(none));
    OK(PtlPut(md, 0, 0, PTL_ACK_REQ, t, PL_PT, PL_MB_CTL, 0, NULL, cmd));
    complete("ctl", true);
    printf("OK ctl %s\n", argv[2]);
    return 0;
}

static int compute(int argc, char **argv)
{
    if (argc < 1)
        DIE("compute SECS");
    double secs = strtod(argv[0], NULL);
    uint8_t *rt = calloc(1, RT_LEN);
    int64_t *at = calloc(8, sizeof(int64_t));
    if (!rt || !at)
        DIE("out of memory");
    pl_init(&P, 64);
    pl_me(&P, rt, RT_LEN, PL_MB_RT, 0);
    pl_me(&P, at, 8 * sizeof(int64_t), PL_MB_ATOMIC, 0);
    printf("READY\n");
    /* Busy, not asleep: no system call the library could hook either.
     * Fixed work quanta, each timed: what the progress thread takes from
     * a computing program shows as longer quanta (bench/portals_reference.py). */
    enum { QMAX = 1 << 20 };
    static float q[QMAX];
    unsigned n = 0;
    volatile uint64_t spin = 0;
    double end = pl_now() + secs, t = pl_now();
    while (t < end) {
        for (int i = 0; i < 100000; i++)
            spin++;
        double t2 = pl_now();
        if (n < QMAX)
            q[n++] = (float)((t2 - t) * 1e6);
        t = t2;
    }
    double sum = 0, max = 0;
    for (unsigned i = 0; i < n; i++) {
        sum += q[i];
        if (q[i] > max)
            max = q[i];
    }
    printf("DONE quanta=%u mean_us=%.3f max_us=%.1f\n", n, n ? sum / n : 0.0, max);
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2)
        DIE("usage: ptlnode serve|target|ctl|rt|stream|compute|dead ...");
    if (!strcmp(argv[1], "serve"))
        return serve(argc - 2, argv + 2);
    if (!strcmp(argv[1], "target"))
        return target(argc - 2, argv + 2);
    if (!strcmp(argv[1], "ctl"))
        return ctl(argc - 2, argv + 2);
    if (!strcmp(argv[1], "rt"))
        return rt(argc - 2, argv + 2);
    if (!strcmp(argv[1], "stream"))
        return stream(argc - 2, argv + 2);
    if (!strcmp(argv[1], "compute"))
        return compute(argc - 2, argv + 2);
    if (!strcmp(argv[1], "dead"))
        return dead(argc - 2, argv + 2);
    DIE("unknown mode %s", argv[1]);
}
