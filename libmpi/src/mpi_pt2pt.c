/*
 * Point to point: argument checks, starting a send or a receive on the
 * engine, the blocking and nonblocking calls, persistent requests, probes
 * and buffered sends.
 *
 * Modes: a standard or ready send is eager up to the eager limit
 * (TERN_MPI_EAGER) and rendezvous above; a synchronous send is always
 * rendezvous (it completes when the receiver pulls it, so a receive has
 * matched it); a buffered send copies into the attached buffer and is
 * complete at once.  A message to oneself is copied by the engine at once,
 * whatever the mode (so an MPI_Ssend to oneself does not wait for the
 * receive: a deviation no correct program can see).
 */
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

/* ---- checks ---- */

int mpi_check_rank(const char *call, const struct mcomm *c, MPI_Comm comm, int r, bool any_ok)
{
    if ((r >= 0 && r < mpi_peers(c)) || r == MPI_PROC_NULL || (any_ok && r == MPI_ANY_SOURCE))
        return MPI_SUCCESS;
    return mpi_error(comm, MPI_ERR_RANK, call, "rank %d is not in 0..%d (communicator %s)", r,
                     mpi_peers(c) - 1, c->name[0] ? c->name : "of the program's");
}

int mpi_check_tag(const char *call, MPI_Comm comm, int tag, bool any_ok)
{
    if ((tag >= 0 && tag <= TAG_UB) || (any_ok && tag == MPI_ANY_TAG))
        return MPI_SUCCESS;
    return mpi_error(comm, MPI_ERR_TAG, call, "tag %d is not in 0..MPI_TAG_UB (%d)", tag,
                     TAG_UB);
}

int mpi_check_count(const char *call, MPI_Comm comm, int count)
{
    if (count >= 0)
        return MPI_SUCCESS;
    return mpi_error(comm, MPI_ERR_COUNT, call, "count %d is negative", count);
}

int mpi_check_buf(const char *call, MPI_Comm comm, const void *buf, int count,
                  const struct mtype *t)
{
    /* NULL is MPI_BOTTOM: legal with derived types of absolute addresses. */
    if (!buf && count > 0 && t->size > 0 && t->predefined)
        return mpi_error(comm, MPI_ERR_BUFFER, call, "NULL buffer for %d elements of %s",
                         count, t->name);
    return MPI_SUCCESS;
}

static int check_args(const char *call, MPI_Comm comm, const void *buf, int count,
                      MPI_Datatype type, int peer, int tag, bool recv, struct mcomm **c)
{
    TRY(mpi_check_comm(call, comm, c));
    struct mtype *t;
    TRY(mpi_check_type(call, comm, type, &t));
    TRY(mpi_check_count(call, comm, count));
    TRY(mpi_check_buf(call, comm, buf, count, t));
    TRY(mpi_check_rank(call, *c, comm, peer, recv));
    TRY(mpi_check_tag(call, comm, tag, recv));
    return MPI_SUCCESS;
}

/* ---- buffered sends: the attached buffer ---- */

#define MAX_SEGS 4096
static struct {
    char *base;
    long size;
    struct seg {
        long off, len;
        struct msg_req *er;
        struct mreq *owner; /* the request that sent it, while that lives: a cancel */
    } segs[MAX_SEGS];
    int nsegs; /* sorted by offset */
} battach;

void mpi_bsend_reap(void)
{
    int k = 0;
    for (int i = 0; i < battach.nsegs; i++) {
        struct seg *s = &battach.segs[i];
        if (s->er && s->er->done) {
            msg_req_free(s->er);
            continue;
        }
        battach.segs[k++] = *s;
    }
    battach.nsegs = k;
}

/* First fit among the gaps; -1 if none is big enough. */
static long seg_alloc(long len)
{
    long at = 0;
    int i = 0;
    for (; i <= battach.nsegs; i++) {
        long end = i < battach.nsegs ? battach.segs[i].off : battach.size;
        if (end - at >= len)
            break;
        if (i < battach.nsegs)
            at = battach.segs[i].off + battach.segs[i].len;
    }
    if (i > battach.nsegs || battach.nsegs == MAX_SEGS)
        return -1;
    memmove(&battach.segs[i + 1], &battach.segs[i],
            sizeof battach.segs[0] * (size_t)(battach.nsegs - i));
    battach.segs[i] = (struct seg){at, len, NULL, NULL};
    battach.nsegs++;
    return i;
}

int MPI_Buffer_attach(void *buffer, int size)
{
    NEED_INIT("MPI_Buffer_attach");
    if (battach.base)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_BUFFER, "MPI_Buffer_attach",
                         "a buffer is attached already");
    if (size < 0 || (!buffer && size))
        return mpi_error(MPI_COMM_NULL, MPI_ERR_BUFFER, "MPI_Buffer_attach",
                         "bad buffer (size %d)", size);
    battach.base = buffer;
    battach.size = size;
    battach.nsegs = 0;
    return MPI_SUCCESS;
}

int MPI_Buffer_detach(void *buffer_addr, int *size)
{
    NEED_INIT("MPI_Buffer_detach");
    /* Blocks until every message buffered in it is gone (MPI-3.1 3.6.1). */
    while (battach.nsegs) {
        mpi_bsend_reap();
        if (battach.nsegs)
            msg_progress(true);
    }
    *(void **)buffer_addr = battach.base;
    *size = (int)battach.size;
    battach.base = NULL;
    battach.size = 0;
    return MPI_SUCCESS;
}

/* r is done or freed: a later cancel must not find its earlier messages. */
void mpi_bsend_forget(struct mreq *r)
{
    for (int i = 0; i < battach.nsegs; i++)
        if (battach.segs[i].owner == r)
            battach.segs[i].owner = NULL;
}

/* A buffered send's request is complete at once; its message may still
 * wait unmatched at the receiver, and MPI_Cancel may take it back there
 * (MPI-3.1 3.8.4).  The answer is waited for here: the request has no
 * engine request of its own to wait on. */
void mpi_bsend_cancel(struct mreq *r)
{
    for (int i = 0; i < battach.nsegs; i++) {
        struct msg_req *e = battach.segs[i].er;
        if (battach.segs[i].owner != r || !e)
            continue;
        battach.segs[i].owner = NULL;
        msg_cancel_send(e);
        while (e->cancel_asked)
            msg_progress(true);
        if (e->cancelled)
            r->status.count_hi_and_cancelled |= 1;
        return;
    }
}

static int bsend(const char *call, struct mreq *r, const void *data, long bytes, int dest_world,
                 uint64_t bits)
{
    long need = bytes + MPI_BSEND_OVERHEAD;
    if (r->persistent) /* its last start's message is no longer its own */
        mpi_bsend_forget(r);
    mpi_bsend_reap();
    int i = seg_alloc(need);
    if (i < 0) {
        msg_progress(false);
        mpi_bsend_reap();
        i = seg_alloc(need);
    }
    if (i < 0)
        return mpi_error(r->comm, MPI_ERR_BUFFER, call,
                         "%ld bytes (with MPI_BSEND_OVERHEAD) do not fit in what is free of "
                         "the %ld-byte attached buffer", need, battach.size);
    struct seg *s = &battach.segs[i];
    s->owner = r;
    char *copy = battach.base + s->off;
    memcpy(copy, data, (size_t)bytes);
    s->er = msg_req_new(true);
    if (!s->er) {
        memmove(s, s + 1, sizeof *s * (size_t)(battach.nsegs - i - 1));
        battach.nsegs--;
        return mpi_error(r->comm, MPI_ERR_INTERN, call, "no engine request left");
    }
    msg_isend(s->er, dest_world, bits, copy, (uint64_t)bytes, 0);
    return MPI_SUCCESS;
}

/* ---- starting a request on the engine ---- */

int mpi_req_start(const char *call, struct mreq *r)
{
    r->active = true;
    r->done_now = false;
    r->er = NULL;
    if (r->peer == MPI_PROC_NULL) {
        mpi_status_set(&r->status, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0);
        r->done_now = true;
        return MPI_SUCCESS;
    }
    struct mcomm *c = mpi_comm_get(r->comm);
    struct mtype *t = mpi_type_get(r->type);
    if (!c || !t)
        return mpi_error(r->comm, MPI_ERR_REQUEST, call,
                         "the request's communicator or datatype was freed");
    long bytes = (long)r->count * t->size;
    bool contig = mpi_contig(t);
    uint64_t bits = mpi_bits(2 * c->ctx, r->tag);
    if (r->kind == R_SEND) {
        const void *data = r->buf;
        if (!contig && bytes) {
            r->tmp = malloc((size_t)bytes);
            if (!r->tmp)
                return mpi_error(r->comm, MPI_ERR_NO_MEM, call,
                                 "no memory to pack %ld bytes", bytes);
            mpi_pack(r->buf, r->count, t, r->tmp);
            data = r->tmp;
        }
        mpi_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0);
        if (r->mode == 'B') {
            int rc = bsend(call, r, data, bytes, mpi_world_of(c, r->peer), bits);
            free(r->tmp);
            r->tmp = NULL;
            r->done_now = true;
            return rc;
        }
        r->er = msg_req_new(false);
        if (!r->er)
            return mpi_error(r->comm, MPI_ERR_INTERN, call,
                             "all engine requests are in use (TERN_MPI_REQUESTS)");
        msg_isend(r->er, mpi_world_of(c, r->peer), bits, data, (uint64_t)bytes,
                  r->mode == 'S' ? MSG_SYNC : 0);
        return MPI_SUCCESS;
    }
    void *into = r->buf;
    if (!contig && bytes) {
        r->tmp = malloc((size_t)bytes);
        if (!r->tmp)
            return mpi_error(r->comm, MPI_ERR_NO_MEM, call, "no memory for %ld bytes", bytes);
        into = r->tmp;
    }
    r->er = msg_req_new(false);
    if (!r->er)
        return mpi_error(r->comm, MPI_ERR_INTERN, call,
                         "all engine requests are in use (TERN_MPI_REQUESTS)");
    if (r->matched) { /* MPI_Mrecv: that message, whatever else is there */
        msg_mrecv(r->er, r->matched, into, (uint64_t)bytes);
        r->matched = NULL;
        return MPI_SUCCESS;
    }
    bool any_tag = r->tag == MPI_ANY_TAG;
    msg_irecv(r->er, r->peer == MPI_ANY_SOURCE ? MSG_ANY_SOURCE : mpi_world_of(c, r->peer),
              mpi_bits(2 * c->ctx, any_tag ? 0 : r->tag), any_tag ? TAG_BITS : 0, into,
              (uint64_t)bytes);
    return MPI_SUCCESS;
}

void mpi_req_fill(struct mreq *r, enum rkind kind, int mode, const void *buf, int count,
                  MPI_Datatype type, int peer, int tag, MPI_Comm comm)
{
    r->kind = kind;
    r->mode = mode;
    r->buf = (void *)buf;
    r->count = count;
    r->type = type;
    r->peer = peer;
    r->tag = tag;
    r->comm = comm;
}

int mpi_req_blocking(const char *call, struct mreq *r, MPI_Status *status)
{
    int rc = mpi_req_start(call, r);
    if (rc) {
        free(r->tmp);
        return rc;
    }
    mpi_req_wait(r);
    mpi_status_out(status, &r->status);
    if (r->status.MPI_ERROR == MPI_ERR_TRUNCATE)
        return mpi_error(r->comm, MPI_ERR_TRUNCATE, call,
                         "the message from rank %d (tag %d) is longer than the receive buffer "
                         "of %lld bytes", r->status.MPI_SOURCE, r->status.MPI_TAG,
                         (long long)r->count * mpi_type_get(r->type)->size);
    return MPI_SUCCESS;
}

static int send_mode(const char *call, int mode, const void *buf, int count, MPI_Datatype type,
                     int dest, int tag, MPI_Comm comm)
{
    struct mcomm *c;
    TRY(check_args(call, comm, buf, count, type, dest, tag, false, &c));
    struct mreq r = {0};
    mpi_req_fill(&r, R_SEND, mode, buf, count, type, dest, tag, comm);
    return mpi_req_blocking(call, &r, MPI_STATUS_IGNORE);
}

int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
             MPI_Comm comm)
{
    return send_mode("MPI_Send", 0, buf, count, datatype, dest, tag, comm);
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
              MPI_Comm comm)
{
    return send_mode("MPI_Ssend", 'S', buf, count, datatype, dest, tag, comm);
}

int MPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
              MPI_Comm comm)
{
    return send_mode("MPI_Rsend", 'R', buf, count, datatype, dest, tag, comm);
}

int MPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
              MPI_Comm comm)
{
    return send_mode("MPI_Bsend", 'B', buf, count, datatype, dest, tag, comm);
}

int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    struct mcomm *c;
    TRY(check_args("MPI_Recv", comm, buf, count, datatype, source, tag, true, &c));
    struct mreq r = {0};
    mpi_req_fill(&r, R_RECV, 0, buf, count, datatype, source, tag, comm);
    return mpi_req_blocking("MPI_Recv", &r, status);
}

/* Nonblocking and persistent: a request in the table. */
static int make(const char *call, enum rkind kind, int mode, const void *buf, int count,
                MPI_Datatype type, int peer, int tag, MPI_Comm comm, MPI_Request *request,
                bool persistent)
{
    struct mcomm *c;
    TRY(check_args(call, comm, buf, count, type, peer, tag, kind == R_RECV, &c));
    struct mreq *r = mpi_req_new(call, comm);
    if (!r)
        return MPI_ERR_INTERN;
    mpi_req_fill(r, kind, mode, buf, count, type, peer, tag, comm);
    r->holds_type = mpi_type_hold(type);
    r->persistent = persistent;
    if (!persistent) {
        int rc = mpi_req_start(call, r);
        if (rc) {
            mpi_req_release(r);
            return rc;
        }
    }
    *request = mpi_req_handle(r);
    return MPI_SUCCESS;
}

int MPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
              MPI_Comm comm, MPI_Request *request)
{
    return make("MPI_Isend", R_SEND, 0, buf, count, datatype, dest, tag, comm, request, false);
}

int MPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm, MPI_Request *request)
{
    return make("MPI_Issend", R_SEND, 'S', buf, count, datatype, dest, tag, comm, request,
                false);
}

int MPI_Irsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm, MPI_Request *request)
{
    return make("MPI_Irsend", R_SEND, 'R', buf, count, datatype, dest, tag, comm, request,
                false);
}

int MPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm, MPI_Request *request)
{
    return make("MPI_Ibsend", R_SEND, 'B', buf, count, datatype, dest, tag, comm, request,
                false);
}

int MPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    return make("MPI_Irecv", R_RECV, 0, buf, count, datatype, source, tag, comm, request, false);
}

int MPI_Send_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                  MPI_Comm comm, MPI_Request *request)
{
    return make("MPI_Send_init", R_SEND, 0, buf, count, datatype, dest, tag, comm, request,
                true);
}

int MPI_Ssend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request)
{
    return make("MPI_Ssend_init", R_SEND, 'S', buf, count, datatype, dest, tag, comm, request,
                true);
}

int MPI_Rsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request)
{
    return make("MPI_Rsend_init", R_SEND, 'R', buf, count, datatype, dest, tag, comm, request,
                true);
}

int MPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request)
{
    return make("MPI_Bsend_init", R_SEND, 'B', buf, count, datatype, dest, tag, comm, request,
                true);
}

int MPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                  MPI_Comm comm, MPI_Request *request)
{
    return make("MPI_Recv_init", R_RECV, 0, buf, count, datatype, source, tag, comm, request,
                true);
}

int MPI_Start(MPI_Request *request)
{
    NEED_INIT("MPI_Start");
    struct mreq *r = mpi_req_get(*request);
    if (!r || !r->persistent)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_REQUEST, "MPI_Start",
                         "not a persistent request");
    if (r->active)
        return mpi_error(r->comm, MPI_ERR_REQUEST, "MPI_Start",
                         "the request is active already (waited for since its last start?)");
    if (r->kind == R_PCOLL)
        return mpi_pcoll_start("MPI_Start", r);
    return mpi_req_start("MPI_Start", r);
}

int MPI_Startall(int count, MPI_Request array_of_requests[])
{
    for (int i = 0; i < count; i++)
        TRY(MPI_Start(&array_of_requests[i]));
    return MPI_SUCCESS;
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                 int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                 int recvtag, MPI_Comm comm, MPI_Status *status)
{
    struct mcomm *c;
    TRY(check_args("MPI_Sendrecv", comm, sendbuf, sendcount, sendtype, dest, sendtag, false,
                   &c));
    TRY(check_args("MPI_Sendrecv", comm, recvbuf, recvcount, recvtype, source, recvtag, true,
                   &c));
    struct mreq rr = {0}, sr = {0};
    mpi_req_fill(&rr, R_RECV, 0, recvbuf, recvcount, recvtype, source, recvtag, comm);
    mpi_req_fill(&sr, R_SEND, 0, sendbuf, sendcount, sendtype, dest, sendtag, comm);
    TRY(mpi_req_start("MPI_Sendrecv", &rr));
    int rc = mpi_req_blocking("MPI_Sendrecv", &sr, MPI_STATUS_IGNORE);
    mpi_req_wait(&rr);
    if (rc)
        return rc;
    mpi_status_out(status, &rr.status);
    if (rr.status.MPI_ERROR == MPI_ERR_TRUNCATE)
        return mpi_error(comm, MPI_ERR_TRUNCATE, "MPI_Sendrecv",
                         "the message from rank %d (tag %d) is longer than the receive buffer",
                         rr.status.MPI_SOURCE, rr.status.MPI_TAG);
    return MPI_SUCCESS;
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                         int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    struct mcomm *c;
    TRY(check_args("MPI_Sendrecv_replace", comm, buf, count, datatype, dest, sendtag, false,
                   &c));
    struct mtype *t = mpi_type_get(datatype);
    long bytes = (long)count * t->size;
    void *copy = malloc(bytes ? (size_t)bytes : 1);
    if (!copy)
        return mpi_error(comm, MPI_ERR_NO_MEM, "MPI_Sendrecv_replace", "no memory for %ld bytes",
                         bytes);
    mpi_pack(buf, count, t, copy);
    int rc = MPI_Sendrecv(copy, (int)bytes, MPI_BYTE, dest, sendtag, buf, count, datatype,
                          source, recvtag, comm, status);
    free(copy);
    return rc;
}

/* MPI_Isendrecv(_replace): an R_PAIR request over two halves started now,
 * the receive first (its message may be on its way already).  The send
 * takes sendcount elements of sendtype at send_data; tmp (or NULL) is
 * the request's to free. */
static int isendrecv(const char *call, const void *send_data, int sendcount,
                     MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf, int recvcount,
                     MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, void *tmp,
                     MPI_Request *request)
{
    struct mreq *r = mpi_req_new(call, comm);
    struct mreq *h = r ? calloc(2, sizeof *h) : NULL;
    if (!h) {
        free(tmp);
        if (!r)
            return MPI_ERR_INTERN;
        mpi_req_release(r);
        return mpi_error(comm, MPI_ERR_NO_MEM, call, "no memory for a request");
    }
    mpi_req_fill(r, R_PAIR, 0, recvbuf, recvcount, recvtype, source, recvtag, comm);
    r->tmp = tmp;
    r->half = h;
    r->active = true;
    mpi_req_fill(&h[0], R_SEND, 0, send_data, sendcount, sendtype, dest, sendtag, comm);
    mpi_req_fill(&h[1], R_RECV, 0, recvbuf, recvcount, recvtype, source, recvtag, comm);
    for (int i = 0; i < 2; i++) {
        h[i].in_use = true;
        h[i].holds_type = mpi_type_hold(h[i].type);
    }
    int rc = mpi_req_start(call, &h[1]);
    if (!rc)
        rc = mpi_req_start(call, &h[0]);
    if (rc) {
        mpi_req_release(r); /* takes back a receive already posted */
        return rc;
    }
    *request = mpi_req_handle(r);
    return MPI_SUCCESS;
}

int MPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                  int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                  int recvtag, MPI_Comm comm, MPI_Request *request)
{
    struct mcomm *c;
    TRY(check_args("MPI_Isendrecv", comm, sendbuf, sendcount, sendtype, dest, sendtag, false,
                   &c));
    TRY(check_args("MPI_Isendrecv", comm, recvbuf, recvcount, recvtype, source, recvtag, true,
                   &c));
    return isendrecv("MPI_Isendrecv", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                     recvcount, recvtype, source, recvtag, comm, NULL, request);
}

int MPI_Isendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                          int source, int recvtag, MPI_Comm comm, MPI_Request *request)
{
    const char *call = "MPI_Isendrecv_replace";
    struct mcomm *c;
    TRY(check_args(call, comm, buf, count, datatype, dest, sendtag, false, &c));
    TRY(check_args(call, comm, buf, count, datatype, source, recvtag, true, &c));
    struct mtype *t = mpi_type_get(datatype);
    long bytes = (long)count * t->size;
    /* The copy goes as bytes: their number must be a count. */
    if (bytes > 0x7FFFFFFF)
        return mpi_error(comm, MPI_ERR_COUNT, call,
                         "%ld bytes to send: more than one call sends", bytes);
    /* What is sent is copied first: the receive may land in buf before
     * the send has read it. */
    void *copy = malloc(bytes ? (size_t)bytes : 1);
    if (!copy)
        return mpi_error(comm, MPI_ERR_NO_MEM, call, "no memory for %ld bytes", bytes);
    mpi_pack(buf, count, t, copy);
    return isendrecv(call, copy, (int)bytes, MPI_BYTE, dest, sendtag, buf, count, datatype,
                     source, recvtag, comm, copy, request);
}

static int probe(const char *call, int source, int tag, MPI_Comm comm, int *flag,
                 MPI_Status *status, bool block)
{
    struct mcomm *c;
    TRY(mpi_check_comm(call, comm, &c));
    TRY(mpi_check_rank(call, c, comm, source, true));
    TRY(mpi_check_tag(call, comm, tag, true));
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        mpi_status_fill(status, MPI_PROC_NULL, MPI_ANY_TAG, 0);
        return MPI_SUCCESS;
    }
    bool any_tag = tag == MPI_ANY_TAG;
    struct msg_probe_info p;
    *flag = msg_probe(source == MPI_ANY_SOURCE ? MSG_ANY_SOURCE : mpi_world_of(c, source),
                      mpi_bits(2 * c->ctx, any_tag ? 0 : tag), any_tag ? TAG_BITS : 0, block,
                      &p);
    if (*flag)
        mpi_status_fill(status, mpi_rank_of(c, (int)p.src), (int)(p.bits & TAG_BITS),
                        (long long)p.len);
    return MPI_SUCCESS;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    int flag;
    return probe("MPI_Probe", source, tag, comm, &flag, status, true);
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    return probe("MPI_Iprobe", source, tag, comm, flag, status, false);
}
