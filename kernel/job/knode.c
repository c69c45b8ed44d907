/* The kernel's own Portals endpoint (pid YOD_NODE_PID on TERN_KERNEL_IFACE):
 * registration with the allocator, job descriptors and control from yod,
 * the image served to other nodes, the rank's standard streams.  Every event
 * goes through one dispatcher, so whoever happens to be waiting (the loader,
 * a write() of the program, the timer tick) hands each event to its owner. */
#include "job.h"
#include "kmalloc.h"
#include "ptl_kernel.h"
#include "ptl_lib.h"
#include "time.h"
#include <tern/tern_proto.h>
#include <tern/yod_proto.h>
#include <tern/fio_proto.h>
#include "ptl_me.h"

#define EQ_SIZE 1024
#define CTL_BUF 16384

struct knode knode;
/* Inside knode_wait: the waiter takes the events itself.  (Taken from under
 * it, by the service hook in the library's wait, the event would be handled
 * but the waiter would sleep on to its time-out.) */
unsigned knode_waiting;

struct me_tag {
    void *buf;
};
static struct me_tag ctl_tags[2];

static int post_ctl(struct me_tag *t)
{
    ptl_me_t me = ptl_me_phys(t->buf, CTL_BUF,
                              PTL_ME_OP_PUT | PTL_ME_MANAGE_LOCAL | PTL_ME_NO_TRUNCATE |
                              PTL_ME_EVENT_LINK_DISABLE,
                              YOD_MB_CTL);
    me.min_free = sizeof(struct yod_ctl);
    ptl_handle_me_t h;
    return PtlMEAppend(knode.ni, YOD_PT_JOB, &me, PTL_PRIORITY_LIST, t, &h);
}

int knode_open(void)
{
    static const ptl_pt_index_t pts[] = {TERN_PT_SERVICE, TERN_PT_REPLY, YOD_PT_JOB,
                                         YOD_PT_IMAGE, YOD_PT_STDIN, FIO_PT_REPLY, FIO_PT_BULK};
    /* Sized for what the kernel does (a few entries per job, one load, its
     * output and file calls): the library's defaults would take half of a
     * small node's kernel heap, which the program's own NIs need. */
    ptl_ni_limits_t want = {.max_entries = 512, .max_unexpected_headers = 64, .max_mds = 256,
                            .max_cts = 8, .max_eqs = 4, .max_iovecs = 16,
                            .max_triggered_ops = 8};
    if (PtlInit() != PTL_OK ||
        PtlNIInit(TERN_KERNEL_IFACE, PTL_NI_MATCHING | PTL_NI_PHYSICAL, YOD_NODE_PID, &want, NULL,
                  &knode.ni) != PTL_OK ||
        PtlEQAlloc(knode.ni, EQ_SIZE, &knode.eq) != PTL_OK)
        return -1;
    for (unsigned i = 0; i < ARRAY_SIZE(pts); i++) {
        ptl_pt_index_t got;
        if (PtlPTAlloc(knode.ni, 0, knode.eq, pts[i], &got) != PTL_OK)
            return -1;
    }
    for (unsigned i = 0; i < ARRAY_SIZE(ctl_tags); i++) {
        ctl_tags[i] = (struct me_tag){kmalloc(CTL_BUF)};
        if (!ctl_tags[i].buf || post_ctl(&ctl_tags[i]) != PTL_OK)
            return -1;
    }
    if (job_grants_open() != PTL_OK)
        return -1;
    knode.open = true;
    return 0;
}

static void dispatch(const ptl_event_t *ev)
{
    switch (ev->type) {
    case PTL_EVENT_ACK:
    case PTL_EVENT_REPLY: {
        struct kop *op = ev->user_ptr;
        if (op) {
            op->fail = ev->ni_fail_type;
            op->mlength = ev->mlength;
            op->done = true;
        }
        return;
    }
    case PTL_EVENT_PUT: {
        void *p = ev->user_ptr;
        if (p == &ctl_tags[0] || p == &ctl_tags[1])
            job_on_ctl_put(ev);
        else if (job_is_grant_buf(p))
            job_on_grant_put(ev);
        else if (job_is_load_slot(p))
            job_on_load_put(ev);
        else if (p) {                       /* a use-once receive: a struct kop */
            struct kop *op = p;
            op->fail = ev->ni_fail_type;
            op->mlength = ev->mlength;
            op->done = true;
        }
        return;
    }
    case PTL_EVENT_AUTO_UNLINK:
        if (ev->user_ptr == &ctl_tags[0] || ev->user_ptr == &ctl_tags[1])
            post_ctl(ev->user_ptr);
        else if (job_is_grant_buf(ev->user_ptr))
            job_on_grant_put(ev);
        return;
    case PTL_EVENT_PT_DISABLED:
        /* The queue filled while nobody looked: it has been drained now. */
        PtlPTEnable(knode.ni, ev->pt_index);
        return;
    default:
        return;     /* SEND, GET (a child fetched the image), LINK, ... */
    }
}

bool knode_dispatch_pending(void)
{
    /* Nearly always nothing: a look without the progress walk a PtlEQGet
     * makes first.  Every caller has run the walk, or its wait runs it next
     * (control.c, serve_in_wait); an event that walk posts is taken at the
     * next turn. */
    if (!ptl_lib_eq_pending(knode.eq))
        return false;
    bool any = false;
    ptl_event_t ev;
    for (;;) {
        int rc = PtlEQGet(knode.eq, &ev);
        if (rc != PTL_OK && rc != PTL_EQ_DROPPED)
            return any;
        any = true;
        dispatch(&ev);
    }
}

bool knode_wait(struct kop *op, uint64_t deadline_ns)
{
    while (!op || !op->done) {
        uint64_t now = time_monotonic_ns();
        if (now >= deadline_ns)
            return false;
        uint64_t ms = (deadline_ns - now) / 1000000 + 1;
        if (ms > 1000)
            ms = 1000;      /* come back now and then: the job's clock checks run here */
        ptl_event_t ev;
        unsigned which;
        /* Atomic: with ranks per core two cores may wait here at once. */
        __atomic_add_fetch(&knode_waiting, 1, __ATOMIC_SEQ_CST);
        int rc = PtlEQPoll(&knode.eq, 1, (ptl_time_t)ms, &ev, &which);
        __atomic_sub_fetch(&knode_waiting, 1, __ATOMIC_SEQ_CST);
        bool got = rc == PTL_OK || rc == PTL_EQ_DROPPED;
        if (got)
            dispatch(&ev);
        job_service_from_wait();
        if (!op && got)
            return true;
    }
    return true;
}

int knode_take(void)
{
    int frames = ptl_kernel_poll();
    ptl_lib_progress();
    return frames;
}

void knode_answer(void) { knode_take(); }

/* Often enough that no peer takes a node busy in the kernel for a silent
 * one (yod and the allocator give up after seconds), seldom enough to cost
 * nothing against the work in between. */
#define KEEPALIVE_NS 20000000ULL

void knode_keepalive(void)
{
    static uint64_t last;
    uint64_t now = time_monotonic_ns();
    if (now - last < KEEPALIVE_NS)
        return;
    last = now;
    knode_answer();
    job_service_from_wait();
}

void knode_pause(uint64_t ns)
{
    uint64_t until = time_monotonic_ns() + ns;
    while (time_monotonic_ns() < until)
        knode_wait(NULL, until);
}

/* Puts len bytes described by mdd (contiguous, or an iovec list) and waits
 * for the acknowledgement. */
static int put_md(ptl_md_t *mdd, uint64_t len, uint32_t nid, uint32_t pid, ptl_pt_index_t pt,
                  uint64_t bits, uint64_t hdr_data, uint64_t deadline_ns)
{
    mdd->options |= PTL_MD_EVENT_SEND_DISABLE;
    mdd->eq_handle = knode.eq;
    mdd->ct_handle = PTL_CT_NONE;
    ptl_handle_md_t md;
    if (PtlMDBind(knode.ni, mdd, &md) != PTL_OK)
        return -1;
    struct kop *op = kmalloc(sizeof *op);
    if (!op) {
        PtlMDRelease(md);
        return -1;
    }
    memset(op, 0, sizeof *op);
    ptl_process_t to;
    to.phys.nid = nid;
    to.phys.pid = pid;
    if (PtlPut(md, 0, len, PTL_ACK_REQ, to, pt, bits, 0, op, hdr_data) != PTL_OK) {
        PtlMDRelease(md);
        kfree(op);
        return -1;
    }
    if (!knode_wait(op, deadline_ns)) {
        /* Still in flight: its event will yet write op, and the library
         * keeps the MD busy; both are left to it (Portals ends every
         * operation, at the latest when it gives up on the peer). */
        return -1;
    }
    int rc = op->fail;
    PtlMDRelease(md);
    kfree(op);
    return rc;
}

int knode_put(const void *buf, uint64_t len, uint32_t nid, uint32_t pid, ptl_pt_index_t pt,
              uint64_t bits, uint64_t deadline_ns)
{
    ptl_md_t mdd = {.start = (void *)buf, .length = len};
    return put_md(&mdd, len, nid, pid, pt, bits, 0, deadline_ns);
}

int knode_putv(const ptl_iovec_t *iov, unsigned niov, uint64_t len, uint32_t nid, uint32_t pid,
               ptl_pt_index_t pt, uint64_t bits, uint64_t hdr_data, uint64_t deadline_ns)
{
    ptl_md_t mdd = {.start = (void *)iov, .length = niov, .options = PTL_IOVEC};
    return put_md(&mdd, len, nid, pid, pt, bits, hdr_data, deadline_ns);
}
