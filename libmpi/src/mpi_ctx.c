/*
 * Context-id agreements when threads make communicators at once
 * (MPI_THREAD_MULTIPLE), the way MPICH makes them: each agreement is
 * rounds in which every member offers its free ids and the ids free on
 * all are the ANDed offers (an allreduce over the parent, or a group's
 * first member gathering them, or two leaders swapping their groups').
 *
 * Two agreements of one process in flight at once (two threads, each
 * duplicating a communicator of its own) must not offer the same free ids,
 * or both could take the same one.  So one agreement at a time offers the
 * process's ids (it owns them for its round) and any other offers none;
 * every offer carries a word saying which (all ones: a real one), ANDed
 * with the rest, so all members see alike whether the round counts.  One
 * that does not is gone round again.  Which agreement of a process gets
 * the ids next: the one with the lowest key (its parent communicator's
 * context id, and its tag where several share one parent) among those
 * that already failed a round, so all members end up offering for the
 * same agreement and it goes through; then the next.
 *
 * Without MULTIPLE no two agreements overlap and every offer is real: one
 * round, as before.  Either way the id agreed on is installed before the
 * thread lets the library's lock go (nothing between blocks), so it is
 * never offered twice.
 */
#include <string.h>

#include "mpi_impl.h"
#include "mpi_thread.h"

#define MAX_WAITING 256

static bool owned;                    /* an agreement of this process offers the ids now */
static uint64_t waiting[MAX_WAITING]; /* keys of agreements that failed a round */
static int nwaiting;

static bool lower_waiting(uint64_t key)
{
    for (int i = 0; i < nwaiting; i++)
        if (waiting[i] < key)
            return true;
    return false;
}

static void set_waiting(uint64_t key, bool on)
{
    int i = 0;
    while (i < nwaiting && waiting[i] != key)
        i++;
    if (on && i == nwaiting && nwaiting < MAX_WAITING)
        waiting[nwaiting++] = key;
    else if (!on && i < nwaiting)
        waiting[i] = waiting[--nwaiting];
}

void mpi_ctx_offer(struct ctx_round *r, uint32_t *mask)
{
    r->owner = !owned && !lower_waiting(r->key);
    if (r->owner) {
        owned = true;
        mpi_ctx_free_mask(mask);
    } else {
        memset(mask, 0, CTX_MASK_WORDS * sizeof *mask);
    }
    mask[CTX_MASK_WORDS] = r->owner ? ~0u : 0;
}

void mpi_ctx_abandon(struct ctx_round *r)
{
    if (r->owner)
        owned = false;
    r->owner = false;
    set_waiting(r->key, false);
}

int mpi_ctx_settle(struct ctx_round *r, const uint32_t *agreed)
{
    if (r->owner)
        owned = false;
    r->owner = false;
    if (agreed[CTX_MASK_WORDS] != ~0u) {
        /* Some member's ids were another agreement's this round. */
        set_waiting(r->key, true);
        mpi_thread_yield();
        return -2;
    }
    set_waiting(r->key, false);
    /* The caller installs it before it lets the library's lock go, so no
     * other agreement of this process offers it meanwhile. */
    return mpi_ctx_lowest(agreed);
}
