/* Messages above the eager limit whose receive was posted first, or not:
 * node 0 sends, node 1 receives, and a gsync orders the two.  Each arrives
 * whole and right.  The Portals builds carry the first bytes of such a
 * message with its announcement (libmsg/msg_send.c) and print in their
 * stats (TERN_NX_STATS) how many the receiver took ("pushed": a posted
 * receive, or a landing buffer for a receive to come) and how many found
 * neither ("push_missed"); tests/test_libnx_portals.py and test_nx_tern.py
 * check those counts:
 *   1 posted first                      pushed
 *   2 sent first (node 1 probes first)  pushed: it waited in a landing
 *                                       buffer, and the receive copies it
 *   3 posted first                      pushed
 *   4 posted first                      pushed
 *   5 posted first, 3 MiB               its first 256 KiB pushed, the rest pulled
 * With the argument "flood", then: node 0 starts FLOOD sends at once before
 * node 1 posts any receive.  The landing buffers take as many as they have
 * room for; the rest are missed (pulled whole) or, once node 0 knows of a
 * miss, only announced.  Every byte still arrives, in order.  With "flood2"
 * again, after one posted first (announced only, after the misses; its get
 * says a receive was waiting, so node 0 pushes again): the landing buffers
 * emptied by the first flood are back, and take some of the second.  With
 * "drain" (run with small unexpected space and small pushes: see
 * test_libnx_portals.py): two messages land, one whole (its send is done at
 * the ACK) and one in part, then eager messages overflow node 1's
 * unexpected space, so it drains everything Portals holds, the landed two
 * with their data, and pauses node 0.  Every byte still arrives, in order.
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

#define FLOOD 12

static void flood(long me, unsigned char *b, long seed)
{
    long mids[FLOOD];
    if (me == 0) {
        for (long k = 0; k < FLOOD; k++) {
            fill(b + k * MID, MID, seed + k);
            mids[k] = isend(6, b + k * MID, MID, 1, 0);
        }
        csend(7, b, 8, 1, 0); /* after them all: node 1 waits for it */
        for (long k = 0; k < FLOOD; k++)
            msgwait(mids[k]);
    } else {
        crecv(7, b, 8);
        for (long k = 0; k < FLOOD; k++) {
            memset(b, 0, MID);
            crecv(6, b, MID);
            CHECK(infocount() == MID && first_bad(b, MID, seed + k) < 0,
                  "flood message %ld: %ld bytes, bad at %ld", k, infocount(),
                  first_bad(b, MID, seed + k));
        }
    }
    gsync();
}

#define N_EAGER 300
#define EAGER_LEN 3000

static void drain(long me, unsigned char *b)
{
    static const long lens[2] = {10000, 20000};
    unsigned char *e = b + 65536;
    if (me == 0) {
        long mids[2];
        for (int k = 0; k < 2; k++) {
            fill(b + k * 32768, lens[k], 300 + k);
            mids[k] = isend(9, b + k * 32768, lens[k], 1, 0);
        }
        for (long k = 0; k < N_EAGER; k++) {
            fill(e, EAGER_LEN, 400 + k);
            csend(10, e, EAGER_LEN, 1, 0);
        }
        csend(11, e, 8, 1, 0);
        for (int k = 0; k < 2; k++)
            msgwait(mids[k]);
    } else {
        crecv(11, e, 8);
        for (int k = 0; k < 2; k++) {
            memset(b, 0, (size_t)lens[k]);
            crecv(9, b, lens[k]);
            CHECK(infocount() == lens[k] && first_bad(b, lens[k], 300 + k) < 0,
                  "landed message %d: %ld bytes, bad at %ld", k, infocount(),
                  first_bad(b, lens[k], 300 + k));
        }
        for (long k = 0; k < N_EAGER; k++) {
            crecv(10, e, EAGER_LEN);
            CHECK(infocount() == EAGER_LEN && first_bad(e, EAGER_LEN, 400 + k) < 0,
                  "eager message %ld bad at %ld", k, first_bad(e, EAGER_LEN, 400 + k));
        }
    }
    gsync();
}

int main(int argc, char **argv)
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
    if (argc > 1 && (!strcmp(argv[1], "flood") || !strcmp(argv[1], "flood2")))
        flood(me, b, 100);
    if (argc > 1 && !strcmp(argv[1], "flood2")) {
        posted_first(me, 8, b, MID, 8);
        flood(me, b, 200);
    }
    if (argc > 1 && !strcmp(argv[1], "drain"))
        drain(me, b);
    if (me == 0)
        printf("pushed ok\n");
    return 0;
}
