/* Triggered operations: kept on their counter in issue order and released
 * when success + failure reaches the threshold.  Data operations, counter
 * updates, and list entries linked or unlinked. */
#include "ptl_api.h"

static void trig_release_mds(struct ptl_trig *t)
{
    if (t->kind != PTL_TRIG_OP)
        return;
    if (t->args.put_md)
        t->args.put_md->busy--;
    if (t->args.get_md)
        t->args.get_md->busy--;
}

static void trig_free(struct ptl_ni *ni, struct ptl_trig *t)
{
    t->next = ni->trig_free;
    ni->trig_free = t;
}

struct ptl_trig *ptl_trig_alloc(struct ptl_ni *ni)
{
    struct ptl_trig *t = ni->trig_free;
    if (!t)
        return NULL;
    ni->trig_free = t->next;
    memset(t, 0, sizeof(*t));
    return t;
}

void ptl_trig_add(struct ptl_ni *ni, struct ptl_ct *ct, struct ptl_trig *t)
{
    struct ptl_trig **pp = &ct->trig;
    while (*pp)
        pp = &(*pp)->next;
    *pp = t;
    ptl_ct_check_triggers(ni, ct);
}

/* The entry a LINK/UNLINK trigger was set for, if it still exists. */
static struct ptl_entry *trig_entry(const struct ptl_trig *t)
{
    struct ptl_entry *e = t->entry;
    return e->o.in_use && e->o.gen == t->entry_gen && !e->freed ? e : NULL;
}

static void fire(struct ptl_ni *ni, struct ptl_ct *ct, const struct ptl_trig *t)
{
    struct ptl_entry *e;
    switch (t->kind) {
    case PTL_TRIG_CT_SET:
        if (t->ct_target->o.in_use) {
            t->ct_target->v = t->ct_val;
            ptl_ct_check_triggers(ni, t->ct_target);
        }
        return;
    case PTL_TRIG_CT_INC:
        ptl_ct_add(ni, t->ct_target, t->ct_val.success, t->ct_val.failure);
        return;
    case PTL_TRIG_LINK:
        if (!(e = trig_entry(t)) || e->linked)
            return;
        if (ni->pts[e->pt].allocated)
            ptl_entry_link(ni, e);
        else
            ptl_entry_unlink(ni, e);  /* its portal was freed meanwhile */
        return;
    case PTL_TRIG_UNLINK:
        if ((e = trig_entry(t)))
            ptl_entry_unlink(ni, e);
        return;
    default:
        /* The MDs were pinned, so this only fails when resources ran
         * out; count it as a failure on the trigger CT so the
         * application can see it. */
        if (ptl_op_issue(ni, &t->args) != PTL_OK)
            ct->v.failure++;
        return;
    }
}

void ptl_ct_check_triggers(struct ptl_ni *ni, struct ptl_ct *ct)
{
    /* Restart from the head after each firing: a fired op may change this
     * counter (CTInc/CTSet chains) or append new triggers. */
    for (;;) {
        ptl_ct_note_waiters(ct);
        ptl_size_t v = ct->v.success + ct->v.failure;
        struct ptl_trig **pp = &ct->trig, *t;
        while ((t = *pp) && t->threshold > v)
            pp = &t->next;
        if (!t)
            return;
        *pp = t->next;
        struct ptl_trig copy = *t;
        trig_free(ni, t);
        trig_release_mds(&copy);
        fire(ni, ct, &copy);
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
        trig_free(ni, t);
        t = n;
    }
}

void ptl_trig_forget_ct(struct ptl_ni *ni, struct ptl_ct *target)
{
    for (int i = 0; i < ni->lim.max_cts; i++) {
        struct ptl_trig **pp = &ni->cts[i].trig, *t;
        while ((t = *pp)) {
            if ((t->kind == PTL_TRIG_CT_INC || t->kind == PTL_TRIG_CT_SET) &&
                t->ct_target == target) {
                *pp = t->next;
                trig_free(ni, t);
            } else {
                pp = &t->next;
            }
        }
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
    struct ptl_trig *t = ptl_trig_alloc(n1);
    if (!t)
        API_RETURN(PTL_NO_SPACE);
    t->threshold = threshold;
    t->kind = set ? PTL_TRIG_CT_SET : PTL_TRIG_CT_INC;
    t->ct_target = dst;
    t->ct_val = val;
    ptl_trig_add(n1, trig, t);
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

/* A LINK or UNLINK of entry e when the counter trig reaches threshold. */
static void trig_entry_add(struct ptl_ni *ni, struct ptl_ct *trig, struct ptl_trig *t,
                           enum ptl_trig_kind kind, struct ptl_entry *e, ptl_size_t threshold)
{
    t->threshold = threshold;
    t->kind = kind;
    t->entry = e;
    t->entry_gen = e->o.gen;
    ptl_trig_add(ni, trig, t);
}

/* The entry is created now (the handle is valid at once); linking, with
 * its search of the unexpected list and its LINK event, waits. */
static int trig_append(ptl_handle_ni_t nih, ptl_pt_index_t pt, const ptl_me_t *me, bool is_me,
                       ptl_list_t list, void *user_ptr, uint32_t *h, ptl_handle_ct_t trigh,
                       ptl_size_t threshold)
{
    API_ENTER();
    struct ptl_ni *ni = ptl_ni_get(nih), *cni;
    struct ptl_ct *trig = ptl_ct_get(trigh, &cni);
    API_CHECK(ni && trig && cni == ni && me);
    struct ptl_trig *t = ptl_trig_alloc(ni);
    if (!t)
        API_RETURN(PTL_NO_SPACE);
    struct ptl_entry *e;
    int rc = ptl_entry_new(ni, pt, me, is_me, list, user_ptr, h, &e);
    if (rc != PTL_OK) {
        trig_free(ni, t);
        API_RETURN(rc);
    }
    trig_entry_add(ni, trig, t, PTL_TRIG_LINK, e, threshold);
    API_EXIT(PTL_OK);
}

static int trig_unlink(uint32_t h, bool is_me, ptl_handle_ct_t trigh, ptl_size_t threshold)
{
    API_ENTER();
    struct ptl_ni *ni, *cni;
    struct ptl_entry *e = ptl_entry_get(h, is_me, &ni);
    struct ptl_ct *trig = ptl_ct_get(trigh, &cni);
    API_CHECK(e && trig && cni == ni);
    struct ptl_trig *t = ptl_trig_alloc(ni);
    if (!t)
        API_RETURN(PTL_NO_SPACE);
    trig_entry_add(ni, trig, t, PTL_TRIG_UNLINK, e, threshold);
    API_EXIT(PTL_OK);
}

int PtlTriggeredMEAppend(ptl_handle_ni_t ni, ptl_pt_index_t pt, const ptl_me_t *me,
                         ptl_list_t list, void *user_ptr, ptl_handle_me_t *h,
                         ptl_handle_ct_t trig, ptl_size_t threshold)
{
    return trig_append(ni, pt, me, true, list, user_ptr, h, trig, threshold);
}

int PtlTriggeredLEAppend(ptl_handle_ni_t ni, ptl_pt_index_t pt, const ptl_le_t *le,
                         ptl_list_t list, void *user_ptr, ptl_handle_le_t *h,
                         ptl_handle_ct_t trig, ptl_size_t threshold)
{
    ptl_me_t me = ptl_le_as_me(le);
    return trig_append(ni, pt, le ? &me : NULL, false, list, user_ptr, h, trig, threshold);
}

int PtlTriggeredMEUnlink(ptl_handle_me_t h, ptl_handle_ct_t trig, ptl_size_t threshold)
{
    return trig_unlink(h, true, trig, threshold);
}

int PtlTriggeredLEUnlink(ptl_handle_le_t h, ptl_handle_ct_t trig, ptl_size_t threshold)
{
    return trig_unlink(h, false, trig, threshold);
}
