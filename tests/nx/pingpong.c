/* Ping-pong between nodes 0 and 1, 0 B .. 1 MiB, every byte checked. */
#include <string.h>
#include "nxtest.h"

int main(void)
{
    CHECK(numnodes() >= 2, "needs 2 nodes");
    long me = mynode();
    unsigned char *buf = malloc(1 << 20);
    for (long n = 0; n <= (1 << 20); n = n ? n * 4 : 1) {
        for (int rep = 0; rep < 3; rep++) {
            long seed = n + rep;
            if (me == 0) {
                fill(buf, n, seed);
                csend(10, buf, n, 1, 0);
                memset(buf, 0, (size_t)n);
                crecv(11, buf, 1 << 20);
                CHECK(infocount() == n && infonode() == 1 && infotype() == 11, "info %ld %ld %ld",
                      infocount(), infonode(), infotype());
                CHECK(first_bad(buf, n, seed + 1) < 0, "size %ld byte %ld", n, first_bad(buf, n, seed + 1));
            } else if (me == 1) {
                crecv(10, buf, 1 << 20);
                CHECK(infocount() == n, "count %ld want %ld", infocount(), n);
                CHECK(first_bad(buf, n, seed) < 0, "size %ld byte %ld", n, first_bad(buf, n, seed));
                fill(buf, n, seed + 1);
                csend(11, buf, n, 0, 0);
            }
        }
    }
    gsync();
    if (me == 0)
        printf("pingpong ok\n");
    return 0;
}
