/* Files the node answers itself instead of a file server: the ones that
 * describe the machine rather than hold data, where a forwarded answer
 * would describe the service node.  Today /sys/devices/system/cpu:
 * glibc's get_nprocs and get_nprocs_conf (sysconf(_SC_NPROCESSORS_ONLN and
 * _CONF), std::thread::hardware_concurrency) read its `online` and
 * `possible`; forwarded, a job on a 4-CPU node was told the service node's
 * count.  files_route sends the subtree here (FILES_SRV_NODE); fio_call
 * answers with nodefiles_call what a server would (fio_proto.h ops), so
 * descriptors, stat and getdents work as for any file.  Read-only, as sysfs
 * is to a program: every change is EACCES. */
#include "errno.h"
#include "files.h"
#include "kernel.h"
#include "smp.h"
#include "uaccess.h"

#define O_ACCMODE 3
#define O_CREAT 0100
#define O_TRUNC 01000
#define W_OK 2
#define NODE_DEV 0x16            /* st_dev of these files (sysfs's is anonymous too) */
#define MAX_OPEN 16

/* The subtree's entries: [0] is the directory itself. */
enum { E_DIR, E_ONLINE, E_POSSIBLE, E_PRESENT, N_ENTRIES };
static const char *const names[N_ENTRIES] = {".", "online", "possible", "present"};

static struct handle { bool used; int entry; int64_t pos; } open_files[MAX_OPEN];

static int entry_of(const char *spath)
{
    for (int e = 0; e < N_ENTRIES; e++)
        if (!strcmp(spath, names[e]))
            return e;
    return -1;
}

/* The text of a file entry: a CPU list as Linux writes it ("0" or "0-3"). */
static uint64_t content(int entry, char *out, size_t size)
{
    unsigned n = entry == E_ONLINE ? smp_ncpus() : smp_ncpus_found();
    int len = n > 1 ? snprintf(out, size, "0-%u\n", n - 1) : snprintf(out, size, "0\n");
    return (uint64_t)len;
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
    } else {
        st->mode = 0100444;
        st->nlink = 1;
        st->size = 4096;    /* what sysfs says of every attribute */
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
    if ((req->flags & O_ACCMODE) != 0 || (req->flags & (O_CREAT | O_TRUNC)))
        return -EACCES;
    if (entry < 0)
        return -ENOENT;
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
    char text[32];
    uint64_t size = content(h->entry, text, sizeof text);
    int64_t off = req->offset < 0 ? h->pos : req->offset;
    uint64_t n = (uint64_t)off >= size ? 0 : size - (uint64_t)off;
    if (n > req->len)
        n = req->len;
    if (n && copy_to_user(ubuf, text + off, n))
        return -EFAULT;
    if (req->offset < 0)
        h->pos += (int64_t)n;
    return (long)n;
}

static long do_lseek(struct handle *h, const struct fio_req *req)
{
    char text[32];
    int64_t size = h->entry == E_DIR ? N_ENTRIES + 1 : (int64_t)content(h->entry, text, sizeof text);
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
        } else if (h->pos - 1 < N_ENTRIES) {
            name = names[h->pos - 1];
            ino = 1 + (uint64_t)(h->pos - 1);
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
        return req->mode & W_OK ? -EACCES : 0;
    case FIO_CHDIR:
        return entry < 0 ? -ENOENT : entry == E_DIR ? 0 : -ENOTDIR;
    case FIO_READLINK:
        return entry < 0 ? -ENOENT : -EINVAL;
    case FIO_UNLINK:
    case FIO_RMDIR:
    case FIO_MKDIR:
    case FIO_RENAME:
    case FIO_TRUNCATE:
        return -EACCES;
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
    default:
        return -EACCES;   /* WRITE, FTRUNCATE: nothing here can change */
    }
}

void nodefiles_reset(void)
{
    memset(open_files, 0, sizeof open_files);
}
