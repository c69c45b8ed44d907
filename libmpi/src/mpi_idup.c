/*
 * MPI_Comm_idup (MPI-3.1 6.4.2): a duplicate made without waiting.  What a
 * duplicate needs is a context id free on every member, agreed without
 * blocking while other agreements, blocking or not, go on at the same
 * time on overlapping groups.
 *
 * The ids from IDUP_FIRST up are these agreements' alone (mpi_comm.c: the
 * blocking calls agree below it), so a blocking call never waits for one.
 * An attempt is a nonblocking AND-allreduce of the members' offers over
 * the parent: a free id in the result means every member offered it, and
 * each takes the lowest; none means someone did not, and the idup tries
 * again.  Two idups of one process in flight must never offer the same
 * id (both could take it), so the free ids are two pools, each offered by
 * one attempt of the process at a time:
 *   - the eager pool (the first EAGER_IDS ids), which an idup's first
 *     attempt offers if no other attempt holds it: alone, an idup is made
 *     in one allreduce;
 *   - the rest, which a later attempt offers if no other attempt holds it
 *     and no other live idup of the process has a lower key (the parent's
 *     context id, then the idup's number on it); with the eager pool too
 *     when that is free, so the last free ids are reached.
 * An idup is live on a process once its first attempt has ended there,
 * which it does only when every member has called it.  Only live idups
 * count for the rest: an idup some rank has not called yet (that rank
 * may wait for another idup to end first: MPICH's threads/comm/
 * idup_deadlock) holds nothing up but the eager pool, which no idup needs
 * to end.  The lowest live idup anywhere is live on all its members soon,
 * and the lowest there; each gives it the rest from its next attempt on
 * and keeps it (an ending attempt lets it go and the idup's next takes it
 * back), so that idup is made, then the next: none starves.
 *
 * An intercommunicator's attempt is two allreduces at once: over its
 * local group (on the group's private communicator) and across (each group
 * gets the other's AND): both results ANDed are the same everywhere; it
 * takes two ids, the second for its new private local communicator.
 *
 * Attempts run as the engine makes progress (mpi_progress.c); their
 * messages use collective sequence numbers from IDUP_SEQ up on the parent
 * (numbered by idup and attempt), which the parent's own collectives reach
 * only after 6 million calls.  The program's request is a generalized
 * request (mpi_greq.c) completed when the communicator is made.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi_coll.h"

#define IDUP_SEQ 0x600000u
/* An idup's sequence numbers, used round and round: an attempt's
 * allreduce ends on a member only when every member has sent its part, so
 * no two members are more than one attempt apart and number k + 256 never
 * meets k's messages.  (Under MPI_THREAD_MULTIPLE an idup may wait many
 * attempts for another thread's agreement to end.) */
#define ATTEMPTS 256
#define EAGER_IDS 64

struct idup {
    MPI_Comm parent;
    MPI_Comm *newcomm;      /* the program's, written when made */
    uint64_t key;           /* parent's context id, then the idup's number on it */
    int n, *members;        /* the parent's members when called */
    int attempt;            /* in flight; -1: none yet */
    int pools;              /* what this attempt offered: CTX_EAGER | CTX_REST */
    bool inter;
    uint32_t offer[CTX_MASK_WORDS], mask[CTX_MASK_WORDS], across[CTX_MASK_WORDS];
    MPI_Request ar, ar2;    /* the attempt's allreduces (ar2: an intercommunicator's) */
    MPI_Request user;
    bool done;
    struct idup *next;
};

static struct idup *pending;
static int held; /* the pools some attempt of this process offers (mpi_ctx_pick) */

static bool live(const struct idup *d)
{
    return d->attempt > 0;
}

static bool lowest_live(const struct idup *d)
{
    for (const struct idup *o = pending; o; o = o->next)
        if (!o->done && live(o) && o->key < d->key)
            return false;
    return true;
}

static int query(void *extra, MPI_Status *st)
{
    (void)extra;
    mpi_status_empty(st);
    return MPI_SUCCESS;
}

static int release(void *extra)
{
    struct idup *d = extra;
    for (struct idup **p = &pending; *p; p = &(*p)->next)
        if (*p == d) {
            *p = d->next;
            break;
        }
    free(d->members);
    free(d);
    return MPI_SUCCESS;
}

static int no_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS; /* an agreement under way cannot be taken back */
}

static void start_attempt(struct idup *d)
{
    d->attempt++;
    /* Idups overlap whatever the thread level (several may be pending in
     * one thread), so the pools are always taken in turn. */
    d->pools = mpi_ctx_pick(!live(d), held, !lowest_live(d));
    held |= d->pools;
    uint32_t free_ids[CTX_MASK_WORDS];
    mpi_ctx_idup_mask(free_ids);
    int eager_end = (IDUP_FIRST + EAGER_IDS) / 32;
    for (int i = 0; i < CTX_MASK_WORDS; i++)
        d->offer[i] = d->pools & (i < eager_end ? CTX_EAGER : CTX_REST) ? free_ids[i] : 0;
    memcpy(d->mask, d->offer, sizeof d->mask);
    uint32_t seq = IDUP_SEQ + (uint32_t)(d->key & 0x3FF) * ATTEMPTS +
                   (uint32_t)(d->attempt % ATTEMPTS);
    struct mcomm *c = mpi_comm_get(d->parent);
    int rc = mpi_nbc_allreduce_at("MPI_Comm_idup", d->inter ? c->local : d->parent, seq,
                                  d->mask, CTX_MASK_WORDS, MPI_UNSIGNED, MPI_BAND, &d->ar);
    if (!rc && d->inter)
        rc = mpi_inter_iallreduce_at("MPI_Comm_idup", d->parent, seq, d->offer, d->across,
                                     CTX_MASK_WORDS, MPI_UNSIGNED, MPI_BAND, &d->ar2);
    if (rc)
        mpi_fatal("MPI_Comm_idup", "the agreement on a context id could not start");
}

/* The lowest id of mask after `after` (-1: none). */
static int next_id(const uint32_t *mask, int after)
{
    for (int i = after + 1; i < MAX_CONTEXTS; i++)
        if (mask[i / 32] & (1u << (i % 32)))
            return i;
    return -1;
}

static void finish(struct idup *d)
{
    if (d->inter)
        for (int i = 0; i < CTX_MASK_WORDS; i++)
            d->mask[i] &= d->across[i];
    int id = next_id(d->mask, -1), id2 = d->inter ? next_id(d->mask, id) : 0;
    held &= ~d->pools;
    d->pools = 0;
    if (id < 0 || id2 < 0) {
        start_attempt(d); /* someone did not offer: again */
        return;
    }
    /* Errors here end the job (no call returns them), as other
     * failures inside a nonblocking operation do. */
    int rc = d->inter ? mpi_intercomm_install(d->parent, id, id2, d->newcomm)
                      : mpi_comm_install("MPI_Comm_idup", d->parent, id, d->n, d->members,
                                         d->newcomm);
    if (rc || mpi_comm_dup_finish(d->parent, d->newcomm))
        mpi_fatal("MPI_Comm_idup", "the new communicator could not be made");
    d->done = true;
    MPI_Grequest_complete(d->user);
}

/* The engine's progress: every pending idup a step further. */
static void step(void)
{
    static bool stepping;
    if (stepping)
        return;
    stepping = true;
    for (struct idup *d = pending; d; d = d->next) {
        if (d->done)
            continue;
        if (d->attempt < 0) {
            start_attempt(d);
            continue;
        }
        struct mreq *r = mpi_req_get(d->ar), *r2 = mpi_req_get(d->ar2);
        if (r && mpi_req_test(r))
            mpi_req_complete(r, &d->ar, MPI_STATUS_IGNORE);
        if (r2 && mpi_req_test(r2))
            mpi_req_complete(r2, &d->ar2, MPI_STATUS_IGNORE);
        if (d->ar == MPI_REQUEST_NULL && d->ar2 == MPI_REQUEST_NULL)
            finish(d);
    }
    stepping = false;
}

int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    const char *call = "MPI_Comm_idup";
    struct mcomm *c;
    *request = MPI_REQUEST_NULL;
    TRY(mpi_check_comm(call, comm, &c));
    struct idup *d = calloc(1, sizeof *d);
    int *m = d ? malloc(sizeof(int) * (size_t)c->size) : NULL;
    if (!m) {
        free(d);
        return mpi_error(comm, MPI_ERR_NO_MEM, call, "no memory");
    }
    for (int i = 0; i < c->size; i++)
        m[i] = mpi_world_of(c, i);
    /* Its number on the parent: every member calls its idups in one order. */
    *d = (struct idup){.parent = comm, .newcomm = newcomm, .n = c->size, .members = m,
                       .attempt = -1, .ar = MPI_REQUEST_NULL, .ar2 = MPI_REQUEST_NULL,
                       .inter = c->inter,
                       .key = ((uint64_t)c->ctx << 32) | c->idups++};
    *newcomm = MPI_COMM_NULL;
    int rc = MPI_Grequest_start(query, release, no_cancel, d, &d->user);
    if (rc) {
        free(m);
        free(d);
        return rc;
    }
    d->next = pending;
    pending = d;
    mpi_progress_add(step);
    *request = d->user;
    step(); /* its first attempt starts in the call */
    return MPI_SUCCESS;
}

int MPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm,
                            MPI_Request *request)
{
    *request = MPI_REQUEST_NULL;
    if (info != MPI_INFO_NULL && !mpi_info_ok(info))
        return mpi_error(comm, MPI_ERR_INFO, "MPI_Comm_idup_with_info",
                         "%#x is not an info object", (unsigned)info);
    return MPI_Comm_idup(comm, newcomm, request);
}
