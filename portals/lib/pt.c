/* Portal table entries. */
#include "ptl_internal.h"

static struct ptl_pt *pt_of(struct ptl_ni *ni, ptl_pt_index_t i)
{
    if (!ni || i > (ptl_pt_index_t)ni->lim.max_pt_index)
        return NULL;
    return ni->pts[i].allocated ? &ni->pts[i] : NULL;
}

int PtlPTAlloc(ptl_handle_ni_t h, unsigned int options, ptl_handle_eq_t eqh,
               ptl_pt_index_t req, ptl_pt_index_t *out)
{
    int rc = PTL_ARG_INVALID;
    ptl_host_lock();
    struct ptl_ni *ni = ptl_ni_get(h);
    struct ptl_eq *eq = NULL;
    if (!ptl_api_ready()) {
        rc = PTL_NO_INIT;
        goto out;
    }
    if (!ni || !out || (options & ~PTL_PT_ALLOC_OPTIONS_MASK))
        goto out;
    if (eqh != PTL_EQ_NONE) {
        struct ptl_ni *eq_ni;
        eq = ptl_eq_get(eqh, &eq_ni);
        if (!eq || eq_ni != ni)
            goto out;
    }
    if ((options & PTL_PT_FLOWCTRL) && !eq) {
        rc = PTL_PT_EQ_NEEDED;
        goto out;
    }
    ptl_pt_index_t i;
    if (req == PTL_PT_ANY) {
        for (i = 0; i <= (ptl_pt_index_t)ni->lim.max_pt_index; i++)
            if (!ni->pts[i].allocated)
                break;
        if (i > (ptl_pt_index_t)ni->lim.max_pt_index) {
            rc = PTL_PT_FULL;
            goto out;
        }
    } else {
        if (req > (ptl_pt_index_t)ni->lim.max_pt_index)
            goto out;
        if (ni->pts[req].allocated) {
            rc = PTL_PT_IN_USE;
            goto out;
        }
        i = req;
    }
    struct ptl_pt *pt = &ni->pts[i];
    memset(pt, 0, sizeof(*pt));
    pt->allocated = true;
    pt->enabled = !(options & PTL_PT_ALLOC_DISABLED);
    /* PTL_PT_MATCH_UNORDERED only permits matching out of list order;
     * matching here always keeps it. */
    pt->options = options;
    pt->eq = eq;
    *out = i;
    rc = PTL_OK;
out:
    ptl_host_unlock();
    return rc;
}

int PtlPTFree(ptl_handle_ni_t h, ptl_pt_index_t i)
{
    int rc = PTL_ARG_INVALID;
    ptl_host_lock();
    struct ptl_pt *pt = pt_of(ptl_ni_get(h), i);
    if (!ptl_api_ready())
        rc = PTL_NO_INIT;
    else if (pt) {
        if (pt->head[0] || pt->head[1] || pt->uh_head) {
            rc = PTL_IN_USE;
        } else {
            pt->allocated = false;
            rc = PTL_OK;
        }
    }
    ptl_host_unlock();
    return rc;
}

static int pt_set(ptl_handle_ni_t h, ptl_pt_index_t i, bool on)
{
    int rc = PTL_ARG_INVALID;
    ptl_host_lock();
    struct ptl_pt *pt = pt_of(ptl_ni_get(h), i);
    if (!ptl_api_ready())
        rc = PTL_NO_INIT;
    else if (pt) {
        pt->enabled = on;
        rc = PTL_OK;
    }
    ptl_host_unlock();
    return rc;
}

/* Messages are handled whole inside the lock, so once this returns no
 * message is half-processed on the entry from our side. */
int PtlPTDisable(ptl_handle_ni_t h, ptl_pt_index_t i) { return pt_set(h, i, false); }
int PtlPTEnable(ptl_handle_ni_t h, ptl_pt_index_t i) { return pt_set(h, i, true); }
