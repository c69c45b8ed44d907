#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tern/nodedb.h>
#include "ptl_linux.h"

static const char *const state_names[] = {"booting", "free", "allocated", "down"};

const char *node_state_name(enum node_state s) { return state_names[s]; }

void format_mac(const uint8_t m[6], char out[18])
{
    snprintf(out, 18, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

const char *format_cores(uint16_t cores, char out[8])
{
    if (!cores)
        return "-";
    snprintf(out, 8, "%u", cores);
    return out;
}

static enum node_state state_from(const char *s, bool *ok)
{
    for (int i = 0; i < 4; i++)
        if (!strcmp(s, state_names[i])) {
            *ok = true;
            return (enum node_state)i;
        }
    *ok = false;
    return NODE_DOWN;
}

static int cmp_nid(const void *a, const void *b)
{
    const struct node *x = a, *y = b;
    return x->nid < y->nid ? -1 : x->nid > y->nid;
}

int nodedb_load(struct nodedb *db, const char *path, char *err, int errlen)
{
    memset(db, 0, sizeof *db);
    snprintf(db->path, sizeof db->path, "%s", path);
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT)
            return 0;
        snprintf(err, (size_t)errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    char line[256];
    int lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        char mac[32], state[32];
        unsigned long nid, job, cores = 0;
        long long seen;
        bool ok;
        struct node nd = {0};
        /* The cores column came later: files without it still load. */
        int got = sscanf(line, "%lu %31s %31s %lu %lld %lu", &nid, mac, state, &job, &seen, &cores);
        if (got < 5 || cores > 0xFFFF || ptl_linux_parse_mac(mac, nd.mac) || nid == 0 ||
            nid > 0xFFFFFF ||
            (nd.state = state_from(state, &ok), !ok) || db->n == NODEDB_MAX) {
            snprintf(err, (size_t)errlen, "%s:%d: malformed line", path, lineno);
            fclose(f);
            return -1;
        }
        nd.nid = (uint32_t)nid;
        nd.job = (uint32_t)job;
        nd.last_seen = seen;
        nd.cores = (uint16_t)cores;
        if (nodedb_find(db, nd.nid) || nodedb_find_mac(db, nd.mac)) {
            snprintf(err, (size_t)errlen, "%s:%d: nid %lu or MAC %s appears twice", path, lineno,
                     nid, mac);
            fclose(f);
            return -1;
        }
        db->nodes[db->n++] = nd;
        qsort(db->nodes, (size_t)db->n, sizeof db->nodes[0], cmp_nid);
    }
    fclose(f);
    return 0;
}

int nodedb_save(const struct nodedb *db, char *err, int errlen)
{
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp", db->path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        snprintf(err, (size_t)errlen, "%s: %s", tmp, strerror(errno));
        return -1;
    }
    fprintf(f, "# Tern node database: nid mac state job last_seen cores\n");
    for (int i = 0; i < db->n; i++) {
        const struct node *nd = &db->nodes[i];
        char mac[18];
        format_mac(nd->mac, mac);
        fprintf(f, "%u %s %s %u %lld %u\n", nd->nid, mac, node_state_name(nd->state), nd->job,
                (long long)nd->last_seen, nd->cores);
    }
    /* Written in full and on disk before it replaces the old file. */
    if (fflush(f) || fsync(fileno(f)) || fclose(f) || rename(tmp, db->path)) {
        snprintf(err, (size_t)errlen, "%s: %s", db->path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

struct node *nodedb_find(struct nodedb *db, uint32_t nid)
{
    int lo = 0, hi = db->n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (db->nodes[mid].nid == nid)
            return &db->nodes[mid];
        if (db->nodes[mid].nid < nid)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

struct node *nodedb_find_mac(struct nodedb *db, const uint8_t mac[6])
{
    for (int i = 0; i < db->n; i++)
        if (!memcmp(db->nodes[i].mac, mac, 6))
            return &db->nodes[i];
    return NULL;
}

struct node *nodedb_register(struct nodedb *db, const uint8_t mac[6], uint32_t want_nid,
                             int64_t now, char *err, int errlen)
{
    struct node *nd = nodedb_find_mac(db, mac);
    if (nd) {
        if (want_nid && want_nid != nd->nid) {
            snprintf(err, (size_t)errlen, "MAC is nid %u in the database, node claims nid %u",
                     nd->nid, want_nid);
            return NULL;
        }
    } else {
        if (db->n == NODEDB_MAX) {
            snprintf(err, (size_t)errlen, "node database full (%d nodes)", NODEDB_MAX);
            return NULL;
        }
        uint32_t nid = want_nid;
        if (!nid || nid > 0xFFFFFF || nodedb_find(db, nid))
            for (nid = 1; nodedb_find(db, nid); nid++)
                ;
        db->nodes[db->n] = (struct node){.nid = nid};
        memcpy(db->nodes[db->n].mac, mac, 6);
        db->n++;
        qsort(db->nodes, (size_t)db->n, sizeof db->nodes[0], cmp_nid);
        nd = nodedb_find(db, nid);
    }
    /* A node that boots has lost whatever job it had. */
    nd->state = NODE_FREE;
    nd->job = 0;
    nd->last_seen = now;
    return nd;
}
