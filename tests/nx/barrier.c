/* gsync really waits for everyone: ranks arrive at staggered times and
 * nobody leaves before the last one arrived (dclock times, compared on one
 * machine: the test launchers start every rank on one host; with the
 * argument "noclock", on nodes whose clocks are not synchronised, only
 * that gsync returns).  Also gcolx with a different length per node. */
#include <string.h>
#include <time.h>
#include "nxtest.h"

int main(int argc, char **argv)
{
    int same_clock = !(argc > 1 && !strcmp(argv[1], "noclock"));
    long me = mynode(), n = numnodes();
    double t[2], all[2 * 64], w;
    for (int round = 0; round < 3; round++) {
        struct timespec d = {0, (long)((me * 7 + round * 3) % 5) * 10 * 1000 * 1000};
        nanosleep(&d, NULL);
        t[0] = dclock();                      /* arrive */
        gsync();
        t[1] = dclock();                      /* leave */
        long lens[64];
        for (long i = 0; i < n && i < 64; i++)
            lens[i] = sizeof t;
        CHECK(n <= 64, "at most 64 nodes");
        gcolx(t, lens, all);
        double last_in = 0, first_out = 1e300;
        for (long i = 0; i < n; i++) {
            if (all[2 * i] > last_in)
                last_in = all[2 * i];
            if (all[2 * i + 1] < first_out)
                first_out = all[2 * i + 1];
        }
        CHECK(!same_clock || first_out >= last_in, "round %d: a node left gsync %.6f s before the last arrived",
              round, last_in - first_out);
    }
    /* gcolx: node i contributes i+1 bytes of value i. */
    char mine[64], got[64 * 65 / 2 + 1];
    long lens[64], off = 0;
    memset(mine, (int)me, sizeof mine);
    for (long i = 0; i < n; i++)
        lens[i] = i + 1;
    gcolx(mine, lens, got);
    for (long i = 0; i < n; i++)
        for (long k = 0; k <= i; k++, off++)
            CHECK(got[off] == (char)i, "gcolx byte %ld of node %ld", k, i);
    w = dclock();
    CHECK(w > 0, "dclock");
    if (me == 0)
        printf("barrier ok on %ld nodes\n", n);
    return 0;
}
