/* Data movement and triggered-operation entry points. */
#include "ptl_api.h"

static uint64_t operand_bits(const void *operand, ptl_datatype_t t)
{
    uint8_t b[8] = { 0 };
    if (operand && t < PTL_DATATYPE_LAST) {
        size_t n = ptl_atomic_size(t);
        memcpy(b, operand, n > 8 ? 8 : n);
    }
    return ptl_wget(b, 8);
}

/* Resolve handles into args; all MDs must belong to one NI. */
static int resolve(struct ptl_op_args *a, ptl_handle_md_t put,
                   ptl_handle_md_t get, struct ptl_ni **nip)
{
    struct ptl_ni *n1 = NULL, *n2 = NULL;
    if (a->kind != PTL_K_GET && !(a->put_md = ptl_md_get(put, &n1)))
        return PTL_ARG_INVALID;
    if ((a->kind == PTL_K_GET || a->kind == PTL_K_FETCH ||
         a->kind == PTL_K_SWAP) && !(a->get_md = ptl_md_get(get, &n2)))
        return PTL_ARG_INVALID;
    if (n1 && n2 && n1 != n2)
        return PTL_ARG_INVALID;
    *nip = n1 ? n1 : n2;
    return ptl_op_check(*nip, a);
}

static int issue(struct ptl_op_args *a, ptl_handle_md_t put,
                 ptl_handle_md_t get)
{
    API_ENTER();
    struct ptl_ni *ni;
    int rc = resolve(a, put, get, &ni);
    if (rc != PTL_OK)
        API_RETURN(rc);
    ptl_ni_receiving(ni);
    /* The operation's frame goes out first, the timers' walk after it:
     * the walk then overlaps the frame's way to its target. */
    rc = ptl_op_issue(ni, a);
    ptl_progress_locked();
    API_EXIT(rc);
}

static int trig_issue(struct ptl_op_args *a, ptl_handle_md_t put,
                      ptl_handle_md_t get, ptl_handle_ct_t cth,
                      ptl_size_t threshold)
{
    API_ENTER();
    struct ptl_ni *ni, *cni;
    int rc = resolve(a, put, get, &ni);
    if (rc != PTL_OK)
        API_RETURN(rc);
    struct ptl_ct *ct = ptl_ct_get(cth, &cni);
    API_CHECK(ct && cni == ni);
    if (ct->v.success + ct->v.failure >= threshold)
        API_RETURN(ptl_op_issue(ni, a));
    struct ptl_trig *t = ptl_trig_alloc(ni);
    if (!t)
        API_RETURN(PTL_NO_SPACE);
    t->threshold = threshold;
    t->kind = PTL_TRIG_OP;
    t->args = *a;
    /* The MDs must outlive the wait for the threshold. */
    if (a->put_md)
        a->put_md->busy++;
    if (a->get_md)
        a->get_md->busy++;
    ptl_trig_add(ni, ct, t);
    API_EXIT(PTL_OK);
}

int PtlPut(ptl_handle_md_t md, ptl_size_t loff, ptl_size_t len,
           ptl_ack_req_t ack, ptl_process_t target, ptl_pt_index_t pt,
           ptl_match_bits_t bits, ptl_size_t roff, void *user_ptr,
           ptl_hdr_data_t hdr)
{
    struct ptl_op_args a = { .kind = PTL_K_PUT, .put_off = loff, .len = len,
                             .ack_req = ack, .target = target, .pt = pt,
                             .bits = bits, .roff = roff, .user_ptr = user_ptr,
                             .hdr = hdr };
    return issue(&a, md, PTL_INVALID_HANDLE);
}

int PtlGet(ptl_handle_md_t md, ptl_size_t loff, ptl_size_t len,
           ptl_process_t target, ptl_pt_index_t pt, ptl_match_bits_t bits,
           ptl_size_t roff, void *user_ptr)
{
    struct ptl_op_args a = { .kind = PTL_K_GET, .get_off = loff, .len = len,
                             .target = target, .pt = pt, .bits = bits,
                             .roff = roff, .user_ptr = user_ptr };
    return issue(&a, PTL_INVALID_HANDLE, md);
}

int PtlAtomic(ptl_handle_md_t md, ptl_size_t loff, ptl_size_t len,
              ptl_ack_req_t ack, ptl_process_t target, ptl_pt_index_t pt,
              ptl_match_bits_t bits, ptl_size_t roff, void *user_ptr,
              ptl_hdr_data_t hdr, ptl_op_t op, ptl_datatype_t dt)
{
    struct ptl_op_args a = { .kind = PTL_K_ATOMIC, .put_off = loff,
                             .len = len, .ack_req = ack, .target = target,
                             .pt = pt, .bits = bits, .roff = roff,
                             .user_ptr = user_ptr, .hdr = hdr,
                             .aop = (uint8_t)op, .atype = (uint8_t)dt };
    if ((unsigned)op >= PTL_OP_LAST || (unsigned)dt >= PTL_DATATYPE_LAST)
        return PTL_ARG_INVALID;
    return issue(&a, md, PTL_INVALID_HANDLE);
}

int PtlFetchAtomic(ptl_handle_md_t get_md, ptl_size_t goff,
                   ptl_handle_md_t put_md, ptl_size_t poff, ptl_size_t len,
                   ptl_process_t target, ptl_pt_index_t pt,
                   ptl_match_bits_t bits, ptl_size_t roff, void *user_ptr,
                   ptl_hdr_data_t hdr, ptl_op_t op, ptl_datatype_t dt)
{
    struct ptl_op_args a = { .kind = PTL_K_FETCH, .put_off = poff,
                             .get_off = goff, .len = len, .target = target,
                             .pt = pt, .bits = bits, .roff = roff,
                             .user_ptr = user_ptr, .hdr = hdr,
                             .aop = (uint8_t)op, .atype = (uint8_t)dt };
    if ((unsigned)op >= PTL_OP_LAST || (unsigned)dt >= PTL_DATATYPE_LAST)
        return PTL_ARG_INVALID;
    return issue(&a, put_md, get_md);
}

int PtlSwap(ptl_handle_md_t get_md, ptl_size_t goff, ptl_handle_md_t put_md,
            ptl_size_t poff, ptl_size_t len, ptl_process_t target,
            ptl_pt_index_t pt, ptl_match_bits_t bits, ptl_size_t roff,
            void *user_ptr, ptl_hdr_data_t hdr, const void *operand,
            ptl_op_t op, ptl_datatype_t dt)
{
    struct ptl_op_args a = { .kind = PTL_K_SWAP, .put_off = poff,
                             .get_off = goff, .len = len, .target = target,
                             .pt = pt, .bits = bits, .roff = roff,
                             .user_ptr = user_ptr, .hdr = hdr,
                             .aop = (uint8_t)op, .atype = (uint8_t)dt,
                             .operand = operand_bits(operand, dt) };
    if ((unsigned)op >= PTL_OP_LAST || (unsigned)dt >= PTL_DATATYPE_LAST)
        return PTL_ARG_INVALID;
    if (op != PTL_SWAP && !operand)
        return PTL_ARG_INVALID;
    return issue(&a, put_md, get_md);
}

int PtlTriggeredPut(ptl_handle_md_t md, ptl_size_t loff, ptl_size_t len,
                    ptl_ack_req_t ack, ptl_process_t target,
                    ptl_pt_index_t pt, ptl_match_bits_t bits, ptl_size_t roff,
                    void *user_ptr, ptl_hdr_data_t hdr, ptl_handle_ct_t ct,
                    ptl_size_t threshold)
{
    struct ptl_op_args a = { .kind = PTL_K_PUT, .put_off = loff, .len = len,
                             .ack_req = ack, .target = target, .pt = pt,
                             .bits = bits, .roff = roff, .user_ptr = user_ptr,
                             .hdr = hdr };
    return trig_issue(&a, md, PTL_INVALID_HANDLE, ct, threshold);
}

int PtlTriggeredGet(ptl_handle_md_t md, ptl_size_t loff, ptl_size_t len,
                    ptl_process_t target, ptl_pt_index_t pt,
                    ptl_match_bits_t bits, ptl_size_t roff, void *user_ptr,
                    ptl_handle_ct_t ct, ptl_size_t threshold)
{
    struct ptl_op_args a = { .kind = PTL_K_GET, .get_off = loff, .len = len,
                             .target = target, .pt = pt, .bits = bits,
                             .roff = roff, .user_ptr = user_ptr };
    return trig_issue(&a, PTL_INVALID_HANDLE, md, ct, threshold);
}

int PtlTriggeredAtomic(ptl_handle_md_t md, ptl_size_t loff, ptl_size_t len,
                       ptl_ack_req_t ack, ptl_process_t target,
                       ptl_pt_index_t pt, ptl_match_bits_t bits,
                       ptl_size_t roff, void *user_ptr, ptl_hdr_data_t hdr,
                       ptl_op_t op, ptl_datatype_t dt, ptl_handle_ct_t ct,
                       ptl_size_t threshold)
{
    struct ptl_op_args a = { .kind = PTL_K_ATOMIC, .put_off = loff,
                             .len = len, .ack_req = ack, .target = target,
                             .pt = pt, .bits = bits, .roff = roff,
                             .user_ptr = user_ptr, .hdr = hdr,
                             .aop = (uint8_t)op, .atype = (uint8_t)dt };
    if ((unsigned)op >= PTL_OP_LAST || (unsigned)dt >= PTL_DATATYPE_LAST)
        return PTL_ARG_INVALID;
    return trig_issue(&a, md, PTL_INVALID_HANDLE, ct, threshold);
}

int PtlTriggeredFetchAtomic(ptl_handle_md_t get_md, ptl_size_t goff,
                            ptl_handle_md_t put_md, ptl_size_t poff,
                            ptl_size_t len, ptl_process_t target,
                            ptl_pt_index_t pt, ptl_match_bits_t bits,
                            ptl_size_t roff, void *user_ptr,
                            ptl_hdr_data_t hdr, ptl_op_t op,
                            ptl_datatype_t dt, ptl_handle_ct_t ct,
                            ptl_size_t threshold)
{
    struct ptl_op_args a = { .kind = PTL_K_FETCH, .put_off = poff,
                             .get_off = goff, .len = len, .target = target,
                             .pt = pt, .bits = bits, .roff = roff,
                             .user_ptr = user_ptr, .hdr = hdr,
                             .aop = (uint8_t)op, .atype = (uint8_t)dt };
    if ((unsigned)op >= PTL_OP_LAST || (unsigned)dt >= PTL_DATATYPE_LAST)
        return PTL_ARG_INVALID;
    return trig_issue(&a, put_md, get_md, ct, threshold);
}

int PtlTriggeredSwap(ptl_handle_md_t get_md, ptl_size_t goff,
                     ptl_handle_md_t put_md, ptl_size_t poff, ptl_size_t len,
                     ptl_process_t target, ptl_pt_index_t pt,
                     ptl_match_bits_t bits, ptl_size_t roff, void *user_ptr,
                     ptl_hdr_data_t hdr, const void *operand, ptl_op_t op,
                     ptl_datatype_t dt, ptl_handle_ct_t ct,
                     ptl_size_t threshold)
{
    struct ptl_op_args a = { .kind = PTL_K_SWAP, .put_off = poff,
                             .get_off = goff, .len = len, .target = target,
                             .pt = pt, .bits = bits, .roff = roff,
                             .user_ptr = user_ptr, .hdr = hdr,
                             .aop = (uint8_t)op, .atype = (uint8_t)dt,
                             .operand = operand_bits(operand, dt) };
    if ((unsigned)op >= PTL_OP_LAST || (unsigned)dt >= PTL_DATATYPE_LAST)
        return PTL_ARG_INVALID;
    if (op != PTL_SWAP && !operand)
        return PTL_ARG_INVALID;
    return trig_issue(&a, put_md, get_md, ct, threshold);
}
