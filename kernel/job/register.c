/* A cluster node booted without a program registers with the allocator
 * (service-node/allocd), then waits for jobs from yod (kernel/job/).  The
 * allocator's health pings are Gets of what the node holds (struct
 * tern_node_state): the allocator frees a node whose launcher is gone only
 * once the node says it holds the job no more.  The messages are
 * include/tern/tern_proto.h. */
#include "boot.h"
#include "job.h"
#include "kernel.h"
#include "kmalloc.h"
#include "mem.h"
#include "netdev.h"
#include "ptl_kernel.h"
#include "smp.h"
#include "time.h"
#include <tern/tern_proto.h>
#include <tern/yod_proto.h>
#include "ptl_me.h"

#define RETRY_NS 2000000000ULL

static struct tern_register reg;
static struct tern_reply reply;
static struct tern_node_state state = {TERN_MAGIC, 0, 0};

void job_state_publish(uint32_t job) { state.job = job; }
void job_state_ending(uint32_t job) { state.ending = job; }

/* Answered by the library, no event: always the current state. */
static void publish_state(void)
{
    ptl_me_t me = ptl_me_phys(&state, sizeof state,
                              PTL_ME_OP_GET | PTL_ME_EVENT_COMM_DISABLE |
                              PTL_ME_EVENT_LINK_DISABLE | PTL_ME_EVENT_UNLINK_DISABLE,
                              TERN_STATE_BITS);
    ptl_handle_me_t h;
    if (PtlMEAppend(knode.ni, TERN_PT_SERVICE, &me, PTL_PRIORITY_LIST, NULL, &h) != PTL_OK)
        kprintf("cannot publish the node's state to the allocator\n");
}

static void register_with_allocator(void)
{
    memcpy(reg.mac, netdev_mac(), 6);
    reg.nid = ptl_kernel_nid();
    reg.mem_bytes = app_region.end - app_region.start;
    reg.cores = (uint16_t)smp_ncpus();
    reg.h = (struct tern_hdr){.magic = TERN_MAGIC, .version = TERN_PROTO_VERSION,
                              .type = TERN_REGISTER, .reply_pid = YOD_NODE_PID,
                              .reply_pt = TERN_PT_REPLY};
    bool told = false;
    for (uint64_t attempt = 1;; attempt++) {
        reg.h.request_id = ((uint64_t)reg.nid << 32) | attempt;
        /* A fresh kop per attempt: a late answer to an old attempt must not
         * complete the new one. */
        struct kop *op = kmalloc(sizeof *op);
        if (!op)
            panic("out of kernel memory while registering");
        memset(op, 0, sizeof *op);
        ptl_me_t me = ptl_me_phys(&reply, sizeof reply,
                                  PTL_ME_OP_PUT | PTL_ME_USE_ONCE | PTL_ME_EVENT_LINK_DISABLE |
                                  PTL_ME_EVENT_UNLINK_DISABLE,
                                  reg.h.request_id);
        ptl_handle_me_t meh;
        PtlMEAppend(knode.ni, TERN_PT_REPLY, &me, PTL_PRIORITY_LIST, op, &meh);
        uint64_t until = time_monotonic_ns() + RETRY_NS;
        int rc = knode_put(&reg, sizeof reg, options.alloc_nid, TERN_ALLOC_PID, TERN_PT_SERVICE, 0,
                           until);
        bool answered = rc == PTL_NI_OK && knode_wait(op, until);
        if (answered) {
            kfree(op);
            if (reply.status == 0) {
                kprintf("registered with the allocator (nid %u): %s\n", options.alloc_nid,
                        reply.message);
                return;
            }
            kprintf("the allocator refused registration: %s\n", reply.message);
        } else {
            if (!told)
                kprintf("no answer from the allocator (nid %u) yet; retrying every 2 s\n",
                        options.alloc_nid);
            told = true;
            /* Unlinked before any put arrived: no event will name op.
             * Otherwise an answer is on its way and op is left to it. */
            if (PtlMEUnlink(meh) == PTL_OK)
                kfree(op);
        }
        while (time_monotonic_ns() < until)
            knode_wait(NULL, until);
    }
}

void node_register_and_serve(void)
{
    if (knode_open() != 0) {
        kprintf("cannot open Portals to register with the allocator\n");
        return;
    }
    /* The region holds whatever was in RAM before this boot (a boot
     * loader's, or an earlier boot's jobs'): cleared before the allocator
     * can hand the node out.  (Cleared while the node already waited for
     * jobs, a job that came meanwhile waited for the rest inside its load,
     * with yod's messages unserved.)  Only pages that are not zero are
     * written: on a virtual node the RAM nobody wrote reads zero, and the
     * host has not allocated it yet; zeroing it made the host allocate and
     * zero every node's whole memory at boot. */
    uint64_t t0 = time_monotonic_ns();
    uint64_t len = app_region.end - app_region.start;
    mem_dirty_mark(app_region.start, len);
    uint64_t n = mem_dirty_clear(MEM_CLEAR_SLICE, knode_answer, true);
    kprintf("application region cleared (%lu MiB looked at, %lu KiB not zero) in %lu ms\n",
            len >> 20, n >> 10, (time_monotonic_ns() - t0) / 1000000);
    publish_state();
    register_with_allocator();
    job_loop();
}

static void ignore_frame(const void *frame, size_t len, void *arg)
{
    (void)frame, (void)len, (void)arg;
}

/* A cluster node booted without a program: it idles with the CPU halted
 * until the network brings work (job loading arrives with yod). */
void node_wait_for_work(void)
{
    const uint8_t *m = netdev_mac();
    kprintf("node ready: no program given, MAC %02x:%02x:%02x:%02x:%02x:%02x, waiting for work\n",
            m[0], m[1], m[2], m[3], m[4], m[5]);
    if (ptl_kernel_available())
        node_register_and_serve();      /* returns only if Portals cannot start */
    for (;;) {
        netdev_wait(UINT64_MAX);
        netdev_poll(ignore_frame, NULL);
    }
}
