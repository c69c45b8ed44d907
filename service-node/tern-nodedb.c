/*
 * tern-nodedb: inspect and change the node database by hand (the role of
 * Cplant's pingd for an administrator).  The allocator daemon uses the same
 * code; this tool is what you run when it is not there.
 *
 *   tern-nodedb [-f FILE] list
 *   tern-nodedb [-f FILE] register MAC [NID]
 *   tern-nodedb [-f FILE] alloc JOB N | alloc JOB -list 3..7,12
 *   tern-nodedb [-f FILE] release JOB
 *   tern-nodedb [-f FILE] down NID | up NID
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include <tern/nodedb.h>
#include "ptl_linux.h"

static struct nodedb db;

static int usage(void)
{
    fprintf(stderr, "usage: tern-nodedb [-f FILE] list | register MAC [NID] | alloc JOB N | "
                    "alloc JOB -list LIST | release JOB | down NID | up NID\n");
    return 2;
}

static int fail(const char *msg)
{
    fprintf(stderr, "tern-nodedb: %s\n", msg);
    return 1;
}

static bool parse_u32(const char *s, uint32_t *v)
{
    char *end;
    unsigned long x = strtoul(s, &end, 10);
    if (!*s || *end || x > 0xFFFFFFFFUL)
        return false;
    *v = (uint32_t)x;
    return true;
}

int main(int argc, char **argv)
{
    const char *path = getenv("TERN_NODEDB") ? getenv("TERN_NODEDB") : "/var/lib/tern/nodes";
    int i = 1;
    if (i + 1 < argc && !strcmp(argv[i], "-f")) {
        path = argv[i + 1];
        i += 2;
    }
    if (i >= argc)
        return usage();
    char err[256];
    if (nodedb_load(&db, path, err, sizeof err))
        return fail(err);
    const char *cmd = argv[i++];
    int rest = argc - i;
    uint32_t a, b;

    if (!strcmp(cmd, "list") && rest == 0) {
        printf("%6s  %-17s  %-9s  %-6s  %s\n", "nid", "MAC", "state", "job", "cores");
        for (int k = 0; k < db.n; k++) {
            char mac[18], cores[8];
            format_mac(db.nodes[k].mac, mac);
            char job[16] = "-";
            if (db.nodes[k].state == NODE_ALLOCATED)
                snprintf(job, sizeof job, "%u", db.nodes[k].job);
            printf("%6u  %-17s  %-9s  %-6s  %s\n", db.nodes[k].nid, mac,
                   node_state_name(db.nodes[k].state), job, format_cores(db.nodes[k].cores, cores));
        }
        printf("%d nodes: %d free, %d allocated, %d down, %d booting\n", db.n,
               count_in_state(&db, NODE_FREE), count_in_state(&db, NODE_ALLOCATED),
               count_in_state(&db, NODE_DOWN), count_in_state(&db, NODE_BOOTING));
        return 0;
    }
    if (!strcmp(cmd, "register") && (rest == 1 || rest == 2)) {
        uint8_t mac[6];
        uint32_t nid = 0;
        if (ptl_linux_parse_mac(argv[i], mac))
            return fail("bad MAC address (expected aa:bb:cc:dd:ee:ff)");
        if (rest == 2 && (!parse_u32(argv[i + 1], &nid) || nid == 0))
            return fail("bad nid");
        struct node *nd = nodedb_register(&db, mac, nid, time(NULL), err, sizeof err);
        if (!nd)
            return fail(err);
        printf("nid %u\n", nd->nid);
    } else if (!strcmp(cmd, "alloc") && rest >= 2 && parse_u32(argv[i], &a)) {
        static uint32_t list[NODEDB_MAX], out[NODEDB_MAX];
        int n;
        if (rest == 3 && !strcmp(argv[i + 1], "-list")) {
            int nl = parse_node_list(argv[i + 2], list, NODEDB_MAX, err, sizeof err);
            if (nl < 0)
                return fail(err);
            n = alloc_nodes(&db, a, 0, list, nl, NULL, out, err, sizeof err);
        } else if (rest == 2 && parse_u32(argv[i + 1], &b)) {
            n = alloc_nodes(&db, a, (int)b, NULL, 0, NULL, out, err, sizeof err);
        } else {
            return usage();
        }
        if (n < 0)
            return fail(err);
        for (int k = 0; k < n; k++)
            printf("%u%c", out[k], k + 1 == n ? '\n' : ' ');
    } else if (!strcmp(cmd, "release") && rest == 1 && parse_u32(argv[i], &a)) {
        printf("%d nodes freed\n", release_job(&db, a, NULL, 0));
    } else if ((!strcmp(cmd, "down") || !strcmp(cmd, "up")) && rest == 1 && parse_u32(argv[i], &a)) {
        struct node *nd = nodedb_find(&db, a);
        if (!nd)
            return fail("no such node");
        nd->state = cmd[0] == 'd' ? NODE_DOWN : NODE_FREE;
        nd->job = 0;
    } else {
        return usage();
    }
    if (nodedb_save(&db, err, sizeof err))
        return fail(err);
    return 0;
}
