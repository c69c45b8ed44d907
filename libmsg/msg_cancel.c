/*
 * The cancel of a send (MPI_Cancel of a send request).  A send may be
 * cancelled only while no receive has matched its message, and only the
 * receiver knows that: its message may wait in Portals' unexpected list
 * or in the library's saved queue, or have gone to a receive.  So:
 *
 *   1. the sender puts CTL_CANCEL with the message's id (hdr_data, eager
 *      and rendezvous ids counted apart: CANCEL_RDV) and its match bits;
 *   2. the receiver drains every unexpected message from that sender into
 *      its saved queue (msg_flow_drain_from: a message left in Portals
 *      must not be older than one saved from the same sender), and when the
 *      drain's end marker comes, takes the message with that id out of the
 *      queue if no receive is waiting for it;
 *   3. it answers CTL_CANCEL_ANS with CANCEL_DONE if it did.  The sender
 *      then lets go of what of the send is left (a rendezvous exposure, a
 *      late send's place), and the request is done, cancelled.  Otherwise
 *      the request is done when the send is, as if never cancelled.
 *
 * The question goes only once the receiver has accepted the message (its
 * ACK; they accept in send order): asked earlier, it could overtake a
 * message still queued behind the send window, which would then not be
 * found.  The receiver answers from any engine call (a blocking
 * receive, a barrier): the sender's wait needs that progress there.
 */
#include <stdlib.h>

#include "msg_internal.h"

/* A receiver's pending question: answered at its drain's end marker. */
struct cancel_q {
    int kind; /* OBJ_CANCEL */
    long from;
    uint64_t arg, bits;
};

/* Take the message out of the saved queue: false if it is not there, or a
 * receive waits for the rest of it already. */
static bool saved_cancel(long from, uint64_t arg, uint64_t bits)
{
    uint64_t id = arg & HD_ID_MASK;
    bool rdv = arg & CANCEL_RDV;
    struct msg_saved *prev = NULL;
    for (struct msg_saved *s = eng.saved_head; s; prev = s, s = s->next) {
        if (s->src != from || ((s->hd >> HD_ID_SHIFT) & HD_ID_MASK) != id ||
            !(s->hd & HD_RDV) != !rdv || ((s->bits ^ bits) & ~MSG_BIT_PUSHED) || s->waiter)
            continue;
        msg_saved_unlink(prev, s);
        if (s->pending)
            s->cancelled = true; /* msg_flow.c frees it when its data is in */
        else
            msg_saved_release(s);
        return true;
    }
    return false;
}

void msg_cancel_asked(long from, uint64_t arg, uint64_t bits)
{
    struct cancel_q *q = calloc(1, sizeof *q);
    if (!q)
        msg_fatal("no memory for node %ld's cancel", from);
    q->kind = OBJ_CANCEL;
    q->from = from;
    q->arg = arg;
    q->bits = bits;
    eng.cancel_drains++;
    msg_flow_drain_from(from, q);
}

void msg_cancel_event(const ptl_event_t *ev)
{
    struct cancel_q *q = ev->user_ptr;
    eng.cancel_drains--;
    uint64_t arg = q->arg & (HD_ID_MASK | CANCEL_RDV);
    if (saved_cancel(q->from, q->arg, q->bits))
        arg |= CANCEL_DONE;
    msg_ctl_send_bits(q->from, CTL_HD(CTL_CANCEL_ANS, arg), q->bits);
    free(q);
}

/* The request's cancel is answered: done now, or when the send is. */
static void answered(struct msg_req *r, bool cancelled)
{
    r->cancel_asked = false;
    if (cancelled) {
        msg_send_cancelled(r);
        r->cancelled = true;
        r->done = true;
    } else {
        r->done = r->done_before || r->sent_meanwhile;
    }
    if (r->done && r->ignored)
        msg_req_free(r);
}

/* The asked request for (from, arg, bits), off the list; NULL if none. */
static struct msg_req *asked_take(long from, uint64_t arg, uint64_t bits)
{
    uint64_t id = arg & HD_ID_MASK;
    bool rdv = arg & CANCEL_RDV;
    struct msg_req *prev = NULL;
    for (struct msg_req *r = eng.cancel_head; r; prev = r, r = r->cancel_next) {
        if (r->dest != from || r->send_id != id || r->send_rdv != rdv || r->send_bits != bits)
            continue;
        if (prev)
            prev->cancel_next = r->cancel_next;
        else
            eng.cancel_head = r->cancel_next;
        return r;
    }
    return NULL;
}

void msg_cancel_answered(long from, uint64_t arg, uint64_t bits)
{
    struct msg_req *r = asked_take(from, arg, bits);
    if (!r)
        msg_fatal("node %ld answered a cancel (message %llu) nobody asked for", from,
                  (unsigned long long)(arg & HD_ID_MASK));
    answered(r, arg & CANCEL_DONE);
}

/* The question never reached its receiver, which had announced its exit:
 * it is gone, and nothing it had not received will be.  A short message
 * may have been received before it went: not cancelled (its send is
 * complete).  A rendezvous one whose send is not complete was never taken
 * whole, so no receive completed with it: cancelled (waiting for the send
 * instead would wait for a pull that never comes). */
void msg_cancel_gone(long to, uint64_t arg, uint64_t bits)
{
    struct msg_req *r = asked_take(to, arg, bits);
    if (r)
        answered(r, r->send_rdv && !r->done_before && !r->sent_meanwhile);
}

void msg_cancel_send(struct msg_req *r)
{
    if (!r->in_use || r->is_recv || r->cancel_asked || r->cancelled)
        return;
    if (r->dest == eng.rank) { /* its message is in the saved queue or taken */
        if (saved_cancel(eng.rank, r->send_id, r->send_bits))
            r->cancelled = true;
        return;
    }
    /* Even a done send is asked for: an eager copy, or a rendezvous one
     * pushed whole into a landing buffer, may still wait unmatched. */
    r->cancel_asked = true;
    r->done_before = r->done;
    r->sent_meanwhile = false;
    r->done = false;
    r->cancel_next = eng.cancel_head;
    eng.cancel_head = r;
    r->cancel_unsent = true;
    msg_cancel_kick(r->dest);
}

void msg_cancel_kick(long t)
{
    for (struct msg_req *r = eng.cancel_head; r; r = r->cancel_next)
        if (r->cancel_unsent && r->dest == t && msg_send_accepted(t, r->send_seq)) {
            r->cancel_unsent = false;
            msg_ctl_send_bits(t, CTL_HD(CTL_CANCEL, r->send_id | (r->send_rdv ? CANCEL_RDV : 0)),
                              r->send_bits);
        }
}
