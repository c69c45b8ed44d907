/* Memory descriptors (initiator-side buffers). */
#include "ptl_api.h"

int PtlMDBind(ptl_handle_ni_t h, const ptl_md_t *md, ptl_handle_md_t *out)
{
    API_ENTER();
    struct ptl_ni *ni = ptl_ni_get(h), *o;
    API_CHECK(ni && md && out && !(md->options & ~(unsigned)PTL_MD_OPTIONS_MASK));
    struct ptl_eq *eq = NULL;
    struct ptl_ct *ct = NULL;
    API_CHECK(md->eq_handle == PTL_EQ_NONE ||
              ((eq = ptl_eq_get(md->eq_handle, &o)) && o == ni));
    API_CHECK(md->ct_handle == PTL_CT_NONE ||
              ((ct = ptl_ct_get(md->ct_handle, &o)) && o == ni));
    struct ptl_region r;
    API_CHECK(ptl_region_init(&r, md->start, md->length, md->options & PTL_IOVEC,
                              ni->lim.max_iovecs) == PTL_OK);
    uint32_t i = ptl_freeq_take(&ni->md_free);
    if (i == PTL_FREEQ_NONE)
        API_RETURN(PTL_NO_SPACE);
    struct ptl_md *m = &ni->mds[i];
    m->options = md->options;
    m->r = r;
    m->eq = eq;
    m->ct = ct;
    m->busy = 0;
    m->o.in_use = true;
    m->o.gen = ptl_gen_next(m->o.gen);
    *out = ptl_mkhandle(PTL_OBJ_MD, ni->idx, i, m->o.gen);
    API_EXIT(PTL_OK);
}

int PtlMDRelease(ptl_handle_md_t h)
{
    API_ENTER();
    struct ptl_ni *ni;
    struct ptl_md *md = ptl_md_get(h, &ni);
    API_CHECK(md);
    ptl_progress_locked();
    if (md->busy)
        API_RETURN(PTL_IN_USE);
    md->o.in_use = false;
    ptl_freeq_put(&ni->md_free, (uint32_t)(md - ni->mds));
    API_EXIT(PTL_OK);
}

bool ptl_lib_md_whole(uint32_t h)
{
    ptl_host_lock();
    struct ptl_md *md = ptl_md_get(h, NULL);
    bool whole = md && !md->r.iov && !md->r.start && md->r.length == PTL_SIZE_MAX;
    ptl_host_unlock();
    return whole;
}
