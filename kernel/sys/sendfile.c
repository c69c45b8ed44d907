/* sendfile: from a forwarded file (under a job, sys/file.c) to a file or
 * the console, through a kernel buffer the file servers put into and get
 * from directly.  As on Linux the source must be a file (the console is
 * not one: EINVAL), read at *offset when given (which then moves, the
 * file's position not), else at and advancing its position. */
#include "errno.h"
#include "fd.h"
#include "kernel.h"
#include "kmalloc.h"
#include "syscall.h"
#include "uaccess.h"

#define CHUNK (64 * 1024)
#define O_ACCMODE 3
#define O_APPEND 02000
#define MAX_RW 0x7FFFF000ULL

SYSCALL(sendfile)
{
    UNUSED_ARGS();
    struct fd *out = fd_get(a0), *in = fd_get(a1);
    if (!out || !in)
        return -EBADF;
    if (in->kind != FD_FILE || in->of->dir)
        return -EINVAL;
    if ((in->flags & O_ACCMODE) == 1 /* O_WRONLY */ ||
        (out->kind == FD_FILE && (out->flags & O_ACCMODE) == 0 /* O_RDONLY */))
        return -EBADF;
    if (out->kind == FD_FILE && (out->flags & O_APPEND))
        return -EINVAL;
    int64_t off = -1;
    if (a2) {
        if (copy_from_user(&off, a2, sizeof off))
            return -EFAULT;
        if (off < 0)
            return -EINVAL;
    }
    uint64_t count = a3 > MAX_RW ? MAX_RW : a3, done = 0;
    char *buf = count ? kmalloc(CHUNK) : NULL;
    if (count && !buf)
        return -ENOMEM;
    long err = 0;
    while (done < count) {
        uint64_t want = count - done < CHUNK ? count - done : CHUNK;
        long got = file_xfer(in, buf, want, off >= 0 ? off + (int64_t)done : -1, false);
        if (got <= 0) {
            err = got;
            break;
        }
        long put = got;
        if (out->kind == FD_FILE)
            put = file_xfer(out, buf, (uint64_t)got, -1, true);
        else
            console_write(out, buf, (uint64_t)got);
        if (put < 0) {
            err = put;
            break;
        }
        done += (uint64_t)put;
        if (put < got || (uint64_t)got < want)
            break;                       /* the end of the file, or of room */
    }
    kfree(buf);
    if (a2 && done) {
        off += (int64_t)done;
        copy_to_user(a2, &off, sizeof off);
    }
    return done ? (long)done : err;
}
