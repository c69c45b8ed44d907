/*
 * fyod: serves files to the programs of jobs (include/tern/fio_proto.h).
 *
 *   fyod --root DIR --prefix /scratch [--fabric IFACE] [--files N]
 *
 * Compute-node programs see DIR under the path /scratch.  fyod registers
 * with the allocator (include/tern/tern_proto.h TERN_FYOD_REGISTER, again
 * every few seconds), which tells every yod; requests run with the identity
 * of the job's owner (fsuid/fsgid and groups, so fyod runs as root) and
 * cannot leave DIR.  Files of jobs that are over (the allocator no longer
 * lists their nodes for them) are closed even when no node said so.
 * --files: files open at once for all jobs (4096); one job may hold three
 * quarters of them, so the others always find room.
 * Environment: TERN_IFACE (or --fabric), TERN_MUNGE_SOCKET, TERN_ALLOC_NID.
 * A request runs as the uid and gid of its job's grant from the allocator,
 * proven by the token in it (docs/security.md).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tern/fileserver.h>
#include <tern/fio_proto.h>
#include <tern/nodedb.h>
#include <tern/sha256.h>
#include <tern/cred.h>
#include <tern/svc_portals.h>
#include <tern/tern_proto.h>
#include "ptl_me.h"

#define REGISTER_S 5.0
#define REAP_S 10.0

static struct svc svc;
static uint8_t fs_key[TERN_KEY_BYTES];   /* the allocator's: checks nodes' tokens */
static bool have_key;
static uint32_t alloc_nid;
static char prefix[TERN_PREFIX_MAX];
static struct tern_reply status;          /* the allocator's last STATUS */
static bool status_valid;
static uint32_t status_gen;               /* files opened since are not judged by it */

/* Requests to the allocator go out without waiting: the answer is an
 * event like any other. */
static struct tern_reply answers[2];      /* [0] register, [1] status */
static struct { struct tern_fyod_register reg; struct tern_hdr st; } out;
static ptl_handle_md_t out_md;
static bool md_bound;

static void request(void *h_, size_t len, uint16_t type, int slot)
{
    struct tern_hdr *h = h_;
    static uint64_t seq;
    h->magic = TERN_MAGIC;
    h->version = TERN_PROTO_VERSION;
    h->type = type;
    h->request_id = (uint64_t)time(NULL) << 24 ^ ((uint64_t)svc.me.phys.pid << 8) ^ ++seq << 32;
    h->reply_pid = svc.me.phys.pid;
    h->reply_pt = TERN_PT_REPLY;
    char err[256];
    if (cred_sign(h, len, err, sizeof err)) {
        fprintf(stderr, "fyod: %s\n", err);
        return;
    }
    ptl_me_t me = ptl_me_phys(&answers[slot], sizeof answers[slot],
                              PTL_ME_OP_PUT | PTL_ME_USE_ONCE | PTL_ME_EVENT_LINK_DISABLE |
                              PTL_ME_EVENT_UNLINK_DISABLE,
                              h->request_id);
    me.match_id.phys.nid = alloc_nid;
    me.match_id.phys.pid = TERN_ALLOC_PID;
    ptl_handle_me_t meh;
    if (PtlMEAppend(svc.ni, TERN_PT_REPLY, &me, PTL_PRIORITY_LIST, &answers[slot], &meh) !=
        PTL_OK)
        return;
    ptl_process_t to;
    to.phys.nid = alloc_nid;
    to.phys.pid = TERN_ALLOC_PID;
    PtlPut(out_md, (ptl_size_t)((char *)h - (char *)&out), len, PTL_NO_ACK_REQ, to,
           TERN_PT_SERVICE, 0, 0, NULL, 0);
}

static void register_now(bool leaving)
{
    memset(&out.reg, 0, sizeof out.reg);
    out.reg.leaving = leaving;
    snprintf(out.reg.prefix, sizeof out.reg.prefix, "%s", prefix);
    request(&out.reg, sizeof out.reg, TERN_FYOD_REGISTER, 0);
}

static bool alive(uint32_t nid, uint32_t job)
{
    for (uint32_t i = 0; i < status.n; i++)
        if (status.u.nodes[i].nid == nid)
            return status.u.nodes[i].job == job && status.u.nodes[i].state == NODE_ALLOCATED;
    return false;
}

static void on_answer(const ptl_event_t *ev)
{
    if (ev->user_ptr == &answers[0]) {
        static bool said;
        if (answers[0].status)
            fprintf(stderr, "fyod: the allocator refused the registration: %s\n",
                    answers[0].message);
        else if (!said)
            fprintf(stderr, "fyod: registered with the allocator: serving %s\n", prefix);
        said = !answers[0].status;
        if (!answers[0].status) {
            memcpy(fs_key, answers[0].key, sizeof fs_key);
            have_key = true;
        }
    } else if (!answers[1].status) {
        status = answers[1];
        status_valid = true;
        int n = fs_reap(alive, status_gen);
        if (n)
            fprintf(stderr, "fyod: closed %d files of jobs that have ended\n", n);
    }
}

/* A node's file request is served as the uid and gid the allocator
 * granted its job on that node: the request carries the grant's token. */
static bool authorised(uint32_t nid, const struct fio_req *r)
{
    if (!have_key)
        return false;
    struct tern_fio_auth a = {TERN_FIO_AUTH_MAGIC, r->job, r->uid, r->gid, nid};
    uint8_t want[32];
    hmac_sha256(fs_key, sizeof fs_key, &a, sizeof a, want);
    return mac_equal(want, r->auth, sizeof want);
}

static void usage(void)
{
    fprintf(stderr, "usage: fyod --root DIR --prefix /PATH [--fabric IFACE] [--files N]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *root = NULL, *pfx = NULL;
    uint32_t max_files = 0;
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc)
            usage();
        if (!strcmp(argv[i], "--root"))
            root = argv[++i];
        else if (!strcmp(argv[i], "--prefix"))
            pfx = argv[++i];
        else if (!strcmp(argv[i], "--fabric"))
            setenv("TERN_IFACE", argv[++i], 1);
        else if (!strcmp(argv[i], "--files")) {
            char *end;
            unsigned long n = strtoul(argv[++i], &end, 10);
            if (*end || n < 4 || n > 1000000) {
                fprintf(stderr, "fyod: --files wants a number from 4 to 1000000\n");
                return 2;
            }
            max_files = (uint32_t)n;
        } else
            usage();
    }
    if (!root || !pfx)
        usage();
    size_t pl = strlen(pfx);
    if (pfx[0] != '/' || pl < 2 || pl >= sizeof prefix || pfx[pl - 1] == '/' ||
        strstr(pfx, "//") || strstr(pfx, "/./") || strstr(pfx, "/../")) {
        fprintf(stderr, "fyod: --prefix wants an absolute path other than /, without "
                "trailing '/', '.' or '..' (at most %zu bytes)\n", sizeof prefix - 1);
        return 2;
    }
    strcpy(prefix, pfx);
    setvbuf(stderr, NULL, _IOLBF, 0);
    char err[256];
    if (svc_stop_start()) {
        fprintf(stderr, "fyod: cannot set up its stop on SIGTERM and SIGINT\n");
        return 1;
    }
    const char *a = getenv("TERN_ALLOC_NID");
    alloc_nid = a ? (uint32_t)strtoul(a, NULL, 10) : 0;
    if (svc_open(&svc, PTL_PID_ANY, TERN_PT_REPLY, err, sizeof err)) {
        fprintf(stderr, "fyod: %s\n", err);
        return 1;
    }
    ptl_pt_index_t got;
    PtlPTAlloc(svc.ni, 0, svc.eq, TERN_PT_SERVICE, &got);   /* the allocator's pings */
    struct fs_config cfg = {.root = root, .confine = true, .ni = svc.ni, .eq = svc.eq,
                            .allow = NULL, .authorised = authorised, .name = "fyod",
                            .max_files = max_files};
    if (fs_init(&cfg, err, sizeof err)) {
        fprintf(stderr, "fyod: %s\n", err);
        return 1;
    }
    ptl_md_t mdd = {.start = &out, .length = sizeof out, .options = PTL_MD_EVENT_SEND_DISABLE,
                    .eq_handle = svc.eq, .ct_handle = PTL_CT_NONE};
    if (PtlMDBind(svc.ni, &mdd, &out_md) != PTL_OK) {
        fprintf(stderr, "fyod: Portals set-up failed\n");
        return 1;
    }
    md_bound = true;
    signal(SIGPIPE, SIG_IGN);
    fprintf(stderr, "fyod: nid %u pid %u serves %s as %s\n", svc.me.phys.nid, svc.me.phys.pid,
            root, prefix);
    double next_reg = 0, next_reap = svc_now() + REAP_S;
    while (!svc_stopping()) {
        double now = svc_now();
        if (now >= next_reg) {
            register_now(false);
            next_reg = now + REGISTER_S;
        }
        if (now >= next_reap) {
            memset(&out.st, 0, sizeof out.st);
            status_gen = fs_generation();
            request(&out.st, sizeof out.st, TERN_STATUS, 1);
            next_reap = now + REAP_S;
        }
        ptl_event_t ev;
        unsigned which;
        int rc = PtlEQPoll(&svc.eq, 1, 500, &ev, &which);
        while (rc == PTL_OK || rc == PTL_EQ_DROPPED) {
            if (ev.type == PTL_EVENT_PUT && ev.pt_index == TERN_PT_REPLY)
                on_answer(&ev);
            else
                fs_event(&ev);
            rc = PtlEQGet(svc.eq, &ev);
        }
    }
    svc_stop_loop_left();
    register_now(true);
    double end = svc_now() + 0.5;
    while (svc_now() < end) {
        ptl_event_t ev;
        unsigned which;
        if (PtlEQPoll(&svc.eq, 1, 50, &ev, &which) == PTL_OK)
            fs_event(&ev);
    }
    fprintf(stderr, "fyod: stopped (%d files were open)\n", fs_open_files());
    (void)status_valid;
    (void)md_bound;
    PtlNIFini(svc.ni);
    PtlFini();
    return 0;
}
