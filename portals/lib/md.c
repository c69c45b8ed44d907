/* Memory descriptors (initiator-side buffers). */
#include "ptl_internal.h"

int PtlMDBind(ptl_handle_ni_t h, const ptl_md_t *md, ptl_handle_md_t *out)
{
    int rc = PTL_ARG_INVALID;
    ptl_host_lock();
    struct ptl_ni *ni = ptl_ni_get(h), *o;
    if (!ptl_api_ready()) {
        rc = PTL_NO_INIT;
        goto out;
    }
    if (!ni || !md || !out || (md->options & ~(unsigned)PTL_MD_OPTIONS_MASK))
        goto out;
    struct ptl_eq *eq = NULL;
    struct ptl_ct *ct = NULL;
    if (md->eq_handle != PTL_EQ_NONE &&
        (!(eq = ptl_eq_get(md->eq_handle, &o)) || o != ni))
        goto out;
    if (md->ct_handle != PTL_CT_NONE &&
        (!(ct = ptl_ct_get(md->ct_handle, &o)) || o != ni))
        goto out;
    struct ptl_region r;
    if (ptl_region_init(&r, md->start, md->length, md->options & PTL_IOVEC,
                        ni->lim.max_iovecs) != PTL_OK)
        goto out;
    rc = PTL_NO_SPACE;
    for (int i = 0; i < ni->lim.max_mds; i++) {
        struct ptl_md *m = &ni->mds[i];
        if (m->o.in_use)
            continue;
        m->options = md->options;
        m->r = r;
        m->eq = eq;
        m->ct = ct;
        m->busy = 0;
        m->o.in_use = true;
        m->o.gen++;
        *out = ptl_mkhandle(PTL_OBJ_MD, ni->idx, (unsigned)i, m->o.gen);
        rc = PTL_OK;
        break;
    }
out:
    ptl_host_unlock();
    return rc;
}

int PtlMDRelease(ptl_handle_md_t h)
{
    int rc = PTL_ARG_INVALID;
    ptl_host_lock();
    struct ptl_md *md = ptl_md_get(h, NULL);
    if (!ptl_api_ready())
        rc = PTL_NO_INIT;
    else if (md) {
        ptl_progress_locked();
        if (md->busy) {
            rc = PTL_IN_USE;
        } else {
            md->o.in_use = false;
            rc = PTL_OK;
        }
    }
    ptl_host_unlock();
    return rc;
}

bool ptl_lib_md_whole(uint32_t h)
{
    ptl_host_lock();
    struct ptl_md *md = ptl_md_get(h, NULL);
    bool whole = md && !md->r.iov && !md->r.start && md->r.length == PTL_SIZE_MAX;
    ptl_host_unlock();
    return whole;
}
