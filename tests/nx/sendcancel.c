/* msgcancel of a send: a message no receive has taken is taken back (its
 * receiver never sees it, and the next message of that type is the next
 * one received), short (eager) and long (rendezvous); one in the middle of
 * three of one type leaves the other two in order; a send whose receive
 * was already posted is not taken back: its data arrives.  Node 1 sends,
 * node 0 receives; the cancels are answered while node 0 waits in gsync. */
#include <string.h>
#include "nxtest.h"

#define BIG 70000 /* above the Portals build's eager limit (64 KiB) */

static unsigned char out[BIG], in[BIG];

/* Node 1 sends len bytes of pattern seed as type t and cancels it. */
static void send_and_cancel(long t, long len, long seed)
{
    if (mynode() == 1) {
        fill(out, len, seed);
        long mid = isend(t, out, len, 0, 0);
        msgcancel(mid);
    }
    gsync();
    if (mynode() == 0)
        CHECK(iprobe(t) == 0, "type %ld (%ld bytes): the cancelled message arrived", t, len);
    gsync();
}

/* The next message of type t at node 0 is len bytes of pattern seed. */
static void next_is(long t, long len, long seed)
{
    if (mynode() == 1) {
        fill(out, len, seed);
        csend(t, out, len, 0, 0);
    }
    if (mynode() == 0) {
        memset(in, 0, sizeof in);
        crecv(t, in, sizeof in);
        CHECK(infocount() == len && first_bad(in, len, seed) == -1,
              "type %ld: got %ld bytes, not the %ld sent after the cancel", t, infocount(), len);
    }
    gsync();
}

int main(void)
{
    CHECK(numnodes() >= 2, "needs 2 nodes");
    long me = mynode();

    /* 1. Unmatched short and long sends come back. */
    send_and_cancel(701, 8, 1);
    next_is(701, 8, 2);
    send_and_cancel(702, BIG, 3);
    next_is(702, BIG, 4);

    /* 2. The middle one of three: the first and third arrive, in order. */
    if (me == 1) {
        long v[3] = {11, 22, 33}, mid[3];
        for (int i = 0; i < 3; i++)
            mid[i] = isend(703, &v[i], sizeof v[i], 0, 0);
        msgcancel(mid[1]);
        msgwait(mid[0]);
        msgwait(mid[2]);
    }
    gsync();
    if (me == 0) {
        long a = 0, b = 0;
        crecv(703, &a, sizeof a);
        crecv(703, &b, sizeof b);
        CHECK(a == 11 && b == 33 && iprobe(703) == 0, "after a middle cancel got %ld, %ld", a, b);
    }
    gsync();

    /* 3. A receive posted first takes the message: the cancel is too late. */
    for (int k = 0; k < 2; k++) {
        long len = k ? BIG : 8, mid = -1;
        if (me == 0) {
            memset(in, 0, sizeof in);
            mid = irecv(704, in, sizeof in);
        }
        gsync();
        if (me == 1) {
            fill(out, len, 5);
            msgcancel(isend(704, out, len, 0, 0));
        }
        if (me == 0) {
            msgwait(mid);
            CHECK(infocount() == len && first_bad(in, len, 5) == -1,
                  "a matched message of %ld bytes did not arrive whole", len);
        }
        gsync();
    }
    if (me == 0)
        printf("sendcancel ok on %ld nodes\n", numnodes());
    gsync();
    return 0;
}
