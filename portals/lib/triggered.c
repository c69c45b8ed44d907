/* Triggered operations: kept on their counter in issue order and released
 * when success + failure reaches the threshold. */
#include "ptl_api.h"

static void trig_release_mds(struct ptl_trig *t)
{
    if (t->is_ct)
        return;
    if (t->args.put_md)
        t->args.put_md->busy--;
    if (t->args.get_md)
        t->args.get_md->busy--;
}

void ptl_ct_check_triggers(struct ptl_ni *ni, struct ptl_ct *ct)
{
    /* Restart from the head after each firing: a fired op may change this
     * counter (CTInc/CTSet chains) or append new triggers. */
    for (;;) {
        ptl_size_t v = ct->v.success + ct->v.failure;
        struct ptl_trig **pp = &ct->trig, *t;
        while ((t = *pp) && t->threshold > v)
            pp = &t->next;
        if (!t)
            return;
        *pp = t->next;
        struct ptl_trig copy = *t;
        t->next = ni->trig_free;
        ni->trig_free = t;
        trig_release_mds(&copy);
        if (copy.is_ct) {
            struct ptl_ct *dst = copy.ct_target;
            if (!dst->o.in_use)
                continue;
            if (copy.ct_set) {
                dst->v = copy.ct_val;
                ptl_ct_check_triggers(ni, dst);
            } else {
                ptl_ct_add(ni, dst, copy.ct_val.success, copy.ct_val.failure);
            }
        } else {
            /* Re-validate: the MDs were pinned, so this only fails when
             * resources ran out; count it as a failure on the trigger CT
             * so the application can see it. */
            if (ptl_op_issue(ni, &copy.args) != PTL_OK)
                ct->v.failure++;
        }
        if (!ct->o.in_use)
            return;
    }
}

void ptl_trig_cancel_all(struct ptl_ni *ni, struct ptl_ct *ct)
{
    struct ptl_trig *t = ct->trig;
    ct->trig = NULL;
    while (t) {
        struct ptl_trig *n = t->next;
        trig_release_mds(t);
        t->next = ni->trig_free;
        ni->trig_free = t;
        t = n;
    }
}

static int trig_ct(ptl_handle_ct_t cth, ptl_ct_event_t val, bool set,
                   ptl_handle_ct_t trigh, ptl_size_t threshold)
{
    API_ENTER();
    struct ptl_ni *n1, *n2;
    struct ptl_ct *dst = ptl_ct_get(cth, &n1);
    struct ptl_ct *trig = ptl_ct_get(trigh, &n2);
    API_CHECK(dst && trig && n1 == n2);
    if (!n1->trig_free)
        API_RETURN(PTL_NO_SPACE);
    struct ptl_trig *t = n1->trig_free;
    n1->trig_free = t->next;
    memset(t, 0, sizeof(*t));
    t->threshold = threshold;
    t->is_ct = true;
    t->ct_set = set;
    t->ct_target = dst;
    t->ct_val = val;
    struct ptl_trig **pp = &trig->trig;
    while (*pp)
        pp = &(*pp)->next;
    *pp = t;
    ptl_ct_check_triggers(n1, trig);
    API_EXIT(PTL_OK);
}

int PtlTriggeredCTInc(ptl_handle_ct_t ct, ptl_ct_event_t inc,
                      ptl_handle_ct_t trig, ptl_size_t threshold)
{
    return trig_ct(ct, inc, false, trig, threshold);
}

int PtlTriggeredCTSet(ptl_handle_ct_t ct, ptl_ct_event_t v,
                      ptl_handle_ct_t trig, ptl_size_t threshold)
{
    return trig_ct(ct, v, true, trig, threshold);
}
