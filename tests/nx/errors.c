/* NX errors: a clear message naming the call and the condition, then the
 * job ends with status 1; the _ variants return -1 with errno instead. */
#include <errno.h>
#include <string.h>
#include "nxtest.h"

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";
    long me = mynode(), v = 1;
    char small[4];
    if (!strcmp(what, "soft")) {
        CHECK(_csend(1, &v, sizeof v, numnodes() + 5, 0) == -1 && errno == EQNODE, "_csend");
        CHECK(_msgwait(999999) == -1 && errno == EQMID, "_msgwait");
        CHECK(_csend(-3, &v, sizeof v, 0, 0) == -1 && errno == EQTYPE, "_csend type");
        /* The match bits above a type are the library's own. */
        CHECK(_csend(1L << 61, &v, sizeof v, 0, 0) == -1 && errno == EQTYPE, "_csend type 2^61");
        gsync();
        if (me == 0)
            printf("soft errors ok\n");
        return 0;
    }
    if (me == 0) {
        if (!strcmp(what, "msglong")) {
            csend(1, &v, sizeof v, numnodes() - 1, 0);
        } else if (!strcmp(what, "badnode")) {
            csend(1, &v, sizeof v, numnodes(), 0);
        } else if (!strcmp(what, "badmid")) {
            msgwait(12345);
        }
    }
    if (me == numnodes() - 1 && !strcmp(what, "msglong"))
        crecv(1, small, sizeof small);
    gsync();
    printf("node %ld: not reached\n", me);
    return 0;
}
