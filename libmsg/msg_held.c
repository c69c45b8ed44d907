/*
 * Receives Portals has no room for.
 *
 * Portals' match entries are few (2048 by default) and shared with
 * rendezvous sends, unexpected space, barriers and probes, so at most
 * eng.recv_cap receives are MEs at once (PREFIX_POSTED, half the entries
 * by default and at most their share, msg_start.c split_entries).
 * A program posting more (one receive per peer on a large job, or per
 * thread) ended at the first PtlMEAppend Portals refused.  Now the receive
 * past the cap waits here, in posting order, and so does every receive
 * after it while one waits: every ME is then older than every held
 * receive, and a message that matches an ME and a held
 * receive goes to the ME, as MPI's order asks.
 *
 * A held receive still takes its message as soon as it is there:
 *   - room: the oldest are posted, at the end of each progress pass;
 *   - a message it matches lands as unexpected (Portals' overflow list, an
 *     event that says who sent it with which bits), or is there already
 *     (found by one PtlMESearch when the receive is held):  the oldest held
 *     receive that matches those bits from that sender is posted as an ME
 *     for exactly them, which Portals matches against its unexpected list
 *     at once, taking the oldest such message, and which is taken back if
 *     nothing matched.  A message arriving in between with the same sender
 *     and bits is one this receive is the right one for, so no message ever
 *     goes to a held receive another one before it matches;
 *   - the saved queue (drained or sent to oneself): held receives take from
 *     it in order when it grew.
 * The cost is one copy more for a message that finds its receive held, and
 * a look at the held receives that could want it (kept by sender and bits,
 * below: not a walk of them all).  A probe sees a message a held
 * receive is about to take (docs/mpi.md, Deviations).
 */
#include <stdlib.h>

#include "msg_internal.h"

/* Senders and bits of unexpected messages that may be for a held receive,
 * oldest first: one per arrival while receives are held, one per search
 * that found something.  A hint takes every message of its sender and bits
 * that a held receive wants, so one too many costs an append and unlink. */
struct hint {
    long src;
    uint64_t bits;
};
static struct hint *hints;
static long n_hints, cap_hints;
static long n_unsearched;     /* held receives not yet searched for */
/* Every held receive before it has been searched for (NULL: all have), so
 * a receive held behind thousands is searched for without a walk past them
 * each pass. */
static struct msg_req *unsearched_from;
static long n_found;          /* searches that found a message (maybe taken since) */
static uint64_t saved_seen;   /* eng.saved_gen when held receives last looked */
static bool running;

/* Each search's answer is an event on the data EQ, whose room is counted
 * for messages arriving (msg_flow.c): a few searches in flight, not a
 * thousand held receives' at once (that overflowed the EQ). */
#define SEARCHES_IN_FLIGHT 16
static int searching;

/* Held receives are also kept by what they match, so that a message finds
 * the oldest one that wants it without a walk past thousands that do not:
 * one for a given sender and exact bits in the bucket of (sender, bits);
 * for MPI_ANY_SOURCE and exact bits, in that of (MSG_ANY_SOURCE, bits);
 * one with ignore bits (a tag wildcard), in the wild list.  Each list is in
 * held order, so its first receive that wants a message is the oldest
 * there, and the oldest of the three (post_seq) is the one MPI's order
 * gives it. */
#define BUCKETS 256
struct bucket {
    struct msg_req *head, *tail;
};
static struct bucket buckets[BUCKETS], wild;

static struct bucket *bucket_of_key(long src, uint64_t bits)
{
    uint64_t h = ((bits & ~MSG_BIT_PUSHED) ^ ((uint64_t)src * 0x9e3779b97f4a7c15ULL)) *
                 0xff51afd7ed558ccdULL;
    return &buckets[h >> 56];
}

static struct bucket *bucket_of(const struct msg_req *r)
{
    if (r->ignore & ~MSG_BIT_PUSHED)
        return &wild;
    return bucket_of_key(r->srcsel, r->bits);
}

static void bucket_remove(struct msg_req *r)
{
    struct bucket *b = bucket_of(r);
    struct msg_req *prev = NULL, *q = b->head;
    while (q != r) {
        prev = q;
        q = q->held_bnext;
    }
    if (prev)
        prev->held_bnext = r->held_bnext;
    else
        b->head = r->held_bnext;
    if (b->tail == r)
        b->tail = prev;
    r->held_bnext = NULL;
}

void msg_held_add(struct msg_req *r)
{
    eng.st_held++;
    r->held = true;
    r->searched = false;
    r->found = false;
    n_unsearched++;
    if (!unsearched_from)
        unsearched_from = r;
    r->held_next = NULL;
    r->held_prev = eng.held_tail;
    if (eng.held_tail)
        eng.held_tail->held_next = r;
    else
        eng.held_head = r;
    eng.held_tail = r;
    struct bucket *b = bucket_of(r);
    r->held_bnext = NULL;
    if (b->tail)
        b->tail->held_bnext = r;
    else
        b->head = r;
    b->tail = r;
}

/* Back at the head of both lists, as it was (it is older than all others):
 * the undoing of unlink_held for the oldest. */
static void readd_oldest(struct msg_req *r)
{
    r->held = true;
    if (!r->searched) {
        n_unsearched++;
        unsearched_from = r;
    }
    r->held_prev = NULL;
    r->held_next = eng.held_head;
    if (eng.held_head)
        eng.held_head->held_prev = r;
    eng.held_head = r;
    if (!eng.held_tail)
        eng.held_tail = r;
    struct bucket *b = bucket_of(r);
    r->held_bnext = b->head;
    b->head = r;
    if (!b->tail)
        b->tail = r;
}

/* Off the queue and its bucket. */
static void unlink_held(struct msg_req *r)
{
    if (r->held_prev)
        r->held_prev->held_next = r->held_next;
    else
        eng.held_head = r->held_next;
    if (r->held_next)
        r->held_next->held_prev = r->held_prev;
    else
        eng.held_tail = r->held_prev;
    if (unsearched_from == r)
        unsearched_from = r->held_next;
    bucket_remove(r);
    r->held = false;
    if (!r->searched)
        n_unsearched--;
}

bool msg_held_cancel(struct msg_req *r)
{
    unlink_held(r);
    msg_req_free(r);
    return true;
}

void msg_held_hint(long src, uint64_t bits)
{
    if (n_hints == cap_hints) {
        long cap = cap_hints ? 2 * cap_hints : 64;
        struct hint *h = realloc(hints, (size_t)cap * sizeof *h);
        if (!h)
            msg_fatal("no memory for %ld notes of unexpected messages", cap);
        hints = h;
        cap_hints = cap;
    }
    hints[n_hints].src = src;
    hints[n_hints].bits = bits;
    n_hints++;
}

void msg_held_search_event(const ptl_event_t *ev)
{
    /* The request may have been cancelled and reused since: the hint is
     * the message's own, and a stray mark only costs another search. */
    struct msg_req *r = ev->user_ptr;
    searching--;
    if (ev->ni_fail_type != PTL_NI_OK)
        return;
    msg_held_hint((long)ev->initiator.rank, ev->match_bits);
    if (r->held && !r->found) {
        r->found = true;
        n_found++;
    }
}

static bool wants(const struct msg_req *r, long src, uint64_t bits)
{
    return (r->srcsel == MSG_ANY_SOURCE || r->srcsel == src) &&
           ((bits ^ r->bits) & ~(r->ignore | MSG_BIT_PUSHED)) == 0;
}

static struct msg_req *first_wanting(const struct bucket *b, long src, uint64_t bits,
                                     struct msg_req *best)
{
    for (struct msg_req *r = b->head; r; r = r->held_bnext)
        if (wants(r, src, bits))
            return !best || r->post_seq < best->post_seq ? r : best;
    return best;
}

/* The oldest held receive a message from src with bits is for (NULL: none). */
static struct msg_req *oldest_wanting(long src, uint64_t bits)
{
    struct msg_req *r = first_wanting(bucket_of_key(src, bits), src, bits, NULL);
    r = first_wanting(bucket_of_key(MSG_ANY_SOURCE, bits), src, bits, r);
    return first_wanting(&wild, src, bits, r);
}

/* Each oldest held receive a message from src with bits is for, posted
 * for exactly them, until one finds none.  False when Portals has no entry
 * to spare or the data EQ no room for more events before the next poll. */
static bool take_hinted(long src, uint64_t bits)
{
    for (;;) {
        if (eng.local_events >= LOCAL_EVENTS_MAX)
            return false; /* the rest after the next poll */
        struct msg_req *r = oldest_wanting(src, bits);
        if (!r)
            return true;
        ptl_me_t me = msg_recv_me(r->buf, r->count, bits & ~MSG_BIT_PUSHED, 0, src);
        ptl_handle_me_t h;
        int rc = PtlMEAppend(eng.ni, PT_DATA, &me, PTL_PRIORITY_LIST, r, &h);
        if (rc == PTL_NO_SPACE)
            return false;
        if (rc != PTL_OK)
            msg_fatal("cannot post a receive (Portals error %d)", rc);
        eng.local_events++;
        if (PtlMEUnlink(h) == PTL_OK)
            return true; /* none (left): another receive or a probe took it */
        /* Matched: its event completes the receive. */
        unlink_held(r);
        msg_recv_posted(r, h);
        eng.st_held_taken++;
    }
}

/* Room: the oldest go to Portals (each looks at the saved queue first). */
static void post_oldest(void)
{
    while (eng.held_head && eng.recv_mes < eng.recv_cap &&
           eng.local_events < LOCAL_EVENTS_MAX) {
        struct msg_req *r = eng.held_head;
        unlink_held(r); /* first: a saved message may complete and free it */
        if (!msg_recv_post(r)) { /* r untouched */
            readd_oldest(r);
            return;
        }
    }
}

void msg_held_run(void)
{
    if (running)
        return;
    running = true;
    post_oldest();
    /* Messages saved since the last look go to the oldest receive each. */
    if (eng.held_head && saved_seen != eng.saved_gen) {
        saved_seen = eng.saved_gen;
        struct msg_req *r = eng.held_head;
        while (r) {
            struct msg_req *next = r->held_next;
            struct msg_saved *s =
                eng.saved_head ? msg_saved_find(r->bits, r->ignore, r->srcsel, true) : NULL;
            if (s) {
                unlink_held(r);
                msg_recv_take_saved(r, s);
            }
            r = next;
        }
    }
    long k = 0;
    while (k < n_hints && eng.held_head && eng.local_events < LOCAL_EVENTS_MAX &&
           take_hinted(hints[k].src, hints[k].bits))
        k++;
    if (!eng.held_head)
        k = n_hints;
    for (long i = k; i < n_hints; i++)
        hints[i - k] = hints[i];
    n_hints -= k;
    /* A receive whose search found a message another took looks again
     * (once the hints are spent), and a newly held one looks for the first
     * time: what Portals holds for it comes back as a hint
     * (msg_held_search_event). */
    if (n_found && !n_hints) {
        n_found = 0;
        for (struct msg_req *r = eng.held_head; r; r = r->held_next)
            if (r->found) {
                r->found = false;
                if (r->searched) {
                    r->searched = false;
                    n_unsearched++;
                }
            }
        unsearched_from = eng.held_head;
    }
    if (!n_unsearched)
        unsearched_from = NULL;
    else if (!unsearched_from)
        unsearched_from = eng.held_head; /* not expected: look from the start */
    for (; unsearched_from && n_unsearched && searching < SEARCHES_IN_FLIGHT &&
           eng.local_events < LOCAL_EVENTS_MAX;
         unsearched_from = unsearched_from->held_next) {
        struct msg_req *r = unsearched_from;
        if (r->searched)
            continue;
        searching++;
        eng.local_events++;
        ptl_me_t me = msg_recv_me(NULL, 0, r->bits, r->ignore, r->srcsel);
        if (PtlMESearch(eng.ni, PT_DATA, &me, PTL_SEARCH_ONLY, r) != PTL_OK)
            msg_fatal("PtlMESearch failed for a held receive");
        r->searched = true;
        n_unsearched--;
    }
    running = false;
}
