/*
 * Tern Portals wire format, shared by the library, the kernel NIC drivers and
 * the Linux AF_PACKET host.
 *
 * A Portals frame is one raw Ethernet frame with EtherType PTL_ETHERTYPE.  The
 * host owns the 14-byte Ethernet header (it maps nids to MAC addresses); the
 * library sees only what follows it: a fixed PTL_WIRE_HDR_LEN-byte header
 * and then frag_len payload bytes.  All multi-byte fields are little-endian
 * and are read and written byte by byte through the helpers below, so the
 * layout never depends on compiler padding or host byte order.
 *
 * Offset Size Field
 *   0     1   version        PTL_WIRE_VERSION
 *   1     1   op             enum ptl_wire_op
 *   2     2   flags          PTL_WF_*
 *   4     4   crc            CRC32C over the header (this field zero), then
 *                            the ACK record (PTL_WF_ACKIN), then the
 *                            payload unless PTL_WF_HDRCRC; zero and not
 *                            checked with PTL_WF_LINKCRC
 *   8     4   jid            job id of the sender
 *  12     4   uid            user id of the sender
 *  16     4   src_nid
 *  20     4   src_pid
 *  24     4   dst_nid
 *  28     4   dst_pid
 *  32     4   src_rank       sender's logical rank, PTL_RANK_ANY if none
 *  36     4   pt_index
 *  40     4   session        sender's connection epoch for this peer
 *  44     4   seq            frame sequence number (PTL_WF_SEQ frames)
 *  48     4   ack_session    epoch of the reverse stream being acknowledged
 *  52     4   ack            next in-order seq expected (cumulative ack)
 *  56     8   sack           bit i set: seq ack+1+i already received
 *  64     8   match_bits
 *  72     8   remote_offset  requested offset; offset used in ACK/REPLY
 *  80     8   msg_len        message length (rlength)
 *  88     8   frag_off       byte offset of this fragment in the message
 *  96     4   frag_len       payload bytes in this frame
 * 100     1   ni_type        PTL_WNI_* bits of the NI addressed
 * 101     1   ack_req        ptl_ack_req_t of the request
 * 102     1   atomic_op      ptl_op_t
 * 103     1   atomic_type    ptl_datatype_t
 * 104     8   hdr_data
 * 112     8   msg_id         initiator's operation id, echoed in ACK/REPLY
 * 120     8   operand        CSWAP/MSWAP operand (little-endian bytes)
 * 128     8   mlength        manipulated length (ACK/REPLY)
 * 136     1   fail           ptl_ni_fail_t (ACK/REPLY)
 * 137     1   xmit           which transmission of this frame (1 = first,
 *                            255 = 255th or later; 0 = not counted)
 * 138     1   ack_xmit       ACKV: xmit of the frame that moved `ack` to
 *                            its value (0 = not known)
 * 139     5   reserved, zero
 *
 * A frame with PTL_WF_ACKIN carries a Portals ACK (of a put or atomic the
 * receiver initiated) in a PTL_WIRE_ACKREC_LEN-byte record between its
 * header and its payload; frag_len counts the payload only:
 *
 * Offset Size Field
 *   0     8   msg_id         the acknowledged operation's id
 *   8     8   mlength        manipulated length
 *  16     8   remote_offset  offset used
 *  24     1   fail           ptl_ni_fail_t
 *  25     1   ack_req        ptl_ack_req_t (PTL_NO_ACK_REQ: event suppressed)
 *  26     6   reserved, zero
 *
 * A target's ACK rides so in its program's next frame to the same peer
 * (reliable.c), sequenced, checksummed and acknowledged with it: a frame of
 * its own was a second header to build, check and acknowledge on each side.
 *
 * One link frame may carry several Portals frames back to back: a frame
 * with PTL_WF_MORE is followed, right after its record and its frag_len
 * payload bytes, by another frame's header.  Each is checksummed, sequenced
 * and acknowledged on its own; only the link frame is shared.  This
 * library's sender no longer makes them (the ACK that rode ahead so is the
 * record now); a receiver takes them apart.
 *
 * Compatibility: what an older receiver cannot read (PTL_WF_ACKIN,
 * PTL_WF_LINKCRC) came as a new flag, not a new version.  A receiver
 * refuses a frame with a flag outside its PTL_WF_KNOWN (rx.c, rx_bad_op),
 * so an older node drops such a frame rather than misreading it, and a
 * newer one still takes the older frames.  PTL_WIRE_VERSION changes only
 * when a field's place or meaning does.
 */
#ifndef PTL_WIRE_H
#define PTL_WIRE_H

#include <stdint.h>
#include <stddef.h>

#define PTL_ETHERTYPE 0x88B5
#define PTL_ETH_HLEN 14
#define PTL_WIRE_VERSION 1
#define PTL_WIRE_HDR_LEN 144

enum ptl_wire_op {
    PTL_WOP_PUT = 1,
    PTL_WOP_GET = 2,
    PTL_WOP_ATOMIC = 3,
    PTL_WOP_FETCH = 4,
    PTL_WOP_SWAP = 5,
    PTL_WOP_ACK = 6,   /* Portals acknowledgement of a put/atomic */
    PTL_WOP_REPLY = 7, /* data (or failure) answering get/fetch/swap */
    PTL_WOP_RACK = 8,  /* reliability-only ack: no seq, no payload */
    PTL_WOP_LAST = 8
};

#define PTL_WF_SEQ 0x0001    /* frame carries a sequence number */
#define PTL_WF_ACKV 0x0002   /* ack_session/ack/sack are valid */
#define PTL_WF_ACKNOW 0x0004 /* receiver should acknowledge at once */
#define PTL_WF_FIRST 0x0008  /* first fragment of the message */
#define PTL_WF_LAST 0x0010   /* last fragment of the message */
/* crc covers the header only: the sender's link vouches for the payload
 * (Ethernet's FCS, checked by the NIC; a virtual NIC's memory).  Checking
 * every payload byte again in software was the per-byte bound of big
 * transfers on emulated nodes (docs/portals.md, "Checksums").  This
 * library now sends PTL_WF_LINKCRC there instead; it still takes these. */
#define PTL_WF_HDRCRC 0x0020
#define PTL_WF_MORE 0x0040   /* another frame follows in this link frame */
#define PTL_WF_ACKIN 0x0080  /* an ACK record follows the header (above) */
/* No checksum (crc is zero): the sender's link vouches for the whole frame,
 * header included, as for payloads above.  The header's CRC was ~1 us of
 * each side's 0-byte message path under TCG.  A receiver whose own link
 * can damage frames (it checksums payloads) refuses such frames: a damaged
 * flag could have made one. */
#define PTL_WF_LINKCRC 0x0100
#define PTL_WF_KNOWN 0x01ff

#define PTL_WIRE_ACKREC_LEN 32

#define PTL_WNI_MATCHING 0x01
#define PTL_WNI_LOGICAL 0x02

struct ptl_wire_hdr {
    uint8_t version, op;
    uint16_t flags;
    uint32_t crc, jid, uid;
    uint32_t src_nid, src_pid, dst_nid, dst_pid, src_rank, pt_index;
    uint32_t session, seq, ack_session, ack;
    uint64_t sack, match_bits, remote_offset, msg_len, frag_off;
    uint32_t frag_len;
    uint8_t ni_type, ack_req, atomic_op, atomic_type;
    uint64_t hdr_data, msg_id, operand, mlength;
    uint8_t fail;
    uint8_t xmit, ack_xmit;
};

/* On a little-endian machine a field is the machine's own layout: one
 * load or store (GCC merges neither loop below; under an emulator every
 * byte of them was a few guest instructions on each frame's path). */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define PTL_WIRE_LE 1
#else
#define PTL_WIRE_LE 0
#endif

static inline void ptl_wput(uint8_t *p, uint64_t v, int n)
{
    if (PTL_WIRE_LE && n == 8) {
        __builtin_memcpy(p, &v, 8);
    } else if (PTL_WIRE_LE && n == 4) {
        uint32_t w = (uint32_t)v;
        __builtin_memcpy(p, &w, 4);
    } else if (PTL_WIRE_LE && n == 2) {
        uint16_t w = (uint16_t)v;
        __builtin_memcpy(p, &w, 2);
    } else {
        for (int i = 0; i < n; i++)
            p[i] = (uint8_t)(v >> (8 * i));
    }
}

static inline uint64_t ptl_wget(const uint8_t *p, int n)
{
    if (PTL_WIRE_LE && n == 8) {
        uint64_t v;
        __builtin_memcpy(&v, p, 8);
        return v;
    }
    if (PTL_WIRE_LE && n == 4) {
        uint32_t w;
        __builtin_memcpy(&w, p, 4);
        return w;
    }
    if (PTL_WIRE_LE && n == 2) {
        uint16_t w;
        __builtin_memcpy(&w, p, 2);
        return w;
    }
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* The fields a host reads to route a frame before the library decodes it:
 * their offsets in the header and accessors. */
#define PTL_WIRE_SRC_NID_OFF 16
#define PTL_WIRE_SRC_PID_OFF 20
#define PTL_WIRE_DST_NID_OFF 24
#define PTL_WIRE_DST_PID_OFF 28

static inline uint32_t ptl_wire_src_pid(const uint8_t *hdr)
{
    return (uint32_t)ptl_wget(hdr + PTL_WIRE_SRC_PID_OFF, 4);
}

static inline uint32_t ptl_wire_dst_nid(const uint8_t *hdr)
{
    return (uint32_t)ptl_wget(hdr + PTL_WIRE_DST_NID_OFF, 4);
}

static inline uint32_t ptl_wire_dst_pid(const uint8_t *hdr)
{
    return (uint32_t)ptl_wget(hdr + PTL_WIRE_DST_PID_OFF, 4);
}

static inline void ptl_wire_encode(const struct ptl_wire_hdr *h, uint8_t *p)
{
    /* Every byte up to 138 is a field's, written below: only the reserved
     * bytes need clearing. */
    for (int i = 139; i < PTL_WIRE_HDR_LEN; i++)
        p[i] = 0;
    p[0] = h->version;
    p[1] = h->op;
    ptl_wput(p + 2, h->flags, 2);
    ptl_wput(p + 4, h->crc, 4);
    ptl_wput(p + 8, h->jid, 4);
    ptl_wput(p + 12, h->uid, 4);
    ptl_wput(p + PTL_WIRE_SRC_NID_OFF, h->src_nid, 4);
    ptl_wput(p + PTL_WIRE_SRC_PID_OFF, h->src_pid, 4);
    ptl_wput(p + PTL_WIRE_DST_NID_OFF, h->dst_nid, 4);
    ptl_wput(p + PTL_WIRE_DST_PID_OFF, h->dst_pid, 4);
    ptl_wput(p + 32, h->src_rank, 4);
    ptl_wput(p + 36, h->pt_index, 4);
    ptl_wput(p + 40, h->session, 4);
    ptl_wput(p + 44, h->seq, 4);
    ptl_wput(p + 48, h->ack_session, 4);
    ptl_wput(p + 52, h->ack, 4);
    ptl_wput(p + 56, h->sack, 8);
    ptl_wput(p + 64, h->match_bits, 8);
    ptl_wput(p + 72, h->remote_offset, 8);
    ptl_wput(p + 80, h->msg_len, 8);
    ptl_wput(p + 88, h->frag_off, 8);
    ptl_wput(p + 96, h->frag_len, 4);
    p[100] = h->ni_type;
    p[101] = h->ack_req;
    p[102] = h->atomic_op;
    p[103] = h->atomic_type;
    ptl_wput(p + 104, h->hdr_data, 8);
    ptl_wput(p + 112, h->msg_id, 8);
    ptl_wput(p + 120, h->operand, 8);
    ptl_wput(p + 128, h->mlength, 8);
    p[136] = h->fail;
    p[137] = h->xmit;
    p[138] = h->ack_xmit;
}

static inline void ptl_wire_decode(const uint8_t *p, struct ptl_wire_hdr *h)
{
    h->version = p[0];
    h->op = p[1];
    h->flags = (uint16_t)ptl_wget(p + 2, 2);
    h->crc = (uint32_t)ptl_wget(p + 4, 4);
    h->jid = (uint32_t)ptl_wget(p + 8, 4);
    h->uid = (uint32_t)ptl_wget(p + 12, 4);
    h->src_nid = (uint32_t)ptl_wget(p + 16, 4);
    h->src_pid = ptl_wire_src_pid(p);
    h->dst_nid = ptl_wire_dst_nid(p);
    h->dst_pid = ptl_wire_dst_pid(p);
    h->src_rank = (uint32_t)ptl_wget(p + 32, 4);
    h->pt_index = (uint32_t)ptl_wget(p + 36, 4);
    h->session = (uint32_t)ptl_wget(p + 40, 4);
    h->seq = (uint32_t)ptl_wget(p + 44, 4);
    h->ack_session = (uint32_t)ptl_wget(p + 48, 4);
    h->ack = (uint32_t)ptl_wget(p + 52, 4);
    h->sack = ptl_wget(p + 56, 8);
    h->match_bits = ptl_wget(p + 64, 8);
    h->remote_offset = ptl_wget(p + 72, 8);
    h->msg_len = ptl_wget(p + 80, 8);
    h->frag_off = ptl_wget(p + 88, 8);
    h->frag_len = (uint32_t)ptl_wget(p + 96, 4);
    h->ni_type = p[100];
    h->ack_req = p[101];
    h->atomic_op = p[102];
    h->atomic_type = p[103];
    h->hdr_data = ptl_wget(p + 104, 8);
    h->msg_id = ptl_wget(p + 112, 8);
    h->operand = ptl_wget(p + 120, 8);
    h->mlength = ptl_wget(p + 128, 8);
    h->fail = p[136];
    h->xmit = p[137];
    h->ack_xmit = p[138];
}

/* The ACK record of a PTL_WF_ACKIN frame (layout above). */
struct ptl_wire_ackrec {
    uint64_t msg_id, mlength, remote_offset;
    uint8_t fail, ack_req;
};

static inline void ptl_wire_ackrec_encode(const struct ptl_wire_ackrec *a, uint8_t *p)
{
    ptl_wput(p, a->msg_id, 8);
    ptl_wput(p + 8, a->mlength, 8);
    ptl_wput(p + 16, a->remote_offset, 8);
    p[24] = a->fail;
    p[25] = a->ack_req;
    for (int i = 26; i < PTL_WIRE_ACKREC_LEN; i++)
        p[i] = 0;
}

/* False if a reserved byte is not zero. */
static inline int ptl_wire_ackrec_decode(const uint8_t *p, struct ptl_wire_ackrec *a)
{
    a->msg_id = ptl_wget(p, 8);
    a->mlength = ptl_wget(p + 8, 8);
    a->remote_offset = ptl_wget(p + 16, 8);
    a->fail = p[24];
    a->ack_req = p[25];
    for (int i = 26; i < PTL_WIRE_ACKREC_LEN; i++)
        if (p[i])
            return 0;
    return 1;
}

/* CRC32C (Castagnoli, reflected, init/xorout 0xffffffff); crc32c.c. */
uint32_t ptl_crc32c(uint32_t crc, const void *buf, size_t len);
/* The two implementations behind ptl_crc32c, exposed so tests can check
 * them against each other: portable slice-by-8 tables, and the SSE4.2
 * instruction (falls back to the tables where the CPU lacks it; ask
 * ptl_crc32c_hw_available, which probes CPUID once). */
uint32_t ptl_crc32c_sw(uint32_t crc, const void *buf, size_t len);
uint32_t ptl_crc32c_hw(uint32_t crc, const void *buf, size_t len);
int ptl_crc32c_hw_available(void);
/* The host knows the instruction must not run here (the Tern kernel under
 * a hypervisor whose kernel-mode instruction emulator lacks it: executing
 * it stops the VM).  From then on ptl_crc32c uses the tables and
 * ptl_crc32c_hw_available says no.  Call before the first ptl_crc32c. */
void ptl_crc32c_forbid_hw(void);
#define PTL_CRC32C_INIT 0xffffffffu
#define PTL_CRC32C_FINAL(c) ((c) ^ 0xffffffffu)

#endif /* PTL_WIRE_H */
