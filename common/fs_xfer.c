/* The file server's bulk transfers: a read puts the file's bytes straight
 * into the program's buffer on the node, a write gets them from it, in
 * pieces of at most FIO_PIECE bytes, FS_DEPTH in flight; one reply when
 * every piece has completed. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fs_internal.h"

#define MAX_XFERS 128

struct piece {
    char *buf;
    uint64_t off, n;
    bool busy, ready;
};
struct xfer {
    bool used, writing, getdents, stop, netfail;
    struct fio_req req;
    uint32_t nid;
    int fd;
    uint64_t next, wdone;      /* bytes issued; bytes written (write) */
    uint64_t total;            /* read: bytes put */
    int err, inflight;
    struct piece p[FS_DEPTH];
};
static struct xfer xfers[MAX_XFERS];

static void xfer_free(struct xfer *x)
{
    for (int i = 0; i < FS_DEPTH; i++)
        free(x->p[i].buf);
    memset(x, 0, sizeof *x);
}

static void xfer_finish(struct xfer *x)
{
    if (!x->netfail) {
        uint64_t done = x->writing ? x->wdone : x->total;
        fs_reply_result(x->nid, &x->req, done ? (int64_t)done : x->err ? -x->err : 0);
    }
    xfer_free(x);
}

static bool issue(struct xfer *x, int s);

/* The size of the next piece, slot s's buffer allocated for it; 0 when
 * there is no memory (x->err says so). */
static uint64_t next_piece(struct xfer *x, int s)
{
    struct piece *p = &x->p[s];
    uint64_t n = x->req.len - x->next;
    if (n > FIO_PIECE)
        n = FIO_PIECE;
    if (!p->buf && !(p->buf = malloc(FIO_PIECE < x->req.len ? FIO_PIECE : x->req.len))) {
        x->err = ENOMEM;
        return 0;
    }
    return n;
}

/* The operation (and MD over slot s's buffer, n bytes) for one piece's put
 * or get; NULL when there is none (x->err says so). */
static struct op *piece_op(struct xfer *x, int s, uint64_t n, unsigned options)
{
    struct op *op = fs_op_new(OP_PIECE);
    ptl_md_t mdd = {.start = x->p[s].buf, .length = n, .options = options,
                    .eq_handle = fs_cfg.eq, .ct_handle = PTL_CT_NONE};
    if (!op || PtlMDBind(fs_cfg.ni, &mdd, &op->md) != PTL_OK) {
        fs_log("no operation for a transfer (%s)", op ? "MD" : "ops");
        if (op)
            op->kind = OP_FREE;
        x->err = ENOMEM;
        return NULL;
    }
    op->x = x;
    op->slot = s;
    return op;
}

/* The put or get of a piece was refused: its operation goes back. */
static bool piece_op_failed(struct xfer *x, struct op *op)
{
    PtlMDRelease(op->md);
    op->kind = OP_FREE;
    x->err = EIO;
    return false;
}

/* Reads the next piece into slot s and puts it to the node. */
static bool issue_read(struct xfer *x, int s)
{
    struct piece *p = &x->p[s];
    uint64_t n = next_piece(x, s);
    if (!n)
        return false;
    ssize_t k;
    if (x->getdents)
        k = syscall(SYS_getdents64, x->fd, p->buf, n);
    else if (x->req.offset >= 0)
        k = pread(x->fd, p->buf, n, x->req.offset + (off_t)x->next);
    else
        k = read(x->fd, p->buf, n);
    if (k < 0) {
        x->err = errno;
        return false;
    }
    if (k == 0)
        return false;
    struct op *op = piece_op(x, s, (uint64_t)k, PTL_MD_EVENT_SEND_DISABLE);
    if (!op)
        return false;
    if (PtlPut(op->md, 0, (ptl_size_t)k, PTL_ACK_REQ, fs_node(x->nid), FIO_PT_BULK, x->req.id,
               x->next, op, 0) != PTL_OK)
        return piece_op_failed(x, op);
    p->busy = true;
    p->off = x->next;
    p->n = (uint64_t)k;
    x->next += (uint64_t)k;
    x->inflight++;
    /* A short read is the end of the file (or one directory batch). */
    return (uint64_t)k == n && !x->getdents;
}

/* Gets the next piece of what the program writes into slot s. */
static bool issue_write(struct xfer *x, int s)
{
    struct piece *p = &x->p[s];
    uint64_t n = next_piece(x, s);
    if (!n)
        return false;
    struct op *op = piece_op(x, s, n, 0);
    if (!op)
        return false;
    if (PtlGet(op->md, 0, n, fs_node(x->nid), FIO_PT_BULK, x->req.id, x->next, op) != PTL_OK)
        return piece_op_failed(x, op);
    p->busy = true;
    p->ready = false;
    p->off = x->next;
    p->n = n;
    x->next += n;
    x->inflight++;
    return true;
}

static bool issue(struct xfer *x, int s)
{
    if (x->stop || x->next >= x->req.len) {
        x->stop = true;
        return false;
    }
    bool more = x->writing ? issue_write(x, s) : issue_read(x, s);
    if (!more)
        x->stop = true;
    return more;
}

/* Writes the pieces that have arrived, in file order. */
static void write_ready(struct xfer *x)
{
    for (;;) {
        struct piece *p = NULL;
        for (int i = 0; i < FS_DEPTH; i++)
            if (x->p[i].busy && x->p[i].ready && x->p[i].off == x->wdone)
                p = &x->p[i];
        if (!p)
            return;
        p->busy = false;
        if (x->err || x->netfail)
            continue;
        uint64_t left = p->n;
        const char *b = p->buf;
        while (left) {
            ssize_t k = x->req.offset >= 0
                            ? pwrite(x->fd, b, left, x->req.offset + (off_t)x->wdone)
                            : write(x->fd, b, left);
            if (k <= 0) {
                x->err = k < 0 ? errno : ENOSPC;
                x->stop = true;
                break;
            }
            x->wdone += (uint64_t)k;
            b += k;
            left -= (uint64_t)k;
        }
        if (left)
            return;     /* the rest stays unwritten: the reply says how much was */
        if (!x->stop)
            issue(x, (int)(p - x->p));
    }
}

void fs_xfer_piece_done(struct op *op, const ptl_event_t *ev)
{
    struct xfer *x = op->x;
    int s = op->slot;
    PtlMDRelease(op->md);
    op->kind = OP_FREE;
    x->inflight--;
    if (ev->ni_fail_type != PTL_NI_OK) {
        /* The node is gone or dropped the job: nobody waits for a reply. */
        if (!x->netfail)
            fs_log("nid %u (job %u rank %u) did not take part of a transfer (Portals "
                   "failure %d): dropped", x->nid, x->req.job, x->req.rank, (int)ev->ni_fail_type);
        x->netfail = true;
        x->stop = true;
        x->p[s].busy = false;
    } else if (x->writing) {
        x->p[s].ready = true;
        if (ev->mlength != x->p[s].n) {
            x->netfail = true;
            x->stop = true;
        }
        write_ready(x);
    } else {
        x->p[s].busy = false;
        x->total += x->p[s].n;
        issue(x, s);
    }
    if (x->inflight == 0) {
        if (x->writing && x->wdone < x->next && !x->err && !x->netfail)
            write_ready(x);
        if (x->inflight == 0)
            xfer_finish(x);
    }
}

void fs_xfer_start(uint32_t nid, const struct fio_req *r, struct file *f, bool writing,
                   bool getdents)
{
    if (r->len == 0) {
        fs_reply_result(nid, r, 0);
        return;
    }
    struct xfer *x = NULL;
    for (int i = 0; i < MAX_XFERS && !x; i++)
        if (!xfers[i].used)
            x = &xfers[i];
    if (!x) {
        fs_reply_result(nid, r, -EAGAIN);
        return;
    }
    memset(x, 0, sizeof *x);
    x->used = true;
    x->writing = writing;
    x->getdents = getdents;
    x->req = *r;
    x->nid = nid;
    x->fd = f->fd;
    if (getdents && x->req.len > 65536)
        x->req.len = 65536;    /* one batch per call, as the kernel does */
    for (int s = 0; s < FS_DEPTH; s++)
        if (!issue(x, s))
            break;
    if (x->inflight == 0)
        xfer_finish(x);
}
