/* A lossy wire for tests where tc netem is missing (kernels without
 * sch_netem): forwards EtherType 0x88B5 frames between two interfaces of a
 * middle namespace, both directions, losing, duplicating, delaying
 * (reordering) and corrupting them with a seeded PRNG, like
 *   netem loss L% duplicate D% reorder R% corrupt C% (delay ~US us).
 *   impair IF1 IF2 LOSS DUP REORDER CORRUPT DELAY_US SEED
 * Runs until killed; prints "IMPAIR READY", and counters on SIGTERM. */
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAXF 9100
#define QN 4096

struct held {
    uint64_t at;
    int out;
    int len;
    uint8_t data[MAXF];
};

static struct held q[QN];
static int nq;
static uint64_t rng = 88172645463325252ull;
static volatile sig_atomic_t stop;
static unsigned long fwd, lost, dups, delayed, corrupt;

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static int chance(unsigned pct) { return pct && rnd() % 100 < pct; }

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static int open_if(const char *name)
{
    int fd = socket(AF_PACKET, SOCK_RAW, 0);
    struct sockaddr_ll sll = { .sll_family = AF_PACKET,
                               .sll_protocol = htons(0x88B5),
                               .sll_ifindex = (int)if_nametoindex(name) };
    if (fd < 0 || !sll.sll_ifindex ||
        bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
        perror(name);
        exit(1);
    }
    return fd;
}

static void on_term(int sig) { (void)sig; stop = 1; }

int main(int argc, char **argv)
{
    if (argc < 9) {
        fprintf(stderr, "usage: impair IF1 IF2 LOSS DUP REORDER CORRUPT "
                        "DELAY_US SEED\n");
        return 2;
    }
    int fd[2] = { open_if(argv[1]), open_if(argv[2]) };
    unsigned loss = (unsigned)atoi(argv[3]), dupp = (unsigned)atoi(argv[4]);
    unsigned reo = (unsigned)atoi(argv[5]), cor = (unsigned)atoi(argv[6]);
    uint64_t delay = strtoull(argv[7], NULL, 0);
    rng ^= strtoull(argv[8], NULL, 0) * 0x9E3779B97F4A7C15ull;
    signal(SIGTERM, on_term);
    printf("IMPAIR READY\n");
    fflush(stdout);
    uint8_t buf[MAXF];
    while (!stop) {
        uint64_t t = now_us();
        for (int i = 0; i < nq;) {
            if (q[i].at <= t) {
                send(q[i].out, q[i].data, (size_t)q[i].len, MSG_DONTWAIT);
                q[i] = q[--nq];
            } else {
                i++;
            }
        }
        struct pollfd p[2] = { { fd[0], POLLIN, 0 }, { fd[1], POLLIN, 0 } };
        if (poll(p, 2, nq ? 0 : 20) <= 0)
            continue;
        for (int s = 0; s < 2; s++) {
            if (!(p[s].revents & POLLIN))
                continue;
            struct sockaddr_ll from;
            socklen_t fl = sizeof(from);
            ssize_t n = recvfrom(fd[s], buf, sizeof(buf), MSG_DONTWAIT,
                                 (struct sockaddr *)&from, &fl);
            if (n <= 0 || from.sll_pkttype == PACKET_OUTGOING)
                continue;
            int out = fd[1 - s];
            if (chance(loss)) {
                lost++;
                continue;
            }
            if (chance(cor) && n > 14) {
                buf[14 + rnd() % (uint64_t)(n - 14)] ^= (uint8_t)(1 + rnd() % 255);
                corrupt++;
            }
            int copies = 1 + chance(dupp);
            dups += (unsigned long)(copies - 1);
            for (int c = 0; c < copies; c++) {
                /* Held frames let later ones overtake them: reordering. */
                if ((chance(reo) || c) && nq < QN) {
                    q[nq].at = now_us() + delay + rnd() % (delay + 1);
                    q[nq].out = out;
                    q[nq].len = (int)n;
                    memcpy(q[nq].data, buf, (size_t)n);
                    nq++;
                    delayed++;
                } else {
                    send(out, buf, (size_t)n, MSG_DONTWAIT);
                }
            }
            fwd++;
        }
    }
    printf("IMPAIR fwd=%lu lost=%lu dup=%lu delayed=%lu corrupt=%lu\n", fwd,
           lost, dups, delayed, corrupt);
    return 0;
}
