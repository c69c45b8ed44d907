/* The matching rule and target-side event delivery. */
#include "ptl_internal.h"

bool ptl_match_entry(const struct ptl_ni *ni, const struct ptl_entry *e,
                     const ptl_process_t *src, ptl_match_bits_t bits)
{
    if (!e->is_me)
        return true;
    if (((bits ^ e->me.match_bits) & ~e->me.ignore_bits) != 0)
        return false;
    if (ni->wni & PTL_WNI_LOGICAL)
        return e->me.match_id.rank == PTL_RANK_ANY ||
               e->me.match_id.rank == src->rank;
    return (e->me.match_id.phys.nid == PTL_NID_ANY ||
            e->me.match_id.phys.nid == src->phys.nid) &&
           (e->me.match_id.phys.pid == PTL_PID_ANY ||
            e->me.match_id.phys.pid == src->phys.pid);
}

/* Post a communication (PUT/GET/ATOMIC/FETCH_ATOMIC) or overflow event for
 * entry e, honouring its event-suppression and counting options. */
void ptl_target_event(struct ptl_ni *ni, struct ptl_entry *e,
                      const ptl_event_t *ev, bool overflow_kind)
{
    unsigned o = e->me.options;
    bool ok = ev->ni_fail_type == PTL_NI_OK;
    struct ptl_eq *eq = ni->pts[e->pt].eq;
    bool suppress = overflow_kind ? (o & PTL_ME_EVENT_OVER_DISABLE)
                                  : (o & PTL_ME_EVENT_COMM_DISABLE);
    if (ok && (o & PTL_ME_EVENT_SUCCESS_DISABLE))
        suppress = true;
    if (!suppress) {
        ptl_event_t full = *ev;
        /* An overflow event reports a message that had landed in an
         * overflow entry, whichever entry takes it now. */
        full.ptl_list = overflow_kind ? PTL_OVERFLOW_LIST : (ptl_list_t)e->list;
        ptl_eq_post(eq, &full);
    }
    bool count = overflow_kind ? (o & PTL_ME_EVENT_CT_OVERFLOW)
                               : (o & PTL_ME_EVENT_CT_COMM);
    if (count && e->ct) {
        if (!ok)
            ptl_ct_add(ni, e->ct, 0, 1);
        else
            ptl_ct_add(ni, e->ct,
                       (o & PTL_ME_EVENT_CT_BYTES) ? ev->mlength : 1, 0);
    }
}

/* An AUTO_UNLINK or AUTO_FREE event of e, unless its options say none
 * (built only then: most entries ask for none, libmsg's receives too). */
static void entry_event(struct ptl_ni *ni, struct ptl_entry *e, ptl_event_kind_t type)
{
    if (e->me.options & PTL_ME_EVENT_UNLINK_DISABLE)
        return;
    ptl_event_t ev;
    memset(&ev, 0, sizeof(ev));
    ev.type = type;
    ev.user_ptr = e->user_ptr;
    ev.pt_index = e->pt;
    ptl_eq_post(ni->pts[e->pt].eq, &ev);
}

/* Post owed AUTO_UNLINK / AUTO_FREE events and recycle the slot once
 * nothing refers to the entry any more. */
void ptl_entry_settle(struct ptl_ni *ni, struct ptl_entry *e)
{
    if (e->busy)
        return;
    if (e->unlink_ev) {
        e->unlink_ev = false;
        entry_event(ni, e, PTL_EVENT_AUTO_UNLINK);
    }
    if (e->uh_refs)
        return;
    if (e->free_ev) {
        e->free_ev = false;
        entry_event(ni, e, PTL_EVENT_AUTO_FREE);
    }
    if (e->freed && !e->linked) {
        e->o.in_use = false;
        ni->n_entries_used--;
        ptl_freeq_put(&ni->entry_free, (uint32_t)(e - ni->entries));
    }
}

/* The entry was used up (USE_ONCE, or min_free reached): take it off its
 * list now so no later message matches; events follow at completion. */
void ptl_entry_consume(struct ptl_ni *ni, struct ptl_entry *e)
{
    if (e->linked)
        ptl_list_remove(ni, e);
    e->freed = true;
    e->unlink_ev = true;
    if (e->list == PTL_OVERFLOW_LIST)
        e->free_ev = true;
}

void ptl_uh_free(struct ptl_ni *ni, struct ptl_uh *uh)
{
    struct ptl_entry *ovf = uh->ovf;
    uh->next = ni->uh_free;
    ni->uh_free = uh;
    ni->uh_used--;
    if (ovf) {
        ovf->uh_refs--;
        ptl_entry_settle(ni, ovf);
    }
}

/* Data of an unexpected message has fully arrived (or failed). */
void ptl_uh_complete(struct ptl_ni *ni, struct ptl_uh *uh)
{
    uh->complete = true;
    if (uh->claim) {
        struct ptl_entry *e = uh->claim;
        ptl_event_t ev = uh->ev;
        ev.type = (ptl_event_kind_t)(ev.type + 1); /* X -> X_OVERFLOW */
        ev.user_ptr = e->user_ptr;
        ptl_target_event(ni, e, &ev, true);
        e->busy--;
        ptl_entry_settle(ni, e);
        ptl_uh_free(ni, uh);
    } else if (uh->discard) {
        ptl_uh_free(ni, uh);
    }
}
