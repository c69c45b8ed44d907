/* ME/LE lists: append (with the unexpected-list search), unlink, search. */
#include "ptl_api.h"

void ptl_list_remove(struct ptl_ni *ni, struct ptl_entry *e)
{
    struct ptl_pt *pt = &ni->pts[e->pt];
    int l = e->list;
    if (e->prev)
        e->prev->next = e->next;
    else
        pt->head[l] = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        pt->tail[l] = e->prev;
    e->next = e->prev = NULL;
    e->linked = false;
    pt->len[l]--;
}

static void uh_unlink(struct ptl_pt *pt, struct ptl_uh *prev,
                      struct ptl_uh *uh)
{
    if (prev)
        prev->next = uh->next;
    else
        pt->uh_head = uh->next;
    if (pt->uh_tail == uh)
        pt->uh_tail = prev;
    uh->next = NULL;
}

static bool uh_matches(struct ptl_ni *ni, const struct ptl_entry *e,
                       const struct ptl_uh *uh)
{
    return ptl_match_entry(ni, e, &uh->ev.initiator, uh->ev.match_bits);
}

/* Hand one unexpected header to entry e: its overflow event now if the data
 * is all there, else when it completes (uh->claim). */
static void uh_deliver(struct ptl_ni *ni, struct ptl_entry *e,
                       struct ptl_uh *uh)
{
    if (uh->complete) {
        ptl_event_t ev = uh->ev;
        ev.type = (ptl_event_kind_t)(ev.type + 1);
        ev.user_ptr = e->user_ptr;
        ptl_target_event(ni, e, &ev, true);
        ptl_uh_free(ni, uh);
    } else {
        uh->claim = e;
        e->busy++;
    }
}

static int check_entry_args(struct ptl_ni *ni, ptl_pt_index_t pt_index,
                            const ptl_me_t *me, bool is_me,
                            struct ptl_ct **ct, struct ptl_region *r)
{
    if (!me || pt_index > (ptl_pt_index_t)ni->lim.max_pt_index ||
        !ni->pts[pt_index].allocated)
        return PTL_ARG_INVALID;
    if (is_me != !!(ni->wni & PTL_WNI_MATCHING))
        return PTL_ARG_INVALID;
    unsigned mask = is_me ? PTL_ME_APPEND_OPTIONS_MASK
                          : PTL_LE_APPEND_OPTIONS_MASK;
    if (me->options & ~mask)
        return PTL_ARG_INVALID;
    *ct = NULL;
    if (me->ct_handle != PTL_CT_NONE) {
        struct ptl_ni *o;
        *ct = ptl_ct_get(me->ct_handle, &o);
        if (!*ct || o != ni)
            return PTL_ARG_INVALID;
    }
    return ptl_region_init(r, me->start, me->length, me->options & PTL_IOVEC,
                           ni->lim.max_iovecs);
}

/* A match_id naming a rank beyond the map of a logical NI names nobody. */
static bool match_id_ok(const struct ptl_ni *ni, const ptl_me_t *me, bool is_me)
{
    if (!is_me || !(ni->wni & PTL_WNI_LOGICAL) || !ni->map)
        return true;
    return me->match_id.rank == PTL_RANK_ANY || me->match_id.rank < ni->map_size;
}

/* A new entry in a free slot, not linked yet.  LE calls pass a ptl_me_t
 * built from the ptl_le_t with wildcard matching. */
int ptl_entry_new(struct ptl_ni *ni, ptl_pt_index_t pt_index, const ptl_me_t *me,
                  bool is_me, ptl_list_t list, void *user_ptr, uint32_t *handle,
                  struct ptl_entry **out)
{
    struct ptl_ct *ct;
    struct ptl_region r;
    if (!handle || (list != PTL_PRIORITY_LIST && list != PTL_OVERFLOW_LIST))
        return PTL_ARG_INVALID;
    int rc = check_entry_args(ni, pt_index, me, is_me, &ct, &r);
    if (rc != PTL_OK)
        return rc;
    if (!match_id_ok(ni, me, is_me))
        return PTL_PROCESS_INVALID;
    struct ptl_pt *pt = &ni->pts[pt_index];
    if (pt->len[list] >= (uint32_t)ni->lim.max_list_size)
        return PTL_LIST_TOO_LONG;
    uint32_t idx = ptl_freeq_take(&ni->entry_free);
    if (idx == PTL_FREEQ_NONE)
        return PTL_NO_SPACE;
    struct ptl_entry *e = &ni->entries[idx];
    uint8_t gen = ptl_gen_next(e->o.gen);
    memset(e, 0, sizeof(*e));
    e->o.in_use = true;
    e->o.gen = gen;
    e->is_me = is_me;
    e->list = (uint8_t)list;
    e->pt = pt_index;
    e->me = *me;
    e->r = r;
    e->ct = ct;
    e->user_ptr = user_ptr;
    ni->n_entries_used++;
    *handle = ptl_mkhandle(is_me ? PTL_OBJ_ME : PTL_OBJ_LE, ni->idx,
                           idx, gen);
    *out = e;
    return PTL_OK;
}

/* Locally managed entries: free space below min_free uses the entry up. */
static bool entry_full(const struct ptl_entry *e)
{
    return e->is_me && (e->me.options & PTL_ME_MANAGE_LOCAL) && e->me.min_free &&
           e->r.length - e->loff < e->me.min_free;
}

/* Links a new entry (PtlMEAppend, or a triggered append when it fires):
 * first the unexpected headers it matches are handed to it, in arrival
 * order, then it joins its list - unless those used it up. */
void ptl_entry_link(struct ptl_ni *ni, struct ptl_entry *e)
{
    struct ptl_pt *pt = &ni->pts[e->pt];
    unsigned o = e->me.options;
    if (e->list == PTL_PRIORITY_LIST) {
        struct ptl_uh *prev = NULL, *uh = pt->uh_head;
        while (uh) {
            struct ptl_uh *next = uh->next;
            if (!uh_matches(ni, e, uh)) {
                prev = uh;
                uh = next;
                continue;
            }
            ptl_size_t rlength = uh->ev.rlength;
            uh_unlink(pt, prev, uh);
            uh_deliver(ni, e, uh);
            /* The offset moves only with PTL_ME_LOCAL_INC_UH_RLENGTH, and
             * only a move can take the free space below min_free. */
            bool moved = e->is_me && (o & PTL_ME_MANAGE_LOCAL) &&
                         (o & PTL_ME_LOCAL_INC_UH_RLENGTH);
            if (moved)
                e->loff = rlength < e->r.length - e->loff ? e->loff + rlength : e->r.length;
            if ((o & PTL_ME_USE_ONCE) || (moved && entry_full(e))) {
                /* Used up by unexpected messages: never linked. */
                e->freed = true;
                e->unlink_ev = true;
                ptl_entry_settle(ni, e);
                return;
            }
            uh = next;
        }
    }
    int list = e->list;
    e->prev = pt->tail[list];
    if (pt->tail[list])
        pt->tail[list]->next = e;
    else
        pt->head[list] = e;
    pt->tail[list] = e;
    pt->len[list]++;
    e->linked = true;
    if (!(o & PTL_ME_EVENT_LINK_DISABLE) && pt->eq) {
        ptl_event_t ev;
        memset(&ev, 0, sizeof(ev));
        ev.type = PTL_EVENT_LINK;
        ev.user_ptr = e->user_ptr;
        ev.pt_index = e->pt;
        ev.ptl_list = (ptl_list_t)list;
        ptl_eq_post(pt->eq, &ev);
    }
}

int ptl_append(struct ptl_ni *ni, ptl_pt_index_t pt_index, const ptl_me_t *me,
               bool is_me, ptl_list_t list, void *user_ptr, uint32_t *handle)
{
    struct ptl_entry *e;
    int rc = ptl_entry_new(ni, pt_index, me, is_me, list, user_ptr, handle, &e);
    if (rc == PTL_OK)
        ptl_entry_link(ni, e);
    return rc;
}

/* The counter of a search: one success (or the bytes) per header found
 * with PTL_ME_EVENT_CT_OVERFLOW; a failure marks a search that ran to the
 * end of the list. */
static void search_count(struct ptl_ni *ni, const struct ptl_entry *e, ptl_size_t mlength,
                         bool end)
{
    unsigned o = e->me.options;
    if (!e->ct || !(o & PTL_ME_EVENT_CT_OVERFLOW))
        return;
    if (end)
        ptl_ct_add(ni, e->ct, 0, 1);
    else
        ptl_ct_add(ni, e->ct, (o & PTL_ME_EVENT_CT_BYTES) ? mlength : 1, 0);
}

/* Every unexpected header that matches gets an event: SEARCH (search
 * only) or its overflow event (search and delete), and one count on the
 * counter; a PTL_ME_USE_ONCE search stops at the first.  A search that
 * found nothing gets one SEARCH event with PTL_NI_NO_MATCH. */
int ptl_search(struct ptl_ni *ni, ptl_pt_index_t pt_index, const ptl_me_t *me,
               bool is_me, ptl_search_op_t op, void *user_ptr)
{
    struct ptl_ct *ct;
    struct ptl_region r;
    if (op != PTL_SEARCH_ONLY && op != PTL_SEARCH_DELETE)
        return PTL_ARG_INVALID;
    int rc = check_entry_args(ni, pt_index, me, is_me, &ct, &r);
    if (rc != PTL_OK)
        return rc;
    struct ptl_pt *pt = &ni->pts[pt_index];
    /* A throw-away entry carries the options and counters for events. */
    struct ptl_entry tmp;
    memset(&tmp, 0, sizeof(tmp));
    tmp.is_me = is_me;
    tmp.me = *me;
    tmp.ct = ct;
    tmp.pt = pt_index;
    tmp.list = PTL_OVERFLOW_LIST;
    tmp.user_ptr = user_ptr;
    bool once = me->options & PTL_ME_USE_ONCE, found = false;
    struct ptl_uh *prev = NULL, *uh = pt->uh_head;
    while (uh && !(found && once)) {
        struct ptl_uh *next = uh->next;
        if (!uh_matches(ni, &tmp, uh)) {
            prev = uh;
            uh = next;
            continue;
        }
        found = true;
        ptl_event_t ev = uh->ev;
        ev.user_ptr = user_ptr;
        ev.ptl_list = PTL_OVERFLOW_LIST;
        if (op == PTL_SEARCH_ONLY) {
            ev.type = PTL_EVENT_SEARCH;
            ptl_eq_post(pt->eq, &ev);
            search_count(ni, &tmp, ev.mlength, false);
            prev = uh;
            uh = next;
            continue;
        }
        uh_unlink(pt, prev, uh);
        ev.type = (ptl_event_kind_t)(ev.type + 1);
        ptl_target_event(ni, &tmp, &ev, true);
        if (uh->complete)
            ptl_uh_free(ni, uh);
        else
            uh->discard = true;
        uh = next;
    }
    if (!(found && once))
        search_count(ni, &tmp, 0, true);
    if (!found) {
        ptl_event_t ev;
        memset(&ev, 0, sizeof(ev));
        ev.type = PTL_EVENT_SEARCH;
        ev.user_ptr = user_ptr;
        ev.pt_index = pt_index;
        ev.ptl_list = PTL_OVERFLOW_LIST;
        ev.ni_fail_type = PTL_NI_NO_MATCH;
        ptl_eq_post(pt->eq, &ev);
    }
    return PTL_OK;
}

ptl_me_t ptl_le_as_me(const ptl_le_t *le)
{
    ptl_me_t me;
    memset(&me, 0, sizeof(me));
    if (le) {
        me.start = le->start;
        me.length = le->length;
        me.ct_handle = le->ct_handle;
        me.uid = le->uid;
        me.options = le->options;
    }
    return me;
}

int PtlMEAppend(ptl_handle_ni_t nih, ptl_pt_index_t pt, const ptl_me_t *me,
                ptl_list_t list, void *user_ptr, ptl_handle_me_t *h)
{
    API_ENTER();
    struct ptl_ni *ni = ptl_ni_get(nih);
    API_CHECK(ni);
    API_EXIT(ptl_append(ni, pt, me, true, list, user_ptr, h));
}

int PtlLEAppend(ptl_handle_ni_t nih, ptl_pt_index_t pt, const ptl_le_t *le,
                ptl_list_t list, void *user_ptr, ptl_handle_le_t *h)
{
    ptl_me_t me = ptl_le_as_me(le);
    API_ENTER();
    struct ptl_ni *ni = ptl_ni_get(nih);
    API_CHECK(ni && le);
    API_EXIT(ptl_append(ni, pt, &me, false, list, user_ptr, h));
}

int PtlMESearch(ptl_handle_ni_t nih, ptl_pt_index_t pt, const ptl_me_t *me,
                ptl_search_op_t op, void *user_ptr)
{
    API_ENTER();
    struct ptl_ni *ni = ptl_ni_get(nih);
    API_CHECK(ni);
    API_EXIT(ptl_search(ni, pt, me, true, op, user_ptr));
}

int PtlLESearch(ptl_handle_ni_t nih, ptl_pt_index_t pt, const ptl_le_t *le,
                ptl_search_op_t op, void *user_ptr)
{
    ptl_me_t me = ptl_le_as_me(le);
    API_ENTER();
    struct ptl_ni *ni = ptl_ni_get(nih);
    API_CHECK(ni && le);
    API_EXIT(ptl_search(ni, pt, &me, false, op, user_ptr));
}

void ptl_entry_unlink(struct ptl_ni *ni, struct ptl_entry *e)
{
    if (e->linked)
        ptl_list_remove(ni, e);
    e->freed = true;
    ptl_entry_settle(ni, e);
}

static int unlink_entry(uint32_t h, bool is_me)
{
    API_ENTER();
    struct ptl_ni *ni;
    struct ptl_entry *e = ptl_entry_get(h, is_me, &ni);
    API_CHECK(e);
    if (e->busy)
        API_RETURN(PTL_IN_USE);
    ptl_entry_unlink(ni, e);
    API_EXIT(PTL_OK);
}

int PtlMEUnlink(ptl_handle_me_t h) { return unlink_entry(h, true); }
int PtlLEUnlink(ptl_handle_le_t h) { return unlink_entry(h, false); }
