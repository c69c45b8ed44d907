/* The file server's calls on the service node's file system: each request
 * is done with the job owner's identity, on paths resolved beneath the
 * served root (openat2, RESOLVE_BENEATH when confined). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/openat2.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fs_internal.h"
#include <tern/path.h>

static int rootfd = -1;
static int rootsync = -1;           /* the root opened for reading: syncfs takes no O_PATH */
static uint64_t resolve_flags;
static bool confine;

/* ---- identity ------------------------------------------------------------ */

static uid_t cur_uid = (uid_t)-1;
static gid_t cur_gid = (gid_t)-1;

/* Takes on the file-system identity of the job's owner: fsuid, fsgid and
 * the supplementary groups the service node gives that user.  A server not
 * running as root serves only its own user. */
int fs_become(uint32_t uid, uint32_t gid)
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

struct fs_follow fs_follow;

/* Appends the n bytes at s to fs_follow.path (its length at *len). */
static bool follow_add(size_t *len, const char *s, size_t n)
{
    if (*len + n + 1 > sizeof fs_follow.path)
        return false;
    memcpy(fs_follow.path + *len, s, n);
    *len += n;
    fs_follow.path[*len] = 0;
    return true;
}

/* openat2 said a confined p leaves the root: the first symbolic link on
 * p's way (its last component only if followed) is replaced by its target
 * in fs_follow (FIO_FOLLOW_LINK), for the node to go on from.  Components are
 * looked at, never opened, beyond a directory that is beneath the root;
 * a path the kernel would not send ("..") is refused.  -EACCES when no
 * link is found (the escape was something else). */
static int link_on_the_way(const char *p, bool follow_last)
{
    int dfd = openat(rootfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return -errno;
    size_t done = 0;                 /* bytes of p walked: real directories */
    int res = -EACCES;
    const char *e = p, *s;
    size_t l;
    while ((s = path_component(&e, &l))) {
        const char *rest = e;
        while (*rest == '/')
            rest++;
        if (!*rest && !follow_last)
            break;
        char name[256];
        if (l >= sizeof name || (l == 2 && s[0] == '.' && s[1] == '.'))
            break;
        memcpy(name, s, l);
        name[l] = 0;
        struct stat st;
        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW))
            break;
        if (S_ISLNK(st.st_mode)) {
            char target[FIO_PATH_MAX];
            ssize_t n = readlinkat(dfd, name, target, sizeof target - 1);
            if (n <= 0)
                break;
            /* [the directories walked /] target [/ the rest] */
            size_t len = 0;
            fs_follow.path[0] = 0;
            bool ok = target[0] == '/' ||
                      (follow_add(&len, p, done) && (!done || follow_add(&len, "/", 1)));
            ok = ok && follow_add(&len, target, (size_t)n);
            if (ok && *rest)
                ok = follow_add(&len, "/", 1) && follow_add(&len, rest, strlen(rest));
            res = ok ? FIO_FOLLOW_LINK : -ENAMETOOLONG;
            fs_follow.of = p;
            break;
        }
        int nfd = -1;
        if (S_ISDIR(st.st_mode))
            nfd = openat(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (nfd < 0)
            break;
        close(dfd);
        dfd = nfd;
        done = (size_t)(e - p);
    }
    close(dfd);
    return res;
}

int fs_open_path(const char *p, int flags, unsigned mode)
{
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = (uint64_t)(flags | O_CLOEXEC);
    how.mode = (flags & (O_CREAT | __O_TMPFILE)) ? (mode & 07777) : 0;
    how.resolve = resolve_flags;
    long fd = syscall(SYS_openat2, rootfd, p, &how, sizeof how);
    if (fd < 0 && errno == EXDEV && confine)
        return link_on_the_way(p, !(flags & O_NOFOLLOW));
    /* ELOOP: a loop, a link named with O_NOFOLLOW, or a magic link of
     * /proc (RESOLVE_NO_MAGICLINKS), as Linux says for each. */
    if (fd < 0)
        return errno == EXDEV ? -EACCES : -errno;
    return (int)fd;
}

/* The directory holding p's last component, and that component.  The
 * component is then used with *at calls that do not follow it. */
int fs_open_parent(const char *p, char *name, size_t namelen)
{
    const char *slash = strrchr(p, '/');
    const char *last = slash ? slash + 1 : p;
    if (!*last || !strcmp(last, ".") || !strcmp(last, ".."))
        return -EBUSY;     /* the root itself, or a path the kernel would not send */
    if (strlen(last) >= namelen)
        return -ENAMETOOLONG;
    strcpy(name, last);
    if (!slash)
        return fs_open_path(".", O_PATH | O_DIRECTORY, 0);
    char dir[FIO_PATH_MAX];
    size_t n = (size_t)(slash - p);
    memcpy(dir, p, n);
    dir[n] = 0;
    int fd = fs_open_path(n ? dir : "/", O_PATH | O_DIRECTORY, 0);
    if (fd == FIO_FOLLOW_LINK) {
        /* The link was on the directory's way: the node goes on with the
         * whole path. */
        size_t len = strlen(fs_follow.path);
        if (!follow_add(&len, "/", 1) || !follow_add(&len, last, strlen(last)))
            return -ENAMETOOLONG;
        fs_follow.of = p;
    }
    return fd;
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

int fs_root_open(const char *root, bool confine_to_root, char *err, int errlen)
{
    rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0) {
        snprintf(err, (size_t)errlen, "%s: %s", root, strerror(errno));
        return -1;
    }
    rootsync = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    confine = confine_to_root;
    resolve_flags = confine ? RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS : 0;
    return 0;
}

/* ---- the calls ------------------------------------------------------------- */

#define OPEN_FLAGS_OK (O_ACCMODE | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_APPEND | O_PATH | \
                       O_NONBLOCK | O_DSYNC | O_SYNC | O_DIRECTORY | O_NOFOLLOW | 0100000 /* O_LARGEFILE */ | \
                       O_CLOEXEC | O_NOATIME | O_DIRECT)

static long op_open(const struct fs_call *c, struct fio_reply *rep)
{
    const struct fio_req *r = c->r;
    if (r->flags & ~(uint32_t)OPEN_FLAGS_OK)
        return (r->flags & __O_TMPFILE) == __O_TMPFILE ? -EOPNOTSUPP : -EINVAL;
    fs_drop_stale(c->nid, r->job);
    /* Regular files and directories only, and the open itself never waits:
     * a FIFO's open waits for a partner and a device's reads may wait for
     * ever, and one server serves every job's nodes (an fyod that opened a
     * job's FIFO served nobody until something wrote to it).  O_NOCTTY: a
     * terminal never becomes the server's. */
    int flags = (int)r->flags & O_PATH ? (int)r->flags & (O_PATH | O_DIRECTORY | O_NOFOLLOW)
                                       : (int)r->flags | O_NONBLOCK | O_NOCTTY;   /* openat2 is strict */
    int fd = fs_open_path(c->path, flags, r->mode);
    if (fd < 0)
        return fd;
    struct stat st;
    /* O_PATH opens nothing (no partner, no device): any file, for fstat,
     * fchdir and the *at calls. */
    long res = fstat(fd, &st) ? -errno
               : S_ISREG(st.st_mode) || S_ISDIR(st.st_mode) || (r->flags & O_PATH) ? 0 : -ENXIO;
    if (!res && !(flags & O_PATH) && !(r->flags & O_NONBLOCK) &&
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK))
        res = -errno;
    if (res) {
        close(fd);
        return res;
    }
    rep->is_dir = S_ISDIR(st.st_mode);
    return fs_file_new(fd, c->nid, r, &rep->handle);
}

static long op_close(const struct fs_call *c, struct fio_reply *rep)
{
    (void)rep;
    fs_file_close(c->f);
    return 0;
}

static long op_lseek(const struct fs_call *c, struct fio_reply *rep)
{
    (void)rep;
    off_t o = lseek(c->f->fd, (off_t)c->r->offset, (int)c->r->flags);
    return o < 0 ? -errno : (long)o;
}

static long op_fstat(const struct fs_call *c, struct fio_reply *rep)
{
    struct stat st;
    if (fstat(c->f->fd, &st))
        return -errno;
    to_fio_stat(&st, &rep->st);
    return 0;
}

/* STAT, CHDIR, ACCESS, TRUNCATE: on the file the path names. */
static long op_on_file_at_path(const struct fs_call *c, struct fio_reply *rep)
{
    const struct fio_req *r = c->r;
    struct stat st;
    long res = 0;
    int fd = fs_open_path(c->path, r->op == FIO_TRUNCATE ? O_WRONLY | O_NONBLOCK | O_NOCTTY :
                                r->op == FIO_CHDIR ? O_PATH | O_DIRECTORY : O_PATH, 0);
    if (fd < 0)
        return fd;
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
    return res;
}

/* LSTAT, UNLINK, RMDIR, MKDIR, READLINK: on the last component itself, in
 * its directory. */
static long op_on_name_in_parent(const struct fs_call *c, struct fio_reply *rep)
{
    const struct fio_req *r = c->r;
    char name[256];
    struct stat st;
    long res;
    int pfd = fs_open_parent(c->path, name, sizeof name);
    if (pfd == -EBUSY && r->op == FIO_LSTAT) {          /* the root itself */
        res = fstat(rootfd, &st) ? -errno : 0;
        if (!res)
            to_fio_stat(&st, &rep->st);
        return res;
    }
    if (pfd == -EBUSY && r->op == FIO_READLINK)
        return -EINVAL;
    if (pfd == -EBUSY && r->op == FIO_MKDIR)
        return -EEXIST;
    if (pfd < 0)
        return pfd;
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
    return res;
}

static long op_rename(const struct fs_call *c, struct fio_reply *rep)
{
    (void)rep;
    char name[256], name2[256];
    if (!c->r->path2_len)
        return -EINVAL;
    int pfd = fs_open_parent(c->path, name, sizeof name);
    if (pfd < 0)
        return pfd;
    int pfd2 = fs_open_parent(c->path2, name2, sizeof name2);
    if (pfd2 < 0) {
        close(pfd);
        return pfd2;
    }
    long res = renameat(pfd, name, pfd2, name2) ? -errno : 0;
    close(pfd);
    close(pfd2);
    return res;
}

static long op_ftruncate(const struct fs_call *c, struct fio_reply *rep)
{
    (void)rep;
    return ftruncate(c->f->fd, (off_t)c->r->len) ? -errno : 0;
}

static long op_fsync(const struct fs_call *c, struct fio_reply *rep)
{
    (void)rep;
    return fsync(c->f->fd) ? -errno : 0;
}

static long op_fdatasync(const struct fs_call *c, struct fio_reply *rep)
{
    (void)rep;
    return fdatasync(c->f->fd) ? -errno : 0;
}

/* syncfs of an open file's file system, or of the root's (sync on a node:
 * each server it used flushes what it serves; without the root open for
 * reading, all of the service node's). */
static long op_syncfs(const struct fs_call *c, struct fio_reply *rep)
{
    (void)rep;
    if (c->f)
        return syncfs(c->f->fd) ? -errno : 0;
    if (rootsync < 0) {
        sync();
        return 0;
    }
    return syncfs(rootsync) ? -errno : 0;
}

static long op_setfl(const struct fs_call *c, struct fio_reply *rep)
{
    (void)rep;
    int fl = fcntl(c->f->fd, F_GETFL);
    fl = (fl & ~(O_APPEND | O_NONBLOCK)) | (int)(c->r->flags & (O_APPEND | O_NONBLOCK));
    return fcntl(c->f->fd, F_SETFL, fl) ? -errno : 0;
}

/* Locks on the rank's open of the file: open file description locks
 * (F_OFD_*) and flock, so ranks (each its own open) exclude each other and
 * a rank's close, or its job's end, lets its locks go.  Never waits: a
 * server blocked on one rank's lock would stop serving the others. */
static long lock_of(const struct fio_req *r, struct flock *fl)
{
    int whence = (int)(r->flags >> 8);
    memset(fl, 0, sizeof *fl);
    fl->l_type = (short)r->mode;
    fl->l_whence = (short)whence;
    fl->l_start = (off_t)r->offset;
    fl->l_len = (off_t)(int64_t)r->len;
    if ((r->mode != F_RDLCK && r->mode != F_WRLCK && r->mode != F_UNLCK) ||
        (whence != SEEK_SET && whence != SEEK_CUR && whence != SEEK_END))
        return -EINVAL;
    return 0;
}

static long op_lock(const struct fs_call *c, struct fio_reply *rep)
{
    (void)rep;
    const struct fio_req *r = c->r;
    if ((r->flags & 0xff) == FIO_LOCK_FLOCK) {
        if (r->mode != LOCK_SH && r->mode != LOCK_EX && r->mode != LOCK_UN)
            return -EINVAL;
        return flock(c->f->fd, (int)r->mode | LOCK_NB) ? -errno : 0;
    }
    struct flock fl;
    long res = (r->flags & 0xff) == FIO_LOCK_RECORD ? lock_of(r, &fl) : -EINVAL;
    if (res)
        return res;
    return fcntl(c->f->fd, F_OFD_SETLK, &fl) ? -errno : 0;
}

static long op_getlk(const struct fs_call *c, struct fio_reply *rep)
{
    struct flock fl;
    long res = (c->r->flags & 0xff) == FIO_LOCK_RECORD ? lock_of(c->r, &fl) : -EINVAL;
    if (res || fl.l_type == F_UNLCK)
        return res ? res : -EINVAL;
    if (fcntl(c->f->fd, F_OFD_GETLK, &fl))
        return -errno;
    struct fio_lock l = {fl.l_type, -1, (int64_t)fl.l_start, (int64_t)fl.l_len};
    memcpy(rep->data, &l, sizeof l);
    rep->data_len = sizeof l;
    return 0;
}

static long op_fallocate(const struct fs_call *c, struct fio_reply *rep)
{
    (void)rep;
    const struct fio_req *r = c->r;
    return fallocate(c->f->fd, (int)r->flags, (off_t)r->offset, (off_t)r->len) ? -errno : 0;
}

/* The file system's sizes, for statfs (a path) and fstatfs (an open file). */
static long op_statfs(const struct fs_call *c, struct fio_reply *rep)
{
    struct statfs s;
    int fd = c->f ? c->f->fd : fs_open_path(c->path, O_PATH, 0);
    if (fd < 0)
        return fd;
    long res = fstatfs(fd, &s) ? -errno : 0;
    if (!c->f)
        close(fd);
    if (res)
        return res;
    _Static_assert(sizeof s == 120, "Linux x86-64's struct statfs");
    memcpy(rep->data, &s, sizeof s);
    rep->data_len = sizeof s;
    return 0;
}

static long op_unknown(const struct fs_call *c, struct fio_reply *rep)
{
    (void)c, (void)rep;
    return -ENOSYS;
}

/* FIO_CLOSE_ALL is no call on a file: fileserver.c does it before any. */
static const struct fs_op table[] = {
    [FIO_OPEN] = {true, false, op_open},
    [FIO_CLOSE] = {false, false, op_close},
    [FIO_READ] = {false, true, NULL},
    [FIO_WRITE] = {false, true, NULL},
    [FIO_LSEEK] = {false, false, op_lseek},
    [FIO_FSTAT] = {false, false, op_fstat},
    [FIO_STAT] = {true, false, op_on_file_at_path},
    [FIO_LSTAT] = {true, false, op_on_name_in_parent},
    [FIO_ACCESS] = {true, false, op_on_file_at_path},
    [FIO_UNLINK] = {true, false, op_on_name_in_parent},
    [FIO_RMDIR] = {true, false, op_on_name_in_parent},
    [FIO_MKDIR] = {true, false, op_on_name_in_parent},
    [FIO_RENAME] = {true, false, op_rename},
    [FIO_GETDENTS] = {false, true, NULL},
    [FIO_FTRUNCATE] = {false, false, op_ftruncate},
    [FIO_TRUNCATE] = {true, false, op_on_file_at_path},
    [FIO_FSYNC] = {false, false, op_fsync},
    [FIO_FDATASYNC] = {false, false, op_fdatasync},
    [FIO_READLINK] = {true, false, op_on_name_in_parent},
    [FIO_CHDIR] = {true, false, op_on_file_at_path},
    [FIO_SETFL] = {false, false, op_setfl},
    [FIO_LOCK] = {false, false, op_lock},
    [FIO_GETLK] = {false, false, op_getlk},
    [FIO_FALLOCATE] = {false, false, op_fallocate},
    [FIO_STATFS] = {true, false, op_statfs},
    [FIO_FSTATFS] = {false, false, op_statfs},
    [FIO_CHMOD] = {true, false, fs_op_attr},
    [FIO_FCHMOD] = {false, false, fs_op_attr},
    [FIO_CHOWN] = {true, false, fs_op_attr},
    [FIO_FCHOWN] = {false, false, fs_op_attr},
    [FIO_UTIMENS] = {true, false, fs_op_attr},
    [FIO_FUTIMENS] = {false, false, fs_op_attr},
    [FIO_SYMLINK] = {true, false, fs_op_symlink},
    [FIO_LINK] = {true, false, fs_op_link},
    [FIO_SYNCFS] = {false, false, op_syncfs},
    [FIO_SYNC] = {true, false, op_syncfs},
};

const struct fs_op *fs_op_of(uint16_t op)
{
    static const struct fs_op unknown = {false, false, op_unknown};
    if (op < sizeof table / sizeof table[0] && (table[op].fn || table[op].xfer))
        return &table[op];
    return &unknown;
}
