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
    /* Freed longest ago first, as MDs and entries (freeq.c): a kept
     * handle of a freed counter must not name the next one. */
    uint32_t i = ptl_freeq_take(&ni->ct_free);
    if (i == PTL_FREEQ_NONE)
        API_RETURN(PTL_NO_SPACE);
    struct ptl_ct *ct = &ni->cts[i];
    ct->v.success = ct->v.failure = 0;
    ct->trig = NULL;
    ct->o.in_use = true;
    ct->o.gen = ptl_gen_next(ct->o.gen);
    *out = ptl_ct_handle(ni, ct);
    API_EXIT(PTL_OK);
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
    ptl_freeq_put(&ni->ct_free, (uint32_t)(ct - ni->cts));
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
    struct ptl_ni *ni = NULL;
    struct ptl_ct *ct = ptl_ct_get(h, &ni);
    ptl_ni_receiving(ni);             /* NULL for a bad handle */
    ptl_progress_locked();
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

/* A blocking wait or poll on counters, while it is in progress: the
 * counters it names (the first CT_NOTED) and their tests, and the count
 * that met a test first.  A waiter can wake well after its test was met
 * (a Linux program thread behind the progress thread on a busy host), by
 * when the counter may have moved on; it returns the count at that moment
 * rather than the one it finds.  Either is a count the counter had during
 * the call; this one is what a program that waits for "n" expects to see
 * (the reference tests' test_flowctl_nohdr requires exactly n).  The
 * waiters are on the callers' stacks, linked here under the library lock;
 * a waiter is found by its counter's address, and its handles are checked
 * again before it returns, so a counter freed meanwhile is never
 * reported. */
#define CT_NOTED 8
struct ct_waiter {
    struct ct_waiter *next;
    unsigned n;                      /* counters noted */
    struct ptl_ct *ct[CT_NOTED];
    ptl_size_t test[CT_NOTED];
    bool hit;
    unsigned which;
    ptl_ct_event_t at;
};
static struct ct_waiter *waiters;

void ptl_ct_note_waiters(struct ptl_ct *ct)
{
    for (struct ct_waiter *w = waiters; w; w = w->next)
        for (unsigned i = 0; i < w->n && !w->hit; i++)
            if (w->ct[i] == ct && ct->v.success + ct->v.failure >= w->test[i]) {
                w->hit = true;
                w->which = i;
                w->at = ct->v;
            }
}

void ptl_ct_forget_waiters(struct ptl_ni *ni)
{
    if (!ni->cts)
        return;
    uintptr_t lo = (uintptr_t)ni->cts, hi = (uintptr_t)(ni->cts + ni->lim.max_cts);
    for (struct ct_waiter **pp = &waiters; *pp;) {
        struct ct_waiter *w = *pp;
        bool ours = false;
        for (unsigned i = 0; i < w->n; i++)
            ours |= (uintptr_t)w->ct[i] >= lo && (uintptr_t)w->ct[i] < hi;
        if (ours)
            *pp = w->next;    /* its wait, if it still runs, finds its handles gone */
        else
            pp = &w->next;
    }
}

static void waiter_add(struct ct_waiter *w, const ptl_handle_ct_t *h, const ptl_size_t *tests,
                       unsigned n)
{
    ptl_host_lock();
    w->n = 0;
    w->hit = false;
    for (unsigned i = 0; i < n && i < CT_NOTED; i++) {
        struct ptl_ct *ct = ptl_ct_get(h[i], NULL);
        if (!ct)
            break;    /* the wait says PTL_ARG_INVALID */
        w->ct[i] = ct;
        w->test[i] = tests[i];
        w->n = i + 1;
    }
    w->next = waiters;
    waiters = w;
    /* A test met already: the first such, at its count now. */
    for (unsigned i = 0; i < w->n && !w->hit; i++)
        ptl_ct_note_waiters(w->ct[i]);
    ptl_host_unlock();
}

static void waiter_remove(struct ct_waiter *w)
{
    ptl_host_lock();
    for (struct ct_waiter **pp = &waiters; *pp; pp = &(*pp)->next)
        if (*pp == w) {
            *pp = w->next;
            break;
        }
    ptl_host_unlock();
}

struct ctpoll_arg {
    const ptl_handle_ct_t *h;
    const ptl_size_t *tests;
    unsigned n;
    ptl_ct_event_t *ev;
    unsigned *which;
    struct ct_waiter *w;
};

static int ctpoll_cond(void *p)
{
    struct ctpoll_arg *a = p;
    for (unsigned i = 0; i < a->n; i++) {
        struct ptl_ni *ni;
        struct ptl_ct *ct = ptl_ct_get(a->h[i], &ni);
        if (!ct)
            return PTL_ARG_INVALID;
        ptl_ni_receiving(ni);
        bool noted = i < a->w->n;
        if (noted ? a->w->hit && a->w->which == i
                  : ct->v.success + ct->v.failure >= a->tests[i]) {
            if (a->ev)
                *a->ev = noted ? a->w->at : ct->v;
            if (a->which)
                *a->which = i;
            return PTL_OK;
        }
    }
    return PTL_WAIT_AGAIN;
}

static int ct_wait(struct ctpoll_arg *a, uint64_t deadline)
{
    struct ct_waiter w;
    a->w = &w;
    waiter_add(&w, a->h, a->tests, a->n);
    int rc = ptl_wait(ctpoll_cond, a, deadline);
    waiter_remove(&w);
    return rc == PTL_WAIT_TIMEOUT ? PTL_CT_NONE_REACHED : rc;
}

int PtlCTWait(ptl_handle_ct_t h, ptl_size_t test, ptl_ct_event_t *ev)
{
    if (!ptl_api_ready())
        return PTL_NO_INIT;
    struct ctpoll_arg a = { &h, &test, 1, ev, NULL, NULL };
    return ct_wait(&a, UINT64_MAX);
}

int PtlCTPoll(const ptl_handle_ct_t *hs, const ptl_size_t *tests,
              unsigned size, ptl_time_t timeout, ptl_ct_event_t *ev,
              unsigned *which)
{
    if (!ptl_api_ready())
        return PTL_NO_INIT;
    if (!hs || !tests || !size)
        return PTL_ARG_INVALID;
    struct ctpoll_arg a = { hs, tests, size, ev, which, NULL };
    return ct_wait(&a, ptl_deadline_after_ms(timeout));
}
