/* libFuzzer harness: the file server's request handling (common/
 * fileserver.c, fs_ops.c, fs_xfer.c), which fyod runs and yod runs for the
 * paths outside the fyod prefixes.  The server runs as fyod does, on the
 * in-process test wire (interface 0), confined to a scratch directory
 * holding a file, a directory and symbolic links out of it; a node kernel
 * (interface 1, pid YOD_NODE_PID) has its reply and bulk buffers posted, so
 * replies and reads/writes run to the end.
 *
 * Input: a sequence of requests  [len:2, little-endian] [len bytes], each
 * handed to fs_event as the put event of a node's request.  A handle of
 * ~0 stands for the handle the last successful FIO_OPEN of this input
 * returned (the server's handles carry a generation no input can know).
 * After each input every file is closed and the scratch directory's
 * fixtures are made again. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "tp.h"
#include "fuzz_wire.h"
#include "ptl_me.h"
#include "../../common/fs_internal.h"
#include <tern/yod_proto.h>

#define BULK_LEN 65536
#define REPLY_BUF (1u << 20)

static struct node S, N;
static char root[4096];
static uint8_t *bulk, *replies;
static uint64_t last_handle = ~0ull;

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

static void rm_root(void) { nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS); }

static void fixtures(void)
{
    fs_become(getuid(), getgid());
    char p[4200];
    snprintf(p, sizeof p, "%s/f", root);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        if (write(fd, "hello, file server\n", 19) != 19)
            abort();
        close(fd);
    }
    snprintf(p, sizeof p, "%s/d", root);
    mkdir(p, 0755);
    chmod(p, 0755);
    snprintf(p, sizeof p, "%s/d/g", root);
    fd = open(p, O_WRONLY | O_CREAT, 0644);
    if (fd >= 0)
        close(fd);
    snprintf(p, sizeof p, "%s/l", root);
    if (symlink("../../../../etc/passwd", p) && errno != EEXIST)
        abort();
    /* An absolute link to a directory: paths through it are handed back
     * to the node (FIO_FOLLOW_LINK) after a walk of their components. */
    snprintf(p, sizeof p, "%s/d/al", root);
    if (symlink("/etc", p) && errno != EEXIST)
        abort();
}

static void me_any(struct node *n, ptl_pt_index_t pt, void *buf, size_t len, unsigned opts)
{
    ptl_me_t me = ptl_me_phys(buf, len, opts, 0);
    me.ignore_bits = ~0ull;
    ptl_handle_me_t h;
    OK(PtlMEAppend(n->ni, pt, &me, PTL_PRIORITY_LIST, NULL, &h));
}

static void fuzz_setup(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(root, sizeof root, "%s/tern-fuzz-fs-XXXXXX", tmp ? tmp : "/tmp");
    if (!mkdtemp(root))
        abort();
    chmod(root, 0755);
    atexit(rm_root);
    fixtures();

    ptl_test_host_init(2, 1500);
    OK(PtlInit());
    tp_node(&S, 0, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    memset(&N, 0, sizeof N);
    N.iface = 1;
    OK(PtlNIInit(1, PTL_NI_MATCHING | PTL_NI_PHYSICAL, YOD_NODE_PID, NULL, &N.lim, &N.ni));
    OK(PtlEQAlloc(N.ni, 1024, &N.eq));
    OK(PtlGetPhysId(N.ni, &N.id));
    ptl_pt_index_t got;
    OK(PtlPTAlloc(N.ni, 0, N.eq, FIO_PT_REPLY, &got));
    OK(PtlPTAlloc(N.ni, 0, N.eq, FIO_PT_BULK, &got));
    bulk = calloc(1, BULK_LEN);
    replies = calloc(1, REPLY_BUF);
    CHECK(bulk && replies);
    memset(bulk, 'w', BULK_LEN);
    me_any(&N, FIO_PT_BULK, bulk, BULK_LEN, PTL_ME_OP_PUT | PTL_ME_OP_GET);
    /* Replies land one after another; the buffer is re-posted per input. */
    me_any(&N, FIO_PT_REPLY, replies, REPLY_BUF, PTL_ME_OP_PUT | PTL_ME_MANAGE_LOCAL);

    struct fs_config cfg = {.root = root, .confine = true, .ni = S.ni, .eq = S.eq,
                            .name = "fuzz"};
    char err[256];
    if (fs_init(&cfg, err, sizeof err)) {
        fprintf(stderr, "fs_init: %s\n", err);
        abort();
    }
}

/* The server takes its events; the node notes the handle of an open. */
static bool take_events(void)
{
    ptl_event_t ev;
    bool any = false;
    while (PtlEQGet(S.eq, &ev) == PTL_OK) {
        fs_event(&ev);
        any = true;
    }
    while (PtlEQGet(N.eq, &ev) == PTL_OK) {
        any = true;
        if (ev.type == PTL_EVENT_PUT && ev.pt_index == FIO_PT_REPLY &&
            ev.mlength >= offsetof(struct fio_reply, st)) {
            struct fio_reply rep;    /* replies lie at any alignment */
            memcpy(&rep, ev.start, offsetof(struct fio_reply, st));
            if (rep.op == FIO_OPEN && rep.result >= 0)
                last_handle = rep.handle;
        }
    }
    return any;
}

static void settle(void) { fuzz_settle(take_events, "the file server"); }

static bool never_alive(uint32_t nid, uint32_t job) { (void)nid, (void)job; return false; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static _Alignas(8) uint8_t req[FIO_REQ_MAX + 64];
    struct fuzz_in in = {data, size};
    last_handle = ~0ull;
    while (in.n >= 2) {
        size_t want = (size_t)fuzz_uint(&in, 2), len;
        const uint8_t *p = fuzz_bytes(&in, want, &len);
        if (len > sizeof req)
            len = sizeof req;
        /* A copy of exactly len bytes: reading past the request is caught. */
        uint8_t *msg = malloc(len ? len : 1);
        CHECK(msg);
        memcpy(msg, p, len);
        struct fio_req *r = (struct fio_req *)msg;
        if (len >= sizeof *r && r->handle == ~0ull)
            r->handle = last_handle;
        ptl_event_t ev;
        memset(&ev, 0, sizeof ev);
        ev.type = PTL_EVENT_PUT;
        ev.pt_index = FIO_PT_REQ;
        ev.initiator.phys.nid = N.id.phys.nid;
        ev.initiator.phys.pid = YOD_NODE_PID;
        ev.match_bits = FIO_MB_REQ;
        ev.start = msg;
        ev.mlength = ev.rlength = len;
        fs_event(&ev);
        free(msg);
        settle();
    }
    fs_reap(never_alive, fs_generation());
    fixtures();
    return 0;
}

/* ---- seeds ----------------------------------------------------------------- */

static size_t request(uint8_t *out, uint16_t op, uint64_t handle, int64_t off, uint64_t len,
                      uint32_t flags, const char *path, const char *path2)
{
    struct fio_req r = {.magic = FIO_MAGIC, .version = FIO_VERSION, .op = op, .id = 7,
                        .job = 1, .rank = 0, .uid = (uint32_t)getuid(),
                        .gid = (uint32_t)getgid(), .handle = handle, .offset = off,
                        .len = len, .flags = flags, .mode = 0644};
    r.path_len = path ? (uint32_t)strlen(path) + 1 : 0;
    r.path2_len = path2 ? (uint32_t)strlen(path2) + 1 : 0;
    size_t n = sizeof r + r.path_len + r.path2_len;
    size_t k = fuzz_put(out, n, 2);
    memcpy(out + k, &r, sizeof r);
    if (path)
        memcpy(out + k + sizeof r, path, r.path_len);
    if (path2)
        memcpy(out + k + sizeof r + r.path_len, path2, r.path2_len);
    return k + n;
}

/* request()'s with a mode: a lock's type, a file's mode, a time's ns. */
static size_t mode_request(uint8_t *out, uint16_t op, uint32_t flags, uint32_t mode, int64_t off,
                           uint64_t len, const char *path)
{
    size_t n = request(out, op, ~0ull, off, len, flags, path, NULL);
    size_t at = n - (path ? strlen(path) + 1 : 0) - sizeof(struct fio_req);
    memcpy(out + at + offsetof(struct fio_req, mode), &mode, 4);
    return n;
}

static void fuzz_write_seeds(const char *dir)
{
    static uint8_t out[65536];
    size_t n;
    n = request(out, FIO_OPEN, 0, 0, 0, O_RDONLY, "f", NULL);
    n += request(out + n, FIO_READ, ~0ull, -1, 100, 0, NULL, NULL);
    n += request(out + n, FIO_FSTAT, ~0ull, 0, 0, 0, NULL, NULL);
    n += request(out + n, FIO_LSEEK, ~0ull, 3, 0, 0, NULL, NULL);
    n += request(out + n, FIO_CLOSE, ~0ull, 0, 0, 0, NULL, NULL);
    fuzz_seed(dir, "open-read", out, n);
    n = request(out, FIO_OPEN, 0, 0, 0, O_WRONLY | O_CREAT, "d/new", NULL);
    n += request(out + n, FIO_WRITE, ~0ull, 0, 5000, 0, NULL, NULL);
    n += request(out + n, FIO_FTRUNCATE, ~0ull, 0, 10, 0, NULL, NULL);
    n += request(out + n, FIO_SETFL, ~0ull, 0, 0, O_APPEND, NULL, NULL);
    n += request(out + n, FIO_FSYNC, ~0ull, 0, 0, 0, NULL, NULL);
    fuzz_seed(dir, "create-write", out, n);
    n = request(out, FIO_OPEN, 0, 0, 0, O_RDONLY | O_DIRECTORY, "d", NULL);
    n += request(out + n, FIO_GETDENTS, ~0ull, 0, 4096, 0, NULL, NULL);
    fuzz_seed(dir, "getdents", out, n);
    n = request(out, FIO_STAT, 0, 0, 0, 0, "d/g", NULL);
    n += request(out + n, FIO_LSTAT, 0, 0, 0, 0, "l", NULL);
    n += request(out + n, FIO_READLINK, 0, 0, 0, 0, "l", NULL);
    n += request(out + n, FIO_ACCESS, 0, 0, 0, 4, "f", NULL);
    n += request(out + n, FIO_CHDIR, 0, 0, 0, 0, "d", NULL);
    fuzz_seed(dir, "paths", out, n);
    n = request(out, FIO_MKDIR, 0, 0, 0, 0, "e", NULL);
    n += request(out + n, FIO_RENAME, 0, 0, 0, 0, "e", "d/e");
    n += request(out + n, FIO_RMDIR, 0, 0, 0, 0, "d/e", NULL);
    n += request(out + n, FIO_TRUNCATE, 0, 0, 3, 0, "d/g", NULL);
    n += request(out + n, FIO_UNLINK, 0, 0, 0, 0, "d/g", NULL);
    n += request(out + n, FIO_CLOSE_ALL, 0, 0, 0, 0, NULL, NULL);
    fuzz_seed(dir, "changes", out, n);
    n = request(out, FIO_OPEN, 0, 0, 0, O_RDWR, "f", NULL);
    n += mode_request(out + n, FIO_LOCK, FIO_LOCK_RECORD, F_WRLCK, 0, 100, NULL);
    n += mode_request(out + n, FIO_GETLK, FIO_LOCK_RECORD | SEEK_CUR << 8, F_RDLCK, 10, 0, NULL);
    n += mode_request(out + n, FIO_LOCK, FIO_LOCK_RECORD, F_UNLCK, 0, 0, NULL);
    n += mode_request(out + n, FIO_LOCK, FIO_LOCK_FLOCK, LOCK_EX, 0, 0, NULL);
    n += mode_request(out + n, FIO_LOCK, FIO_LOCK_FLOCK, LOCK_UN, 0, 0, NULL);
    fuzz_seed(dir, "locks", out, n);
    n = request(out, FIO_OPEN, 0, 0, 0, O_RDWR, "f", NULL);
    n += request(out + n, FIO_FALLOCATE, ~0ull, 0, 8192, 0, NULL, NULL);
    n += request(out + n, FIO_FSTATFS, ~0ull, 0, 0, 0, NULL, NULL);
    n += request(out + n, FIO_STATFS, 0, 0, 0, 0, "d", NULL);
    n += request(out + n, FIO_SYNCFS, ~0ull, 0, 0, 0, NULL, NULL);
    n += request(out + n, FIO_SYNC, 0, 0, 0, 0, ".", NULL);
    fuzz_seed(dir, "space", out, n);
    n = request(out, FIO_OPEN, 0, 0, 0, O_RDWR, "f", NULL);
    n += mode_request(out + n, FIO_FCHMOD, 0, 0640, 0, 0, NULL);
    n += mode_request(out + n, FIO_CHMOD, FIO_NOFOLLOW, 0600, 0, 0, "f");
    n += request(out + n, FIO_CHOWN, 0, -1, ~0u, 0, "f", NULL);
    n += request(out + n, FIO_FCHOWN, ~0ull, 0, 0, 0, NULL, NULL);
    n += mode_request(out + n, FIO_UTIMENS, 999999999, 5, 1000000000, 0, "d");
    n += mode_request(out + n, FIO_FUTIMENS, (1u << 30) - 2, (1u << 30) - 1, 0, 0, NULL);
    n += request(out + n, FIO_SYMLINK, 0, 0, 0, 0, "d/s", "../f");
    n += request(out + n, FIO_LINK, 0, 0, 0, FIO_FOLLOW, "d/s", "d/h");
    fuzz_seed(dir, "meta", out, n);
    /* Links handed back to the node: on the way, last, on either name. */
    n = request(out, FIO_STAT, 0, 0, 0, 0, "d/al/passwd", NULL);
    n += request(out + n, FIO_OPEN, 0, 0, 0, O_RDONLY, "l", NULL);
    n += request(out + n, FIO_UNLINK, 0, 0, 0, 0, "d/al/x", NULL);
    n += request(out + n, FIO_RENAME, 0, 0, 0, 0, "f", "d/al/y");
    fuzz_seed(dir, "links", out, n);
}
