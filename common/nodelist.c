/* Node lists in Cplant's -list syntax ("3..7,12"), as yod -list and
 * tern-svc alloc take them. */
#include <stdio.h>
#include <stdlib.h>

#include <tern/nodedb.h>

int parse_node_list(const char *s, uint32_t *nids, int max, char *err, int errlen)
{
    int n = 0;
    const char *p = s;
    while (*p) {
        char *end;
        unsigned long a = strtoul(p, &end, 10), b = a;
        if (end == p)
            goto bad;
        p = end;
        if (p[0] == '.' && p[1] == '.') {
            b = strtoul(p + 2, &end, 10);
            if (end == p + 2 || b < a)
                goto bad;
            p = end;
        }
        if (a == 0 || b > 0xFFFFFF)
            goto bad;
        for (unsigned long v = a; v <= b; v++) {
            for (int i = 0; i < n; i++)
                if (nids[i] == v) {
                    snprintf(err, (size_t)errlen, "node %lu listed twice in '%s'", v, s);
                    return -1;
                }
            if (n == max) {
                snprintf(err, (size_t)errlen, "more than %d nodes in '%s'", max, s);
                return -1;
            }
            nids[n++] = (uint32_t)v;
        }
        if (*p == ',')
            p++;
        else if (*p)
            goto bad;
    }
    if (n == 0)
        goto bad;
    return n;
bad:
    snprintf(err, (size_t)errlen, "bad node list '%s' (expected e.g. 3..7,12)", s);
    return -1;
}
