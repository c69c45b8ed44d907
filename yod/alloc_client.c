/* yod's Portals endpoint and its requests to the allocator (allocd,
 * include/tern/tern_proto.h): nodes for the job, their release, status,
 * kill. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tern/cred.h>
#include <tern/tern_proto.h>
#include "yod.h"
#include "ptl_me.h"

#define EQ_SIZE 16384

int yod_portals_open(char *err, size_t errlen)
{
    int rc;
    if ((rc = PtlInit()) != PTL_OK ||
        (rc = PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY, NULL,
                        NULL, &Y.ni)) != PTL_OK) {
        snprintf(err, errlen, "cannot open the Portals interface (TERN_IFACE=%s): error %d; "
                 "run yod on a service node (qemu/cluster exec yod ...)",
                 getenv("TERN_IFACE") ? getenv("TERN_IFACE") : "unset", rc);
        return -1;
    }
    static const struct { ptl_pt_index_t pt; unsigned opt; } pts[] = {
        {TERN_PT_REPLY, 0}, {YOD_PT_IMAGE, 0},
        /* Flow control: when yod falls behind, senders are refused and
         * retry; no event (no output) is ever dropped. */
        {YOD_PT_REPORT, PTL_PT_FLOWCTRL}, {YOD_PT_OUTPUT, PTL_PT_FLOWCTRL}};
    if ((rc = PtlEQAlloc(Y.ni, EQ_SIZE, &Y.eq)) != PTL_OK ||
        (rc = PtlGetPhysId(Y.ni, &Y.me)) != PTL_OK) {
        snprintf(err, errlen, "Portals set-up failed: error %d", rc);
        return -1;
    }
    for (unsigned i = 0; i < sizeof pts / sizeof pts[0]; i++) {
        ptl_pt_index_t got;
        if ((rc = PtlPTAlloc(Y.ni, pts[i].opt, Y.eq, pts[i].pt, &got)) != PTL_OK) {
            snprintf(err, errlen, "cannot allocate portal %u: error %d", pts[i].pt, rc);
            return -1;
        }
    }
    const char *a = getenv("TERN_ALLOC_NID");
    Y.alloc_nid = a ? (uint32_t)strtoul(a, NULL, 10) : 0;
    return 0;
}

/* Marks a request's answer in handle_event's stream of events. */
static struct tern_reply *pending_reply;
static volatile bool reply_arrived;

int alloc_request(void *reqp, size_t len, uint16_t type, struct tern_reply *rep, char *err,
                  size_t errlen)
{
    struct tern_hdr *h = reqp;
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    h->magic = TERN_MAGIC;
    h->version = TERN_PROTO_VERSION;
    h->type = type;
    h->request_id = ((uint64_t)t.tv_nsec << 20) ^ (uint64_t)getpid() ^ ((uint64_t)t.tv_sec << 40);
    h->reply_pid = Y.me.phys.pid;
    h->reply_pt = TERN_PT_REPLY;
    if (cred_sign(h, len, err, (int)errlen))
        return -1;

    ptl_me_t me = ptl_me_phys(rep, sizeof *rep,
                              PTL_ME_OP_PUT | PTL_ME_USE_ONCE | PTL_ME_EVENT_LINK_DISABLE |
                              PTL_ME_EVENT_UNLINK_DISABLE,
                              h->request_id);
    ptl_handle_me_t meh;
    if (PtlMEAppend(Y.ni, TERN_PT_REPLY, &me, PTL_PRIORITY_LIST, &pending_reply, &meh) != PTL_OK) {
        snprintf(err, errlen, "cannot post a buffer for the allocator's answer");
        return -1;
    }
    ptl_md_t mdd = {.start = reqp, .length = len, .options = PTL_MD_EVENT_SEND_DISABLE,
                    .eq_handle = Y.eq, .ct_handle = PTL_CT_NONE};
    ptl_handle_md_t md;
    PtlMDBind(Y.ni, &mdd, &md);
    ptl_process_t to;
    to.phys.nid = Y.alloc_nid;
    to.phys.pid = TERN_ALLOC_PID;
    pending_reply = rep;
    reply_arrived = false;
    /* The request's ACK says whether it reached the allocator: a dead one's
     * host takes no frame for it, and the library gives up on it after its
     * silence (giveup_ns, 5 s).  Without it yod waited out the whole 15 s
     * for an answer, e.g. at every job's end while allocd was down.  An
     * ACK held for allocd's answer rides in it and is taken in just after
     * it (on_ack ignores this tag: no rank). */
    void *tag = op_tag(OP_ALLOC, -1);
    bool acked = false;
    PtlPut(md, 0, len, PTL_ACK_REQ, to, TERN_PT_SERVICE, 0, 0, tag, 0);
    double end = now_s() + 15.0;
    while ((!reply_arrived || !acked) && now_s() < end) {
        ptl_event_t ev;
        unsigned which;
        int rc = PtlEQPoll(&Y.eq, 1, 100, &ev, &which);
        if (rc != PTL_OK && rc != PTL_EQ_DROPPED)
            continue;
        if (ev.type == PTL_EVENT_PUT && ev.user_ptr == &pending_reply) {
            reply_arrived = true;
        } else if (ev.type == PTL_EVENT_ACK && ev.user_ptr == tag) {
            acked = true;
            if (ev.ni_fail_type == PTL_NI_UNDELIVERABLE)
                break;
        } else {
            handle_event(&ev);
        }
    }
    PtlMDRelease(md);
    if (!reply_arrived) {
        PtlMEUnlink(meh);
        snprintf(err, errlen, "the allocator (nid %u pid %u) does not answer: is allocd running "
                 "on the service node?", Y.alloc_nid, TERN_ALLOC_PID);
        return -1;
    }
    return 0;
}
