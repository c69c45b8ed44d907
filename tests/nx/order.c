/* Pair-wise order with receives posted before and after the sends, short,
 * middle (eager, each in a large send slot, more of them in flight than
 * there are such slots) and long (rendezvous-sized) messages mixed in one
 * stream; mids polled with msgdone; irecvx info; wildcard receives from
 * several senders; msgcancel of a receive nothing matched. */
#include <string.h>
#include "nxtest.h"

#define K 40
#define MID 20000 /* eager, above the 8 KiB send slots */
#define BIG 70000 /* above the Portals build's eager limit (64 KiB) */

static long len_of(long i) { return i % 3 == 0 ? 8 + i : i % 3 == 1 ? MID - i : BIG - i; }

static unsigned char out[K][BIG], in[K][BIG];

int main(void)
{
    CHECK(numnodes() >= 2, "needs 2 nodes");
    long me = mynode(), n = numnodes(), mids[K], info[K][4], x = 0;

    /* 1. Node 0 -> node 1: half the receives posted before the sends, half
     * after (those messages are unexpected when the receive comes). */
    if (me == 1)
        for (long i = 0; i < K / 2; i++)
            mids[i] = irecvx(5, in[i], BIG, 0, -1, info[i]);
    gsync();
    if (me == 0) {
        for (long i = 0; i < K; i++) {
            fill(out[i], len_of(i), i);
            mids[i] = isend(5, out[i], len_of(i), 1, 0);
        }
        csend(6, &x, sizeof x, 1, 0);            /* "all sent" */
        long left = K, polls = 0;
        while (left)
            for (long i = 0; i < K; i++, polls++)
                if (mids[i] >= 0 && msgdone(mids[i])) {
                    mids[i] = -1;
                    left--;
                }
    } else if (me == 1) {
        crecv(6, &x, sizeof x);
        for (long i = K / 2; i < K; i++)
            mids[i] = irecvx(5, in[i], BIG, -1, -1, info[i]);
        long left = K;
        while (left)
            for (long i = K - 1; i >= 0; i--)
                if (mids[i] >= 0 && msgdone(mids[i])) {
                    mids[i] = -1;
                    left--;
                }
        for (long i = 0; i < K; i++) {
            CHECK(info[i][0] == 5 && info[i][1] == len_of(i) && info[i][2] == 0,
                  "receive %ld: info type %ld count %ld node %ld", i, info[i][0], info[i][1],
                  info[i][2]);
            CHECK(first_bad(in[i], len_of(i), i) < 0, "receive %ld holds the wrong message", i);
        }
    }
    gsync();

    /* 2. Every other node sends 12 messages of three types and two sizes
     * to node 0, which takes them with wildcards: per sender, in order. */
    if (me != 0)
        for (long k = 0; k < 12; k++) {
            long *m = (long *)out[0];
            m[0] = me;
            m[1] = k;
            csend(100 + k % 3, out[0], k % 4 == 3 ? BIG : 16, 0, 0);
        }
    if (me == 0) {
        long next[64] = {0}, got[4];
        for (long k = 0; k < 12 * (n - 1); k++) {
            crecvx(-1, in[0], BIG, -1, -1, got);
            long *m = (long *)in[0], src = got[2];
            CHECK(src >= 1 && src < n && m[0] == src && m[1] == next[src % 64],
                  "from %ld got %ld/%ld, want %ld", src, m[0], m[1], next[src % 64]);
            CHECK(got[0] == 100 + m[1] % 3 && got[1] == (m[1] % 4 == 3 ? BIG : 16),
                  "type %ld count %ld", got[0], got[1]);
            next[src % 64]++;
        }
    }
    gsync();

    /* 3. A cancelled receive takes nothing; the message goes to the next. */
    if (me == 0) {
        long mid = irecv(999, in[0], 8);
        msgcancel(mid);
    }
    gsync();
    if (me == 1) {
        x = 4242;
        csend(999, &x, sizeof x, 0, 0);
    }
    if (me == 0) {
        long y = 0;
        crecv(999, &y, sizeof y);
        CHECK(y == 4242 && infonode() == 1, "after cancel got %ld", y);
        CHECK(iprobe(-1) == 0, "messages left over");
        printf("order ok on %ld nodes\n", n);
    }
    gsync();
    return 0;
}
