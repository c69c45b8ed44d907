/* Peers: the per-process state an NI keeps for each nid/pid it talks to
 * (the reliable streams of reliable.c live in it), found through an
 * open-addressing hash; at most PTL_MAX_PEERS of them, the least recently
 * heard making room for a new source when the table is full; and the
 * response slots (ACK/REPLY messages, a pool that grows by chunks) that
 * each peer may hold only so many of. */
#include "ptl_internal.h"

static unsigned peer_home(uint32_t nid, uint32_t pid)
{
    return ((nid * 2654435761u) ^ (pid * 40503u)) % PTL_PEER_SLOTS;
}

static void lru_unlink(struct ptl_ni *ni, struct ptl_peer *p)
{
    unsigned l = p->proven;
    if (p->lru_prev)
        p->lru_prev->lru_next = p->lru_next;
    else
        ni->lru_head[l] = p->lru_next;
    if (p->lru_next)
        p->lru_next->lru_prev = p->lru_prev;
    else
        ni->lru_tail[l] = p->lru_prev;
    p->lru_next = p->lru_prev = NULL;
}

static void lru_append(struct ptl_ni *ni, struct ptl_peer *p)
{
    unsigned l = p->proven;
    p->lru_next = NULL;
    p->lru_prev = ni->lru_tail[l];
    if (p->lru_prev)
        p->lru_prev->lru_next = p;
    else
        ni->lru_head[l] = p;
    ni->lru_tail[l] = p;
}

void ptl_peer_heard(struct ptl_ni *ni, struct ptl_peer *p)
{
    p->last_heard = ptl_host_now_ns();
    lru_unlink(ni, p);
    lru_append(ni, p);
}

void ptl_peer_prove(struct ptl_ni *ni, struct ptl_peer *p)
{
    if (p->proven)
        return;
    lru_unlink(ni, p);
    p->proven = true;
    lru_append(ni, p);
}

/* Nothing of it for a timer or a deadline: nothing queued or in flight to
 * it, no ack owed, no held ACK, no message half received from it, no
 * answer awaited from it.  What ptl_rel_peer_timers, ptl_rel_deadline and
 * ptl_ops_peer_timeout look at, and nothing else. */
bool ptl_peer_quiet(const struct ptl_peer *p)
{
    return !(p->q_head || p->snd_una != p->snd_nxt || p->ack_pending || p->hold_until ||
             p->cur.active || p->resp_waiting);
}

void ptl_peer_busy(struct ptl_ni *ni, struct ptl_peer *p)
{
    if (p->on_busy_list)
        return;
    p->on_busy_list = true;
    p->busy_prev = NULL;
    p->busy_next = ni->busy_head;
    if (p->busy_next)
        p->busy_next->busy_prev = p;
    ni->busy_head = p;
}

static void busy_unlink(struct ptl_ni *ni, struct ptl_peer *p)
{
    if (!p->on_busy_list)
        return;
    if (ni->busy_walk == p)
        ni->busy_walk = p->busy_next;
    if (ni->busy_cur == p)
        ni->busy_cur = NULL;
    if (p->busy_prev)
        p->busy_prev->busy_next = p->busy_next;
    else
        ni->busy_head = p->busy_next;
    if (p->busy_next)
        p->busy_next->busy_prev = p->busy_prev;
    p->busy_next = p->busy_prev = NULL;
    p->on_busy_list = false;
}

/* A walk of the busy list: the caller visits each peer returned, and
 * ptl_peer_walk_next takes the one just visited off if the visit left it
 * quiet.  A visit may fail operations, post events and so fire triggered
 * operations, which can make other peers busy (they are visited next time)
 * or drop a peer to make room, even the one visited (peer_drop keeps the
 * walk's place).  Walks do not nest: nothing a visit calls walks the list. */
static struct ptl_peer *walk_step(struct ptl_ni *ni, struct ptl_peer *p)
{
    ni->busy_cur = p;
    ni->busy_walk = p ? p->busy_next : NULL;
    return p;
}

struct ptl_peer *ptl_peer_walk_first(struct ptl_ni *ni)
{
    return walk_step(ni, ni->busy_head);
}

bool ptl_peer_walk_kept(const struct ptl_ni *ni, const struct ptl_peer *p)
{
    return ni->busy_cur == p;   /* busy_unlink (peer_drop) clears it */
}

struct ptl_peer *ptl_peer_walk_next(struct ptl_ni *ni)
{
    struct ptl_peer *done = ni->busy_cur;
    if (done && ptl_peer_quiet(done))
        busy_unlink(ni, done);
    return walk_step(ni, ni->busy_walk);
}

static bool peer_idle(const struct ptl_peer *p)
{
    return !(p->q_head || p->snd_una != p->snd_nxt || p->cur.active || p->resp_waiting ||
             p->resp_queued || p->n_ops);
}

/* Removes slot i of the linear-probing table, moving later members of its
 * probe run back so that every lookup still finds them (no tombstones). */
static void peer_tab_delete(struct ptl_ni *ni, unsigned i)
{
    ni->peer_tab[i] = NULL;
    for (unsigned j = (i + 1) % PTL_PEER_SLOTS; ni->peer_tab[j]; j = (j + 1) % PTL_PEER_SLOTS) {
        struct ptl_peer *q = ni->peer_tab[j];
        unsigned h = peer_home(q->nid, q->pid);
        /* q may move to the hole i unless its home h lies cyclically in (i, j]. */
        bool stays = i <= j ? (h > i && h <= j) : (h > i || h <= j);
        if (!stays) {
            ni->peer_tab[i] = q;
            ni->peer_tab[j] = NULL;
            i = j;
        }
    }
}

/* Takes p out of the NI and frees it.  What is still pending with it (only
 * an unproven peer may have anything: ACK/REPLY messages to it, a message
 * half received from it) is failed or dropped first. */
static void peer_drop(struct ptl_ni *ni, struct ptl_peer *p)
{
    if (p->cur.active)
        ptl_target_abort(ni, p);
    if (p->q_head || p->snd_una != p->snd_nxt || p->resp_waiting)
        ptl_rel_fail_peer(ni, p);
    unsigned i = peer_home(p->nid, p->pid);
    while (ni->peer_tab[i] != p)
        i = (i + 1) % PTL_PEER_SLOTS;
    peer_tab_delete(ni, i);
    if (p->prev)
        p->prev->next = p->next;
    else
        ni->peer_list = p->next;
    if (p->next)
        p->next->prev = p->prev;
    lru_unlink(ni, p);
    busy_unlink(ni, p);
    ni->n_peers--;
    ptl_host_free(p->win);
    ptl_host_free(p);
}

/* The table is full and a new source speaks: make room, so that a flood of
 * made-up sources costs the flood and never the NI's real peers.  First
 * the least recently heard source that never acknowledged anything of ours
 * and that no operation of ours names (a flood's entries, whatever they
 * left half done); else the least recently heard proven peer that is idle
 * and has been silent for giveup_ns (a process that is gone: its partner
 * has given up on anything unacknowledged, so nothing of its stream
 * remains in flight).  The walks are bounded: a new source costs at most
 * that much work. */
#define RECLAIM_WALK 256
static bool peer_reclaim(struct ptl_ni *ni)
{
    unsigned n = 0;
    for (struct ptl_peer *p = ni->lru_head[0]; p && n < RECLAIM_WALK; p = p->lru_next, n++)
        if (!p->n_ops && !p->resp_waiting) {
            peer_drop(ni, p);
            ptl_g.stats[ni->iface].peers_reclaimed++;
            return true;
        }
    uint64_t now = ptl_host_now_ns();
    n = 0;
    for (struct ptl_peer *p = ni->lru_head[1]; p && n < RECLAIM_WALK; p = p->lru_next, n++) {
        if (now - p->last_heard < ptl_g.tun.giveup_ns)
            break;                     /* the rest were heard more recently */
        if (peer_idle(p)) {
            peer_drop(ni, p);
            ptl_g.stats[ni->iface].peers_reclaimed++;
            return true;
        }
    }
    return false;
}

struct ptl_peer *ptl_peer_get(struct ptl_ni *ni, uint32_t nid, uint32_t pid,
                              bool create)
{
    unsigned k = peer_home(nid, pid);
    for (unsigned i = 0; i < PTL_PEER_SLOTS; i++) {
        struct ptl_peer *p = ni->peer_tab[(k + i) % PTL_PEER_SLOTS];
        if (p && p->nid == nid && p->pid == pid)
            return p;
        if (p)
            continue;
        if (!create || (ni->n_peers >= PTL_MAX_PEERS && !peer_reclaim(ni)))
            return NULL;
        p = ptl_zalloc(sizeof(*p));
        if (!p && peer_reclaim(ni))      /* the host's memory ran out first */
            p = ptl_zalloc(sizeof(*p));
        if (!p)
            return NULL;
        p->nid = nid;
        p->pid = pid;
        p->tx_session = ptl_rel_new_session();
        p->last_heard = ptl_host_now_ns();
        p->next = ni->peer_list;
        if (p->next)
            p->next->prev = p;
        ni->peer_list = p;
        lru_append(ni, p);
        ni->n_peers++;
        /* A reclaim may have moved members of this probe run: look again. */
        for (unsigned j = 0; j < PTL_PEER_SLOTS; j++) {
            struct ptl_peer **slot = &ni->peer_tab[(k + j) % PTL_PEER_SLOTS];
            if (!*slot) {
                *slot = p;
                return p;
            }
        }
        return p; /* unreachable: n_peers < PTL_PEER_SLOTS */
    }
    return NULL;
}

int ptl_lib_forget_peer(unsigned iface, uint32_t nid, uint32_t pid)
{
    int n = 0;
    if (iface >= PTL_MAX_IFACES)
        return 0;
    ptl_host_lock();
    for (unsigned k = iface * 4; k < iface * 4 + 4; k++) {
        struct ptl_ni *ni = &ptl_g.nis[k];
        if (!ni->in_use || !ni->peer_tab)
            continue;
        struct ptl_peer *p = ptl_peer_get(ni, nid, pid, false);
        if (p && peer_idle(p)) {
            peer_drop(ni, p);
            n++;
        }
    }
    ptl_host_unlock();
    return n;
}

bool ptl_resp_grow(struct ptl_ni *ni)
{
    struct ptl_resp_chunk *c = ptl_zalloc(sizeof(*c));
    if (!c)
        return false;
    c->next = ni->resp_chunks;
    ni->resp_chunks = c;
    for (int i = PTL_RESP_CHUNK - 1; i >= 0; i--) {
        c->m[i].next = ni->resp_free;
        ni->resp_free = &c->m[i];
    }
    return true;
}

/* A peer holds at most PTL_PEER_RESP_MAX answers of ours, which a peer
 * that limits its requests in flight (ptl_rel_push) never reaches: only
 * a hostile peer is refused (its request dropped unacknowledged, resent
 * later), and it cannot take everyone's memory.  Otherwise the pool grows:
 * a refused request stops its whole stream, and answers of the refusing
 * side queued behind a request the other side refuses in turn would wait
 * for each other for good. */
bool ptl_resp_available(struct ptl_ni *ni, struct ptl_peer *p)
{
    return p->resp_queued < PTL_PEER_RESP_MAX && (ni->resp_free || ptl_resp_grow(ni));
}

struct ptl_txmsg *ptl_resp_alloc(struct ptl_ni *ni, struct ptl_peer *p)
{
    if (!ni->resp_free && !ptl_resp_grow(ni))
        return NULL;
    struct ptl_txmsg *m = ni->resp_free;
    ni->resp_free = m->next;
    memset(m, 0, sizeof(*m));
    m->resp_peer = p;
    p->resp_queued++;
    return m;
}

void ptl_resp_free(struct ptl_ni *ni, struct ptl_txmsg *m)
{
    if (m->resp_peer)
        m->resp_peer->resp_queued--;
    m->next = ni->resp_free;
    ni->resp_free = m;
}
