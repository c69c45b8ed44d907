/* What a program changes about a forwarded file rather than in it: its
 * mode (chmod), owners (chown), times (utimensat, utimes, utime) and new
 * names (symlink, link).  The server does each as the job's owner on the
 * service node (common/fs_meta.c), whose rules decide who may.  These were
 * ENOSYS or EPERM, and C++'s std::filesystem copy_file, permissions,
 * last_write_time, create_symlink and create_hard_link failed with them. */
#include "errno.h"
#include "fd.h"
#include "files.h"
#include "job.h"
#include "kernel.h"
#include "syscall.h"
#include "uaccess.h"
#include "file_internal.h"

#define UTIME_NOW ((1L << 30) - 1)
#define UTIME_OMIT ((1L << 30) - 2)


/* ---- mode, owners, times ------------------------------------------------------ */

/* Sends r (fields the caller's) about the file at (dirfd, path): path_op
 * for a path (AT_SYMLINK_NOFOLLOW: a link itself), fd_op for dirfd's open
 * file when the path is "" with AT_EMPTY_PATH, or when by_fd. */
static long attr_call(int64_t dirfd, uint64_t path, uint64_t at, bool by_fd, struct fio_req *r,
                      int path_op, int fd_op)
{
    if (at & ~(uint64_t)(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
        return -EINVAL;
    if (!by_fd && !job.running) {
        long n = string_from_user(file_abs1, path, sizeof file_abs1);
        if (n < 0)
            return n;
        if (n > 0 || !(at & AT_EMPTY_PATH))
            return -ENOENT;            /* no file system without a job */
        by_fd = true;
    } else if (!by_fd) {
        bool empty = false;
        long rc = file_resolve(dirfd, path, file_abs1, (at & AT_EMPTY_PATH) ? &empty : NULL);
        if (rc)
            return rc;
        if (empty && (int32_t)dirfd == AT_FDCWD)
            strlcpy(file_abs1, files_cwd(), sizeof file_abs1);
        else
            by_fd = empty;
    }
    if (by_fd) {
        struct fd *f = fd_get((uint64_t)(int64_t)(int32_t)dirfd);
        if (!f)
            return -EBADF;
        if (f->kind != FD_FILE)
            return -EPERM;             /* the console is the node's */
        r->op = (uint16_t)fd_op;
        r->handle = f->of->handle;
        return fio_call(f->of->srv, r, NULL, NULL, 0, false, &file_rep);
    }
    r->op = (uint16_t)path_op;
    if (at & AT_SYMLINK_NOFOLLOW)
        r->flags |= FIO_NOFOLLOW;
    return file_path_call(file_abs1, r, NULL);
}

static long chmod_at(int64_t dirfd, uint64_t path, uint64_t mode, uint64_t at, bool by_fd)
{
    struct fio_req r;
    memset(&r, 0, sizeof r);
    r.mode = (uint32_t)mode & 07777;
    return attr_call(dirfd, path, at, by_fd, &r, FIO_CHMOD, FIO_FCHMOD);
}

SYSCALL(chmod) { UNUSED_ARGS(); return chmod_at(AT_FDCWD, a0, a1, 0, false); }
SYSCALL(fchmod) { UNUSED_ARGS(); return chmod_at((int64_t)a0, 0, a1, 0, true); }
SYSCALL(fchmodat) { UNUSED_ARGS(); return chmod_at((int64_t)a0, a1, a2, 0, false); }
SYSCALL(fchmodat2) { UNUSED_ARGS(); return chmod_at((int64_t)a0, a1, a2, a3, false); }

/* uid or gid (uint32_t)-1: unchanged. */
static long chown_at(int64_t dirfd, uint64_t path, uint64_t uid, uint64_t gid, uint64_t at,
                     bool by_fd)
{
    struct fio_req r;
    memset(&r, 0, sizeof r);
    r.offset = (int64_t)(uint32_t)uid;
    r.len = (uint32_t)gid;
    return attr_call(dirfd, path, at, by_fd, &r, FIO_CHOWN, FIO_FCHOWN);
}

SYSCALL(chown) { UNUSED_ARGS(); return chown_at(AT_FDCWD, a0, a1, a2, 0, false); }
SYSCALL(lchown) { UNUSED_ARGS(); return chown_at(AT_FDCWD, a0, a1, a2, AT_SYMLINK_NOFOLLOW, false); }
SYSCALL(fchown) { UNUSED_ARGS(); return chown_at((int64_t)a0, 0, a1, a2, 0, true); }
SYSCALL(fchownat) { UNUSED_ARGS(); return chown_at((int64_t)a0, a1, a2, a3, a4, false); }

struct times2 {
    int64_t sec[2], nsec[2];           /* atime, mtime */
};

static bool nsec_ok(int64_t ns)
{
    return (ns >= 0 && ns < 1000000000) || ns == UTIME_NOW || ns == UTIME_OMIT;
}

/* utimensat's common end: a path of 0 with a descriptor means that
 * descriptor's file (futimens), as Linux's utimensat takes it. */
static long times_at(int64_t dirfd, uint64_t path, const struct times2 *t, uint64_t at)
{
    if (!nsec_ok(t->nsec[0]) || !nsec_ok(t->nsec[1]))
        return -EINVAL;
    if (t->nsec[0] == UTIME_OMIT && t->nsec[1] == UTIME_OMIT)
        return 0;                      /* nothing to do: Linux does not look at the path */
    bool by_fd = path == 0 && (int32_t)dirfd != AT_FDCWD;
    if (by_fd && at)
        return -EINVAL;
    if (path == 0 && !by_fd)
        return -EFAULT;
    struct fio_req r;
    memset(&r, 0, sizeof r);
    r.offset = t->sec[0];
    r.mode = (uint32_t)t->nsec[0];
    r.len = (uint64_t)t->sec[1];
    r.flags = (uint32_t)t->nsec[1];
    return attr_call(dirfd, path, at, by_fd, &r, FIO_UTIMENS, FIO_FUTIMENS);
}

static const struct times2 both_now = {{0, 0}, {UTIME_NOW, UTIME_NOW}};

/* Two {seconds, fraction} pairs at va (0: both now), the fraction in
 * nanoseconds (utimensat: its UTIME_ values too) or microseconds (utimes,
 * futimesat: 0 to 999999, else EINVAL), then times_at. */
static long pairs_at(int64_t dirfd, uint64_t path, uint64_t va, bool micro, uint64_t at)
{
    struct times2 t = both_now;
    int64_t v[4];
    if (va) {
        if (copy_from_user(v, va, sizeof v))
            return -EFAULT;
        if (micro && (v[1] < 0 || v[1] >= 1000000 || v[3] < 0 || v[3] >= 1000000))
            return -EINVAL;
        int64_t unit = micro ? 1000 : 1;
        t = (struct times2){{v[0], v[2]}, {v[1] * unit, v[3] * unit}};
    }
    return times_at(dirfd, path, &t, at);
}

SYSCALL(utimensat) { UNUSED_ARGS(); return pairs_at((int64_t)a0, a1, a2, false, a3); }
SYSCALL(utimes) { UNUSED_ARGS(); return a0 ? pairs_at(AT_FDCWD, a0, a1, true, 0) : -EFAULT; }
SYSCALL(futimesat) { UNUSED_ARGS(); return pairs_at((int64_t)a0, a1, a2, true, 0); }

/* utime: struct utimbuf, whole seconds. */
SYSCALL(utime)
{
    UNUSED_ARGS();
    struct times2 t = both_now;
    int64_t v[2];
    if (a1) {
        if (copy_from_user(v, a1, sizeof v))
            return -EFAULT;
        t = (struct times2){{v[0], v[1]}, {0, 0}};
    }
    return a0 ? times_at(AT_FDCWD, a0, &t, 0) : -EFAULT;
}

/* ---- new names ------------------------------------------------------------------ */

/* A symbolic link at (dirfd, path) holding target, byte for byte. */
static long symlink_at(uint64_t target, int64_t dirfd, uint64_t path)
{
    long n = string_from_user(file_abs2, target, sizeof file_abs2);
    if (n < 0)
        return n;
    if (n == 0)
        return -ENOENT;
    if (!job.running) {
        long rc = file_no_fs_lookup(path);
        return rc == -ENOENT ? -EROFS : rc;   /* nothing to make it on */
    }
    long rc = file_resolve(dirfd, path, file_abs1, NULL);
    if (rc)
        return rc;
    struct fio_req r;
    memset(&r, 0, sizeof r);
    r.op = FIO_SYMLINK;
    return file_path_call(file_abs1, &r, file_abs2);
}

SYSCALL(symlink) { UNUSED_ARGS(); return symlink_at(a0, AT_FDCWD, a1); }
SYSCALL(symlinkat) { UNUSED_ARGS(); return symlink_at(a0, (int64_t)a1, a2); }

/* A hard link: both names on one server.  AT_EMPTY_PATH's "" (a descriptor's file) takes a
 * privilege a job does not have: ENOENT, as Linux gives without it. */
static long link_at(int64_t olddir, uint64_t oldp, int64_t newdir, uint64_t newp, uint64_t at)
{
    if (at & ~(uint64_t)(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH))
        return -EINVAL;
    if (!job.running)
        return file_no_fs_lookup(oldp);
    return file_two_names(FIO_LINK, at & AT_SYMLINK_FOLLOW ? FIO_FOLLOW : 0, olddir, oldp,
                          newdir, newp);
}

SYSCALL(link) { UNUSED_ARGS(); return link_at(AT_FDCWD, a0, AT_FDCWD, a1, 0); }
SYSCALL(linkat) { UNUSED_ARGS(); return link_at((int64_t)a0, a1, (int64_t)a2, a3, a4); }
