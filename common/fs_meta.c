/* The file server's calls that change what a file is rather than what it
 * holds: its mode, owners and times (chmod, chown, utimensat and their
 * forms on an open file) and new names for it (symlink, link).  Each is
 * done with the job owner's file-system identity (fs_become), so the
 * service node's own rules decide: a user changes the mode and times of
 * files they own, gives a file only to a group they are in, and never to
 * another user. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fs_internal.h"

/* A name for an open descriptor that the path calls accept and that never
 * goes through the served tree again (an O_PATH descriptor has no fchmod). */
static void fd_path(int fd, char *out, size_t len)
{
    snprintf(out, len, "/proc/self/fd/%d", fd);
}

static bool time_ok(long ns)
{
    return (ns >= 0 && ns < 1000000000L) || ns == UTIME_NOW || ns == UTIME_OMIT;
}

/* FIO_CHMOD, FIO_FCHMOD, FIO_CHOWN, FIO_FCHOWN, FIO_UTIMENS, FIO_FUTIMENS. */
long fs_op_attr(const struct fs_call *c, struct fio_reply *rep)
{
    (void)rep;
    const struct fio_req *r = c->r;
    bool times = r->op == FIO_UTIMENS || r->op == FIO_FUTIMENS;
    uint32_t flags = times ? r->flags & ~FIO_TIME_NS : r->flags;
    if (flags & ~FIO_NOFOLLOW || (c->f && flags))
        return -EINVAL;
    struct timespec ts[2] = {{(time_t)r->offset, (long)r->mode},
                             {(time_t)(int64_t)r->len, (long)(r->flags & FIO_TIME_NS)}};
    if (times && (!time_ok(ts[0].tv_nsec) || !time_ok(ts[1].tv_nsec)))
        return -EINVAL;
    int fd = c->f ? c->f->fd
                  : fs_open_path(c->path, O_PATH | (flags & FIO_NOFOLLOW ? O_NOFOLLOW : 0), 0);
    if (fd < 0)
        return fd;
    char self[32];
    fd_path(fd, self, sizeof self);
    struct stat st;
    long res;
    switch (r->op) {
    case FIO_FCHMOD:
        res = fchmod(fd, (mode_t)(r->mode & 07777));
        break;
    case FIO_CHMOD:
        /* Linux has no mode on a symbolic link: fchmodat's
         * AT_SYMLINK_NOFOLLOW answers EOPNOTSUPP for one. */
        if (fstat(fd, &st) == 0 && S_ISLNK(st.st_mode)) {
            errno = EOPNOTSUPP;
            res = -1;
        } else {
            res = chmod(self, (mode_t)(r->mode & 07777));
        }
        break;
    case FIO_CHOWN:
    case FIO_FCHOWN:
        res = fchownat(fd, "", (uid_t)(uint32_t)r->offset, (gid_t)(uint32_t)r->len,
                       AT_EMPTY_PATH);
        break;
    default:
        res = utimensat(fd, "", ts, AT_EMPTY_PATH);
        break;
    }
    res = res ? -errno : 0;
    if (!c->f)
        close(fd);
    return res;
}

/* FIO_SYMLINK: a link at path whose contents are path2, as the program
 * gave them (the server resolves links beneath its root only: one that
 * points outside it, absolute or by "..", cannot be followed through it). */
long fs_op_symlink(const struct fs_call *c, struct fio_reply *rep)
{
    (void)rep;
    char name[256];
    if (c->r->flags)
        return -EINVAL;
    if (!c->r->path2_len || !c->path2[0])
        return -ENOENT;
    int pfd = fs_open_parent(c->path, name, sizeof name);
    if (pfd < 0)
        return pfd == -EBUSY ? -EEXIST : pfd;
    long res = symlinkat(c->path2, pfd, name) ? -errno : 0;
    close(pfd);
    return res;
}

/* FIO_LINK: path2 becomes another name of the file at path (the link
 * itself when it is one, unless FIO_FOLLOW). */
long fs_op_link(const struct fs_call *c, struct fio_reply *rep)
{
    (void)rep;
    char name[256], name2[256], self[32];
    if (c->r->flags & ~FIO_FOLLOW)
        return -EINVAL;
    if (!c->r->path2_len)
        return -ENOENT;
    int to = fs_open_parent(c->path2, name2, sizeof name2);
    if (to < 0)
        return to == -EBUSY ? -EEXIST : to;
    long res;
    int from = c->r->flags & FIO_FOLLOW ? fs_open_path(c->path, O_PATH, 0)
                                        : fs_open_parent(c->path, name, sizeof name);
    if (from == -EBUSY) {
        res = -EPERM;                   /* the root: a directory */
    } else if (from < 0) {
        res = from;
    } else if (c->r->flags & FIO_FOLLOW) {
        fd_path(from, self, sizeof self);
        res = linkat(AT_FDCWD, self, to, name2, AT_SYMLINK_FOLLOW) ? -errno : 0;
    } else {
        res = linkat(from, name, to, name2, 0) ? -errno : 0;
    }
    if (from >= 0)
        close(from);
    close(to);
    return res;
}
