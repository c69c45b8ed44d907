/* Descriptor and I/O system calls.  The console writes to the host link when
 * one is configured (stdout and stderr kept apart), else to COM1. */
#include "boot.h"
#include "fd.h"
#include "hostlink.h"
#include "job.h"
#include "kernel.h"
#include "serial.h"
#include "syscall.h"
#include "uaccess.h"

#define O_ACCMODE 3
#define O_WRONLY 1
#define O_RDWR 2
#define O_CREAT 0100
#define O_TRUNC 01000
#define O_APPEND 02000
#define O_CLOEXEC 02000000
#define AT_FDCWD (-100)
#define AT_EMPTY_PATH 0x1000
#define MAX_RW 0x7FFFF000ULL       /* Linux caps one transfer at this */
#define PATH_MAX 4096

static struct fd fds[MAX_FDS];

void fd_init(void)
{
    memset(fds, 0, sizeof fds);
    fds[0] = (struct fd){FD_CONSOLE_IN, false, O_RDWR};
    fds[1] = (struct fd){FD_CONSOLE_OUT, false, O_RDWR};
    fds[2] = (struct fd){FD_CONSOLE_ERR, false, O_RDWR};
}

struct fd *fd_get(uint64_t fd)
{
    if (fd >= MAX_FDS || fds[fd].kind == FD_NONE)
        return NULL;
    return &fds[fd];
}

static void console_write(const struct fd *f, const void *buf, uint64_t len)
{
    if (job.running) {
        job_output(f->kind == FD_CONSOLE_ERR ? 2 : 1, buf, len);
    } else if (hostlink_enabled) {
        enum hostlink_type t = f->kind == FD_CONSOLE_ERR ? HL_STDERR : HL_STDOUT;
        const char *p = buf;
        while (len) {
            uint32_t k = len > 65536 ? 65536 : (uint32_t)len;
            hostlink_send(t, p, k);
            p += k;
            len -= k;
        }
    } else {
        serial_write(COM1, buf, len, 1);
    }
}

static long do_write(uint64_t fd, uint64_t buf, uint64_t len)
{
    struct fd *f = fd_get(fd);
    if (!f)
        return -EBADF;
    if (len > MAX_RW)
        len = MAX_RW;
    if (!user_ok(buf, len))
        return -EFAULT;
    console_write(f, (const void *)buf, len);
    return (long)len;
}

static long do_read(uint64_t fd, uint64_t buf, uint64_t len)
{
    struct fd *f = fd_get(fd);
    if (!f)
        return -EBADF;
    if (len > MAX_RW)
        len = MAX_RW;
    if (!user_ok(buf, len))
        return -EFAULT;
    if (job.running && f->kind == FD_CONSOLE_IN)
        return job_read_stdin(buf, len);
    return 0;   /* a node run without yod has no input: end of file */
}

SYSCALL(write) { UNUSED_ARGS(); return do_write(a0, a1, a2); }
SYSCALL(read) { UNUSED_ARGS(); return do_read(a0, a1, a2); }

struct iovec { uint64_t base, len; };

static long do_vector(uint64_t fd, uint64_t iov_va, uint64_t cnt, bool writing)
{
    if (!fd_get(fd))
        return -EBADF;
    if (cnt > 1024)
        return -EINVAL;
    static struct iovec iov[1024];
    if (copy_from_user(iov, iov_va, cnt * sizeof iov[0]))
        return -EFAULT;
    uint64_t total = 0;
    for (uint64_t i = 0; i < cnt; i++) {
        if (iov[i].len > (uint64_t)INT64_MAX - total)
            return -EINVAL;
        total += iov[i].len;
        if (!user_ok(iov[i].base, iov[i].len))
            return -EFAULT;
    }
    long done = 0;
    for (uint64_t i = 0; i < cnt; i++) {
        long n = writing ? do_write(fd, iov[i].base, iov[i].len)
                         : do_read(fd, iov[i].base, iov[i].len);
        if (n < 0)
            return done ? done : n;
        done += n;
        if ((uint64_t)n < iov[i].len)
            break;
    }
    return done;
}

SYSCALL(writev) { UNUSED_ARGS(); return do_vector(a0, a1, a2, true); }
SYSCALL(readv) { UNUSED_ARGS(); return do_vector(a0, a1, a2, false); }

SYSCALL(pread64)
{
    UNUSED_ARGS();
    return fd_get(a0) ? -ESPIPE : -EBADF;
}
SYSCALL(pwrite64) { UNUSED_ARGS(); return fd_get(a0) ? -ESPIPE : -EBADF; }
SYSCALL(lseek) { UNUSED_ARGS(); return fd_get(a0) ? -ESPIPE : -EBADF; }

#define TCGETS 0x5401
#define TCSETS 0x5402
#define TCSETSW 0x5403
#define TCSETSF 0x5404
#define TIOCGWINSZ 0x5413
#define TIOCSWINSZ 0x5414
#define TIOCGPGRP 0x540F

SYSCALL(ioctl)
{
    UNUSED_ARGS();
    if (!fd_get(a0))
        return -EBADF;
    /* Under yod the streams are yod's pipes, not a terminal (as for
     * `prog | cat` on Linux): the C library buffers output in blocks. */
    if (job.running)
        return -ENOTTY;
    switch (a1) {
    case TCGETS: {
        /* A cooked terminal: what a serial console line looks like. */
        uint32_t t[9] = {0x500 /* ICRNL|IXON */, 0x5 /* OPOST|ONLCR */, 0xBF /* B38400|CS8|CREAD */,
                         0x8A3B /* ISIG|ICANON|ECHO... */, 0, 0, 0, 0, 0};
        return copy_to_user(a2, t, 36);
    }
    case TCSETS: case TCSETSW: case TCSETSF:
        return user_ok(a2, 36) ? 0 : -EFAULT;
    case TIOCGWINSZ: {
        uint16_t ws[4] = {24, 80, 0, 0};
        return copy_to_user(a2, ws, sizeof ws);
    }
    case TIOCSWINSZ:
        return user_ok(a2, 8) ? 0 : -EFAULT;
    case TIOCGPGRP: {
        int32_t pg = (int32_t)proc.pid;
        return copy_to_user(a2, &pg, 4);
    }
    default:
        return -ENOTTY;
    }
}

struct linux_stat {
    uint64_t dev, ino, nlink;
    uint32_t mode, uid, gid, pad0;
    uint64_t rdev;
    int64_t size, blksize, blocks;
    uint64_t atime, atime_ns, mtime, mtime_ns, ctime, ctime_ns;
    int64_t unused[3];
};

static long stat_fd(uint64_t fd, uint64_t buf)
{
    struct fd *f = fd_get(fd);
    if (!f)
        return -EBADF;
    struct linux_stat st = {0};
    st.dev = 5;
    st.ino = 3 + fd;
    st.nlink = 1;
    st.mode = 0020620;             /* character device, rw--w---- like a tty */
    st.uid = options.uid;
    st.gid = options.gid;
    st.rdev = (4 << 8) | 64;       /* ttyS0 */
    st.blksize = 1024;
    return copy_to_user(buf, &st, sizeof st);
}

/* No file system on a compute node yet: every path lookup fails cleanly. */
static long path_lookup(uint64_t path_va)
{
    static char path[PATH_MAX];
    long n = string_from_user(path, path_va, sizeof path);
    if (n < 0)
        return n;
    return -ENOENT;
}

SYSCALL(fstat) { UNUSED_ARGS(); return stat_fd(a0, a1); }
SYSCALL(stat)
{
    UNUSED_ARGS();
    long r = path_lookup(a0);
    if (r == -ENOENT && !user_ok(a1, sizeof(struct linux_stat)))
        return -EFAULT;
    return r;
}

SYSCALL(newfstatat)
{
    UNUSED_ARGS();
    if (a3 & AT_EMPTY_PATH) {
        char c;
        if (copy_from_user(&c, a1, 1))
            return -EFAULT;
        if (c == 0)
            return stat_fd(a0, a2);
    }
    return path_lookup(a1);
}

static long do_open(uint64_t path, uint64_t flags)
{
    long r = path_lookup(path);
    if (r == -ENOENT && ((flags & O_ACCMODE) != 0 || (flags & (O_CREAT | O_TRUNC | O_APPEND))))
        return -EROFS;  /* nothing to create files on */
    return r;
}

SYSCALL(open) { UNUSED_ARGS(); return do_open(a0, a1); }
SYSCALL(openat) { UNUSED_ARGS(); return do_open(a1, a2); }
SYSCALL(access) { UNUSED_ARGS(); return path_lookup(a0); }
SYSCALL(readlink) { UNUSED_ARGS(); return path_lookup(a0); }
SYSCALL(readlinkat) { UNUSED_ARGS(); return path_lookup(a1); }
SYSCALL(faccessat) { UNUSED_ARGS(); return path_lookup(a1); }

SYSCALL(close)
{
    UNUSED_ARGS();
    struct fd *f = fd_get(a0);
    if (!f)
        return -EBADF;
    f->kind = FD_NONE;
    return 0;
}

static long dup_to(uint64_t old, uint64_t newfd, bool cloexec)
{
    struct fd *f = fd_get(old);
    if (!f)
        return -EBADF;
    if (newfd >= MAX_FDS)
        return -EBADF;
    fds[newfd] = *f;
    fds[newfd].cloexec = cloexec;
    return (long)newfd;
}

static long dup_lowest(uint64_t old, uint64_t min, bool cloexec)
{
    if (!fd_get(old))
        return -EBADF;
    for (uint64_t i = min; i < MAX_FDS; i++)
        if (fds[i].kind == FD_NONE)
            return dup_to(old, i, cloexec);
    return -EMFILE;
}

SYSCALL(dup) { UNUSED_ARGS(); return dup_lowest(a0, 0, false); }
SYSCALL(dup2)
{
    UNUSED_ARGS();
    if (a0 == a1)
        return fd_get(a0) ? (long)a1 : -EBADF;
    return dup_to(a0, a1, false);
}
SYSCALL(dup3)
{
    UNUSED_ARGS();
    if (a0 == a1 || (a2 & ~(uint64_t)O_CLOEXEC))
        return -EINVAL;
    return dup_to(a0, a1, a2 & O_CLOEXEC);
}

#define F_DUPFD 0
#define F_GETFD 1
#define F_SETFD 2
#define F_GETFL 3
#define F_SETFL 4
#define F_DUPFD_CLOEXEC 1030

SYSCALL(fcntl)
{
    UNUSED_ARGS();
    struct fd *f = fd_get(a0);
    if (!f)
        return -EBADF;
    switch (a1) {
    case F_DUPFD: return dup_lowest(a0, a2, false);
    case F_DUPFD_CLOEXEC: return dup_lowest(a0, a2, true);
    case F_GETFD: return f->cloexec ? 1 : 0;
    case F_SETFD: f->cloexec = a2 & 1; return 0;
    case F_GETFL: return f->flags;
    case F_SETFL: f->flags = (f->flags & O_ACCMODE) | ((uint32_t)a2 & ~(uint32_t)O_ACCMODE); return 0;
    default: return -EINVAL;
    }
}

SYSCALL(getcwd)
{
    UNUSED_ARGS();
    if (a1 < 2)
        return -ERANGE;
    return copy_to_user(a0, "/", 2) ? -EFAULT : 2;
}

/* poll: console output is always writable; console input is at end of file. */
SYSCALL(poll)
{
    UNUSED_ARGS();
    struct pollfd { int32_t fd; int16_t events, revents; };
    if (a1 > MAX_FDS)
        return -EINVAL;
    if (!user_ok(a0, a1 * sizeof(struct pollfd)))
        return -EFAULT;
    struct pollfd *p = (struct pollfd *)a0;
    long ready = 0;
    for (uint64_t i = 0; i < a1; i++) {
        p[i].revents = 0;
        if (p[i].fd < 0)
            continue;
        struct fd *f = fd_get((uint64_t)p[i].fd);
        if (!f)
            p[i].revents = 0x20; /* POLLNVAL */
        else
            p[i].revents = (int16_t)(p[i].events & (f->kind == FD_CONSOLE_IN ? 0x1 : 0x4));
        if (p[i].revents)
            ready++;
    }
    return ready;
}
