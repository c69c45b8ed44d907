/* The ring of seed 003 (section 4.3.1): every node sends to its right
 * neighbour and receives from its left, 8 B .. 8 MiB, data verified. */
#include "nxtest.h"

int main(void)
{
    long me = mynode(), n = numnodes();
    long right = (me + 1) % n, left = (me + n - 1) % n;
    unsigned char *out = malloc(8 << 20), *in = malloc(8 << 20);
    for (long len = 8; len <= (8 << 20); len *= 8) {
        fill(out, len, me * 1000 + len);
        long mid = irecv(20, in, len);
        csend(20, out, len, right, 0);
        msgwait(mid);
        CHECK(infonode() == left && infocount() == len, "info node %ld count %ld", infonode(),
              infocount());
        CHECK(first_bad(in, len, left * 1000 + len) < 0, "len %ld byte %ld", len,
              first_bad(in, len, left * 1000 + len));
    }
    gsync();
    if (me == 0)
        printf("ring ok on %ld nodes\n", n);
    return 0;
}
