/* The Portals system call (number 1024, ABI in ptl_syscall.h): the one way
 * an application reaches the kernel's Portals library.
 *
 * Nothing from the application reaches the library unchecked.  Structures
 * (MD/ME/LE, limits, operands) are copied in; every buffer they describe is
 * range-checked; outputs are checked before the call, so an object is never
 * created whose handle cannot be returned, and written back after it.
 * Arrays the library only reads during the call are range-checked and read
 * in place: the application is single-threaded and stopped while the kernel
 * runs, so they cannot change under the check.
 *
 * iovec arrays are the exception: the library keeps the pointer and reads
 * the entries whenever data moves, long after the call, when the application
 * could have rewritten them to point anywhere.  They are copied into the
 * kernel heap, checked there, and the copy lives as long as the MD or entry
 * using it (found out lazily: ptl_lib_iovec_in_use).
 *
 * Ranks per core (ranks.c): each rank has an interface of its own
 * (ptl_kernel_rank_iface: pid TERN_APP_PID + r), and every call of a rank
 * reaches that interface's handles only (ptl_lib_restrict).  The library
 * may touch a rank's buffers on any core, long after the call (a frame for
 * it arriving while another rank runs, through that rank's page tables), so
 * a rank's buffers are given to it as direct-map addresses of the rank's
 * own region (rank_kva: the whole buffer inside it, else PTL_ARG_INVALID)
 * and an event's start is turned back into the rank's address on the way
 * out (event_out).  An MD of the whole address space means nothing there
 * and is refused to ranks. */
#include "errno.h"
#include "kernel.h"
#include "kmalloc.h"
#include "msgtrace.h"
#include "netdev.h"
#include "percpu.h"
#include "portals4.h"
#include "process.h"
#include "ptl_kernel.h"
#include "ptl_lib.h"
#include <tern/ptl_syscall.h>
#include "ranks.h"
#include "reserve.h"
#include "job.h"
#include "syscall.h"
#include "thread.h"
#include "time.h"
#include "uaccess.h"
#include <tern/yod_proto.h>

#define BAD PTL_ARG_INVALID
#define IOV_MAX_COPY 65536         /* beyond any NI's max_iovecs */

typedef uint64_t ptl_args_t[TERN_PTL_MAX_ARGS];

/* ---- outputs: checked first, written after ------------------------------ */

/* A user output of `len` bytes: NULL stays NULL (the library decides what
 * that means), a bad address fails the call before anything happens. */
static bool out_prep(uint64_t uaddr, void *k, size_t len, void **arg)
{
    *arg = NULL;
    if (!uaddr)
        return true;
    if (copy_from_user(k, uaddr, len))
        return false;
    *arg = k;
    return true;
}

static void out_done(uint64_t uaddr, const void *arg, size_t len)
{
    if (arg)
        copy_to_user(uaddr, arg, len);
}

#define OUT(T, name, uaddr)                                                \
    T name##_k;                                                            \
    T *name;                                                               \
    if (!out_prep(uaddr, &name##_k, sizeof(T), (void **)&name))            \
        return BAD
#define DONE(name, uaddr) out_done(uaddr, name, sizeof *name)

static ptl_process_t proc_id(uint64_t w)
{
    ptl_process_t p;
    memcpy(&p, &w, sizeof p);
    return p;
}

static ptl_ct_event_t ct_ev(uint64_t s, uint64_t f) { return (ptl_ct_event_t){s, f}; }

/* ---- buffers -------------------------------------------------------------- */

struct iov_copy {
    struct iov_copy *next;
    ptl_iovec_t *iov;
    uint32_t handle;                /* the MD, ME or LE using it */
};
static struct iov_copy *iov_copies;
/* Each rank's PtlInit calls not yet undone (index 0: the program without
 * ranks). */
static unsigned app_init_refs[MAX_RANKS];

static bool any_init_refs(void)
{
    for (unsigned r = 0; r < MAX_RANKS; r++)
        if (app_init_refs[r])
            return true;
    return false;
}

/* The calling rank's interface (0 without ranks). */
static unsigned my_iface(void)
{
    return ranks_active() ? ptl_kernel_rank_iface(proc.index) : 0;
}

/* [va, va + len) of the calling rank, as a direct-map address (ranks per
 * core, see the top): the whole range inside the part of its region that
 * maps linearly and is mapped, or inside one piece of memory committed in a
 * reservation (a thread's stack: pthread_create maps it PROT_NONE and then
 * opens it; its memory is the rank's own, at another address), else
 * false. */
static bool rank_kva(uint64_t va, uint64_t len, void **kva)
{
    uint64_t end = va + len;
    if (end < va)
        return false;
    if (va >= proc.vbase && end <= proc.vend && user_in_region(va, end)) {
        *kva = phys_to_virt(proc.region_pa + (va - proc.vbase));
        return true;
    }
    if (proc.npieces && reserve_contiguous(va, end)) {
        *kva = phys_to_virt(reserve_phys(va));
        return true;
    }
    return false;
}

/* A buffer's start as the library is to see it: unchanged without ranks;
 * a rank's as a direct-map address (an empty one's NULL where it is not
 * the rank's memory). */
static bool lib_addr(void **start, uint64_t len)
{
    if (!ranks_active())
        return user_dma_ok((uint64_t)*start, len);
    if (len == 0) {                /* never touched: any start, as without ranks */
        if (!rank_kva((uint64_t)*start, 0, start))
            *start = NULL;
        return true;
    }
    return rank_kva((uint64_t)*start, len, start);
}

/* An event's start back in the rank's own addresses. */
static void event_out(ptl_event_t *ev, int rc)
{
    if (!ev || !ranks_active() || (rc != PTL_OK && rc != PTL_EQ_DROPPED) || !ev->start)
        return;
    uint64_t k = (uint64_t)ev->start;
    uint64_t lo = (uint64_t)phys_to_virt(proc.region_pa);
    uint64_t span = proc.vend - proc.vbase;
    /* A buffer in a piece (rank_kva) is given back at the address the
     * program gave, not at the window's alias of the same memory. */
    uint64_t piece = proc.npieces && k >= lo && k - lo < span
                         ? reserve_va_of_phys(proc.region_pa + (k - lo)) : 0;
    ev->start = piece ? (void *)piece
                : k >= lo && k - lo < span ? (void *)(proc.vbase + (k - lo)) : NULL;
}

static void iov_collect(void)
{
    /* Every rank's copies: handles of other interfaces must be found too. */
    uint32_t mask = ptl_lib_restrict(0);
    for (struct iov_copy **pp = &iov_copies; *pp;) {
        struct iov_copy *c = *pp;
        if (ptl_lib_iovec_in_use(c->handle, c->iov)) {
            pp = &c->next;
            continue;
        }
        *pp = c->next;
        kfree(c->iov);
        kfree(c);
    }
    ptl_lib_restrict(mask);
}

/* Checks the buffer [start, length) of an MD/ME/LE.  For an iovec buffer,
 * replaces *start by a checked kernel copy of the array (*copy, to be
 * released with kfree or kept with iov_keep). */
static int buffer_check(void **start, ptl_size_t length, unsigned options, ptl_iovec_t **copy)
{
    *copy = NULL;
    uint64_t s = (uint64_t)*start;
    if (!(options & PTL_IOVEC))
        return lib_addr(start, length) ? PTL_OK : BAD;
    if (length == 0)
        return PTL_OK;
    if (length > IOV_MAX_COPY || !user_ok(s, length * sizeof(ptl_iovec_t)))
        return BAD;
    iov_collect();
    ptl_iovec_t *iov = kmalloc(length * sizeof *iov);
    if (!iov)
        return PTL_NO_SPACE;
    memcpy(iov, (const void *)s, length * sizeof *iov);
    for (ptl_size_t i = 0; i < length; i++) {
        if (!lib_addr(&iov[i].iov_base, iov[i].iov_len)) {
            kfree(iov);
            return BAD;
        }
    }
    *start = iov;
    *copy = iov;
    return PTL_OK;
}

/* Keeps a copy for as long as the object made with it (handle h) lives. */
static void iov_keep(ptl_iovec_t *iov, int rc, uint32_t h)
{
    if (!iov)
        return;
    struct iov_copy *c = rc == PTL_OK ? kmalloc(sizeof *c) : NULL;
    if (!c) {
        if (rc == PTL_OK)      /* cannot track it: leak it rather than free it in use */
            kprintf("portals: no memory to track an iovec copy; %p leaked\n", (void *)iov);
        else
            kfree(iov);
        return;
    }
    *c = (struct iov_copy){iov_copies, iov, h};
    iov_copies = c;
}

/* ---- the calls with structures -------------------------------------------- */

static int md_bind(uint64_t ni, uint64_t umd, uint64_t uh)
{
    ptl_md_t md;
    if (copy_from_user(&md, umd, sizeof md))
        return BAD;
    OUT(ptl_handle_md_t, h, uh);
    ptl_iovec_t *iov = NULL;
    /* The whole address space (offsets are addresses): each operation's
     * span is checked instead (spans_ok). */
    bool whole = !(md.options & PTL_IOVEC) && !md.start && md.length == PTL_SIZE_MAX;
    if (whole && ranks_active())
        return BAD;
    int rc = whole ? PTL_OK : buffer_check(&md.start, md.length, md.options, &iov);
    if (rc != PTL_OK)
        return rc;
    rc = PtlMDBind((ptl_handle_ni_t)ni, &md, h);
    iov_keep(iov, rc, h ? *h : 0);
    DONE(h, uh);
    return rc;
}

/* ME and LE share everything but the structure's layout.  Triggered
 * appends carry the trigger counter and threshold in a[6], a[7]. */
static int entry_op(bool is_me, bool search, bool triggered, const ptl_args_t a)
{
    ptl_me_t me;
    ptl_le_t le;
    void **start;
    ptl_size_t len;
    unsigned opts;
    if (is_me) {
        if (copy_from_user(&me, a[2], sizeof me))
            return BAD;
        start = &me.start, len = me.length, opts = me.options;
    } else {
        if (copy_from_user(&le, a[2], sizeof le))
            return BAD;
        start = &le.start, len = le.length, opts = le.options;
    }
    ptl_handle_ni_t ni = (ptl_handle_ni_t)a[0];
    ptl_pt_index_t pt = (ptl_pt_index_t)a[1];
    void *user_ptr = (void *)a[4];
    if (search) {
        ptl_iovec_t *iov;
        int rc = buffer_check(start, len, opts, &iov);
        if (rc != PTL_OK)
            return rc;
        rc = is_me ? PtlMESearch(ni, pt, &me, (ptl_search_op_t)a[3], user_ptr)
                   : PtlLESearch(ni, pt, &le, (ptl_search_op_t)a[3], user_ptr);
        kfree(iov);
        return rc;
    }
    OUT(ptl_handle_me_t, h, a[5]);
    ptl_iovec_t *iov;
    int rc = buffer_check(start, len, opts, &iov);
    if (rc != PTL_OK)
        return rc;
    ptl_list_t list = (ptl_list_t)a[3];
    ptl_handle_ct_t trig = (ptl_handle_ct_t)a[6];
    if (triggered)
        rc = is_me ? PtlTriggeredMEAppend(ni, pt, &me, list, user_ptr, h, trig, a[7])
                   : PtlTriggeredLEAppend(ni, pt, &le, list, user_ptr, h, trig, a[7]);
    else
        rc = is_me ? PtlMEAppend(ni, pt, &me, list, user_ptr, h)
                   : PtlLEAppend(ni, pt, &le, list, user_ptr, h);
    iov_keep(iov, rc, h ? *h : 0);
    DONE(h, a[5]);
    return rc;
}

static int ni_init(const ptl_args_t a)
{
    ptl_ni_limits_t desired, *d = NULL;
    if (a[3]) {
        if (copy_from_user(&desired, a[3], sizeof desired))
            return BAD;
        d = &desired;
    }
    OUT(ptl_ni_limits_t, actual, a[4]);
    OUT(ptl_handle_ni_t, h, a[5]);
    ptl_interface_t iface = (ptl_interface_t)a[0];
    ptl_pid_t pid = (ptl_pid_t)a[2];
    if (ranks_active()) {
        /* A rank sees one interface, its own, as the default or 0, and
         * one pid, the one its frames are delivered by. */
        if (iface != PTL_IFACE_DEFAULT && iface != 0)
            return BAD;
        if (pid != PTL_PID_ANY && pid != TERN_APP_PID + proc.index)
            return BAD;
        iface = my_iface();
    }
    int rc = PtlNIInit(iface, (unsigned)a[1], pid, d, actual, h);
    DONE(actual, a[4]);
    DONE(h, a[5]);
    return rc;
}

/* Bytes of one element of each ptl_datatype_t: what a swap operand holds. */
static const uint8_t dt_size[PTL_DATATYPE_LAST] = {1, 1, 2, 2, 4, 4, 4, 8, 8, 8, 8, 16, 16, 32};

static int swap_op(const ptl_args_t a, bool triggered)
{
    uint8_t operand[32];
    const void *op = NULL;
    ptl_datatype_t dt = (ptl_datatype_t)a[13];
    if (a[11]) {
        if (dt >= PTL_DATATYPE_LAST || copy_from_user(operand, a[11], dt_size[dt]))
            return BAD;
        op = operand;
    }
    if (triggered)
        return PtlTriggeredSwap((ptl_handle_md_t)a[0], a[1], (ptl_handle_md_t)a[2], a[3], a[4],
                                proc_id(a[5]), (ptl_pt_index_t)a[6], a[7], a[8], (void *)a[9],
                                a[10], op, (ptl_op_t)a[12], dt, (ptl_handle_ct_t)a[14], a[15]);
    return PtlSwap((ptl_handle_md_t)a[0], a[1], (ptl_handle_md_t)a[2], a[3], a[4], proc_id(a[5]),
                   (ptl_pt_index_t)a[6], a[7], a[8], (void *)a[9], a[10], op, (ptl_op_t)a[12],
                   dt);
}

/* An array of n elements of `size` bytes the library reads or writes
 * during the call. */
static bool array_ok(uint64_t p, uint64_t n, uint64_t size)
{
    return n <= (UINT64_MAX / 2) / size && user_ok(p, n * size);
}

static int ct_poll(const ptl_args_t a)
{
    unsigned n = (unsigned)a[2];
    if (!array_ok(a[0], n, sizeof(ptl_handle_ct_t)) || !array_ok(a[1], n, sizeof(ptl_size_t)))
        return BAD;
    OUT(ptl_ct_event_t, ev, a[4]);
    OUT(unsigned, which, a[5]);
    int rc = PtlCTPoll((const ptl_handle_ct_t *)a[0], (const ptl_size_t *)a[1], n,
                       (ptl_time_t)a[3], ev, which);
    DONE(ev, a[4]);
    DONE(which, a[5]);
    return rc;
}

/* The EQ calls' outputs: checked first like any output, but written back
 * only when the call returns an event (PTL_OK, PTL_EQ_DROPPED), its start
 * the caller's own address (event_out).  A look that finds nothing leaves
 * the program's buffers as they were without a copy of them taken first
 * (OUT's way): that copy was on every message's path. */
#define EVENT_PREP(T, name, uaddr)                                         \
    T name##_k;                                                            \
    T *name = (uaddr) ? &name##_k : NULL;                                  \
    if ((uaddr) && !user_ok(uaddr, sizeof(T)))                             \
        return BAD

static bool event_given(int rc) { return rc == PTL_OK || rc == PTL_EQ_DROPPED; }

static int eq_poll(const ptl_args_t a)
{
    unsigned n = (unsigned)a[1];
    if (!array_ok(a[0], n, sizeof(ptl_handle_eq_t)))
        return BAD;
    EVENT_PREP(ptl_event_t, ev, a[3]);
    EVENT_PREP(unsigned, which, a[4]);
    int rc = PtlEQPoll((const ptl_handle_eq_t *)a[0], n, (ptl_time_t)a[2], ev, which);
    if (event_given(rc)) {
        event_out(ev, rc);
        DONE(ev, a[3]);
        DONE(which, a[4]);
    }
    return rc;
}

static int get_map(const ptl_args_t a)
{
    if (!array_ok(a[2], a[1], sizeof(ptl_process_t)))
        return BAD;
    OUT(ptl_size_t, actual, a[3]);
    int rc = PtlGetMap((ptl_handle_ni_t)a[0], a[1], (ptl_process_t *)a[2], actual);
    DONE(actual, a[3]);
    return rc;
}

/* The calls whose only pointer is one output of type T. */
#define ONE_OUT(T, uaddr, CALL)                                            \
    do {                                                                   \
        OUT(T, o, uaddr);                                                  \
        int rc_ = CALL;                                                    \
        DONE(o, uaddr);                                                    \
        return rc_;                                                        \
    } while (0)

/* Portals calls since boot, all CPUs: counted per CPU, so that ranks on
 * several cores do not share a counter's cache line on every call. */
static uint64_t calls_made(void)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < MAX_CPUS; i++)
        if (cpus[i])
            n += __atomic_load_n(&cpus[i]->ptl_calls, __ATOMIC_RELAXED);
    return n;
}

/* unode_size: the bytes of struct tern_ptl_node_stats the caller knows; 0
 * from programs built before the struct grew (their library passed two
 * arguments), which get the fields up to loop_full and no more.  ulib_size
 * likewise for struct ptl_lib_stats: 0 gets the fields up to tx_carried. */
static int stats(uint64_t ulib, uint64_t unode, uint64_t unode_size, uint64_t ulib_size)
{
    size_t node_len = unode_size ? unode_size : offsetof(struct tern_ptl_node_stats, loop_by_ref);
    if (node_len > sizeof(struct tern_ptl_node_stats))
        node_len = sizeof(struct tern_ptl_node_stats);
    size_t lib_len = ulib_size ? ulib_size : offsetof(struct ptl_lib_stats, acks_alone_time);
    if (lib_len > sizeof(struct ptl_lib_stats))
        lib_len = sizeof(struct ptl_lib_stats);
    struct ptl_lib_stats lib;
    struct tern_ptl_node_stats node;
    struct netdev_stats nd;
    struct kmem_stats km;
    if ((ulib && !user_ok(ulib, lib_len)) || (unode && !user_ok(unode, node_len)))
        return BAD;
    memset(&lib, 0, sizeof lib);
    ptl_lib_get_stats(my_iface(), &lib);
    netdev_get_stats(&nd);
    kmem_get_stats(&km);
    uint64_t loop_frames, loop_full, loop_by_ref;
    ptl_kernel_loop_stats(&loop_frames, &loop_full, &loop_by_ref);
    node = (struct tern_ptl_node_stats){nd.tx_frames, nd.tx_errors, nd.rx_frames, nd.rx_dropped,
                                        nd.interrupts, km.size, km.used, km.peak, km.fails,
                                        loop_frames, loop_full, loop_by_ref,
                                        calls_made(), nd.tx_doorbells};
    if (ulib)
        copy_to_user(ulib, &lib, lib_len);
    if (unode)
        copy_to_user(unode, &node, node_len);
    return PTL_OK;
}

/* The bytes an operation reads or writes through an MD of the whole
 * address space are its offset and length: they must be the program's
 * (and, like any buffer a NIC may be given, physically contiguous). */
static bool span_ok(uint64_t md, uint64_t off, uint64_t len)
{
    return !ptl_lib_md_whole((ptl_handle_md_t)md) || user_dma_ok(off, len);
}

static bool spans_ok(uint64_t op, const ptl_args_t a)
{
    switch (op) {
    case TPO_PUT: case TPO_GET: case TPO_ATOMIC:
    case TPO_TRIG_PUT: case TPO_TRIG_GET: case TPO_TRIG_ATOMIC:
        return span_ok(a[0], a[1], a[2]);
    case TPO_FETCH_ATOMIC: case TPO_SWAP: case TPO_TRIG_FETCH_ATOMIC: case TPO_TRIG_SWAP:
        return span_ok(a[0], a[1], a[4]) && span_ok(a[2], a[3], a[4]);
    default:
        return true;
    }
}

/* ---- one handler per operation -------------------------------------------- */

#define TPO(name) static int tpo_##name(const ptl_args_t a)

TPO(nop) { (void)a; return PTL_OK; }
TPO(stats) { return stats(a[0], a[1], a[2], a[3]); }

TPO(init)
{
    (void)a;
    bool have_iface = my_iface() < TERN_PTL_IFACES;    /* ranks past 30 have none */
    int rc = ptl_kernel_available() && have_iface ? PtlInit() : PTL_FAIL;
    if (rc == PTL_OK)
        app_init_refs[proc.index]++;
    return rc;
}

TPO(fini)
{
    (void)a;
    /* Only the program's own references: the kernel keeps its NI. */
    unsigned *refs = &app_init_refs[proc.index];
    if (*refs) {
        if (--*refs == 0) {
            ptl_lib_iface_reset(my_iface());
            if (!any_init_refs())      /* other ranks' frames may be in the ring */
                ptl_kernel_loop_discard();
        }
        PtlFini();
    }
    iov_collect();
    return PTL_OK;
}

TPO(ni_init) { return ni_init(a); }

TPO(ni_fini)
{
    int rc = PtlNIFini((ptl_handle_ni_t)a[0]);
    iov_collect();
    return rc;
}

TPO(ni_status)
{
    ONE_OUT(ptl_sr_value_t, a[2], PtlNIStatus((ptl_handle_ni_t)a[0], (ptl_sr_index_t)a[1], o));
}
TPO(ni_handle) { ONE_OUT(ptl_handle_ni_t, a[1], PtlNIHandle((ptl_handle_any_t)a[0], o)); }

TPO(set_map)
{
    if (!array_ok(a[2], a[1], sizeof(ptl_process_t)))
        return BAD;
    return PtlSetMap((ptl_handle_ni_t)a[0], a[1], (const ptl_process_t *)a[2]);
}
TPO(get_map) { return get_map(a); }

TPO(pt_alloc)
{
    ONE_OUT(ptl_pt_index_t, a[4],
            PtlPTAlloc((ptl_handle_ni_t)a[0], (unsigned)a[1], (ptl_handle_eq_t)a[2],
                       (ptl_pt_index_t)a[3], o));
}
TPO(pt_free) { return PtlPTFree((ptl_handle_ni_t)a[0], (ptl_pt_index_t)a[1]); }
TPO(pt_disable) { return PtlPTDisable((ptl_handle_ni_t)a[0], (ptl_pt_index_t)a[1]); }
TPO(pt_enable) { return PtlPTEnable((ptl_handle_ni_t)a[0], (ptl_pt_index_t)a[1]); }
TPO(get_uid) { ONE_OUT(ptl_uid_t, a[1], PtlGetUid((ptl_handle_ni_t)a[0], o)); }
TPO(get_id) { ONE_OUT(ptl_process_t, a[1], PtlGetId((ptl_handle_ni_t)a[0], o)); }
TPO(get_phys_id) { ONE_OUT(ptl_process_t, a[1], PtlGetPhysId((ptl_handle_ni_t)a[0], o)); }

TPO(md_bind) { return md_bind(a[0], a[1], a[2]); }
TPO(md_release) { return PtlMDRelease((ptl_handle_md_t)a[0]); }
TPO(le_append) { return entry_op(false, false, false, a); }
TPO(le_unlink) { return PtlLEUnlink((ptl_handle_le_t)a[0]); }
TPO(le_search) { return entry_op(false, true, false, a); }
TPO(me_append) { return entry_op(true, false, false, a); }
TPO(me_unlink) { return PtlMEUnlink((ptl_handle_me_t)a[0]); }
TPO(me_search) { return entry_op(true, true, false, a); }

TPO(ct_alloc) { ONE_OUT(ptl_handle_ct_t, a[1], PtlCTAlloc((ptl_handle_ni_t)a[0], o)); }
TPO(ct_free) { return PtlCTFree((ptl_handle_ct_t)a[0]); }
TPO(ct_cancel) { return PtlCTCancelTriggered((ptl_handle_ct_t)a[0]); }
TPO(ct_get) { ONE_OUT(ptl_ct_event_t, a[1], PtlCTGet((ptl_handle_ct_t)a[0], o)); }
TPO(ct_wait) { ONE_OUT(ptl_ct_event_t, a[2], PtlCTWait((ptl_handle_ct_t)a[0], a[1], o)); }
TPO(ct_poll) { return ct_poll(a); }
TPO(ct_set) { return PtlCTSet((ptl_handle_ct_t)a[0], ct_ev(a[1], a[2])); }
TPO(ct_inc) { return PtlCTInc((ptl_handle_ct_t)a[0], ct_ev(a[1], a[2])); }

TPO(put)
{
    return PtlPut((ptl_handle_md_t)a[0], a[1], a[2], (ptl_ack_req_t)a[3], proc_id(a[4]),
                  (ptl_pt_index_t)a[5], a[6], a[7], (void *)a[8], a[9]);
}

TPO(get)
{
    return PtlGet((ptl_handle_md_t)a[0], a[1], a[2], proc_id(a[3]), (ptl_pt_index_t)a[4], a[5],
                  a[6], (void *)a[7]);
}

TPO(atomic)
{
    return PtlAtomic((ptl_handle_md_t)a[0], a[1], a[2], (ptl_ack_req_t)a[3], proc_id(a[4]),
                     (ptl_pt_index_t)a[5], a[6], a[7], (void *)a[8], a[9], (ptl_op_t)a[10],
                     (ptl_datatype_t)a[11]);
}

TPO(fetch_atomic)
{
    return PtlFetchAtomic((ptl_handle_md_t)a[0], a[1], (ptl_handle_md_t)a[2], a[3], a[4],
                          proc_id(a[5]), (ptl_pt_index_t)a[6], a[7], a[8], (void *)a[9], a[10],
                          (ptl_op_t)a[11], (ptl_datatype_t)a[12]);
}

TPO(swap) { return swap_op(a, false); }
TPO(atomic_sync) { (void)a; return PtlAtomicSync(); }

TPO(eq_alloc) { ONE_OUT(ptl_handle_eq_t, a[2], PtlEQAlloc((ptl_handle_ni_t)a[0], a[1], o)); }
TPO(eq_free) { return PtlEQFree((ptl_handle_eq_t)a[0]); }
/* An event out (eq_poll's way). */
#define EVENT_OUT(uaddr, CALL)                                             \
    do {                                                                   \
        EVENT_PREP(ptl_event_t, o, uaddr);                                 \
        int rc_ = CALL;                                                    \
        if (event_given(rc_)) {                                            \
            event_out(o, rc_);                                             \
            DONE(o, uaddr);                                                \
        }                                                                  \
        return rc_;                                                        \
    } while (0)

TPO(eq_get) { EVENT_OUT(a[1], PtlEQGet((ptl_handle_eq_t)a[0], o)); }
TPO(eq_wait) { EVENT_OUT(a[1], PtlEQWait((ptl_handle_eq_t)a[0], o)); }
TPO(eq_poll) { return eq_poll(a); }

TPO(trig_put)
{
    return PtlTriggeredPut((ptl_handle_md_t)a[0], a[1], a[2], (ptl_ack_req_t)a[3], proc_id(a[4]),
                           (ptl_pt_index_t)a[5], a[6], a[7], (void *)a[8], a[9],
                           (ptl_handle_ct_t)a[10], a[11]);
}

TPO(trig_get)
{
    return PtlTriggeredGet((ptl_handle_md_t)a[0], a[1], a[2], proc_id(a[3]), (ptl_pt_index_t)a[4],
                           a[5], a[6], (void *)a[7], (ptl_handle_ct_t)a[8], a[9]);
}

TPO(trig_atomic)
{
    return PtlTriggeredAtomic((ptl_handle_md_t)a[0], a[1], a[2], (ptl_ack_req_t)a[3],
                              proc_id(a[4]), (ptl_pt_index_t)a[5], a[6], a[7], (void *)a[8],
                              a[9], (ptl_op_t)a[10], (ptl_datatype_t)a[11],
                              (ptl_handle_ct_t)a[12], a[13]);
}

TPO(trig_fetch_atomic)
{
    return PtlTriggeredFetchAtomic((ptl_handle_md_t)a[0], a[1], (ptl_handle_md_t)a[2], a[3], a[4],
                                   proc_id(a[5]), (ptl_pt_index_t)a[6], a[7], a[8], (void *)a[9],
                                   a[10], (ptl_op_t)a[11], (ptl_datatype_t)a[12],
                                   (ptl_handle_ct_t)a[13], a[14]);
}

TPO(trig_swap) { return swap_op(a, true); }

TPO(trig_ct_inc)
{
    return PtlTriggeredCTInc((ptl_handle_ct_t)a[0], ct_ev(a[1], a[2]), (ptl_handle_ct_t)a[3],
                             a[4]);
}

TPO(trig_ct_set)
{
    return PtlTriggeredCTSet((ptl_handle_ct_t)a[0], ct_ev(a[1], a[2]), (ptl_handle_ct_t)a[3],
                             a[4]);
}

TPO(trig_me_append) { return entry_op(true, false, true, a); }
TPO(trig_le_append) { return entry_op(false, false, true, a); }

TPO(trig_me_unlink)
{
    return PtlTriggeredMEUnlink((ptl_handle_me_t)a[0], (ptl_handle_ct_t)a[1], a[2]);
}

TPO(trig_le_unlink)
{
    return PtlTriggeredLEUnlink((ptl_handle_le_t)a[0], (ptl_handle_ct_t)a[1], a[2]);
}

TPO(abort) { (void)a; return PtlAbort(); }

TPO(trace)
{
    if (!msgtrace_built())
        return PTL_FAIL;
    switch (a[0]) {
    case TERN_TRACE_START: return msgtrace_start() ? PTL_OK : PTL_NO_SPACE;
    case TERN_TRACE_STOP: msgtrace_stop(); return PTL_OK;
    case TERN_TRACE_MARK: msgtrace_mark((unsigned)a[1], a[2]); return PTL_OK;
    case TERN_TRACE_READ: {
        size_t max = a[3] < MSGTRACE_ENTRIES ? (size_t)a[3] : MSGTRACE_ENTRIES;   /* an int */
        struct tern_trace_info info = {time_tsc_hz(), 0, MSGTRACE_CPUS};
        if (!user_ok(a[2], max * sizeof(uint64_t)) || !user_ok(a[4], sizeof info))
            return BAD;
        size_t n = msgtrace_read((unsigned)a[1], (uint64_t *)a[2], max, &info.total);
        copy_to_user(a[4], &info, sizeof info);
        return (int)n;
    }
    default: return BAD;
    }
}
TPO(start_bundle) { return PtlStartBundle((ptl_handle_ni_t)a[0]); }
TPO(end_bundle) { return PtlEndBundle((ptl_handle_ni_t)a[0]); }
TPO(handle_is_equal) { return PtlHandleIsEqual((ptl_handle_any_t)a[0], (ptl_handle_any_t)a[1]); }

static int (*const calls[TPO_LAST])(const ptl_args_t) = {
    [TPO_NOP] = tpo_nop, [TPO_STATS] = tpo_stats,
    [TPO_INIT] = tpo_init, [TPO_FINI] = tpo_fini,
    [TPO_NI_INIT] = tpo_ni_init, [TPO_NI_FINI] = tpo_ni_fini,
    [TPO_NI_STATUS] = tpo_ni_status, [TPO_NI_HANDLE] = tpo_ni_handle,
    [TPO_SET_MAP] = tpo_set_map, [TPO_GET_MAP] = tpo_get_map,
    [TPO_PT_ALLOC] = tpo_pt_alloc, [TPO_PT_FREE] = tpo_pt_free,
    [TPO_PT_DISABLE] = tpo_pt_disable, [TPO_PT_ENABLE] = tpo_pt_enable,
    [TPO_GET_UID] = tpo_get_uid, [TPO_GET_ID] = tpo_get_id, [TPO_GET_PHYS_ID] = tpo_get_phys_id,
    [TPO_MD_BIND] = tpo_md_bind, [TPO_MD_RELEASE] = tpo_md_release,
    [TPO_LE_APPEND] = tpo_le_append, [TPO_LE_UNLINK] = tpo_le_unlink,
    [TPO_LE_SEARCH] = tpo_le_search, [TPO_ME_APPEND] = tpo_me_append,
    [TPO_ME_UNLINK] = tpo_me_unlink, [TPO_ME_SEARCH] = tpo_me_search,
    [TPO_CT_ALLOC] = tpo_ct_alloc, [TPO_CT_FREE] = tpo_ct_free, [TPO_CT_CANCEL] = tpo_ct_cancel,
    [TPO_CT_GET] = tpo_ct_get, [TPO_CT_WAIT] = tpo_ct_wait, [TPO_CT_POLL] = tpo_ct_poll,
    [TPO_CT_SET] = tpo_ct_set, [TPO_CT_INC] = tpo_ct_inc,
    [TPO_PUT] = tpo_put, [TPO_GET] = tpo_get, [TPO_ATOMIC] = tpo_atomic,
    [TPO_FETCH_ATOMIC] = tpo_fetch_atomic, [TPO_SWAP] = tpo_swap,
    [TPO_ATOMIC_SYNC] = tpo_atomic_sync,
    [TPO_EQ_ALLOC] = tpo_eq_alloc, [TPO_EQ_FREE] = tpo_eq_free, [TPO_EQ_GET] = tpo_eq_get,
    [TPO_EQ_WAIT] = tpo_eq_wait, [TPO_EQ_POLL] = tpo_eq_poll,
    [TPO_TRIG_PUT] = tpo_trig_put, [TPO_TRIG_GET] = tpo_trig_get,
    [TPO_TRIG_ATOMIC] = tpo_trig_atomic, [TPO_TRIG_FETCH_ATOMIC] = tpo_trig_fetch_atomic,
    [TPO_TRIG_SWAP] = tpo_trig_swap, [TPO_TRIG_CT_INC] = tpo_trig_ct_inc,
    [TPO_TRIG_CT_SET] = tpo_trig_ct_set,
    [TPO_TRIG_ME_APPEND] = tpo_trig_me_append, [TPO_TRIG_LE_APPEND] = tpo_trig_le_append,
    [TPO_TRIG_ME_UNLINK] = tpo_trig_me_unlink, [TPO_TRIG_LE_UNLINK] = tpo_trig_le_unlink,
    [TPO_ABORT] = tpo_abort, [TPO_TRACE] = tpo_trace,
    [TPO_START_BUNDLE] = tpo_start_bundle, [TPO_END_BUNDLE] = tpo_end_bundle,
    [TPO_HANDLE_IS_EQUAL] = tpo_handle_is_equal,
};

static int dispatch(uint64_t op, const ptl_args_t a)
{
    if (op >= TPO_LAST || !calls[op])
        return -EINVAL;
    return spans_ok(op, a) ? calls[op](a) : BAD;
}

void portals_syscall_reset(void)
{
    msgtrace_stop();               /* a program ending with the trace on: off for the next */
    portals_spin_reset();
    for (unsigned r = 0; r < MAX_RANKS; r++)
        for (; app_init_refs[r]; app_init_refs[r]--)
            PtlFini();
    iov_collect();
}

SYSCALL(tern_portals)
{
    UNUSED_ARGS();
    if (a0 == 0 || a0 >= TPO_LAST)
        return -EINVAL;
    this_cpu()->ptl_calls++;
    ptl_args_t a;
    if (copy_from_user(a, a1, sizeof a))
        return -EFAULT;
    bool put = a0 == TPO_PUT;
    bool looks = a0 == TPO_EQ_WAIT || a0 == TPO_EQ_POLL || a0 == TPO_EQ_GET;
    if (put)
        PTL_TRACE(TP_SYS_PUT);
    else if (looks && a0 != TPO_EQ_GET)    /* a spinning PtlEQGet would fill the ring */
        PTL_TRACE(TP_SYS_WAIT);
    /* What arrived goes to the library on every call (host.c), for a put
     * once its frame is out: the look is then off the message's path. */
    if (a0 != TPO_NOP && a0 != TPO_TRACE && !put)
        ptl_kernel_poll();
    /* The program reaches its own interface only (0; a rank's its rank's):
     * the kernel's own NI (job control, interface TERN_KERNEL_IFACE) and
     * other ranks' are invisible to it. */
    unsigned iface = my_iface();
    if (iface >= TERN_PTL_IFACES)
        return a0 == TPO_INIT ? PTL_FAIL : PTL_NO_INIT;
    ptl_lib_restrict(1u << iface);
    struct thread *t = thread_current();
    bool waits = a0 == TPO_EQ_WAIT || a0 == TPO_EQ_POLL || a0 == TPO_CT_WAIT || a0 == TPO_CT_POLL;
    /* Its halts let the serial lock go (portals/host.c).  A rank's, in any
     * call: a put waiting for room may wait for what another rank of the
     * node has to do first, in a call of its own. */
    if (t && (waits || ranks_active()))
        t->portals_wait = true;
    int rc = dispatch(a0, a);
    if (put) {
        ptl_kernel_poll();
        PTL_TRACE(TP_SYS_PUT_EXIT);
    } else if (looks && rc == PTL_OK) {
        PTL_TRACE(TP_SYS_WAIT_EXIT);
    }
    /* A rank spinning on empty looks halts there too: with the serial lock
     * let go, or the other ranks' calls would wait out its nap (set above). */
    portals_spin_after(a0, a, rc);
    if (t)
        t->portals_wait = false;
    ptl_lib_restrict(0);
    /* The program may compute from here on without a call: the job's tick
     * comes back for the acknowledgements the library delays (the ACK held
     * for the program's answer, an ack owed), on the grain its other
     * timers use, so that in a ping-pong, where the answer takes the ACK,
     * the timer is usually set for that time already (ptl_lib.h).  Before,
     * the ACK waited for the program's next call and the sender's
     * retransmission timer sent its frame again (tests/test_nx_tern.py, a
     * computing receiver). */
    uint64_t due = ptl_lib_acks_due_by();
    if (due != UINT64_MAX)
        time_user_tick_by(due);
    return rc;
}
