/* Descriptors and I/O system calls.  The console writes to the host link
 * when one is configured (stdout and stderr kept apart), else to COM1, and
 * under a job to yod.  Files (under a job) are forwarded: sys/file.c. */
#include "boot.h"
#include "evobj.h"
#include "fd.h"
#include "files.h"
#include "hostlink.h"
#include "job.h"
#include "kernel.h"
#include "kmalloc.h"
#include "process.h"
#include "ranks.h"
#include "serial.h"
#include "syscall.h"
#include "uaccess.h"

#define O_ACCMODE 3
#define O_WRONLY 1
#define O_RDWR 2
#define O_CLOEXEC 02000000
#define MAX_RW 0x7FFFF000ULL       /* Linux caps one transfer at this */

static void forget(struct ofile *of)
{
    if (--of->refs == 0) {
        kfree(of->path);
        kfree(of);
    }
}

/* The descriptors are each process's (process.h): a rank's are its own.
 * Its shared file mappings hold references too (sys/file_map.c). */
static void forget_all(struct process *p)
{
    struct fd *t = p->fds;
    for (int i = 0; i < MAX_FDS; i++)
        if (t[i].kind == FD_FILE)
            forget(t[i].of);
    memset(t, 0, MAX_FDS * sizeof *t);
    for (int i = 0; i < p->nfmaps; i++)
        forget(p->fmaps[i].of);
    p->nfmaps = 0;
}

void fd_reset(void)
{
    for (unsigned r = 0; r < ranks_count(); r++)
        forget_all(ranks_process(r));
    evobj_reset();
}

void fd_init(void)
{
    evobj_reset();
    for (unsigned r = 0; r < ranks_count(); r++) {
        struct fd *t = ranks_process(r)->fds;
        forget_all(ranks_process(r));
        t[0] = (struct fd){FD_CONSOLE_IN, false, O_RDWR, {NULL}};
        t[1] = (struct fd){FD_CONSOLE_OUT, false, O_RDWR, {NULL}};
        t[2] = (struct fd){FD_CONSOLE_ERR, false, O_RDWR, {NULL}};
    }
}

unsigned fd_free_count(void)
{
    unsigned n = 0;
    for (int i = 0; i < MAX_FDS; i++)
        n += proc.fds[i].kind == FD_NONE;
    return n;
}

long fd_install(struct fd f)
{
    for (int i = 0; i < MAX_FDS; i++)
        if (proc.fds[i].kind == FD_NONE) {
            proc.fds[i] = f;
            return i;
        }
    return -EMFILE;
}

void ofile_put(struct ofile *of)
{
    if (--of->refs == 0)
        fio_release(of);
}

/* A descriptor goes away: the file with its last descriptor. */
static void fd_drop(struct fd *f)
{
    if (f->kind == FD_FILE)
        ofile_put(f->of);
    if (evobj_kind(f->kind))
        evobj_close(f);
    f->kind = FD_NONE;
    f->of = NULL;
}

struct fd *fd_get(uint64_t fd)
{
    if (fd >= MAX_FDS || proc.fds[fd].kind == FD_NONE)
        return NULL;
    return &proc.fds[fd];
}

void console_write(const struct fd *f, const void *buf, uint64_t len)
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
    if (f->kind == FD_FILE)
        return file_rw(f, buf, len, -1, true);
    if (!user_ok(buf, len))
        return -EFAULT;
    if (evobj_kind(f->kind))
        return evobj_write(f, buf, len);
    console_write(f, (const void *)buf, len);
    return (long)len;
}

static long do_read(uint64_t fd, uint64_t buf, uint64_t len)
{
    struct fd *f = fd_get(fd);
    if (!f)
        return -EBADF;
    if (f->kind == FD_FILE)
        return file_rw(f, buf, len, -1, false);
    if (len > MAX_RW)
        len = MAX_RW;
    if (!user_ok(buf, len))
        return -EFAULT;
    if (evobj_kind(f->kind))
        return evobj_read(f, buf, len);
    if (f->kind != FD_CONSOLE_IN)
        return 0;   /* stdout and stderr read nothing */
    if (job.running)
        return job_read_stdin(buf, len);
    return console_in_read(buf, len);
}

SYSCALL(write) { UNUSED_ARGS(); return do_write(a0, a1, a2); }
SYSCALL(read) { UNUSED_ARGS(); return do_read(a0, a1, a2); }

struct iovec { uint64_t base, len; };

/* readv and writev (off -1), preadv and pwritev (at off, the file
 * position unchanged). */
static long do_vector(uint64_t fd, uint64_t iov_va, uint64_t cnt, bool writing, int64_t off)
{
    if (!fd_get(fd))
        return -EBADF;
    if (off != -1 && fd_get(fd)->kind != FD_FILE)
        return -ESPIPE;
    if (off < -1)
        return -EINVAL;
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
    /* To yod a writev is one write: its pieces go in the same puts, so a
     * line split over pieces (the C library's buffer and the rest of the
     * line) reaches yod whole. */
    struct fd *f = fd_get(fd);
    if (off == -1 && writing && job.running &&
        (f->kind == FD_CONSOLE_OUT || f->kind == FD_CONSOLE_ERR || f->kind == FD_CONSOLE_IN)) {
        _Static_assert(sizeof(struct iovec) == sizeof(ptl_iovec_t), "iovec layout");
        return job_output_v(f->kind == FD_CONSOLE_ERR ? 2 : 1, (const ptl_iovec_t *)iov,
                            (unsigned)cnt);
    }
    long done = 0;
    for (uint64_t i = 0; i < cnt; i++) {
        long n = off != -1 ? file_rw(f, iov[i].base, iov[i].len, off + done, writing)
                 : writing ? do_write(fd, iov[i].base, iov[i].len)
                           : do_read(fd, iov[i].base, iov[i].len);
        if (n < 0)
            return done ? done : n;
        done += n;
        if ((uint64_t)n < iov[i].len)
            break;
    }
    return done;
}

SYSCALL(writev) { UNUSED_ARGS(); return do_vector(a0, a1, a2, true, -1); }
SYSCALL(readv) { UNUSED_ARGS(); return do_vector(a0, a1, a2, false, -1); }
/* The offset is one register on x86-64 (a4, its high half for 32-bit
 * callers, is unused); preadv's -1 is EINVAL, preadv2's the file position. */
SYSCALL(preadv) { UNUSED_ARGS(); return (int64_t)a3 < 0 ? -EINVAL : do_vector(a0, a1, a2, false, (int64_t)a3); }
SYSCALL(pwritev) { UNUSED_ARGS(); return (int64_t)a3 < 0 ? -EINVAL : do_vector(a0, a1, a2, true, (int64_t)a3); }
/* RWF_ flags: HIPRI is a hint (nothing here polls a disk), DSYNC and SYNC
 * an fdatasync or fsync after the write; others (NOWAIT, APPEND) are
 * EOPNOTSUPP, as from a file system without them. */
#define RWF_HIPRI 1
#define RWF_DSYNC 2
#define RWF_SYNC 4

static long vector2(uint64_t fd, uint64_t iov, uint64_t cnt, int64_t off, uint64_t flags,
                    bool writing)
{
    if (flags & ~(uint64_t)(RWF_HIPRI | RWF_DSYNC | RWF_SYNC))
        return -EOPNOTSUPP;
    long n = do_vector(fd, iov, cnt, writing, off);
    if (n <= 0 || !writing || !(flags & (RWF_DSYNC | RWF_SYNC)) || fd_get(fd)->kind != FD_FILE)
        return n;
    long rc = file_sync(fd_get(fd), (flags & RWF_SYNC) != 0);
    return rc < 0 ? rc : n;
}

SYSCALL(preadv2) { UNUSED_ARGS(); return vector2(a0, a1, a2, (int64_t)a3, a5, false); }
SYSCALL(pwritev2) { UNUSED_ARGS(); return vector2(a0, a1, a2, (int64_t)a3, a5, true); }

#define TCGETS 0x5401
#define TCSETS 0x5402
#define TCSETSW 0x5403
#define TCSETSF 0x5404
#define TIOCGWINSZ 0x5413
#define TIOCSWINSZ 0x5414
#define TIOCGPGRP 0x540F
#define TIOCSPGRP 0x5410
#define TIOCGSID 0x5429
#define FIONBIO 0x5421
#define FIONCLEX 0x5450
#define FIOCLEX 0x5451
#define O_NONBLOCK 04000

/* fcntl(F_SETFL) and ioctl(FIONBIO): the status flags (not the access
 * mode); a served file's server takes O_APPEND too. */
static long set_status(struct fd *f, uint32_t flags)
{
    if (f->kind == FD_FILE) {
        long rc = file_setfl(f, flags);
        if (rc < 0)
            return rc;
    }
    f->flags = (f->flags & O_ACCMODE) | (flags & ~(uint32_t)O_ACCMODE);
    return 0;
}

SYSCALL(ioctl)
{
    UNUSED_ARGS();
    struct fd *f = fd_get(a0);
    if (!f)
        return -EBADF;
    /* What Linux does for every descriptor, terminal or not. */
    switch (a1) {
    case FIOCLEX:
    case FIONCLEX:
        f->cloexec = a1 == FIOCLEX;
        return 0;
    case FIONBIO: {
        int32_t on;
        if (copy_from_user(&on, a2, sizeof on))
            return -EFAULT;
        return set_status(f, on ? f->flags | O_NONBLOCK : f->flags & ~O_NONBLOCK);
    }
    }
    /* Under yod the streams are yod's pipes, not a terminal (as for
     * `prog | cat` on Linux): the C library buffers output in blocks.
     * Input that run-node forwards from a pipe or file is not one either. */
    if (job.running || f->kind == FD_FILE || evobj_kind(f->kind) ||
        (f->kind == FD_CONSOLE_IN && options.stdin_mode == STDIN_PIPE))
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
    case TIOCGPGRP:
    case TIOCGSID: {
        int32_t pg = (int32_t)proc.pid;     /* its own session's terminal */
        return copy_to_user(a2, &pg, 4);
    }
    case TIOCSPGRP: {
        int32_t pg;
        if (copy_from_user(&pg, a2, 4))
            return -EFAULT;
        return pg == (int32_t)proc.pid ? 0 : -EPERM;   /* the only group there is */
    }
    default:
        return -ENOTTY;
    }
}

SYSCALL(close)
{
    UNUSED_ARGS();
    struct fd *f = fd_get(a0);
    if (!f)
        return -EBADF;
    fd_drop(f);
    return 0;
}

/* close_range (glibc's closefrom; a program about to run untrusted code):
 * every open descriptor from first to last, or with CLOSE_RANGE_CLOEXEC
 * marked close-on-exec.  CLOSE_RANGE_UNSHARE: the table is the process's
 * own already. */
#define CLOSE_RANGE_UNSHARE 2
#define CLOSE_RANGE_CLOEXEC 4
SYSCALL(close_range)
{
    UNUSED_ARGS();
    uint32_t first = (uint32_t)a0, last = (uint32_t)a1;
    if (first > last || (a2 & ~(uint64_t)(CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC)))
        return -EINVAL;
    for (uint64_t fd = first; fd <= last && fd < MAX_FDS; fd++) {
        struct fd *f = fd_get(fd);
        if (f && (a2 & CLOSE_RANGE_CLOEXEC))
            f->cloexec = true;
        else if (f)
            fd_drop(f);
    }
    return 0;
}

static long dup_to(uint64_t old, uint64_t newfd, bool cloexec)
{
    struct fd *f = fd_get(old);
    if (!f)
        return -EBADF;
    if (newfd >= MAX_FDS)
        return -EBADF;
    struct fd copy = *f;
    if (copy.kind == FD_FILE)
        copy.of->refs++;
    if (evobj_kind(copy.kind))
        evobj_ref(&copy);
    fd_drop(&proc.fds[newfd]);
    proc.fds[newfd] = copy;
    proc.fds[newfd].cloexec = cloexec;
    return (long)newfd;
}

long dup_lowest(uint64_t old, uint64_t min, bool cloexec)
{
    if (!fd_get(old))
        return -EBADF;
    for (uint64_t i = min; i < MAX_FDS; i++)
        if (proc.fds[i].kind == FD_NONE)
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
    case F_SETFL: return set_status(f, (uint32_t)a2);
    case 5: case 6: case 7:            /* F_GETLK, F_SETLK, F_SETLKW */
    case 36: case 37: case 38:         /* F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW */
        return file_lock(f, a1, a2);
    default: return -EINVAL;
    }
}
