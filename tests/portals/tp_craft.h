/* Hand-made wire frames for tests that inject frames with ptl_lib_rx. */
#ifndef TP_CRAFT_H
#define TP_CRAFT_H
#include "tp.h"
#include "ptl_wire.h"

static inline void tp_seal(uint8_t *f, size_t len)
{
    memset(f + 4, 0, 4);
    uint32_t c = ptl_crc32c(PTL_CRC32C_INIT, f, len);
    ptl_wput(f + 4, PTL_CRC32C_FINAL(c), 4);
}

/* Seal as a PTL_WF_HDRCRC frame: the crc covers the header only. */
static inline void tp_seal_hdr(uint8_t *f)
{
    memset(f + 4, 0, 4);
    uint32_t c = ptl_crc32c(PTL_CRC32C_INIT, f, PTL_WIRE_HDR_LEN);
    ptl_wput(f + 4, PTL_CRC32C_FINAL(c), 4);
}

/* Encode h followed by plen payload bytes into f and seal it. */
static inline size_t tp_craft(uint8_t *f, struct ptl_wire_hdr *h,
                              const void *payload, uint32_t plen)
{
    h->version = PTL_WIRE_VERSION;
    h->frag_len = plen;
    h->crc = 0;
    ptl_wire_encode(h, f);
    memcpy(f + PTL_WIRE_HDR_LEN, payload, plen);
    tp_seal(f, PTL_WIRE_HDR_LEN + plen);
    return PTL_WIRE_HDR_LEN + plen;
}

/* First frame of a put from a fake node of the target's job, new
 * session, seq 0. */
static inline struct ptl_wire_hdr tp_put_hdr(const struct node *dst,
                                             ptl_pt_index_t pt,
                                             uint32_t src_nid,
                                             uint32_t session,
                                             uint64_t msg_len, uint64_t roff)
{
    struct ptl_wire_hdr h;
    memset(&h, 0, sizeof(h));
    h.op = PTL_WOP_PUT;
    h.flags = PTL_WF_SEQ | PTL_WF_FIRST | PTL_WF_LAST;
    h.uid = PTL_TEST_UID;
    h.jid = PTL_TEST_JID;
    h.src_nid = src_nid;
    h.src_pid = 5;
    h.dst_nid = dst->id.phys.nid;
    h.dst_pid = dst->id.phys.pid;
    h.pt_index = pt;
    h.session = session;
    h.msg_len = msg_len;
    h.remote_offset = roff;
    h.ni_type = PTL_WNI_MATCHING;
    h.msg_id = 1;
    return h;
}
#endif
