/* Handing sets of free nodes to jobs and taking them back. */
#ifndef TERN_ALLOC_H
#define TERN_ALLOC_H
#include <tern/nodedb.h>

/* Gives job `job` either `count` free nodes (lowest nids first) or exactly
 * the nodes in list[0..nlist).  All or nothing: returns the number
 * allocated, or -1 with err saying what is missing, or ALLOC_WAIT (err says
 * it too) when only nodes for which ending() is true stand in the way:
 * allocated nodes finishing a job that ended, free once they are clean.
 * ending may be NULL (no node is ending). */
#define ALLOC_WAIT (-2)
int alloc_nodes(struct nodedb *db, uint32_t job, int count, const uint32_t *list, int nlist,
                bool (*ending)(const struct node *), uint32_t *out, char *err, int errlen);
/* Frees every node of job but those in keep[0..nkeep) (they stay allocated
 * until they say they are done); returns how many were freed. */
int release_job(struct nodedb *db, uint32_t job, const uint32_t *keep, uint32_t nkeep);
int count_in_state(const struct nodedb *db, enum node_state s);
#endif
