#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

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

int count_in_state(const struct nodedb *db, enum node_state s)
{
    int c = 0;
    for (int i = 0; i < db->n; i++)
        c += db->nodes[i].state == s;
    return c;
}

int alloc_nodes(struct nodedb *db, uint32_t job, int count, const uint32_t *list, int nlist,
                uint32_t *out, char *err, int errlen)
{
    if (job == 0) {
        snprintf(err, (size_t)errlen, "job id 0 is reserved");
        return -1;
    }
    if (list) {
        for (int i = 0; i < nlist; i++) {
            struct node *nd = nodedb_find(db, list[i]);
            if (!nd) {
                snprintf(err, (size_t)errlen, "node %u is not in the node database", list[i]);
                return -1;
            }
            if (nd->state == NODE_ALLOCATED) {
                snprintf(err, (size_t)errlen, "node %u is allocated to job %u", list[i], nd->job);
                return -1;
            }
            if (nd->state != NODE_FREE) {
                snprintf(err, (size_t)errlen, "node %u is %s", list[i], node_state_name(nd->state));
                return -1;
            }
        }
        for (int i = 0; i < nlist; i++) {
            struct node *nd = nodedb_find(db, list[i]);
            nd->state = NODE_ALLOCATED;
            nd->job = job;
            out[i] = list[i];
        }
        return nlist;
    }
    int free_nodes = count_in_state(db, NODE_FREE);
    if (count <= 0 || count > free_nodes) {
        snprintf(err, (size_t)errlen, "%d node%s requested, %d free (%d in all, %d allocated, "
                 "%d down, %d booting)", count, count == 1 ? "" : "s", free_nodes, db->n,
                 count_in_state(db, NODE_ALLOCATED), count_in_state(db, NODE_DOWN),
                 count_in_state(db, NODE_BOOTING));
        return -1;
    }
    int k = 0;
    for (int i = 0; i < db->n && k < count; i++)
        if (db->nodes[i].state == NODE_FREE) {
            db->nodes[i].state = NODE_ALLOCATED;
            db->nodes[i].job = job;
            out[k++] = db->nodes[i].nid;
        }
    return k;
}

int release_job(struct nodedb *db, uint32_t job)
{
    int k = 0;
    for (int i = 0; i < db->n; i++)
        if (db->nodes[i].state == NODE_ALLOCATED && db->nodes[i].job == job) {
            db->nodes[i].state = NODE_FREE;
            db->nodes[i].job = 0;
            k++;
        }
    return k;
}
