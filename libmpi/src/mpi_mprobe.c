/*
 * Matched probes (MPI-3.1 3.8.2, 3.8.3): MPI_Mprobe and MPI_Improbe take
 * the message they find out of matching (the engine's msg_mprobe), so no
 * other receive or probe can take it; MPI_Mrecv and MPI_Imrecv receive
 * exactly that message, as MPI_Recv would (datatypes, truncation, status).
 *
 * An MPI_Message names an entry of a table that grows as needed: the
 * engine's message and the communicator it was probed on (a receive's
 * status gives ranks in it).  Index 1 is MPI_MESSAGE_NO_PROC, what a
 * probe of MPI_PROC_NULL gives.
 */
#include <stdlib.h>

#include "mpi_impl.h"

struct mmsg {
    bool in_use;
    struct msg_saved *m;
    MPI_Comm comm;
    int src, tag; /* in comm */
};
static struct mmsg *msgs;
static int n_msgs;

#define FIRST_MSG 2 /* 0: MPI_MESSAGE_NULL, 1: MPI_MESSAGE_NO_PROC */

static int msg_new(const char *call, MPI_Comm comm, MPI_Message *out)
{
    int i = FIRST_MSG;
    while (i < n_msgs && msgs[i].in_use)
        i++;
    if (i >= n_msgs) {
        int n = n_msgs ? 2 * n_msgs : 16;
        struct mmsg *t = realloc(msgs, sizeof *t * (size_t)n);
        if (!t)
            return mpi_error(comm, MPI_ERR_NO_MEM, call, "no memory for a message handle");
        for (int k = n_msgs; k < n; k++)
            t[k].in_use = false;
        msgs = t;
        n_msgs = n;
    }
    msgs[i].in_use = true;
    *out = H_MAKE(K_MESSAGE, i);
    return MPI_SUCCESS;
}

static int probe(const char *call, int source, int tag, MPI_Comm comm, int *flag,
                 MPI_Message *message, MPI_Status *status, bool block)
{
    NEED_INIT(call);
    struct mcomm *c;
    TRY(mpi_check_comm(call, comm, &c));
    TRY(mpi_check_rank(call, c, comm, source, true));
    TRY(mpi_check_tag(call, comm, tag, true));
    if (!message)
        return mpi_error(comm, MPI_ERR_ARG, call, "NULL message handle argument");
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        *message = MPI_MESSAGE_NO_PROC;
        mpi_status_fill(status, MPI_PROC_NULL, MPI_ANY_TAG, 0);
        return MPI_SUCCESS;
    }
    /* The handle first: a message taken has to be given to the program. */
    MPI_Message h = MPI_MESSAGE_NULL;
    TRY(msg_new(call, comm, &h));
    bool any_tag = tag == MPI_ANY_TAG;
    struct msg_probe_info p;
    struct msg_saved *m =
        msg_mprobe(source == MPI_ANY_SOURCE ? MSG_ANY_SOURCE : mpi_world_of(c, source),
                   mpi_bits(2 * c->ctx, any_tag ? 0 : tag), any_tag ? TAG_BITS : 0, block, &p);
    struct mmsg *e = &msgs[H_IDX(h)];
    *flag = m != NULL;
    if (!m) {
        e->in_use = false;
        return MPI_SUCCESS;
    }
    e->m = m;
    e->comm = comm;
    e->src = mpi_rank_of(c, (int)p.src);
    e->tag = (int)(p.bits & TAG_BITS);
    *message = h;
    mpi_status_fill(status, e->src, e->tag, (long long)p.len);
    return MPI_SUCCESS;
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    int flag;
    return probe("MPI_Mprobe", source, tag, comm, &flag, message, status, true);
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                MPI_Status *status)
{
    return probe("MPI_Improbe", source, tag, comm, flag, message, status, false);
}

/* A receive of *message on r (a request on the stack or in the table),
 * filled but not started; NULL *e: MPI_MESSAGE_NO_PROC, a receive from
 * MPI_PROC_NULL. */
static int recv_of(const char *call, void *buf, int count, MPI_Datatype type,
                   const MPI_Message *message, struct mreq *r, struct mmsg **e)
{
    NEED_INIT(call);
    if (!message)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, call, "NULL message handle argument");
    MPI_Message h = *message;
    int i = H_IDX(h);
    *e = NULL;
    if (h != MPI_MESSAGE_NO_PROC &&
        (H_KIND(h) != K_MESSAGE || i < FIRST_MSG || i >= n_msgs || !msgs[i].in_use))
        return mpi_error(MPI_COMM_NULL, MPI_ERR_REQUEST, call,
                         h == MPI_MESSAGE_NULL ? "MPI_MESSAGE_NULL is no message"
                                               : "%#x is not a message a matched probe gave",
                         (unsigned)h);
    MPI_Comm comm = h == MPI_MESSAGE_NO_PROC ? MPI_COMM_WORLD : msgs[i].comm;
    struct mtype *t;
    TRY(mpi_check_type(call, comm, type, &t));
    TRY(mpi_check_count(call, comm, count));
    TRY(mpi_check_buf(call, comm, buf, count, t));
    if (h == MPI_MESSAGE_NO_PROC) {
        mpi_req_fill(r, R_RECV, 0, buf, count, type, MPI_PROC_NULL, MPI_ANY_TAG, comm);
        return MPI_SUCCESS;
    }
    *e = &msgs[i];
    mpi_req_fill(r, R_RECV, 0, buf, count, type, (*e)->src, (*e)->tag, comm);
    r->matched = (*e)->m;
    return MPI_SUCCESS;
}

/* The receive started: the message is the engine request's now. */
static void taken(struct mmsg *e, MPI_Message *message)
{
    if (e)
        e->in_use = false;
    *message = MPI_MESSAGE_NULL;
}

int MPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
              MPI_Status *status)
{
    struct mreq r = {0};
    struct mmsg *e;
    TRY(recv_of("MPI_Mrecv", buf, count, datatype, message, &r, &e));
    int rc = mpi_req_blocking("MPI_Mrecv", &r, status);
    /* Started (even if then truncated): the message is gone.  A start
     * that failed leaves it the program's. */
    if (!r.matched)
        taken(e, message);
    return rc;
}

int MPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
               MPI_Request *request)
{
    struct mreq s = {0};
    struct mmsg *e;
    TRY(recv_of("MPI_Imrecv", buf, count, datatype, message, &s, &e));
    struct mreq *r = mpi_req_new("MPI_Imrecv", s.comm);
    if (!r)
        return MPI_ERR_INTERN;
    *r = s;
    r->in_use = true;
    r->holds_type = mpi_type_hold(datatype);
    int rc = mpi_req_start("MPI_Imrecv", r);
    if (rc) { /* not started: the message is still the program's */
        mpi_req_release(r);
        return rc;
    }
    taken(e, message);
    *request = mpi_req_handle(r);
    return MPI_SUCCESS;
}
