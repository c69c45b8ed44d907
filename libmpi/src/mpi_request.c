/*
 * Requests: a send or receive in progress behind an MPI_Request, the wait
 * and test families, persistent requests, cancel and statuses.
 *
 * A request holds at most one engine request while active.  Its table is
 * bounded: TERN_MPI_REQUESTS entries (the engine's table has the same
 * size), docs/mpi.md.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

static struct mreq *reqs;
static long n_reqs, hint;
static const struct mpi_req_ops *kind_ops[R_RMA + 1];

void mpi_req_kind_register(enum rkind kind, const struct mpi_req_ops *ops)
{
    kind_ops[kind] = ops;
}

void mpi_requests_init(void)
{
    n_reqs = msg_req_capacity();
    reqs = calloc((size_t)n_reqs + 1, sizeof *reqs); /* [0]: MPI_REQUEST_NULL */
    if (!reqs)
        mpi_fatal("MPI_Init", "no memory for %ld requests", n_reqs);
}

struct mreq *mpi_req_get(MPI_Request h)
{
    if (H_KIND(h) != K_REQUEST || H_IDX(h) <= 0 || H_IDX(h) > n_reqs)
        return NULL;
    struct mreq *r = &reqs[H_IDX(h)];
    return r->in_use && !r->freed ? r : NULL;
}

MPI_Request mpi_req_handle(const struct mreq *r) { return H_MAKE(K_REQUEST, r - reqs); }

struct mreq *mpi_req_new(const char *call, MPI_Comm comm)
{
    for (long k = 0; k < n_reqs; k++) {
        long i = 1 + (hint + k) % n_reqs;
        if (!reqs[i].in_use) {
            memset(&reqs[i], 0, sizeof reqs[i]);
            reqs[i].in_use = true;
            reqs[i].comm = comm;
            hint = i;
            return &reqs[i];
        }
    }
    mpi_error(comm, MPI_ERR_INTERN, call,
              "all %ld requests are in use (TERN_MPI_REQUESTS; are requests never waited for?)",
              n_reqs);
    return NULL;
}

static void pair_release(struct mreq *r);

void mpi_req_release(struct mreq *r)
{
    if (r->half)
        pair_release(r);
    free(r->tmp);
    r->tmp = NULL;
    if (r->nbc)
        mpi_nbc_release(r);
    if (r->pcoll)
        mpi_pcoll_release(r);
    if (r->greq)
        mpi_greq_release(r);
    if (kind_ops[r->kind])
        kind_ops[r->kind]->release(r);
    if (r->holds_type)
        mpi_type_drop(r->type);
    r->holds_type = false;
    if (r->kind == R_SEND && r->mode == 'B')
        mpi_bsend_forget(r);
    r->in_use = false;
}

void mpi_status_set(MPI_Status *st, int src, int tag, int err, long long bytes)
{
    if (st == MPI_STATUS_IGNORE)
        return;
    st->MPI_SOURCE = src;
    st->MPI_TAG = tag;
    st->MPI_ERROR = err;
    st->count_lo = (int)(bytes & 0xFFFFFFFF);
    st->count_hi_and_cancelled = (int)((bytes >> 32) << 1);
}

void mpi_status_empty(MPI_Status *st) { mpi_status_set(st, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, 0); }

/* Statuses the program gets: MPI-3.1 3.2.5, "message-passing calls do not
 * modify the value of the error code field of status variables"; only
 * the calls completing many requests set it, when they return
 * MPI_ERR_IN_STATUS (finish_all).  The library's own statuses (a
 * request's) carry the error there. */
void mpi_status_out(MPI_Status *st, const MPI_Status *from)
{
    if (st == MPI_STATUS_IGNORE)
        return;
    int keep = st->MPI_ERROR;
    *st = *from;
    st->MPI_ERROR = keep;
}

void mpi_status_fill(MPI_Status *st, int src, int tag, long long bytes)
{
    MPI_Status s;
    mpi_status_set(&s, src, tag, MPI_SUCCESS, bytes);
    mpi_status_out(st, &s);
}

void mpi_status_none(MPI_Status *st) { mpi_status_fill(st, MPI_ANY_SOURCE, MPI_ANY_TAG, 0); }

static long long status_bytes(const MPI_Status *st)
{
    return (long long)(unsigned)st->count_lo |
           ((long long)((unsigned)st->count_hi_and_cancelled >> 1) << 32);
}

/* ---- completion ---- */

/* The engine's request is done: fill the request's status, unpack. */
static void settle(struct mreq *r)
{
    struct msg_req *e = r->er;
    r->er = NULL;
    if (!e) /* done at once (MPI_PROC_NULL, cancelled) */
        return;
    if (r->kind == R_RECV) {
        struct mcomm *c = mpi_comm_get(r->comm);
        struct mtype *t = mpi_type_get(r->type);
        long long cap = (long long)r->count * t->size;
        long long got = (long long)e->len < cap ? (long long)e->len : cap;
        int err = e->error == MSG_ERR_TRUNCATE ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
        mpi_status_set(&r->status, c ? mpi_rank_of(c, (int)e->src) : (int)e->src,
                       (int)(e->mbits & TAG_BITS), err, got);
        if (r->tmp)
            mpi_unpack_bytes(r->tmp, got, t, r->buf);
    } else {
        mpi_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0);
        if (e->cancelled)
            r->status.count_hi_and_cancelled |= 1;
    }
    msg_req_free(e);
    free(r->tmp);
    r->tmp = NULL;
}

/* R_PAIR: its halves are requests of their own, completed the same way.
 * Done: the receive's status is the request's (MPI-4.0 3.10), and what
 * the pair held goes now, not when the program frees the request. */
static void pair_done(struct mreq *r)
{
    r->status = r->half[1].status;
    pair_release(r);
    free(r->tmp);
    r->tmp = NULL;
    r->done_now = true;
}

/* Let the halves go; one still in progress (a start that failed half way,
 * or a pair freed early) is taken back if it is a receive nothing matched
 * yet, else finished first: the engine must not write into a buffer the
 * program got back. */
static void pair_release(struct mreq *r)
{
    for (int i = 0; i < 2; i++) {
        struct mreq *h = &r->half[i];
        if (h->er && !(h->kind == R_RECV && msg_cancel_recv(h->er))) {
            msg_wait(h->er);
            msg_req_free(h->er);
        }
        h->er = NULL;
        mpi_req_release(h);
    }
    free(r->half);
    r->half = NULL;
}

bool mpi_req_test(struct mreq *r)
{
    if (!r->active || r->done_now)
        return true;
    if (r->kind == R_PCOLL)
        return mpi_pcoll_test(r);
    if (r->kind == R_GREQ)
        return mpi_greq_test(r);
    if (kind_ops[r->kind])
        return kind_ops[r->kind]->test(r);
    if (r->kind == R_PAIR) {
        bool sent = mpi_req_test(&r->half[0]);
        if (mpi_req_test(&r->half[1]) && sent)
            pair_done(r);
        return r->done_now;
    }
    if (r->kind == R_COLL) {
        if (mpi_nbc_test(r)) {
            mpi_status_empty(&r->status);
            r->done_now = true;
        }
        return r->done_now;
    }
    if (r->er && msg_test(r->er)) {
        settle(r);
        r->done_now = true;
    }
    return r->done_now;
}

void mpi_req_wait(struct mreq *r)
{
    if (!r->active || r->done_now)
        return;
    if (r->kind == R_PCOLL) {
        mpi_pcoll_wait(r);
        return;
    }
    if (r->kind == R_GREQ) {
        mpi_greq_wait(r);
        return;
    }
    if (kind_ops[r->kind]) {
        kind_ops[r->kind]->wait(r);
        return;
    }
    if (r->kind == R_PAIR) {
        mpi_req_wait(&r->half[0]);
        mpi_req_wait(&r->half[1]);
        pair_done(r);
        return;
    }
    if (r->kind == R_COLL) {
        mpi_nbc_wait(r);
        mpi_status_empty(&r->status);
        r->done_now = true;
        return;
    }
    msg_wait(r->er);
    settle(r);
    r->done_now = true;
}

int mpi_req_complete(struct mreq *r, MPI_Request *h, MPI_Status *st)
{
    int err = MPI_SUCCESS;
    if (!r->active) {
        mpi_status_none(st);
    } else {
        err = r->status.MPI_ERROR;
        mpi_status_out(st, &r->status);
    }
    if (r->persistent) {
        r->active = false;
        r->done_now = false;
    } else {
        mpi_req_release(r);
        *h = MPI_REQUEST_NULL;
    }
    return err;
}

/* A request that is complete when it is made, with status st: an
 * operation done in its call (MPI-IO's nonblocking independent ones). */
int mpi_req_done(const char *call, MPI_Comm comm, const MPI_Status *st, bool send,
                 MPI_Request *request)
{
    struct mreq *r = mpi_req_new(call, comm);
    if (!r)
        return MPI_ERR_INTERN;
    r->kind = send ? R_SEND : R_RECV;
    r->active = r->done_now = true;
    r->status = *st;
    *request = mpi_req_handle(r);
    return MPI_SUCCESS;
}

/* Freed with MPI_Request_free while active: finished here, quietly. */
static void reap_freed(void)
{
    static long pending;
    if (!pending) {
        for (long i = 1; i <= n_reqs; i++)
            pending += reqs[i].in_use && reqs[i].freed;
        if (!pending)
            return;
    }
    pending = 0;
    for (long i = 1; i <= n_reqs; i++) {
        struct mreq *r = &reqs[i];
        if (!r->in_use || !r->freed)
            continue;
        if (mpi_req_test(r))
            mpi_req_release(r);
        else
            pending++;
    }
}

static int truncated(const struct mreq *r, const char *call)
{
    const MPI_Status *s = &r->status;
    return mpi_error(r->comm, MPI_ERR_TRUNCATE, call,
                     "the message from rank %d (tag %d) is longer than the receive buffer of "
                     "%lld bytes", s->MPI_SOURCE, s->MPI_TAG,
                     (long long)r->count * mpi_type_get(r->type)->size);
}

/* Complete it; a truncated receive is an error raised on its communicator. */
static int complete_checked(const char *call, struct mreq *r, MPI_Request *h, MPI_Status *st)
{
    struct mreq was = *r;
    int err = mpi_req_complete(r, h, st);
    return err == MPI_ERR_TRUNCATE ? truncated(&was, call) : err;
}

static int get_req(const char *call, MPI_Request h, struct mreq **out)
{
    NEED_INIT(call);
    *out = NULL;
    if (h == MPI_REQUEST_NULL)
        return MPI_SUCCESS;
    *out = mpi_req_get(h);
    if (!*out)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_REQUEST, call, "%#x is not a request",
                         (unsigned)h);
    return MPI_SUCCESS;
}

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    struct mreq *r;
    TRY(get_req("MPI_Wait", *request, &r));
    if (!r) {
        mpi_status_none(status);
        return MPI_SUCCESS;
    }
    mpi_req_wait(r);
    reap_freed();
    return complete_checked("MPI_Wait", r, request, status);
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    struct mreq *r;
    TRY(get_req("MPI_Test", *request, &r));
    reap_freed();
    if (!r) {
        *flag = 1;
        mpi_status_none(status);
        return MPI_SUCCESS;
    }
    *flag = mpi_req_test(r);
    if (!*flag)
        return MPI_SUCCESS;
    return complete_checked("MPI_Test", r, request, status);
}

/* Multiple completion: statuses may be MPI_STATUSES_IGNORE. */
static MPI_Status *nth(MPI_Status *a, int i)
{
    return a == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &a[i];
}

static int finish_all(const char *call, int count, MPI_Request reqv[], MPI_Status st[])
{
    int err = MPI_SUCCESS;
    MPI_Comm errcomm = MPI_COMM_NULL;
    for (int i = 0; i < count; i++) {
        struct mreq *r = reqv[i] == MPI_REQUEST_NULL ? NULL : mpi_req_get(reqv[i]);
        if (!r) {
            mpi_status_none(nth(st, i));
            if (nth(st, i) != MPI_STATUS_IGNORE)
                nth(st, i)->MPI_ERROR = MPI_SUCCESS;   /* read if one fails */
            continue;
        }
        MPI_Comm comm = r->comm;
        int e = mpi_req_complete(r, &reqv[i], nth(st, i));
        if (nth(st, i) != MPI_STATUS_IGNORE)
            nth(st, i)->MPI_ERROR = e;
        if (e) {
            err = MPI_ERR_IN_STATUS;
            errcomm = comm;
        }
    }
    if (err)
        return mpi_error(errcomm, err, call, "a request failed (see its status: a message "
                         "longer than its receive buffer)");
    return MPI_SUCCESS;
}

static int check_all(const char *call, int count, MPI_Request reqv[])
{
    NEED_INIT(call);
    if (count < 0)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_COUNT, call, "count %d", count);
    for (int i = 0; i < count; i++) {
        struct mreq *r;
        TRY(get_req(call, reqv[i], &r));
    }
    return MPI_SUCCESS;
}

int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status *array_of_statuses)
{
    TRY(check_all("MPI_Waitall", count, array_of_requests));
    for (int i = 0; i < count; i++) {
        struct mreq *r = mpi_req_get(array_of_requests[i]);
        if (r)
            mpi_req_wait(r);
    }
    reap_freed();
    return finish_all("MPI_Waitall", count, array_of_requests, array_of_statuses);
}

int MPI_Testall(int count, MPI_Request array_of_requests[], int *flag,
                MPI_Status *array_of_statuses)
{
    TRY(check_all("MPI_Testall", count, array_of_requests));
    msg_progress(false);
    reap_freed();
    *flag = 1;
    for (int i = 0; i < count; i++) {
        struct mreq *r = mpi_req_get(array_of_requests[i]);
        if (r && !mpi_req_test(r))
            *flag = 0;
    }
    if (!*flag)
        return MPI_SUCCESS;
    return finish_all("MPI_Testall", count, array_of_requests, array_of_statuses);
}

/* The first complete active request, or -1; *any_active if one is active. */
static int first_done(int count, MPI_Request reqv[], bool *any_active)
{
    *any_active = false;
    for (int i = 0; i < count; i++) {
        struct mreq *r = mpi_req_get(reqv[i]);
        if (!r || !r->active)
            continue;
        *any_active = true;
        if (mpi_req_test(r))
            return i;
    }
    return -1;
}

static int any(const char *call, int count, MPI_Request reqv[], int *index, int *flag,
               MPI_Status *status, bool block)
{
    TRY(check_all(call, count, reqv));
    reap_freed();
    for (;;) {
        bool active;
        int i = first_done(count, reqv, &active);
        if (!active) {
            *index = MPI_UNDEFINED;
            *flag = 1;
            mpi_status_none(status);
            return MPI_SUCCESS;
        }
        if (i >= 0) {
            struct mreq *r = mpi_req_get(reqv[i]);
            *index = i;
            *flag = 1;
            return complete_checked(call, r, &reqv[i], status);
        }
        if (!block) {
            *flag = 0;
            *index = MPI_UNDEFINED;
            return MPI_SUCCESS;
        }
        msg_progress(true);
    }
}

int MPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status)
{
    int flag;
    return any("MPI_Waitany", count, array_of_requests, index, &flag, status, true);
}

int MPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag,
                MPI_Status *status)
{
    return any("MPI_Testany", count, array_of_requests, index, flag, status, false);
}

static int some(const char *call, int incount, MPI_Request reqv[], int *outcount, int idx[],
                MPI_Status st[], bool block)
{
    TRY(check_all(call, incount, reqv));
    reap_freed();
    for (;;) {
        bool active = false;
        int n = 0, err = MPI_SUCCESS;
        MPI_Comm errcomm = MPI_COMM_NULL;
        for (int i = 0; i < incount; i++) {
            struct mreq *r = mpi_req_get(reqv[i]);
            if (!r || !r->active)
                continue;
            active = true;
            if (!mpi_req_test(r))
                continue;
            MPI_Comm comm = r->comm;
            int e = mpi_req_complete(r, &reqv[i], nth(st, n));
            if (nth(st, n) != MPI_STATUS_IGNORE)
                nth(st, n)->MPI_ERROR = e;   /* read if one fails */
            if (e) {
                err = MPI_ERR_IN_STATUS;
                errcomm = comm;
            }
            idx[n++] = i;
        }
        if (!active) {
            *outcount = MPI_UNDEFINED;
            return MPI_SUCCESS;
        }
        if (n || !block) {
            *outcount = n;
            return err ? mpi_error(errcomm, err, call, "a request failed (see its status)")
                       : MPI_SUCCESS;
        }
        msg_progress(true);
    }
}

int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount,
                 int array_of_indices[], MPI_Status *array_of_statuses)
{
    return some("MPI_Waitsome", incount, array_of_requests, outcount, array_of_indices,
                array_of_statuses, true);
}

int MPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount,
                 int array_of_indices[], MPI_Status *array_of_statuses)
{
    msg_progress(false);
    return some("MPI_Testsome", incount, array_of_requests, outcount, array_of_indices,
                array_of_statuses, false);
}

int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    struct mreq *r;
    TRY(get_req("MPI_Request_get_status", request, &r));
    if (!r || !r->active) {
        *flag = 1;
        mpi_status_none(status);
        return MPI_SUCCESS;
    }
    *flag = mpi_req_test(r);
    if (*flag)
        mpi_status_out(status, &r->status);
    return MPI_SUCCESS;
}

int MPI_Request_free(MPI_Request *request)
{
    struct mreq *r;
    TRY(get_req("MPI_Request_free", *request, &r));
    if (!r)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_REQUEST, "MPI_Request_free",
                         "MPI_REQUEST_NULL cannot be freed");
    if (!r->active || mpi_req_test(r))
        mpi_req_release(r);
    else
        r->freed = true; /* finishes in the background (reap_freed) */
    *request = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

int MPI_Cancel(MPI_Request *request)
{
    struct mreq *r;
    TRY(get_req("MPI_Cancel", *request, &r));
    if (!r)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_REQUEST, "MPI_Cancel",
                         "MPI_REQUEST_NULL cannot be cancelled");
    /* A receive nothing has matched yet is taken back.  A send is
     * cancelled if its receiver has not matched its message (the engine
     * asks it: libmsg/msg_cancel.c); the Wait then says which.  Anything
     * else completes normally, and MPI_Test_cancelled says false. */
    if (r->kind == R_GREQ) {
        mpi_greq_cancel(r); /* the program's cancel function decides */
        return MPI_SUCCESS;
    }
    if (r->active && !r->done_now && r->kind == R_RECV && r->er && msg_cancel_recv(r->er)) {
        r->er = NULL;
        free(r->tmp);
        r->tmp = NULL;
        mpi_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0);
        r->status.count_hi_and_cancelled |= 1;
        r->done_now = true;
    } else if (r->active && r->kind == R_SEND && !r->done_now && r->er) {
        msg_cancel_send(r->er);
    } else if (r->active && r->kind == R_SEND && r->mode == 'B') {
        mpi_bsend_cancel(r);
    }
    return MPI_SUCCESS;
}

int MPI_Test_cancelled(const MPI_Status *status, int *flag)
{
    *flag = status->count_hi_and_cancelled & 1;
    return MPI_SUCCESS;
}

int MPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    struct mtype *t;
    TRY(mpi_check_type("MPI_Get_count", MPI_COMM_NULL, datatype, &t));
    long long b = status_bytes(status);
    if (t->size == 0)
        *count = 0;
    else if (b % t->size || b / t->size > 0x7FFFFFFF)
        *count = MPI_UNDEFINED;
    else
        *count = (int)(b / t->size);
    return MPI_SUCCESS;
}

/* The basic elements in bytes of data of type t: whole elements, then
 * the basic elements of the partial one. */
static long long elements_in(const struct mtype *t, long long b)
{
    long long n = 0;
    if (t->size) {
        long long whole = b / t->size, rest = b % t->size, per = 0;
        FOR_BLOCKS(t, r, k) {
            (void)r;
            long bs = mpi_type_get(H_MAKE(K_TYPE, t->blocks[k].basic))->size;
            per += t->blocks[k].len / bs;
            if (rest > 0) {
                long take = rest < t->blocks[k].len ? (long)rest : t->blocks[k].len;
                n += take / bs;
                rest -= take;
            }
        }
        n += whole * per;
    }
    return n;
}

int MPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    struct mtype *t;
    TRY(mpi_check_type("MPI_Get_elements", MPI_COMM_NULL, datatype, &t));
    long long n = elements_in(t, status_bytes(status));
    *count = n > 0x7FFFFFFF ? MPI_UNDEFINED : (int)n;
    return MPI_SUCCESS;
}

int MPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    struct mtype *t;
    TRY(mpi_check_type("MPI_Get_elements_x", MPI_COMM_NULL, datatype, &t));
    *count = elements_in(t, status_bytes(status));
    return MPI_SUCCESS;
}

/* For generalized requests' query functions (MPI-3.1 12.2): the status
 * says count basic elements of datatype arrived.  It keeps bytes, so the
 * count becomes the bytes that many elements take in type-map order. */
int MPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    struct mtype *t;
    TRY(mpi_check_type("MPI_Status_set_elements", MPI_COMM_NULL, datatype, &t));
    if (count < 0)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_COUNT, "MPI_Status_set_elements", "count %lld",
                         count);
    long long per = elements_in(t, t->size), bytes = 0, left = count;
    if (per) {
        bytes = left / per * t->size;
        left %= per;
    }
    FOR_BLOCKS(t, r, k) {
        (void)r;
        long bs = mpi_type_get(H_MAKE(K_TYPE, t->blocks[k].basic))->size;
        long long in = t->blocks[k].len / bs, take = left < in ? left : in;
        bytes += take * bs;
        left -= take;
    }
    int cancelled = status->count_hi_and_cancelled & 1;
    status->count_lo = (int)(bytes & 0xFFFFFFFF);
    status->count_hi_and_cancelled = (int)((bytes >> 32) << 1) | cancelled;
    return MPI_SUCCESS;
}

int MPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count)
{
    return MPI_Status_set_elements_x(status, datatype, count);
}

int MPI_Status_set_cancelled(MPI_Status *status, int flag)
{
    status->count_hi_and_cancelled = (status->count_hi_and_cancelled & ~1) | (flag ? 1 : 0);
    return MPI_SUCCESS;
}
