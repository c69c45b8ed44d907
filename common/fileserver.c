/* The file server: requests from node kernels (include/tern/fio_proto.h) carried
 * out on the service node's file system with the identity of the job's
 * owner, bulk data moved straight between the program's buffer on the node
 * and the server's buffer in pieces of at most FIO_PIECE bytes, FS_DEPTH
 * in flight, then one reply.  Single-threaded: everything happens inside
 * fs_event, called from the owner's event loop (yod's monitor, fyod's main
 * loop).  Here: the requests' checks and dispatch, the open files, the
 * Portals side; fs_ops.c carries the calls out, fs_xfer.c moves the data. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs_internal.h"
#include <tern/yod_proto.h>
#include "ptl_me.h"

#define REQ_BUFS 4
#define REQ_BUF_LEN (1u << 20)
#define MAX_OPS 1024

struct fs_config fs_cfg;

static struct reqbuf { char *mem; } reqbufs[REQ_BUFS];

/* Every job's open files; one job may hold at most a job's share of them,
 * so that the other jobs the server serves always find room (a job of many
 * ranks, or a hostile one, could take them all, and every other job's open
 * was ENFILE until it ended). */
static struct file *files;
static uint32_t max_files, job_share;
static int nfiles;
static unsigned long fs_refused;     /* requests without the allocator's authorisation */

static struct op ops[MAX_OPS];

void fs_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", fs_cfg.name ? fs_cfg.name : "fileserver");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* ---- files ------------------------------------------------------------------ */

static struct file *file_of(const struct fio_req *r, uint32_t nid)
{
    uint64_t i = r->handle & 0xFFFFFFFF;
    if (i >= max_files)
        return NULL;
    struct file *f = &files[i];
    if (!f->used || f->gen != (uint32_t)(r->handle >> 32) || f->nid != nid || f->job != r->job ||
        f->rank != r->rank)
        return NULL;
    return f;
}

void fs_file_close(struct file *f)
{
    close(f->fd);
    f->used = false;
    nfiles--;
}

static uint32_t gen = 1;

uint32_t fs_generation(void) { return gen; }

long fs_file_new(int fd, uint32_t nid, const struct fio_req *r, uint64_t *handle)
{
    static uint32_t hint;
    uint32_t held = 0;
    for (uint32_t i = 0; i < max_files; i++)
        held += files[i].used && files[i].job == r->job;
    if (held >= job_share) {
        close(fd);
        return -ENFILE;
    }
    for (uint32_t k = 0; k < max_files; k++) {
        uint32_t i = (hint + k) % max_files;
        if (files[i].used)
            continue;
        files[i] = (struct file){true, gen++, nid, r->job, r->rank, fd};
        hint = i + 1;
        nfiles++;
        *handle = (uint64_t)files[i].gen << 32 | i;
        return 0;
    }
    close(fd);
    return -ENFILE;
}

void fs_drop_stale(uint32_t nid, uint32_t job)
{
    for (uint32_t i = 0; i < max_files; i++)
        if (files[i].used && files[i].nid == nid && files[i].job != job)
            fs_file_close(&files[i]);
}

int fs_close_job(uint32_t job)
{
    int n = 0;
    for (uint32_t i = 0; i < max_files; i++)
        if (files[i].used && files[i].job == job) {
            fs_file_close(&files[i]);
            n++;
        }
    return n;
}

int fs_reap(bool (*alive)(uint32_t nid, uint32_t job), uint32_t gen)
{
    int n = 0;
    for (uint32_t i = 0; i < max_files; i++)
        if (files[i].used && files[i].gen < gen && !alive(files[i].nid, files[i].job)) {
            fs_file_close(&files[i]);
            n++;
        }
    return n;
}

int fs_open_files(void) { return nfiles; }

/* ---- Portals ------------------------------------------------------------------ */

struct op *fs_op_new(enum op_kind k)
{
    for (int i = 0; i < MAX_OPS; i++)
        if (ops[i].kind == OP_FREE) {
            memset(&ops[i], 0, sizeof ops[i]);
            ops[i].kind = k;
            return &ops[i];
        }
    return NULL;
}

static bool is_op(const void *p) { return p >= (void *)ops && p < (void *)(ops + MAX_OPS); }
static bool is_reqbuf(const void *p)
{
    return p >= (void *)reqbufs && p < (void *)(reqbufs + REQ_BUFS);
}

ptl_process_t fs_node(uint32_t nid)
{
    ptl_process_t to;
    to.phys.nid = nid;
    to.phys.pid = YOD_NODE_PID;
    return to;
}

static void send_reply(uint32_t nid, const struct fio_req *r, struct fio_reply *rep)
{
    rep->magic = FIO_MAGIC;
    rep->version = FIO_VERSION;
    rep->op = r->op;
    rep->id = r->id;
    struct op *op = fs_op_new(OP_REPLY);
    if (!op) {
        free(rep);
        return;
    }
    op->rep = rep;
    size_t len = offsetof(struct fio_reply, data) + rep->data_len;
    ptl_md_t mdd = {.start = rep, .length = len, .options = PTL_MD_EVENT_SEND_DISABLE,
                    .eq_handle = fs_cfg.eq, .ct_handle = PTL_CT_NONE};
    if (PtlMDBind(fs_cfg.ni, &mdd, &op->md) != PTL_OK) {
        free(rep);
        op->kind = OP_FREE;
        return;
    }
    if (PtlPut(op->md, 0, len, PTL_ACK_REQ, fs_node(nid), FIO_PT_REPLY, r->id, 0, op, 0) !=
        PTL_OK) {
        PtlMDRelease(op->md);
        free(rep);
        op->kind = OP_FREE;
    }
}

void fs_reply_result(uint32_t nid, const struct fio_req *r, int64_t result)
{
    struct fio_reply *rep = calloc(1, sizeof *rep);
    if (!rep)
        return;
    rep->result = result;
    send_reply(nid, r, rep);
}

static void post_reqbuf(struct reqbuf *b)
{
    ptl_me_t me = ptl_me_phys(b->mem, REQ_BUF_LEN,
                              PTL_ME_OP_PUT | PTL_ME_MANAGE_LOCAL | PTL_ME_NO_TRUNCATE |
                              PTL_ME_EVENT_LINK_DISABLE,
                              FIO_MB_REQ);
    me.min_free = FIO_REQ_MAX;
    me.match_id.phys.pid = YOD_NODE_PID;
    ptl_handle_me_t h;
    PtlMEAppend(fs_cfg.ni, FIO_PT_REQ, &me, PTL_PRIORITY_LIST, b, &h);
}

/* ---- requests ----------------------------------------------------------------- */

/* Lengths and paths as the protocol says (the paths NUL-terminated, no NUL
 * inside); fills c's paths.  0, or -EINVAL. */
static long check_paths(const struct fio_req *r, uint64_t len, struct fs_call *c)
{
    if ((uint64_t)sizeof *r + r->path_len + r->path2_len != len ||
        r->path_len > FIO_PATH_MAX || r->path2_len > FIO_PATH_MAX)
        return -EINVAL;
    const char *path = (const char *)(r + 1), *path2 = path + r->path_len;
    if ((r->path_len && path[r->path_len - 1]) || (r->path2_len && path2[r->path2_len - 1]) ||
        (r->path_len && strlen(path) + 1 != r->path_len) ||
        (r->path2_len && strlen(path2) + 1 != r->path2_len))
        return -EINVAL;
    c->path = path;
    c->path2 = path2;
    return 0;
}

/* The rank's job has ended: no reply, the node does not wait for one. */
static void close_rank(uint32_t nid, const struct fio_req *r)
{
    for (uint32_t i = 0; i < max_files; i++)
        if (files[i].used && files[i].nid == nid && files[i].job == r->job &&
            files[i].rank == r->rank)
            fs_file_close(&files[i]);
}

static void handle_request(const struct fio_req *r, uint64_t len, uint32_t nid)
{
    struct fs_call c = {.r = r, .nid = nid};
    if (len < sizeof *r || r->magic != FIO_MAGIC || r->version != FIO_VERSION)
        return;
    long bad = check_paths(r, len, &c);
    if (bad)
        return fs_reply_result(nid, r, bad);
    if (fs_cfg.allow && !fs_cfg.allow(nid, r->job, r->rank))
        return fs_reply_result(nid, r, -EACCES);
    if (fs_cfg.authorised && !fs_cfg.authorised(nid, r)) {
        fs_refused++;
        fprintf(stderr, "%s: refused a request of job %u from nid %u: uid %u is not what the "
                "allocator granted (%lu refused)\n", fs_cfg.name, r->job, nid, r->uid, fs_refused);
        return fs_reply_result(nid, r, -EACCES);
    }
    if (r->op == FIO_CLOSE_ALL)
        return close_rank(nid, r);
    int rc = fs_become(r->uid, r->gid);
    if (rc)
        return fs_reply_result(nid, r, rc);
    const struct fs_op *op = fs_op_of(r->op);
    if (op->on_path && !r->path_len)
        return fs_reply_result(nid, r, -EINVAL);
    if (!op->on_path && !(c.f = file_of(r, nid)))
        return fs_reply_result(nid, r, -EBADF);
    struct fio_reply *rep = calloc(1, sizeof *rep);
    if (!rep)
        return;
    if (op->xfer) {
        free(rep);
        return fs_xfer_start(nid, r, c.f, r->op == FIO_WRITE, r->op == FIO_GETDENTS);
    }
    rep->result = op->fn(&c, rep);
    if (rep->result == FIO_FOLLOW_LINK) {
        size_t n = strlen(fs_follow.path) + 1;
        memcpy(rep->data, fs_follow.path, n);
        rep->data_len = (uint32_t)n;
        rep->handle = fs_follow.of == c.path2 && r->path2_len ? 2 : 1;
    }
    send_reply(nid, r, rep);
}

bool fs_event(const ptl_event_t *ev)
{
    switch (ev->type) {
    case PTL_EVENT_PUT:
        if (ev->pt_index != FIO_PT_REQ)
            return false;
        if (ev->initiator.phys.pid == YOD_NODE_PID && ev->match_bits == FIO_MB_REQ &&
            ev->mlength == ev->rlength && ev->mlength >= sizeof(struct fio_req)) {
            /* Copied: the buffer may be reused while a transfer runs. */
            static _Alignas(8) char req[FIO_REQ_MAX];
            uint64_t n = ev->mlength < sizeof req ? ev->mlength : sizeof req;
            memcpy(req, ev->start, n);
            handle_request((const struct fio_req *)req, n, ev->initiator.phys.nid);
        }
        return true;
    case PTL_EVENT_AUTO_UNLINK:
        if (!is_reqbuf(ev->user_ptr))
            return false;
        post_reqbuf(ev->user_ptr);
        return true;
    case PTL_EVENT_PT_DISABLED:
        if (ev->pt_index != FIO_PT_REQ)
            return false;
        PtlPTEnable(fs_cfg.ni, FIO_PT_REQ);
        return true;
    case PTL_EVENT_ACK:
    case PTL_EVENT_REPLY:
    case PTL_EVENT_SEND: {
        if (!is_op(ev->user_ptr))
            return false;
        struct op *op = ev->user_ptr;
        if (ev->type == PTL_EVENT_SEND)
            return true;
        if (op->kind == OP_REPLY) {
            PtlMDRelease(op->md);
            free(op->rep);
            op->kind = OP_FREE;
        } else if (op->kind == OP_PIECE) {
            fs_xfer_piece_done(op, ev);
        }
        return true;
    }
    default:
        return false;
    }
}

int fs_init(const struct fs_config *c, char *err, int errlen)
{
    fs_cfg = *c;
    max_files = fs_cfg.max_files ? fs_cfg.max_files : FS_MAX_FILES;
    job_share = fs_cfg.job_share && fs_cfg.job_share < max_files ? fs_cfg.job_share
                                                                 : max_files - max_files / 4;
    files = calloc(max_files, sizeof *files);
    if (!files) {
        snprintf(err, (size_t)errlen, "out of memory for %u files", max_files);
        return -1;
    }
    /* The table's files and the server's own (a login's soft limit is
     * often 1024, and opens past it failed with EMFILE). */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)max_files + 64) {
        rl.rlim_cur = rl.rlim_max < (rlim_t)max_files + 64 ? rl.rlim_max : (rlim_t)max_files + 64;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (fs_root_open(fs_cfg.root, fs_cfg.confine, err, errlen))
        return -1;
    /* The kernel has applied the job's umask to every mode already. */
    umask(0);
    ptl_pt_index_t got;
    int rc = PtlPTAlloc(fs_cfg.ni, 0, fs_cfg.eq, FIO_PT_REQ, &got);
    if (rc != PTL_OK) {
        snprintf(err, (size_t)errlen, "cannot allocate the file portal: error %d", rc);
        return -1;
    }
    for (int i = 0; i < REQ_BUFS; i++) {
        reqbufs[i].mem = malloc(REQ_BUF_LEN);
        if (!reqbufs[i].mem) {
            snprintf(err, (size_t)errlen, "out of memory");
            return -1;
        }
        post_reqbuf(&reqbufs[i]);
    }
    /* Pings from waiting nodes: acknowledged, nothing else. */
    ptl_me_t me = ptl_me_phys(NULL, 0,
                              PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE |
                              PTL_ME_EVENT_COMM_DISABLE | PTL_ME_EVENT_SUCCESS_DISABLE |
                              PTL_ME_EVENT_UNLINK_DISABLE,
                              FIO_MB_PING);
    ptl_handle_me_t h;
    if (PtlMEAppend(fs_cfg.ni, FIO_PT_REQ, &me, PTL_PRIORITY_LIST, NULL, &h) != PTL_OK) {
        snprintf(err, (size_t)errlen, "cannot post the ping entry");
        return -1;
    }
    return 0;
}
