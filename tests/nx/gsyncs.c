/* gsync really waits, thousands of times in a row (the check of
 * tests/mpi/barrier.c, in NX): ITERS gsyncs back to back, then ITERS more
 * in which node `late` = s mod n looks (iprobe, for up to 2 ms every 8th
 * time) for a message the others send it only after leaving gsync s.
 * Seeing one before it has entered gsync s proves a node left too early;
 * then it takes the n-1 messages and checks they are from gsync s.  No
 * clock is compared, so it holds on nodes with their own clocks.
 *
 *   gsyncs [ITERS]   (2000) */
#include <string.h>
#include "nxtest.h"

#define TYPE_LEFT 77

int main(int argc, char **argv)
{
    long iters = argc > 1 ? atol(argv[1]) : 2000, me = mynode(), n = numnodes();
    for (long s = 0; s < iters; s++)
        gsync();
    for (long s = 0; s < iters; s++) {
        long late = s % n;
        if (me == late) {
            double until = dclock() + (s % 8 == 0 ? 0.002 : 0);
            do
                CHECK(!iprobe(TYPE_LEFT), "gsync %ld: node %ld left it before node %ld entered it",
                      s, infonode(), me);
            while (dclock() < until);
        }
        gsync();
        if (me != late) {
            csend(TYPE_LEFT, &s, sizeof s, late, 0);
            continue;
        }
        for (long i = 0; i < n - 1; i++) {
            long v = -1;
            crecv(TYPE_LEFT, &v, sizeof v);
            CHECK(v == s, "gsync %ld: node %ld's word is from gsync %ld", s, infonode(), v);
        }
    }
    if (me == 0)
        printf("gsyncs ok on %ld nodes: %ld gsyncs\n", n, 2 * iters);
    return 0;
}
