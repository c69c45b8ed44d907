/* Sending to one's own node (allowed in this NX): short and long messages,
 * received after and before they are sent. */
#include "nxtest.h"

#define BIG (100 * 1000)

int main(void)
{
    long me = mynode();
    unsigned char *a = malloc(BIG), *b = malloc(BIG);
    CHECK(a && b, "no memory");
    fill(a, 16, 1);
    csend(7, a, 16, me, 0);                      /* unexpected, then received */
    crecv(7, b, 16);
    CHECK(infonode() == me && infocount() == 16 && first_bad(b, 16, 1) < 0, "short");
    fill(a, BIG, 2);
    long mid = irecv(8, b, BIG);                 /* posted first */
    long smid = isend(8, a, BIG, me, 0);
    msgwait(mid);
    msgwait(smid);
    CHECK(infocount() == BIG && first_bad(b, BIG, 2) < 0, "long");
    gsync();
    if (me == 0)
        printf("self ok on %ld nodes\n", numnodes());
    return 0;
}
