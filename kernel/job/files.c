/* Forwarded file I/O, the client: a job's mount table and working directory
 * (from yod's descriptor), routing of paths to servers, and one request at
 * a time to a server over the kernel's own NI.  Bulk data never passes
 * through the kernel: the node posts an entry over the program's buffer and
 * the server Gets from it (write) or Puts into it (read), in as few Portals
 * operations as the server's pieces allow.  A server that stops answering
 * (its pings are not acknowledged: Portals gives up after ~5 s) fails the
 * call with EIO and every later call to it at once. */
#include "errno.h"
#include "files.h"
#include <tern/path.h>
#include "job.h"
#include "kmalloc.h"
#include "process.h"
#include "ranks.h"
#include "time.h"
#include <tern/yod_proto.h>
#include "ptl_me.h"

#define MAX_SERVERS (YOD_MOUNTS_MAX + 1)
#define REQ_DEADLINE_NS (30 * 1000000000ULL)
#define END_DEADLINE_NS (2 * 1000000000ULL)

struct server {
    uint32_t nid, pid;
    bool dead, used;
};
static struct server servers[MAX_SERVERS];   /* [0]: yod */
static int nservers;

static struct mount {
    char prefix[YOD_PREFIX_MAX];
    uint32_t len;
    int srv;
} mounts[YOD_MOUNTS_MAX];
static int nmounts;

/* The working directory is the calling process's (process.h: each rank its
 * own). */
_Static_assert(sizeof(((struct process *)0)->cwd) == FILES_PATH_MAX,
               "process.h's cwd holds a path");
uint32_t files_umask = 022;
static uint32_t seq;

/* The exchange under way (one at a time: the program is one thread). */
static ptl_handle_me_t bulk_me, reply_me;
static bool bulk_linked, reply_linked;
static struct kop *reply_op;

static int server_index(uint32_t nid, uint32_t pid)
{
    for (int i = 0; i < nservers; i++)
        if (servers[i].nid == nid && servers[i].pid == pid)
            return i;
    servers[nservers] = (struct server){nid, pid, false, false};
    return nservers++;
}

static bool normalised_prefix(const char *p)
{
    size_t n = strnlen(p, YOD_PREFIX_MAX);
    if (n == YOD_PREFIX_MAX || n < 2 || p[0] != '/' || p[n - 1] == '/')
        return false;
    for (const char *c = p; *c; c++)
        if (c[0] == '/' && (c[1] == '/' || (c[1] == '.' && (c[2] == '/' || c[2] == 0 ||
                                                          (c[2] == '.' && (c[3] == '/' || c[3] == 0))))))
            return false;
    return true;
}

const char *files_job_setup(const void *sec, uint64_t len, uint32_t rank, uint32_t yod_nid,
                            uint32_t yod_pid)
{
    memset(servers, 0, sizeof servers);
    memset(mounts, 0, sizeof mounts);
    nservers = 0;
    nmounts = 0;
    servers[nservers++] = (struct server){yod_nid, yod_pid, false, false};
    strlcpy(proc.cwd, "/", sizeof proc.cwd);
    files_umask = 022;
    seq = 0;
    if (len == 0)
        return NULL;                 /* no file section: yod serves everything from / */
    struct yod_files h;
    if (len < sizeof h)
        return "file section too short";
    memcpy(&h, sec, sizeof h);
    if (h.magic != YOD_FILES_MAGIC)
        return "file section malformed";
    if (h.version != YOD_FILES_VERSION)
        return "file section of another version";
    if (h.len != len || h.nmounts > YOD_MOUNTS_MAX || h.cwd_len == 0 ||
        h.cwd_len > FILES_PATH_MAX ||
        (uint64_t)sizeof h + (uint64_t)h.nmounts * sizeof(struct yod_mount) + h.cwd_len != len)
        return "file section length does not add up";
    const char *p = (const char *)sec + sizeof h;
    /* Every prefix's fyods, in table order: this rank uses number rank % count. */
    for (uint32_t i = 0; i < h.nmounts; i++) {
        struct yod_mount m;
        memcpy(&m, p + i * sizeof m, sizeof m);
        if (!normalised_prefix(m.prefix))
            return "file section: bad mount prefix";
        int k;
        for (k = 0; k < nmounts && strcmp(mounts[k].prefix, m.prefix); k++)
            ;
        if (k == nmounts) {
            strlcpy(mounts[k].prefix, m.prefix, sizeof mounts[k].prefix);
            mounts[k].len = (uint32_t)strlen(m.prefix);
            mounts[k].srv = -1;
            nmounts++;
        }
    }
    for (int k = 0; k < nmounts; k++) {
        uint32_t count = 0, pick;
        for (uint32_t i = 0; i < h.nmounts; i++) {
            struct yod_mount m;
            memcpy(&m, p + i * sizeof m, sizeof m);
            count += !strcmp(m.prefix, mounts[k].prefix);
        }
        pick = rank % count;
        for (uint32_t i = 0, seen = 0; i < h.nmounts; i++) {
            struct yod_mount m;
            memcpy(&m, p + i * sizeof m, sizeof m);
            if (strcmp(m.prefix, mounts[k].prefix))
                continue;
            if (seen++ == pick)
                mounts[k].srv = server_index(m.nid, m.pid);
        }
    }
    const char *c = p + h.nmounts * sizeof(struct yod_mount);
    if (c[h.cwd_len - 1] != 0 || strlen(c) + 1 != h.cwd_len || c[0] != '/')
        return "file section: bad working directory";
    if (files_normalise("/", c, proc.cwd))
        return "file section: working directory too long";
    files_umask = h.umask & 0777;
    return NULL;
}

const char *files_cwd(void) { return proc.cwd[0] ? proc.cwd : "/"; }
void files_set_cwd(const char *abs) { strlcpy(proc.cwd, abs, sizeof proc.cwd); }

/* /proc/self/exe: made once, at load, from the program's path as yod was
 * given it and the job's first working directory (a chdir later does not
 * move it, as on Linux). */
static char exe_path[FILES_PATH_MAX];
void files_set_exe(const char *path)
{
    if (files_normalise(files_cwd(), path, exe_path))
        exe_path[0] = 0;
}
const char *files_exe(void) { return exe_path; }

long files_normalise(const char *base, const char *path, char *out)
{
    /* out is built component by component; ".." drops the last one. */
    size_t n = 0;
    out[0] = 0;
    for (int part = path[0] == '/' ? 1 : 0; part < 2; part++) {
        const char *rest = part == 0 ? base : path, *s;
        size_t l;
        while ((s = path_component(&rest, &l))) {
            if (l == 1 && s[0] == '.') {
                /* nothing */
            } else if (l == 2 && s[0] == '.' && s[1] == '.') {
                while (n > 0 && out[n - 1] != '/')
                    n--;
                if (n > 0)
                    n--;
                out[n] = 0;
            } else {
                if (n + 1 + l + 1 > FILES_PATH_MAX)
                    return -ENAMETOOLONG;
                out[n++] = '/';
                memcpy(out + n, s, l);
                n += l;
                out[n] = 0;
            }
        }
    }
    if (n == 0) {
        out[0] = '/';
        out[1] = 0;
    }
    return 0;
}

int files_route(const char *abs, const char **spath)
{
    /* What the node says of itself wins over any mount. */
    if (nodefiles_owns(abs)) {
        *spath = abs;
        return FILES_SRV_NODE;
    }
    int best = -1;
    uint32_t bestlen = 0;
    for (int k = 0; k < nmounts; k++) {
        uint32_t l = mounts[k].len;
        if (l > bestlen && !strncmp(abs, mounts[k].prefix, l) && (abs[l] == 0 || abs[l] == '/')) {
            best = k;
            bestlen = l;
        }
    }
    if (best < 0) {
        *spath = abs[1] ? abs + 1 : ".";
        return 0;
    }
    *spath = abs[bestlen] ? abs + bestlen + 1 : ".";
    return mounts[best].srv;
}

/* ---- the exchange --------------------------------------------------------- */

static _Alignas(8) char reqbuf[FIO_REQ_MAX];
static struct fio_reply replybuf;
static char zero;

static int post(ptl_pt_index_t pt, void *start, uint64_t len, unsigned op, const struct server *s,
                uint64_t bits, void *user, bool once, ptl_handle_me_t *h)
{
    unsigned events = once ? PTL_ME_USE_ONCE
                           : PTL_ME_EVENT_COMM_DISABLE | PTL_ME_EVENT_SUCCESS_DISABLE;
    ptl_me_t me = ptl_me_phys(start, len,
                              op | PTL_ME_EVENT_LINK_DISABLE | PTL_ME_EVENT_UNLINK_DISABLE | events,
                              bits);
    me.match_id.phys.nid = s->nid;
    me.match_id.phys.pid = s->pid;
    return PtlMEAppend(knode.ni, pt, &me, PTL_PRIORITY_LIST, user, h);
}

/* Takes down what the exchange had posted.  An entry still in use (the
 * server was in the middle of a transfer when it died) is tried again at
 * the job's end. */
static void unpost(void)
{
    /* The entry is busy until the acknowledgement of the server's last
     * operation on it has itself been acknowledged: a moment. */
    uint64_t until = time_monotonic_ns() + 2 * 1000000000ULL;
    while (bulk_linked) {
        int rc = PtlMEUnlink(bulk_me);
        if (rc == PTL_OK)
            bulk_linked = false;
        else if (rc != PTL_IN_USE || time_monotonic_ns() >= until)
            break;
        else
            knode_wait(NULL, time_monotonic_ns() + 1000000ULL);
    }
    if (reply_linked) {
        if (reply_op->done || PtlMEUnlink(reply_me) == PTL_OK)
            kfree(reply_op);      /* else the entry keeps it: left to the library */
        reply_linked = false;
        reply_op = NULL;
    }
}

/* A zero-byte put the server acknowledges: true while it answers. */
static struct probe {
    struct kop op;
    ptl_handle_md_t md;
    bool busy;
} pr;                             /* static: its event may come after a job's end */

static uint64_t pr_started;

static bool probe_start(struct probe *p, const struct server *s)
{
    pr_started = time_monotonic_ns();
    ptl_md_t mdd = {.start = &zero, .length = 0, .options = PTL_MD_EVENT_SEND_DISABLE,
                    .eq_handle = knode.eq, .ct_handle = PTL_CT_NONE};
    if (PtlMDBind(knode.ni, &mdd, &p->md) != PTL_OK)
        return false;
    memset(&p->op, 0, sizeof p->op);
    ptl_process_t to;
    to.phys.nid = s->nid;
    to.phys.pid = s->pid;
    if (PtlPut(p->md, 0, 0, PTL_ACK_REQ, to, FIO_PT_REQ, FIO_MB_PING, 0, &p->op, 0) != PTL_OK) {
        PtlMDRelease(p->md);
        return false;
    }
    p->busy = true;
    return true;
}

/* The request and its paths, in reqbuf: its length, or -ENAMETOOLONG. */
static long build_request(struct fio_req *req, const char *path, const char *path2)
{
    uint32_t pl = path ? (uint32_t)strlen(path) + 1 : 0, pl2 = path2 ? (uint32_t)strlen(path2) + 1 : 0;
    if (pl > FIO_PATH_MAX || pl2 > FIO_PATH_MAX)
        return -ENAMETOOLONG;
    req->magic = FIO_MAGIC;
    req->version = FIO_VERSION;
    req->id = (uint64_t)job.id << 32 | ++seq;
    req->job = job.id;
    req->rank = job.rank;
    req->uid = job.uid;
    req->gid = job.gid;
    memcpy(req->auth, job.fio_token, sizeof req->auth);
    req->path_len = pl;
    req->path2_len = pl2;
    memcpy(reqbuf, req, sizeof *req);
    if (pl)
        memcpy(reqbuf + sizeof *req, path, pl);
    if (pl2)
        memcpy(reqbuf + sizeof *req + pl, path2, pl2);
    return (long)(sizeof *req + pl + pl2);
}

/* The entries the server answers into: the reply's and, for a transfer,
 * one over the program's buffer.  0, or -ENOMEM. */
static long post_entries(const struct server *s, const struct fio_req *req, uint64_t ubuf,
                         bool into)
{
    reply_op = kmalloc(sizeof *reply_op);
    if (!reply_op)
        return -ENOMEM;
    memset(reply_op, 0, sizeof *reply_op);
    int prc;
    if ((prc = post(FIO_PT_REPLY, &replybuf, sizeof replybuf, PTL_ME_OP_PUT, s, req->id, reply_op,
                    true, &reply_me)) != PTL_OK) {
        kprintf("job %u: cannot post a reply entry (%d)\n", job.id, prc);
        kfree(reply_op);
        reply_op = NULL;
        return -ENOMEM;
    }
    reply_linked = true;
    if (ubuf && req->len) {
        if ((prc = post(FIO_PT_BULK, (void *)ubuf, req->len, into ? PTL_ME_OP_PUT : PTL_ME_OP_GET,
                        s, req->id, NULL, false, &bulk_me)) != PTL_OK) {
            kprintf("job %u: cannot post a transfer entry (%d)\n", job.id, prc);
            unpost();
            return -ENOMEM;
        }
        bulk_linked = true;
    }
    return 0;
}

/* A server that stops answering fails this call and every later one. */
static long server_dead(struct server *s, const char *how)
{
    if (how)
        kprintf("job %u: file server nid %u pid %u %s: its files fail (EIO)\n", job.id, s->nid,
                s->pid, how);
    s->dead = true;
    unpost();
    return -EIO;
}

/* The request: a server whose buffers are full for a moment refuses it
 * (dropped); it is sent again.  0, or -EIO. */
static long send_request(struct server *s, uint64_t len)
{
    uint64_t deadline = time_monotonic_ns() + REQ_DEADLINE_NS, delay = 1000000ULL;
    for (;;) {
        int rc = knode_put(reqbuf, len, s->nid, s->pid, FIO_PT_REQ, FIO_MB_REQ, deadline);
        if (rc == PTL_NI_OK)
            return 0;
        if (rc == PTL_NI_UNDELIVERABLE || rc == -1 || time_monotonic_ns() >= deadline)
            return server_dead(s, "does not answer");
        knode_pause(delay);
        if (delay < 100000000ULL)
            delay *= 2;
    }
}

/* The reply, as long as the server keeps answering pings.  0, or -EIO. */
static long await_reply(struct server *s)
{
    if (pr.busy && pr.op.done) {
        PtlMDRelease(pr.md);
        pr.busy = false;
    }
    uint64_t next_probe = time_monotonic_ns() + FIO_PING_S * 1000000000ULL;
    while (!reply_op->done) {
        knode_wait(reply_op, next_probe);
        if (reply_op->done)
            break;
        if (pr.busy && pr.op.done) {
            pr.busy = false;
            PtlMDRelease(pr.md);
            if (pr.op.fail == PTL_NI_UNDELIVERABLE)
                return server_dead(s, "stopped answering");
        }
        if (!pr.busy)
            probe_start(&pr, s);
        else if (!pr.op.done && time_monotonic_ns() > pr_started + 20 * 1000000000ULL)
            return server_dead(s, NULL);    /* Portals ends every operation by ~20 s */
        next_probe = time_monotonic_ns() + (pr.busy ? 100000000ULL : FIO_PING_S * 1000000000ULL);
    }
    if (pr.busy) {
        /* Its event is still to come and would write pr: wait for it (the
         * server has just answered, so it is quick). */
        knode_wait(&pr.op, time_monotonic_ns() + 10 * 1000000000ULL);
        if (pr.op.done) {
            PtlMDRelease(pr.md);
            pr.busy = false;
        }
    }
    return 0;
}

/* The server's answer, checked: its result, or -EIO. */
static long take_reply(const struct fio_req *req, struct fio_reply *rep)
{
    uint64_t got = reply_op->mlength;
    reply_linked = false;         /* use-once: gone with its put */
    kfree(reply_op);
    reply_op = NULL;
    unpost();
    if (got < offsetof(struct fio_reply, data) || replybuf.magic != FIO_MAGIC ||
        replybuf.id != req->id || replybuf.data_len > FIO_INLINE_MAX ||
        got < offsetof(struct fio_reply, data) + replybuf.data_len)
        return -EIO;
    if (rep)
        memcpy(rep, &replybuf, got);
    return replybuf.result;
}

long fio_call(int srv, struct fio_req *req, const char *path, const char *path2, uint64_t ubuf,
              bool into, struct fio_reply *rep)
{
    if (srv == FILES_SRV_NODE)
        return nodefiles_call(req, path, ubuf, rep);
    if (srv < 0 || srv >= nservers)
        return -EIO;
    struct server *s = &servers[srv];
    if (s->dead)
        return -EIO;
    if (bulk_linked)
        unpost();       /* what a failed exchange left */
    if (bulk_linked) {
        kprintf("job %u: an old transfer entry is still busy\n", job.id);
        return -EAGAIN;
    }
    if (ubuf && req->len && ranks_active()) {
        /* Ranks per core: the library reaches the buffer from any core, so
         * by the kernel's address, as far as it is contiguous (a shorter
         * read or write, as Linux may give). */
        void *kbuf;
        req->len = user_run_kva(ubuf, req->len, &kbuf);
        ubuf = (uint64_t)kbuf;
    }
    long len = build_request(req, path, path2);
    if (len < 0)
        return len;
    s->used = true;
    long rc = post_entries(s, req, ubuf, into);
    if (!rc)
        rc = send_request(s, (uint64_t)len);
    if (!rc)
        rc = await_reply(s);
    return rc ? rc : take_reply(req, rep);
}

void fio_release(struct ofile *of)
{
    if (job.running && !job.ending) {
        struct fio_req r;
        memset(&r, 0, sizeof r);
        r.op = FIO_CLOSE;
        r.handle = of->handle;
        fio_call(of->srv, &r, NULL, NULL, 0, false, NULL);
    }
    kfree(of->path);
    kfree(of);
}

void files_sync_all(void)
{
    for (int i = 0; i < nservers; i++) {
        if (!servers[i].used || servers[i].dead)
            continue;
        struct fio_req r;
        memset(&r, 0, sizeof r);
        r.op = FIO_SYNC;
        fio_call(i, &r, ".", NULL, 0, false, NULL);
    }
}

void files_job_end(void)
{
    static struct fio_req r;
    for (int i = 0; i < nservers; i++) {
        struct server *s = &servers[i];
        if (!s->used || s->dead)
            continue;
        memset(&r, 0, sizeof r);
        r.magic = FIO_MAGIC;
        r.version = FIO_VERSION;
        r.op = FIO_CLOSE_ALL;
        r.id = (uint64_t)job.id << 32 | ++seq;
        r.job = job.id;
        r.rank = job.rank;
        r.uid = job.uid;
        r.gid = job.gid;
        memcpy(r.auth, job.fio_token, sizeof r.auth);
        if (knode_put(&r, sizeof r, s->nid, s->pid, FIO_PT_REQ, FIO_MB_REQ,
                      time_monotonic_ns() + END_DEADLINE_NS) != PTL_NI_OK)
            kprintf("job %u: file server nid %u pid %u did not take the end of the job\n",
                    job.id, s->nid, s->pid);
    }
}

void files_reset(void)
{
    exe_path[0] = 0;
    /* Nothing of the job's may stay posted over memory the next job gets. */
    uint64_t until = time_monotonic_ns() + 10 * 1000000000ULL;
    while (bulk_linked && PtlMEUnlink(bulk_me) != PTL_OK && time_monotonic_ns() < until)
        knode_wait(NULL, time_monotonic_ns() + 100000000ULL);
    if (bulk_linked && PtlMEUnlink(bulk_me) != PTL_OK)
        kprintf("files: an entry over the old program's memory could not be removed\n");
    bulk_linked = false;
    if (reply_linked && reply_op && PtlMEUnlink(reply_me) == PTL_OK)
        kfree(reply_op);
    reply_linked = false;
    reply_op = NULL;
    fd_reset();
    nodefiles_reset();
    memset(servers, 0, sizeof servers);
    memset(mounts, 0, sizeof mounts);
    nservers = nmounts = 0;
    strlcpy(proc.cwd, "/", sizeof proc.cwd);
    files_umask = 022;
}
