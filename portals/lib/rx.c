/* Frame reception: validate everything before any byte is used, then hand
 * the frame to the reliability layer of the NI it addresses.  A frame that
 * fails a check is dropped and counted; the sender's retransmission and
 * give-up logic deals with the loss. */
#include "ptl_internal.h"

static bool atomic_hdr_ok(const struct ptl_ni *ni, const struct ptl_wire_hdr *h)
{
    if (h->atomic_type >= PTL_DATATYPE_LAST || h->atomic_op >= PTL_OP_LAST)
        return false;
    if (!ptl_atomic_valid((ptl_op_t)h->atomic_op,
                          (ptl_datatype_t)h->atomic_type))
        return false;
    size_t tsz = ptl_atomic_size((ptl_datatype_t)h->atomic_type);
    /* Fetching ops return the old data from a bounded buffer. */
    ptl_size_t max = h->op == PTL_WOP_ATOMIC ? ni->lim.max_atomic_size
                                             : ni->lim.max_fetch_atomic_size;
    if (h->atomic_op >= PTL_CSWAP && h->msg_len != tsz)
        return false; /* compare-and-swap family: one element */
    /* Atomics always travel in one frame. */
    return h->msg_len == h->frag_len && h->msg_len % tsz == 0 &&
           h->msg_len <= max;
}

struct ptl_ni *ptl_rx_find_ni(unsigned iface, const struct ptl_wire_hdr *h)
{
    if (h->ni_type & ~(PTL_WNI_MATCHING | PTL_WNI_LOGICAL))
        return NULL;
    unsigned k = iface * 4 + ((h->ni_type & PTL_WNI_MATCHING) ? 0 : 1) +
                 ((h->ni_type & PTL_WNI_LOGICAL) ? 2 : 0);
    struct ptl_ni *ni = &ptl_g.nis[k];
    if (!ni->in_use || ni->id.phys.nid != h->dst_nid ||
        ni->id.phys.pid != h->dst_pid)
        return NULL;
    return ni;
}

/* One Portals frame: its header (PTL_WIRE_HDR_LEN bytes at f) and, at
 * payload, the plen bytes that follow it in the link frame: its ACK record
 * (PTL_WF_ACKIN), its own payload and, with PTL_WF_MORE, the next frame
 * (ptl_wire.h).  Returns the length of what is left for a next frame (0:
 * none, or not to be trusted). */
static size_t rx_one(unsigned iface, const uint8_t *f, const uint8_t *payload,
                     size_t plen)
{
    struct ptl_lib_stats *st = &ptl_g.stats[iface];
    struct ptl_wire_hdr h;
    ptl_wire_decode(f, &h);
    if (h.version != PTL_WIRE_VERSION) {
        st->rx_bad_version++;
        return 0;
    }
    /* The record, the payload this frame claims, and what follows them.
     * Checked before anything is read, the checksum included: a frame that
     * says more follows must leave room for a header after its payload. */
    size_t rec_len = (h.flags & PTL_WF_ACKIN) ? PTL_WIRE_ACKREC_LEN : 0;
    if (plen < rec_len) {
        st->rx_short++;
        return 0;
    }
    const uint8_t *rec = payload;
    payload += rec_len;
    plen -= rec_len;
    bool more = h.flags & PTL_WF_MORE;
    if (more ? plen < PTL_WIRE_HDR_LEN || h.frag_len > plen - PTL_WIRE_HDR_LEN
             : h.frag_len != plen) {
        st->rx_short++;
        return 0;
    }
    size_t rest = more ? plen - h.frag_len : 0;
    plen = h.frag_len;
    /* A copy of a frame already delivered is known by its header: drop it
     * before paying for the checksum (ptl_rel_rx_dup).  What follows it in
     * the link frame is checked on its own. */
    struct ptl_ni *ni = ptl_rx_find_ni(iface, &h);
    if (ni && ptl_rel_rx_dup(ni, &h))
        return rest;
    if (h.flags & PTL_WF_LINKCRC) {
        /* Unchecked: the sender's link vouches for the frame.  Not where
         * frames can be damaged (we checksum payloads here, so our link
         * can), and never with a checksum or the header-only flag: a
         * damaged flag or field could have made the frame. */
        if (h.crc || (h.flags & PTL_WF_HDRCRC) || (ni && !ni->link_checks_payload)) {
            st->rx_bad_crc++;
            return 0;
        }
    } else {
        /* The flags are in the checksummed header: a flipped flag fails
         * the check like any other damaged header byte. */
        static const uint8_t zero[4];
        uint32_t c = ptl_crc32c(PTL_CRC32C_INIT, f, 4);
        c = ptl_crc32c(c, zero, 4);
        c = ptl_crc32c(c, f + 8, PTL_WIRE_HDR_LEN - 8);
        if (rec_len)
            c = ptl_crc32c(c, rec, rec_len);
        if (!(h.flags & PTL_WF_HDRCRC))
            c = ptl_crc32c(c, payload, plen);
        if (PTL_CRC32C_FINAL(c) != h.crc) {
            st->rx_bad_crc++;
            return 0;
        }
    }
    if (h.op < 1 || h.op > PTL_WOP_LAST || (h.flags & ~PTL_WF_KNOWN)) {
        st->rx_bad_op++;
        return 0;
    }
    bool seq = h.flags & PTL_WF_SEQ;
    if ((h.op == PTL_WOP_RACK) ? (seq || h.frag_len || !(h.flags & PTL_WF_ACKV) || rec_len)
                               : !seq) {
        st->rx_bad_op++;
        return 0;
    }
    /* An ACK in the record is checked as one in a frame of its own. */
    struct ptl_wire_ackrec ack;
    if (rec_len && (!ptl_wire_ackrec_decode(rec, &ack) || ack.fail > PTL_NI_NO_MATCH ||
                    ack.ack_req > PTL_OC_ACK_REQ)) {
        st->rx_bad_field++;
        return 0;
    }
    if (h.frag_len > h.msg_len || h.frag_off > h.msg_len - h.frag_len ||
        ((h.flags & PTL_WF_FIRST) && h.frag_off != 0) ||
        h.ack_req > PTL_OC_ACK_REQ || h.fail > PTL_NI_NO_MATCH) {
        st->rx_bad_field++;
        return 0;
    }
    if (!ni) {
        /* Its NI may be only a moment away (park.c); if not, dropped. */
        if (ptl_park(iface, &h, rec_len ? &ack : NULL, payload))
            return rest;
        st->rx_not_for_us++;
        return 0;
    }
    return ptl_rx_deliver(ni, &h, rec_len ? &ack : NULL, payload) ? rest : 0;
}

bool ptl_rx_deliver(struct ptl_ni *ni, const struct ptl_wire_hdr *h,
                    const struct ptl_wire_ackrec *ack, const uint8_t *payload)
{
    bool request = h->op >= PTL_WOP_PUT && h->op <= PTL_WOP_SWAP;
    if (h->msg_len > ni->lim.max_msg_size ||
        (request && h->pt_index > (uint32_t)ni->lim.max_pt_index) ||
        (h->op == PTL_WOP_GET && h->frag_len) ||
        (request && h->op != PTL_WOP_PUT && h->op != PTL_WOP_GET &&
         !atomic_hdr_ok(ni, h))) {
        ptl_g.stats[ni->iface].rx_bad_field++;
        return false;
    }
    PTL_TRACE(TP_RX_CHECKED);
    ptl_rel_rx(ni, h, ack, payload);
    return true;
}

/* A link frame: the first header (hlen bytes, PTL_WIRE_HDR_LEN in a whole
 * frame) and what follows it, contiguous or apart (ptl_lib_rx_parts).
 * Every frame in it counts in rx_frames, dropped or not. */
static void rx_frame(unsigned iface, const uint8_t *f, size_t hlen,
                     const uint8_t *payload, size_t plen)
{
    if (iface >= PTL_MAX_IFACES || !f)
        return;
    ptl_host_lock();
    if (!ptl_api_ready()) {
        ptl_host_unlock();
        return;
    }
    struct ptl_lib_stats *st = &ptl_g.stats[iface];
    st->rx_frames++;
    if (hlen != PTL_WIRE_HDR_LEN) {
        st->rx_short++;
        ptl_host_unlock();
        return;
    }
    size_t rest = rx_one(iface, f, payload, plen);
    while (rest) {
        /* The next frame's header starts right after this one's payload. */
        f = payload + (plen - rest);
        payload = f + PTL_WIRE_HDR_LEN;
        plen = rest - PTL_WIRE_HDR_LEN;
        st->rx_frames++;
        rest = rx_one(iface, f, payload, plen);
    }
    ptl_host_unlock();
}

void ptl_lib_rx(unsigned iface, const void *frame, size_t len)
{
    const uint8_t *f = frame;
    size_t hlen = len < PTL_WIRE_HDR_LEN ? len : PTL_WIRE_HDR_LEN;
    rx_frame(iface, f, hlen, f ? f + hlen : NULL, len - hlen);
}

void ptl_lib_rx_parts(unsigned iface, const void *hdr, size_t hdr_len,
                      const void *payload, size_t payload_len)
{
    if (payload_len && !payload)
        return;
    rx_frame(iface, hdr, hdr_len, payload, payload_len);
}
