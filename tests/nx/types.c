/* Type selection, wildcards, node selection, FORCE types and probes. */
#include <string.h>
#include "nxtest.h"

int main(void)
{
    CHECK(numnodes() >= 2, "needs 2 nodes");
    long me = mynode(), v, info[4];
    if (me == 0) {
        long types[] = {5, 7, 9, FORCE(3)};
        for (int i = 0; i < 4; i++) {
            v = 100 + i;
            csend(types[i], &v, sizeof v, 1, 0);
        }
    } else if (me == 1) {
        cprobe(9);                               /* waits until type 9 is there */
        CHECK(infotype() == 9 && infocount() == sizeof v, "probe info %ld", infotype());
        CHECK(iprobe(1234) == 0, "no type 1234 was sent");
        crecv(9, &v, sizeof v);                  /* selective: skips 5 and 7 */
        CHECK(v == 102 && infotype() == 9, "got %ld type %ld", v, infotype());
        crecv(-1, &v, sizeof v);                 /* any type: oldest first */
        CHECK(v == 100 && infotype() == 5, "got %ld type %ld", v, infotype());
        crecvx(-1, &v, sizeof v, 0, -1, info);
        CHECK(v == 101 && info[0] == 7 && info[1] == sizeof v && info[2] == 0, "x form %ld", v);
        crecv(FORCE(3), &v, sizeof v);
        CHECK(v == 103 && infotype() == FORCE(3), "force type");
        CHECK(iprobex(-1, -1, -1, info) == 0, "nothing left");
    }
    gsync();
    /* Every node sends its number to node 0 with type = node; node 0 picks
     * them in reverse order with node selectors. */
    v = me;
    if (me != 0)
        csend(me, &v, sizeof v, 0, 0);
    if (me == 0)
        for (long src = numnodes() - 1; src >= 1; src--) {
            crecvx(-1, &v, sizeof v, src, 0, info);
            CHECK(v == src && info[2] == src && info[0] == src, "from %ld got %ld", src, v);
        }
    gsync();
    if (me == 0)
        printf("types ok\n");
    return 0;
}
