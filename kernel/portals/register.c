/* A cluster node booted without a program registers with the allocator
 * (service-node/allocd) and then keeps its Portals interface serving: the
 * allocator's health pings are answered by the library itself (a put to a
 * portal with no entry still gets an acknowledgement), so a node that stops
 * serving is seen as down.  The messages are service-node/tern_proto.h. */
#include "boot.h"
#include "kernel.h"
#include "mem.h"
#include "netdev.h"
#include "portals4.h"
#include "ptl_kernel.h"
#include "time.h"
#include "../../service-node/tern_proto.h"

#define NODE_PID 1                   /* allocd pings nodes at this pid */
#define RETRY_NS 2000000000ULL

static struct tern_register reg;
static struct tern_reply reply;

static int wait_event(ptl_handle_eq_t eq, ptl_event_kind_t kind, ptl_event_t *ev, uint64_t until)
{
    while (time_monotonic_ns() < until) {
        unsigned which;
        uint64_t left_ms = (until - time_monotonic_ns()) / 1000000 + 1;
        int rc = PtlEQPoll(&eq, 1, (ptl_time_t)left_ms, ev, &which);
        if ((rc == PTL_OK || rc == PTL_EQ_DROPPED) && ev->type == kind)
            return 0;
    }
    return -1;
}

void node_register_and_serve(void)
{
    ptl_handle_ni_t ni;
    ptl_handle_eq_t eq;
    ptl_handle_md_t md;
    ptl_pt_index_t pt;
    if (PtlInit() != PTL_OK ||
        PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, NODE_PID, NULL, NULL,
                  &ni) != PTL_OK ||
        PtlEQAlloc(ni, 64, &eq) != PTL_OK ||
        PtlPTAlloc(ni, 0, eq, TERN_PT_SERVICE, &pt) != PTL_OK ||
        PtlPTAlloc(ni, 0, eq, TERN_PT_REPLY, &pt) != PTL_OK) {
        kprintf("cannot open Portals to register with the allocator\n");
        return;
    }
    memcpy(reg.mac, netdev_mac(), 6);
    reg.nid = ptl_kernel_nid();
    reg.mem_bytes = app_region.end - app_region.start;
    reg.h = (struct tern_hdr){.magic = TERN_MAGIC, .version = TERN_PROTO_VERSION,
                              .type = TERN_REGISTER, .reply_pid = NODE_PID,
                              .reply_pt = TERN_PT_REPLY};
    ptl_md_t mdd = {.start = &reg, .length = sizeof reg, .options = 0, .eq_handle = eq,
                    .ct_handle = PTL_CT_NONE};
    PtlMDBind(ni, &mdd, &md);
    ptl_process_t alloc;
    alloc.phys.nid = options.alloc_nid;
    alloc.phys.pid = TERN_ALLOC_PID;
    bool told = false;
    for (uint64_t attempt = 1;; attempt++) {
        reg.h.request_id = ((uint64_t)reg.nid << 32) | attempt;
        ptl_me_t me;
        memset(&me, 0, sizeof me);
        me.start = &reply;
        me.length = sizeof reply;
        me.ct_handle = PTL_CT_NONE;
        me.uid = PTL_UID_ANY;
        me.options = PTL_ME_OP_PUT | PTL_ME_USE_ONCE | PTL_ME_EVENT_LINK_DISABLE |
                     PTL_ME_EVENT_UNLINK_DISABLE;
        me.match_id.phys.nid = PTL_NID_ANY;
        me.match_id.phys.pid = PTL_PID_ANY;
        me.match_bits = reg.h.request_id;
        ptl_handle_me_t meh;
        PtlMEAppend(ni, TERN_PT_REPLY, &me, PTL_PRIORITY_LIST, NULL, &meh);
        ptl_event_t ev;
        uint64_t until = time_monotonic_ns() + RETRY_NS;
        if (PtlPut(md, 0, sizeof reg, PTL_NO_ACK_REQ, alloc, TERN_PT_SERVICE, 0, 0, NULL, 0) ==
                PTL_OK &&
            wait_event(eq, PTL_EVENT_PUT, &ev, until) == 0) {
            if (reply.status == 0) {
                kprintf("registered with the allocator (nid %u): %s\n", options.alloc_nid,
                        reply.message);
                break;
            }
            kprintf("the allocator refused registration: %s\n", reply.message);
        } else if (!told) {
            kprintf("no answer from the allocator (nid %u) yet; retrying every 2 s\n",
                    options.alloc_nid);
            told = true;
        }
        PtlMEUnlink(meh);
        while (time_monotonic_ns() < until)
            wait_event(eq, PTL_EVENT_PUT, &ev, until);
    }
    /* Serve: the library answers pings while we wait here. */
    for (;;) {
        ptl_event_t ev;
        PtlEQWait(eq, &ev);
    }
}
