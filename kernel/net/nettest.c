/* Driver test modes, run instead of a program.
 *
 * nettest=echo [-- NEXT_MAC]: the node sends back every frame of EtherType
 * 0x88B5 (IEEE local experimental) addressed to its MAC, addresses swapped;
 * with NEXT_MAC it forwards each to that node instead (its own MAC as the
 * source), so that nodes chained into a ring carry frames as a ring of
 * programs does, with no protocol.  The frame goes out through the ordinary
 * scatter-gather path: a fresh header, then the payload straight from the
 * receive buffer, cut into pieces at varying points so multi-descriptor
 * frames are exercised.  Counts are logged as they change, at most once a
 * second.
 *
 * nettest=ping -- PEER_MAC lat ITERS REPS SIZES
 *               | PEER_MAC bw FRAMES REPS [SIZES [WINDOW [FROM_MAC]]]
 * bounces frames off an echo node from another node and logs what
 * bench/floor/floorping.c prints from a host process, then ends the run.
 * It is the fabric floor between two nodes (experiment 9): every hop a
 * message between two Tern nodes takes (the sender's doorbell, the taps and
 * the bridge, the receiver's interrupt and its wake from a halt in
 * netdev_wait) and no protocol, where the host process's floor crosses one
 * emulated NIC and the host's own socket path.  bw keeps WINDOW frames in
 * flight (16) and counts those that come back from FROM_MAC (PEER_MAC):
 * the last node of a ring of forwarders (the ring's floor, experiment 9). */
#include "nettest.h"
#include "boot.h"
#include "kernel.h"
#include "kmalloc.h"
#include "time.h"

struct echo_counts {
    uint64_t echoed, ignored, failed;
    const uint8_t *next;     /* forward to this MAC; NULL: back to the sender */
};

static void echo(const void *frame, size_t len, void *arg)
{
    struct echo_counts *c = arg;
    const uint8_t *f = frame;
    const uint8_t *mac = netdev_mac();
    if (len < ETH_HLEN || memcmp(f, mac, ETH_ALEN) != 0 ||
        ((f[12] << 8) | f[13]) != ECHO_ETHERTYPE || len > ETH_HLEN + netdev_mtu()) {
        c->ignored++;
        return;
    }
    uint8_t hdr[ETH_HLEN];
    memcpy(hdr, c->next ? c->next : f + ETH_ALEN, ETH_ALEN);
    memcpy(hdr + ETH_ALEN, mac, ETH_ALEN);
    hdr[12] = f[12];
    hdr[13] = f[13];

    struct net_sg sg[NETDEV_MAX_SG];
    int n = 0;
    sg[n++] = (struct net_sg){hdr, ETH_HLEN};
    const uint8_t *p = f + ETH_HLEN;
    size_t left = len - ETH_HLEN;
    /* Up to three payload pieces; the cut points follow the frame count so
     * that odd and even offsets both occur. */
    size_t cut = (size_t)(c->echoed % 7) * 97 + 1;
    while (left && n < 3) {
        size_t piece = left < cut ? left : cut;
        sg[n++] = (struct net_sg){p, piece};
        p += piece;
        left -= piece;
    }
    if (left)
        sg[n++] = (struct net_sg){p, left};
    if (netdev_send(sg, n) == 0)
        c->echoed++;
    else
        c->failed++;
}

__attribute__((noreturn)) void nettest_echo(void)
{
    if (!netdev_present())
        load_error("nettest: no network device");
    static uint8_t next[ETH_ALEN];
    struct echo_counts c = {0}, logged = {0};
    if (options.envc > 1 || (options.envc == 1 && !nettest_parse_mac(options.envp[0], next)))
        load_error("usage: nettest=echo [-- NEXT_MAC]");
    if (options.envc == 1) {
        c.next = next;
        kprintf("nettest: forwarding EtherType 0x%x frames to %s\n", ECHO_ETHERTYPE,
                options.envp[0]);
    } else {
        kprintf("nettest: echoing EtherType 0x%x frames\n", ECHO_ETHERTYPE);
    }
    uint64_t next_log = 0;
    for (;;) {
        netdev_wait(time_monotonic_ns() + 1000000000ULL);
        netdev_poll(echo, &c);
        uint64_t now = time_monotonic_ns();
        if (now >= next_log && (c.echoed != logged.echoed || c.ignored != logged.ignored ||
                                c.failed != logged.failed)) {
            struct netdev_stats s;
            netdev_get_stats(&s);
            kprintf("nettest: echoed %lu, ignored %lu, failed %lu; rx %lu dropped %lu, "
                    "tx %lu errors %lu, interrupts %lu\n",
                    c.echoed, c.ignored, c.failed, s.rx_frames, s.rx_dropped, s.tx_frames,
                    s.tx_errors, s.interrupts);
            logged = c;
            next_log = now + 1000000000ULL;
        }
    }
}

/* ---- nettest=ping ---- */

#define PING_WINDOW 16                  /* frames in flight in bw, as floorping */
#define PING_WINDOW_MAX 64              /* ... at most: fewer than the transmit ring holds */
#define PING_SILENCE_NS 2000000000ULL   /* no echo this long: lost */

struct ping_rx {
    const uint8_t *from;     /* where the echoes come from */
    uint64_t got;
};

static void ping_take(const void *frame, size_t len, void *arg)
{
    struct ping_rx *r = arg;
    const uint8_t *f = frame;
    if (len >= ETH_HLEN && !memcmp(f, netdev_mac(), ETH_ALEN) &&
        !memcmp(f + ETH_ALEN, r->from, ETH_ALEN) && ((f[12] << 8) | f[13]) == ECHO_ETHERTYPE)
        r->got++;
}

/* Waits until `want` echoes have come in all told; false after a silence. */
static bool ping_wait(struct ping_rx *r, uint64_t want)
{
    while (r->got < want) {
        if (!netdev_wait(time_monotonic_ns() + PING_SILENCE_NS))
            return false;
        netdev_poll(ping_take, r);
    }
    return true;
}

bool nettest_parse_mac(const char *s, uint8_t mac[ETH_ALEN])
{
    for (int i = 0; i < ETH_ALEN; i++) {
        unsigned v = 0, digits = 0;
        for (; digits < 2; digits++, s++) {
            unsigned c = (unsigned char)*s;
            unsigned d = c >= '0' && c <= '9' ? c - '0' :
                         (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10 : 16;
            if (d > 15)
                break;
            v = v * 16 + d;
        }
        if (!digits || *s != (i == ETH_ALEN - 1 ? '\0' : ':'))
            return false;
        s++;
        mac[i] = (uint8_t)v;
    }
    return true;
}

/* The next size of a comma-separated list at *s, advancing it; false at
 * its end or at a word that is not a number. */
static bool next_size(const char **s, uint64_t *size)
{
    if (!**s)
        return false;
    char word[24];
    size_t n = 0;
    while ((*s)[n] && (*s)[n] != ',' && n < sizeof word - 1) {
        word[n] = (*s)[n];
        n++;
    }
    word[n] = '\0';
    *s += n + ((*s)[n] == ',');
    if (!parse_size(word, size))
        load_error("nettest=ping: bad size '%s'", word);
    return true;
}

void nettest_result(const char *what, uint64_t size, const char *unit, uint64_t hundredths)
{
    kprintf("R %s %lu %s %lu.%02lu\n", what, size, unit, hundredths / 100, hundredths % 100);
}

__attribute__((noreturn)) void nettest_ping(void)
{
    if (!netdev_present())
        load_error("nettest: no network device");
    char **av = options.envp;
    int ac = options.envc;
    uint8_t peer[ETH_ALEN], from[ETH_ALEN];
    uint64_t iters, reps, window = PING_WINDOW;
    bool lat = ac > 1 && !strcmp(av[1], "lat");
    if (ac < 4 || !nettest_parse_mac(av[0], peer) || (!lat && strcmp(av[1], "bw")) ||
        !parse_size(av[2], &iters) || !parse_size(av[3], &reps) || !iters ||
        iters > 100000000 || reps > 1000 || (lat && ac != 5) || ac > 7 ||
        (ac > 5 && (!parse_size(av[5], &window) || !window || window > PING_WINDOW_MAX)) ||
        !nettest_parse_mac(ac > 6 ? av[6] : av[0], from))
        load_error("usage: nettest=ping -- PEER_MAC lat ITERS REPS SIZES | "
                   "PEER_MAC bw FRAMES REPS [SIZES [WINDOW [FROM_MAC]]] (WINDOW 1..%u)",
                   PING_WINDOW_MAX);
    unsigned mtu = netdev_mtu();
    uint8_t *payload = kmalloc(mtu);
    if (!payload)
        load_error("nettest=ping: no kernel memory for a %u-byte frame", mtu);
    memset(payload, 0x5a, mtu);
    uint8_t hdr[ETH_HLEN];
    memcpy(hdr, peer, ETH_ALEN);
    memcpy(hdr + ETH_ALEN, netdev_mac(), ETH_ALEN);
    hdr[12] = ECHO_ETHERTYPE >> 8;
    hdr[13] = ECHO_ETHERTYPE & 0xff;
    char mtu_s[16];
    snprintf(mtu_s, sizeof mtu_s, "%u", mtu);
    const char *list = ac > 4 ? av[4] : mtu_s;
    uint64_t size;
    /* Every word is checked before the first frame goes. */
    for (const char *l = list; next_size(&l, &size);)
        if (size > mtu || (!lat && size < 46))
            load_error("nettest=ping: payload %lu outside %u..%u (the NIC's MTU)", size,
                       lat ? 0 : 46, mtu);
    kprintf("nettest: pinging %s, %s\n", av[0], av[1]);
    struct ping_rx rx = {from, 0};
    while (next_size(&list, &size)) {
        /* Short frames are padded to 60 bytes, as the host's floorping does. */
        struct net_sg sg = {payload, size < 46 ? 46 : size};
        for (uint64_t r = 0; r <= reps; r++) {   /* the first repetition warms up */
            uint64_t base = rx.got, sent = 0, t0 = time_monotonic_ns();
            while (rx.got - base < iters) {
                while (sent < iters && sent - (rx.got - base) < (lat ? 1 : window)) {
                    if (netdev_send_async(hdr, ETH_HLEN, &sg, 1))
                        load_error("nettest=ping: the NIC did not send");
                    sent++;
                }
                if (!ping_wait(&rx, lat ? base + sent : rx.got + 1))
                    load_error("nettest=ping: %lu of %lu echoes of %lu bytes lost",
                               sent - (rx.got - base), iters, size);
            }
            uint64_t ns = time_monotonic_ns() - t0;
            if (!r)
                continue;
            if (lat)
                nettest_result("floor-rtt", size, "us", ns / 10 / iters);
            else
                nettest_result("floor-bw", size, "MBps", iters * size * 100000 / (ns ? ns : 1));
        }
    }
    node_end(END_EXIT, 0);
}
