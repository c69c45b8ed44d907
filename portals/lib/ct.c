/* Counting events.  Every change goes through ct_changed so triggered
 * operations fire the moment a threshold is reached. */
#include "ptl_api.h"
#include "ptl_wait.h"

void ptl_ct_add(struct ptl_ni *ni, struct ptl_ct *ct, ptl_size_t s,
                ptl_size_t f)
{
    if (!ct || !ct->o.in_use)
        return;
    ct->v.success += s;
    ct->v.failure += f;
    ptl_ct_check_triggers(ni, ct);
}

int PtlCTAlloc(ptl_handle_ni_t nih, ptl_handle_ct_t *out)
{
    API_ENTER();
    struct ptl_ni *ni = ptl_ni_get(nih);
    API_CHECK(ni && out);
    for (int i = 0; i < ni->lim.max_cts; i++) {
        struct ptl_ct *ct = &ni->cts[i];
        if (ct->o.in_use)
            continue;
        ct->v.success = ct->v.failure = 0;
        ct->trig = NULL;
        ct->o.in_use = true;
        ct->o.gen = ptl_gen_next(ct->o.gen);
        *out = ptl_ct_handle(ni, ct);
        API_RETURN(PTL_OK);
    }
    API_EXIT(PTL_NO_SPACE);
}

/* Spec: the program sees to it that nothing uses a freed counter; what
 * still names it (MDs, entries, triggered counter updates) counts no
 * more, rather than into whatever counter takes the slot next. */
static void ct_forget(struct ptl_ni *ni, struct ptl_ct *ct)
{
    for (int i = 0; i < ni->lim.max_mds; i++)
        if (ni->mds[i].ct == ct)
            ni->mds[i].ct = NULL;
    for (int i = 0; i < ni->lim.max_entries; i++)
        if (ni->entries[i].ct == ct)
            ni->entries[i].ct = NULL;
    ptl_trig_forget_ct(ni, ct);
}

int PtlCTFree(ptl_handle_ct_t h)
{
    API_ENTER();
    struct ptl_ni *ni;
    struct ptl_ct *ct = ptl_ct_get(h, &ni);
    API_CHECK(ct);
    ptl_trig_cancel_all(ni, ct);
    ct_forget(ni, ct);
    ct->o.in_use = false;
    API_EXIT(PTL_OK);
}

int PtlCTCancelTriggered(ptl_handle_ct_t h)
{
    API_ENTER();
    struct ptl_ni *ni;
    struct ptl_ct *ct = ptl_ct_get(h, &ni);
    API_CHECK(ct);
    ptl_trig_cancel_all(ni, ct);
    API_EXIT(PTL_OK);
}

int PtlCTGet(ptl_handle_ct_t h, ptl_ct_event_t *ev)
{
    API_ENTER();
    ptl_progress_locked();
    struct ptl_ct *ct = ptl_ct_get(h, NULL);
    API_CHECK(ct && ev);
    *ev = ct->v;
    API_EXIT(PTL_OK);
}

static int ct_update(ptl_handle_ct_t h, ptl_ct_event_t v, bool set)
{
    API_ENTER();
    struct ptl_ni *ni;
    struct ptl_ct *ct = ptl_ct_get(h, &ni);
    API_CHECK(ct);
    if (set) {
        ct->v = v;
        ptl_ct_check_triggers(ni, ct);
    } else {
        ptl_ct_add(ni, ct, v.success, v.failure);
    }
    API_EXIT(PTL_OK);
}

int PtlCTSet(ptl_handle_ct_t h, ptl_ct_event_t v) { return ct_update(h, v, true); }
int PtlCTInc(ptl_handle_ct_t h, ptl_ct_event_t v) { return ct_update(h, v, false); }

struct ctpoll_arg {
    const ptl_handle_ct_t *h;
    const ptl_size_t *tests;
    unsigned n;
    ptl_ct_event_t *ev;
    unsigned *which;
};

static int ctpoll_cond(void *p)
{
    struct ctpoll_arg *a = p;
    for (unsigned i = 0; i < a->n; i++) {
        struct ptl_ct *ct = ptl_ct_get(a->h[i], NULL);
        if (!ct)
            return PTL_ARG_INVALID;
        if (ct->v.success + ct->v.failure >= a->tests[i]) {
            if (a->ev)
                *a->ev = ct->v;
            if (a->which)
                *a->which = i;
            return PTL_OK;
        }
    }
    return PTL_WAIT_AGAIN;
}

int PtlCTWait(ptl_handle_ct_t h, ptl_size_t test, ptl_ct_event_t *ev)
{
    if (!ptl_api_ready())
        return PTL_NO_INIT;
    struct ctpoll_arg a = { &h, &test, 1, ev, NULL };
    int rc = ptl_wait(ctpoll_cond, &a, UINT64_MAX);
    return rc == PTL_WAIT_TIMEOUT ? PTL_CT_NONE_REACHED : rc;
}

int PtlCTPoll(const ptl_handle_ct_t *hs, const ptl_size_t *tests,
              unsigned size, ptl_time_t timeout, ptl_ct_event_t *ev,
              unsigned *which)
{
    if (!ptl_api_ready())
        return PTL_NO_INIT;
    if (!hs || !tests || !size)
        return PTL_ARG_INVALID;
    struct ctpoll_arg a = { hs, tests, size, ev, which };
    int rc = ptl_wait(ctpoll_cond, &a, ptl_deadline_after_ms(timeout));
    return rc == PTL_WAIT_TIMEOUT ? PTL_CT_NONE_REACHED : rc;
}
