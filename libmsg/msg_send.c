/*
 * Sends.  A message up to the eager limit is copied into a bounce slot and
 * put at once; the send is complete right after the copy (the buffer may be
 * reused).  The copy stays until the target's ACK says it was accepted,
 * because a refused message (PTL_NI_PT_DISABLED) must be sent again.  A
 * longer message is announced by a put whose hdr_data carries its length
 * and a rendezvous id; the buffer is exposed on PT_RDV, and a receiver that
 * did not get the data pulls it with PtlGet straight into the posted
 * buffer.
 *
 * The announcement carries the message's first bytes, up to push_max
 * (MSG_BIT_PUSHED; from the user's buffer: no copy), unless the target's last
 * such message found no room.  A posted receive takes them, or, if none is
 * posted yet, a landing buffer keeps them for the receive to copy
 * (msg_flow.c); the ACK says how many (mlength), and the receiver pulls
 * only the rest: a message up to push_max is sent in one trip, not three
 * (announce, get, reply).  That matters most where both sides send at once:
 * a get is queued behind the reply its node is already sending, so two
 * pulls crossing each other ran one after the other (bench/nx/nxbench.c
 * ring).  If the landing buffers are full, the target's overflow list keeps
 * only the header and the receiver pulls it all; the bytes pushed crossed
 * the wire for nothing, hence the bound, and the next messages to that
 * target are only announced (pull_only) until one of its gets says a
 * receive had been waiting (RDV_GET_POSTED).  A synchronous send is pulled
 * even when all of it came (HD_SYNC): only a receive may complete it.
 *
 * Exposures are limited (eng.rdv_max, a share of Portals' match entries).
 * A rendezvous send beyond them is late: announced at once, in its place
 * in the send order, with HD_LATE and nothing pushed.  The receive that
 * matches it exposes its own buffer (an entry of the receiver's, the one
 * its match freed) and sends CTL_READY; the sender puts the message there,
 * and the put's ACK completes the send.  MPI_Isend and MPI_Issend must not
 * wait for a remote receive (MPI-3.1 3.7): waiting in the send for a free
 * exposure hung a rank that started more than 512 before its receiver
 * posted any, and a late send exposed only as earlier ones were pulled
 * hung one whose receiver waited on those (tests/mpi/manyrecv.c, late).
 *
 * Per target, messages stay in send order in one list (queued, in flight,
 * refused).  Refusals only ever hit a suffix of that list: the target keeps
 * its PT disabled until every rank has answered its PAUSE, and a rank
 * answers only when nothing of its own is in flight to it.  On UNPAUSE the
 * refused suffix goes again, in order, so pair-wise ordering holds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "msg_internal.h"

/* Send slots in three sizes, numbered in this order in one arena: 2048 of
 * 256 bytes, 64 of up to 8 KiB (the eager limit if it is lower), and, if
 * the eager limit is above 8 KiB, 8 of the limit.  Eight large slots, not
 * 64: at the 64 KiB limit the arena is 1.5 MiB, not 4.5 (with 16, four
 * ranks of tests/mpi/coll.c no longer fitted on a 64 MiB node:
 * tests/test_yod_ppn.py).  Eight 64 KiB
 * messages in flight are more than a TCG node's link carries in a round
 * trip. */
enum { SLOT_SMALL, SLOT_MID, SLOT_LARGE, SLOT_CLASSES };
#define SMALL_SLOT 256
#define MID_SLOT_MAX 8192
static const int slot_count[SLOT_CLASSES] = {2048, 64, 8};
static size_t slot_size[SLOT_CLASSES];
static int slot_first[SLOT_CLASSES];
static size_t slot_offset[SLOT_CLASSES];    /* of each class's first slot */
static int free_slots[SLOT_CLASSES][2048], n_free[SLOT_CLASSES];

static char *arena;
static char zero_byte[8];

/* Per target: the first message not yet issued (NULL: none). */
static struct msg_out **cursor;

/* Puts in flight per target.  A Portals target holds a response slot per
 * request until its ACK is acknowledged (64 per peer, 512 in all) and
 * drops requests it has no slot for; the gap that leaves in the sender's
 * stream costs a retransmission timeout.  So stay below both limits. */
static int window;

struct ctl {
    int kind; /* OBJ_CTL */
    long target;
    uint64_t hd, bits;
    bool retry;
    double due;
    struct ctl *next;
};
static struct ctl *ctl_head, *ctl_tail;

#define now msg_now

static void must(int rc, const char *what)
{
    if (rc != PTL_OK)
        msg_fatal("%s failed (Portals error %d)", what, rc);
}

void msg_send_init(void)
{
    ptl_pt_index_t pt;
    must(PtlPTAlloc(eng.ni, 0, eng.eq_misc, PT_CTL, &pt), "PtlPTAlloc(control)");
    ptl_me_t me = msg_me(NULL, 0, PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE, PTL_RANK_ANY, 0,
                         ~0ULL);
    ptl_handle_me_t h;
    must(PtlMEAppend(eng.ni, PT_CTL, &me, PTL_PRIORITY_LIST, NULL, &h), "PtlMEAppend(control)");
    must(PtlPTAlloc(eng.ni, 0, eng.eq_misc, PT_RDV, &pt), "PtlPTAlloc(rendezvous)");

    long share = 400 / (eng.size > 1 ? eng.size - 1 : 1);
    window = (int)msg_env_long("WINDOW", share < 4 ? 4 : share > 32 ? 32 : share);
    size_t mid = eng.eager_max < MID_SLOT_MAX ? eng.eager_max : MID_SLOT_MAX;
    slot_size[SLOT_SMALL] = SMALL_SLOT;
    slot_size[SLOT_MID] = mid > SMALL_SLOT ? mid : SMALL_SLOT;
    slot_size[SLOT_LARGE] = eng.eager_max > MID_SLOT_MAX ? eng.eager_max : 0;
    size_t bytes = 0;
    for (int c = 0, first = 0; c < SLOT_CLASSES; first += slot_count[c], c++) {
        slot_first[c] = first;
        slot_offset[c] = bytes;
        bytes += (size_t)slot_count[c] * slot_size[c];
        n_free[c] = 0;
        for (int i = 0; slot_size[c] && i < slot_count[c]; i++)
            free_slots[c][n_free[c]++] = first + i;
    }
    arena = malloc(bytes);
    cursor = calloc((size_t)eng.size, sizeof *cursor);
    if (!arena || !cursor)
        msg_fatal("no memory for %zu bytes of send buffers", bytes);
    ptl_md_t md = {.start = arena, .length = bytes, .options = PTL_MD_EVENT_SEND_DISABLE,
                   .eq_handle = eng.eq_misc, .ct_handle = PTL_CT_NONE};
    must(PtlMDBind(eng.ni, &md, &eng.md_bounce), "PtlMDBind(send buffers)");
    md.start = zero_byte;
    md.length = sizeof zero_byte;
    must(PtlMDBind(eng.ni, &md, &eng.md_zero), "PtlMDBind");
}

static int slot_class(int s)
{
    return s < slot_first[SLOT_MID] ? SLOT_SMALL : s < slot_first[SLOT_LARGE] ? SLOT_MID
                                                                              : SLOT_LARGE;
}

static char *slot_addr(int s)
{
    int c = slot_class(s);
    return arena + slot_offset[c] + (size_t)(s - slot_first[c]) * slot_size[c];
}

/* The smallest free slot that holds len bytes (len is at most the eager
 * limit, which the largest class holds). */
static int slot_alloc(size_t len)
{
    for (;;) {
        for (int c = 0; c < SLOT_CLASSES; c++)
            if (len <= slot_size[c] && n_free[c])
                return free_slots[c][--n_free[c]];
        msg_progress(true); /* wait for ACKs to free one */
    }
}

/* Message descriptors come from a free list: the C library's calloc was
 * the largest single cost of an eager send in user space (1.7 of 3.8 us
 * between a program's receive and its answer's system call on a TCG node:
 * bench/msgpath.py --nx).  At most OUT_KEEP wait there; the rest go back. */
#define OUT_KEEP 4096
static struct msg_out *out_free;
static int n_out_free;

static struct msg_out *out_new(void)
{
    struct msg_out *m = out_free;
    if (m) {
        out_free = m->next;
        n_out_free--;
        memset(m, 0, sizeof *m);
        return m;
    }
    m = calloc(1, sizeof *m);
    if (!m)
        msg_fatal("no memory for a message descriptor");
    return m;
}

static void out_release(struct msg_out *m)
{
    if (n_out_free >= OUT_KEEP) {
        free(m);
        return;
    }
    m->next = out_free;
    out_free = m;
    n_out_free++;
}

static void slot_free(int s)
{
    if (s < 0)
        return;
    int c = slot_class(s);
    free_slots[c][n_free[c]++] = s;
}

/* ---- data messages -------------------------------------------------- */

static void kick_peer(long t)
{
    struct msg_peer *p = &eng.peers[t];
    if (p->paused)
        return;
    struct msg_out *m = cursor[t];
    for (; m; m = m->next) {
        if (m->state != OUT_QUEUED && m->state != OUT_REJECTED)
            continue;
        if (p->inflight >= window)
            break; /* the ACK that frees a place kicks again */
        if (eng.ops_inflight >= eng.ops_max) {
            eng.starved = true;
            break;
        }
        ptl_process_t to = {.rank = (ptl_rank_t)t};
        int rc = m->push ? PtlPut(m->push_md, 0, m->push_len, PTL_ACK_REQ, to, PT_DATA, m->bits,
                                  0, m, m->hd)
                 : m->data ? PtlPut(eng.md_bounce, (ptl_size_t)((char *)m->data - arena), m->len,
                                    PTL_ACK_REQ, to, PT_DATA, m->bits, 0, m, m->hd)
                           : PtlPut(eng.md_zero, 0, 0, PTL_ACK_REQ, to, PT_DATA, m->bits, 0, m,
                                    m->hd);
        if (rc == PTL_NO_SPACE) {
            eng.starved = true;
            break;
        }
        must(rc, "PtlPut");
        if (m->state == OUT_REJECTED)
            eng.st_resent++;
        m->state = OUT_INFLIGHT;
        p->inflight++;
        eng.ops_inflight++;
    }
    cursor[t] = m;
}

static void enqueue(struct msg_out *m)
{
    struct msg_peer *p = &eng.peers[m->target];
    m->state = OUT_QUEUED;
    m->next = NULL;
    if (p->tail)
        p->tail->next = m;
    else
        p->head = m;
    p->tail = m;
    if (!cursor[m->target])
        cursor[m->target] = m;
    kick_peer(m->target);
}

static void unlink_msg(struct msg_peer *p, struct msg_out *m)
{
    struct msg_out *prev = NULL;
    for (struct msg_out *x = p->head; x; prev = x, x = x->next)
        if (x == m) {
            if (prev)
                prev->next = m->next;
            else
                p->head = m->next;
            if (p->tail == m)
                p->tail = prev;
            return;
        }
}

/* Exposes a rendezvous send's buffer for its receiver to pull; false
 * when Portals has no entry for it now (the send is then late). */
static bool expose(struct msg_out *m)
{
    uint64_t len = m->rdv_len, id = (m->hd >> HD_ID_SHIFT) & HD_ID_MASK;
    /* One get takes it all unless it exceeds Portals' message limit. */
    ptl_me_t me = msg_me((void *)m->rdv_buf, len,
                         PTL_ME_OP_GET | PTL_ME_EVENT_LINK_DISABLE | PTL_ME_EVENT_UNLINK_DISABLE |
                             (len <= eng.lim.max_msg_size ? PTL_ME_USE_ONCE : 0),
                         (ptl_rank_t)m->target, id, RDV_GET_POSTED);
    int rc = PtlMEAppend(eng.ni, PT_RDV, &me, PTL_PRIORITY_LIST, m, &m->rdv_me);
    if (rc == PTL_NO_SPACE)
        return false;
    if (rc != PTL_OK)
        msg_fatal("cannot expose a %llu-byte buffer (Portals error %d)",
                  (unsigned long long)len, rc);
    eng.rdv_active++;
    return true;
}

/* A late send's put into the receive that asked for it (CTL_READY): one
 * put per piece of Portals' message limit, at its offset. */
struct late_put {
    int kind; /* OBJ_LATE */
    struct msg_out *m;
    ptl_handle_md_t md;
    uint64_t pieces, acked;
    struct late_put *next;
};

/* False when there is no MD or operation slot for it now (nothing started). */
static bool late_put_start(struct late_put *lp)
{
    struct msg_out *m = lp->m;
    uint64_t max = eng.lim.max_msg_size, len = m->rdv_len;
    lp->pieces = msg_pieces(len);
    if (eng.ops_inflight + (long)lp->pieces > eng.ops_max && eng.ops_inflight > 0)
        return false;
    ptl_md_t md = {.start = (void *)m->rdv_buf, .length = len,
                   .options = PTL_MD_EVENT_SEND_DISABLE, .eq_handle = eng.eq_misc,
                   .ct_handle = PTL_CT_NONE};
    int rc = PtlMDBind(eng.ni, &md, &lp->md);
    if (rc == PTL_NO_SPACE)
        return false;
    if (rc != PTL_OK)
        msg_fatal("cannot bind a %llu-byte send buffer (Portals error %d)",
                  (unsigned long long)len, rc);
    uint64_t bits = ((m->hd >> HD_ID_SHIFT) & HD_ID_MASK) | RDV_LATE_PUT;
    ptl_process_t to = {.rank = (ptl_rank_t)m->target};
    for (uint64_t k = 0; k < lp->pieces; k++) {
        uint64_t off = k * max, n = len - off < max ? len - off : max;
        must(PtlPut(lp->md, off, n, PTL_ACK_REQ, to, PT_RDV, bits, off, lp, 0), "PtlPut(late)");
        eng.ops_inflight++;
    }
    return true;
}

void msg_send_ready_run(void)
{
    while (eng.ready_head && late_put_start(eng.ready_head)) {
        eng.ready_head = eng.ready_head->next;
        if (!eng.ready_head)
            eng.ready_tail = NULL;
    }
}

/* Late send `id` to target t, taken off its late list; NULL if not there. */
static struct msg_out *late_take(long t, uint64_t id)
{
    struct msg_peer *p = &eng.peers[t];
    struct msg_out *prev = NULL, *m = p->late_head;
    while (m && ((m->hd >> HD_ID_SHIFT) & HD_ID_MASK) != id)
        prev = m, m = m->late_next;
    if (!m)
        return NULL;
    if (prev)
        prev->late_next = m->late_next;
    else
        p->late_head = m->late_next;
    if (p->late_tail == m)
        p->late_tail = prev;
    return m;
}

void msg_send_ready(long from, uint64_t id)
{
    struct msg_out *m = late_take(from, id);
    if (!m)
        msg_fatal("node %ld asked for late message %llu, which was never sent to it", from,
                  (unsigned long long)id);
    struct late_put *lp = calloc(1, sizeof *lp);
    if (!lp)
        msg_fatal("no memory for a late message's put");
    lp->kind = OBJ_LATE;
    lp->m = m;
    if (!eng.ready_head && late_put_start(lp))
        return;
    if (eng.ready_tail)
        eng.ready_tail->next = lp;
    else
        eng.ready_head = lp;
    eng.ready_tail = lp;
}

void msg_isend(struct msg_req *r, long node, uint64_t bits, const void *buf, uint64_t len,
               unsigned flags)
{
    r->is_recv = false;
    r->done = false;
    r->error = MSG_OK;
    r->dest = node;
    r->send_bits = bits;
    r->send_rdv = false;
    r->out = NULL;
    r->cancel_asked = r->cancelled = false;
    if (bits & MSG_BIT_PUSHED)
        msg_fatal("match bits %#llx have the engine's own bit (MSG_BIT_PUSHED)",
                  (unsigned long long)bits);
    if (len > HD_LEN_MASK)
        msg_fatal("a %llu-byte message is longer than the engine carries (%llu bytes)",
                  (unsigned long long)len, (unsigned long long)HD_LEN_MASK);
    if (node == eng.rank) {
        /* The Tern kernel's Portals cannot put to its own process, so
         * messages to oneself never touch Portals (on every build). */
        r->send_id = eng.eager_next++ & HD_ID_MASK;
        msg_self_send(bits, buf, len, r->send_id);
        r->done = true;
        return;
    }
    struct msg_out *m = out_new();
    m->kind = OBJ_MSG;
    m->target = node;
    m->bits = bits;
    m->slot = -1;
    m->seq = r->send_seq = eng.peers[node].seq_next++;
    if (len <= eng.eager_max && !(flags & MSG_SYNC)) {
        if (len > 0) {
            m->slot = slot_alloc((size_t)len);
            m->data = slot_addr(m->slot);
            memcpy(m->data, buf, (size_t)len);
        }
        m->len = (size_t)len;
        r->send_id = eng.eager_next++ & HD_ID_MASK;
        m->hd = len | r->send_id << HD_ID_SHIFT;
        r->done = true;
        eng.st_eager++;
        enqueue(m);
        return;
    }
    /* Rendezvous: above the eager limit, or synchronous (the pull tells the
     * sender a receive has taken it). */
    uint64_t id = eng.rdv_next++ & HD_ID_MASK;
    m->rdv = true;
    m->rdv_buf = buf;
    m->rdv_len = len;
    m->req = r;
    r->send_id = id;
    r->send_rdv = true;
    r->out = m;
    m->hd = HD_RDV | (flags & MSG_SYNC ? HD_SYNC : 0) | (id << HD_ID_SHIFT) | len;
    eng.st_rdv++;
    /* Exposed now if the share and Portals allow; else late, pushing
     * nothing: its receive asks for all of it (CTL_READY). */
    if (eng.rdv_active >= eng.rdv_max || !expose(m)) {
        struct msg_peer *p = &eng.peers[node];
        m->hd |= HD_LATE;
        m->late_next = NULL;
        if (p->late_tail)
            p->late_tail->late_next = m;
        else
            p->late_head = m;
        p->late_tail = m;
        eng.st_rdv_late++;
        enqueue(m);
        return;
    }
    /* A zero-byte announcement (synchronous) carries nothing to push; the
     * get tells its sender that a receive took it. */
    uint64_t push = len < eng.push_max ? len : eng.push_max;
    if (push > eng.lim.max_msg_size)
        push = eng.lim.max_msg_size;
    if (push && !eng.peers[node].pull_only) {
        m->push_len = push;
        ptl_md_t md = {.start = (void *)buf, .length = push, .options = PTL_MD_EVENT_SEND_DISABLE,
                       .eq_handle = eng.eq_misc, .ct_handle = PTL_CT_NONE};
        if (PtlMDBind(eng.ni, &md, &m->push_md) == PTL_OK) { /* else only announced */
            m->push = true;
            m->bits |= MSG_BIT_PUSHED;
        }
    }
    enqueue(m);
}

static void settle_rdv(struct msg_out *m)
{
    if (m->pulled && m->state == OUT_ACCEPTED)
        out_release(m);
}

/* The receiver has the whole message (pulled, or taken whole with its
 * announcement): the send is complete. */
static void rdv_done(struct msg_out *m, bool exposed)
{
    m->pulled = true;
    if (exposed)
        eng.rdv_active--;
    struct msg_req *r = m->req;
    r->out = NULL;
    if (r->cancel_asked) { /* done when the cancel's answer comes */
        r->sent_meanwhile = true;
        return;
    }
    r->done = true;
    if (r->ignored)
        msg_req_free(r);
}

void msg_send_cancelled(struct msg_req *r)
{
    struct msg_out *m = r->out;
    if (!m)
        return; /* all of it is at the receiver already (pushed whole) */
    r->out = NULL;
    m->cancelled = true;
    if (m->hd & HD_LATE) {
        late_take(m->target, r->send_id);
    } else {
        /* Nobody will pull it: the receiver deleted its announcement. */
        if (PtlMEUnlink(m->rdv_me) != PTL_OK)
            msg_fatal("node %ld cancelled a %llu-byte message it was pulling", m->target,
                      (unsigned long long)m->rdv_len);
        eng.rdv_active--;
    }
    m->pulled = true;
    settle_rdv(m);
}

/* The ACK of an announcement that carried data: how much of it a posted
 * receive or a landing buffer took (mlength; nothing if neither had room).
 * All of the message: the send is done, unless synchronous.  Otherwise the
 * receiver pulls the rest.  The MD of the pushed bytes is done with either
 * way (a refused message keeps it for its resend). */
static void push_acked(struct msg_out *m, const ptl_event_t *ev)
{
    m->push = false;
    PtlMDRelease(m->push_md);
    if (m->cancelled)
        return; /* its exposure is gone already */
    if (ev->mlength != m->push_len) {
        eng.st_push_missed++;
        eng.peers[m->target].pull_only = true;
        return;
    }
    eng.st_rdv_pushed++;
    if (m->push_len < m->rdv_len || (m->hd & HD_SYNC))
        return; /* the receiver pulls the rest, or tells of its match */
    /* Nobody pulls it: its exposure goes (a get it had served would have
     * unlinked it, but a receiver that took it whole never asks). */
    if (PtlMEUnlink(m->rdv_me) != PTL_OK)
        msg_fatal("node %ld took a %llu-byte message whole, yet its buffer was pulled",
                  m->target, (unsigned long long)m->rdv_len);
    rdv_done(m, true);
}

static void answer_pause(long t)
{
    struct msg_peer *p = &eng.peers[t];
    if (eng.verbose > 1 && p->pause_owed)
        fprintf(stderr, "%s node %ld: PAUSE from %ld, %d in flight to it\n", eng.who, eng.rank, t,
                p->inflight);
    if (p->pause_owed && p->inflight == 0) {
        p->pause_owed = false;
        msg_ctl_send(t, CTL_HD(CTL_PAUSE_ACK, p->pause_epoch), false);
    }
}

void msg_send_ack(struct msg_out *m, const ptl_event_t *ev)
{
    long t = m->target;
    struct msg_peer *p = &eng.peers[t];
    p->inflight--;
    if (ev->ni_fail_type == PTL_NI_OK) {
        unlink_msg(p, m);
        m->state = OUT_ACCEPTED;
        if (m->rdv) {
            if (m->push)
                push_acked(m, ev);
            settle_rdv(m);
        } else {
            slot_free(m->slot);
            out_release(m);
        }
    } else if (ev->ni_fail_type == PTL_NI_PT_DISABLED) {
        /* The target ran out of unexpected space: keep the message, send
         * nothing more until it says UNPAUSE. */
        m->state = OUT_REJECTED;
        p->paused = true;
    } else {
        msg_fatal("a message to node %ld could not be delivered (Portals failure %d)", t,
                 (int)ev->ni_fail_type);
    }
    answer_pause(t);
    if (cursor[t])
        kick_peer(t);
    if (eng.cancel_head && ev->ni_fail_type == PTL_NI_OK)
        msg_cancel_kick(t);
}

bool msg_send_accepted(long t, uint64_t seq)
{
    /* Targets accept in send order: a refusal hits a suffix of what is in
     * flight, and the refused go again in order. */
    const struct msg_out *h = eng.peers[t].head;
    return !h || h->seq > seq;
}

void msg_rdv_pulled(struct msg_out *m, const ptl_event_t *ev)
{
    if (ev->ni_fail_type != PTL_NI_OK)
        msg_fatal("node %ld failed to pull a message (Portals failure %d)", m->target,
                 (int)ev->ni_fail_type);
    /* The receiver asks for every piece of Portals' message limit, maybe
     * for none of its bytes (a truncating receive): count the pieces. */
    uint64_t pieces = msg_pieces(m->rdv_len);
    bool once = pieces == 1;
    if (++m->rdv_got < pieces)
        return;
    if (!once)
        PtlMEUnlink(m->rdv_me);
    if (ev->match_bits & RDV_GET_POSTED)
        eng.peers[m->target].pull_only = false;
    rdv_done(m, true);
    settle_rdv(m);
}

void msg_send_late_acked(void *late_put, const ptl_event_t *ev)
{
    struct late_put *lp = late_put;
    struct msg_out *m = lp->m;
    if (ev->ni_fail_type != PTL_NI_OK)
        msg_fatal("a message to node %ld could not be put into its receive (Portals failure %d)",
                  m->target, (int)ev->ni_fail_type);
    if (++lp->acked < lp->pieces)
        return;
    PtlMDRelease(lp->md);
    free(lp);
    rdv_done(m, false);
    settle_rdv(m);
}

void msg_peer_pause(long t, uint64_t epoch)
{
    struct msg_peer *p = &eng.peers[t];
    p->paused = true;
    p->pause_owed = true;
    p->pause_epoch = epoch;
    answer_pause(t);
}

void msg_peer_unpause(long t)
{
    struct msg_peer *p = &eng.peers[t];
    p->paused = false;
    struct msg_out *m = p->head;
    while (m && m->state != OUT_REJECTED && m->state != OUT_QUEUED)
        m = m->next;
    cursor[t] = m;
    kick_peer(t);
}

bool msg_sends_idle(void)
{
    if (eng.rdv_active)
        return false;
    for (long t = 0; t < eng.size; t++)
        if (eng.peers[t].head)
            return false;
    return true;
}

/* ---- control messages ----------------------------------------------- */

static void kick_ctl(void)
{
    double t = 0;
    struct ctl *prev = NULL, *c = ctl_head;
    while (c) {
        struct ctl *next = c->next;
        if (c->due) {
            if (!t)
                t = now();
            if (c->due > t) {
                eng.starved = true; /* come back soon */
                prev = c;
                c = next;
                continue;
            }
        }
        if (eng.ops_inflight >= eng.ops_max) {
            eng.starved = true;
            return;
        }
        ptl_process_t to = {.rank = (ptl_rank_t)c->target};
        int rc = PtlPut(eng.md_zero, 0, 0, PTL_ACK_REQ, to, PT_CTL, c->bits, 0, c, c->hd);
        if (rc == PTL_NO_SPACE) {
            eng.starved = true;
            return;
        }
        must(rc, "PtlPut(control)");
        eng.ops_inflight++;
        eng.peers[c->target].ctl_inflight++;
        if (prev)
            prev->next = next;
        else
            ctl_head = next;
        if (ctl_tail == c)
            ctl_tail = prev;
        c = next;
    }
}

static void ctl_queue(struct ctl *c)
{
    c->next = NULL;
    if (ctl_tail)
        ctl_tail->next = c;
    else
        ctl_head = c;
    ctl_tail = c;
}

static void ctl_send(long target, uint64_t hd, uint64_t bits, bool retry)
{
    if (target == eng.rank) { /* see msg_isend: handled here and now */
        msg_control(target, hd, bits);
        return;
    }
    struct ctl *c = calloc(1, sizeof *c);
    if (!c)
        msg_fatal("no memory for a control message");
    c->kind = OBJ_CTL;
    c->target = target;
    c->hd = hd;
    c->bits = bits;
    c->retry = retry;
    ctl_queue(c);
    kick_ctl();
}

void msg_ctl_send(long target, uint64_t hd, bool retry) { ctl_send(target, hd, 0, retry); }
void msg_ctl_send_bits(long target, uint64_t hd, uint64_t bits) { ctl_send(target, hd, bits, false); }

void msg_ctl_ack(void *rec, const ptl_event_t *ev)
{
    struct ctl *c = rec;
    eng.peers[c->target].ctl_inflight--;
    if (ev->ni_fail_type != PTL_NI_OK && c->retry) {
        /* Start-up: the peer's portals are not there yet.  Try again. */
        c->due = now() + 0.002;
        ctl_queue(c);
        eng.starved = true;
        return;
    }
    /* A lost PAUSE/UNPAUSE/EXITING/READY can only be for a rank that is
     * gone: one that announced its exit.  To any other rank it would leave
     * flow control (a late send's receive) waiting forever (a put to one's
     * own node was lost that way on Tern nodes before they looped such
     * frames): say so instead. */
    int op = (int)(c->hd >> 56);
    if (ev->ni_fail_type != PTL_NI_OK && op == CTL_CANCEL && eng.peers[c->target].exiting) {
        /* Gone: msg_cancel.c decides from what the send knows. */
        msg_cancel_gone(c->target, c->hd & ((1ULL << 56) - 1), c->bits);
        free(c);
        return;
    }
    if (ev->ni_fail_type != PTL_NI_OK && !eng.peers[c->target].exiting && !eng.aborting &&
        (op == CTL_PAUSE || op == CTL_PAUSE_ACK || op == CTL_UNPAUSE || op == CTL_READY ||
         op == CTL_CANCEL || op == CTL_CANCEL_ANS))
        msg_fatal("flow-control message %d to node %ld was not delivered (Portals failure %d)",
                 op, c->target, (int)ev->ni_fail_type);
    free(c);
}

bool msg_ctl_idle(void)
{
    if (ctl_head)
        return false;
    for (long t = 0; t < eng.size; t++)
        if (eng.peers[t].ctl_inflight && !eng.peers[t].exiting)
            return false;
    return true;
}

void msg_kick(void)
{
    eng.starved = false;
    kick_ctl();
    for (long t = 0; t < eng.size; t++)
        if (cursor[t])
            kick_peer(t);
}
