/* Benchmark programs for bench/portals_linux.py.  One client process runs
 * every size and repetition and prints "R kind size rep value" lines:
 *   plbench ptl-pong                         Portals echo + bandwidth sink
 *   plbench ptl-ping NID PID ITERS REPS SIZES   one-way latency (us)
 *   plbench ptl-bw NID PID BYTES REPS SIZES    streaming bandwidth (MB/s)
 *   plbench raw-echo IF / raw-ping IF MAC ITERS REPS SIZES   AF_PACKET floor
 *   plbench udp-echo PORT / udp-ping ADDR PORT ITERS REPS SIZES  UDP floor
 * SIZES is a comma list.  Servers run until killed. */
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include "pl.h"
#include "../../../bench/benchargs.h"

#define PING_MB 10
#define SINK_MB 11
#define BUF_MAX (16u << 20)
#define RAW_TYPE 0x88B6 /* not Portals: the floor bypasses the library */

static struct pl P;
static uint8_t *buf;

static int sizes(const char *s, uint64_t *out)
{
    int n = 0;
    while (*s && n < 64) {
        out[n++] = strtoull(s, (char **)&s, 0);
        if (*s == ',')
            s++;
    }
    return n;
}

static ptl_process_t target(char **argv)
{
    ptl_process_t t;
    t.phys.nid = (ptl_nid_t)strtoul(argv[0], NULL, 0);
    t.phys.pid = (ptl_pid_t)strtoul(argv[1], NULL, 0);
    return t;
}

static void wait_put(void)
{
    ptl_event_t ev;
    for (;;) {
        OK(PtlEQWait(P.eq, &ev));
        if (ev.type == PTL_EVENT_PUT && ev.match_bits == PING_MB)
            return;
    }
}

static int ptl_pong(void)
{
    pl_init(&P, 8192);
    pl_me(&P, buf, BUF_MAX, PING_MB, PTL_ME_EVENT_LINK_DISABLE);
    pl_me(&P, buf, BUF_MAX, SINK_MB,
          PTL_ME_EVENT_SUCCESS_DISABLE | PTL_ME_EVENT_LINK_DISABLE);
    ptl_md_t md = { .start = buf, .length = BUF_MAX,
                    .options = PTL_MD_EVENT_SEND_DISABLE,
                    .eq_handle = P.eq, .ct_handle = PTL_CT_NONE };
    ptl_handle_md_t mh;
    OK(PtlMDBind(P.ni, &md, &mh));
    printf("READY nid=%u pid=%u\n", P.me.phys.nid, P.me.phys.pid);
    fflush(stdout);
    for (;;) {
        ptl_event_t ev;
        OK(PtlEQWait(P.eq, &ev));
        if (ev.type == PTL_EVENT_PUT && ev.match_bits == PING_MB)
            OK(PtlPut(mh, 0, ev.mlength, PTL_NO_ACK_REQ, ev.initiator, PL_PT,
                      PING_MB, 0, NULL, 0));
    }
    return 0;
}

static int ptl_ping(char **argv)
{
    ptl_process_t t = target(argv);
    int iters = atoi(argv[2]), reps = atoi(argv[3]);
    uint64_t sz[64];
    int ns = sizes(argv[4], sz);
    pl_init(&P, 8192);
    pl_me(&P, buf, BUF_MAX, PING_MB, PTL_ME_EVENT_LINK_DISABLE);
    ptl_md_t md = { .start = buf, .length = BUF_MAX,
                    .options = PTL_MD_EVENT_SEND_DISABLE,
                    .eq_handle = P.eq, .ct_handle = PTL_CT_NONE };
    ptl_handle_md_t mh;
    OK(PtlMDBind(P.ni, &md, &mh));
    for (int s = 0; s < ns; s++)
        for (int r = -1; r < reps; r++) { /* r = -1: warm-up */
            double t0 = pl_now();
            for (int i = 0; i < iters; i++) {
                OK(PtlPut(mh, 0, sz[s], PTL_NO_ACK_REQ, t, PL_PT, PING_MB, 0,
                          NULL, 0));
                wait_put();
            }
            double us = (pl_now() - t0) / iters / 2 * 1e6;
            if (r >= 0)
                printf("R ptl-lat %llu %d %.2f\n", (unsigned long long)sz[s],
                       r, us);
        }
    return 0;
}

static int ptl_bw(char **argv)
{
    ptl_process_t t = target(argv);
    uint64_t bytes = strtoull(argv[2], NULL, 0);
    int reps = atoi(argv[3]);
    uint64_t sz[64];
    int ns = sizes(argv[4], sz);
    pl_init(&P, 8192);
    ptl_handle_md_t mh = pl_md(&P, buf, BUF_MAX);
    for (int s = 0; s < ns; s++) {
        /* The same count and window as nxbench's and mpibench's stream. */
        uint64_t count = (uint64_t)bench_stream_count((long)bytes, (long)sz[s]);
        uint64_t window = (uint64_t)bench_stream_window((long)sz[s]);
        for (int r = -1; r < reps; r++) {
            double t0 = pl_now();
            uint64_t sent = 0, acked = 0;
            while (acked < count) {
                while (sent < count && sent - acked < window) {
                    OK(PtlPut(mh, 0, sz[s], PTL_ACK_REQ, t, PL_PT, SINK_MB, 0,
                              NULL, 0));
                    sent++;
                }
                ptl_event_t ev;
                if (pl_wait(&P, PTL_EVENT_ACK, &ev, 60))
                    DIE("no ack");
                if (ev.ni_fail_type != PTL_NI_OK)
                    DIE("ack fail %d", ev.ni_fail_type);
                acked++;
            }
            double mbps = (double)(count * sz[s]) / (pl_now() - t0) / 1e6;
            if (r >= 0)
                printf("R ptl-bw %llu %d %.1f\n", (unsigned long long)sz[s], r,
                       mbps);
        }
    }
    pl_print_stats(&P);
    return 0;
}

static int raw_open(const char *ifn, int *ifindex)
{
    int fd = socket(AF_PACKET, SOCK_RAW, htons(RAW_TYPE));
    struct sockaddr_ll sll = { .sll_family = AF_PACKET,
                               .sll_protocol = htons(RAW_TYPE),
                               .sll_ifindex = (int)if_nametoindex(ifn) };
    if (fd < 0 || bind(fd, (struct sockaddr *)&sll, sizeof(sll)))
        DIE("raw socket on %s", ifn);
    *ifindex = sll.sll_ifindex;
    return fd;
}

static int raw_echo(char **argv)
{
    int ifx, fd = raw_open(argv[0], &ifx);
    printf("READY\n");
    for (;;) {
        ssize_t n = recv(fd, buf, 65536, 0);
        if (n < 14)
            continue;
        uint8_t tmp[6];
        memcpy(tmp, buf, 6);
        memcpy(buf, buf + 6, 6);
        memcpy(buf + 6, tmp, 6);
        send(fd, buf, (size_t)n, 0);
    }
    return 0;
}

static int raw_ping(char **argv)
{
    int ifx, fd = raw_open(argv[0], &ifx);
    unsigned m[6];
    sscanf(argv[1], "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4],
           &m[5]);
    int iters = atoi(argv[2]), reps = atoi(argv[3]);
    uint64_t sz[64];
    int ns = sizes(argv[4], sz);
    static uint8_t f[9100], in[9100];
    for (int i = 0; i < 6; i++)
        f[i] = (uint8_t)m[i];
    f[12] = RAW_TYPE >> 8;
    f[13] = RAW_TYPE & 0xff;
    for (int s = 0; s < ns; s++)
        for (int r = -1; r < reps; r++) {
            /* Ethernet minimum: 60 bytes on the wire. */
            size_t len = 14 + sz[s] < 60 ? 60 : 14 + sz[s];
            double t0 = pl_now();
            for (int i = 0; i < iters; i++) {
                send(fd, f, len, 0);
                while (recv(fd, in, sizeof(in), 0) < (ssize_t)len)
                    ;
            }
            double us = (pl_now() - t0) / iters / 2 * 1e6;
            if (r >= 0)
                printf("R raw-lat %llu %d %.2f\n", (unsigned long long)sz[s],
                       r, us);
        }
    return 0;
}

static int udp_echo(char **argv)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET,
                             .sin_port = htons((uint16_t)atoi(argv[0])) };
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)))
        DIE("udp bind");
    printf("READY\n");
    for (;;) {
        struct sockaddr_in from;
        socklen_t fl = sizeof(from);
        ssize_t n = recvfrom(fd, buf, 65536, 0, (struct sockaddr *)&from, &fl);
        if (n >= 0)
            sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&from, fl);
    }
    return 0;
}

static int udp_ping(char **argv)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET,
                             .sin_port = htons((uint16_t)atoi(argv[1])) };
    inet_pton(AF_INET, argv[0], &a.sin_addr);
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)))
        DIE("udp connect");
    int iters = atoi(argv[2]), reps = atoi(argv[3]);
    uint64_t sz[64];
    int ns = sizes(argv[4], sz);
    for (int s = 0; s < ns; s++)
        for (int r = -1; r < reps; r++) {
            double t0 = pl_now();
            for (int i = 0; i < iters; i++) {
                send(fd, buf, sz[s], 0);
                recv(fd, buf + BUF_MAX / 2, 65536, 0);
            }
            double us = (pl_now() - t0) / iters / 2 * 1e6;
            if (r >= 0)
                printf("R udp-lat %llu %d %.2f\n", (unsigned long long)sz[s],
                       r, us);
        }
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    buf = calloc(1, BUF_MAX);
    if (argc < 2 || !buf)
        DIE("usage: see the header of plbench.c");
    const char *m = argv[1];
    char **a = argv + 2;
    int need = !strcmp(m, "ptl-pong") ? 0
               : !strcmp(m, "raw-echo") || !strcmp(m, "udp-echo") ? 1
                                                                   : 5;
    if (argc - 2 < need)
        DIE("missing arguments for %s", m);
    if (!strcmp(m, "ptl-pong"))
        return ptl_pong();
    if (!strcmp(m, "ptl-ping"))
        return ptl_ping(a);
    if (!strcmp(m, "ptl-bw"))
        return ptl_bw(a);
    if (!strcmp(m, "raw-echo"))
        return raw_echo(a);
    if (!strcmp(m, "raw-ping"))
        return raw_ping(a);
    if (!strcmp(m, "udp-echo"))
        return udp_echo(a);
    if (!strcmp(m, "udp-ping"))
        return udp_ping(a);
    DIE("unknown mode %s", m);
}
