/* Messages a node sends to itself (NX allows it): small and eager ones
 * before the receive is posted (unexpected), one posted first, and one
 * longer than the eager limit (rendezvous: the node pulls from itself),
 * while the other nodes send to it as well.  Each node checks every byte. */
#include <string.h>
#include "nxtest.h"

#define N_SMALL 50
#define BIG (256L * 1024)

int main(void)
{
    long me = mynode(), n = numnodes();
    long v;
    /* Unexpected: all sent before any receive. */
    for (long i = 0; i < N_SMALL; i++) {
        v = me * 1000 + i;
        csend(10, &v, sizeof v, me, 0);
    }
    unsigned char *big = malloc(BIG), *got = malloc(BIG);
    CHECK(big && got, "malloc");
    fill(big, BIG, me + 1);
    long mid = isend(11, big, BIG, me, 0);   /* rendezvous to itself */
    long rmid = irecv(12, &v, sizeof v);      /* posted before the send */
    long w = me + 7;
    csend(12, &w, sizeof w, me, 0);
    msgwait(rmid);
    CHECK(v == me + 7 && infonode() == me, "posted self receive got %ld from %ld", v, infonode());
    for (long i = 0; i < N_SMALL; i++) {
        crecv(10, &v, sizeof v);
        CHECK(v == me * 1000 + i && infonode() == me, "self message %ld: got %ld from %ld", i, v,
              infonode());
    }
    memset(got, 0, BIG);
    crecv(11, got, BIG);
    msgwait(mid);
    CHECK(infocount() == BIG && first_bad(got, BIG, me + 1) < 0, "big self message bad at %ld",
          first_bad(got, BIG, me + 1));
    /* And with the others' messages interleaved. */
    for (long k = 0; k < n; k++) {
        v = me;
        csend(20, &v, sizeof v, k, 0);
    }
    long sum = 0;
    for (long k = 0; k < n; k++) {
        crecv(20, &v, sizeof v);
        sum += v;
    }
    CHECK(sum == n * (n - 1) / 2, "sum %ld", sum);
    gsync();
    if (me == 0)
        printf("selfsend ok on %ld nodes\n", n);
    return 0;
}
