/* 64 MiB messages, receive posted before and after the send; mids polled
 * with msgdone; msgignore. */
#include <string.h>
#include "nxtest.h"

#define BIG (64L << 20)

int main(void)
{
    CHECK(numnodes() >= 2, "needs 2 nodes");
    long me = mynode();
    unsigned char *b = malloc(BIG);
    CHECK(b, "no memory");
    if (me == 0) {
        fill(b, BIG, 1);
        csend(1, b, BIG, 1, 0);                  /* receiver posted first */
        crecv(2, b, 8);                          /* receiver says: now post late */
        fill(b, BIG, 2);
        long mid = isend(3, b, BIG, 1, 0);
        long polls = 0;
        while (!msgdone(mid))
            polls++;
        long small = 42;
        msgignore(isend(4, &small, sizeof small, 1, 0));
    } else if (me == 1) {
        long mid = irecv(1, b, BIG);
        msgwait(mid);
        CHECK(infocount() == BIG && first_bad(b, BIG, 1) < 0, "first 64 MiB");
        csend(2, b, 8, 0, 0);
        memset(b, 0, BIG);
        cprobe(3);                               /* the send is pending before we post */
        crecv(3, b, BIG);
        CHECK(infocount() == BIG && first_bad(b, BIG, 2) < 0, "second 64 MiB");
        long small = 0;
        crecv(4, &small, sizeof small);
        CHECK(small == 42, "ignored send arrived: %ld", small);
        printf("bigmsg ok\n");
    }
    gsync();
    return 0;
}
