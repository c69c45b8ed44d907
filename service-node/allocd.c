/*
 * allocd: the node allocator (the role Cplant's bebopd played).
 *
 *   allocd --db FILE [--ping-period SECONDS] [--clean-limit SECONDS]
 *
 * Nodes register as they boot; launchers ask for nodes and give them back;
 * who asks is proven by MUNGE (a job belongs to its launcher's user; only
 * the owner or root kills or releases it), and each job's nodes get a grant
 * (include/tern/tern_proto.h TERN_GRANT, docs/security.md) before the
 * launcher hears of them.  Every node that is up is pinged over Portals (a
 * Get of what the node says of itself, struct tern_node_state), and one that
 * stops answering is marked down until it answers or registers again, and
 * so is one that still says it holds (or is cleaning up after) a job it
 * was not given, --clean-limit seconds (default 60) after it first said so,
 * until it holds nothing: a node that never gets clean would take every
 * job it is given and run none of them.  A
 * node is freed when its launcher gives it back having seen its rank end, or
 * else only when the node itself says it holds the job no more: a launcher
 * that is gone (kill -9) or that lost sight of a rank never frees a node
 * that still runs the job.  Every change is written to the node database,
 * and the running jobs' launchers and owners beside it, at once, so a
 * restarted allocd carries on.
 * Environment: TERN_IFACE and the rest of portals/host/linux/ptl_linux.h.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include <tern/cred.h>
#include <tern/key.h>
#include <tern/nodedb.h>
#include <tern/sha256.h>
#include <tern/svc_portals.h>
#include <tern/tern_proto.h>
#include <tern/yod_proto.h>
#include "ptl_linux.h"

#define SLOTS 32

static struct nodedb db;
static struct svc svc;
static uint8_t fs_key[TERN_KEY_BYTES];   /* the file servers' (fyods') key */
static unsigned long refused;            /* requests refused as not authorised */
static unsigned char slots[SLOTS][TERN_MSG_MAX];

enum op_kind { OP_REPLY, OP_PING, OP_LAUNCHER_PING, OP_KILL_NOTICE, OP_FYOD_PING, OP_GRANT,
               OP_REVOKE };
struct op {                      /* an outgoing put until its ACK, or a Get until its REPLY */
    enum op_kind kind;
    ptl_handle_md_t md;
    uint32_t nid;
    uint32_t job;
    union {
        struct tern_reply reply;
        struct tern_node_state state;    /* OP_PING: what the node says */
    };
};
static bool ping_outstanding[NODEDB_MAX + 1];

/* Running jobs and who launched them, kept beside the database (a restarted
 * allocd goes on pinging them).  Bounded: a launcher is forgotten when it
 * releases its job or stops answering. */
#define MAX_JOBS 1024
static struct launcher {
    uint32_t job, nid, pid;
    uint32_t uid, gid;                   /* the owner, as MUNGE proved it */
    bool ping_outstanding;
} jobs[MAX_JOBS];
static int njobs;
static uint32_t next_job = 1;
static char seq_path[600], launchers_path[600];

static void logmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void save_launchers(void)
{
    char tmp[620];
    snprintf(tmp, sizeof tmp, "%s.tmp", launchers_path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        logmsg("cannot save the launchers in %s", tmp);
        return;
    }
    for (int i = 0; i < njobs; i++)
        fprintf(f, "%u %u %u %u %u\n", jobs[i].job, jobs[i].nid, jobs[i].pid, jobs[i].uid,
                jobs[i].gid);
    if (fclose(f) == 0)
        rename(tmp, launchers_path);
}

static void load_launchers(void)
{
    FILE *f = fopen(launchers_path, "r");
    char line[128];
    unsigned j, n, p, u, g;
    /* job nid pid uid gid: the owner too, or a restarted allocd would let
     * nobody but root end the job (and must not guess whose it is). */
    while (f && njobs < MAX_JOBS && fgets(line, sizeof line, f))
        if (sscanf(line, "%u %u %u %u %u", &j, &n, &p, &u, &g) == 5 && j)
            jobs[njobs++] = (struct launcher){j, n, p, u, g, false};
        else
            logmsg("ignored a malformed line in %s", launchers_path);
    if (f)
        fclose(f);
}

static struct launcher *find_job(uint32_t job)
{
    for (int i = 0; i < njobs; i++)
        if (jobs[i].job == job)
            return &jobs[i];
    return NULL;
}

/* A node still allocated to a job whose launcher gave it back unsure (a
 * load that failed, a rank lost) or stopped answering: it is ending that
 * job and is freed when it says so (OP_PING).  By nid, the job it ends; a
 * node freed or allocated again no longer matches.  Not kept across a
 * restart: such nodes are then freed by the periodic ping alone. */
static uint32_t ending_job[NODEDB_MAX + 1];

/* A node that says it holds a job other than the one it was given: by nid,
 * that job and since when (svc_now).  After a release that lasts until the
 * node has sent its last report and cleaned up: milliseconds to seconds. */
static uint32_t stray_job[NODEDB_MAX + 1];
static double stray_since[NODEDB_MAX + 1];
static double clean_limit = 60.0;

static bool node_ending(const struct node *nd)
{
    return nd->state == NODE_ALLOCATED && nd->job && nd->nid <= NODEDB_MAX &&
           ending_job[nd->nid] == nd->job;
}

/* Ending nodes are pinged soon after they appear, then less often: 50 ms,
 * doubling up to the ping period.  A launcher waiting for them (TERN_ALLOC
 * answered EBUSY) has them as soon as they are clean, not a period later. */
#define ENDING_PING_FIRST_S 0.05
static double ending_gap = ENDING_PING_FIRST_S, next_ending_ping;

static void ending_ping_soon(void)
{
    ending_gap = ENDING_PING_FIRST_S;
    next_ending_ping = svc_now() + ending_gap;
}

static void forget_job(uint32_t job)
{
    for (int i = 0; i < njobs; i++)
        if (jobs[i].job == job) {
            jobs[i] = jobs[--njobs];
            save_launchers();
            return;
        }
}

/* Job ids are not reused: the next one is kept beside the database. */
static void load_job_seq(void)
{
    FILE *f = fopen(seq_path, "r");
    unsigned long v;
    if (f && fscanf(f, "%lu", &v) == 1 && v > 0 && v < 0xFFFFFFF0UL)
        next_job = (uint32_t)v;
    if (f)
        fclose(f);
    for (int i = 0; i < db.n; i++)
        if (db.nodes[i].job >= next_job)
            next_job = db.nodes[i].job + 1;
}

static uint32_t take_job_id(void)
{
    uint32_t j = next_job++;
    if (next_job == 0 || next_job > 0xFFFFFFF0u)
        next_job = 1;
    char tmp[620];
    snprintf(tmp, sizeof tmp, "%s.tmp", seq_path);
    FILE *f = fopen(tmp, "w");
    if (f) {
        fprintf(f, "%u\n", next_job);
        if (fclose(f) == 0)
            rename(tmp, seq_path);
    }
    return j;
}
/* File servers (fyod) and the prefixes they serve; kept in memory (they
 * register again every few seconds) and forgotten when they stop answering. */
#define MAX_FYODS 64
static struct fyod {
    struct tern_fyod f;
    bool ping_outstanding;
} fyods[MAX_FYODS];
static int nfyods;

static struct fyod *find_fyod(uint32_t nid, uint32_t pid)
{
    for (int i = 0; i < nfyods; i++)
        if (fyods[i].f.nid == nid && fyods[i].f.pid == pid)
            return &fyods[i];
    return NULL;
}

static void forget_fyod(struct fyod *f) { *f = fyods[--nfyods]; }

static uint32_t node_pid[NODEDB_MAX + 1];   /* pid it registered from; 0: YOD_NODE_PID */

static void logmsg(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "allocd: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}

static void save(void)
{
    char err[256];
    if (nodedb_save(&db, err, sizeof err))
        logmsg("cannot save the node database: %s", err);
}

/* A put of buf (acknowledged), or with get a Get into buf; op is freed at its event. */
static void start_op(struct op *op, bool get, void *buf, uint64_t len, uint32_t nid, uint32_t pid,
                     ptl_pt_index_t pt, uint64_t bits)
{
    ptl_md_t md = {.start = buf, .length = len, .options = 0, .eq_handle = svc.eq,
                   .ct_handle = PTL_CT_NONE};
    ptl_process_t target;
    target.phys.nid = nid;
    target.phys.pid = (ptl_pid_t)pid;
    if (PtlMDBind(svc.ni, &md, &op->md) != PTL_OK) {
        free(op);
        return;
    }
    int rc = get ? PtlGet(op->md, 0, len, target, pt, bits, 0, op)
                 : PtlPut(op->md, 0, len, PTL_ACK_REQ, target, pt, bits, 0, op, 0);
    if (rc != PTL_OK) {
        PtlMDRelease(op->md);
        free(op);
    }
}

static void put_op(struct op *op, void *buf, uint64_t len, uint32_t nid, uint32_t pid,
                   ptl_pt_index_t pt, uint64_t bits)
{
    start_op(op, false, buf, len, nid, pid, pt, bits);
}

static void reply_job(const struct tern_hdr *req, uint32_t nid, int status, const char *msg,
                      const uint32_t *nids, uint32_t n, bool with_status, uint32_t job,
                      const uint8_t *key)
{
    struct op *op = calloc(1, sizeof *op);
    if (!op)
        return;
    op->kind = OP_REPLY;
    struct tern_reply *r = &op->reply;
    r->h = (struct tern_hdr){.magic = TERN_MAGIC, .version = TERN_PROTO_VERSION,
                             .type = TERN_REPLY, .request_id = req->request_id};
    r->status = status;
    r->job = job;
    if (key)
        memcpy(r->key, key, sizeof r->key);
    snprintf(r->message, sizeof r->message, "%s", msg);
    if (with_status) {
        uint32_t max = sizeof r->u.nodes / sizeof r->u.nodes[0];
        for (int i = 0; i < db.n && r->n < max; i++) {
            struct tern_node_status *s = &r->u.nodes[r->n++];
            s->nid = db.nodes[i].nid;
            s->job = db.nodes[i].job;
            memcpy(s->mac, db.nodes[i].mac, 6);
            s->state = (uint8_t)db.nodes[i].state;
            s->cores = db.nodes[i].cores;
        }
    } else if (nids == NULL && n == UINT32_MAX) {
        for (int i = 0; i < nfyods; i++)
            r->u.fyods[r->n++] = fyods[i].f;
    } else if (nids) {
        memcpy(r->u.nids, nids, n * sizeof nids[0]);
        r->n = n;
    }
    put_op(op, r, sizeof *r, nid, req->reply_pid, req->reply_pt, req->request_id);
}

static void reply(const struct tern_hdr *req, uint32_t nid, int status, const char *msg,
                  const uint32_t *nids, uint32_t n, bool with_status)
{
    reply_job(req, nid, status, msg, nids, n, with_status, 0, NULL);
}

/* A request that passed the header check, for the handler of its type. */
struct request {
    const unsigned char *buf;
    uint64_t len;
    const struct tern_hdr *h;
    uint32_t nid, pid;                 /* the sender */
    uint32_t uid, gid;                 /* who sent it, from its MUNGE credential */
};

static void refuse(const struct request *q, int status, const char *why)
{
    refused++;
    logmsg("refused request type %u from nid %u pid %u (uid %u): %s (%lu refused so far)",
           q->h->type, q->nid, q->pid, q->uid, why, refused);
    reply(q->h, q->nid, status, why, NULL, 0, false);
}

/* The job's owner or root: may kill or release it.  A job the allocator
 * has no launcher for (named by root with tern-svc, or whose launcher
 * stopped answering) is root's to end. */
static bool may_end(const struct request *q, uint32_t job)
{
    struct launcher *l = find_job(job);
    return q->uid == 0 || (l && l->uid == q->uid);
}

/* The pid a node's kernel registered with (the default before it has). */
static uint32_t node_kernel_pid(uint32_t nid)
{
    return nid <= NODEDB_MAX && node_pid[nid] ? node_pid[nid] : YOD_NODE_PID;
}

/* The allocator's grant of a job to one of its nodes. */
static void grant(uint32_t nid, uint32_t job, const struct request *q, const uint8_t *key)
{
    struct op *op = calloc(1, sizeof *op);
    if (!op)
        return;
    op->kind = OP_GRANT;
    op->nid = nid;
    op->job = job;
    struct tern_grant *g = (struct tern_grant *)&op->reply;
    _Static_assert(sizeof *g <= sizeof op->reply, "grant fits an op");
    g->h = (struct tern_hdr){.magic = TERN_MAGIC, .version = TERN_PROTO_VERSION,
                             .type = TERN_GRANT};
    g->job = job, g->uid = q->uid, g->gid = q->gid;
    g->launcher_nid = q->nid, g->launcher_pid = q->h->reply_pid;
    memcpy(g->key, key, sizeof g->key);
    struct tern_fio_auth a = {TERN_FIO_AUTH_MAGIC, job, q->uid, q->gid, nid};
    hmac_sha256(fs_key, sizeof fs_key, &a, sizeof a, g->fio_token);
    put_op(op, g, sizeof *g, nid, node_kernel_pid(nid), TERN_PT_SERVICE, TERN_MB_GRANT);
}

/* The job's launcher is gone: its nodes end the job now (TERN_REVOKE)
 * rather than after YOD_SILENCE_S; each is freed when it says it is done.
 * The number of nodes told. */
static int tell_nodes_launcher_gone(uint32_t job)
{
    int told = 0;
    for (int i = 0; i < db.n; i++) {
        struct node *nd = &db.nodes[i];
        if (nd->job != job || nd->state != NODE_ALLOCATED)
            continue;
        if (nd->nid <= NODEDB_MAX)
            ending_job[nd->nid] = job;
        struct op *op = calloc(1, sizeof *op);
        if (!op)
            break;
        op->kind = OP_REVOKE;
        op->nid = nd->nid;
        op->job = job;
        struct tern_grant *g = (struct tern_grant *)&op->reply;
        g->h = (struct tern_hdr){.magic = TERN_MAGIC, .version = TERN_PROTO_VERSION,
                                 .type = TERN_REVOKE};
        g->job = job;
        put_op(op, g, sizeof *g, nd->nid, node_kernel_pid(nd->nid), TERN_PT_SERVICE,
               TERN_MB_GRANT);
        told++;
    }
    return told;
}

static void on_register(const struct request *q)
{
    const struct tern_register *r = (const void *)q->buf;
    char err[256], msg[200];
    if (q->len < sizeof *r) {
        reply(q->h, q->nid, 22, "short REGISTER request", NULL, 0, false);
        return;
    }
    if (r->nid != q->nid) {
        snprintf(msg, sizeof msg, "claims nid %u but sends from nid %u", r->nid, q->nid);
        refuse(q, 1, msg);
        return;
    }
    /* Only a node kernel registers (a program's frames carry its job's id
     * and never reach the allocator), and only for the MAC its frames come
     * from: the Portals host accepts a frame only from its nid's MAC. */
    uint8_t from_mac[6];
    char mac_s[18], from_s[18];
    if (q->pid != YOD_NODE_PID) {
        snprintf(msg, sizeof msg, "REGISTER from pid %u: only a node kernel (pid %u) registers",
                 q->pid, YOD_NODE_PID);
        refuse(q, 1, msg);
        return;
    }
    if (ptl_linux_nid_to_mac(q->nid, from_mac) || memcmp(from_mac, r->mac, 6)) {
        format_mac(r->mac, mac_s);
        format_mac(from_mac, from_s);
        snprintf(msg, sizeof msg, "registers MAC %s but its frames come from %s", mac_s, from_s);
        refuse(q, 1, msg);
        return;
    }
    struct node *nd = nodedb_register(&db, r->mac, r->nid, time(NULL), err, sizeof err);
    if (!nd) {
        reply(q->h, q->nid, 17, err, NULL, 0, false);
        return;
    }
    if (nd->nid <= NODEDB_MAX) {
        ping_outstanding[nd->nid] = false;
        node_pid[nd->nid] = q->pid;
    }
    nd->cores = r->cores;
    save();
    char mac[18];
    format_mac(r->mac, mac);
    logmsg("node %u (%s, %u cores) registered", nd->nid, mac, r->cores);
    snprintf(msg, sizeof msg, "registered as nid %u", nd->nid);
    reply(q->h, q->nid, 0, msg, NULL, 0, false);
}

static void on_alloc(const struct request *q)
{
    const struct tern_hdr *h = q->h;
    const struct tern_alloc *a = (const void *)q->buf;
    static uint32_t out[TERN_MAX_LIST];
    char err[256];
    uint64_t len = q->len;
    uint32_t nid = q->nid;
    if (len < offsetof(struct tern_alloc, list) || a->nlist > TERN_MAX_LIST ||
        len < offsetof(struct tern_alloc, list) + a->nlist * sizeof(uint32_t)) {
        reply(h, nid, 22, "malformed ALLOC request", NULL, 0, false);
        return;
    }
    if (a->count > TERN_MAX_LIST) {
        reply(h, nid, 22, "more nodes than one request can carry", NULL, 0, false);
        return;
    }
    if (a->job && q->uid != 0) {
        refuse(q, 1, "only root names the job id");
        return;
    }
    if (a->job == 0 && njobs >= MAX_JOBS) {
        reply(h, nid, 11, "too many jobs running", NULL, 0, false);
        return;
    }
    uint32_t job = a->job ? a->job : next_job;
    int n = alloc_nodes(&db, job, a->count, a->nlist ? a->list : NULL, (int)a->nlist,
                        node_ending, out, err, sizeof err);
    if (n == ALLOC_WAIT) {
        ending_ping_soon();      /* the launcher asks again (yod does) */
        reply(h, nid, TERN_STATUS_NODES_ENDING, err, NULL, 0, false);
        return;
    }
    if (n < 0) {
        reply(h, nid, 28, err, NULL, 0, false);
        return;
    }
    /* The job's key: the launcher proves with it what it sends the nodes,
     * which hold it from their grant. */
    uint8_t key[TERN_KEY_BYTES];
    if (key_random(key, sizeof key)) {
        release_job(&db, job, NULL, 0);
        reply(h, nid, 5, "no random bytes for the job's key", NULL, 0, false);
        return;
    }
    if (a->job == 0) {
        take_job_id();
        jobs[njobs++] = (struct launcher){job, nid, h->reply_pid, q->uid, q->gid, false};
        save_launchers();
    }
    save();
    for (int i = 0; i < n; i++)
        grant(out[i], job, q, key);
    logmsg("job %u: %d nodes for nid %u pid %u (uid %u)", job, n, nid, h->reply_pid, q->uid);
    reply_job(h, nid, 0, "allocated", out, (uint32_t)n, false, job, key);
}

static void on_release(const struct request *q)
{
    const struct tern_release *r = (const void *)q->buf;
    char msg[200];
    size_t head = offsetof(struct tern_release, unsure);
    if (q->len < offsetof(struct tern_release, n_unsure)) {
        reply(q->h, q->nid, 22, "short RELEASE request", NULL, 0, false);
        return;
    }
    uint32_t n_unsure = q->len >= head ? r->n_unsure : 0;
    if (n_unsure > TERN_MAX_LIST || q->len < head + n_unsure * sizeof(uint32_t)) {
        reply(q->h, q->nid, 22, "malformed RELEASE request", NULL, 0, false);
        return;
    }
    if (!may_end(q, r->job)) {
        snprintf(msg, sizeof msg, "job %u is not yours (uid %u): only its owner or root "
                 "releases it", r->job, q->uid);
        refuse(q, 1, msg);
        return;
    }
    int n = release_job(&db, r->job, r->unsure, n_unsure);
    forget_job(r->job);
    save();
    for (uint32_t i = 0; i < n_unsure; i++)
        if (r->unsure[i] <= NODEDB_MAX)
            ending_job[r->unsure[i]] = r->job;
    if (n_unsure) {
        ending_ping_soon();
        snprintf(msg, sizeof msg, "%d nodes freed; %u when they say the job is over", n,
                 n_unsure);
    } else {
        snprintf(msg, sizeof msg, "%d nodes freed", n);
    }
    logmsg("job %u: %s", r->job, msg);
    reply(q->h, q->nid, 0, msg, NULL, 0, false);
}

static void on_status(const struct request *q)
{
    reply(q->h, q->nid, 0, "status", NULL, 0, true);
}

static void on_fyods(const struct request *q)
{
    reply(q->h, q->nid, 0, "fyods", NULL, UINT32_MAX, false);
}

/* Absolute, normalised, not "/": the prefix an fyod may serve. */
static bool good_prefix(const char *p, size_t pl, size_t max)
{
    return !(pl == 0 || pl == max || p[0] != '/' || pl < 2 || p[pl - 1] == '/' ||
             strstr(p, "//") || strstr(p, "/./") || strstr(p, "/../") ||
             !strcmp(p + pl - 2, "/.") || (pl >= 3 && !strcmp(p + pl - 3, "/..")));
}

static void on_fyod_register(const struct request *q)
{
    const struct tern_hdr *h = q->h;
    const struct tern_fyod_register *r = (const void *)q->buf;
    uint32_t nid = q->nid;
    if (q->uid != 0) {
        refuse(q, 1, "only root serves files to jobs (fyod becomes each job's owner)");
        return;
    }
    size_t pl = q->len >= sizeof *r ? strnlen(r->prefix, sizeof r->prefix) : 0;
    if (!good_prefix(r->prefix, pl, sizeof r->prefix)) {
        reply(h, nid, 22, "bad FYOD_REGISTER request (prefix: absolute, normalised, "
              "not /)", NULL, 0, false);
        return;
    }
    struct fyod *f = find_fyod(nid, h->reply_pid);
    if (r->leaving) {
        if (f) {
            logmsg("fyod at nid %u pid %u (%s) left", nid, h->reply_pid, f->f.prefix);
            forget_fyod(f);
        }
        reply(h, nid, 0, "forgotten", NULL, 0, false);
        return;
    }
    if (!f) {
        if (nfyods >= MAX_FYODS) {
            reply(h, nid, 28, "too many fyods", NULL, 0, false);
            return;
        }
        f = &fyods[nfyods++];
        memset(f, 0, sizeof *f);
        logmsg("fyod at nid %u pid %u serves %s", nid, h->reply_pid, r->prefix);
    }
    f->f.nid = nid;
    f->f.pid = h->reply_pid;
    memcpy(f->f.prefix, r->prefix, pl + 1);
    /* With the key that checks the nodes' file-request tokens. */
    reply_job(h, nid, 0, "registered", NULL, 0, false, 0, fs_key);
}

static void on_kill(const struct request *q)
{
    const struct tern_hdr *h = q->h;
    const struct tern_release *r = (const void *)q->buf;
    uint32_t nid = q->nid;
    struct launcher *l = q->len >= sizeof *r ? find_job(r->job) : NULL;
    if (!l) {
        reply(h, nid, 3, "no such job running", NULL, 0, false);
        return;
    }
    if (!may_end(q, r->job)) {
        char msg[200];
        snprintf(msg, sizeof msg, "job %u is not yours (uid %u): only its owner or root kills "
                 "it", r->job, q->uid);
        refuse(q, 1, msg);
        return;
    }
    struct op *op = calloc(1, sizeof *op);
    if (!op) {
        reply(h, nid, 12, "out of memory", NULL, 0, false);
        return;
    }
    op->kind = OP_KILL_NOTICE;
    op->job = r->job;
    uint32_t *w = (uint32_t *)&op->reply;
    w[0] = TERN_KILL_NOTICE;
    w[1] = r->job;
    put_op(op, &op->reply, 8, l->nid, l->pid, YOD_PT_REPORT, r->job);
    logmsg("job %u: kill asked by nid %u pid %u (uid %u)", r->job, nid, h->reply_pid, q->uid);
    reply(h, nid, 0, "the job's yod has been told to kill it", NULL, 0, false);
}

/* Every type but REGISTER needs a MUNGE credential. */
static void (*const handlers[])(const struct request *) = {
    [TERN_ALLOC] = on_alloc,
    [TERN_RELEASE] = on_release,
    [TERN_STATUS] = on_status,
    [TERN_KILL] = on_kill,
    [TERN_FYOD_REGISTER] = on_fyod_register,
    [TERN_FYODS] = on_fyods,
};

static void handle(const unsigned char *buf, uint64_t len, ptl_process_t from)
{
    const struct tern_hdr *h = (const void *)buf;
    struct request q = {buf, len, h, from.phys.nid, from.phys.pid, UINT32_MAX, UINT32_MAX};
    if (len < sizeof *h || h->magic != TERN_MAGIC || h->version != TERN_PROTO_VERSION) {
        logmsg("ignored a malformed request (%lu bytes) from nid %u", (unsigned long)len, q.nid);
        return;
    }
    if (h->type == TERN_REGISTER) {
        on_register(&q);
        return;
    }
    char err[256], why[300];
    if (cred_verify(h, len, &q.uid, &q.gid, err, sizeof err)) {
        q.uid = UINT32_MAX;
        snprintf(why, sizeof why, "not authorised: %s", err);
        refuse(&q, 13, why);
        return;
    }
    if (h->type < sizeof handlers / sizeof handlers[0] && handlers[h->type])
        handlers[h->type](&q);
    else
        reply(h, q.nid, 22, "unknown request type", NULL, 0, false);
}

/* Every node that is up or was seen, or (ending_only) those ending a job. */
static void ping_nodes(bool ending_only)
{
    for (int i = 0; i < db.n; i++) {
        struct node *nd = &db.nodes[i];
        /* Down nodes too: one that was only slow (a busy host) comes back. */
        if (nd->state == NODE_BOOTING || nd->nid > NODEDB_MAX || ping_outstanding[nd->nid] ||
            (nd->state == NODE_DOWN && !nd->last_seen) || (ending_only && !node_ending(nd)))
            continue;
        struct op *op = calloc(1, sizeof *op);
        if (!op)
            return;
        op->kind = OP_PING;
        op->nid = nd->nid;
        ping_outstanding[nd->nid] = true;
        /* Any answer, even "no such entry" (a node that does not publish
         * its state), proves the node is alive; only silence
         * (PTL_NI_UNDELIVERABLE) marks it down. */
        start_op(op, true, &op->state, sizeof op->state, nd->nid,
                 node_pid[nd->nid] ? node_pid[nd->nid] : YOD_NODE_PID, TERN_PT_SERVICE,
                 TERN_STATE_BITS);
    }
}

static void ping_launchers(void)
{
    for (int i = 0; i < njobs; i++) {
        if (jobs[i].ping_outstanding)
            continue;
        struct op *op = calloc(1, sizeof *op);
        if (!op)
            return;
        op->kind = OP_LAUNCHER_PING;
        op->job = jobs[i].job;
        jobs[i].ping_outstanding = true;
        put_op(op, &op->reply, 0, jobs[i].nid, jobs[i].pid, TERN_PT_SERVICE, 0);
    }
}

static void ping_fyods(void)
{
    for (int i = 0; i < nfyods; i++) {
        if (fyods[i].ping_outstanding)
            continue;
        struct op *op = calloc(1, sizeof *op);
        if (!op)
            return;
        op->kind = OP_FYOD_PING;
        op->nid = fyods[i].f.nid;
        op->job = fyods[i].f.pid;
        fyods[i].ping_outstanding = true;
        put_op(op, &op->reply, 0, fyods[i].f.nid, fyods[i].f.pid, TERN_PT_SERVICE, 0);
    }
}

static void on_ack(const ptl_event_t *ev)
{
    struct op *op = ev->user_ptr;
    if (!op)
        return;
    if (op->kind == OP_FYOD_PING) {
        struct fyod *f = find_fyod(op->nid, op->job);
        if (f) {
            f->ping_outstanding = false;
            if (ev->ni_fail_type == PTL_NI_UNDELIVERABLE) {
                logmsg("fyod at nid %u pid %u (%s) stopped answering: forgotten", f->f.nid,
                       f->f.pid, f->f.prefix);
                forget_fyod(f);
            }
        }
    } else if (op->kind == OP_LAUNCHER_PING) {
        struct launcher *l = find_job(op->job);
        if (l) {
            l->ping_outstanding = false;
            if (ev->ni_fail_type == PTL_NI_UNDELIVERABLE) {
                /* Its nodes may still run the job (they end it when their
                 * yod has been silent long enough): each is freed when it
                 * says it holds the job no more. */
                uint32_t job = op->job, nid = l->nid, pid = l->pid;
                forget_job(job);      /* l is another launcher's slot now */
                logmsg("job %u: its launcher (nid %u pid %u) stopped answering: told its %d "
                       "nodes to end it; each is freed when it has", job, nid, pid,
                       tell_nodes_launcher_gone(job));
                ending_ping_soon();
            }
        }
    } else if (op->kind == OP_PING) {
        ping_outstanding[op->nid] = false;
        struct node *nd = nodedb_find(&db, op->nid);
        if (nd && ev->ni_fail_type == PTL_NI_UNDELIVERABLE &&
            (nd->state == NODE_FREE || nd->state == NODE_ALLOCATED)) {
            logmsg("node %u stopped answering: down%s", nd->nid,
                   nd->state == NODE_ALLOCATED ? " (its job has lost a node)" : "");
            nd->state = NODE_DOWN;
            save();
        } else if (nd && ev->ni_fail_type != PTL_NI_UNDELIVERABLE) {
            nd->last_seen = time(NULL);
            /* What the node holds, if it says (0: nothing). */
            bool says = ev->ni_fail_type == PTL_NI_OK && ev->mlength == sizeof op->state &&
                        op->state.magic == TERN_MAGIC;
            uint32_t held = !says ? 0 : op->state.job ? op->state.job : op->state.ending;
            if (nd->state == NODE_DOWN && stray_job[nd->nid] && held == stray_job[nd->nid]) {
                /* Still not clean: stays down. */
            } else if (nd->state == NODE_DOWN) {
                stray_job[nd->nid] = 0;
                if (says && op->state.job)
                    nd->job = op->state.job;   /* it still runs it: not free */
                else if (!nd->job || !find_job(nd->job))
                    nd->job = 0;      /* its job ended while it was silent */
                nd->state = nd->job ? NODE_ALLOCATED : NODE_FREE;
                logmsg("node %u answers again: %s", nd->nid, node_state_name(nd->state));
                save();
            } else if (says && nd->state == NODE_ALLOCATED && op->state.job != nd->job &&
                       !find_job(nd->job)) {
                logmsg("job %u: node %u is done with it: free", nd->job, nd->nid);
                nd->state = NODE_FREE;
                nd->job = 0;
                save();
            } else if (held && held != nd->job) {
                double now = svc_now();
                if (stray_job[nd->nid] != held) {
                    stray_job[nd->nid] = held;
                    stray_since[nd->nid] = now;
                } else if (now - stray_since[nd->nid] >= clean_limit) {
                    logmsg("node %u has held job %u for %.0f s since it was given back%s: "
                           "down until it is clean", nd->nid, held, now - stray_since[nd->nid],
                           nd->state == NODE_ALLOCATED ? " (its new job has lost a node)" : "");
                    nd->state = NODE_DOWN;
                    save();
                }
            } else {
                stray_job[nd->nid] = 0;
            }
        }
    } else if (op->kind == OP_REVOKE && ev->ni_fail_type != PTL_NI_OK) {
        logmsg("job %u: the end notice to node %u was not delivered (failure %d): it ends the "
               "job when its launcher has been silent long enough", op->job, op->nid,
               (int)ev->ni_fail_type);
    } else if (op->kind == OP_GRANT && ev->ni_fail_type != PTL_NI_OK) {
        logmsg("job %u: the grant to node %u was not delivered (failure %d)", op->job, op->nid,
               (int)ev->ni_fail_type);
    } else if (ev->ni_fail_type != PTL_NI_OK) {
        logmsg("reply to nid %u not delivered (failure %d)", ev->initiator.phys.nid,
               (int)ev->ni_fail_type);
    }
    PtlMDRelease(op->md);
    free(op);
}

/* Requests the Portals library refused before any handler saw them:
 * frames of jobs' programs (their job id is not 0), logged when the count
 * has grown. */
static void report_refusals(void)
{
    static ptl_sr_value_t said;
    ptl_sr_value_t n = 0;
    if (PtlNIStatus(svc.ni, PTL_SR_PERMISSIONS_VIOLATIONS, &n) == PTL_OK && n != said) {
        logmsg("refused %lu requests from jobs' programs so far", (unsigned long)n);
        said = n;
    }
}

int main(int argc, char **argv)
{
    const char *dbpath = NULL;
    double period = 2.0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--db") && i + 1 < argc)
            dbpath = argv[++i];
        else if ((!strcmp(argv[i], "--ping-period") || !strcmp(argv[i], "--clean-limit")) &&
                 i + 1 < argc) {
            char *end;
            double v = strtod(argv[i + 1], &end);
            if (end == argv[i + 1] || *end || !(v > 0 && v < 1e6)) {
                fprintf(stderr, "allocd: %s %s: a number of seconds above 0 is needed\n",
                        argv[i], argv[i + 1]);
                return 2;
            }
            *(!strcmp(argv[i], "--ping-period") ? &period : &clean_limit) = v;
            i++;
        } else {
            fprintf(stderr, "usage: allocd --db FILE [--ping-period S] [--clean-limit S]\n");
            return 2;
        }
    }
    char err[256];
    if (!dbpath) {
        fprintf(stderr, "allocd: --db FILE is required\n");
        return 2;
    }
    if (svc_stop_start()) {
        fprintf(stderr, "allocd: cannot set up its stop on SIGTERM and SIGINT\n");
        return 1;
    }
    if (nodedb_load(&db, dbpath, err, sizeof err)) {
        fprintf(stderr, "allocd: %s\n", err);
        return 1;
    }
    snprintf(seq_path, sizeof seq_path, "%s.jobseq", dbpath);
    load_job_seq();
    snprintf(launchers_path, sizeof launchers_path, "%s.launchers", dbpath);
    load_launchers();
    char key_path[620];
    snprintf(key_path, sizeof key_path, "%s.fskey", dbpath);
    if (key_load_or_create(key_path, fs_key, err, sizeof err)) {
        fprintf(stderr, "allocd: %s\n", err);
        return 1;
    }
    if (svc_open(&svc, TERN_ALLOC_PID, TERN_PT_SERVICE, err, sizeof err)) {
        fprintf(stderr, "allocd: %s\n", err);
        return 1;
    }
    for (int i = 0; i < SLOTS; i++)
        svc_post(&svc, TERN_PT_SERVICE, slots[i], TERN_MSG_MAX, 0, ~0ULL);
    logmsg("serving nid %u pid %u: %d nodes in %s", svc.me.phys.nid, svc.me.phys.pid, db.n,
           dbpath);
    double next_ping = svc_now() + period;
    next_ending_ping = next_ping;
    while (!svc_stopping()) {
        double left = (next_ending_ping < next_ping ? next_ending_ping : next_ping) - svc_now();
        ptl_event_t ev;
        unsigned which;
        int rc = PtlEQPoll(&svc.eq, 1, left > 0 ? (ptl_time_t)(left * 1000) + 1 : 0, &ev, &which);
        if (rc == PTL_OK || rc == PTL_EQ_DROPPED) {
            if (ev.type == PTL_EVENT_PUT) {
                unsigned char *base = ev.start;
                long slot = (base - &slots[0][0]) / TERN_MSG_MAX;
                if (slot >= 0 && slot < SLOTS) {
                    handle(base, ev.mlength, ev.initiator);
                    svc_post(&svc, TERN_PT_SERVICE, slots[slot], TERN_MSG_MAX, 0, ~0ULL);
                }
            } else if (ev.type == PTL_EVENT_ACK || ev.type == PTL_EVENT_REPLY) {
                on_ack(&ev);
            }
        }
        if (svc_now() >= next_ping) {
            report_refusals();
            ping_nodes(false);
            ping_launchers();
            ping_fyods();
            next_ping = svc_now() + period;
        }
        if (svc_now() >= next_ending_ping) {
            ping_nodes(true);
            ending_gap = ending_gap * 2 < period ? ending_gap * 2 : period;
            next_ending_ping = svc_now() + ending_gap;
        }
    }
    svc_stop_loop_left();
    save();
    logmsg("stopped");
    PtlNIFini(svc.ni);
    PtlFini();
    return 0;
}
