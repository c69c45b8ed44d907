/* Portals 4 for programs on a Tern compute node: every Ptl* function packs
 * its arguments into one array and makes the tern_portals system call; the
 * library itself runs in the kernel (docs/portals.md).  No C library calls,
 * so the same archive links with musl and with glibc. */
#include <stdint.h>
#include "portals4.h"
#include "ptl_lib.h"
#include "ptl_tern.h"
#include "../../../include/tern/ptl_syscall.h"

typedef uint64_t u64;

static int call(long op, const u64 *args)
{
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"((long)TERN_SYS_PORTALS), "D"(op), "S"(args)
                     : "rcx", "r11", "memory");
    /* -EFAULT/-EINVAL: the argument block itself was bad; -ENOSYS: not a
     * Tern kernel. */
    if (ret < 0)
        return ret == -38 ? PTL_FAIL : PTL_ARG_INVALID;
    return (int)ret;
}

/* Up to 16 arguments widened to 64 bits, in order. */
#define CALL(op, ...) call(op, (const u64[TERN_PTL_MAX_ARGS]){__VA_ARGS__})
#define P(x) ((u64)(uintptr_t)(x))

static u64 id(ptl_process_t p)
{
    u64 w = 0;
    __builtin_memcpy(&w, &p, sizeof p);
    return w;
}

int PtlInit(void) { return CALL(TPO_INIT, 0); }
void PtlFini(void) { CALL(TPO_FINI, 0); }
int PtlNIInit(ptl_interface_t iface, unsigned int options, ptl_pid_t pid,
              const ptl_ni_limits_t *desired, ptl_ni_limits_t *actual, ptl_handle_ni_t *ni)
{
    return CALL(TPO_NI_INIT, iface, options, pid, P(desired), P(actual), P(ni));
}
int PtlNIFini(ptl_handle_ni_t ni) { return CALL(TPO_NI_FINI, ni); }
int PtlNIStatus(ptl_handle_ni_t ni, ptl_sr_index_t reg, ptl_sr_value_t *status)
{
    return CALL(TPO_NI_STATUS, ni, reg, P(status));
}
int PtlNIHandle(ptl_handle_any_t h, ptl_handle_ni_t *ni) { return CALL(TPO_NI_HANDLE, h, P(ni)); }
int PtlSetMap(ptl_handle_ni_t ni, ptl_size_t size, const ptl_process_t *map)
{
    return CALL(TPO_SET_MAP, ni, size, P(map));
}
int PtlGetMap(ptl_handle_ni_t ni, ptl_size_t size, ptl_process_t *map, ptl_size_t *actual)
{
    return CALL(TPO_GET_MAP, ni, size, P(map), P(actual));
}
int PtlPTAlloc(ptl_handle_ni_t ni, unsigned int options, ptl_handle_eq_t eq,
               ptl_pt_index_t req, ptl_pt_index_t *pt)
{
    return CALL(TPO_PT_ALLOC, ni, options, eq, req, P(pt));
}
int PtlPTFree(ptl_handle_ni_t ni, ptl_pt_index_t pt) { return CALL(TPO_PT_FREE, ni, pt); }
int PtlPTDisable(ptl_handle_ni_t ni, ptl_pt_index_t pt) { return CALL(TPO_PT_DISABLE, ni, pt); }
int PtlPTEnable(ptl_handle_ni_t ni, ptl_pt_index_t pt) { return CALL(TPO_PT_ENABLE, ni, pt); }
int PtlGetUid(ptl_handle_ni_t ni, ptl_uid_t *uid) { return CALL(TPO_GET_UID, ni, P(uid)); }
int PtlGetId(ptl_handle_ni_t ni, ptl_process_t *id) { return CALL(TPO_GET_ID, ni, P(id)); }
int PtlGetPhysId(ptl_handle_ni_t ni, ptl_process_t *id)
{
    return CALL(TPO_GET_PHYS_ID, ni, P(id));
}
int PtlMDBind(ptl_handle_ni_t ni, const ptl_md_t *md, ptl_handle_md_t *h)
{
    return CALL(TPO_MD_BIND, ni, P(md), P(h));
}
int PtlMDRelease(ptl_handle_md_t md) { return CALL(TPO_MD_RELEASE, md); }
int PtlLEAppend(ptl_handle_ni_t ni, ptl_pt_index_t pt, const ptl_le_t *le, ptl_list_t list,
                void *user_ptr, ptl_handle_le_t *h)
{
    return CALL(TPO_LE_APPEND, ni, pt, P(le), list, P(user_ptr), P(h));
}
int PtlLEUnlink(ptl_handle_le_t h) { return CALL(TPO_LE_UNLINK, h); }
int PtlLESearch(ptl_handle_ni_t ni, ptl_pt_index_t pt, const ptl_le_t *le, ptl_search_op_t op,
                void *user_ptr)
{
    return CALL(TPO_LE_SEARCH, ni, pt, P(le), op, P(user_ptr));
}
int PtlMEAppend(ptl_handle_ni_t ni, ptl_pt_index_t pt, const ptl_me_t *me, ptl_list_t list,
                void *user_ptr, ptl_handle_me_t *h)
{
    return CALL(TPO_ME_APPEND, ni, pt, P(me), list, P(user_ptr), P(h));
}
int PtlMEUnlink(ptl_handle_me_t h) { return CALL(TPO_ME_UNLINK, h); }
int PtlMESearch(ptl_handle_ni_t ni, ptl_pt_index_t pt, const ptl_me_t *me, ptl_search_op_t op,
                void *user_ptr)
{
    return CALL(TPO_ME_SEARCH, ni, pt, P(me), op, P(user_ptr));
}
int PtlCTAlloc(ptl_handle_ni_t ni, ptl_handle_ct_t *ct) { return CALL(TPO_CT_ALLOC, ni, P(ct)); }
int PtlCTFree(ptl_handle_ct_t ct) { return CALL(TPO_CT_FREE, ct); }
int PtlCTCancelTriggered(ptl_handle_ct_t ct) { return CALL(TPO_CT_CANCEL, ct); }
int PtlCTGet(ptl_handle_ct_t ct, ptl_ct_event_t *ev) { return CALL(TPO_CT_GET, ct, P(ev)); }
int PtlCTWait(ptl_handle_ct_t ct, ptl_size_t test, ptl_ct_event_t *ev)
{
    return CALL(TPO_CT_WAIT, ct, test, P(ev));
}
int PtlCTPoll(const ptl_handle_ct_t *cts, const ptl_size_t *tests, unsigned int size,
              ptl_time_t timeout, ptl_ct_event_t *ev, unsigned int *which)
{
    return CALL(TPO_CT_POLL, P(cts), P(tests), size, timeout, P(ev), P(which));
}
int PtlCTSet(ptl_handle_ct_t ct, ptl_ct_event_t v)
{
    return CALL(TPO_CT_SET, ct, v.success, v.failure);
}
int PtlCTInc(ptl_handle_ct_t ct, ptl_ct_event_t v)
{
    return CALL(TPO_CT_INC, ct, v.success, v.failure);
}
int PtlPut(ptl_handle_md_t md, ptl_size_t loff, ptl_size_t len, ptl_ack_req_t ack,
           ptl_process_t target, ptl_pt_index_t pt, ptl_match_bits_t mb, ptl_size_t roff,
           void *user_ptr, ptl_hdr_data_t hdr)
{
    return CALL(TPO_PUT, md, loff, len, ack, id(target), pt, mb, roff, P(user_ptr), hdr);
}
int PtlGet(ptl_handle_md_t md, ptl_size_t loff, ptl_size_t len, ptl_process_t target,
           ptl_pt_index_t pt, ptl_match_bits_t mb, ptl_size_t roff, void *user_ptr)
{
    return CALL(TPO_GET, md, loff, len, id(target), pt, mb, roff, P(user_ptr));
}
int PtlAtomic(ptl_handle_md_t md, ptl_size_t loff, ptl_size_t len, ptl_ack_req_t ack,
              ptl_process_t target, ptl_pt_index_t pt, ptl_match_bits_t mb, ptl_size_t roff,
              void *user_ptr, ptl_hdr_data_t hdr, ptl_op_t op, ptl_datatype_t dt)
{
    return CALL(TPO_ATOMIC, md, loff, len, ack, id(target), pt, mb, roff, P(user_ptr), hdr, op,
                dt);
}
int PtlFetchAtomic(ptl_handle_md_t get_md, ptl_size_t get_off, ptl_handle_md_t put_md,
                   ptl_size_t put_off, ptl_size_t len, ptl_process_t target, ptl_pt_index_t pt,
                   ptl_match_bits_t mb, ptl_size_t roff, void *user_ptr, ptl_hdr_data_t hdr,
                   ptl_op_t op, ptl_datatype_t dt)
{
    return CALL(TPO_FETCH_ATOMIC, get_md, get_off, put_md, put_off, len, id(target), pt, mb, roff,
                P(user_ptr), hdr, op, dt);
}
int PtlSwap(ptl_handle_md_t get_md, ptl_size_t get_off, ptl_handle_md_t put_md,
            ptl_size_t put_off, ptl_size_t len, ptl_process_t target, ptl_pt_index_t pt,
            ptl_match_bits_t mb, ptl_size_t roff, void *user_ptr, ptl_hdr_data_t hdr,
            const void *operand, ptl_op_t op, ptl_datatype_t dt)
{
    return CALL(TPO_SWAP, get_md, get_off, put_md, put_off, len, id(target), pt, mb, roff,
                P(user_ptr), hdr, P(operand), op, dt);
}
int PtlAtomicSync(void) { return CALL(TPO_ATOMIC_SYNC, 0); }
int PtlEQAlloc(ptl_handle_ni_t ni, ptl_size_t count, ptl_handle_eq_t *eq)
{
    return CALL(TPO_EQ_ALLOC, ni, count, P(eq));
}
int PtlEQFree(ptl_handle_eq_t eq) { return CALL(TPO_EQ_FREE, eq); }
int PtlEQGet(ptl_handle_eq_t eq, ptl_event_t *ev) { return CALL(TPO_EQ_GET, eq, P(ev)); }
int PtlEQWait(ptl_handle_eq_t eq, ptl_event_t *ev) { return CALL(TPO_EQ_WAIT, eq, P(ev)); }
int PtlEQPoll(const ptl_handle_eq_t *eqs, unsigned int size, ptl_time_t timeout,
              ptl_event_t *ev, unsigned int *which)
{
    return CALL(TPO_EQ_POLL, P(eqs), size, timeout, P(ev), P(which));
}
int PtlTriggeredPut(ptl_handle_md_t md, ptl_size_t loff, ptl_size_t len, ptl_ack_req_t ack,
                    ptl_process_t target, ptl_pt_index_t pt, ptl_match_bits_t mb,
                    ptl_size_t roff, void *user_ptr, ptl_hdr_data_t hdr, ptl_handle_ct_t trig,
                    ptl_size_t threshold)
{
    return CALL(TPO_TRIG_PUT, md, loff, len, ack, id(target), pt, mb, roff, P(user_ptr), hdr,
                trig, threshold);
}
int PtlTriggeredGet(ptl_handle_md_t md, ptl_size_t loff, ptl_size_t len, ptl_process_t target,
                    ptl_pt_index_t pt, ptl_match_bits_t mb, ptl_size_t roff, void *user_ptr,
                    ptl_handle_ct_t trig, ptl_size_t threshold)
{
    return CALL(TPO_TRIG_GET, md, loff, len, id(target), pt, mb, roff, P(user_ptr), trig,
                threshold);
}
int PtlTriggeredAtomic(ptl_handle_md_t md, ptl_size_t loff, ptl_size_t len, ptl_ack_req_t ack,
                       ptl_process_t target, ptl_pt_index_t pt, ptl_match_bits_t mb,
                       ptl_size_t roff, void *user_ptr, ptl_hdr_data_t hdr, ptl_op_t op,
                       ptl_datatype_t dt, ptl_handle_ct_t trig, ptl_size_t threshold)
{
    return CALL(TPO_TRIG_ATOMIC, md, loff, len, ack, id(target), pt, mb, roff, P(user_ptr), hdr,
                op, dt, trig, threshold);
}
int PtlTriggeredFetchAtomic(ptl_handle_md_t get_md, ptl_size_t get_off, ptl_handle_md_t put_md,
                            ptl_size_t put_off, ptl_size_t len, ptl_process_t target,
                            ptl_pt_index_t pt, ptl_match_bits_t mb, ptl_size_t roff,
                            void *user_ptr, ptl_hdr_data_t hdr, ptl_op_t op, ptl_datatype_t dt,
                            ptl_handle_ct_t trig, ptl_size_t threshold)
{
    return CALL(TPO_TRIG_FETCH_ATOMIC, get_md, get_off, put_md, put_off, len, id(target), pt, mb,
                roff, P(user_ptr), hdr, op, dt, trig, threshold);
}
int PtlTriggeredSwap(ptl_handle_md_t get_md, ptl_size_t get_off, ptl_handle_md_t put_md,
                     ptl_size_t put_off, ptl_size_t len, ptl_process_t target, ptl_pt_index_t pt,
                     ptl_match_bits_t mb, ptl_size_t roff, void *user_ptr, ptl_hdr_data_t hdr,
                     const void *operand, ptl_op_t op, ptl_datatype_t dt, ptl_handle_ct_t trig,
                     ptl_size_t threshold)
{
    return CALL(TPO_TRIG_SWAP, get_md, get_off, put_md, put_off, len, id(target), pt, mb, roff,
                P(user_ptr), hdr, P(operand), op, dt, trig, threshold);
}
int PtlTriggeredCTInc(ptl_handle_ct_t ct, ptl_ct_event_t v, ptl_handle_ct_t trig,
                      ptl_size_t threshold)
{
    return CALL(TPO_TRIG_CT_INC, ct, v.success, v.failure, trig, threshold);
}
int PtlTriggeredCTSet(ptl_handle_ct_t ct, ptl_ct_event_t v, ptl_handle_ct_t trig,
                      ptl_size_t threshold)
{
    return CALL(TPO_TRIG_CT_SET, ct, v.success, v.failure, trig, threshold);
}
int PtlTriggeredMEAppend(ptl_handle_ni_t ni, ptl_pt_index_t pt, const ptl_me_t *me,
                         ptl_list_t list, void *user_ptr, ptl_handle_me_t *h,
                         ptl_handle_ct_t trig, ptl_size_t threshold)
{
    return CALL(TPO_TRIG_ME_APPEND, ni, pt, P(me), list, P(user_ptr), P(h), trig, threshold);
}
int PtlTriggeredLEAppend(ptl_handle_ni_t ni, ptl_pt_index_t pt, const ptl_le_t *le,
                         ptl_list_t list, void *user_ptr, ptl_handle_le_t *h,
                         ptl_handle_ct_t trig, ptl_size_t threshold)
{
    return CALL(TPO_TRIG_LE_APPEND, ni, pt, P(le), list, P(user_ptr), P(h), trig, threshold);
}
int PtlTriggeredMEUnlink(ptl_handle_me_t h, ptl_handle_ct_t trig, ptl_size_t threshold)
{
    return CALL(TPO_TRIG_ME_UNLINK, h, trig, threshold);
}
int PtlTriggeredLEUnlink(ptl_handle_le_t h, ptl_handle_ct_t trig, ptl_size_t threshold)
{
    return CALL(TPO_TRIG_LE_UNLINK, h, trig, threshold);
}
/* A Tern program is one thread: nothing can be waiting while it calls this. */
int PtlAbort(void) { return CALL(TPO_ABORT, 0); }
int PtlStartBundle(ptl_handle_ni_t ni) { return CALL(TPO_START_BUNDLE, ni); }
int PtlEndBundle(ptl_handle_ni_t ni) { return CALL(TPO_END_BUNDLE, ni); }
int PtlHandleIsEqual(ptl_handle_any_t a, ptl_handle_any_t b)
{
    return CALL(TPO_HANDLE_IS_EQUAL, a, b);
}

/* ptl_tern.h: not part of Portals. */
int ptl_tern_nop(void) { return CALL(TPO_NOP, 0); }

int ptl_tern_stats(struct ptl_lib_stats *lib, struct tern_ptl_node_stats *node)
{
    return CALL(TPO_STATS, P(lib), P(node), sizeof *node, sizeof *lib);
}

int ptl_tern_trace(int cmd, uint64_t a, uint64_t b, size_t max, struct tern_trace_info *info)
{
    return CALL(TPO_TRACE, (u64)cmd, a, b, (u64)max, P(info));
}
