/*
 * Generalized requests (MPI-3.1 12.2): a program's own operation behind an
 * MPI request.  It ends when the program calls MPI_Grequest_complete
 * (from any thread: the flag is atomic); Wait and Test then fill the status
 * with the program's query function and release it with its free
 * function; MPI_Cancel calls its cancel function.
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "mpi_impl.h"
#include "mpi_thread.h"

struct greq {
    MPI_Grequest_query_function *query;
    MPI_Grequest_free_function *free_fn;
    MPI_Grequest_cancel_function *cancel;
    void *extra;
    struct mpi_greq_fortran f; /* Fortran's subroutines when query is NULL */
    atomic_bool complete;
};

/* Fortran's functions are subroutines taking everything by reference,
 * the extra state an INTEGER(KIND=MPI_ADDRESS_KIND), the status an
 * INTEGER array of C's layout (mpif.h's MPI_SOURCE ... indices). */
static int query(struct greq *g, MPI_Status *st)
{
    if (g->query)
        return g->query(g->extra, st);
    int ierr = 0;
    g->f.query(&g->f.extra, (int *)(void *)st, &ierr);
    return ierr;
}

static int free_it(struct greq *g)
{
    if (g->free_fn)
        return g->free_fn(g->extra);
    int ierr = 0;
    g->f.free_fn(&g->f.extra, &ierr);
    return ierr;
}

static int cancel(struct greq *g, bool complete)
{
    if (g->cancel)
        return g->cancel(g->extra, complete);
    int ierr = 0, flag = complete;
    g->f.cancel(&g->f.extra, &flag, &ierr);
    return ierr;
}

static int start(struct greq *g, MPI_Request *request)
{
    struct greq *copy = malloc(sizeof *copy);
    if (!copy)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Grequest_start", "no memory");
    struct mreq *r = mpi_req_new("MPI_Grequest_start", MPI_COMM_WORLD);
    if (!r) {
        free(copy);
        return MPI_ERR_INTERN;
    }
    *copy = *g;
    atomic_init(&copy->complete, false);
    r->kind = R_GREQ;
    r->active = true;
    r->greq = copy;
    *request = mpi_req_handle(r);
    return MPI_SUCCESS;
}

int mpi_greq_start_fortran(const struct mpi_greq_fortran *f, MPI_Request *request)
{
    NEED_INIT("MPI_Grequest_start");
    struct greq g = {.f = *f};
    return start(&g, request);
}

int MPI_Grequest_start(MPI_Grequest_query_function *query_fn,
                       MPI_Grequest_free_function *free_fn,
                       MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                       MPI_Request *request)
{
    NEED_INIT("MPI_Grequest_start");
    if (!query_fn || !free_fn || !cancel_fn)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Grequest_start",
                         "the query, free and cancel functions are all needed");
    struct greq g = {.query = query_fn, .free_fn = free_fn, .cancel = cancel_fn,
                     .extra = extra_state};
    return start(&g, request);
}

int MPI_Grequest_complete(MPI_Request request)
{
    NEED_INIT("MPI_Grequest_complete");
    struct mreq *r = mpi_req_get(request);
    if (!r || r->kind != R_GREQ)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_REQUEST, "MPI_Grequest_complete",
                         "%#x is not a generalized request", (unsigned)request);
    atomic_store(&r->greq->complete, true);
    return MPI_SUCCESS;
}

/* Complete: the query function says what the status holds. */
static bool finished(struct mreq *r)
{
    if (r->done_now)
        return true;
    if (!atomic_load(&r->greq->complete))
        return false;
    mpi_status_empty(&r->status);
    int rc = query(r->greq, &r->status);
    if (rc)
        r->status.MPI_ERROR = rc;
    r->done_now = true;
    return true;
}

bool mpi_greq_test(struct mreq *r)
{
    msg_progress(false); /* the program's operation may wait on MPI's */
    return finished(r);
}

void mpi_greq_wait(struct mreq *r)
{
    while (!mpi_greq_test(r))
        mpi_thread_yield(); /* another thread completes it */
}

void mpi_greq_cancel(struct mreq *r)
{
    cancel(r->greq, atomic_load(&r->greq->complete));
}

void mpi_greq_release(struct mreq *r)
{
    free_it(r->greq);
    free(r->greq);
    r->greq = NULL;
}
