/*
 * Files (MPI-IO, MPI-3.1 chapter 13).  Every rank opens the file itself and
 * reads and writes its own bytes with pread and pwrite: on a Tern node
 * through the node's file servers (yod, an fyod: docs/fileio.md), on Linux
 * through its file system.  A collective call (_all) does what the
 * independent one does: there is no aggregation of ranks' pieces, so a
 * strided view costs a call per contiguous piece of the file.
 *
 * A view (disp, etype, filetype) maps the data a rank sees, counted in
 * etypes, onto the file: the filetype's type map is tiled from disp on, one
 * tile per extent, and the bytes of its blocks, in order, are the data.
 * Files' errors return their code (MPI_ERRORS_RETURN, the default handler
 * of files) unless MPI_File_set_errhandler said MPI_ERRORS_ARE_FATAL.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mpi_impl.h"

#define MAX_FILES 256

static struct mfile {
    bool in_use;
    int fd;
    MPI_Comm comm;           /* a duplicate of the opener's */
    int amode;
    MPI_Offset disp;
    MPI_Datatype etype, ftype; /* derived ones are the file's own duplicates */
    MPI_Offset pos;          /* the individual file pointer, in etypes */
    int atomic;
    MPI_Errhandler errh;
    char *path;              /* for MPI_MODE_DELETE_ON_CLOSE */
} files[MAX_FILES];

/* The handler of MPI_FILE_NULL: MPI_File_open's and MPI_File_delete's. */
static MPI_Errhandler null_errh = MPI_ERRORS_RETURN;

static int io_class(int e)
{
    switch (e) {
    case ENOENT: return MPI_ERR_NO_SUCH_FILE;
    case EEXIST: return MPI_ERR_FILE_EXISTS;
    case EACCES: case EPERM: return MPI_ERR_ACCESS;
    case ENOSPC: return MPI_ERR_NO_SPACE;
    case EDQUOT: return MPI_ERR_QUOTA;
    case EROFS: return MPI_ERR_READ_ONLY;
    case ENAMETOOLONG: case EISDIR: case ENOTDIR: case ELOOP: return MPI_ERR_BAD_FILE;
    case EBUSY: case ETXTBSY: return MPI_ERR_FILE_IN_USE;
    default: return MPI_ERR_IO;
    }
}

static int get_file(const char *call, MPI_File fh, struct mfile **out)
{
    NEED_INIT(call);
    int i = H_IDX(fh);
    if (H_KIND(fh) != K_FILE || i <= 0 || i >= MAX_FILES || !files[i].in_use)
        return mpi_error_handled(null_errh, MPI_ERR_FILE, call, "%#x is not an open file",
                                 (unsigned)fh);
    *out = &files[i];
    return MPI_SUCCESS;
}

/* ROMIO's "ufs:/path" and its kin name the file system: the path is the rest. */
static const char *file_path(const char *name)
{
    const char *c = strchr(name, ':');
    return c && c - name >= 2 && c[1] == '/' ? c + 1 : name;
}

static void drop_types(struct mfile *f)
{
    if (!mpi_type_get(f->etype)->predefined)
        MPI_Type_free(&f->etype);
    if (!mpi_type_get(f->ftype)->predefined)
        MPI_Type_free(&f->ftype);
}

/* ---- the view ---- */

/* Calls piece(ctx, file offset, length, offset in the data) for each
 * contiguous stretch of the file that the view's data bytes [at, at + n)
 * lie in, in order; stops at the first non-zero return, returning it. */
static long view_walk(const struct mfile *f, MPI_Offset at, long n,
                      long (*piece)(void *ctx, MPI_Offset foff, long len, long done), void *ctx)
{
    const struct mtype *t = mpi_type_get(f->ftype);
    long tsize = t->size, text = mpi_extent(t), done = 0;
    if (n <= 0 || tsize == 0)
        return 0;
    if (mpi_contig(t))
        return piece(ctx, f->disp + at, n, 0);
    MPI_Offset tile = at / tsize;
    long skip = (long)(at % tsize);
    MPI_Offset run = -1;                  /* a stretch being gathered: its start */
    long run_len = 0, run_done = 0;
    for (; done < n; tile++) {
        MPI_Offset base = f->disp + tile * text;
        for (long R = 0; R < t->reps && done < n; R++)
        for (int K = 0; K < t->nblocks && done < n; K++) {
            long len = t->blocks[K].len, off = BLOCK_OFF(t, R, K);
            if (skip >= len) {
                skip -= len;
                continue;
            }
            off += skip;
            len -= skip;
            skip = 0;
            if (len > n - done)
                len = n - done;
            MPI_Offset foff = base + off;
            if (run >= 0 && run + run_len == foff) {
                run_len += len;
            } else {
                if (run >= 0) {
                    long r = piece(ctx, run, run_len, run_done);
                    if (r)
                        return r;
                }
                run = foff;
                run_len = len;
                run_done = done;
            }
            done += len;
        }
    }
    return run >= 0 ? piece(ctx, run, run_len, run_done) : 0;
}

/* The data bytes of the view below the file's byte size (what MPI_SEEK_END
 * counts from). */
static MPI_Offset view_bytes_below(const struct mfile *f, MPI_Offset size)
{
    const struct mtype *t = mpi_type_get(f->ftype);
    if (size <= f->disp || t->size == 0)
        return 0;
    MPI_Offset b = size - f->disp, text = mpi_extent(t);
    if (mpi_contig(t))
        return b;
    MPI_Offset tiles = b / text, rem = b % text, data = tiles * t->size;
    FOR_BLOCKS(t, R, K) {
        long off = BLOCK_OFF(t, R, K), len = t->blocks[K].len;
        if (rem > off)
            data += rem - off < len ? rem - off : len;
    }
    return data;
}

/* ---- moving bytes ---- */

struct xfer {
    int fd;
    char *mem;         /* the data, contiguous */
    bool writing;
    long moved;        /* bytes done, in the data's order */
    int err;           /* errno */
    bool eof;
};

static long move_piece(void *ctx, MPI_Offset foff, long len, long done)
{
    struct xfer *x = ctx;
    for (long k = 0; k < len;) {
        ssize_t r = x->writing ? pwrite(x->fd, x->mem + done + k, (size_t)(len - k), foff + k)
                               : pread(x->fd, x->mem + done + k, (size_t)(len - k), foff + k);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            x->err = errno;
            return 1;
        }
        if (r == 0) {          /* a read past the end of the file: done */
            x->eof = true;
            return 1;
        }
        k += r;
        x->moved = done + k;
    }
    return 0;
}

/* count elements of datatype at buf, to or from the view's data from
 * byte `at` on. */
static int transfer(const char *call, struct mfile *f, MPI_Offset at, void *buf, int count,
                    MPI_Datatype datatype, MPI_Status *status, bool writing)
{
    struct mtype *mt = NULL;
    int rc = mpi_check_type(call, f->comm, datatype, &mt);
    if (rc)
        return rc;
    if (count < 0)
        return mpi_error_handled(f->errh, MPI_ERR_COUNT, call, "count %d", count);
    int acc = f->amode & (MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR);
    if ((writing && acc == MPI_MODE_RDONLY) || (!writing && acc == MPI_MODE_WRONLY))
        return mpi_error_handled(f->errh, MPI_ERR_ACCESS, call, "the file is open %s",
                                 writing ? "read-only" : "write-only");
    if (at < 0)
        return mpi_error_handled(f->errh, MPI_ERR_ARG, call, "offset %lld", (long long)at);
    long n = (long)count * mt->size;
    bool contig = mpi_contig(mt);
    char *mem = contig ? buf : malloc(n ? (size_t)n : 1);
    if (!mem)
        return mpi_error_handled(f->errh, MPI_ERR_NO_MEM, call, "%ld bytes", n);
    if (writing && !contig)
        mpi_pack(buf, count, mt, mem);
    struct xfer x = {.fd = f->fd, .mem = mem, .writing = writing};
    view_walk(f, at, n, move_piece, &x);
    if (!writing && !contig)
        mpi_unpack(mem, x.moved / (mt->size ? mt->size : 1), mt, buf);
    if (!contig)
        free(mem);
    if (x.err)
        return mpi_error_handled(f->errh, io_class(x.err), call, "%s", strerror(x.err));
    mpi_status_set(status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, x.moved);
    return MPI_SUCCESS;
}

static long esize(const struct mfile *f) { return mpi_type_get(f->etype)->size; }

static int at_offset(const char *call, MPI_File fh, MPI_Offset offset, void *buf, int count,
                     MPI_Datatype datatype, MPI_Status *status, bool writing)
{
    struct mfile *f = NULL;
    TRY(get_file(call, fh, &f));
    return transfer(call, f, offset * esize(f), buf, count, datatype, status, writing);
}

/* With the individual file pointer, which moves past what was moved. */
static int at_pointer(const char *call, MPI_File fh, void *buf, int count,
                      MPI_Datatype datatype, MPI_Status *status, bool writing)
{
    struct mfile *f = NULL;
    TRY(get_file(call, fh, &f));
    MPI_Status st;
    int rc = transfer(call, f, f->pos * esize(f), buf, count, datatype, &st, writing);
    if (rc)
        return rc;
    long long bytes = (long long)(unsigned)st.count_lo |
                      ((long long)((unsigned)st.count_hi_and_cancelled >> 1) << 32);
    f->pos += bytes / esize(f);
    if (status != MPI_STATUS_IGNORE)
        *status = st;
    return MPI_SUCCESS;
}

int MPI_File_read_at(MPI_File fh, MPI_Offset offset, void *buf, int count,
                     MPI_Datatype datatype, MPI_Status *status)
{
    return at_offset("MPI_File_read_at", fh, offset, buf, count, datatype, status, false);
}

int MPI_File_write_at(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                      MPI_Datatype datatype, MPI_Status *status)
{
    return at_offset("MPI_File_write_at", fh, offset, (void *)buf, count, datatype, status, true);
}

int MPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count,
                         MPI_Datatype datatype, MPI_Status *status)
{
    return at_offset("MPI_File_read_at_all", fh, offset, buf, count, datatype, status, false);
}

int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                          MPI_Datatype datatype, MPI_Status *status)
{
    return at_offset("MPI_File_write_at_all", fh, offset, (void *)buf, count, datatype, status,
                     true);
}

int MPI_File_read(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return at_pointer("MPI_File_read", fh, buf, count, datatype, status, false);
}

int MPI_File_write(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                   MPI_Status *status)
{
    return at_pointer("MPI_File_write", fh, (void *)buf, count, datatype, status, true);
}

int MPI_File_read_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                      MPI_Status *status)
{
    return at_pointer("MPI_File_read_all", fh, buf, count, datatype, status, false);
}

int MPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                       MPI_Status *status)
{
    return at_pointer("MPI_File_write_all", fh, (void *)buf, count, datatype, status, true);
}

/* ---- opening and closing ---- */

int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info,
                  MPI_File *fh)
{
    const char *call = "MPI_File_open";
    NEED_INIT(call);
    (void)info;                /* no hint is used */
    struct mcomm *c = NULL;
    TRY(mpi_check_comm(call, comm, &c));
    int acc = amode & (MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR);
    if ((acc != MPI_MODE_RDONLY && acc != MPI_MODE_WRONLY && acc != MPI_MODE_RDWR) ||
        (acc == MPI_MODE_RDONLY && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL))) ||
        (acc == MPI_MODE_RDWR && (amode & MPI_MODE_SEQUENTIAL)))
        return mpi_error_handled(null_errh, MPI_ERR_AMODE, call, "amode %#x", amode);
    int mine[2] = {amode, -amode}, all[2];
    TRY(MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, comm));
    if (all[0] != amode || -all[1] != amode)
        return mpi_error_handled(null_errh, MPI_ERR_NOT_SAME, call,
                                 "the ranks gave different amodes");
    int slot = 0;
    for (int i = 1; i < MAX_FILES && !slot; i++)
        if (!files[i].in_use)
            slot = i;
    const char *path = file_path(filename);
    int flags = (acc == MPI_MODE_RDONLY ? O_RDONLY : acc == MPI_MODE_WRONLY ? O_WRONLY : O_RDWR) |
                (amode & MPI_MODE_CREATE ? O_CREAT : 0) | O_CLOEXEC;
    /* The first rank creates (exclusively, with MPI_MODE_EXCL), then the
     * others open what it made. */
    int rank, fd = -1, err = 0;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0) {
        fd = !slot ? -1 : open(path, flags | (amode & MPI_MODE_EXCL ? O_EXCL : 0), 0666);
        err = !slot ? EMFILE : fd < 0 ? errno : 0;
    }
    TRY(MPI_Bcast(&err, 1, MPI_INT, 0, comm));
    if (rank != 0 && !err) {
        fd = !slot ? -1 : open(path, flags, 0666);
        err = !slot ? EMFILE : fd < 0 ? errno : 0;
    }
    int worst;
    TRY(MPI_Allreduce(&err, &worst, 1, MPI_INT, MPI_MAX, comm));
    if (worst) {
        if (fd >= 0)
            close(fd);
        int e = err ? err : worst;
        return mpi_error_handled(null_errh, e == EMFILE ? MPI_ERR_NO_MEM : io_class(e), call,
                                 "%s: %s", path, strerror(e));
    }
    struct mfile *f = &files[slot];
    *f = (struct mfile){.in_use = true, .fd = fd, .amode = amode, .etype = MPI_BYTE,
                        .ftype = MPI_BYTE, .errh = null_errh};
    int rc = MPI_Comm_dup(comm, &f->comm);
    if (!rc && (amode & MPI_MODE_DELETE_ON_CLOSE) && !(f->path = strdup(path)))
        rc = MPI_ERR_NO_MEM;
    if (rc) {
        close(fd);
        *f = (struct mfile){0};
        return rc;
    }
    if (amode & MPI_MODE_APPEND) {
        struct stat st;
        f->pos = fstat(fd, &st) ? 0 : st.st_size;
    }
    *fh = H_MAKE(K_FILE, slot);
    return MPI_SUCCESS;
}

int MPI_File_close(MPI_File *fh)
{
    struct mfile *f = NULL;
    TRY(get_file("MPI_File_close", *fh, &f));
    /* Every rank is done with it before it may go. */
    MPI_Barrier(f->comm);
    int rank;
    MPI_Comm_rank(f->comm, &rank);
    int err = close(f->fd) ? errno : 0;
    if (f->path) {
        MPI_Barrier(f->comm);
        if (rank == 0)
            unlink(f->path);
        free(f->path);
    }
    MPI_Comm_free(&f->comm);
    drop_types(f);
    MPI_Errhandler e = f->errh;
    *f = (struct mfile){0};
    *fh = MPI_FILE_NULL;
    return err ? mpi_error_handled(e, io_class(err), "MPI_File_close", "%s", strerror(err))
               : MPI_SUCCESS;
}

int MPI_File_delete(const char *filename, MPI_Info info)
{
    NEED_INIT("MPI_File_delete");
    (void)info;
    const char *path = file_path(filename);
    if (unlink(path))
        return mpi_error_handled(null_errh, io_class(errno), "MPI_File_delete", "%s: %s", path,
                                 strerror(errno));
    return MPI_SUCCESS;
}

/* ---- the view ---- */

int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                      const char *datarep, MPI_Info info)
{
    const char *call = "MPI_File_set_view";
    struct mfile *f = NULL;
    TRY(get_file(call, fh, &f));
    (void)info;
    if (!datarep || (strcmp(datarep, "native") && strcmp(datarep, "internal")))
        return mpi_error_handled(f->errh, MPI_ERR_UNSUPPORTED_DATAREP, call,
                                 "data representation \"%s\" (Tern's MPI writes \"native\")",
                                 datarep ? datarep : "(null)");
    if (disp < 0)
        return mpi_error_handled(f->errh, MPI_ERR_ARG, call, "displacement %lld",
                                 (long long)disp);
    struct mtype *et = NULL, *ft = NULL;
    int rc = mpi_check_type(call, f->comm, etype, &et);
    if (rc || (rc = mpi_check_type(call, f->comm, filetype, &ft)))
        return rc;
    if (et->size == 0 || ft->size % et->size)
        return mpi_error_handled(f->errh, MPI_ERR_ARG, call,
                                 "the filetype's %ld bytes are not whole etypes of %ld",
                                 ft->size, et->size);
    MPI_Datatype e2 = etype, f2 = filetype;
    if (!et->predefined && (rc = MPI_Type_dup(etype, &e2)))
        return rc;
    if (!ft->predefined && (rc = MPI_Type_dup(filetype, &f2))) {
        if (e2 != etype)
            MPI_Type_free(&e2);
        return rc;
    }
    drop_types(f);
    f->disp = disp;
    f->etype = e2;
    f->ftype = f2;
    f->pos = 0;
    return MPI_SUCCESS;
}

int MPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype,
                      MPI_Datatype *filetype, char *datarep)
{
    struct mfile *f = NULL;
    TRY(get_file("MPI_File_get_view", fh, &f));
    *disp = f->disp;
    /* New handles the caller may free, as MPI says for derived types. */
    *etype = f->etype;
    *filetype = f->ftype;
    if (!mpi_type_get(f->etype)->predefined)
        MPI_Type_dup(f->etype, etype);
    if (!mpi_type_get(f->ftype)->predefined)
        MPI_Type_dup(f->ftype, filetype);
    strcpy(datarep, "native");
    return MPI_SUCCESS;
}

/* ---- the individual file pointer ---- */

static int file_size(struct mfile *f, const char *call, MPI_Offset *size)
{
    struct stat st;
    if (fstat(f->fd, &st))
        return mpi_error_handled(f->errh, io_class(errno), call, "%s", strerror(errno));
    *size = st.st_size;
    return MPI_SUCCESS;
}

int MPI_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
    const char *call = "MPI_File_seek";
    struct mfile *f = NULL;
    TRY(get_file(call, fh, &f));
    MPI_Offset to = offset;
    if (whence == MPI_SEEK_CUR) {
        to += f->pos;
    } else if (whence == MPI_SEEK_END) {
        MPI_Offset size;
        TRY(file_size(f, call, &size));
        to += view_bytes_below(f, size) / esize(f);
    } else if (whence != MPI_SEEK_SET) {
        return mpi_error_handled(f->errh, MPI_ERR_ARG, call, "whence %d", whence);
    }
    if (to < 0)
        return mpi_error_handled(f->errh, MPI_ERR_ARG, call, "a position before the view");
    f->pos = to;
    return MPI_SUCCESS;
}

int MPI_File_get_position(MPI_File fh, MPI_Offset *offset)
{
    struct mfile *f = NULL;
    TRY(get_file("MPI_File_get_position", fh, &f));
    *offset = f->pos;
    return MPI_SUCCESS;
}

static long first_byte(void *ctx, MPI_Offset foff, long len, long done)
{
    (void)len, (void)done;
    *(MPI_Offset *)ctx = foff;
    return 1;
}

int MPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp)
{
    struct mfile *f = NULL;
    TRY(get_file("MPI_File_get_byte_offset", fh, &f));
    *disp = f->disp;
    view_walk(f, offset * esize(f), 1, first_byte, disp);
    return MPI_SUCCESS;
}

/* ---- the file as a whole ---- */

int MPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
    struct mfile *f = NULL;
    TRY(get_file("MPI_File_get_size", fh, &f));
    return file_size(f, "MPI_File_get_size", size);
}

static int resize(const char *call, MPI_File fh, MPI_Offset size, bool only_grow)
{
    struct mfile *f = NULL;
    TRY(get_file(call, fh, &f));
    if (size < 0)
        return mpi_error_handled(f->errh, MPI_ERR_ARG, call, "size %lld", (long long)size);
    int rank, err = 0;
    MPI_Comm_rank(f->comm, &rank);
    /* Every rank is past what it did before the call (ROMIO's agree on the
     * size first, as much a meeting), then the first rank resizes. */
    MPI_Barrier(f->comm);
    if (rank == 0) {
        MPI_Offset now;
        TRY(file_size(f, call, &now));
        if ((!only_grow || size > now) && ftruncate(f->fd, size))
            err = errno;
    }
    MPI_Bcast(&err, 1, MPI_INT, 0, f->comm);
    return err ? mpi_error_handled(f->errh, io_class(err), call, "%s", strerror(err))
               : MPI_SUCCESS;
}

int MPI_File_set_size(MPI_File fh, MPI_Offset size)
{
    return resize("MPI_File_set_size", fh, size, false);
}

int MPI_File_preallocate(MPI_File fh, MPI_Offset size)
{
    return resize("MPI_File_preallocate", fh, size, true);
}

int MPI_File_sync(MPI_File fh)
{
    struct mfile *f = NULL;
    TRY(get_file("MPI_File_sync", fh, &f));
    if (fsync(f->fd))
        return mpi_error_handled(f->errh, io_class(errno), "MPI_File_sync", "%s",
                                 strerror(errno));
    return MPI_SUCCESS;
}

int MPI_File_get_amode(MPI_File fh, int *amode)
{
    struct mfile *f = NULL;
    TRY(get_file("MPI_File_get_amode", fh, &f));
    *amode = f->amode;
    return MPI_SUCCESS;
}

int MPI_File_get_group(MPI_File fh, MPI_Group *group)
{
    struct mfile *f = NULL;
    TRY(get_file("MPI_File_get_group", fh, &f));
    return MPI_Comm_group(f->comm, group);
}

int MPI_File_get_info(MPI_File fh, MPI_Info *info_used)
{
    struct mfile *f = NULL;
    TRY(get_file("MPI_File_get_info", fh, &f));
    return MPI_Info_create(info_used);      /* no hint is in use */
}

int MPI_File_set_info(MPI_File fh, MPI_Info info)
{
    struct mfile *f = NULL;
    (void)info;
    return get_file("MPI_File_set_info", fh, &f);
}

/* Each access is one pread or pwrite per piece, which the file servers
 * carry out whole: atomic mode asks nothing more of them. */
int MPI_File_set_atomicity(MPI_File fh, int flag)
{
    struct mfile *f = NULL;
    TRY(get_file("MPI_File_set_atomicity", fh, &f));
    f->atomic = flag != 0;
    return MPI_SUCCESS;
}

int MPI_File_get_atomicity(MPI_File fh, int *flag)
{
    struct mfile *f = NULL;
    TRY(get_file("MPI_File_get_atomicity", fh, &f));
    *flag = f->atomic;
    return MPI_SUCCESS;
}

int MPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent)
{
    struct mfile *f = NULL;
    TRY(get_file("MPI_File_get_type_extent", fh, &f));
    MPI_Aint lb;
    return MPI_Type_get_extent(datatype, &lb, extent);
}

int MPI_File_set_errhandler(MPI_File fh, MPI_Errhandler errhandler)
{
    if (errhandler != MPI_ERRORS_RETURN && errhandler != MPI_ERRORS_ARE_FATAL)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_File_set_errhandler",
                         "a file's handler is MPI_ERRORS_RETURN or MPI_ERRORS_ARE_FATAL here");
    if (fh == MPI_FILE_NULL) {
        null_errh = errhandler;
        return MPI_SUCCESS;
    }
    struct mfile *f = NULL;
    TRY(get_file("MPI_File_set_errhandler", fh, &f));
    f->errh = errhandler;
    return MPI_SUCCESS;
}

int MPI_File_get_errhandler(MPI_File fh, MPI_Errhandler *errhandler)
{
    if (fh == MPI_FILE_NULL) {
        *errhandler = null_errh;
        return MPI_SUCCESS;
    }
    struct mfile *f = NULL;
    TRY(get_file("MPI_File_get_errhandler", fh, &f));
    *errhandler = f->errh;
    return MPI_SUCCESS;
}
