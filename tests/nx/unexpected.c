/* Thousands of small messages from every node to node 0, all sent before
 * node 0 posts a receive: none lost, each sender's messages in order. */
#include "nxtest.h"

#define PER_NODE 2000

int main(void)
{
    long me = mynode(), n = numnodes();
    long msg[8];
    if (me != 0)
        for (long i = 0; i < PER_NODE; i++) {
            msg[0] = me;
            msg[1] = i;
            csend(77, msg, (long)sizeof(long) * (2 + i % 6), 0, 0);
        }
    gsync();
    if (me == 0) {
        long *next = calloc((size_t)n, sizeof *next);
        for (long k = 0; k < PER_NODE * (n - 1); k++) {
            crecv(77, msg, sizeof msg);
            long src = infonode();
            CHECK(msg[0] == src && msg[1] == next[src], "from %ld got seq %ld want %ld", src,
                  msg[1], next[src]);
            CHECK(infocount() == (long)sizeof(long) * (2 + msg[1] % 6), "length");
            next[src]++;
        }
        CHECK(iprobe(-1) == 0, "extra messages");
        printf("unexpected ok: %ld messages\n", PER_NODE * (n - 1));
    }
    gsync();
    return 0;
}
