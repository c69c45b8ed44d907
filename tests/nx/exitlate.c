/* Ranks leaving at different times without talking first: rank 0 exits at
 * once, the others compute for a while (no library calls, so rank 0's
 * EXITING waits unseen in their event queues) and then exit.  Every rank
 * must leave without giving up on a peer: a late rank that told rank 0 of
 * its own exit after rank 0 was gone waited out Portals' 5 s give-up. */
#include "nxtest.h"

int main(int argc, char **argv)
{
    double spin = argc > 1 ? atof(argv[1]) : 0.5;
    long me = mynode();
    gsync();
    if (me == 0) {
        printf("exitlate: rank 0 leaving\n");
        return 0;
    }
    compute_for(spin);
    printf("exitlate: rank %ld leaving after %.1f s\n", me, spin);
    return 0;
}
