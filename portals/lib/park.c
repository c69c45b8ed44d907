/* Frames that arrive before the NI they address.
 *
 * The ranks of a job start apart (each node's kernel starts its program
 * when its load ends), and a rank that starts first sends at once: its put
 * (libnx's start-up barrier) reached a node whose program had not yet made
 * its NI, was dropped, and came again only by the sender's retransmission
 * after that program was ready.  Before a round trip is measured that timer
 * is 10 ms and backs off, so the put came up to twice the gap late
 * (docs/performance.md, "Frames that come before their NI").
 *
 * So a host whose application NIs appear after their peers may send (a
 * Tern node) keeps a few of those frames, checked as any other, and the
 * progress step hands them to the NI in the order they came once the
 * program has first put, got or looked for an event or count with it
 * (ptl_ni_receiving): by then its portal table entries are set up.  Not at
 * PtlNIInit: a put handed over before its portal exists is refused (libnx
 * then tries again 2 ms later).  Small frames only, and a fixed few: when
 * the park is full the oldest goes, and the sender's timer covers whatever
 * was not kept, as it did before.  A frame of another job (a late one of
 * the job before) is dropped at the hand-over, where it would have been
 * refused.  A Linux process sees the frames to its node's other processes:
 * it keeps none (tunables.park_frames 0). */
#include "ptl_internal.h"

struct ptl_parked {
    bool used;
    bool has_ack;
    uint8_t iface;
    uint64_t order;
    struct ptl_wire_hdr h;
    struct ptl_wire_ackrec ack;
    uint8_t payload[PTL_PARK_PAYLOAD_MAX];
};

static struct ptl_parked park[PTL_PARK_MAX];
static uint64_t park_order;

static bool same_frame(const struct ptl_parked *k, unsigned iface, const struct ptl_wire_hdr *h)
{
    return k->iface == iface && k->h.src_nid == h->src_nid && k->h.src_pid == h->src_pid &&
           k->h.dst_pid == h->dst_pid && k->h.ni_type == h->ni_type &&
           k->h.session == h->session && k->h.seq == h->seq;
}

bool ptl_park(unsigned iface, const struct ptl_wire_hdr *h, const struct ptl_wire_ackrec *ack,
              const uint8_t *payload)
{
    unsigned max = ptl_g.tun.park_frames < PTL_PARK_MAX ? ptl_g.tun.park_frames : PTL_PARK_MAX;
    if (!max || !(h->flags & PTL_WF_SEQ) || h->frag_len > PTL_PARK_PAYLOAD_MAX)
        return false;
    struct ptl_host_iface_info info;
    if (ptl_host_iface_info(iface, &info) != 0 || info.nid != h->dst_nid)
        return false;               /* another node's: no NI of ours will want it */
    struct ptl_parked *slot = NULL;
    for (unsigned i = 0; i < max; i++) {
        struct ptl_parked *k = &park[i];
        if (k->used && same_frame(k, iface, h))
            return true;            /* a resend of one kept already */
        if (!slot || (slot->used && (!k->used || k->order < slot->order)))
            slot = k;               /* a free slot, else the oldest */
    }
    if (slot->used)
        ptl_g.stats[slot->iface].rx_not_for_us++;
    else
        ptl_g.n_parked++;
    slot->used = true;
    slot->iface = (uint8_t)iface;
    slot->order = ++park_order;
    slot->h = *h;
    slot->has_ack = ack != NULL;
    if (ack)
        slot->ack = *ack;
    memcpy(slot->payload, payload, h->frag_len);
    ptl_g.stats[iface].rx_parked++;
    return true;
}

void ptl_park_hand_over_locked(void)
{
    for (;;) {
        struct ptl_parked *next = NULL;
        struct ptl_ni *ni = NULL;
        for (unsigned i = 0; i < PTL_PARK_MAX; i++) {
            struct ptl_parked *k = &park[i];
            struct ptl_ni *n;
            if (k->used && (!next || k->order < next->order) &&
                (n = ptl_rx_find_ni(k->iface, &k->h)) && n->receiving) {
                next = k;
                ni = n;
            }
        }
        if (!next)
            return;
        next->used = false;
        ptl_g.n_parked--;
        /* Checked on arrival but for what needed the NI: its job, its
         * link's checksum rule, its duplicates, its limits. */
        if (next->h.jid != ni->jid ||
            ((next->h.flags & PTL_WF_LINKCRC) && !ni->link_checks_payload)) {
            ptl_g.stats[ni->iface].rx_not_for_us++;
            continue;
        }
        if (ptl_rel_rx_dup(ni, &next->h))
            continue;
        ptl_g.stats[ni->iface].rx_unparked++;
        ptl_rx_deliver(ni, &next->h, next->has_ack ? &next->ack : NULL, next->payload);
    }
}

void ptl_park_drop_iface(unsigned iface)
{
    for (unsigned i = 0; i < PTL_PARK_MAX; i++)
        if (park[i].used && park[i].iface == iface) {
            park[i].used = false;
            ptl_g.n_parked--;
            ptl_g.stats[iface].rx_not_for_us++;
        }
}
