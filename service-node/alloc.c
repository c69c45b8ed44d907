#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

int count_in_state(const struct nodedb *db, enum node_state s)
{
    int c = 0;
    for (int i = 0; i < db->n; i++)
        c += db->nodes[i].state == s;
    return c;
}

int alloc_nodes(struct nodedb *db, uint32_t job, int count, const uint32_t *list, int nlist,
                bool (*ending)(const struct node *), uint32_t *out, char *err, int errlen)
{
    if (job == 0) {
        snprintf(err, (size_t)errlen, "job id 0 is reserved");
        return -1;
    }
    if (list) {
        int wait = 0;
        for (int i = 0; i < nlist; i++) {
            struct node *nd = nodedb_find(db, list[i]);
            if (!nd) {
                snprintf(err, (size_t)errlen, "node %u is not in the node database", list[i]);
                return -1;
            }
            if (nd->state == NODE_ALLOCATED && ending && ending(nd)) {
                if (!wait++)
                    snprintf(err, (size_t)errlen, "node %u is finishing job %u, which ended",
                             list[i], nd->job);
                continue;
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
        if (wait)
            return ALLOC_WAIT;
        for (int i = 0; i < nlist; i++) {
            struct node *nd = nodedb_find(db, list[i]);
            nd->state = NODE_ALLOCATED;
            nd->job = job;
            out[i] = list[i];
        }
        return nlist;
    }
    int free_nodes = count_in_state(db, NODE_FREE), ending_nodes = 0;
    for (int i = 0; ending && i < db->n; i++)
        ending_nodes += db->nodes[i].state == NODE_ALLOCATED && ending(&db->nodes[i]);
    if (count <= 0 || count > free_nodes) {
        bool wait = count > 0 && count <= free_nodes + ending_nodes;
        snprintf(err, (size_t)errlen, "%d node%s requested, %d free (%d in all, %d allocated, "
                 "%d down, %d booting)%s", count, count == 1 ? "" : "s", free_nodes, db->n,
                 count_in_state(db, NODE_ALLOCATED), count_in_state(db, NODE_DOWN),
                 count_in_state(db, NODE_BOOTING),
                 wait ? "; enough are finishing a job that ended" : "");
        return wait ? ALLOC_WAIT : -1;
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

int release_job(struct nodedb *db, uint32_t job, const uint32_t *keep, uint32_t nkeep)
{
    int k = 0;
    for (int i = 0; i < db->n; i++) {
        bool kept = false;
        for (uint32_t j = 0; j < nkeep && !kept; j++)
            kept = keep[j] == db->nodes[i].nid;
        if (!kept && db->nodes[i].state == NODE_ALLOCATED && db->nodes[i].job == job) {
            db->nodes[i].state = NODE_FREE;
            db->nodes[i].job = 0;
            k++;
        }
    }
    return k;
}
