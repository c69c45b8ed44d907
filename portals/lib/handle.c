/* Handle encoding and validation.  A bad handle of any kind yields NULL so
 * the API returns PTL_ARG_INVALID instead of touching memory. */
#include "ptl_api.h"

struct ptl_lib ptl_g;

bool ptl_api_ready(void) { return ptl_g.init_refs > 0; }

uint32_t ptl_lib_restrict(uint32_t iface_mask)
{
    uint32_t old = ptl_g.caller_ifaces;
    ptl_g.caller_ifaces = iface_mask;
    return old;
}

bool ptl_iface_allowed(unsigned iface)
{
    return !ptl_g.caller_ifaces || (iface < 32 && (ptl_g.caller_ifaces >> iface & 1));
}

void *ptl_zalloc(size_t n)
{
    void *p = ptl_host_alloc(n ? n : 1);
    if (p)
        memset(p, 0, n ? n : 1);
    return p;
}

struct ptl_ni *ptl_ni_get(ptl_handle_ni_t h)
{
    if (!ptl_api_ready() || PTL_H_TYPE(h) != PTL_OBJ_NI)
        return NULL;
    if (PTL_H_NI(h) >= PTL_MAX_NIS || !ptl_iface_allowed(PTL_H_NI(h) / 4))
        return NULL;
    struct ptl_ni *ni = &ptl_g.nis[PTL_H_NI(h)];
    if (!ni->in_use || PTL_H_IDX(h) != 0 || PTL_H_GEN(h) != ni->gen)
        return NULL;
    return ni;
}

static struct ptl_ni *ni_of(uint32_t h, unsigned type, unsigned *idx)
{
    if (!ptl_api_ready() || PTL_H_TYPE(h) != type)
        return NULL;
    if (PTL_H_NI(h) >= PTL_MAX_NIS || !ptl_iface_allowed(PTL_H_NI(h) / 4))
        return NULL;
    struct ptl_ni *ni = &ptl_g.nis[PTL_H_NI(h)];
    if (!ni->in_use)
        return NULL;
    *idx = PTL_H_IDX(h);
    return ni;
}

struct ptl_eq *ptl_eq_get(ptl_handle_eq_t h, struct ptl_ni **nip)
{
    unsigned i;
    struct ptl_ni *ni = ni_of(h, PTL_OBJ_EQ, &i);
    if (!ni || i >= (unsigned)ni->lim.max_eqs)
        return NULL;
    struct ptl_eq *eq = &ni->eqs[i];
    if (!eq->o.in_use || eq->o.gen != PTL_H_GEN(h))
        return NULL;
    if (nip)
        *nip = ni;
    return eq;
}

struct ptl_ct *ptl_ct_get(ptl_handle_ct_t h, struct ptl_ni **nip)
{
    unsigned i;
    struct ptl_ni *ni = ni_of(h, PTL_OBJ_CT, &i);
    if (!ni || i >= (unsigned)ni->lim.max_cts)
        return NULL;
    struct ptl_ct *ct = &ni->cts[i];
    if (!ct->o.in_use || ct->o.gen != PTL_H_GEN(h))
        return NULL;
    if (nip)
        *nip = ni;
    return ct;
}

struct ptl_md *ptl_md_get(ptl_handle_md_t h, struct ptl_ni **nip)
{
    unsigned i;
    struct ptl_ni *ni = ni_of(h, PTL_OBJ_MD, &i);
    if (!ni || i >= (unsigned)ni->lim.max_mds)
        return NULL;
    struct ptl_md *md = &ni->mds[i];
    if (!md->o.in_use || md->o.gen != PTL_H_GEN(h))
        return NULL;
    if (nip)
        *nip = ni;
    return md;
}

struct ptl_entry *ptl_entry_get(uint32_t h, bool is_me, struct ptl_ni **nip)
{
    unsigned i;
    struct ptl_ni *ni = ni_of(h, is_me ? PTL_OBJ_ME : PTL_OBJ_LE, &i);
    if (!ni || i >= (unsigned)ni->lim.max_entries)
        return NULL;
    struct ptl_entry *e = &ni->entries[i];
    if (!e->o.in_use || e->freed || e->o.gen != PTL_H_GEN(h) ||
        e->is_me != is_me)
        return NULL;
    if (nip)
        *nip = ni;
    return e;
}

static bool iovec_in_use(uint32_t h, const void *iov)
{
    unsigned i;
    unsigned type = PTL_H_TYPE(h);
    struct ptl_ni *ni = ni_of(h, type, &i);
    if (!ni)
        return false;
    if (type == PTL_OBJ_MD) {
        if (i >= (unsigned)ni->lim.max_mds)
            return false;
        struct ptl_md *m = &ni->mds[i];
        return m->o.in_use && m->o.gen == PTL_H_GEN(h) && m->r.iov == iov;
    }
    if ((type != PTL_OBJ_ME && type != PTL_OBJ_LE) || i >= (unsigned)ni->lim.max_entries)
        return false;
    /* Not ptl_entry_get: an unlinked entry that is still busy is still
     * writing through iov. */
    struct ptl_entry *e = &ni->entries[i];
    return e->o.in_use && e->o.gen == PTL_H_GEN(h) && e->is_me == (type == PTL_OBJ_ME) &&
           e->r.iov == iov;
}

bool ptl_lib_iovec_in_use(uint32_t h, const void *iov)
{
    ptl_host_lock();
    bool used = iovec_in_use(h, iov);
    ptl_host_unlock();
    return used;
}

ptl_handle_eq_t ptl_eq_handle(struct ptl_ni *ni, struct ptl_eq *eq)
{
    if (!eq)
        return PTL_EQ_NONE;
    return ptl_mkhandle(PTL_OBJ_EQ, ni->idx, (unsigned)(eq - ni->eqs),
                        eq->o.gen);
}

ptl_handle_ct_t ptl_ct_handle(struct ptl_ni *ni, struct ptl_ct *ct)
{
    if (!ct)
        return PTL_CT_NONE;
    return ptl_mkhandle(PTL_OBJ_CT, ni->idx, (unsigned)(ct - ni->cts),
                        ct->o.gen);
}

int PtlHandleIsEqual(ptl_handle_any_t a, ptl_handle_any_t b)
{
    return a == b ? PTL_OK : PTL_FAIL;
}

int PtlNIHandle(ptl_handle_any_t h, ptl_handle_ni_t *out)
{
    API_ENTER();
    API_CHECK(out);
    struct ptl_ni *ni = NULL;
    bool ok = false;
    switch (PTL_H_TYPE(h)) {
    case PTL_OBJ_NI: ok = (ni = ptl_ni_get(h)) != NULL; break;
    case PTL_OBJ_EQ: ok = ptl_eq_get(h, &ni) != NULL; break;
    case PTL_OBJ_CT: ok = ptl_ct_get(h, &ni) != NULL; break;
    case PTL_OBJ_MD: ok = ptl_md_get(h, &ni) != NULL; break;
    case PTL_OBJ_ME: ok = ptl_entry_get(h, true, &ni) != NULL; break;
    case PTL_OBJ_LE: ok = ptl_entry_get(h, false, &ni) != NULL; break;
    default: break;
    }
    API_CHECK(ok);
    *out = ptl_mkhandle(PTL_OBJ_NI, ni->idx, 0, ni->gen);
    API_EXIT(PTL_OK);
}
