/* Event queues: a ring per EQ.  An EQ holds the `count` events the program
 * asked for; a new event beyond that overwrites the oldest and the next
 * PtlEQGet reports PTL_EQ_DROPPED (spec: circular EQ).  Beyond the count the
 * ring keeps room for one PTL_EVENT_PT_DISABLED per portal (the spec's
 * advice for PtlEQAlloc), so that a flow-controlled portal that disables
 * itself because its EQ is full can still say so. */
#include "ptl_api.h"
#include "ptl_wait.h"

void ptl_eq_post(struct ptl_eq *eq, const ptl_event_t *ev)
{
    if (!eq || !eq->o.in_use)
        return;
    uint32_t room = ev->type == PTL_EVENT_PT_DISABLED ? eq->size : eq->cap;
    if (eq->count >= room) {
        eq->head = (eq->head + 1) % eq->size;
        eq->count--;
        eq->dropped = true;
    }
    eq->ring[(eq->head + eq->count) % eq->size] = *ev;
    eq->count++;
    PTL_TRACE(TP_EVENT);
}

int PtlEQAlloc(ptl_handle_ni_t nih, ptl_size_t count, ptl_handle_eq_t *out)
{
    API_ENTER();
    struct ptl_ni *ni = ptl_ni_get(nih);
    API_CHECK(ni && out && count > 0 && count < (1u << 24));
    /* Freed longest ago first (freeq.c): a kept handle of a freed EQ
     * must not name the next one. */
    uint32_t i = ptl_freeq_take(&ni->eq_free);
    if (i == PTL_FREEQ_NONE)
        API_RETURN(PTL_NO_SPACE);
    struct ptl_eq *eq = &ni->eqs[i];
    uint32_t size = (uint32_t)count + (uint32_t)ni->lim.max_pt_index + 1;
    eq->ring = ptl_zalloc(sizeof(ptl_event_t) * size);
    if (!eq->ring) {
        ptl_freeq_put(&ni->eq_free, i);
        API_RETURN(PTL_NO_SPACE);
    }
    eq->size = size;
    eq->cap = (uint32_t)count;
    eq->head = eq->count = 0;
    eq->dropped = false;
    eq->o.in_use = true;
    eq->o.gen = ptl_gen_next(eq->o.gen);
    *out = ptl_eq_handle(ni, eq);
    API_EXIT(PTL_OK);
}

int PtlEQFree(ptl_handle_eq_t h)
{
    API_ENTER();
    struct ptl_ni *ni;
    struct ptl_eq *eq = ptl_eq_get(h, &ni);
    API_CHECK(eq);
    /* Spec: the program sees to it that nothing uses a freed EQ; what
     * still names it (a portal, an MD) posts no more events, rather
     * than into whatever EQ takes the slot next. */
    for (int i = 0; i <= ni->lim.max_pt_index; i++)
        if (ni->pts[i].eq == eq)
            ni->pts[i].eq = NULL;
    for (int i = 0; i < ni->lim.max_mds; i++)
        if (ni->mds[i].eq == eq)
            ni->mds[i].eq = NULL;
    ptl_host_free(eq->ring);
    eq->ring = NULL;
    eq->o.in_use = false;
    ptl_freeq_put(&ni->eq_free, (uint32_t)(eq - ni->eqs));
    API_EXIT(PTL_OK);
}

static int eq_take(struct ptl_eq *eq, ptl_event_t *ev)
{
    if (!eq->count)
        return PTL_EQ_EMPTY;
    *ev = eq->ring[eq->head];
    eq->head = (eq->head + 1) % eq->size;
    eq->count--;
    if (eq->dropped) {
        eq->dropped = false;
        return PTL_EQ_DROPPED;
    }
    return PTL_OK;
}

bool ptl_lib_eq_pending(uint32_t h)
{
    ptl_host_lock();
    struct ptl_eq *eq = ptl_api_ready() ? ptl_eq_get(h, NULL) : NULL;
    bool any = eq && eq->count;
    ptl_host_unlock();
    return any;
}

int PtlEQGet(ptl_handle_eq_t h, ptl_event_t *ev)
{
    API_ENTER();
    struct ptl_ni *ni = NULL;
    struct ptl_eq *eq = ptl_eq_get(h, &ni);
    ptl_ni_receiving(ni);             /* NULL for a bad handle */
    ptl_progress_locked();
    API_CHECK(eq && ev);
    API_EXIT(eq_take(eq, ev));
}

struct poll_arg {
    const ptl_handle_eq_t *h;
    unsigned n, start;
    ptl_event_t *ev;
    unsigned *which;
};

static int poll_cond(void *p)
{
    struct poll_arg *a = p;
    for (unsigned k = 0; k < a->n; k++) {
        unsigned i = (a->start + k) % a->n;
        struct ptl_ni *ni;
        struct ptl_eq *eq = ptl_eq_get(a->h[i], &ni);
        if (!eq)
            return PTL_ARG_INVALID;
        ptl_ni_receiving(ni);
        int rc = eq_take(eq, a->ev);
        if (rc != PTL_EQ_EMPTY) {
            if (a->which)
                *a->which = i;
            a->start = i + 1;
            return rc;
        }
    }
    return PTL_WAIT_AGAIN;
}

int PtlEQPoll(const ptl_handle_eq_t *hs, unsigned size, ptl_time_t timeout,
              ptl_event_t *ev, unsigned *which)
{
    if (!ptl_api_ready())
        return PTL_NO_INIT;
    if (!hs || !size || !ev)
        return PTL_ARG_INVALID;
    struct poll_arg a = { hs, size, 0, ev, which };
    int rc = ptl_wait(poll_cond, &a, ptl_deadline_after_ms(timeout));
    return rc == PTL_WAIT_TIMEOUT ? PTL_EQ_EMPTY : rc;
}

int PtlEQWait(ptl_handle_eq_t h, ptl_event_t *ev)
{
    if (!ptl_api_ready())
        return PTL_NO_INIT;
    if (!ev)
        return PTL_ARG_INVALID;
    struct poll_arg a = { &h, 1, 0, ev, NULL };
    int rc = ptl_wait(poll_cond, &a, UINT64_MAX);
    return rc == PTL_WAIT_TIMEOUT ? PTL_EQ_EMPTY : rc;
}
