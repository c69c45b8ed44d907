/* A sender that sleeps and a receiver that computes: node 0 sends a
 * message, then sleeps SLEEP seconds (nanosleep, a kernel wait that is not
 * the library's); node 1 takes each message in crecv and then computes
 * for SPIN seconds without calling the library, so each message arrives
 * while node 1 waits in crecv again.  Node 1's acknowledgement (Portals'
 * ACK) reaches node 0 while it sleeps; node 0 must acknowledge that frame
 * in turn while it sleeps, or node 1 sends it again.
 * Usage: sleepsend [ROUNDS [SPIN [SLEEP]]]; prints "sleepsend ok". */
#include <string.h>
#include "nxtest.h"

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 20;
    double spin = argc > 2 ? atof(argv[2]) : 0.02, pause = argc > 3 ? atof(argv[3]) : 0.03;
    long me = mynode();
    static unsigned char buf[1024];
    gsync();
    for (int i = 0; i < rounds && me < 2; i++) {
        if (me == 0) {
            fill(buf, sizeof buf, i);
            csend(10, buf, sizeof buf, 1, 0);
            struct timespec t = {(time_t)pause, (long)((pause - (time_t)pause) * 1e9)};
            while (nanosleep(&t, &t))
                ;
        } else {
            memset(buf, 0, sizeof buf);
            crecv(10, buf, sizeof buf);
            CHECK(first_bad(buf, sizeof buf, i) < 0, "message %d damaged", i);
            compute_for(spin);
        }
    }
    gsync();
    if (me == 0)
        printf("sleepsend ok: %d messages\n", rounds);
    return 0;
}
