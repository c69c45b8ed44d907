/* File system calls.  Under a job every path and every file descriptor
 * that is not the console is forwarded to a file server (kernel/job/files.c,
 * docs/fileio.md); without a job (qemu/run-node) a node has no file system:
 * lookups fail with ENOENT, creation with EROFS, as always. */
#include "boot.h"
#include "errno.h"
#include "evobj.h"
#include "fd.h"
#include "file_map.h"
#include "files.h"
#include "job.h"
#include "kernel.h"
#include "kmalloc.h"
#include "process.h"
#include "syscall.h"
#include "time.h"
#include "uaccess.h"
#include "file_internal.h"

#define O_ACCMODE 3
#define O_RDONLY 0
#define O_WRONLY 1
#define O_RDWR 2
#define O_CREAT 0100
#define O_TRUNC 01000
#define O_APPEND 02000
#define O_NONBLOCK 04000
#define O_DIRECTORY 0200000
#define O_CLOEXEC 02000000
#define MAX_RW 0x7FFFF000ULL

char file_abs1[FILES_PATH_MAX], file_abs2[FILES_PATH_MAX];
struct fio_reply file_rep;
static char upath[FILES_PATH_MAX];

/* ---- without a job: no file system --------------------------------------- */

long file_no_fs_lookup(uint64_t path_va)
{
    long n = string_from_user(upath, path_va, sizeof upath);
    return n < 0 ? n : -ENOENT;
}

/* ---- paths ------------------------------------------------------------------ */

long file_resolve(int64_t dirfd, uint64_t uptr, char *out, bool *empty)
{
    long n = string_from_user(upath, uptr, sizeof upath);
    if (n < 0)
        return n;
    if (n == 0) {
        if (empty) {
            *empty = true;
            return 0;
        }
        return -ENOENT;
    }
    if (empty)
        *empty = false;
    const char *base = files_cwd();
    if (upath[0] != '/' && (int32_t)dirfd != AT_FDCWD) {
        struct fd *f = fd_get((uint64_t)(int64_t)(int32_t)dirfd);
        if (!f)
            return -EBADF;
        if (f->kind != FD_FILE || !f->of->dir)
            return -ENOTDIR;
        base = f->of->path;
    }
    return files_normalise(base, upath, out);
}

#define LINKS_MAX 40               /* Linux's MAXSYMLINKS */
static char link_path[FILES_PATH_MAX];

/* A server met a symbolic link on abs's way that it does not follow
 * (FIO_FOLLOW_LINK, include/tern/fio_proto.h; an fyod never leaves its root): abs,
 * whose server path files_route put at sp, becomes the path the link leads
 * to, resolved in the program's view of paths, as Linux resolves it. */
static long take_link(char *abs, const char *sp)
{
    uint32_t n = file_rep.data_len;
    if (n == 0 || n > sizeof file_rep.data || file_rep.data[n - 1])
        return -EIO;
    const char *base = "/";
    if (file_rep.data[0] != '/') {
        /* Relative to the server's root: abs cut to its mount's prefix. */
        if (sp >= abs && sp < abs + strlen(abs))
            abs[sp - abs] = 0;
        base = abs;
    }
    long rc = files_normalise(base, file_rep.data, link_path);
    if (!rc)
        strlcpy(abs, link_path, FILES_PATH_MAX);
    return rc;
}

/* r to the server abs routes to, with abs2 (a second path the call names,
 * which must route there too: else EXDEV, as between file systems) or
 * content (a symlink's contents, not a path); the links a server hands back
 * are followed by rewriting abs or abs2, up to LINKS_MAX.  *srv (if
 * wanted): where the call was made. */
static long routed_call(char *abs, char *abs2, const char *content, struct fio_req *r,
                        int *srv)
{
    for (int links = 0;; links++) {
        const char *sp, *sp2 = content;
        int s = files_route(abs, &sp);
        if (abs2 && files_route(abs2, &sp2) != s)
            return -EXDEV;
        if (srv)
            *srv = s;
        long rc = fio_call(s, r, sp, sp2, 0, false, &file_rep);
        if (rc != FIO_FOLLOW_LINK)
            return rc;
        if (links == LINKS_MAX)
            return -ELOOP;
        bool second = abs2 && file_rep.handle == 2;
        if ((rc = take_link(second ? abs2 : abs, second ? sp2 : sp)))
            return rc;
    }
}

long file_path_call(char *abs, struct fio_req *r, const char *path2)
{
    return routed_call(abs, NULL, path2, r, NULL);
}

static long path_op(int op, char *abs, uint32_t mode, uint64_t len)
{
    struct fio_req r;
    memset(&r, 0, sizeof r);
    r.op = (uint16_t)op;
    r.mode = mode;
    r.len = len;
    return file_path_call(abs, &r, NULL);
}

long file_of_op(struct ofile *of, int op, int64_t off, uint64_t len, uint32_t flags,
                uint64_t ubuf, bool into)
{
    struct fio_req r;
    memset(&r, 0, sizeof r);
    r.op = (uint16_t)op;
    r.handle = of->handle;
    r.offset = off;
    r.len = len;
    r.flags = flags;
    return fio_call(of->srv, &r, NULL, NULL, ubuf, into, &file_rep);
}

/* ---- open, close ------------------------------------------------------------ */

/* /dev/stdin, /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N
 * (thread-self, the caller's own pid) name the program's own descriptors:
 * their number, or -1.  Forwarded, they named yod's (a program that
 * wrote its results to /dev/stdout wrote into yod's stdout behind the
 * job's output stream). */
static int own_fd_of(const char *abs)
{
    static const char *const std[] = {"/dev/stdin", "/dev/stdout", "/dev/stderr"};
    for (int i = 0; i < 3; i++)
        if (!strcmp(abs, std[i]))
            return i;
    char own[40];
    snprintf(own, sizeof own, "/proc/%u/fd/", proc.pid);
    const char *const dirs[] = {"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/", own};
    for (unsigned i = 0; i < ARRAY_SIZE(dirs); i++) {
        size_t n = strlen(dirs[i]);
        if (strncmp(abs, dirs[i], n) || !abs[n])
            continue;
        long fd = 0;
        for (const char *c = abs + n; *c; c++) {
            if (*c < '0' || *c > '9' || fd > 100000)
                return -1;
            fd = fd * 10 + (*c - '0');
        }
        return (int)fd;
    }
    return -1;
}

/* Opening one of them is a dup of the descriptor (Linux opens its file
 * again: the offset here is shared, O_TRUNC and the access mode are the
 * descriptor's). */
static long open_own_fd(int fd, uint64_t flags)
{
    return fd_get((uint64_t)fd) ? dup_lowest((uint64_t)fd, 0, flags & O_CLOEXEC) : -ENOENT;
}

static long do_open(int64_t dirfd, uint64_t path, uint64_t flags, uint64_t mode)
{
    if (!job.running) {
        long n = string_from_user(upath, path, sizeof upath);
        if (n < 0)
            return n;
        if (own_fd_of(upath) >= 0)
            return open_own_fd(own_fd_of(upath), flags);
        if ((flags & O_ACCMODE) != 0 || (flags & (O_CREAT | O_TRUNC | O_APPEND)))
            return -EROFS;  /* nothing to create files on */
        return -ENOENT;
    }
    long rc = file_resolve(dirfd, path, file_abs1, NULL);
    if (rc)
        return rc;
    int own = own_fd_of(file_abs1);
    if (own >= 0)
        return open_own_fd(own, flags);
    if (!fd_free_count())
        return -EMFILE;
    struct fio_req r;
    memset(&r, 0, sizeof r);
    r.op = FIO_OPEN;
    r.flags = (uint32_t)flags & ~(uint32_t)O_CLOEXEC;
    r.mode = (uint32_t)mode & 07777 & ~files_umask;
    int srv;
    rc = routed_call(file_abs1, NULL, NULL, &r, &srv);   /* file_abs1: where it led */
    if (rc < 0)
        return rc;
    struct ofile *of = kmalloc(sizeof *of);
    char *p = kmalloc(strlen(file_abs1) + 1);
    if (!of || !p) {
        kfree(of);
        kfree(p);
        struct ofile tmp = {.refs = 1, .srv = srv, .handle = file_rep.handle};
        file_of_op(&tmp, FIO_CLOSE, 0, 0, 0, 0, false);
        return -ENOMEM;
    }
    memcpy(p, file_abs1, strlen(file_abs1) + 1);
    *of = (struct ofile){.refs = 1, .srv = srv, .dir = file_rep.is_dir != 0,
                         .handle = file_rep.handle, .path = p};
    long fd = fd_install((struct fd){FD_FILE, flags & O_CLOEXEC,
                                     (uint32_t)flags & ~(uint32_t)(O_CLOEXEC | O_CREAT | O_TRUNC),
                                     {.of = of}});
    if (fd < 0)
        fio_release(of);
    return fd;
}

SYSCALL(open) { UNUSED_ARGS(); return do_open(AT_FDCWD, a0, a1, a2); }
SYSCALL(openat) { UNUSED_ARGS(); return do_open((int64_t)a0, a1, a2, a3); }
SYSCALL(creat) { UNUSED_ARGS(); return do_open(AT_FDCWD, a0, O_CREAT | O_WRONLY | O_TRUNC, a1); }

/* ---- data ------------------------------------------------------------------- */

long file_xfer(struct fd *f, void *buf, uint64_t len, int64_t off, bool writing)
{
    uint32_t acc = f->flags & O_ACCMODE;
    if ((writing && acc == O_RDONLY) || (!writing && acc == O_WRONLY))
        return -EBADF;
    if (f->of->dir)
        return -EISDIR;
    if (len == 0)
        return 0;
    /* The process's shared mappings of the file and its bytes are one
     * (sys/file_map.c): their changes go first, and what is written shows
     * in them after. */
    if (proc.nfmaps && !writing)
        file_map_before_read(f->of, off, len);
    long n = file_of_op(f->of, writing ? FIO_WRITE : FIO_READ, off, len, 0, (uint64_t)buf,
                        !writing);
    if (proc.nfmaps && writing && n > 0)
        file_map_after_write(f->of, off, (uint64_t)n, buf);
    return n;
}

long file_rw(struct fd *f, uint64_t buf, uint64_t len, int64_t off, bool writing)
{
    if (len > MAX_RW)
        len = MAX_RW;
    if (!user_ok(buf, len))
        return -EFAULT;
    return file_xfer(f, (void *)buf, len, off, writing);
}

/* The forwarded file descriptor fd names, in *f: 0, -EBADF when it is not
 * open, or not_file when it names something else (the console, a pipe). */
static long file_fd(uint64_t fd, long not_file, struct fd **f)
{
    *f = fd_get(fd);
    return !*f ? -EBADF : (*f)->kind != FD_FILE ? not_file : 0;
}

static long positional(uint64_t fd, uint64_t buf, uint64_t len, uint64_t off, bool writing)
{
    struct fd *f;
    long rc = file_fd(fd, -ESPIPE, &f);
    if (rc)
        return rc;
    if ((int64_t)off < 0)
        return -EINVAL;
    return file_rw(f, buf, len, (int64_t)off, writing);
}

SYSCALL(pread64) { UNUSED_ARGS(); return positional(a0, a1, a2, a3, false); }
SYSCALL(pwrite64) { UNUSED_ARGS(); return positional(a0, a1, a2, a3, true); }

SYSCALL(lseek)
{
    UNUSED_ARGS();
    struct fd *f;
    long rc = file_fd(a0, -ESPIPE, &f);
    if (rc)
        return rc;
    if (a2 > 4)
        return -EINVAL;
    return file_of_op(f->of, FIO_LSEEK, (int64_t)a1, 0, (uint32_t)a2, 0, false);
}

SYSCALL(getdents64)
{
    UNUSED_ARGS();
    struct fd *f = fd_get(a0);
    if (!f)
        return -EBADF;
    if (f->kind != FD_FILE || !f->of->dir)
        return -ENOTDIR;
    if (!user_ok(a1, a2))
        return -EFAULT;
    if (a2 == 0)
        return -EINVAL;
    return file_of_op(f->of, FIO_GETDENTS, 0, a2, 0, a1, true);
}

long file_sync(struct fd *f, bool all)
{
    if (proc.nfmaps)
        file_map_before_read(f->of, -1, 0);   /* fsync writes a mapping's changes too */
    return file_of_op(f->of, all ? FIO_FSYNC : FIO_FDATASYNC, 0, 0, 0, 0, false);
}

static long sync_fd(uint64_t fd, bool all)
{
    struct fd *f;
    long rc = file_fd(fd, -EINVAL, &f);
    return rc ? rc : file_sync(f, all);
}

SYSCALL(fsync) { UNUSED_ARGS(); return sync_fd(a0, true); }
SYSCALL(fdatasync) { UNUSED_ARGS(); return sync_fd(a0, false); }

/* posix_fadvise and readahead: hints about a file's future reads.  A
 * node keeps no page cache to fill or drop (every read is the server's),
 * so a valid hint is taken and nothing is done, as Linux does with the
 * hints a file system has no use for. */
SYSCALL(fadvise64)
{
    UNUSED_ARGS();
    struct fd *f;
    long rc = file_fd(a0, -ESPIPE, &f);
    return rc ? rc : a3 > 5 || (int64_t)a2 < 0 ? -EINVAL : 0;    /* POSIX_FADV_NORMAL .. NOREUSE */
}

SYSCALL(readahead)
{
    UNUSED_ARGS();
    struct fd *f = fd_get(a0);
    if (!f)
        return -EBADF;
    return f->kind != FD_FILE || f->of->dir ? -EINVAL : 0;
}

/* syncfs: the file system of fd's file (the console's has nothing to
 * flush); sync: every server the job used flushes what it serves. */
SYSCALL(syncfs)
{
    UNUSED_ARGS();
    struct fd *f = fd_get(a0);
    if (!f)
        return -EBADF;
    return f->kind == FD_FILE ? file_of_op(f->of, FIO_SYNCFS, 0, 0, 0, 0, false) : 0;
}

SYSCALL(sync)
{
    UNUSED_ARGS();
    if (job.running)
        files_sync_all();
    return 0;
}

SYSCALL(ftruncate)
{
    UNUSED_ARGS();
    struct fd *f = fd_get(a0);
    if (!f)
        return -EBADF;
    if (f->kind != FD_FILE || f->of->dir || (f->flags & O_ACCMODE) == O_RDONLY)
        return f->kind != FD_FILE || f->of->dir ? -EINVAL : -EBADF;
    if ((int64_t)a1 < 0)
        return -EINVAL;
    return file_of_op(f->of, FIO_FTRUNCATE, 0, a1, 0, 0, false);
}

SYSCALL(truncate)
{
    UNUSED_ARGS();
    if (!job.running)
        return file_no_fs_lookup(a0);
    if ((int64_t)a1 < 0)
        return -EINVAL;
    long rc = file_resolve(AT_FDCWD, a0, file_abs1, NULL);
    return rc ? rc : path_op(FIO_TRUNCATE, file_abs1, 0, a1);
}

/* fcntl(F_SETFL) on a file: the server's file takes O_APPEND too. */
long file_setfl(struct fd *f, uint32_t flags)
{
    return file_of_op(f->of, FIO_SETFL, 0, 0, flags & (O_APPEND | O_NONBLOCK), 0, false);
}

/* ---- locks -------------------------------------------------------------------- */

/* fcntl's record locks and flock on a served file (FIO_LOCK): the server
 * takes them on its open of the file, an open file description's locks,
 * so the ranks of a job on any nodes, each with an open of its own,
 * exclude each other, and a close or the job's end lets them go.  The
 * server never waits for one: a call that may (F_SETLKW, flock without
 * LOCK_NB) asks again every LOCK_RETRY_NS until it has the lock or a
 * signal ends its wait (EINTR), as a wait in the kernel would.  SQLite's
 * fcntl locks got EINVAL here ("disk I/O error" on its first write). */
#define F_GETLK 5
#define F_SETLK 6
#define F_SETLKW 7
#define F_OFD_GETLK 36
#define F_OFD_SETLK 37
#define F_OFD_SETLKW 38
#define F_UNLCK 2
#define LOCK_NB 4
#define LOCK_UN 8
#define LOCK_RETRY_NS 20000000ULL

struct linux_flock {
    int16_t type, whence;
    int32_t pad;
    int64_t start, len;
    int32_t pid, pad2;
};

/* One FIO_LOCK or FIO_GETLK: file_of_op's, with the lock's type in mode. */
static long lock_call(struct fd *f, int op, uint32_t flags, uint32_t mode, int64_t start,
                      int64_t len)
{
    struct fio_req r;
    memset(&r, 0, sizeof r);
    r.op = (uint16_t)op;
    r.handle = f->of->handle;
    r.flags = flags;
    r.mode = mode;
    r.offset = start;
    r.len = (uint64_t)len;
    return fio_call(f->of->srv, &r, NULL, NULL, 0, false, &file_rep);
}

static long lock_until_held(struct fd *f, uint32_t flags, uint32_t mode, int64_t start,
                            int64_t len, bool wait)
{
    for (;;) {
        long rc = lock_call(f, FIO_LOCK, flags, mode, start, len);
        if (rc != -EAGAIN && rc != -EACCES)
            return rc;
        if (!wait)
            return -EAGAIN;            /* EWOULDBLOCK too, as flock says it */
        if (wait_until(time_monotonic_ns() + LOCK_RETRY_NS, 0, true, "a file lock") == -EINTR)
            return -EINTR;
    }
}

long file_lock(struct fd *f, uint64_t cmd, uint64_t arg)
{
    struct linux_flock fl;
    if (copy_from_user(&fl, arg, sizeof fl))
        return -EFAULT;
    bool ofd = cmd >= F_OFD_GETLK;
    if (ofd && fl.pid)
        return -EINVAL;                /* Linux asks l_pid 0 of the OFD calls */
    if (f->kind != FD_FILE || f->of->dir)
        return -EINVAL;
    uint32_t flags = FIO_LOCK_RECORD | (uint32_t)(uint16_t)fl.whence << 8;
    if (cmd == F_GETLK || cmd == F_OFD_GETLK) {
        long rc = lock_call(f, FIO_GETLK, flags, (uint32_t)(uint16_t)fl.type, fl.start, fl.len);
        if (rc < 0)
            return rc;
        struct fio_lock l;
        if (file_rep.data_len != sizeof l)
            return -EIO;
        memcpy(&l, file_rep.data, sizeof l);
        fl.type = (int16_t)l.type;
        if (l.type != F_UNLCK) {
            fl.whence = 0;             /* SEEK_SET */
            fl.start = l.start;
            fl.len = l.len;
            fl.pid = l.pid;
        }
        return copy_to_user(arg, &fl, sizeof fl);
    }
    /* A write lock wants the file open for writing, a read lock for
     * reading: the server's open is the rank's, and checks that too. */
    return lock_until_held(f, flags, (uint32_t)(uint16_t)fl.type, fl.start, fl.len,
                           cmd == F_SETLKW || cmd == F_OFD_SETLKW);
}

SYSCALL(flock)
{
    UNUSED_ARGS();
    struct fd *f = fd_get(a0);
    if (!f)
        return -EBADF;
    uint32_t op = (uint32_t)a1 & ~(uint32_t)LOCK_NB;
    if (op != 1 && op != 2 && op != LOCK_UN)     /* LOCK_SH, LOCK_EX, LOCK_UN */
        return -EINVAL;
    if (f->kind != FD_FILE || f->of->dir)
        return -EINVAL;
    return lock_until_held(f, FIO_LOCK_FLOCK, op, 0, 0, !(a1 & LOCK_NB));
}

/* ---- space --------------------------------------------------------------------- */

/* fallocate on a served file: the server's file system does it (modes and
 * errors are its own); posix_fallocate in glibc and musl calls it. */
SYSCALL(fallocate)
{
    UNUSED_ARGS();
    struct fd *f = fd_get(a0);
    if (!f)
        return -EBADF;
    if ((int64_t)a2 < 0 || (int64_t)a3 <= 0)
        return -EINVAL;
    if (f->kind != FD_FILE || f->of->dir)
        return f->kind == FD_FILE ? -EISDIR : -ESPIPE;
    if ((f->flags & O_ACCMODE) == O_RDONLY)
        return -EBADF;
    return file_of_op(f->of, FIO_FALLOCATE, (int64_t)a2, a3, (uint32_t)a1, 0, false);
}

/* statfs and fstatfs: the serving file system's sizes (a node has none of
 * its own).  Linux's struct statfs is 120 bytes. */
static long statfs_out(long rc, uint64_t buf)
{
    if (rc < 0)
        return rc;
    if (file_rep.data_len != 120)
        return -EIO;
    return copy_to_user(buf, file_rep.data, 120);
}

SYSCALL(statfs)
{
    UNUSED_ARGS();
    if (!job.running)
        return file_no_fs_lookup(a0);
    if (!user_ok(a1, 120))
        return -EFAULT;
    long rc = file_resolve(AT_FDCWD, a0, file_abs1, NULL);
    return rc ? rc : statfs_out(path_op(FIO_STATFS, file_abs1, 0, 0), a1);
}

SYSCALL(fstatfs)
{
    UNUSED_ARGS();
    struct fd *f = fd_get(a0);
    if (!f)
        return -EBADF;
    if (!user_ok(a1, 120))
        return -EFAULT;
    if (f->kind != FD_FILE)
        return -EINVAL;
    return statfs_out(file_of_op(f->of, FIO_FSTATFS, 0, 0, 0, 0, false), a1);
}

/* ---- status ----------------------------------------------------------------- */

/* The user's struct stat is fio_stat, Linux x86-64's layout (include/tern/fio_proto.h). */

/* A descriptor the node answers itself: the console, a pipe, an eventfd,
 * a timerfd, an epoll instance. */
static long local_stat(uint64_t fd, const struct fd *f, struct fio_stat *st)
{
    memset(st, 0, sizeof *st);
    st->dev = 5;
    st->ino = 3 + fd;
    st->nlink = 1;
    st->mode = 0020620;             /* character device, rw--w---- like a tty */
    st->uid = options.uid;
    st->gid = options.gid;
    st->rdev = (4 << 8) | 64;       /* ttyS0 */
    st->blksize = 1024;
    if (evobj_kind(f->kind)) {
        /* A pipe is a FIFO of pipefs; an eventfd or epoll instance an
         * anonymous inode (mode 0600, no type), as Linux shows them. */
        bool pipe = f->kind == FD_PIPE_R || f->kind == FD_PIPE_W;
        st->dev = pipe ? 0xc : 0xd;
        st->ino = evobj_id(f);
        st->mode = pipe ? 0010600 : 0600;
        st->rdev = 0;
        st->blksize = 4096;
        return 0;
    }
    if (f->kind == FD_CONSOLE_IN && options.stdin_mode == STDIN_PIPE) {
        st->mode = 0010600;         /* a pipe: what run-node's input is here */
        st->rdev = 0;
        st->blksize = 4096;
    }
    return 0;
}

/* Status of a descriptor or (at dirfd) a path into file_rep.st. */
static long get_stat(int64_t dirfd, uint64_t path, uint64_t flags, bool use_path)
{
    bool empty = false;
    if (use_path) {
        if (!job.running) {
            if (flags & AT_EMPTY_PATH) {
                char c;
                if (copy_from_user(&c, path, 1))
                    return -EFAULT;
                if (c == 0)
                    goto by_fd;
            }
            return file_no_fs_lookup(path);
        }
        long rc = file_resolve(dirfd, path, file_abs1, (flags & AT_EMPTY_PATH) ? &empty : NULL);
        if (rc)
            return rc;
        if (!empty)
            return path_op((flags & AT_SYMLINK_NOFOLLOW) ? FIO_LSTAT : FIO_STAT, file_abs1, 0, 0);
        if ((int32_t)dirfd == AT_FDCWD) {
            strlcpy(file_abs1, files_cwd(), sizeof file_abs1);
            return path_op(FIO_STAT, file_abs1, 0, 0);
        }
    }
by_fd:;
    struct fd *f = fd_get((uint64_t)(int64_t)(int32_t)dirfd);
    if (!f)
        return -EBADF;
    if (f->kind != FD_FILE)
        return local_stat((uint64_t)(int32_t)dirfd, f, &file_rep.st);
    return file_of_op(f->of, FIO_FSTAT, 0, 0, 0, 0, false);
}

static long stat_out(long rc, uint64_t buf)
{
    if (rc < 0)
        return rc;
    return copy_to_user(buf, &file_rep.st, sizeof file_rep.st);
}

SYSCALL(fstat)
{
    UNUSED_ARGS();
    if (!user_ok(a1, sizeof(struct fio_stat)))
        return fd_get(a0) ? -EFAULT : -EBADF;
    return stat_out(get_stat((int64_t)a0, 0, 0, false), a1);
}

SYSCALL(stat)
{
    UNUSED_ARGS();
    if (!user_ok(a1, sizeof(struct fio_stat)))
        return -EFAULT;
    return stat_out(get_stat(AT_FDCWD, a0, 0, true), a1);
}

SYSCALL(lstat)
{
    UNUSED_ARGS();
    if (!user_ok(a1, sizeof(struct fio_stat)))
        return -EFAULT;
    return stat_out(get_stat(AT_FDCWD, a0, AT_SYMLINK_NOFOLLOW, true), a1);
}

SYSCALL(newfstatat)
{
    UNUSED_ARGS();
    if (!user_ok(a2, sizeof(struct fio_stat)))
        return -EFAULT;
    if (a3 & ~(uint64_t)(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | 0x800 /* AT_NO_AUTOMOUNT */))
        return -EINVAL;
    return stat_out(get_stat((int64_t)a0, a1, a3, true), a2);
}

struct statx_ts { int64_t sec; uint32_t nsec; int32_t pad; };
struct linux_statx {
    uint32_t mask, blksize;
    uint64_t attributes;
    uint32_t nlink, uid, gid;
    uint16_t mode, pad0;
    uint64_t ino, size, blocks, attributes_mask;
    struct statx_ts atime, btime, ctime, mtime;
    uint32_t rdev_major, rdev_minor, dev_major, dev_minor;
    uint64_t spare[14];
};
_Static_assert(sizeof(struct linux_statx) == 256, "statx layout");

static uint32_t dev_major(uint64_t d) { return (uint32_t)(((d >> 8) & 0xfff) | ((d >> 32) & ~0xfffULL)); }
static uint32_t dev_minor(uint64_t d) { return (uint32_t)((d & 0xff) | ((d >> 12) & ~0xffULL)); }

SYSCALL(statx)
{
    UNUSED_ARGS();
    if (!user_ok(a4, sizeof(struct linux_statx)))
        return -EFAULT;
    long rc = get_stat((int64_t)a0, a1, a2 & (AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH), true);
    if (rc < 0)
        return rc;
    const struct fio_stat *s = &file_rep.st;
    struct linux_statx x;
    memset(&x, 0, sizeof x);
    x.mask = 0x7ff;                 /* STATX_BASIC_STATS */
    x.blksize = (uint32_t)s->blksize;
    x.nlink = (uint32_t)s->nlink;
    x.uid = s->uid;
    x.gid = s->gid;
    x.mode = (uint16_t)s->mode;
    x.ino = s->ino;
    x.size = (uint64_t)s->size;
    x.blocks = (uint64_t)s->blocks;
    x.atime = (struct statx_ts){(int64_t)s->atime, (uint32_t)s->atime_ns, 0};
    x.mtime = (struct statx_ts){(int64_t)s->mtime, (uint32_t)s->mtime_ns, 0};
    x.ctime = (struct statx_ts){(int64_t)s->ctime, (uint32_t)s->ctime_ns, 0};
    x.rdev_major = dev_major(s->rdev);
    x.rdev_minor = dev_minor(s->rdev);
    x.dev_major = dev_major(s->dev);
    x.dev_minor = dev_minor(s->dev);
    return copy_to_user(a4, &x, sizeof x);
}

/* ---- names ------------------------------------------------------------------ */

static long access_at(int64_t dirfd, uint64_t path, uint64_t mode, uint64_t flags)
{
    if (!job.running)
        return file_no_fs_lookup(path);
    if (mode & ~7ULL)
        return -EINVAL;
    bool empty = false;
    long rc = file_resolve(dirfd, path, file_abs1, (flags & AT_EMPTY_PATH) ? &empty : NULL);
    if (rc)
        return rc;
    if (empty) {
        struct fd *f = (int32_t)dirfd == AT_FDCWD ? NULL : fd_get((uint64_t)(int32_t)dirfd);
        if ((int32_t)dirfd == AT_FDCWD)
            strlcpy(file_abs1, files_cwd(), sizeof file_abs1);
        else if (!f)
            return -EBADF;
        else if (f->kind != FD_FILE)
            return 0;
        else
            strlcpy(file_abs1, f->of->path, sizeof file_abs1);
    }
    return path_op(FIO_ACCESS, file_abs1, (uint32_t)mode, 0);
}

SYSCALL(access) { UNUSED_ARGS(); return access_at(AT_FDCWD, a0, a1, 0); }
SYSCALL(faccessat) { UNUSED_ARGS(); return access_at((int64_t)a0, a1, a2, 0); }
SYSCALL(faccessat2) { UNUSED_ARGS(); return access_at((int64_t)a0, a1, a2, a3); }

static long name_op(int64_t dirfd, uint64_t path, int op, uint32_t mode)
{
    if (!job.running) {
        long r = file_no_fs_lookup(path);
        return r == -ENOENT && op == FIO_MKDIR ? -EROFS : r;
    }
    long rc = file_resolve(dirfd, path, file_abs1, NULL);
    if (rc)
        return rc;
    return path_op(op, file_abs1, mode, 0);
}

SYSCALL(unlink) { UNUSED_ARGS(); return name_op(AT_FDCWD, a0, FIO_UNLINK, 0); }
SYSCALL(rmdir) { UNUSED_ARGS(); return name_op(AT_FDCWD, a0, FIO_RMDIR, 0); }
SYSCALL(unlinkat)
{
    UNUSED_ARGS();
    if (a2 & ~(uint64_t)AT_REMOVEDIR)
        return -EINVAL;
    return name_op((int64_t)a0, a1, (a2 & AT_REMOVEDIR) ? FIO_RMDIR : FIO_UNLINK, 0);
}
SYSCALL(mkdir) { UNUSED_ARGS(); return name_op(AT_FDCWD, a0, FIO_MKDIR, (uint32_t)a1 & 07777 & ~files_umask); }
SYSCALL(mkdirat)
{
    UNUSED_ARGS();
    return name_op((int64_t)a0, a1, FIO_MKDIR, (uint32_t)a2 & 07777 & ~files_umask);
}

long file_two_names(int op, uint32_t flags, int64_t olddir, uint64_t oldp, int64_t newdir,
                    uint64_t newp)
{
    long rc = file_resolve(olddir, oldp, file_abs1, NULL);
    if (rc)
        return rc;
    if ((rc = file_resolve(newdir, newp, file_abs2, NULL)))
        return rc;
    struct fio_req r;
    memset(&r, 0, sizeof r);
    r.op = (uint16_t)op;
    r.flags = flags;
    return routed_call(file_abs1, file_abs2, NULL, &r, NULL);
}

static long rename_at(int64_t olddir, uint64_t oldp, int64_t newdir, uint64_t newp, uint64_t flags)
{
    if (!job.running)
        return file_no_fs_lookup(oldp);
    if (flags)
        return -EINVAL;      /* RENAME_NOREPLACE and friends: not forwarded */
    return file_two_names(FIO_RENAME, 0, olddir, oldp, newdir, newp);
}

SYSCALL(rename) { UNUSED_ARGS(); return rename_at(AT_FDCWD, a0, AT_FDCWD, a1, 0); }
SYSCALL(renameat) { UNUSED_ARGS(); return rename_at((int64_t)a0, a1, (int64_t)a2, a3, 0); }
SYSCALL(renameat2) { UNUSED_ARGS(); return rename_at((int64_t)a0, a1, (int64_t)a2, a3, a4); }

/* /proc/self/exe names the program: in a job its path as yod was given it,
 * made absolute at load (files_exe; from its base name alone it named a
 * file in the working directory, wherever the program was); without one
 * its name under "/" (a node has no /proc otherwise). */
static long self_exe(uint64_t buf, uint64_t len)
{
    if (job.running && files_exe()[0])
        strlcpy(file_abs2, files_exe(), sizeof file_abs2);
    else if (files_normalise("/", proc.name, file_abs2))
        return -ENAMETOOLONG;
    uint64_t n = strlen(file_abs2) < len ? strlen(file_abs2) : len;
    return copy_to_user(buf, file_abs2, n) ? -EFAULT : (long)n;
}

static long readlink_at(int64_t dirfd, uint64_t path, uint64_t buf, uint64_t len)
{
    long rc = string_from_user(upath, path, sizeof upath);
    if (rc < 0)
        return rc;
    char own[32];                      /* a rank's pid is its own (ranks per core) */
    snprintf(own, sizeof own, "/proc/%u/exe", proc.pid);
    bool exe = !strcmp(upath, "/proc/self/exe") || !strcmp(upath, "/proc/thread-self/exe") ||
               !strcmp(upath, own);
    if ((int64_t)len <= 0 && (job.running || exe))
        return -EINVAL;
    if (exe)
        return self_exe(buf, len);
    if (!job.running)
        return -ENOENT;
    rc = file_resolve(dirfd, path, file_abs1, NULL);
    if (rc)
        return rc;
    rc = path_op(FIO_READLINK, file_abs1, 0, 0);
    if (rc < 0)
        return rc;
    uint64_t n = file_rep.data_len < len ? file_rep.data_len : len;
    return copy_to_user(buf, file_rep.data, n) ? -EFAULT : (long)n;
}

SYSCALL(readlink) { UNUSED_ARGS(); return readlink_at(AT_FDCWD, a0, a1, a2); }
SYSCALL(readlinkat) { UNUSED_ARGS(); return readlink_at((int64_t)a0, a1, a2, a3); }

/* ---- working directory, umask ----------------------------------------------- */

SYSCALL(getcwd)
{
    UNUSED_ARGS();
    const char *c = job.running ? files_cwd() : "/";
    uint64_t n = strlen(c) + 1;
    if (a1 < n)
        return -ERANGE;
    return copy_to_user(a0, c, n) ? -EFAULT : (long)n;
}

/* abs is where the links on its way led: the directory getcwd names, as
 * Linux's is. */
static long change_dir(char *abs)
{
    long rc = path_op(FIO_CHDIR, abs, 0, 0);
    if (rc == 0)
        files_set_cwd(abs);
    return rc;
}

SYSCALL(chdir)
{
    UNUSED_ARGS();
    if (!job.running)
        return file_no_fs_lookup(a0);
    long rc = file_resolve(AT_FDCWD, a0, file_abs1, NULL);
    return rc ? rc : change_dir(file_abs1);
}

SYSCALL(fchdir)
{
    UNUSED_ARGS();
    struct fd *f = fd_get(a0);
    if (!f)
        return -EBADF;
    if (f->kind != FD_FILE || !f->of->dir)
        return -ENOTDIR;
    strlcpy(file_abs1, f->of->path, sizeof file_abs1);
    return change_dir(file_abs1);
}

SYSCALL(umask)
{
    UNUSED_ARGS();
    uint32_t old = files_umask;
    files_umask = (uint32_t)a0 & 0777;
    return old;
}
