/* NX ping-pong timing between nodes 0 and 1 (libnx-mpi on the Linux nodes):
 * one-way latency = half the mean round trip, for a few message sizes.
 *     nx-latency [ROUND_TRIPS]   (default 200, after 10 warm-up trips) */
#include <nx.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    static const long sizes[] = {0, 8, 1024, 65536};
    long trips = argc > 1 ? atol(argv[1]) : 200;
    if (trips < 1 || trips > 1000000 || numnodes() < 2) {
        if (mynode() == 0)
            fprintf(stderr, "nx-latency: 1..1000000 round trips, 2 or more nodes\n");
        return 1;
    }
    long me = mynode();
    char *buf = calloc(1, 65536);
    for (unsigned s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        long n = sizes[s];
        double t0 = 0;
        for (long i = -10; i < trips; i++) {
            if (i == 0) {
                gsync();
                t0 = dclock();
            }
            if (me == 0) {
                csend(1, buf, n, 1, 0);
                crecv(2, buf, 65536);
            } else if (me == 1) {
                crecv(1, buf, 65536);
                csend(2, buf, n, 0, 0);
            }
        }
        double dt = dclock() - t0;
        if (me == 0)
            printf("nx-latency: %6ld B  one-way %8.1f us  (%ld round trips)\n", n,
                   dt / trips / 2 * 1e6, trips);
    }
    gsync();
    free(buf);
    return 0;
}
