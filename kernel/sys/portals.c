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
 * using it (found out lazily through the library's handle tables). */
#include "errno.h"
#include "kernel.h"
#include "kmalloc.h"
#include "netdev.h"
#include "ptl_internal.h"
#include "ptl_kernel.h"
#include "ptl_syscall.h"
#include "job.h"
#include "syscall.h"
#include "uaccess.h"

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
    bool is_md, is_me;
    unsigned ni, ni_gen, idx, gen;
};
static struct iov_copy *iov_copies;
static unsigned app_init_refs;      /* the program's PtlInit calls not yet undone */

static bool iov_in_use(const struct iov_copy *c)
{
    if (!ptl_api_ready())
        return false;
    struct ptl_ni *ni = &ptl_g.nis[c->ni];
    if (!ni->in_use || ni->gen != c->ni_gen)
        return false;
    if (c->is_md) {
        struct ptl_md *m = &ni->mds[c->idx];
        return m->o.in_use && m->o.gen == c->gen && m->r.iov == c->iov;
    }
    struct ptl_entry *e = &ni->entries[c->idx];
    return e->o.in_use && e->o.gen == c->gen && e->is_me == c->is_me && e->r.iov == c->iov;
}

static void iov_collect(void)
{
    for (struct iov_copy **pp = &iov_copies; *pp;) {
        struct iov_copy *c = *pp;
        if (iov_in_use(c)) {
            pp = &c->next;
            continue;
        }
        *pp = c->next;
        kfree(c->iov);
        kfree(c);
    }
}

/* Checks the buffer [start, length) of an MD/ME/LE.  For an iovec buffer,
 * replaces *start by a checked kernel copy of the array (*copy, to be
 * released with kfree or kept with iov_keep). */
static int buffer_check(void **start, ptl_size_t length, unsigned options, ptl_iovec_t **copy)
{
    *copy = NULL;
    uint64_t s = (uint64_t)*start;
    if (!(options & PTL_IOVEC))
        return user_ok(s, length) ? PTL_OK : BAD;
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
        if (!user_ok((uint64_t)iov[i].iov_base, iov[i].iov_len)) {
            kfree(iov);
            return BAD;
        }
    }
    *start = iov;
    *copy = iov;
    return PTL_OK;
}

/* Keeps a copy for as long as the object made with it (handle h) lives. */
static void iov_keep(ptl_iovec_t *iov, int rc, uint32_t h, bool is_md, bool is_me)
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
    *c = (struct iov_copy){iov_copies, iov, is_md, is_me, PTL_H_NI(h),
                           ptl_g.nis[PTL_H_NI(h)].gen, PTL_H_IDX(h), PTL_H_GEN(h)};
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
    int rc = whole ? PTL_OK : buffer_check(&md.start, md.length, md.options, &iov);
    if (rc != PTL_OK)
        return rc;
    rc = PtlMDBind((ptl_handle_ni_t)ni, &md, h);
    iov_keep(iov, rc, h ? *h : 0, true, false);
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
    iov_keep(iov, rc, h ? *h : 0, false, is_me);
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
    int rc = PtlNIInit((ptl_interface_t)a[0], (unsigned)a[1], (ptl_pid_t)a[2], d, actual, h);
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

static int eq_poll(const ptl_args_t a)
{
    unsigned n = (unsigned)a[1];
    if (!array_ok(a[0], n, sizeof(ptl_handle_eq_t)))
        return BAD;
    OUT(ptl_event_t, ev, a[3]);
    OUT(unsigned, which, a[4]);
    int rc = PtlEQPoll((const ptl_handle_eq_t *)a[0], n, (ptl_time_t)a[2], ev, which);
    DONE(ev, a[3]);
    DONE(which, a[4]);
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

static int stats(uint64_t ulib, uint64_t unode)
{
    struct ptl_lib_stats lib;
    struct tern_ptl_node_stats node;
    struct netdev_stats nd;
    struct kmem_stats km;
    if ((ulib && !user_ok(ulib, sizeof lib)) || (unode && !user_ok(unode, sizeof node)))
        return BAD;
    memset(&lib, 0, sizeof lib);
    ptl_lib_get_stats(0, &lib);
    netdev_get_stats(&nd);
    kmem_get_stats(&km);
    uint64_t loop_frames, loop_full;
    ptl_kernel_loop_stats(&loop_frames, &loop_full);
    node = (struct tern_ptl_node_stats){nd.tx_frames, nd.tx_errors, nd.rx_frames, nd.rx_dropped,
                                        nd.interrupts, km.size, km.used, km.peak, km.fails,
                                        loop_frames, loop_full};
    if (ulib)
        copy_to_user(ulib, &lib, sizeof lib);
    if (unode)
        copy_to_user(unode, &node, sizeof node);
    return PTL_OK;
}

/* The bytes an operation reads or writes through an MD of the whole
 * address space are its offset and length: they must be the program's. */
static bool span_ok(uint64_t md, uint64_t off, uint64_t len)
{
    return !ptl_lib_md_whole((ptl_handle_md_t)md) || user_ok(off, len);
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

static int dispatch(uint64_t op, const ptl_args_t a)
{
    if (!spans_ok(op, a))
        return BAD;
    switch (op) {
    case TPO_NOP: return PTL_OK;
    case TPO_STATS: return stats(a[0], a[1]);
    case TPO_INIT: {
        int rc = ptl_kernel_available() ? PtlInit() : PTL_FAIL;
        if (rc == PTL_OK)
            app_init_refs++;
        return rc;
    }
    case TPO_FINI:
        /* Only the program's own references: the kernel keeps its NI. */
        if (app_init_refs) {
            if (--app_init_refs == 0) {
                ptl_lib_iface_reset(0);
                ptl_kernel_loop_discard();
            }
            PtlFini();
        }
        iov_collect();
        return PTL_OK;
    case TPO_NI_INIT: return ni_init(a);
    case TPO_NI_FINI: {
        int rc = PtlNIFini((ptl_handle_ni_t)a[0]);
        iov_collect();
        return rc;
    }
    case TPO_NI_STATUS:
        ONE_OUT(ptl_sr_value_t, a[2], PtlNIStatus((ptl_handle_ni_t)a[0], (ptl_sr_index_t)a[1], o));
    case TPO_NI_HANDLE: ONE_OUT(ptl_handle_ni_t, a[1], PtlNIHandle((ptl_handle_any_t)a[0], o));
    case TPO_SET_MAP:
        if (!array_ok(a[2], a[1], sizeof(ptl_process_t)))
            return BAD;
        return PtlSetMap((ptl_handle_ni_t)a[0], a[1], (const ptl_process_t *)a[2]);
    case TPO_GET_MAP: return get_map(a);
    case TPO_PT_ALLOC:
        ONE_OUT(ptl_pt_index_t, a[4],
                PtlPTAlloc((ptl_handle_ni_t)a[0], (unsigned)a[1], (ptl_handle_eq_t)a[2],
                           (ptl_pt_index_t)a[3], o));
    case TPO_PT_FREE: return PtlPTFree((ptl_handle_ni_t)a[0], (ptl_pt_index_t)a[1]);
    case TPO_PT_DISABLE: return PtlPTDisable((ptl_handle_ni_t)a[0], (ptl_pt_index_t)a[1]);
    case TPO_PT_ENABLE: return PtlPTEnable((ptl_handle_ni_t)a[0], (ptl_pt_index_t)a[1]);
    case TPO_GET_UID: ONE_OUT(ptl_uid_t, a[1], PtlGetUid((ptl_handle_ni_t)a[0], o));
    case TPO_GET_ID: ONE_OUT(ptl_process_t, a[1], PtlGetId((ptl_handle_ni_t)a[0], o));
    case TPO_GET_PHYS_ID: ONE_OUT(ptl_process_t, a[1], PtlGetPhysId((ptl_handle_ni_t)a[0], o));
    case TPO_MD_BIND: return md_bind(a[0], a[1], a[2]);
    case TPO_MD_RELEASE: return PtlMDRelease((ptl_handle_md_t)a[0]);
    case TPO_LE_APPEND: return entry_op(false, false, false, a);
    case TPO_LE_UNLINK: return PtlLEUnlink((ptl_handle_le_t)a[0]);
    case TPO_LE_SEARCH: return entry_op(false, true, false, a);
    case TPO_ME_APPEND: return entry_op(true, false, false, a);
    case TPO_ME_UNLINK: return PtlMEUnlink((ptl_handle_me_t)a[0]);
    case TPO_ME_SEARCH: return entry_op(true, true, false, a);
    case TPO_CT_ALLOC: ONE_OUT(ptl_handle_ct_t, a[1], PtlCTAlloc((ptl_handle_ni_t)a[0], o));
    case TPO_CT_FREE: return PtlCTFree((ptl_handle_ct_t)a[0]);
    case TPO_CT_CANCEL: return PtlCTCancelTriggered((ptl_handle_ct_t)a[0]);
    case TPO_CT_GET: ONE_OUT(ptl_ct_event_t, a[1], PtlCTGet((ptl_handle_ct_t)a[0], o));
    case TPO_CT_WAIT: ONE_OUT(ptl_ct_event_t, a[2], PtlCTWait((ptl_handle_ct_t)a[0], a[1], o));
    case TPO_CT_POLL: return ct_poll(a);
    case TPO_CT_SET: return PtlCTSet((ptl_handle_ct_t)a[0], ct_ev(a[1], a[2]));
    case TPO_CT_INC: return PtlCTInc((ptl_handle_ct_t)a[0], ct_ev(a[1], a[2]));
    case TPO_PUT:
        return PtlPut((ptl_handle_md_t)a[0], a[1], a[2], (ptl_ack_req_t)a[3], proc_id(a[4]),
                      (ptl_pt_index_t)a[5], a[6], a[7], (void *)a[8], a[9]);
    case TPO_GET:
        return PtlGet((ptl_handle_md_t)a[0], a[1], a[2], proc_id(a[3]), (ptl_pt_index_t)a[4],
                      a[5], a[6], (void *)a[7]);
    case TPO_ATOMIC:
        return PtlAtomic((ptl_handle_md_t)a[0], a[1], a[2], (ptl_ack_req_t)a[3], proc_id(a[4]),
                         (ptl_pt_index_t)a[5], a[6], a[7], (void *)a[8], a[9], (ptl_op_t)a[10],
                         (ptl_datatype_t)a[11]);
    case TPO_FETCH_ATOMIC:
        return PtlFetchAtomic((ptl_handle_md_t)a[0], a[1], (ptl_handle_md_t)a[2], a[3], a[4],
                              proc_id(a[5]), (ptl_pt_index_t)a[6], a[7], a[8], (void *)a[9],
                              a[10], (ptl_op_t)a[11], (ptl_datatype_t)a[12]);
    case TPO_SWAP: return swap_op(a, false);
    case TPO_ATOMIC_SYNC: return PtlAtomicSync();
    case TPO_EQ_ALLOC: ONE_OUT(ptl_handle_eq_t, a[2], PtlEQAlloc((ptl_handle_ni_t)a[0], a[1], o));
    case TPO_EQ_FREE: return PtlEQFree((ptl_handle_eq_t)a[0]);
    case TPO_EQ_GET: ONE_OUT(ptl_event_t, a[1], PtlEQGet((ptl_handle_eq_t)a[0], o));
    case TPO_EQ_WAIT: ONE_OUT(ptl_event_t, a[1], PtlEQWait((ptl_handle_eq_t)a[0], o));
    case TPO_EQ_POLL: return eq_poll(a);
    case TPO_TRIG_PUT:
        return PtlTriggeredPut((ptl_handle_md_t)a[0], a[1], a[2], (ptl_ack_req_t)a[3],
                               proc_id(a[4]), (ptl_pt_index_t)a[5], a[6], a[7], (void *)a[8],
                               a[9], (ptl_handle_ct_t)a[10], a[11]);
    case TPO_TRIG_GET:
        return PtlTriggeredGet((ptl_handle_md_t)a[0], a[1], a[2], proc_id(a[3]),
                               (ptl_pt_index_t)a[4], a[5], a[6], (void *)a[7],
                               (ptl_handle_ct_t)a[8], a[9]);
    case TPO_TRIG_ATOMIC:
        return PtlTriggeredAtomic((ptl_handle_md_t)a[0], a[1], a[2], (ptl_ack_req_t)a[3],
                                  proc_id(a[4]), (ptl_pt_index_t)a[5], a[6], a[7], (void *)a[8],
                                  a[9], (ptl_op_t)a[10], (ptl_datatype_t)a[11],
                                  (ptl_handle_ct_t)a[12], a[13]);
    case TPO_TRIG_FETCH_ATOMIC:
        return PtlTriggeredFetchAtomic((ptl_handle_md_t)a[0], a[1], (ptl_handle_md_t)a[2], a[3],
                                       a[4], proc_id(a[5]), (ptl_pt_index_t)a[6], a[7], a[8],
                                       (void *)a[9], a[10], (ptl_op_t)a[11],
                                       (ptl_datatype_t)a[12], (ptl_handle_ct_t)a[13], a[14]);
    case TPO_TRIG_SWAP: return swap_op(a, true);
    case TPO_TRIG_CT_INC:
        return PtlTriggeredCTInc((ptl_handle_ct_t)a[0], ct_ev(a[1], a[2]), (ptl_handle_ct_t)a[3],
                                 a[4]);
    case TPO_TRIG_CT_SET:
        return PtlTriggeredCTSet((ptl_handle_ct_t)a[0], ct_ev(a[1], a[2]), (ptl_handle_ct_t)a[3],
                                 a[4]);
    case TPO_TRIG_ME_APPEND: return entry_op(true, false, true, a);
    case TPO_TRIG_LE_APPEND: return entry_op(false, false, true, a);
    case TPO_TRIG_ME_UNLINK:
        return PtlTriggeredMEUnlink((ptl_handle_me_t)a[0], (ptl_handle_ct_t)a[1], a[2]);
    case TPO_TRIG_LE_UNLINK:
        return PtlTriggeredLEUnlink((ptl_handle_le_t)a[0], (ptl_handle_ct_t)a[1], a[2]);
    case TPO_ABORT: return PtlAbort();
    case TPO_START_BUNDLE: return PtlStartBundle((ptl_handle_ni_t)a[0]);
    case TPO_END_BUNDLE: return PtlEndBundle((ptl_handle_ni_t)a[0]);
    case TPO_HANDLE_IS_EQUAL:
        return PtlHandleIsEqual((ptl_handle_any_t)a[0], (ptl_handle_any_t)a[1]);
    }
    return -EINVAL;
}

void portals_syscall_reset(void)
{
    for (; app_init_refs; app_init_refs--)
        PtlFini();
    iov_collect();
}

SYSCALL(tern_portals)
{
    UNUSED_ARGS();
    if (a0 == 0 || a0 >= TPO_LAST)
        return -EINVAL;
    ptl_args_t a;
    if (copy_from_user(a, a1, sizeof a))
        return -EFAULT;
    if (a0 != TPO_NOP)
        ptl_kernel_poll();
    /* The program reaches interface 0 only: the kernel's own NI (job
     * control, interface TERN_KERNEL_IFACE) is invisible to it. */
    ptl_lib_restrict(1u << 0);
    int rc = dispatch(a0, a);
    ptl_lib_restrict(0);
    return rc;
}
