/*
 * Context-id agreements when threads make communicators at once
 * (MPI_THREAD_MULTIPLE), after MPICH's way: each agreement is rounds in
 * which every member offers free ids and the ids free on all are the
 * ANDed offers (an allreduce over the parent, a group's first member
 * gathering them, or two leaders swapping their groups').
 *
 * Two agreements of one process in flight at once (two threads, each
 * duplicating a communicator of its own) must never offer the same id, or
 * both could take it.  So the free ids are two pools, each offered by one
 * agreement of the process at a time:
 *   - the eager pool (ids below EAGER_IDS), which an agreement offers in
 *     its first round if no other agreement of the process holds it;
 *   - the rest, which an agreement offers in a later round if no other
 *     holds it and no other live agreement of the process has a lower key
 *     (its parent communicator's context id, and a tag where several
 *     share one parent): so all members end up offering for the same
 *     agreement and it goes through, then the next.
 * Anything else offers nothing for that round.  An agreement is live once
 * its first round has ended, which needs every member in it: one that a
 * member has not joined yet (that member's thread may wait for another
 * agreement to end first) holds up nothing but the eager pool, which no
 * agreement needs to end.  An empty AND is the end (no id free) only
 * when every member offered the whole rest; otherwise the agreement goes
 * round again.  The eager pool is also what lets a thread's agreement
 * over few processes (MPI_COMM_SELF's duplicate) through in one round
 * while another thread's waits for slow members (MPICH's threads/comm/
 * comm_dup_deadlock).
 *
 * Without MULTIPLE no two agreements overlap: one round offering every
 * free id.  Either way the id agreed on is installed before the thread
 * lets the library's lock go (nothing between blocks), so no other
 * agreement of the process offers it meanwhile.
 */
#include <string.h>

#include "mpi_impl.h"
#include "mpi_thread.h"

#define EAGER_WORDS 2 /* 64 ids */
#define MAX_WAITING 256

static int held; /* pools (CTX_EAGER | CTX_REST) some round of the process offers */
static uint64_t live[MAX_WAITING]; /* keys of the live agreements in flight */
static int nlive;

static bool lower_live(uint64_t key)
{
    for (int i = 0; i < nlive; i++)
        if (live[i] < key)
            return true;
    return false;
}

static void set_live(uint64_t key, bool on)
{
    int i = 0;
    while (i < nlive && live[i] != key)
        i++;
    if (on && i == nlive && nlive < MAX_WAITING)
        live[nlive++] = key;
    else if (!on && i < nlive)
        live[i] = live[--nlive];
}

int mpi_ctx_pick(bool first_round, int held_now, bool lower)
{
    if (first_round)
        return held_now & CTX_EAGER ? 0 : CTX_EAGER;
    if ((held_now & CTX_REST) || lower)
        return 0;
    return CTX_REST | (held_now & CTX_EAGER ? 0 : CTX_EAGER);
}

void mpi_ctx_offer(struct ctx_round *r, uint32_t *mask)
{
    uint32_t free_ids[CTX_MASK_WORDS];
    mpi_ctx_free_mask(free_ids);
    memset(mask, 0, CTX_OFFER_WORDS * sizeof *mask);
    if (!atomic_load(&mpi_multiple))
        r->pool = CTX_EAGER | CTX_REST;
    else
        r->pool = mpi_ctx_pick(r->rounds == 0, held, lower_live(r->key));
    for (int i = 0; i < CTX_MASK_WORDS; i++)
        if (r->pool & (i < EAGER_WORDS ? CTX_EAGER : CTX_REST))
            mask[i] = free_ids[i];
    held |= r->pool;
    /* Whether this offer was the whole of what is not eager. */
    mask[CTX_MASK_WORDS] = r->pool & CTX_REST ? ~0u : 0;
    r->rounds++;
}

static void release(struct ctx_round *r)
{
    held &= ~r->pool;
    r->pool = 0;
}

void mpi_ctx_abandon(struct ctx_round *r)
{
    release(r);
    set_live(r->key, false);
}

int mpi_ctx_settle(struct ctx_round *r, const uint32_t *agreed)
{
    release(r);
    int id = mpi_ctx_lowest(agreed);
    if (id >= 0 || agreed[CTX_MASK_WORDS] == ~0u) {
        set_live(r->key, false);
        return id; /* -1: none is free on every member */
    }
    /* Some member offered another pool, or none, this round.  Every member
     * is in it now: it is live, and the rest goes to the lowest live
     * agreement whatever the order they came in. */
    set_live(r->key, true);
    mpi_thread_yield();
    return -2;
}
