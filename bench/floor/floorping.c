/* The fabric floor (issue 8, experiment 9): frames bounced off a Tern node
 * booted with nettest=echo (kernel/net/nettest.c), from a host process on
 * the same bridge.  No protocol, no library: what any software on the nodes
 * could at best do on this virtual NIC path.
 *     floorping IF MAC lat ITERS REPS SIZES     round trip in us per size
 *     floorping IF MAC bw  FRAMES REPS [SIZES]  echoed MB/s per payload size
 *                                               (default: IF's MTU), up to 16
 *                                               frames in flight
 * SIZES: payload bytes, comma-separated (Ethernet payload, at most IF's MTU:
 * the node echoes frames up to its own MTU, which the bridge's should match).
 * Prints "R floor-rtt SIZE us VALUE" / "R floor-bw SIZE MBps VALUE". */
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define ECHO_TYPE 0x88B5

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int fd;
#define PAYLOAD_MAX 65535
static unsigned char frame[14 + PAYLOAD_MAX], in[14 + PAYLOAD_MAX + 64];

/* The next echo (our own outgoing frames are not delivered to us); 0 on
 * a 2 s silence. */
static int receive(void)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };
    for (;;) {
        if (poll(&p, 1, 2000) != 1)
            return 0;
        struct sockaddr_ll from;
        socklen_t fl = sizeof from;
        ssize_t n = recvfrom(fd, in, sizeof in, 0, (struct sockaddr *)&from, &fl);
        if (n >= 14 && from.sll_pkttype != PACKET_OUTGOING)
            return 1;
    }
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: floorping IF MAC lat ITERS REPS SIZES | IF MAC bw FRAMES REPS\n");
        return 2;
    }
    fd = socket(AF_PACKET, SOCK_RAW, htons(ECHO_TYPE));
    struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ECHO_TYPE),
                               .sll_ifindex = (int)if_nametoindex(argv[1]) };
    if (fd < 0 || !sll.sll_ifindex || bind(fd, (struct sockaddr *)&sll, sizeof sll)) {
        perror("floorping: socket");
        return 1;
    }
    /* 16 echoes of 64 KiB frames in flight are 1 MiB: more than the
     * default socket buffer (about 200 KiB), which would drop echoes and
     * end a measurement at the 2 s silence.  FORCE needs CAP_NET_ADMIN. */
    int buf = 32 << 20;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof buf))
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof buf))
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
    struct ifreq ifr = {0};
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", argv[1]);
    if (ioctl(fd, SIOCGIFHWADDR, &ifr)) {
        perror("floorping: SIOCGIFHWADDR");
        return 1;
    }
    unsigned m[6];
    if (sscanf(argv[2], "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) != 6)
        return 2;
    for (int i = 0; i < 6; i++)
        frame[i] = (unsigned char)m[i];
    memcpy(frame + 6, ifr.ifr_hwaddr.sa_data, 6);
    frame[12] = ECHO_TYPE >> 8;
    frame[13] = ECHO_TYPE & 0xff;
    if (ioctl(fd, SIOCGIFMTU, &ifr)) {
        perror("floorping: SIOCGIFMTU");
        return 1;
    }
    long mtu = ifr.ifr_mtu < PAYLOAD_MAX ? ifr.ifr_mtu : PAYLOAD_MAX;
    char mtu_s[16];
    snprintf(mtu_s, sizeof mtu_s, "%ld", mtu);
    int iters = atoi(argv[4]), reps = atoi(argv[5]);
    if (!strcmp(argv[3], "lat") && argc > 6) {
        for (char *s = argv[6], *end; *s; s = *end ? end + 1 : end) {
            long size = strtol(s, &end, 0);
            if (size > mtu)
                size = mtu;
            size_t len = 14 + (size_t)size < 60 ? 60 : 14 + (size_t)size;
            for (int r = -1; r < reps; r++) { /* rep -1 warms up */
                double t0 = now();
                for (int i = 0; i < iters; i++) {
                    send(fd, frame, len, 0);
                    if (!receive()) {
                        fprintf(stderr, "floorping: no echo\n");
                        return 1;
                    }
                }
                if (r >= 0)
                    printf("R floor-rtt %ld us %.2f\n", size, (now() - t0) / iters * 1e6);
            }
        }
    } else if (!strcmp(argv[3], "bw")) {
        for (char *s = argc > 6 ? argv[6] : mtu_s, *end; *s; s = *end ? end + 1 : end) {
            long size = strtol(s, &end, 0);
            if (size > mtu || size < 46) {
                fprintf(stderr, "floorping: payload %ld outside 46..%ld (MTU of %s)\n", size,
                        mtu, argv[1]);
                return 2;
            }
            for (int r = -1; r < reps; r++) {
                int sent = 0, got = 0;
                double t0 = now();
                while (got < iters) {
                    while (sent < iters && sent - got < 16) {
                        send(fd, frame, 14 + (size_t)size, 0);
                        sent++;
                    }
                    if (!receive()) {
                        fprintf(stderr, "floorping: %d of %d frames of %ld bytes lost\n",
                                sent - got, iters, size);
                        break; /* a lost frame: count what came back */
                    }
                    got++;
                }
                if (r >= 0)
                    printf("R floor-bw %ld MBps %.2f\n", size,
                           got * (double)size / (now() - t0) / 1e6);
            }
        }
    } else {
        return 2;
    }
    fflush(stdout);
    return 0;
}
