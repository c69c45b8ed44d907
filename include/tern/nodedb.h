/*
 * The node database: which compute nodes exist (MAC <-> nid), and what each
 * is doing (booting, free, allocated to a job, down).  It lives in one text
 * file, rewritten atomically on every change, so the allocator can restart
 * and find every node's state again.
 */
#ifndef TERN_NODEDB_H
#define TERN_NODEDB_H
#include <stdbool.h>
#include <stdint.h>

#define NODEDB_MAX 4096

enum node_state { NODE_BOOTING, NODE_FREE, NODE_ALLOCATED, NODE_DOWN };

struct node {
    uint32_t nid;
    uint8_t mac[6];
    enum node_state state;
    uint32_t job;            /* when NODE_ALLOCATED */
    int64_t last_seen;       /* seconds since the epoch; 0 = never */
    uint16_t cores;          /* CPUs the node reported at registration; 0 = unknown */
};

struct nodedb {
    char path[512];
    int n;
    struct node nodes[NODEDB_MAX];   /* sorted by nid */
};

const char *node_state_name(enum node_state s);
void format_mac(const uint8_t mac[6], char out[18]);
/* A node's core count for listings: the number, or "-" when not reported. */
const char *format_cores(uint16_t cores, char out[8]);

/* Loads path (a missing file is an empty database).  On a malformed file
 * returns -1 with a message in err, and the file is left untouched. */
int nodedb_load(struct nodedb *db, const char *path, char *err, int errlen);
int nodedb_save(const struct nodedb *db, char *err, int errlen);

struct node *nodedb_find(struct nodedb *db, uint32_t nid);
struct node *nodedb_find_mac(struct nodedb *db, const uint8_t mac[6]);

/* A node says it has booted: known MAC keeps its nid; a new MAC gets the
 * nid it asks for if that is unused, else the lowest free one.  Returns the
 * node, or NULL with err when the MAC/nid pair contradicts the database. */
struct node *nodedb_register(struct nodedb *db, const uint8_t mac[6], uint32_t want_nid,
                             int64_t now, char *err, int errlen);

/* Parses a node list like "3..7,12" (Cplant's -list syntax) into nids;
 * returns the count, or -1 with a message in err. */
int parse_node_list(const char *s, uint32_t *nids, int max, char *err, int errlen);
#endif
