/* Loading a job: every rank gets a descriptor (its rank, the map, argv,
 * the environment, where to fetch the program), fetches the program from its
 * parent in a fan-out tree and reports.  yod itself serves the program to
 * the first `fanout` ranks of each group; rank i of a group fetches from
 * rank i/fanout - 1 of the same group, so the load takes log(N) rounds and
 * yod sends each program only `fanout` times.  Every rank reports LOADED
 * (or why not) before any starts: GO goes to all at once. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tern/sha256.h>
#include "yod.h"
#include "ptl_me.h"

extern char **environ;

static uint64_t image_bits(int g) { return (uint64_t)Y.job << 16 | (uint64_t)g; }

static int serve_programs(void)
{
    for (int g = 0; g < Y.ngroups; g++) {
        struct group *gr = &Y.groups[g];
        ptl_me_t me = ptl_me_phys(gr->prog.data, gr->prog.len,
                                  PTL_ME_OP_GET | PTL_ME_EVENT_LINK_DISABLE |
                                  PTL_ME_EVENT_UNLINK_DISABLE | PTL_ME_EVENT_SUCCESS_DISABLE,
                                  image_bits(g));
        me.ignore_bits = 0xFFFFull << 48;     /* the chunk number (kernel/job/loader.c) */
        if (PtlMEAppend(Y.ni, YOD_PT_IMAGE, &me, PTL_PRIORITY_LIST, NULL, &gr->image_me) !=
            PTL_OK)
            return -1;
    }
    return 0;
}

/* The parent of a rank in its group's tree: -1 = yod.  The tree is the
 * group's nodes', each named by its first rank; every node of a group but
 * its last runs Y.opt.ppn ranks.  With several ranks on a node there is no
 * tree: such a node moves the file while it loads its ranks and writes
 * their process structs and a stack where it lay (kernel/ranks.c), so a
 * child still fetching from it read a half-moved file (a 2 MiB program on
 * a job of 5 ranks on 2-CPU nodes: "arrived corrupted", every time). */
static int parent_of(int r)
{
    if (Y.opt.ppn > 1)
        return -1;
    const struct group *g = &Y.groups[Y.ranks[r].group];
    int k = Y.opt.fanout;
    int node = Y.ranks[r].node - Y.ranks[g->first_rank].node;   /* within the group */
    return node < k ? -1 : g->first_rank + (node / k - 1);
}

/* The rank a node's descriptor and control messages are addressed by: its
 * first (every rank with -ppn 1). */
static bool node_leader(int r) { return Y.ranks[r].local == 0; }

static size_t env_strings(char *out)
{
    size_t n = 0;
    for (char **e = environ; *e; e++) {
        size_t l = strlen(*e) + 1;
        if (out)
            memcpy(out + n, *e, l);
        n += l;
    }
    return n;
}

static int build_descriptor(int r, char *err, size_t errlen)
{
    struct rank *rk = &Y.ranks[r];
    struct group *g = &Y.groups[rk->group];
    size_t args = 0;
    for (int i = 0; i < g->argc; i++)
        args += strlen(g->argv[i]) + 1;
    size_t envlen = env_strings(NULL);
    uint32_t envc = 0;
    for (char **e = environ; *e; e++)
        envc++;
    size_t files_len = sizeof(struct yod_files) + (size_t)Y.nmounts * sizeof(struct yod_mount) +
                       strlen(Y.cwd) + 1;
    size_t len = sizeof(struct yod_load) + (size_t)Y.size * 4 + args + envlen + files_len;
    if (len > YOD_LOAD_MAX) {
        snprintf(err, errlen, "arguments, environment and node map take %zu bytes; a node "
                 "accepts %u (unset some environment variables)", len, YOD_LOAD_MAX);
        return -1;
    }
    uint8_t *buf = calloc(1, len);
    if (!buf) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    struct yod_load *d = (struct yod_load *)buf;
    d->magic = YOD_MAGIC;
    d->version = YOD_PROTO_VERSION;
    d->job = Y.job;
    d->rank = (uint32_t)r;
    d->size = (uint32_t)Y.size;
    d->yod_nid = Y.me.phys.nid;
    d->yod_pid = Y.me.phys.pid;
    d->uid = (uint32_t)getuid();
    d->gid = (uint32_t)getgid();
    int p = parent_of(r);
    d->parent_nid = p < 0 ? Y.me.phys.nid : Y.ranks[p].nid;
    d->parent_pid = p < 0 ? Y.me.phys.pid : YOD_NODE_PID;
    d->argc = (uint32_t)g->argc;
    d->envc = envc;
    d->strings_len = (uint32_t)(args + envlen);
    d->image_bits = image_bits(rk->group);
    d->image_len = g->prog.len;
    memcpy(d->image_sha256, g->prog.sha256, 32);
    d->heap = Y.opt.heap;
    d->stack = Y.opt.stack;
    const char *base = strrchr(g->prog.path, '/');
    snprintf(d->name, sizeof d->name, "%s", base ? base + 1 : g->prog.path);
    uint32_t *nids = (uint32_t *)(d + 1);
    for (int i = 0; i < Y.size; i++)
        nids[i] = Y.ranks[i].nid;
    char *s = (char *)(nids + Y.size);
    for (int i = 0; i < g->argc; i++) {
        size_t l = strlen(g->argv[i]) + 1;
        memcpy(s, g->argv[i], l);
        s += l;
    }
    s += env_strings(s);
    d->files_len = (uint32_t)files_len;
    d->nlocal = Y.opt.ppn > 1 ? (uint32_t)rk->nlocal : 0;
    struct yod_files fh = {YOD_FILES_MAGIC, YOD_FILES_VERSION, (uint32_t)files_len,
                           (uint32_t)Y.nmounts, Y.umask, (uint32_t)strlen(Y.cwd) + 1};
    memcpy(s, &fh, sizeof fh);
    s += sizeof fh;
    memcpy(s, Y.mounts, (size_t)Y.nmounts * sizeof(struct yod_mount));
    s += (size_t)Y.nmounts * sizeof(struct yod_mount);
    memcpy(s, Y.cwd, strlen(Y.cwd) + 1);
    /* The node runs it only with the proof of the job's key (d->mac is
     * still zero here, as the node computes it). */
    hmac_sha256(Y.job_key, sizeof Y.job_key, buf, len, d->mac);
    rk->desc = buf;
    rk->desc_len = len;
    return 0;
}

/* user_ptr of yod's puts: what it was and for which rank. */
void *op_tag(int kind, int rank) { return (void *)(uintptr_t)((uint64_t)kind << 32 | (uint32_t)(rank + 1)); }

static int put(const void *buf, size_t len, int rank, ptl_pt_index_t pt, uint64_t bits, int kind,
               ptl_handle_md_t *mdp)
{
    ptl_md_t mdd = {.start = (void *)buf, .length = len, .options = PTL_MD_EVENT_SEND_DISABLE,
                    .eq_handle = Y.eq, .ct_handle = PTL_CT_NONE};
    ptl_handle_md_t md;
    if (PtlMDBind(Y.ni, &mdd, &md) != PTL_OK)
        return -1;
    ptl_process_t to;
    to.phys.nid = Y.ranks[rank].nid;
    to.phys.pid = YOD_NODE_PID;
    if (PtlPut(md, 0, len, PTL_ACK_REQ, to, pt, bits, 0, op_tag(kind, rank), 0) != PTL_OK) {
        PtlMDRelease(md);
        return -1;
    }
    if (mdp)
        *mdp = md;
    return 0;
}

/* Control messages: one buffer per kind and argument, bound once, shared by
 * every put of it (the library counts an MD's users). */
static ptl_handle_md_t ctl_md(uint32_t type, uint32_t arg)
{
    static struct { struct yod_ctl c; ptl_handle_md_t md; bool bound; } cache[8 + 65];
    unsigned i = type == YOD_SIGNAL ? 8 + (arg & 63) : type & 7;
    if (!cache[i].bound) {
        cache[i].c = (struct yod_ctl){YOD_MAGIC, type, Y.job, arg, {0}};
        hmac_sha256(Y.job_key, sizeof Y.job_key, &cache[i].c, offsetof(struct yod_ctl, mac),
                    cache[i].c.mac);
        ptl_md_t mdd = {.start = &cache[i].c, .length = sizeof cache[i].c,
                        .options = PTL_MD_EVENT_SEND_DISABLE, .eq_handle = Y.eq,
                        .ct_handle = PTL_CT_NONE};
        PtlMDBind(Y.ni, &mdd, &cache[i].md);
        cache[i].bound = true;
    }
    return cache[i].md;
}

int ctl_unacked;

void send_ctl(int r, uint32_t type, uint32_t arg)
{
    ptl_process_t to;
    to.phys.nid = Y.ranks[r].nid;
    to.phys.pid = YOD_NODE_PID;
    int kind = type == YOD_HEARTBEAT ? OP_HEARTBEAT : type == YOD_PAUSE ? OP_PAUSE : OP_CTL;
    if (PtlPut(ctl_md(type, arg), 0, sizeof(struct yod_ctl), PTL_ACK_REQ, to, YOD_PT_JOB,
               YOD_MB_CTL, 0, op_tag(kind, r), 0) == PTL_OK && kind == OP_CTL)
        ctl_unacked++;
}

static bool alive(int r) { return Y.ranks[r].state != R_EXITED && Y.ranks[r].state != R_LOST; }

void send_ctl_all(uint32_t type, uint32_t arg)
{
    for (int r = 0; r < Y.size; r++) {
        if (!alive(r))
            continue;
        /* -ppn: a node takes a control message for all its ranks, so it
         * goes once, by its first rank still alive (heartbeats go by each:
         * each rank learns of its node's loss by its own). */
        bool first = true;
        for (int q = r - Y.ranks[r].local; q < r && first; q++)
            first = !alive(q);
        if (first || type == YOD_HEARTBEAT)
            send_ctl(r, type, arg);
    }
}

int count_state(enum rank_state s)
{
    int n = 0;
    for (int r = 0; r < Y.size; r++)
        n += Y.ranks[r].state == s;
    return n;
}


int launch(void)
{
    char err[512];
    if (serve_programs()) {
        fprintf(stderr, "yod: cannot offer the program to the nodes\n");
        return -1;
    }
    for (int r = 0; r < Y.size; r++) {
        if (node_leader(r) && build_descriptor(r, err, sizeof err)) {
            fprintf(stderr, "yod: %s\n", err);
            return -1;
        }
    }
    for (int r = 0; r < Y.size; r++)
        if (node_leader(r) && put(Y.ranks[r].desc, Y.ranks[r].desc_len, r, YOD_PT_JOB,
                                  YOD_MB_LOAD, OP_DESC, &Y.ranks[r].desc_md)) {
            fprintf(stderr, "yod: cannot send the job to nid %u\n", Y.ranks[r].nid);
            return -1;
        }
    double next_hb = now_s() + YOD_HEARTBEAT_S, deadline = Y.opt.timeout > 0 ?
                     Y.t_start + Y.opt.timeout : 0;
    while (count_state(R_LOADING) > 0 && !count_state(R_FAILED_LOAD) && !count_state(R_LOST)) {
        if (yod_interrupted || yod_terminated) {
            fprintf(stderr, "yod: %s while loading\n",
                    yod_interrupted ? "interrupted" : "terminated");
            return -1;
        }
        if (deadline && now_s() > deadline) {
            fprintf(stderr, "yod: the job did not load within -timeout %g s\n", Y.opt.timeout);
            return -1;
        }
        ptl_event_t ev;
        unsigned which;
        int rc = PtlEQPoll(&Y.eq, 1, 100, &ev, &which);
        if (rc == PTL_OK || rc == PTL_EQ_DROPPED)
            handle_event(&ev);
        if (now_s() >= next_hb) {
            for (int r = 0; r < Y.size; r++)
                if (Y.ranks[r].state == R_LOADING && !Y.ranks[r].hb_outstanding) {
                    Y.ranks[r].hb_outstanding = true;
                    send_ctl(r, YOD_HEARTBEAT, 0);
                }
            next_hb = now_s() + YOD_HEARTBEAT_S;
        }
    }
    int failed = count_state(R_FAILED_LOAD) + count_state(R_LOST);
    if (failed) {
        for (int r = 0; r < Y.size; r++)
            if (Y.ranks[r].state == R_FAILED_LOAD || Y.ranks[r].state == R_LOST)
                fprintf(stderr, "yod: rank %d (nid %u): %s\n", r, Y.ranks[r].nid,
                        Y.ranks[r].message);
        return -1;
    }
    return 0;
}
