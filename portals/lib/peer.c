/* Peers: the per-process state an NI keeps for each nid/pid it talks to
 * (the reliable streams of reliable.c live in it), found through an
 * open-addressing hash; and the response slots (ACK/REPLY messages) that
 * each peer may hold only so many of. */
#include "ptl_internal.h"

/* Peers are never forgotten while the NI lives (their sequence state must
 * persist), so the table only grows: linear probing without deletion. */
struct ptl_peer *ptl_peer_get(struct ptl_ni *ni, uint32_t nid, uint32_t pid,
                              bool create)
{
    uint32_t k = (nid * 2654435761u) ^ (pid * 40503u);
    for (unsigned i = 0; i < PTL_PEER_SLOTS; i++) {
        struct ptl_peer **slot = &ni->peer_tab[(k + i) % PTL_PEER_SLOTS];
        struct ptl_peer *p = *slot;
        if (p && p->nid == nid && p->pid == pid)
            return p;
        if (p)
            continue;
        if (!create || ni->n_peers >= PTL_MAX_PEERS)
            return NULL;
        p = ptl_zalloc(sizeof(*p));
        if (!p)
            return NULL;
        p->used = true;
        p->nid = nid;
        p->pid = pid;
        p->tx_session = ptl_rel_new_session();
        p->last_heard = ptl_host_now_ns();
        p->next = ni->peer_list;
        ni->peer_list = p;
        ni->n_peers++;
        *slot = p;
        return p;
    }
    return NULL;
}

static bool peer_idle(struct ptl_ni *ni, const struct ptl_peer *p)
{
    if (p->q_head || p->snd_una != p->snd_nxt || p->cur.active || p->resp_waiting ||
        p->resp_queued)
        return false;
    for (uint32_t i = 0; i < ni->n_ops; i++)
        if (ni->ops[i].in_use && ni->ops[i].peer == p)
            return false;
    return true;
}

/* Removes slot i of the linear-probing table, moving later members of its
 * probe run back so that every lookup still finds them (no tombstones). */
static void peer_tab_delete(struct ptl_ni *ni, unsigned i)
{
    ni->peer_tab[i] = NULL;
    for (unsigned j = (i + 1) % PTL_PEER_SLOTS; ni->peer_tab[j]; j = (j + 1) % PTL_PEER_SLOTS) {
        struct ptl_peer *q = ni->peer_tab[j];
        unsigned h = ((q->nid * 2654435761u) ^ (q->pid * 40503u)) % PTL_PEER_SLOTS;
        /* q may move to the hole i unless its home h lies cyclically in (i, j]. */
        bool stays = i <= j ? (h > i && h <= j) : (h > i || h <= j);
        if (!stays) {
            ni->peer_tab[i] = q;
            ni->peer_tab[j] = NULL;
            i = j;
        }
    }
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
        uint32_t key = (nid * 2654435761u) ^ (pid * 40503u);
        for (unsigned i = 0; i < PTL_PEER_SLOTS; i++) {
            unsigned slot = (key + i) % PTL_PEER_SLOTS;
            struct ptl_peer *p = ni->peer_tab[slot];
            if (!p)
                break;
            if (p->nid != nid || p->pid != pid)
                continue;
            if (!peer_idle(ni, p))
                break;
            peer_tab_delete(ni, slot);
            for (struct ptl_peer **pp = &ni->peer_list; *pp; pp = &(*pp)->next)
                if (*pp == p) {
                    *pp = p->next;
                    break;
                }
            ni->n_peers--;
            ptl_host_free(p);
            n++;
            break;
        }
    }
    ptl_host_unlock();
    return n;
}

/* A per-peer cap keeps one silent or hostile peer from holding every
 * response slot until it is given up on. */
bool ptl_resp_available(struct ptl_ni *ni, struct ptl_peer *p)
{
    return ni->resp_free && p->resp_queued < PTL_PEER_RESP_MAX;
}

struct ptl_txmsg *ptl_resp_alloc(struct ptl_ni *ni, struct ptl_peer *p)
{
    struct ptl_txmsg *m = ni->resp_free;
    if (!m)
        return NULL;
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
