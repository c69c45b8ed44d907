/*
 * Matched probes (MPI_Mprobe): a message taken out of matching, so that no
 * receive or probe after it (of this thread or another) can take it, and
 * received later into a buffer the layer sized from its length.
 *
 * The message is taken where a receive would find it, in the same order:
 *   - the saved queue (drained, or sent to oneself): unlinked from it;
 *   - Portals: a use-once priority ME with the receive's selectors over a
 *     staging buffer that holds an eager message or a rendezvous
 *     announcement's pushed bytes whole.  Appending it takes the oldest
 *     matching unexpected message off Portals' list atomically, as a
 *     receive's append does.  If nothing matched, unlinking it succeeds
 *     and there is no message; if the unlink fails something matched it
 *     (at the append, or arriving just then) and its event is on the way.
 *     The ME is never left posted: a probe that finds nothing leaves no
 *     trace, and a blocking one looks again after each event, like
 *     msg_probe.
 * Either way the result is a saved message off the queue: its header and
 * the bytes that came (an eager message's all, a rendezvous message's
 * pushed first bytes; a drained one's maybe still arriving, pending).  A
 * rendezvous sender's buffer stays exposed until msg_mrecv pulls the rest
 * into the layer's buffer, as a receive of a saved message does
 * (msg_recv_take_saved): one path for truncation, synchronous sends and
 * pulls.
 */
#include <stdlib.h>
#include <string.h>

#include "msg_internal.h"

struct mprobe {
    int kind; /* OBJ_MPROBE */
    struct msg_saved *s;
};

/* The staging buffer: one, since the engine runs one call at a time and
 * take() returns only when no ME refers to it any more.  Allocated at the
 * first matched probe: a program that makes none pays nothing. */
static char *stage;
static uint64_t stage_len;

void msg_mprobe_event(void *probe, const ptl_event_t *ev)
{
    struct mprobe *p = probe;
    if (ev->ni_fail_type != PTL_NI_OK)
        msg_fatal("a message from node %u failed on arrival (Portals failure %d)",
                  ev->initiator.rank, (int)ev->ni_fail_type);
    bool rdv = ev->hdr_data & HD_RDV;
    /* The staging buffer holds any eager message whole, so the only way
     * to lose bytes is a sender with a larger eager limit than ours. */
    if (!rdv && ev->mlength < ev->rlength)
        msg_fatal("an eager message of %llu bytes from node %u is over this node's eager "
                  "limit (%s_EAGER must be the same on every node)",
                  (unsigned long long)ev->rlength, ev->initiator.rank, eng.prefix);
    struct msg_saved *s = calloc(1, sizeof *s);
    if (!s)
        msg_fatal("no memory to keep a probed message");
    s->src = (long)ev->initiator.rank;
    s->bits = ev->match_bits;
    s->hd = ev->hdr_data;
    /* PUT: the bytes are in the staging buffer; PUT_OVERFLOW: in
     * unexpected space, which the caller has released already
     * (msg_ovf_claimed) and which must be copied before the next event. */
    s->posted = ev->type == PTL_EVENT_PUT;
    if (ev->mlength) {
        s->len = ev->mlength;
        s->data = msg_saved_alloc(s->len);
        memcpy(s->data, s->posted ? stage : ev->start, (size_t)s->len);
    }
    p->s = s;
}

/* One look: the message a receive would take now, taken; NULL if none. */
static struct msg_saved *take(long srcsel, uint64_t bits, uint64_t ignore)
{
    struct msg_saved *s = msg_saved_find(bits, ignore, srcsel, true);
    if (s)
        return s;
    if (!stage) {
        stage_len = eng.eager_max > eng.push_max ? eng.eager_max : eng.push_max;
        stage = malloc(stage_len ? (size_t)stage_len : 1);
        if (!stage)
            msg_fatal("no memory for %llu bytes of matched-probe staging",
                      (unsigned long long)stage_len);
    }
    struct mprobe p = {.kind = OBJ_MPROBE};
    ptl_me_t me = msg_recv_me(stage, stage_len, bits, ignore, srcsel);
    ptl_handle_me_t h;
    int rc = PtlMEAppend(eng.ni, PT_DATA, &me, PTL_PRIORITY_LIST, &p, &h);
    if (rc != PTL_OK)
        msg_fatal("cannot post a matched probe (Portals error %d)", rc);
    if (PtlMEUnlink(h) == PTL_OK)
        return NULL; /* nothing matched it */
    while (!p.s)
        msg_progress(true);
    return p.s;
}

struct msg_saved *msg_mprobe(long srcsel, uint64_t bits, uint64_t ignore, bool block,
                             struct msg_probe_info *out)
{
    /* A program polling with a nonblocking probe moves the engine on. */
    if (!block)
        msg_progress(false);
    struct msg_saved *s;
    while (!(s = take(srcsel, bits, ignore)) && block)
        msg_progress(true); /* something arrives, then look again */
    if (s)
        msg_saved_info(s, out);
    return s;
}

void msg_mrecv(struct msg_req *r, struct msg_saved *m, void *buf, uint64_t count)
{
    r->is_recv = true;
    r->done = false;
    r->error = MSG_OK;
    r->buf = buf;
    r->count = count;
    r->bits = m->bits & ~MSG_BIT_PUSHED;
    r->ignore = 0;
    r->srcsel = m->src;
    msg_recv_take_saved(r, m);
}
