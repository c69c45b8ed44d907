/*
 * Forwarded file I/O: the protocol between a compute-node kernel (the
 * client, on its own NI: pid YOD_NODE_PID on TERN_KERNEL_IFACE) and a file
 * server (yod for everything outside the fyod prefixes, or an fyod).  One
 * header for the kernel, yod and fyod: fixed-size little-endian structs,
 * nothing but <stdint.h>.
 *
 *   node kernel                             server (nid, pid)
 *   post ME over the program's buffer on
 *     FIO_PT_BULK, bits = request id
 *     (PUT for read, GET for write)
 *   post ME for the reply on FIO_PT_REPLY,
 *     bits = request id
 *   put struct fio_req (+ paths)  ------>   FIO_PT_REQ, bits FIO_MB_REQ
 *                                 <------   write: Get the bytes straight
 *                                           from the program's buffer;
 *                                           read: Put them straight into it
 *                                           (one operation per piece of at
 *                                           most FIO_PIECE bytes, several in
 *                                           flight)
 *                                 <------   put struct fio_reply, after every
 *                                           bulk operation has completed
 *   while it waits: a zero-byte put with bits FIO_MB_PING now and then; a
 *   server that does not acknowledge it (Portals gives up after ~5 s) is
 *   dead and the call returns EIO.
 *
 * Results are Linux errno values (negated), or FIO_FOLLOW_LINK; offsets,
 * flags and modes are the Linux x86-64 ABI's.  Paths are relative to the
 * server's root ("." for the root itself), NUL-terminated, normalised by
 * the kernel (no "." or ".." components); the server still refuses anything
 * that would leave its root.
 */
#ifndef FIO_PROTO_H
#define FIO_PROTO_H
#include <stdint.h>

#define FIO_MAGIC 0x4F494646u            /* "FFIO" */
#define FIO_VERSION 2                    /* 2: auth */

#define FIO_PT_REPLY 15                  /* node: replies, bits = request id */
#define FIO_PT_REQ 16                    /* server: requests */
#define FIO_PT_BULK 17                   /* node: program buffers, bits = request id */

#define FIO_MB_REQ 1                     /* match bits on FIO_PT_REQ */
#define FIO_MB_PING 2

#define FIO_PATH_MAX 4096                /* with the NUL */
#define FIO_INLINE_MAX 4096              /* reply data (readlink) */
#define FIO_PIECE (4u << 20)             /* largest bulk operation */
/* A result: the path met a symbolic link that the server, which never
 * leaves its root, does not follow (its target is absolute, or leads out).
 * The node follows it as the program's view of paths says, as an NFS
 * client resolves links: data holds the path with the link replaced by its
 * target (absolute: a path as the program sees them; else relative to the
 * server's root, ".." and all), handle which path (1, or 2: path2). */
#define FIO_FOLLOW_LINK (-0x10000)
#define FIO_PING_S 2                     /* a silent server is probed this often */

enum fio_op {
    FIO_OPEN = 1,        /* path, flags, mode -> handle, is_dir */
    FIO_CLOSE = 2,       /* handle */
    FIO_READ = 3,        /* handle, offset (-1: file position), len -> bytes put */
    FIO_WRITE = 4,       /* handle, offset (-1: file position), len -> bytes got */
    FIO_LSEEK = 5,       /* handle, offset, whence (flags) -> new position */
    FIO_FSTAT = 6,       /* handle -> st */
    FIO_STAT = 7,        /* path -> st */
    FIO_LSTAT = 8,       /* path -> st (a symlink itself) */
    FIO_ACCESS = 9,      /* path, mode (R_OK...) */
    FIO_UNLINK = 10,     /* path */
    FIO_RMDIR = 11,      /* path */
    FIO_MKDIR = 12,      /* path, mode */
    FIO_RENAME = 13,     /* path -> path2 (same server) */
    FIO_GETDENTS = 14,   /* handle, len -> linux_dirent64 records put into the buffer */
    FIO_FTRUNCATE = 15,  /* handle, len */
    FIO_TRUNCATE = 16,   /* path, len */
    FIO_FSYNC = 17,      /* handle */
    FIO_FDATASYNC = 18,  /* handle */
    FIO_READLINK = 19,   /* path -> data */
    FIO_CHDIR = 20,      /* path: is it a directory this user may enter? */
    FIO_SETFL = 21,      /* handle, flags (O_APPEND, O_NONBLOCK) */
    FIO_CLOSE_ALL = 22,  /* the rank's job has ended: close all its files */
    /* Locks, never waited for on the server (-EAGAIN while another holds
     * one in the way; the node asks again): flags FIO_LOCK_RECORD with
     * whence << 8 (fcntl's, taken as the server's open file description's:
     * each rank's open its own) or FIO_LOCK_FLOCK; mode F_RDLCK, F_WRLCK or
     * F_UNLCK, or LOCK_SH, LOCK_EX or LOCK_UN; offset and len l_start and
     * l_len (len as the int64_t it is). */
    FIO_LOCK = 23,       /* handle, flags, mode, offset, len */
    FIO_GETLK = 24,      /* the same, record locks only -> data: struct fio_lock in the way
                          * (type F_UNLCK: none) */
    FIO_FALLOCATE = 25,  /* handle, flags (fallocate's mode), offset, len */
    FIO_STATFS = 26,     /* path -> data: struct statfs of Linux x86-64 (120 bytes) */
    FIO_FSTATFS = 27,    /* handle -> the same */
    /* What a program changes about a file rather than in it.  Path forms
     * act on the file the path names (symbolic links followed beneath the
     * root) unless flags has FIO_NOFOLLOW; handle forms on the open file.
     * Owners: offset the uid, len the gid ((uint32_t)-1: unchanged).
     * Times: offset and len atime's and mtime's seconds, mode and flags
     * (FIO_TIME_NS) their nanoseconds, or UTIME_NOW, UTIME_OMIT. */
    FIO_CHMOD = 28,      /* path, mode (07777), flags */
    FIO_FCHMOD = 29,     /* handle, mode */
    FIO_CHOWN = 30,      /* path, offset, len, flags */
    FIO_FCHOWN = 31,     /* handle, offset, len */
    FIO_UTIMENS = 32,    /* path, offset, mode, len, flags */
    FIO_FUTIMENS = 33,   /* handle, the same */
    FIO_SYMLINK = 34,    /* path (the new link) -> path2 (its contents, as given) */
    FIO_LINK = 35,       /* path (the existing file) -> path2 (its new name, same server);
                          * flags FIO_FOLLOW: a symbolic link's target, not the link */
    FIO_SYNCFS = 36,     /* handle: syncfs of the file's file system */
    FIO_SYNC = 37,       /* path ".": syncfs of the served root's file system */
};
#define FIO_NOFOLLOW 0x80000000u
#define FIO_FOLLOW 0x40000000u
#define FIO_TIME_NS 0x3fffffffu          /* up to 999999999, UTIME_NOW, UTIME_OMIT */

struct fio_req {
    uint32_t magic;
    uint16_t version, op;
    uint64_t id;                         /* request id: reply and bulk match bits */
    uint32_t job, rank;
    uint32_t uid, gid;                   /* the job's owner */
    uint64_t handle;
    int64_t offset;
    uint64_t len;
    uint32_t flags, mode;
    uint32_t path_len, path2_len;        /* bytes that follow, each with its NUL */
    uint8_t auth[32];                    /* the job's grant's fio_token (include/tern/
                                          * tern_proto.h): an fyod serves only uid and
                                          * gid the allocator granted to this node */
};
#define FIO_REQ_MAX (sizeof(struct fio_req) + 2 * FIO_PATH_MAX)
#define FIO_LOCK_RECORD 0
#define FIO_LOCK_FLOCK 1

/* FIO_GETLK's answer: the lock in the way, from the start of the file. */
struct fio_lock {
    int32_t type, pid;                   /* pid: -1, an open file's lock has no process */
    int64_t start, len;
};

/* struct stat of Linux x86-64. */
struct fio_stat {
    uint64_t dev, ino, nlink;
    uint32_t mode, uid, gid, pad0;
    uint64_t rdev;
    int64_t size, blksize, blocks;
    uint64_t atime, atime_ns, mtime, mtime_ns, ctime, ctime_ns;
    int64_t unused[3];
};

struct fio_reply {
    uint32_t magic;
    uint16_t version, op;
    uint64_t id;
    int64_t result;                      /* >= 0, or -errno */
    uint64_t handle;                     /* OPEN */
    uint32_t is_dir, data_len;
    struct fio_stat st;                  /* FSTAT, STAT, LSTAT */
    char data[FIO_INLINE_MAX];           /* READLINK */
};

_Static_assert(sizeof(struct fio_req) == 104, "request layout");
_Static_assert(sizeof(struct fio_stat) == 144, "stat layout");
_Static_assert(sizeof(struct fio_reply) == 184 + FIO_INLINE_MAX, "reply layout");
#endif
