/* Messages above the eager limit whose receive was posted first, or not:
 * node 0 sends, node 1 receives, and a gsync orders the two.  Each arrives
 * whole and right.  The Portals builds carry the first bytes of such a
 * message with its announcement (libmsg/msg_send.c) and print in their
 * stats (TERN_NX_STATS) how many a posted receive took ("pushed") and how
 * many found none ("push_missed"); tests/test_libnx_portals.py and
 * test_nx_tern.py check those counts:
 *   1 posted first                      pushed
 *   2 sent first (node 1 probes first)  missed: pulled whole
 *   3 posted first                      only announced after the miss
 *   4 posted first                      pushed again (3's pull said posted)
 *   5 posted first, 3 MiB               its first 256 KiB pushed, the rest pulled
 * (A pushed message that a shorter receive truncates: tests/mpi/errors.c.) */
#include <string.h>
#include "nxtest.h"

#define MID 200000L
#define BIG (3L << 20)

static void posted_first(long me, long type, unsigned char *b, long n, long seed)
{
    if (me == 1) {
        memset(b, 0, (size_t)n);
        long mid = irecv(type, b, n);
        gsync();
        msgwait(mid);
        CHECK(infocount() == n && first_bad(b, n, seed) < 0, "type %ld: %ld bytes, bad at %ld",
              type, infocount(), first_bad(b, n, seed));
    } else {
        fill(b, n, seed);
        gsync();
        csend(type, b, n, 1, 0);
    }
    gsync();
}

int main(void)
{
    CHECK(numnodes() == 2, "needs 2 nodes");
    long me = mynode();
    unsigned char *b = malloc(BIG);
    CHECK(b, "no memory");
    posted_first(me, 1, b, MID, 1);
    if (me == 0) {
        fill(b, MID, 2);
        csend(2, b, MID, 1, 0);
    } else {
        cprobe(2);      /* it is here: no receive was posted when it came */
        memset(b, 0, MID);
        crecv(2, b, MID);
        CHECK(infocount() == MID && first_bad(b, MID, 2) < 0, "type 2 bad at %ld",
              first_bad(b, MID, 2));
    }
    gsync();
    posted_first(me, 3, b, MID, 3);
    posted_first(me, 4, b, MID, 4);
    posted_first(me, 5, b, BIG, 5);
    if (me == 0)
        printf("pushed ok\n");
    return 0;
}
