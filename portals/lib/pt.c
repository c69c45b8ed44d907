/* Portal table entries. */
#include "ptl_api.h"

static struct ptl_pt *pt_of(struct ptl_ni *ni, ptl_pt_index_t i)
{
    if (!ni || i > (ptl_pt_index_t)ni->lim.max_pt_index)
        return NULL;
    return ni->pts[i].allocated ? &ni->pts[i] : NULL;
}

int PtlPTAlloc(ptl_handle_ni_t h, unsigned int options, ptl_handle_eq_t eqh,
               ptl_pt_index_t req, ptl_pt_index_t *out)
{
    API_ENTER();
    struct ptl_ni *ni = ptl_ni_get(h);
    struct ptl_eq *eq = NULL;
    API_CHECK(ni && out && !(options & ~PTL_PT_ALLOC_OPTIONS_MASK));
    if (eqh != PTL_EQ_NONE) {
        struct ptl_ni *eq_ni;
        eq = ptl_eq_get(eqh, &eq_ni);
        API_CHECK(eq && eq_ni == ni);
    }
    if ((options & PTL_PT_FLOWCTRL) && !eq)
        API_RETURN(PTL_PT_EQ_NEEDED);
    ptl_pt_index_t i;
    if (req == PTL_PT_ANY) {
        for (i = 0; i <= (ptl_pt_index_t)ni->lim.max_pt_index; i++)
            if (!ni->pts[i].allocated)
                break;
        if (i > (ptl_pt_index_t)ni->lim.max_pt_index)
            API_RETURN(PTL_PT_FULL);
    } else {
        API_CHECK(req <= (ptl_pt_index_t)ni->lim.max_pt_index);
        if (ni->pts[req].allocated)
            API_RETURN(PTL_PT_IN_USE);
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
    API_EXIT(PTL_OK);
}

int PtlPTFree(ptl_handle_ni_t h, ptl_pt_index_t i)
{
    API_ENTER();
    struct ptl_pt *pt = pt_of(ptl_ni_get(h), i);
    API_CHECK(pt);
    if (pt->head[0] || pt->head[1] || pt->uh_head)
        API_RETURN(PTL_IN_USE);
    pt->allocated = false;
    API_EXIT(PTL_OK);
}

static int pt_set(ptl_handle_ni_t h, ptl_pt_index_t i, bool on)
{
    API_ENTER();
    struct ptl_pt *pt = pt_of(ptl_ni_get(h), i);
    API_CHECK(pt);
    pt->enabled = on;
    API_EXIT(PTL_OK);
}

/* Messages are handled whole inside the lock, so once this returns no
 * message is half-processed on the entry from our side. */
int PtlPTDisable(ptl_handle_ni_t h, ptl_pt_index_t i) { return pt_set(h, i, false); }
int PtlPTEnable(ptl_handle_ni_t h, ptl_pt_index_t i) { return pt_set(h, i, true); }
