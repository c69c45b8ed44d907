/* Driver test mode (boot option nettest=echo): instead of running a program
 * the node sends back every frame of EtherType 0x88B5 (IEEE local
 * experimental) addressed to its MAC, addresses swapped.  The reply goes
 * through the ordinary scatter-gather path: a fresh header, then the payload
 * straight from the receive buffer, cut into pieces at varying points so
 * multi-descriptor frames are exercised.  Counts are logged as they change,
 * at most once a second. */
#include "netdev.h"
#include "kernel.h"
#include "time.h"

#define ECHO_ETHERTYPE 0x88B5

struct echo_counts {
    uint64_t echoed, ignored, failed;
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
    memcpy(hdr, f + ETH_ALEN, ETH_ALEN);
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
    kprintf("nettest: echoing EtherType 0x%x frames\n", ECHO_ETHERTYPE);
    struct echo_counts c = {0}, logged = {0};
    uint64_t next_log = 0;
    for (;;) {
        netdev_wait(time_monotonic_ns() + 1000000000ULL);
        netdev_poll(echo, &c);
        uint64_t now = time_monotonic_ns();
        if (now >= next_log && memcmp(&c, &logged, sizeof c) != 0) {
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
