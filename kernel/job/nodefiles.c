/* Files the node answers itself instead of a file server: the ones that
 * describe the machine rather than hold data, where a forwarded answer
 * would describe the service node.  /sys/devices/system/cpu: glibc's
 * get_nprocs and get_nprocs_conf (sysconf(_SC_NPROCESSORS_ONLN and _CONF),
 * std::thread::hardware_concurrency) read its `online` and `possible`;
 * forwarded, a job on a 4-CPU node was told the service node's count.
 * /proc/cpuinfo and /proc/meminfo: what programs that count processors or
 * size themselves to memory parse (their text: procinfo.c); the rest of
 * /proc is still yod's.  files_route sends these paths here
 * (FILES_SRV_NODE); fio_call answers with nodefiles_call what a server
 * would (fio_proto.h ops), so descriptors, stat and getdents work as for
 * any file.  Read-only, as sysfs and procfs are to a program: every change
 * is EACCES.  /dev/null and /dev/zero are here too: every program may write
 * to them, and forwarded, each write was a round trip to yod (an MPI code
 * that points its other ranks' stdout at /dev/null paid it per line); they
 * behave as Linux's character devices 1:3 and 1:5. */
#include "errno.h"
#include "files.h"
#include "kernel.h"
#include "procinfo.h"
#include "uaccess.h"

#define O_ACCMODE 3
#define O_CREAT 0100
#define O_EXCL 0200
#define O_TRUNC 01000
#define O_DIRECTORY 0200000
#define W_OK 2
#define NODE_DEV 0x16            /* st_dev of these files (sysfs's is anonymous too) */
#define MAX_OPEN 64              /* of these files at once: /dev/null is opened freely */
#define CPU_DIR FILES_NODE_PREFIX

/* The node's files by absolute path; [E_DIR] is the one directory, whose
 * entries are those named under it. */
enum { E_DIR, E_ONLINE, E_POSSIBLE, E_PRESENT, E_CPUINFO, E_MEMINFO, E_NULL, E_ZERO, N_ENTRIES };
static const char *const paths[N_ENTRIES] = {
    CPU_DIR, CPU_DIR "/online", CPU_DIR "/possible", CPU_DIR "/present", "/proc/cpuinfo",
    "/proc/meminfo", "/dev/null", "/dev/zero",
};
/* The character devices: writable, no content, st_rdev as Linux's (mem 1:N). */
#define IS_DEVICE(e) ((e) == E_NULL || (e) == E_ZERO)
#define DIR_FIRST E_ONLINE       /* the directory's entries: E_ONLINE .. E_PRESENT */
#define DIR_END E_CPUINFO

static struct handle { bool used; int entry; int64_t pos; } open_files[MAX_OPEN];

static int entry_of(const char *path)
{
    for (int e = 0; e < N_ENTRIES; e++)
        if (!strcmp(path, paths[e]))
            return e;
    return -1;
}

bool nodefiles_owns(const char *abs)
{
    size_t n = sizeof CPU_DIR - 1;
    if (!strncmp(abs, CPU_DIR, n) && (abs[n] == 0 || abs[n] == '/'))
        return true;             /* the whole subtree: what is not listed is ENOENT */
    return entry_of(abs) >= 0;
}

/* An entry's text (o->ubuf 0: only its size, in o->pos). */
static void content(int entry, struct text_out *o)
{
    switch (entry) {
    case E_ONLINE: procinfo_cpulist(o, true); break;
    case E_POSSIBLE:
    case E_PRESENT: procinfo_cpulist(o, false); break;
    case E_CPUINFO: procinfo_cpuinfo(o); break;
    case E_MEMINFO: procinfo_meminfo(o); break;
    default: break;
    }
}

static uint64_t size_of(int entry)
{
    struct text_out o = {0, 0, 0, 0};
    content(entry, &o);
    return o.pos;
}

static void stat_of(int entry, struct fio_stat *st)
{
    memset(st, 0, sizeof *st);
    st->dev = NODE_DEV;
    st->ino = 1 + (uint64_t)entry;
    st->blksize = 4096;
    if (entry == E_DIR) {
        st->mode = 040755;
        st->nlink = 2;
    } else if (IS_DEVICE(entry)) {
        st->mode = 020666;
        st->nlink = 1;
        st->rdev = entry == E_NULL ? 0x103 : 0x105;
    } else {
        st->mode = 0100444;
        st->nlink = 1;
        /* What sysfs says of every attribute; procfs says 0 */
        st->size = entry < DIR_END ? 4096 : 0;
    }
}

static struct handle *handle_of(uint64_t h)
{
    if (h == 0 || h > MAX_OPEN || !open_files[h - 1].used)
        return NULL;
    return &open_files[h - 1];
}

static long do_open(const struct fio_req *req, int entry, struct fio_reply *rep)
{
    if (entry >= 0 && (req->flags & O_CREAT) && (req->flags & O_EXCL))
        return -EEXIST;
    if (!IS_DEVICE(entry) && ((req->flags & O_ACCMODE) != 0 || (req->flags & (O_CREAT | O_TRUNC))))
        return -EACCES;
    if (entry < 0)
        return -ENOENT;
    if (entry != E_DIR && (req->flags & O_DIRECTORY))
        return -ENOTDIR;
    for (int i = 0; i < MAX_OPEN; i++)
        if (!open_files[i].used) {
            open_files[i] = (struct handle){true, entry, 0};
            rep->handle = (uint64_t)i + 1;
            rep->is_dir = entry == E_DIR;
            return 0;
        }
    return -ENFILE;
}

static long do_read(struct handle *h, const struct fio_req *req, uint64_t ubuf)
{
    if (h->entry == E_NULL)
        return 0;
    if (h->entry == E_ZERO) {
        memset((void *)ubuf, 0, req->len);
        return (long)req->len;
    }
    int64_t off = req->offset < 0 ? h->pos : req->offset;
    struct text_out o = {(uint64_t)off, req->len, ubuf, 0};
    content(h->entry, &o);
    uint64_t n = text_got(&o);
    if (req->offset < 0)
        h->pos += (int64_t)n;
    return (long)n;
}

static long do_lseek(struct handle *h, const struct fio_req *req)
{
    if (IS_DEVICE(h->entry))
        return h->pos = 0;      /* as Linux's: every seek succeeds, to 0 */
    int64_t size = h->entry == E_DIR ? DIR_END - DIR_FIRST + 2 : (int64_t)size_of(h->entry);
    int64_t to;
    switch (req->flags) {
    case 0: to = req->offset; break;
    case 1: to = h->pos + req->offset; break;
    case 2: to = size + req->offset; break;
    case 3: if (req->offset >= size) return -ENXIO; to = req->offset; break;  /* SEEK_DATA */
    default: if (req->offset >= size) return -ENXIO; to = size; break;        /* SEEK_HOLE */
    }
    if (to < 0)
        return -EINVAL;
    h->pos = to;
    return (long)to;
}

/* linux_dirent64 records from position pos: ".", "..", then the files. */
static long do_getdents(struct handle *h, const struct fio_req *req, uint64_t ubuf)
{
    uint64_t used = 0;
    for (;; h->pos++) {
        const char *name;
        uint64_t ino;
        if (h->pos == 0) {
            name = ".";
            ino = 1;
        } else if (h->pos == 1) {
            name = "..";
            ino = 1;  /* what lies above is not ours to number */
        } else if (h->pos - 2 + DIR_FIRST < DIR_END) {
            int e = (int)(h->pos - 2) + DIR_FIRST;
            name = paths[e] + sizeof CPU_DIR;     /* past the directory and its '/' */
            ino = 1 + (uint64_t)e;
        } else {
            break;
        }
        uint64_t nlen = strlen(name);
        uint64_t reclen = (19 + nlen + 1 + 7) & ~7ULL;
        if (used + reclen > req->len)
            return used ? (long)used : -EINVAL;
        uint8_t rec[40];
        memset(rec, 0, sizeof rec);
        int64_t next = h->pos + 1;
        uint16_t rl = (uint16_t)reclen;
        memcpy(rec, &ino, 8);
        memcpy(rec + 8, &next, 8);
        memcpy(rec + 16, &rl, 2);
        rec[18] = h->pos < 2 ? 4 /* DT_DIR */ : 8 /* DT_REG */;
        memcpy(rec + 19, name, nlen);
        if (copy_to_user(ubuf + used, rec, reclen))
            return -EFAULT;
        used += reclen;
    }
    return (long)used;
}

long nodefiles_call(const struct fio_req *req, const char *spath, uint64_t ubuf,
                    struct fio_reply *rep)
{
    static struct fio_reply scratch;
    if (!rep)
        rep = &scratch;
    memset(rep, 0, offsetof(struct fio_reply, data));
    int entry = spath ? entry_of(spath) : -1;
    struct handle *h = NULL;
    switch (req->op) {
    case FIO_OPEN:
        return do_open(req, entry, rep);
    case FIO_STAT:
    case FIO_LSTAT:
        if (entry < 0)
            return -ENOENT;
        stat_of(entry, &rep->st);
        return 0;
    case FIO_ACCESS:
        if (entry < 0)
            return -ENOENT;
        return req->mode & W_OK && !IS_DEVICE(entry) ? -EACCES : 0;
    case FIO_CHDIR:
        return entry < 0 ? -ENOENT : entry == E_DIR ? 0 : -ENOTDIR;
    case FIO_READLINK:
        return entry < 0 ? -ENOENT : -EINVAL;
    case FIO_UNLINK:
    case FIO_RMDIR:
    case FIO_MKDIR:
    case FIO_RENAME:
        return -EACCES;
    case FIO_TRUNCATE:
        return IS_DEVICE(entry) ? -EINVAL : -EACCES;
    default:
        break;
    }
    h = handle_of(req->handle);
    if (!h)
        return -EBADF;
    switch (req->op) {
    case FIO_CLOSE:
        h->used = false;
        return 0;
    case FIO_READ:
        return do_read(h, req, ubuf);
    case FIO_LSEEK:
        return do_lseek(h, req);
    case FIO_FSTAT:
        stat_of(h->entry, &rep->st);
        return 0;
    case FIO_GETDENTS:
        return h->entry == E_DIR ? do_getdents(h, req, ubuf) : -ENOTDIR;
    case FIO_SETFL:
        return 0;
    case FIO_FSYNC:
    case FIO_FDATASYNC:
        return -EINVAL;
    case FIO_WRITE:
        return IS_DEVICE(h->entry) ? (long)req->len : -EACCES;   /* taken, and dropped */
    case FIO_FTRUNCATE:
        return IS_DEVICE(h->entry) ? -EINVAL : -EACCES;
    default:
        return -EACCES;
    }
}

void nodefiles_reset(void)
{
    memset(open_files, 0, sizeof open_files);
}
