/*
 * Files (MPI-IO, MPI-3.1 chapter 13).  Every rank opens the file itself and
 * reads and writes its own bytes with pread and pwrite: on a Tern node
 * through the node's file servers (yod, an fyod: docs/fileio.md), on Linux
 * through its file system.  A collective call (_all) gathers the ranks'
 * pieces by file domain first (two_phase), so that a finely strided view
 * costs a call per stretch of the whole job's data, not per piece.
 *
 * A view (disp, etype, filetype) maps the data a rank sees, counted in
 * etypes, onto the file: the filetype's type map is tiled from disp on, one
 * tile per extent, and the bytes of its blocks, in order, are the data.
 * Files' errors return their code (MPI_ERRORS_RETURN, the default handler
 * of files) unless MPI_File_set_errhandler set another: MPI_ERRORS_ARE_FATAL
 * or a function of the program's, called with the file's handle.
 * The shared file pointer is mpi_file_shared.c's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mpi_impl.h"

#define MAX_FILES MPI_FILE_SLOTS

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
    bool ext32;              /* the view's data representation is "external32" */
} files[MAX_FILES];

/* The handler of MPI_FILE_NULL: MPI_File_open's and MPI_File_delete's,
 * and what a file opened takes as its own. */
static MPI_Errhandler null_errh = MPI_ERRORS_RETURN;

/* A file's handler and handle: what an error on it is raised with; NOFILE
 * for errors with no open file (MPI_File_open's, MPI_File_delete's). */
#define FH(f) (f)->errh, (MPI_File)H_MAKE(K_FILE, (int)((f) - files))
#define NOFILE null_errh, MPI_FILE_NULL

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
        return mpi_error_handled(NOFILE, MPI_ERR_FILE, call, "%#x is not an open file",
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

/* ---- collective transfers: two phases ---- */

/* A collective read or write moves the ranks' pieces in two phases, as
 * ROMIO's collective buffering does: the file range all of them touch is
 * cut into as many domains as there are ranks, each rank sends each domain's
 * owner the pieces it has there (an all-to-all), and the owner writes, or
 * reads, its domain's pieces as the fewest contiguous stretches.  A view
 * whose pieces are small (BT-IO's cells: a few hundred bytes) costs a call
 * per stretch of the whole job's data instead of one per piece. */

struct piece {
    long long off, len;   /* in the file */
    long at;              /* in the rank's contiguous data */
};
struct pieces {
    struct piece *v;
    long n, cap;
};

static long add_piece(void *ctx, MPI_Offset foff, long len, long done)
{
    struct pieces *p = ctx;
    if (p->n == p->cap) {
        long cap = p->cap ? 2 * p->cap : 64;
        struct piece *v = realloc(p->v, (size_t)cap * sizeof *v);
        if (!v)
            return 1;
        p->v = v;
        p->cap = cap;
    }
    p->v[p->n++] = (struct piece){foff, len, done};
    return 0;
}

/* A piece a domain's owner got: where in the file, its bytes (writes), and
 * where its stretch's buffer holds it. */
struct seg {
    long long off, len;
    char *data;
    char *in_run;
};

static int by_offset(const void *a, const void *b)
{
    const struct seg *x = *(struct seg *const *)a, *y = *(struct seg *const *)b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* Reads or writes the segments as the fewest contiguous stretches of the
 * file: each seg's in_run is set to where its bytes lie in the one buffer
 * of all stretches (*runs, malloc'd).  0, or an errno. */
static int owner_io(int fd, struct seg *segs, long n, bool writing, char **runs)
{
    *runs = NULL;
    if (n == 0)
        return 0;
    struct seg **order = malloc((size_t)n * sizeof *order);
    if (!order)
        return ENOMEM;
    for (long i = 0; i < n; i++)
        order[i] = &segs[i];
    qsort(order, (size_t)n, sizeof *order, by_offset);
    long long total = 0, start = order[0]->off, end = start;
    for (long i = 0; i < n; i++) {      /* the stretches' lengths, all told */
        if (order[i]->off > end) {
            total += end - start;
            start = order[i]->off;
            end = start;
        }
        if (order[i]->off + order[i]->len > end)
            end = order[i]->off + order[i]->len;
    }
    total += end - start;
    char *buf = malloc(total ? (size_t)total : 1);
    int err = buf ? 0 : ENOMEM;
    long long pos = 0;                   /* the current stretch's start in buf */
    for (long i = 0; i < n && !err;) {
        long j = i;
        start = order[i]->off;
        end = start;
        for (; j < n && order[j]->off <= end; j++) {
            order[j]->in_run = buf + pos + (order[j]->off - start);
            if (order[j]->off + order[j]->len > end)
                end = order[j]->off + order[j]->len;
            if (writing)   /* in file order: of two that overlap, the later rank's stays */
                memcpy(order[j]->in_run, order[j]->data, (size_t)order[j]->len);
        }
        long long len = end - start;
        for (long long k = 0; k < len && !err;) {
            ssize_t r = writing ? pwrite(fd, buf + pos + k, (size_t)(len - k), start + k)
                                : pread(fd, buf + pos + k, (size_t)(len - k), start + k);
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0)
                err = errno;
            else if (r == 0)       /* past the end of the file: zeros */
                memset(buf + pos + k, 0, (size_t)(len - k)), k = len;
            else
                k += r;
        }
        pos += len;
        i = j;
    }
    free(order);
    *runs = buf;
    return err;
}

/* Where the stretch of the file from o (before e) leaves the domain it
 * starts in (domains of dom bytes from lo), and that domain's owner. */
static long long domain_cut(long long o, long long e, long long lo, long long dom, int *owner)
{
    *owner = (int)((o - lo) / dom);
    long long edge = lo + (*owner + 1) * dom;
    return edge < e ? edge : e;
}

/* The two phases for data mem (n bytes) at the view's byte at.  Returns 0,
 * an errno (every rank the same), or -1 when the ranks should each go the
 * independent way (a count past what one exchange carries). */
static int two_phase(struct mfile *f, MPI_Offset at, char *mem, long n, bool writing,
                     long *moved)
{
    int size, err = 0;
    MPI_Comm_size(f->comm, &size);
    struct pieces p = {0};
    if (view_walk(f, at, n, add_piece, &p))
        err = ENOMEM;
    long long mine[2] = {LLONG_MAX, 0}, range[2];   /* -lo and hi, for one MPI_MAX */
    for (long i = 0; i < p.n; i++) {
        if (p.v[i].off < mine[0])
            mine[0] = p.v[i].off;
        if (p.v[i].off + p.v[i].len > mine[1])
            mine[1] = p.v[i].off + p.v[i].len;
    }
    mine[0] = -mine[0];
    long long *cnt = calloc((size_t)size * 4, sizeof *cnt);   /* pieces, bytes: out, in */
    int *ic = malloc((size_t)size * 8 * sizeof *ic);
    if (!cnt || !ic)
        err = ENOMEM;
    int any_err;
    MPI_Allreduce(&err, &any_err, 1, MPI_INT, MPI_MAX, f->comm);
    MPI_Allreduce(mine, range, 2, MPI_LONG_LONG, MPI_MAX, f->comm);
    long long lo = -range[0], hi = range[1];
    int rc = 0;
    if (any_err || hi <= lo) {
        rc = any_err;
        goto out;
    }
    long long dom = (hi - lo + size - 1) / size;
    /* Each piece cut at the domains' edges: how many and how many bytes
     * go to each owner. */
    for (long i = 0; i < p.n; i++)
        for (long long o = p.v[i].off, e = o + p.v[i].len, cut; o < e; o = cut) {
            int d;
            cut = domain_cut(o, e, lo, dom, &d);
            cnt[d]++;
            cnt[size + d] += cut - o;
        }
    MPI_Alltoall(cnt, 1, MPI_LONG_LONG, cnt + 2 * size, 1, MPI_LONG_LONG, f->comm);
    MPI_Alltoall(cnt + size, 1, MPI_LONG_LONG, cnt + 3 * size, 1, MPI_LONG_LONG, f->comm);
    /* MPI's counts and displacements are ints: two per piece, one per byte. */
    long long big = 0, tot[4] = {0};
    for (int k = 0; k < 4 * size; k++)
        tot[k / size] += cnt[k];
    for (int k = 0; k < 4; k++)
        if ((k % 2 ? tot[k] : 2 * tot[k]) > big)
            big = k % 2 ? tot[k] : 2 * tot[k];
    long long worst;
    MPI_Allreduce(&big, &worst, 1, MPI_LONG_LONG, MPI_MAX, f->comm);
    if (worst > (1LL << 30)) {
        rc = -1;                        /* past an int's counts: the independent way */
        goto out;
    }
    /* Metadata (offset, length) and bytes, grouped by owner. */
    int *mc = ic, *md = ic + size, *rmc = ic + 2 * size, *rmd = ic + 3 * size;
    int *bc = ic + 4 * size, *bd = ic + 5 * size, *rbc = ic + 6 * size, *rbd = ic + 7 * size;
    for (int d = 0, m = 0, b = 0, rm = 0, rb = 0; d < size; d++) {
        mc[d] = (int)(2 * cnt[d]);
        md[d] = m;
        m += mc[d];
        bc[d] = (int)cnt[size + d];
        bd[d] = b;
        b += bc[d];
        rmc[d] = (int)(2 * cnt[2 * size + d]);
        rmd[d] = rm;
        rm += rmc[d];
        rbc[d] = (int)cnt[3 * size + d];
        rbd[d] = rb;
        rb += rbc[d];
    }
    long long *meta = malloc((size_t)(2 * tot[0] + 1) * sizeof *meta);
    long long *rmeta = malloc((size_t)(2 * tot[2] + 1) * sizeof *rmeta);
    char *out = malloc((size_t)tot[1] + 1), *in = malloc((size_t)tot[3] + 1);
    long *src_at = malloc((size_t)(tot[0] + 1) * sizeof *src_at);   /* each cut's place in mem */
    struct seg *segs = calloc((size_t)tot[2] + 1, sizeof *segs);
    /* fill: bytes, and pieces (fill + size), placed so far for each owner */
    int *fill = calloc((size_t)size * 2, sizeof *fill);
    err = meta && rmeta && out && in && src_at && segs && fill ? 0 : ENOMEM;
    MPI_Allreduce(&err, &any_err, 1, MPI_INT, MPI_MAX, f->comm);
    if (any_err) {
        rc = any_err;
        goto out2;
    }
    for (long i = 0; i < p.n; i++)
        for (long long o = p.v[i].off, e = o + p.v[i].len, cut; o < e; o = cut) {
            int d;
            cut = domain_cut(o, e, lo, dom, &d);
            long k = md[d] / 2 + fill[size + d]++;
            meta[2 * k] = o;
            meta[2 * k + 1] = cut - o;
            src_at[k] = p.v[i].at + (long)(o - p.v[i].off);
            if (writing)
                memcpy(out + bd[d] + fill[d], mem + src_at[k], (size_t)(cut - o));
            fill[d] += (int)(cut - o);
        }
    MPI_Alltoallv(meta, mc, md, MPI_LONG_LONG, rmeta, rmc, rmd, MPI_LONG_LONG, f->comm);
    if (writing)
        MPI_Alltoallv(out, bc, bd, MPI_BYTE, in, rbc, rbd, MPI_BYTE, f->comm);
    /* This rank's domain: its segments, from every rank in rank order. */
    long long b = 0;
    for (long k = 0; k < tot[2]; k++) {
        segs[k].off = rmeta[2 * k];
        segs[k].len = rmeta[2 * k + 1];
        segs[k].data = in + b;
        b += segs[k].len;
    }
    char *runs;
    err = owner_io(f->fd, segs, tot[2], writing, &runs);
    if (!writing && !err)                /* back to whoever asked, in their order */
        for (long k = 0; k < tot[2]; k++)
            memcpy(segs[k].data, segs[k].in_run, (size_t)segs[k].len);
    free(runs);
    MPI_Allreduce(&err, &any_err, 1, MPI_INT, MPI_MAX, f->comm);
    rc = any_err;
    if (!writing && !rc) {
        MPI_Alltoallv(in, rbc, rbd, MPI_BYTE, out, bc, bd, MPI_BYTE, f->comm);
        for (int d = 0; d < size; d++)
            fill[d] = 0;
        for (long k = 0; k < tot[0]; k++) {
            int d = (int)((meta[2 * k] - lo) / dom);
            memcpy(mem + src_at[k], out + bd[d] + fill[d], (size_t)meta[2 * k + 1]);
            fill[d] += (int)meta[2 * k + 1];
        }
    }
out2:
    free(meta);
    free(rmeta);
    free(out);
    free(in);
    free(src_at);
    free(segs);
    free(fill);
out:
    free(cnt);
    free(ic);
    if (!rc) {
        /* Read: the data up to the file's end, as an independent read
         * would have had it. */
        *moved = n;
        if (!writing) {
            struct stat st;
            MPI_Offset eof = fstat(f->fd, &st) ? 0 : st.st_size;
            for (long i = 0; i < p.n; i++)
                if (p.v[i].off + p.v[i].len > eof) {
                    *moved = p.v[i].at + (p.v[i].off < eof ? (long)(eof - p.v[i].off) : 0);
                    break;
                }
        }
    }
    free(p.v);
    return rc;
}

/* count elements of datatype at buf, to or from the view's data from
 * byte `at` on; collective: every rank of the file calls it, and the
 * bytes go in two phases (two_phase) when every rank's call is sound. */
static int transfer(const char *call, struct mfile *f, MPI_Offset at, void *buf, int count,
                    MPI_Datatype datatype, MPI_Status *status, bool writing, bool collective)
{
    struct mtype *mt = mpi_type_get(datatype);
    int acc = f->amode & (MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR);
    bool sound = mt && mt->committed && count >= 0 && at >= 0 &&
                 !(writing && acc == MPI_MODE_RDONLY) && !(!writing && acc == MPI_MODE_WRONLY) &&
                 !(f->ext32 && !mpi_external32_same_size(mt));
    if (collective) {
        int all;
        MPI_Allreduce(&sound, &all, 1, MPI_INT, MPI_MIN, f->comm);
        collective = all;               /* else each reports its own error below */
    }
    int rc = mpi_check_type(call, f->comm, datatype, &mt);
    if (rc)
        return rc;
    if (count < 0)
        return mpi_error_handled(FH(f), MPI_ERR_COUNT, call, "count %d", count);
    if ((writing && acc == MPI_MODE_RDONLY) || (!writing && acc == MPI_MODE_WRONLY))
        return mpi_error_handled(FH(f), MPI_ERR_ACCESS, call, "the file is open %s",
                                 writing ? "read-only" : "write-only");
    if (at < 0)
        return mpi_error_handled(FH(f), MPI_ERR_ARG, call, "offset %lld", (long long)at);
    if (f->ext32 && !mpi_external32_same_size(mt))
        return mpi_error_handled(FH(f), MPI_ERR_UNSUPPORTED_DATAREP, call,
                                 "its values change size in \"external32\" (MPI_LONG, "
                                 "MPI_WCHAR, long double): not in a file view here");
    long n = (long)count * mt->size;
    /* external32: converted through a buffer, by the walk Pack_external
     * uses; the sizes are the same, so the view places the bytes alike. */
    bool contig = mpi_contig(mt) && !f->ext32;
    char *mem = contig ? buf : malloc(n ? (size_t)n : 1);
    int nomem = !mem, any = nomem;
    if (collective)
        MPI_Allreduce(&nomem, &any, 1, MPI_INT, MPI_MAX, f->comm);
    if (any) {
        if (!contig)
            free(mem);
        return mpi_error_handled(FH(f), MPI_ERR_NO_MEM, call, "%ld bytes", n);
    }
    if (writing && !contig)
        mpi_walk(buf, count, mt, mem, true, f->ext32 ? mpi_external32_block : NULL);
    struct xfer x = {.fd = f->fd, .mem = mem, .writing = writing};
    int two = collective ? two_phase(f, at, mem, n, writing, &x.moved) : -1;
    if (two > 0)
        x.err = two;
    else if (two < 0)
        view_walk(f, at, n, move_piece, &x);
    if (!writing && !contig)
        mpi_walk(buf, x.moved / (mt->size ? mt->size : 1), mt, mem, false,
                 f->ext32 ? mpi_external32_block : NULL);
    if (!contig)
        free(mem);
    if (x.err)
        return mpi_error_handled(FH(f), io_class(x.err), call, "%s", strerror(x.err));
    mpi_status_set(status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, x.moved);
    return MPI_SUCCESS;
}

static long esize(const struct mfile *f) { return mpi_type_get(f->etype)->size; }

int mpi_file_parts(const char *call, MPI_File fh, MPI_Comm *comm, MPI_Errhandler *errh,
                   long *etype_size)
{
    struct mfile *f = NULL;
    TRY(get_file(call, fh, &f));
    *comm = f->comm;
    *errh = f->errh;
    *etype_size = esize(f);
    return MPI_SUCCESS;
}

static int file_size(struct mfile *f, const char *call, MPI_Offset *size);
static MPI_Offset view_bytes_below(const struct mfile *f, MPI_Offset size);

int mpi_file_end(const char *call, MPI_File fh, MPI_Offset *end)
{
    struct mfile *f = NULL;
    MPI_Offset size;
    TRY(get_file(call, fh, &f));
    TRY(file_size(f, call, &size));
    *end = view_bytes_below(f, size) / esize(f);
    return MPI_SUCCESS;
}

int mpi_file_at(const char *call, MPI_File fh, MPI_Offset offset, void *buf, int count,
                MPI_Datatype datatype, MPI_Status *status, bool writing, bool collective)
{
    struct mfile *f = NULL;
    TRY(get_file(call, fh, &f));
    return transfer(call, f, offset * esize(f), buf, count, datatype, status, writing,
                    collective);
}

/* With the individual file pointer, which moves past what was moved. */
static int at_pointer(const char *call, MPI_File fh, void *buf, int count,
                      MPI_Datatype datatype, MPI_Status *status, bool writing, bool collective)
{
    struct mfile *f = NULL;
    TRY(get_file(call, fh, &f));
    MPI_Status st;
    int rc = transfer(call, f, f->pos * esize(f), buf, count, datatype, &st, writing,
                      collective);
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
    return mpi_file_at("MPI_File_read_at", fh, offset, buf, count, datatype, status, false,
                     false);
}

int MPI_File_write_at(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                      MPI_Datatype datatype, MPI_Status *status)
{
    return mpi_file_at("MPI_File_write_at", fh, offset, (void *)buf, count, datatype, status,
                     true, false);
}

int MPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count,
                         MPI_Datatype datatype, MPI_Status *status)
{
    return mpi_file_at("MPI_File_read_at_all", fh, offset, buf, count, datatype, status, false,
                     true);
}

int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                          MPI_Datatype datatype, MPI_Status *status)
{
    return mpi_file_at("MPI_File_write_at_all", fh, offset, (void *)buf, count, datatype, status,
                     true, true);
}

int MPI_File_read(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return at_pointer("MPI_File_read", fh, buf, count, datatype, status, false, false);
}

int MPI_File_write(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                   MPI_Status *status)
{
    return at_pointer("MPI_File_write", fh, (void *)buf, count, datatype, status, true, false);
}

int MPI_File_read_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                      MPI_Status *status)
{
    return at_pointer("MPI_File_read_all", fh, buf, count, datatype, status, false, true);
}

int MPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                       MPI_Status *status)
{
    return at_pointer("MPI_File_write_all", fh, (void *)buf, count, datatype, status, true, true);
}

/* The nonblocking accesses do their work in the call (nothing here runs
 * beside the program to do it later) and hand back a request that is
 * complete: MPI_Wait and MPI_Test give its status.  The collective ones
 * (MPI-3.1 13.4.3) are collective in the call: every rank of the file
 * starts them in the same order, so doing each in its start call keeps
 * that order, and two_phase gathers their pieces as the blocking ones'. */
static int at_once(const char *call, MPI_File fh, bool explicit_offset, MPI_Offset offset,
                   void *buf, int count, MPI_Datatype datatype, MPI_Request *request,
                   bool writing, bool collective)
{
    struct mfile *f = NULL;
    TRY(get_file(call, fh, &f));
    MPI_Status st;
    int rc = explicit_offset
                 ? mpi_file_at(call, fh, offset, buf, count, datatype, &st, writing, collective)
                 : at_pointer(call, fh, buf, count, datatype, &st, writing, collective);
    if (rc)
        return rc;
    return mpi_req_done(call, f->comm, &st, writing, request);
}

int MPI_File_iread_at(MPI_File fh, MPI_Offset offset, void *buf, int count,
                      MPI_Datatype datatype, MPI_Request *request)
{
    return at_once("MPI_File_iread_at", fh, true, offset, buf, count, datatype, request, false,
                   false);
}

int MPI_File_iwrite_at(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                       MPI_Datatype datatype, MPI_Request *request)
{
    return at_once("MPI_File_iwrite_at", fh, true, offset, (void *)buf, count, datatype,
                   request, true, false);
}

int MPI_File_iread(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                   MPI_Request *request)
{
    return at_once("MPI_File_iread", fh, false, 0, buf, count, datatype, request, false, false);
}

int MPI_File_iwrite(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                    MPI_Request *request)
{
    return at_once("MPI_File_iwrite", fh, false, 0, (void *)buf, count, datatype, request,
                   true, false);
}

int MPI_File_iread_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count,
                          MPI_Datatype datatype, MPI_Request *request)
{
    return at_once("MPI_File_iread_at_all", fh, true, offset, buf, count, datatype, request,
                   false, true);
}

int MPI_File_iwrite_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                           MPI_Datatype datatype, MPI_Request *request)
{
    return at_once("MPI_File_iwrite_at_all", fh, true, offset, (void *)buf, count, datatype,
                   request, true, true);
}

int MPI_File_iread_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                       MPI_Request *request)
{
    return at_once("MPI_File_iread_all", fh, false, 0, buf, count, datatype, request, false,
                   true);
}

int MPI_File_iwrite_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                        MPI_Request *request)
{
    return at_once("MPI_File_iwrite_all", fh, false, 0, (void *)buf, count, datatype, request,
                   true, true);
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
        return mpi_error_handled(NOFILE, MPI_ERR_AMODE, call, "amode %#x", amode);
    int mine[2] = {amode, -amode}, all[2];
    TRY(MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, comm));
    if (all[0] != amode || -all[1] != amode)
        return mpi_error_handled(NOFILE, MPI_ERR_NOT_SAME, call,
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
        return mpi_error_handled(NOFILE, e == EMFILE ? MPI_ERR_NO_MEM : io_class(e), call,
                                 "%s: %s", path, strerror(e));
    }
    struct mfile *f = &files[slot];
    *f = (struct mfile){.in_use = true, .fd = fd, .amode = amode, .etype = MPI_BYTE,
                        .ftype = MPI_BYTE, .errh = null_errh};
    mpi_errh_ref(null_errh);
    int rc = MPI_Comm_dup(comm, &f->comm);
    if (!rc && (amode & MPI_MODE_DELETE_ON_CLOSE) && !(f->path = strdup(path)))
        rc = MPI_ERR_NO_MEM;
    if (rc) {
        close(fd);
        mpi_errh_unref(null_errh);
        *f = (struct mfile){0};
        return rc;
    }
    if (amode & MPI_MODE_APPEND) {
        struct stat st;
        f->pos = fstat(fd, &st) ? 0 : st.st_size;
    }
    *fh = H_MAKE(K_FILE, slot);
    mpi_file_shared_open(*fh, f->comm);
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
    mpi_file_shared_close(*fh);
    mpi_file_split_close(*fh);
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
    MPI_File was = *fh;
    *f = (struct mfile){0};
    *fh = MPI_FILE_NULL;
    int rc = err ? mpi_error_handled(e, was, io_class(err), "MPI_File_close", "%s", strerror(err))
                 : MPI_SUCCESS;
    mpi_errh_unref(e); /* counted while the file had it */
    return rc;
}

int MPI_File_delete(const char *filename, MPI_Info info)
{
    NEED_INIT("MPI_File_delete");
    (void)info;
    const char *path = file_path(filename);
    if (unlink(path))
        return mpi_error_handled(NOFILE, io_class(errno), "MPI_File_delete", "%s: %s", path,
                                 strerror(errno));
    return MPI_SUCCESS;
}

/* ---- the view ---- */

/* MPI-3.1 13.3: the displacements of the etype's and the filetype's type
 * maps are nonnegative and nondecreasing, and on a file open for writing
 * their regions do not overlap (else where a byte goes, or which of two
 * writes lands, would depend on the walk).  Checked a block at a time (a
 * run of contiguous bytes), as ROMIO does: a block starting inside the one
 * before is an overlap, not a decrease.  What is wrong, or NULL. */
static const char *view_type_fault(const struct mtype *t, bool writable)
{
    long prev = 0, prev_end = 0;
    FOR_BLOCKS(t, R, K) {
        long off = BLOCK_OFF(t, R, K), len = t->blocks[K].len;
        if (len == 0)
            continue;
        if (off < 0)
            return "a negative displacement";
        if (off < prev)
            return "displacements that decrease";
        if (writable && off < prev_end)
            return "regions that overlap, on a file open for writing";
        prev = off;
        prev_end = off + len;
    }
    return NULL;
}

int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                      const char *datarep, MPI_Info info)
{
    const char *call = "MPI_File_set_view";
    struct mfile *f = NULL;
    TRY(get_file(call, fh, &f));
    (void)info;
    bool ext32 = datarep && !strcmp(datarep, "external32");
    if (!datarep || (strcmp(datarep, "native") && strcmp(datarep, "internal") && !ext32))
        return mpi_error_handled(FH(f), MPI_ERR_UNSUPPORTED_DATAREP, call,
                                 "data representation \"%s\" (Tern's MPI writes \"native\" "
                                 "and \"external32\")", datarep ? datarep : "(null)");
    /* MPI-3.1 13.3: a sequential file's view goes on from where its
     * shared pointer is. */
    if (disp == MPI_DISPLACEMENT_CURRENT && (f->amode & MPI_MODE_SEQUENTIAL))
        TRY(mpi_file_shared_bytes(fh, &disp));
    if (disp < 0)
        return mpi_error_handled(FH(f), MPI_ERR_ARG, call, "displacement %lld%s",
                                 (long long)disp,
                                 disp == MPI_DISPLACEMENT_CURRENT
                                     ? " (MPI_DISPLACEMENT_CURRENT: the file is not "
                                       "MPI_MODE_SEQUENTIAL)"
                                     : "");
    struct mtype *et = NULL, *ft = NULL;
    int rc = mpi_check_type(call, f->comm, etype, &et);
    if (rc || (rc = mpi_check_type(call, f->comm, filetype, &ft)))
        return rc;
    /* external32 of values that keep their size: the view lays out the
     * file as in memory (MPI_File_get_type_extent needs no other answer). */
    if (ext32 && (!mpi_external32_same_size(et) || !mpi_external32_same_size(ft)))
        return mpi_error_handled(FH(f), MPI_ERR_UNSUPPORTED_DATAREP, call,
                                 "an etype or filetype whose values change size in "
                                 "\"external32\" (MPI_LONG, MPI_WCHAR, long double)");
    bool writable = f->amode & (MPI_MODE_WRONLY | MPI_MODE_RDWR);
    const char *fault;
    /* MPI_ERR_IO: the class ROMIO gives, so programs that check it agree. */
    if ((fault = view_type_fault(et, writable)))
        return mpi_error_handled(FH(f), MPI_ERR_IO, call, "the etype has %s", fault);
    if ((fault = view_type_fault(ft, writable)))
        return mpi_error_handled(FH(f), MPI_ERR_IO, call, "the filetype has %s", fault);
    if (et->size == 0 || ft->size % et->size)
        return mpi_error_handled(FH(f), MPI_ERR_ARG, call,
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
    f->ext32 = ext32;
    /* Collective: the shared pointer is 0 for every rank's next access. */
    return mpi_file_shared_reset(fh);
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
    strcpy(datarep, f->ext32 ? "external32" : "native");
    return MPI_SUCCESS;
}

/* ---- the individual file pointer ---- */

static int file_size(struct mfile *f, const char *call, MPI_Offset *size)
{
    struct stat st;
    if (fstat(f->fd, &st))
        return mpi_error_handled(FH(f), io_class(errno), call, "%s", strerror(errno));
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
        return mpi_error_handled(FH(f), MPI_ERR_ARG, call, "whence %d", whence);
    }
    if (to < 0)
        return mpi_error_handled(FH(f), MPI_ERR_ARG, call, "a position before the view");
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
        return mpi_error_handled(FH(f), MPI_ERR_ARG, call, "size %lld", (long long)size);
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
    return err ? mpi_error_handled(FH(f), io_class(err), call, "%s", strerror(err))
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
        return mpi_error_handled(FH(f), io_class(errno), "MPI_File_sync", "%s",
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

/* Where fh's handler is kept: the open file's, or MPI_FILE_NULL's. */
static int errh_slot(const char *call, MPI_File fh, MPI_Errhandler **slot)
{
    NEED_INIT(call);
    *slot = &null_errh;
    if (fh == MPI_FILE_NULL)
        return MPI_SUCCESS;
    struct mfile *f = NULL;
    TRY(get_file(call, fh, &f));
    *slot = &f->errh;
    return MPI_SUCCESS;
}

int MPI_File_set_errhandler(MPI_File fh, MPI_Errhandler errhandler)
{
    MPI_Errhandler *slot;
    TRY(errh_slot("MPI_File_set_errhandler", fh, &slot));
    if (!mpi_errh_valid(errhandler))
        return mpi_error_handled(*slot, fh, MPI_ERR_ARG, "MPI_File_set_errhandler",
                                 "%#x is not an error handler", (unsigned)errhandler);
    mpi_errh_ref(errhandler); /* counted while set (mpi_errors.c) */
    mpi_errh_unref(*slot);
    *slot = errhandler;
    return MPI_SUCCESS;
}

int MPI_File_get_errhandler(MPI_File fh, MPI_Errhandler *errhandler)
{
    MPI_Errhandler *slot;
    TRY(errh_slot("MPI_File_get_errhandler", fh, &slot));
    *errhandler = *slot;
    return MPI_SUCCESS;
}

int MPI_File_create_errhandler(MPI_File_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    /* One kind of handler serves communicators, windows and files: each
     * calls the function with its own handle (mpi_errors.c). */
    return MPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)fn, errhandler);
}

int MPI_File_call_errhandler(MPI_File fh, int errorcode)
{
    MPI_Errhandler *slot;
    TRY(errh_slot("MPI_File_call_errhandler", fh, &slot));
    mpi_error_handled(*slot, fh, errorcode, "MPI_File_call_errhandler", "raised by the program");
    return MPI_SUCCESS;
}
