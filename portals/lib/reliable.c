/*
 * Reliable, ordered delivery per peer over an unreliable frame service.
 *
 * Sender: every message is cut into frames of at most frame_max bytes; each
 * frame gets the next sequence number of the peer's stream and is sent as
 * (header, pointers into the source buffer) - the payload is never staged.
 * At most PTL_REL_WIN frames are unacknowledged.  Loss is found two ways:
 * from the acks (a frame sent clearly before one that has been acked is
 * lost, like TCP RACK; three pure acks that ack nothing new point at the
 * first hole) and resent at once, or by a per-frame timer whose timeout
 * follows the measured round trip (Jacobson/Karels srtt + 4 rttvar),
 * doubling on each expiry up to rto_max.  The timers of a peer's frames
 * resend one frame per timeout, counted from the last ack that
 * acknowledged something new (as TCP's one timer, RFC 6298 5.3): under
 * QEMU's TCG on a busy host a receiver stops for milliseconds, and a timer
 * per frame sent the whole window again into it.  A real loss of many
 * frames is repaired by the resend's ack, which shows those sent before it
 * lost.  Every transmission carries its number (xmit) and every ack echoes
 * that of the frame that moved it (ack_xmit), as TCP's timestamps do:
 * round-trip samples come from acks known to answer a frame's last
 * transmission, or its first when the timer had resent it (Karn: never
 * from the others; without the latter the estimate never learnt a stall,
 * and each stall as long cost a copy again), and such an ack of a resend
 * shows the frames sent before the resend lost.  In 2- and 4-node NX rings
 * of 1 and 8 MiB messages on a 2-core TCG host, 2-9 % of the frames went
 * twice before, every copy to a receiver that had the original; now a few
 * per job (docs/performance.md, "Copies of frames that had arrived").
 * Without the echo, a stream whose every frame had to be resent (one loss,
 * then each frame arriving behind the hole the previous one left: the
 * receiver buffers nothing) never had a sample or a loss signal again and
 * crawled at one timer of rto_max a frame.  A fixed timeout was wrong both
 * ways: a window of jumbo frames takes longer than 2 ms to drain on a busy
 * node, so a lossless stream resent most of its frames.  A frame
 * unacknowledged for giveup_ns makes the peer unreachable: its messages
 * fail with PTL_NI_UNDELIVERABLE and the stream restarts in a new session.  Because resends re-read the
 * user buffer, a message completes (SEND event) only when all of its frames
 * are acknowledged.
 *
 * Receiver: frames are processed in sequence order.  An out-of-order frame
 * is accepted only if it belongs to the message currently being received
 * (already matched: placement is position independent); it is placed and
 * recorded in the SACK bitmap.  Anything else out of order is dropped
 * without acknowledgement and will be resent - no payload is ever buffered.
 */
#include "ptl_internal.h"

#define MAX_SG 32

uint32_t ptl_rel_new_session(void)
{
    ptl_g.session_seed = ptl_g.session_seed * 1664525u + 1013904223u;
    return ptl_g.session_seed | 1u;
}

void ptl_txmsg_done(struct ptl_ni *ni, struct ptl_txmsg *m, ptl_ni_fail_t f)
{
    switch (m->kind) {
    case PTL_TX_OP:
        ptl_op_tx_done(ni, m->op, f);
        return;
    case PTL_TX_REPLY:
        if (m->entry) {
            struct ptl_entry *e = m->entry;
            if (m->post_ev) {
                m->ev.ni_fail_type = f;
                ptl_target_event(ni, e, &m->ev, false);
            }
            e->busy--;
            ptl_entry_settle(ni, e);
        }
        ptl_resp_free(ni, m);
        return;
    default:
        ptl_resp_free(ni, m);
        return;
    }
}

void ptl_rel_queue(struct ptl_ni *ni, struct ptl_peer *p, struct ptl_txmsg *m)
{
    ptl_peer_busy(ni, p);
    m->next = NULL;
    m->next_off = 0;
    m->frames_out = 0;
    m->started = false;
    if (p->q_tail)
        p->q_tail->next = m;
    else
        p->q_head = m;
    p->q_tail = m;
}

/* Timeout for a frame sent now.  After a timer expiry it stays doubled
 * (per expiry) until a clean sample arrives: with Karn's rule a round trip
 * longer than the timeout would otherwise never be measured, and every
 * frame would keep expiring at the same too-short timeout. */
static uint64_t rto_of(const struct ptl_peer *p)
{
    uint64_t r = p->srtt ? p->rto : ptl_g.tun.rto_init_ns;
    for (unsigned i = 0; i < p->backoff && r < ptl_g.tun.rto_max_ns; i++)
        r *= 2;
    return r < ptl_g.tun.rto_max_ns ? r : ptl_g.tun.rto_max_ns;
}

static void fill_ack(struct ptl_peer *p, struct ptl_wire_hdr *h)
{
    if (!p->rx_valid)
        return;
    h->flags |= PTL_WF_ACKV;
    h->ack_session = p->rx_session;
    h->ack = p->rcv_nxt;
    h->ack_xmit = p->rx_echo;
    h->sack = p->sack;
    p->ack_pending = 0;
}

/* Hand one frame to the host: header h, the ACK record `rec` if not NULL
 * (PTL_WF_ACKIN), and the payload sg[1..nsg-1].  A link that checks its
 * frames (PTL_WF_LINKCRC) needs no checksum; otherwise it covers the
 * header, the record and the payload. */
static void xmit(struct ptl_ni *ni, struct ptl_peer *p, struct ptl_wire_hdr *h,
                 const struct ptl_wire_ackrec *rec, struct ptl_sg *sg, int nsg)
{
    uint8_t hdr[PTL_WIRE_HDR_LEN + PTL_WIRE_ACKREC_LEN];
    size_t len = PTL_WIRE_HDR_LEN;
    h->version = PTL_WIRE_VERSION;
    h->crc = 0;
    if (ni->link_checks_payload)
        h->flags |= PTL_WF_LINKCRC;
    if (rec) {
        h->flags |= PTL_WF_ACKIN;
        ptl_wire_ackrec_encode(rec, hdr + PTL_WIRE_HDR_LEN);
        len += PTL_WIRE_ACKREC_LEN;
    }
    ptl_wire_encode(h, hdr);
    if (!ni->link_checks_payload) {
        uint32_t c = ptl_crc32c(PTL_CRC32C_INIT, hdr, len);
        for (int i = 1; i < nsg; i++)
            c = ptl_crc32c(c, sg[i].base, sg[i].len);
        ptl_wput(hdr + 4, PTL_CRC32C_FINAL(c), 4);
    }
    sg[0].base = hdr;
    sg[0].len = len;
    struct ptl_lib_stats *st = &ptl_g.stats[ni->iface];
    /* The host may call back into nothing here; the lock stays held. */
    PTL_TRACE(TP_TX_HDR);
    if (ptl_host_send(ni->iface, p->nid, sg, nsg) == 0)
        st->tx_frames++;
    else
        st->tx_host_busy++;
}

/* The number a transmission of f carries: 1 for the first. */
static uint8_t xmit_of(const struct ptl_txfrag *f)
{
    return f->tries < 254 ? (uint8_t)(f->tries + 1) : 255;
}

static void frag_hdr(struct ptl_peer *p, uint32_t seq, const struct ptl_txfrag *f,
                     bool resend, struct ptl_wire_hdr *h)
{
    *h = f->m->h;
    h->xmit = xmit_of(f);
    h->flags = (uint16_t)(f->flags | PTL_WF_SEQ | (resend ? PTL_WF_ACKNOW : 0));
    h->session = p->tx_session;
    h->seq = seq;
    h->frag_off = f->off;
    h->frag_len = f->len;
    fill_ack(p, h);
}

/* Frame seq (f), with the ACK it carries if any: every transmission of
 * the frame carries it, as it is acknowledged only with the frame. */
static void send_frag(struct ptl_ni *ni, struct ptl_peer *p, uint32_t seq,
                      struct ptl_txfrag *f, bool resend)
{
    struct ptl_wire_hdr h;
    frag_hdr(p, seq, f, resend, &h);
    struct ptl_wire_ackrec rec, *r = NULL;
    if (f->carried) {
        const struct ptl_wire_hdr *a = &f->carried->h;
        rec = (struct ptl_wire_ackrec){a->msg_id, a->mlength, a->remote_offset, a->fail,
                                       a->ack_req};
        r = &rec;
    }
    struct ptl_sg sg[MAX_SG + 1];
    int n = ptl_region_sg(&f->m->src, f->m->src_off + f->off, f->len, sg + 1,
                          MAX_SG);
    xmit(ni, p, &h, r, sg, n + 1);
}

/* An ACK p holds for the program's next message goes now (ptl_rel_push
 * takes a hold that ended at a time before any the clock gives, its
 * reason, as over). */
static void release_held(struct ptl_ni *ni, struct ptl_peer *p, enum ptl_held_release why)
{
    p->hold_until = why;
    ptl_rel_push(ni, p);
}

/* An ACK held for an answer goes alone after all: why, from its hold. */
static void count_alone(struct ptl_ni *ni, uint64_t hold)
{
    struct ptl_lib_stats *st = &ptl_g.stats[ni->iface];
    if (hold == PTL_HELD_WAIT)
        st->acks_alone_wait++;
    else if (hold == PTL_HELD_FRAME)
        st->acks_alone_frame++;
    else
        st->acks_alone_time++;
}

static void send_rack(struct ptl_ni *ni, struct ptl_peer *p, enum ptl_held_release why)
{
    /* An ACK held for the program's next message carries the ack: it goes
     * now instead, unless the window is full. */
    if (p->hold_until) {
        release_held(ni, p, why);
        if (!p->ack_pending)
            return;
    }
    struct ptl_wire_hdr h;
    struct ptl_sg sg[1];
    memset(&h, 0, sizeof(h));
    h.op = PTL_WOP_RACK;
    h.jid = ni->jid;
    h.uid = ni->uid;
    h.src_nid = ni->id.phys.nid;
    h.src_pid = ni->id.phys.pid;
    h.src_rank = ni->rank;
    h.dst_nid = p->nid;
    h.dst_pid = p->pid;
    h.ni_type = ni->wni;
    /* Our own stream's session, though a RACK is outside it: what tells
     * the peer that a first data frame arriving behind this RACK is ours
     * and not a restarted process's (ptl_rel_rx). */
    h.session = p->tx_session;
    fill_ack(p, &h);
    ptl_g.stats[ni->iface].acks_sent++;
    xmit(ni, p, &h, NULL, sg, 1);
}

/* Largest fragment starting at `off` that fits a frame and MAX_SG pieces. */
static uint32_t frag_len(struct ptl_ni *ni, struct ptl_txmsg *m,
                         ptl_size_t off, ptl_size_t headers)
{
    ptl_size_t n = m->len - off;
    ptl_size_t max = ni->frame_max - headers;
    if (n > max)
        n = max;
    if (m->src.iov && n) {
        struct ptl_sg sg[MAX_SG];
        while (ptl_region_sg(&m->src, m->src_off + off, n, sg, MAX_SG) < 0) {
            ptl_size_t sum = 0;
            for (int i = 0; i < MAX_SG; i++)
                sum += sg[i].len;
            n = sum;
        }
    }
    return (uint32_t)n;
}

/* The next message with a frame to send.  Requests that need an answer
 * are started while fewer than PTL_PEER_RESP_MAX of them await theirs (what
 * the peer holds answers for, ptl_resp_available); requests behind a held
 * one wait too (messages keep their order), answers do not: they go ahead,
 * so that neither side's answers wait behind its own requests. */
static struct ptl_txmsg *next_to_send(struct ptl_peer *p)
{
    bool held = false;
    for (struct ptl_txmsg *m = p->q_head; m; m = m->next) {
        if (m->started && m->next_off >= m->len)
            continue;
        if (m->kind == PTL_TX_OP && !m->started) {
            if (held)
                continue;
            if (m->op->want_resp && p->req_out >= PTL_PEER_RESP_MAX) {
                held = true;
                continue;
            }
        }
        return m;
    }
    return NULL;
}

/* Whether a message's last frame asks for its acknowledgement at once
 * (PTL_WF_ACKNOW) rather than within the receiver's ack delay (200 us, or
 * 16 frames, or the receiver's next frame to us, whichever comes first).
 * Not for a put without a response whose MD neither posts nor counts SEND
 * events: nothing at the initiator waits on that ack but the MD's release.
 * Before, every last frame asked: the target built, checksummed and rang
 * out a standalone ack between the event and its program (bench/msgpath.py:
 * 40 of a TCG receiver's 81 us for a 0-byte put), and the initiator was
 * woken once more to take it in; in a ping-pong the answer, microseconds
 * later, carries the ack anyway.  Operations with a response keep asking
 * (their response is pushed behind the ack today: a later step).  Only in
 * a library built with PTL_ACK_LAZY (the Tern kernel's): Linux senders
 * (yod, fyod) put with SEND events off and wait for the MD to be free,
 * where an ack delayed by a busy node would slow them. */
static bool ack_now_wanted(const struct ptl_txmsg *m)
{
    if (!PTL_ACK_LAZY)
        return true;
    /* An ACK's own acknowledgement frees only its response slot here; no
     * event waits on it.  The initiator's next frame to us carries it
     * (every frame carries the cumulative ack), and while it has requests
     * in flight it sends such frames, so slots never run short for want of
     * it.  Asked for at once, it cost a standalone frame per acknowledged
     * put: three frames a message where one carries the data (libmsg's
     * eager sends: put, ACK, and the ack of the ACK). */
    if (m->kind == PTL_TX_ACK)
        return false;
    if (m->kind != PTL_TX_OP || m->op->want_resp)
        return true;
    const struct ptl_md *md = m->op->put_md;
    return !md || (md->eq && !(md->options & PTL_MD_EVENT_SEND_DISABLE)) ||
           (md->ct && (md->options & PTL_MD_EVENT_CT_SEND));
}

/* Whether m is an ACK that may ride in the header of the program's next
 * frame to p (PTL_WF_ACKIN, ptl_wire.h) rather than cost a frame of its
 * own.  In a ping-pong of acknowledged puts (libmsg's eager messages) that
 * is one frame a message instead of two: the ACK, sent at once, was a
 * transmit, a receive interrupt and a pass through the initiator's library
 * of its own, between its answer's put and the next; riding ahead in the
 * same link frame (PTL_WF_MORE) it was still a header of its own to build,
 * check and acknowledge on each side (about 5 us a message at the
 * receiver under TCG).  Not to this node (a frame looped between ranks
 * costs no link frame) nor in a frame too small to spare the room. */
static bool ack_may_ride(const struct ptl_ni *ni, const struct ptl_peer *p,
                         const struct ptl_txmsg *m)
{
    return ptl_g.tun.ack_hold_ns && m->kind == PTL_TX_ACK && !m->started &&
           m->len == 0 && p->nid != ni->id.phys.nid &&
           ni->frame_max >= 4 * PTL_WIRE_HDR_LEN;
}

/* The next frame of m, sequenced, in p's window (which has room), with the
 * ACK `carry` in its header if not NULL, sent now. */
static void frag_send_new(struct ptl_ni *ni, struct ptl_peer *p, struct ptl_txmsg *m,
                          struct ptl_txmsg *carry, uint64_t now)
{
    struct ptl_txfrag *f = &p->win[p->snd_nxt % PTL_REL_WIN];
    memset(f, 0, sizeof(*f));
    f->m = m;
    f->off = m->next_off;
    f->len = frag_len(ni, m, f->off,
                      PTL_WIRE_HDR_LEN + (carry ? PTL_WIRE_ACKREC_LEN : 0));
    f->flags = 0;
    if (f->off == 0)
        f->flags |= PTL_WF_FIRST;
    if (f->off + f->len >= m->len)
        f->flags |= PTL_WF_LAST | (ack_now_wanted(m) ? PTL_WF_ACKNOW : 0);
    f->live = true;
    f->first_sent = f->sent_at = now;
    f->rto = rto_of(p);
    m->next_off += f->len;
    m->started = true;
    m->frames_out++;
    if (carry) {
        f->carried = carry;
        carry->frames_out++;
        ptl_g.stats[ni->iface].tx_carried++;
    }
    send_frag(ni, p, p->snd_nxt, f, false);
    p->snd_nxt++;
}

/* Sends what p's window allows.  An ACK with nothing behind it waits up to
 * ack_hold_ns for the program's next message to p; the program's next wait
 * that halts, a frame taken in while it computes (ptl_lib_send_held), an
 * ack wanted at once (send_rack) or the time running out send it alone.
 * A program that computes on after a receive without the NIC interrupting
 * it holds the ACK until its initiator resends (the copy wants an ack at
 * once): within the initiator's retransmission timeout. */
void ptl_rel_push(struct ptl_ni *ni, struct ptl_peer *p)
{
    if (!p->win && p->q_head) {
        /* Without memory for it now, the messages wait for the next turn. */
        p->win = ptl_zalloc(sizeof(*p->win) * PTL_REL_WIN);
        if (!p->win)
            return;
    }
    struct ptl_txmsg *carry = NULL;    /* an ACK for the next frame's header */
    /* Kept only if this turn ends holding an ACK (1: release it). */
    uint64_t hold = p->hold_until;
    p->hold_until = 0;
    ptl_host_tx_batch(true);
    while (p->snd_nxt - p->snd_una < PTL_REL_WIN) {
        /* Per frame: loss detection compares send times within a burst. */
        uint64_t now = ptl_host_now_ns();
        struct ptl_txmsg *m = next_to_send(p);
        if (!m)
            break;
        bool ride = !carry && ack_may_ride(ni, p, m);
        /* Nothing behind it yet: wait for it, but not with the ACK of a put
         * of several frames (ack_alone).  That is bulk data, sent from its
         * program's buffer, which waits for this ACK to use it again
         * (libmsg's rendezvous messages that carry their data): held for
         * the answer, the ACK came with it, before that program had posted
         * the answer's receive.  One frame more is a small part of such a
         * message's frames. */
        if (ride && !m->next && m->ack_alone)
            ride = false;
        if (ride && !m->next) {
            if (!hold)
                hold = now + ptl_g.tun.ack_hold_ns;
            if (now < hold) {
                p->hold_until = hold;
                ptl_g.acks_held = true;
                if (hold < ptl_g.exact_due)
                    ptl_g.exact_due = hold;
                break;
            }
            ride = false;   /* held long enough, or released: alone */
            count_alone(ni, hold);
        }
        if (ride) {
            /* Taken off the queue's sending turn (started, nothing left to
             * send); done when the frame carrying it is acknowledged. */
            m->started = true;
            carry = m;
            continue;
        }
        if (m->kind == PTL_TX_OP && !m->started && m->op->want_resp) {
            m->op->req_counted = true;
            p->req_out++;
        }
        frag_send_new(ni, p, m, carry, now);
        carry = NULL;
    }
    /* Nothing could follow it (a request waits for answers): alone after
     * all.  It took no place in the window, so there is one for it. */
    if (carry)
        frag_send_new(ni, p, carry, NULL, ptl_host_now_ns());
    ptl_host_tx_batch(false);
}

static void q_remove(struct ptl_peer *p, struct ptl_txmsg *m)
{
    struct ptl_txmsg *prev = NULL;
    for (struct ptl_txmsg *x = p->q_head; x; prev = x, x = x->next) {
        if (x != m)
            continue;
        if (prev)
            prev->next = x->next;
        else
            p->q_head = x->next;
        if (p->q_tail == x)
            p->q_tail = prev;
        x->next = NULL;
        return;
    }
}

static void rtt_sample(struct ptl_peer *p, uint64_t r)
{
    if (!r)
        r = 1;
    if (!p->srtt) {
        p->srtt = r;
        p->rttvar = r / 2;
    } else {
        uint64_t err = r > p->srtt ? r - p->srtt : p->srtt - r;
        p->rttvar = p->rttvar - p->rttvar / 4 + err / 4;
        p->srtt = p->srtt - p->srtt / 8 + r / 8;
    }
    uint64_t rto = p->srtt + 4 * p->rttvar;
    uint64_t lo = ptl_g.tun.rto_min_ns ? ptl_g.tun.rto_min_ns : 200000;
    if (rto < lo)
        rto = lo;
    if (rto > ptl_g.tun.rto_max_ns)
        rto = ptl_g.tun.rto_max_ns;
    p->rto = rto;
}

/* Which transmission of a frame an ack answers, from its ack_xmit (of the
 * frame just below the ack): the latest, the first of a frame sent again
 * since, or neither (an earlier resend of it, or the echo is of another
 * frame: the same to the sender); or the ack has no echo. */
enum echo { ECHO_UNKNOWN, ECHO_LATEST, ECHO_FIRST, ECHO_OTHER };

/* Returns true if the frame was newly acknowledged.  *sample collects the
 * longest round trip of the frames this ack covers whose last transmission
 * it answers (never resent, or told by the echo; Karn's rule for the
 * rest): the RTO must outlast the slowest of them (a delayed ack covers a
 * burst). */
static bool frag_acked(struct ptl_ni *ni, struct ptl_peer *p,
                       struct ptl_txfrag *f, uint64_t now, uint64_t *sample,
                       enum echo echo)
{
    if (!f->live || f->acked)
        return false;
    f->acked = true;
    uint64_t rtt = now - f->sent_at;
    bool latest = !f->tries || echo == ECHO_LATEST;
    if (latest && rtt > *sample)
        *sample = rtt;
    /* The original arrived and its ack came after the timer had resent it:
     * the round trip was longer than the timeout.  Sampled, or the estimate
     * never learns the long round trips (Karn's rule keeps them out) and
     * every stall of the receiver as long costs a needless copy again. */
    if (echo == ECHO_FIRST && now - f->first_sent > *sample)
        *sample = now - f->first_sent;
    /* When the transmission that arrived was sent: sent_at if the ack
     * answers the last one; first_sent or later if an earlier one, or if
     * the echo names another frame (that frame's time then stands for
     * this ack: what was sent before it arrived first).  With no echo, an
     * ack that comes sooner than half a round trip after a resend is taken
     * for the original's.  Taking a resend's time for an ack of its
     * original made every frame sent between the two look lost, and they
     * went again needlessly. */
    uint64_t arrived_sent = f->first_sent;
    if (latest || (echo == ECHO_UNKNOWN && p->srtt && 2 * rtt >= p->srtt))
        arrived_sent = f->sent_at;
    if (arrived_sent > p->rack_sent_at)
        p->rack_sent_at = arrived_sent;
    struct ptl_txmsg *m = f->m, *c = f->carried;
    m->frames_out--;
    if (m->frames_out == 0 && m->started && m->next_off >= m->len) {
        q_remove(p, m);
        ptl_txmsg_done(ni, m, PTL_NI_OK);
    }
    if (c && --c->frames_out == 0) {     /* the ACK it carried is through */
        q_remove(p, c);
        ptl_txmsg_done(ni, c, PTL_NI_OK);
    }
    return true;
}

static void resend(struct ptl_ni *ni, struct ptl_peer *p, uint32_t seq,
                   struct ptl_txfrag *f, uint64_t now)
{
    f->tries++;
    send_frag(ni, p, seq, f, true);
    ptl_g.stats[ni->iface].tx_retransmits++;
    f->sent_at = now;
}

/* Resend what the acks show lost, without waiting for the timer. */
static void detect_losses(struct ptl_ni *ni, struct ptl_peer *p, uint64_t now)
{
    /* Reordering allowance: frames sent this much apart may overtake each
     * other.  At least 20 us so one burst never accuses itself. */
    uint64_t reo = p->srtt / 4 > 20000 ? p->srtt / 4 : 20000;
    bool dup = p->dupacks >= 3;
    for (uint32_t s = p->snd_una; s != p->snd_nxt; s++) {
        struct ptl_txfrag *f = &p->win[s % PTL_REL_WIN];
        if (!f->live || f->acked)
            continue;
        bool lost = f->sent_at + reo < p->rack_sent_at;
        if (!lost && dup && s == p->snd_una &&
            now - f->sent_at >= (p->srtt > reo ? p->srtt : reo)) {
            lost = true;
            p->dupacks = 0;
        }
        if (!lost)
            continue;
        resend(ni, p, s, f, now);
        ptl_g.stats[ni->iface].tx_fast_retransmits++;
        f->rto = rto_of(p);
    }
}

/* `pure`: a RACK.  Only those count as duplicate acks: data frames of the
 * reverse stream repeat the same ack whenever nothing new arrived. */
static void on_ack(struct ptl_ni *ni, struct ptl_peer *p,
                   const struct ptl_wire_hdr *h, bool pure)
{
    if (h->ack_session != p->tx_session)
        return;
    uint32_t inflight = p->snd_nxt - p->snd_una;
    if (h->ack - p->snd_una > inflight)
        return; /* acknowledges something never sent: ignore */
    uint64_t now = ptl_host_now_ns(), sample = 0;
    bool fresh = false;
    bool echoed = h->ack_xmit && h->ack_xmit < 255;
    enum echo other = echoed ? ECHO_OTHER : ECHO_UNKNOWN;
    while (p->snd_una != h->ack) {
        /* The echo is of the frame just below the ack (ptl_rel_rx). */
        struct ptl_txfrag *f = &p->win[p->snd_una % PTL_REL_WIN];
        enum echo e = other;
        if (p->snd_una + 1 == h->ack && echoed)
            e = h->ack_xmit == xmit_of(f) ? ECHO_LATEST
              : h->ack_xmit == 1          ? ECHO_FIRST
                                          : ECHO_OTHER;
        fresh |= frag_acked(ni, p, f, now, &sample, e);
        p->win[p->snd_una % PTL_REL_WIN].live = false;
        p->snd_una++;
    }
    /* The set bits only: nearly always none.  A look at all 64 was a
     * quarter of an ack's handling under TCG (0.55 of 2.6 us), and every
     * frame carries an ack. */
    for (uint64_t sack = h->sack; sack; sack &= sack - 1) {
        uint32_t seq = h->ack + 1 + (uint32_t)__builtin_ctzll(sack);
        if (seq - p->snd_una < p->snd_nxt - p->snd_una)
            fresh |= frag_acked(ni, p, &p->win[seq % PTL_REL_WIN], now,
                                &sample, other);
    }
    if (sample) {
        rtt_sample(p, sample);
        p->backoff = 0;
    }
    if (fresh) {
        p->rto_gate = now + rto_of(p);
        p->acked_any = true;
        p->acker_session = h->session;
        ptl_peer_prove(ni, p);
        p->dupacks = 0;
    } else if (pure && p->snd_nxt != p->snd_una) {
        p->dupacks++;
    }
    if (p->snd_nxt != p->snd_una)
        detect_losses(ni, p, now);
}

static void reset_tx(struct ptl_peer *p)
{
    for (unsigned i = 0; p->win && i < PTL_REL_WIN; i++)
        p->win[i].live = false;
    p->snd_una = p->snd_nxt = 0;
    p->tx_session = ptl_rel_new_session();
    p->acked_any = false;
    p->acker_session = 0;
    p->dupacks = 0;
    p->rack_sent_at = 0;
    p->rto_gate = 0;
}

/* The peer process was restarted (same nid/pid, fresh state): it opened a
 * new stream to us but does not know ours, although the old process had
 * acknowledged part of it.  Our stream can never resume (the new process
 * waits for seq 0), so start a new session at once instead of resending
 * into the void until giveup_ns.  What had reached the wire was meant for
 * the old process: fail it (UNDELIVERABLE), as well as operations still
 * waiting for its ACK/REPLY; messages not yet started go to the new one. */
static void peer_restarted(struct ptl_ni *ni, struct ptl_peer *p)
{
    ptl_g.stats[ni->iface].peer_restarts++;
    struct ptl_txmsg *m = p->q_head, *dead = NULL, **dt = &dead;
    p->q_head = p->q_tail = NULL;
    reset_tx(p);
    while (m) {
        struct ptl_txmsg *next = m->next;
        if (m->started) {
            m->next = NULL;
            *dt = m;
            dt = &m->next;
        } else {
            ptl_rel_queue(ni, p, m);
        }
        m = next;
    }
    while (dead) {
        struct ptl_txmsg *next = dead->next;
        dead->next = NULL;
        ptl_txmsg_done(ni, dead, PTL_NI_UNDELIVERABLE);
        dead = next;
    }
    ptl_ops_fail_peer(ni, p);
}

void ptl_rel_fail_peer(struct ptl_ni *ni, struct ptl_peer *p)
{
    ptl_g.stats[ni->iface].peer_failures++;
    struct ptl_txmsg *m = p->q_head;
    p->q_head = p->q_tail = NULL;
    reset_tx(p);
    while (m) {
        struct ptl_txmsg *next = m->next;
        m->next = NULL;
        ptl_txmsg_done(ni, m, PTL_NI_UNDELIVERABLE);
        m = next;
    }
    ptl_ops_fail_peer(ni, p);
}

void ptl_rel_peer_timers(struct ptl_ni *ni, struct ptl_peer *p, uint64_t now)
{
    for (uint32_t s = p->snd_una; s != p->snd_nxt; s++) {
        struct ptl_txfrag *f = &p->win[s % PTL_REL_WIN];
        if (!f->live || f->acked || now < f->sent_at + f->rto)
            continue;
        /* Unreachable: this frame is giveup_ns old and the peer has
         * said nothing for giveup_ns either.  A peer that keeps
         * talking (heavy loss, not death) gets up to four times
         * longer, but never forever. */
        uint64_t age = now - f->first_sent, g = ptl_g.tun.giveup_ns;
        if ((age >= g && now - p->last_heard >= g) || age >= 4 * g) {
            ptl_rel_fail_peer(ni, p);
            break;
        }
        if (now < p->rto_gate)
            continue;
        resend(ni, p, s, f, now);
        ptl_g.stats[ni->iface].tx_timeouts++;
        if (p->backoff < 16)
            p->backoff++;
        f->rto *= 2;
        if (f->rto > ptl_g.tun.rto_max_ns)
            f->rto = ptl_g.tun.rto_max_ns;
        p->rto_gate = now + f->rto;
    }
    if (p->ack_pending && now >= p->ack_due)
        send_rack(ni, p, PTL_HELD_DUE);
    /* A sender silent mid-message will not finish it: release what
     * the half-received message holds (entry, unexpected header) and
     * retire its session, so that if it does come back its frames are
     * refused (it then reports UNDELIVERABLE) instead of being
     * acknowledged into a message that no longer exists. */
    if (p->cur.active && now >= p->last_heard + ptl_g.tun.giveup_ns) {
        ptl_target_abort(ni, p);
        p->rx_prev_session = p->rx_session;
        p->rx_valid = false;
    }
    ptl_rel_push(ni, p);
}

/* The retransmission and give-up deadlines are rounded up to this grain
 * (about 4 ms): a lost frame is resent a little later than its time-out,
 * which is at least rto_min_ns (1 ms) anyway, and every wait of a stream
 * of messages asks for the same wake-up.  Each new wake-up time cost a
 * timer write, and under an emulator (QEMU TCG) a write that moves the
 * timer wakes the emulator's I/O thread: before, a node of a 2-node NX
 * ping-pong set its timer 0.42 times and took 0.17 early rings per round
 * trip (docs/performance.md, "Fewer instructions and fewer timers").  A delayed
 * acknowledgement and a held ACK keep their exact times: a sender may be
 * waiting for them. */
#define PTL_REL_GRAIN_NS (1ull << 22)

uint64_t ptl_rel_grain_up(uint64_t t)
{
    return t >= UINT64_MAX - PTL_REL_GRAIN_NS ? t : (t | (PTL_REL_GRAIN_NS - 1)) + 1;
}

uint64_t ptl_rel_deadline(struct ptl_ni *ni, uint64_t *exact_min)
{
    uint64_t d = UINT64_MAX, exact = UINT64_MAX;
    for (struct ptl_peer *p = ptl_peer_walk_first(ni); p; p = ptl_peer_walk_next(ni)) {
        for (uint32_t s = p->snd_una; s != p->snd_nxt; s++) {
            struct ptl_txfrag *f = &p->win[s % PTL_REL_WIN];
            if (!f->live || f->acked)
                continue;
            uint64_t due = f->sent_at + f->rto;
            if (due < p->rto_gate)
                due = p->rto_gate;
            if (due < d)
                d = due;
        }
        if (p->ack_pending && p->ack_due < exact)
            exact = p->ack_due;
        if (p->hold_until && p->hold_until < exact)
            exact = p->hold_until;
        if (p->cur.active && p->last_heard + ptl_g.tun.giveup_ns < d)
            d = p->last_heard + ptl_g.tun.giveup_ns;
        if (p->resp_waiting) {
            uint64_t since = p->last_heard > p->resp_mark ? p->last_heard
                                                          : p->resp_mark;
            if (since + ptl_g.tun.giveup_ns < d)
                d = since + ptl_g.tun.giveup_ns;
        }
    }
    d = ptl_rel_grain_up(d);
    if (exact < *exact_min)
        *exact_min = exact;
    return d < exact ? d : exact;
}

/* One more frame to acknowledge; the first one owed arms the delay. */
static unsigned ack_owed(struct ptl_ni *ni, struct ptl_peer *p)
{
    ptl_peer_busy(ni, p);
    if (++p->ack_pending == 1) {
        p->ack_due = ptl_host_now_ns() + ptl_g.tun.ack_delay_ns;
        if (p->ack_due < ptl_g.exact_due)
            ptl_g.exact_due = p->ack_due;
    }
    return p->ack_pending;
}

static void want_ack(struct ptl_ni *ni, struct ptl_peer *p, bool now_)
{
    if (now_ || ack_owed(ni, p) >= 16)
        send_rack(ni, p, PTL_HELD_FRAME);
}

/* want_ack for a frame placed in order; an ack wanted at once is only
 * counted, and the caller sends it if nothing it pushes carries it.
 * Returns whether it is wanted at once. */
static bool ack_later(struct ptl_ni *ni, struct ptl_peer *p, bool now_)
{
    if (!now_) {
        want_ack(ni, p, false);
        return false;
    }
    ack_owed(ni, p);
    return true;
}

void ptl_rel_send_held(struct ptl_ni *ni, enum ptl_held_release why)
{
    for (struct ptl_peer *p = ptl_peer_walk_first(ni); p; p = ptl_peer_walk_next(ni))
        if (p->hold_until)
            release_held(ni, p, why);
}

/* The NI goes away: its program sends nothing more, as in a wait. */
void ptl_rel_send_owed_acks(struct ptl_ni *ni)
{
    ptl_rel_send_held(ni, PTL_HELD_WAIT);
    for (struct ptl_peer *p = ni->peer_list; p; p = p->next)
        if (p->ack_pending)
            send_rack(ni, p, PTL_HELD_WAIT);
}

bool ptl_rel_rx_dup(struct ptl_ni *ni, const struct ptl_wire_hdr *h)
{
    if (!(h->flags & PTL_WF_SEQ) || h->op == PTL_WOP_RACK)
        return false;
    struct ptl_peer *p = ptl_peer_get(ni, h->src_nid, h->src_pid, false);
    if (!p || !p->rx_valid || h->session != p->rx_session)
        return false;
    uint32_t d = h->seq - p->rcv_nxt;
    if (d < 0x80000000u && (d == 0 || d > 64 || !(p->sack >> (d - 1) & 1)))
        return false;
    /* Copies still say the sender is there: a receiver working through a
     * queue of them must not give up on it, nor on the message it is in
     * (nor reclaim it before peers heard less recently: peer.c). */
    ptl_peer_heard(ni, p);
    ptl_g.stats[ni->iface].rx_dup++;
    ptl_g.stats[ni->iface].rx_dup_unchecked++;
    want_ack(ni, p, true);
    return true;
}

/* Hand an in-order frame to the Portals layer.  <0: not now (unacked). */
static int deliver(struct ptl_ni *ni, struct ptl_peer *p,
                   const struct ptl_wire_hdr *h, const uint8_t *payload)
{
    struct ptl_rxmsg *c = &p->cur;
    if (h->flags & PTL_WF_FIRST) {
        if (c->active) {
            ptl_g.stats[ni->iface].rx_bad_field++;
            ptl_target_abort(ni, p);
        }
        if (h->op == PTL_WOP_ACK || h->op == PTL_WOP_REPLY) {
            ptl_op_response(ni, p, h, payload);
            return 0;
        }
        return ptl_target_start(ni, p, h, payload);
    }
    if (!c->active || c->msg_id != h->msg_id || c->op != h->op ||
        c->msg_len != h->msg_len) {
        ptl_g.stats[ni->iface].rx_bad_field++;
        return 0;
    }
    if (h->op == PTL_WOP_REPLY)
        ptl_reply_data(ni, p, h, payload);
    else
        ptl_target_data(ni, p, h, payload);
    return 0;
}

static bool same_message(const struct ptl_rxmsg *c,
                         const struct ptl_wire_hdr *h)
{
    return c->active && !(h->flags & PTL_WF_FIRST) && c->msg_id == h->msg_id &&
           c->op == h->op && c->msg_len == h->msg_len;
}

void ptl_rel_rx(struct ptl_ni *ni, const struct ptl_wire_hdr *h,
                const struct ptl_wire_ackrec *ack, const uint8_t *payload)
{
    struct ptl_lib_stats *st = &ptl_g.stats[ni->iface];
    struct ptl_peer *p = ptl_peer_get(ni, h->src_nid, h->src_pid, true);
    if (!p) {
        st->rx_no_resources++;
        return;
    }
    ptl_peer_heard(ni, p);
    if (h->flags & PTL_WF_ACKV)
        on_ack(ni, p, h, h->op == PTL_WOP_RACK);
    if (h->op == PTL_WOP_RACK) {
        ptl_rel_push(ni, p);
        return;
    }
    if (!p->rx_valid || h->session != p->rx_session) {
        /* A new stream starts at seq 0; anything else from an unknown
         * session is a straggler of an older one. */
        if ((p->rx_prev_session && h->session == p->rx_prev_session) ||
            h->seq >= PTL_REL_WIN) {
            st->rx_stale++;
            return;
        }
        /* A peer that acknowledged our stream before and now opens a new
         * one without knowing it (no ack for our session, or one from
         * before what it had acknowledged) lost its state: restarted.
         * Unless this session is the one it acknowledged from: its first
         * data frame, overtaken on the wire by a later RACK, carries an
         * older ack, and is no restart (the stream's messages in flight
         * were failed UNDELIVERABLE: test_stream_lossy under reordering). */
        bool knows_us = (h->flags & PTL_WF_ACKV) &&
                        h->ack_session == p->tx_session &&
                        (h->ack - p->snd_una <= p->snd_nxt - p->snd_una ||
                         h->session == p->acker_session);
        if (p->acked_any && !knows_us)
            peer_restarted(ni, p);
        ptl_target_abort(ni, p);
        if (p->rx_valid)
            p->rx_prev_session = p->rx_session;
        p->rx_session = h->session;
        p->rx_valid = true;
        p->rcv_nxt = 0;
        p->sack = 0;
        p->rx_echo = 0;
    }
    /* An ack asked for at once waits until the end of this function: the
     * response a request gets (its ACK, its REPLY) is queued by now and
     * carries the ack when it goes, and then no standalone ack is needed.
     * Before, a get or an acknowledged put was answered by two frames, the
     * ack and, right behind it, the response. */
    bool ack_now = false;
    uint32_t d = h->seq - p->rcv_nxt;
    if (d >= 0x80000000u) {
        st->rx_dup++;
        want_ack(ni, p, true);
        return;
    }
    if (d == 0) {
        /* The ACK is noted for the next progress step (ptl_op_acked_later):
         * off the way of the answer that carries it.  Noted again if the
         * frame is refused below and resent, it then finds its operation
         * answered. */
        if (ack)
            ptl_op_acked_later(ni, p, ack);
        PTL_TRACE(TP_RX_DELIVER);
        if (deliver(ni, p, h, payload) < 0) {
            st->rx_no_resources++;
            return;
        }
        p->rcv_nxt++;
        /* The ack's echo is of the frame just below it: this one, unless
         * frames received earlier out of order follow it (not known). */
        p->rx_echo = h->xmit;
        for (;;) {
            bool have = p->sack & 1;
            p->sack >>= 1;
            if (!have)
                break;
            p->rcv_nxt++;
            p->rx_echo = 0;
        }
        ack_now |= ack_later(ni, p, h->flags & PTL_WF_ACKNOW);
    } else if (d > 64) {
        st->rx_window++;
    } else if (p->sack >> (d - 1) & 1) {
        st->rx_dup++;
        want_ack(ni, p, true);
    } else if (same_message(&p->cur, h)) {
        if (ack)       /* acknowledged below, so never resent: noted now */
            ptl_op_acked_later(ni, p, ack);
        if (h->op == PTL_WOP_REPLY)
            ptl_reply_data(ni, p, h, payload);
        else
            ptl_target_data(ni, p, h, payload);
        p->sack |= 1ull << (d - 1);
        st->rx_ooo_placed++;
        ack_now |= ack_later(ni, p, h->flags & PTL_WF_ACKNOW);
    } else {
        /* Not acknowledged (it will be resent), but answer anyway: the
         * sender learns we are alive and where the hole is. */
        st->rx_ooo_dropped++;
        want_ack(ni, p, true); /* at once: a duplicate ack for the sender */
    }
    ptl_rel_push(ni, p);
    /* An ACK held for the program's answer carries it, within ack_hold_ns. */
    if (ack_now && p->ack_pending && !p->hold_until)
        send_rack(ni, p, PTL_HELD_FRAME);
}
