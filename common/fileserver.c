/* The file server: requests from node kernels (include/tern/fio_proto.h) carried
 * out on the service node's file system with the identity of the job's
 * owner, bulk data moved straight between the program's buffer on the node
 * and the server's buffer in pieces of at most FIO_PIECE bytes, FS_DEPTH
 * in flight, then one reply.  Single-threaded: everything happens inside
 * fs_event, called from the owner's event loop (yod's monitor, fyod's main
 * loop). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/openat2.h>
#include <pwd.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <tern/fileserver.h>
#include <tern/fio_proto.h>
#include <tern/yod_proto.h>
#include "ptl_me.h"

#define REQ_BUFS 4
#define REQ_BUF_LEN (1u << 20)
#define MAX_FILES 4096
#define MAX_OPS 1024
#define MAX_XFERS 128
#define FS_DEPTH 2

static struct fs_config cfg;
static int rootfd = -1;
static uint64_t resolve_flags;

static struct reqbuf { char *mem; } reqbufs[REQ_BUFS];

struct file {
    bool used;
    uint32_t gen, nid, job, rank;
    int fd;
};
static struct file files[MAX_FILES];
static int nfiles;

struct xfer;
enum op_kind { OP_FREE, OP_REPLY, OP_PIECE };
struct op {
    enum op_kind kind;
    ptl_handle_md_t md;
    struct xfer *x;
    int slot;
    struct fio_reply *rep;
};
static struct op ops[MAX_OPS];

struct piece {
    char *buf;
    uint64_t off, n;
    bool busy, ready;
};
struct xfer {
    bool used, writing, getdents, stop, netfail;
    struct fio_req req;
    uint32_t nid;
    int fd;
    uint64_t next, wdone;      /* bytes issued; bytes written (write) */
    uint64_t total;            /* read: bytes put */
    int err, inflight;
    struct piece p[FS_DEPTH];
};
static struct xfer xfers[MAX_XFERS];

static void logmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logmsg(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", cfg.name ? cfg.name : "fileserver");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* ---- identity ------------------------------------------------------------ */

static uid_t cur_uid = (uid_t)-1;
static gid_t cur_gid = (gid_t)-1;

/* Takes on the file-system identity of the job's owner: fsuid, fsgid and
 * the supplementary groups the service node gives that user.  A server not
 * running as root serves only its own user. */
static int become(uint32_t uid, uint32_t gid)
{
    if (geteuid() != 0)
        return uid == getuid() && gid == getgid() ? 0 : -EACCES;
    if (uid == cur_uid && gid == cur_gid)
        return 0;
    gid_t groups[256];
    int ng = 256;
    struct passwd *pw = getpwuid(uid);
    if (pw && getgrouplist(pw->pw_name, gid, groups, &ng) >= 0) {
        if (setgroups((size_t)ng, groups))
            return -EACCES;
    } else if (setgroups(1, &gid)) {
        return -EACCES;
    }
    setfsgid(gid);
    setfsuid(uid);
    if ((uid_t)setfsuid((uid_t)-1) != uid || (gid_t)setfsgid((gid_t)-1) != gid)
        return -EACCES;
    cur_uid = uid;
    cur_gid = gid;
    return 0;
}

/* ---- paths ----------------------------------------------------------------- */

static int open_path(const char *p, int flags, unsigned mode)
{
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = (uint64_t)(flags | O_CLOEXEC);
    how.mode = (flags & (O_CREAT | __O_TMPFILE)) ? (mode & 07777) : 0;
    how.resolve = resolve_flags;
    long fd = syscall(SYS_openat2, rootfd, p, &how, sizeof how);
    if (fd < 0)
        return errno == EXDEV || errno == ELOOP ? (errno == ELOOP && !cfg.confine ? -ELOOP
                                                                                   : -EACCES)
                                                : -errno;
    return (int)fd;
}

/* The directory holding p's last component, and that component.  The
 * component is then used with *at calls that do not follow it. */
static int open_parent(const char *p, char *name, size_t namelen)
{
    const char *slash = strrchr(p, '/');
    const char *last = slash ? slash + 1 : p;
    if (!*last || !strcmp(last, ".") || !strcmp(last, ".."))
        return -EBUSY;     /* the root itself, or a path the kernel would not send */
    if (strlen(last) >= namelen)
        return -ENAMETOOLONG;
    strcpy(name, last);
    if (!slash)
        return open_path(".", O_PATH | O_DIRECTORY, 0);
    char dir[FIO_PATH_MAX];
    size_t n = (size_t)(slash - p);
    memcpy(dir, p, n);
    dir[n] = 0;
    return open_path(n ? dir : "/", O_PATH | O_DIRECTORY, 0);
}

static void to_fio_stat(const struct stat *s, struct fio_stat *o)
{
    memset(o, 0, sizeof *o);
    o->dev = s->st_dev;
    o->ino = s->st_ino;
    o->nlink = s->st_nlink;
    o->mode = s->st_mode;
    o->uid = s->st_uid;
    o->gid = s->st_gid;
    o->rdev = s->st_rdev;
    o->size = s->st_size;
    o->blksize = s->st_blksize;
    o->blocks = s->st_blocks;
    o->atime = (uint64_t)s->st_atim.tv_sec;
    o->atime_ns = (uint64_t)s->st_atim.tv_nsec;
    o->mtime = (uint64_t)s->st_mtim.tv_sec;
    o->mtime_ns = (uint64_t)s->st_mtim.tv_nsec;
    o->ctime = (uint64_t)s->st_ctim.tv_sec;
    o->ctime_ns = (uint64_t)s->st_ctim.tv_nsec;
}

/* ---- files ------------------------------------------------------------------ */

static struct file *file_of(const struct fio_req *r, uint32_t nid)
{
    uint64_t i = r->handle & 0xFFFFFFFF;
    if (i >= MAX_FILES)
        return NULL;
    struct file *f = &files[i];
    if (!f->used || f->gen != (uint32_t)(r->handle >> 32) || f->nid != nid || f->job != r->job ||
        f->rank != r->rank)
        return NULL;
    return f;
}

static void file_close(struct file *f)
{
    close(f->fd);
    f->used = false;
    nfiles--;
}

static uint32_t gen = 1;

uint32_t fs_generation(void) { return gen; }

static long file_new(int fd, uint32_t nid, const struct fio_req *r, uint64_t *handle)
{
    static uint32_t hint;
    for (uint32_t k = 0; k < MAX_FILES; k++) {
        uint32_t i = (hint + k) % MAX_FILES;
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

/* A node that starts a new job has forgotten the old one's files. */
static void drop_stale(uint32_t nid, uint32_t job)
{
    for (int i = 0; i < MAX_FILES; i++)
        if (files[i].used && files[i].nid == nid && files[i].job != job)
            file_close(&files[i]);
}

int fs_close_job(uint32_t job)
{
    int n = 0;
    for (int i = 0; i < MAX_FILES; i++)
        if (files[i].used && files[i].job == job) {
            file_close(&files[i]);
            n++;
        }
    return n;
}

int fs_reap(bool (*alive)(uint32_t nid, uint32_t job), uint32_t gen)
{
    int n = 0;
    for (int i = 0; i < MAX_FILES; i++)
        if (files[i].used && files[i].gen < gen && !alive(files[i].nid, files[i].job)) {
            file_close(&files[i]);
            n++;
        }
    return n;
}

int fs_open_files(void) { return nfiles; }

/* ---- Portals ------------------------------------------------------------------ */

static struct op *op_new(enum op_kind k)
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

static ptl_process_t node(uint32_t nid)
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
    struct op *op = op_new(OP_REPLY);
    if (!op) {
        free(rep);
        return;
    }
    op->rep = rep;
    size_t len = offsetof(struct fio_reply, data) + rep->data_len;
    ptl_md_t mdd = {.start = rep, .length = len, .options = PTL_MD_EVENT_SEND_DISABLE,
                    .eq_handle = cfg.eq, .ct_handle = PTL_CT_NONE};
    if (PtlMDBind(cfg.ni, &mdd, &op->md) != PTL_OK) {
        free(rep);
        op->kind = OP_FREE;
        return;
    }
    if (PtlPut(op->md, 0, len, PTL_ACK_REQ, node(nid), FIO_PT_REPLY, r->id, 0, op, 0) !=
        PTL_OK) {
        PtlMDRelease(op->md);
        free(rep);
        op->kind = OP_FREE;
    }
}

static void reply_result(uint32_t nid, const struct fio_req *r, int64_t result)
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
    PtlMEAppend(cfg.ni, FIO_PT_REQ, &me, PTL_PRIORITY_LIST, b, &h);
}

/* ---- bulk transfers ----------------------------------------------------------- */

static void xfer_free(struct xfer *x)
{
    for (int i = 0; i < FS_DEPTH; i++)
        free(x->p[i].buf);
    memset(x, 0, sizeof *x);
}

static void xfer_finish(struct xfer *x)
{
    if (!x->netfail) {
        uint64_t done = x->writing ? x->wdone : x->total;
        reply_result(x->nid, &x->req, done ? (int64_t)done : x->err ? -x->err : 0);
    }
    xfer_free(x);
}

static bool issue(struct xfer *x, int s);

/* Reads the next piece into slot s and puts it to the node. */
static bool issue_read(struct xfer *x, int s)
{
    struct piece *p = &x->p[s];
    uint64_t n = x->req.len - x->next;
    if (n > FIO_PIECE)
        n = FIO_PIECE;
    if (!p->buf && !(p->buf = malloc(FIO_PIECE < x->req.len ? FIO_PIECE : x->req.len))) {
        x->err = ENOMEM;
        return false;
    }
    ssize_t k;
    if (x->getdents)
        k = syscall(SYS_getdents64, x->fd, p->buf, n);
    else if (x->req.offset >= 0)
        k = pread(x->fd, p->buf, n, x->req.offset + (off_t)x->next);
    else
        k = read(x->fd, p->buf, n);
    if (k < 0) {
        x->err = errno;
        return false;
    }
    if (k == 0)
        return false;
    struct op *op = op_new(OP_PIECE);
    ptl_md_t mdd = {.start = p->buf, .length = (ptl_size_t)k,
                    .options = PTL_MD_EVENT_SEND_DISABLE, .eq_handle = cfg.eq,
                    .ct_handle = PTL_CT_NONE};
    if (!op || PtlMDBind(cfg.ni, &mdd, &op->md) != PTL_OK) {
        logmsg("no operation for a transfer (%s)", op ? "MD" : "ops");
        if (op)
            op->kind = OP_FREE;
        x->err = ENOMEM;
        return false;
    }
    op->x = x;
    op->slot = s;
    if (PtlPut(op->md, 0, (ptl_size_t)k, PTL_ACK_REQ, node(x->nid), FIO_PT_BULK, x->req.id,
               x->next, op, 0) != PTL_OK) {
        PtlMDRelease(op->md);
        op->kind = OP_FREE;
        x->err = EIO;
        return false;
    }
    p->busy = true;
    p->off = x->next;
    p->n = (uint64_t)k;
    x->next += (uint64_t)k;
    x->inflight++;
    /* A short read is the end of the file (or one directory batch). */
    return (uint64_t)k == n && !x->getdents;
}

/* Gets the next piece of what the program writes into slot s. */
static bool issue_write(struct xfer *x, int s)
{
    struct piece *p = &x->p[s];
    uint64_t n = x->req.len - x->next;
    if (n > FIO_PIECE)
        n = FIO_PIECE;
    if (!p->buf && !(p->buf = malloc(FIO_PIECE < x->req.len ? FIO_PIECE : x->req.len))) {
        x->err = ENOMEM;
        return false;
    }
    struct op *op = op_new(OP_PIECE);
    ptl_md_t mdd = {.start = p->buf, .length = n, .options = 0, .eq_handle = cfg.eq,
                    .ct_handle = PTL_CT_NONE};
    if (!op || PtlMDBind(cfg.ni, &mdd, &op->md) != PTL_OK) {
        if (op)
            op->kind = OP_FREE;
        x->err = ENOMEM;
        return false;
    }
    op->x = x;
    op->slot = s;
    if (PtlGet(op->md, 0, n, node(x->nid), FIO_PT_BULK, x->req.id, x->next, op) != PTL_OK) {
        PtlMDRelease(op->md);
        op->kind = OP_FREE;
        x->err = EIO;
        return false;
    }
    p->busy = true;
    p->ready = false;
    p->off = x->next;
    p->n = n;
    x->next += n;
    x->inflight++;
    return true;
}

static bool issue(struct xfer *x, int s)
{
    if (x->stop || x->next >= x->req.len) {
        x->stop = true;
        return false;
    }
    bool more = x->writing ? issue_write(x, s) : issue_read(x, s);
    if (!more)
        x->stop = true;
    return more;
}

/* Writes the pieces that have arrived, in file order. */
static void write_ready(struct xfer *x)
{
    for (;;) {
        struct piece *p = NULL;
        for (int i = 0; i < FS_DEPTH; i++)
            if (x->p[i].busy && x->p[i].ready && x->p[i].off == x->wdone)
                p = &x->p[i];
        if (!p)
            return;
        p->busy = false;
        if (x->err || x->netfail)
            continue;
        uint64_t left = p->n;
        const char *b = p->buf;
        while (left) {
            ssize_t k = x->req.offset >= 0
                            ? pwrite(x->fd, b, left, x->req.offset + (off_t)x->wdone)
                            : write(x->fd, b, left);
            if (k <= 0) {
                x->err = k < 0 ? errno : ENOSPC;
                x->stop = true;
                break;
            }
            x->wdone += (uint64_t)k;
            b += k;
            left -= (uint64_t)k;
        }
        if (left)
            return;     /* the rest stays unwritten: the reply says how much was */
        if (!x->stop)
            issue(x, (int)(p - x->p));
    }
}

static void on_piece(struct op *op, const ptl_event_t *ev)
{
    struct xfer *x = op->x;
    int s = op->slot;
    PtlMDRelease(op->md);
    op->kind = OP_FREE;
    x->inflight--;
    if (ev->ni_fail_type != PTL_NI_OK) {
        /* The node is gone or dropped the job: nobody waits for a reply. */
        if (!x->netfail)
            logmsg("nid %u (job %u rank %u) did not take part of a transfer (Portals "
                   "failure %d): dropped", x->nid, x->req.job, x->req.rank, (int)ev->ni_fail_type);
        x->netfail = true;
        x->stop = true;
        x->p[s].busy = false;
    } else if (x->writing) {
        x->p[s].ready = true;
        if (ev->mlength != x->p[s].n) {
            x->netfail = true;
            x->stop = true;
        }
        write_ready(x);
    } else {
        x->p[s].busy = false;
        x->total += x->p[s].n;
        issue(x, s);
    }
    if (x->inflight == 0) {
        if (x->writing && x->wdone < x->next && !x->err && !x->netfail)
            write_ready(x);
        if (x->inflight == 0)
            xfer_finish(x);
    }
}

static void start_xfer(uint32_t nid, const struct fio_req *r, struct file *f, bool writing,
                       bool getdents)
{
    if (r->len == 0) {
        reply_result(nid, r, 0);
        return;
    }
    struct xfer *x = NULL;
    for (int i = 0; i < MAX_XFERS && !x; i++)
        if (!xfers[i].used)
            x = &xfers[i];
    if (!x) {
        reply_result(nid, r, -EAGAIN);
        return;
    }
    memset(x, 0, sizeof *x);
    x->used = true;
    x->writing = writing;
    x->getdents = getdents;
    x->req = *r;
    x->nid = nid;
    x->fd = f->fd;
    if (getdents && x->req.len > 65536)
        x->req.len = 65536;    /* one batch per call, as the kernel does */
    for (int s = 0; s < FS_DEPTH; s++)
        if (!issue(x, s))
            break;
    if (x->inflight == 0)
        xfer_finish(x);
}

/* ---- requests ----------------------------------------------------------------- */

#define OPEN_FLAGS_OK (O_ACCMODE | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_APPEND | \
                       O_NONBLOCK | O_DSYNC | O_SYNC | O_DIRECTORY | O_NOFOLLOW | 0100000 /* O_LARGEFILE */ | \
                       O_CLOEXEC | O_NOATIME | O_DIRECT)

static void handle_request(const struct fio_req *r, uint64_t len, uint32_t nid)
{
    if (len < sizeof *r || r->magic != FIO_MAGIC || r->version != FIO_VERSION)
        return;
    if ((uint64_t)sizeof *r + r->path_len + r->path2_len != len ||
        r->path_len > FIO_PATH_MAX || r->path2_len > FIO_PATH_MAX)
        return reply_result(nid, r, -EINVAL);
    const char *path = (const char *)(r + 1), *path2 = path + r->path_len;
    if ((r->path_len && path[r->path_len - 1]) || (r->path2_len && path2[r->path2_len - 1]) ||
        (r->path_len && strlen(path) + 1 != r->path_len) ||
        (r->path2_len && strlen(path2) + 1 != r->path2_len))
        return reply_result(nid, r, -EINVAL);
    if (cfg.allow && !cfg.allow(nid, r->job, r->rank))
        return reply_result(nid, r, -EACCES);
    if (r->op == FIO_CLOSE_ALL) {
        int n = 0;
        for (int i = 0; i < MAX_FILES; i++)
            if (files[i].used && files[i].nid == nid && files[i].job == r->job &&
                files[i].rank == r->rank) {
                file_close(&files[i]);
                n++;
            }
        return;     /* no reply: the node is ending its job and does not wait */
    }
    int rc = become(r->uid, r->gid);
    if (rc)
        return reply_result(nid, r, rc);
    bool needs_path = r->op == FIO_OPEN || (r->op >= FIO_STAT && r->op <= FIO_RENAME) ||
                      r->op == FIO_TRUNCATE || r->op == FIO_READLINK || r->op == FIO_CHDIR;
    if (needs_path && !r->path_len)
        return reply_result(nid, r, -EINVAL);
    struct file *f = NULL;
    if (!needs_path) {
        f = file_of(r, nid);
        if (!f)
            return reply_result(nid, r, -EBADF);
    }
    struct fio_reply *rep = calloc(1, sizeof *rep);
    if (!rep)
        return;
    char name[256];
    int fd, pfd, pfd2;
    struct stat st;
    long res = 0;
    switch (r->op) {
    case FIO_OPEN:
        if (r->flags & ~(uint32_t)OPEN_FLAGS_OK) {
            res = (r->flags & __O_TMPFILE) == __O_TMPFILE ? -EOPNOTSUPP : -EINVAL;
            break;
        }
        drop_stale(nid, r->job);
        fd = open_path(path, (int)r->flags, r->mode);
        if (fd < 0) {
            res = fd;
            break;
        }
        if (fstat(fd, &st)) {
            res = -errno;
            close(fd);
            break;
        }
        rep->is_dir = S_ISDIR(st.st_mode);
        res = file_new(fd, nid, r, &rep->handle);
        break;
    case FIO_CLOSE:
        file_close(f);
        break;
    case FIO_READ:
    case FIO_WRITE:
    case FIO_GETDENTS:
        free(rep);
        return start_xfer(nid, r, f, r->op == FIO_WRITE, r->op == FIO_GETDENTS);
    case FIO_LSEEK: {
        off_t o = lseek(f->fd, (off_t)r->offset, (int)r->flags);
        res = o < 0 ? -errno : (long)o;
        break;
    }
    case FIO_FSTAT:
        if (fstat(f->fd, &st))
            res = -errno;
        else
            to_fio_stat(&st, &rep->st);
        break;
    case FIO_STAT:
    case FIO_CHDIR:
    case FIO_ACCESS:
    case FIO_TRUNCATE:
        fd = open_path(path, r->op == FIO_TRUNCATE ? O_WRONLY :
                             r->op == FIO_CHDIR ? O_PATH | O_DIRECTORY : O_PATH, 0);
        if (fd < 0) {
            res = fd;
            break;
        }
        if (r->op == FIO_STAT && fstat(fd, &st) == 0)
            to_fio_stat(&st, &rep->st);
        else if (r->op == FIO_STAT)
            res = -errno;
        else if (r->op == FIO_TRUNCATE)
            res = ftruncate(fd, (off_t)r->len) ? -errno : 0;
        else
            res = faccessat(fd, "", r->op == FIO_CHDIR ? X_OK : (int)(r->mode & 7),
                            AT_EMPTY_PATH | AT_EACCESS) ? -errno : 0;
        close(fd);
        break;
    case FIO_LSTAT:
    case FIO_UNLINK:
    case FIO_RMDIR:
    case FIO_MKDIR:
    case FIO_READLINK:
        pfd = open_parent(path, name, sizeof name);
        if (pfd == -EBUSY && r->op == FIO_LSTAT) {          /* the root itself */
            res = fstat(rootfd, &st) ? -errno : 0;
            if (!res)
                to_fio_stat(&st, &rep->st);
            break;
        }
        if (pfd == -EBUSY && r->op == FIO_READLINK) {
            res = -EINVAL;
            break;
        }
        if (pfd == -EBUSY && r->op == FIO_MKDIR) {
            res = -EEXIST;
            break;
        }
        if (pfd < 0) {
            res = pfd;
            break;
        }
        if (r->op == FIO_LSTAT) {
            res = fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) ? -errno : 0;
            if (!res)
                to_fio_stat(&st, &rep->st);
        } else if (r->op == FIO_UNLINK) {
            res = unlinkat(pfd, name, 0) ? -errno : 0;
        } else if (r->op == FIO_RMDIR) {
            res = unlinkat(pfd, name, AT_REMOVEDIR) ? -errno : 0;
        } else if (r->op == FIO_MKDIR) {
            res = mkdirat(pfd, name, r->mode & 07777) ? -errno : 0;
        } else {
            ssize_t k = readlinkat(pfd, name, rep->data, FIO_INLINE_MAX);
            res = k < 0 ? -errno : k;
            rep->data_len = k < 0 ? 0 : (uint32_t)k;
        }
        close(pfd);
        break;
    case FIO_RENAME: {
        char name2[256];
        if (!r->path2_len) {
            res = -EINVAL;
            break;
        }
        pfd = open_parent(path, name, sizeof name);
        if (pfd < 0) {
            res = pfd;
            break;
        }
        pfd2 = open_parent(path2, name2, sizeof name2);
        if (pfd2 < 0) {
            res = pfd2;
            close(pfd);
            break;
        }
        res = renameat(pfd, name, pfd2, name2) ? -errno : 0;
        close(pfd);
        close(pfd2);
        break;
    }
    case FIO_FTRUNCATE:
        res = ftruncate(f->fd, (off_t)r->len) ? -errno : 0;
        break;
    case FIO_FSYNC:
        res = fsync(f->fd) ? -errno : 0;
        break;
    case FIO_FDATASYNC:
        res = fdatasync(f->fd) ? -errno : 0;
        break;
    case FIO_SETFL: {
        int fl = fcntl(f->fd, F_GETFL);
        fl = (fl & ~(O_APPEND | O_NONBLOCK)) | (int)(r->flags & (O_APPEND | O_NONBLOCK));
        res = fcntl(f->fd, F_SETFL, fl) ? -errno : 0;
        break;
    }
    default:
        res = -ENOSYS;
        break;
    }
    rep->result = res;
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
        PtlPTEnable(cfg.ni, FIO_PT_REQ);
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
            on_piece(op, ev);
        }
        return true;
    }
    default:
        return false;
    }
}

int fs_init(const struct fs_config *c, char *err, int errlen)
{
    cfg = *c;
    rootfd = open(cfg.root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0) {
        snprintf(err, (size_t)errlen, "%s: %s", cfg.root, strerror(errno));
        return -1;
    }
    resolve_flags = cfg.confine ? RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS : 0;
    /* The kernel has applied the job's umask to every mode already. */
    umask(0);
    ptl_pt_index_t got;
    int rc = PtlPTAlloc(cfg.ni, 0, cfg.eq, FIO_PT_REQ, &got);
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
    if (PtlMEAppend(cfg.ni, FIO_PT_REQ, &me, PTL_PRIORITY_LIST, NULL, &h) != PTL_OK) {
        snprintf(err, (size_t)errlen, "cannot post the ping entry");
        return -1;
    }
    return 0;
}
