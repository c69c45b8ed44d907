/* Progress engine and blocking waits.  All protocol work happens inside
 * Ptl* calls and ptl_lib_progress/ptl_lib_rx, whoever calls them: the
 * program's own calls, a host's progress thread (Linux) or its interrupt
 * path (a Tern node). */
#include "ptl_api.h"
#include "ptl_wait.h"

void ptl_progress_locked(void)
{
    ptl_acks_later_take_locked();
    /* Frames that came before their NI, once it is ready (park.c). */
    if (ptl_g.park_new_ni) {
        ptl_g.park_new_ni = false;
        if (ptl_g.n_parked)
            ptl_park_hand_over_locked();
    }
    uint64_t now = ptl_host_now_ns();
    struct ptl_ni *ni;
    for (unsigned i = 0; (ni = ptl_ni_next_live(&i));) {
        /* One walk for both kinds of timer: each walk was a pass over the
         * busy peers on every Portals call (0.65 us each under TCG). */
        for (struct ptl_peer *p = ptl_peer_walk_first(ni); p; p = ptl_peer_walk_next(ni)) {
            ptl_rel_peer_timers(ni, p, now);
            if (ptl_peer_walk_kept(ni, p))
                ptl_ops_peer_timeout(ni, p, now);
        }
    }
}

/* Also brings ptl_g.exact_due up to date. */
static uint64_t deadline_locked(void)
{
    uint64_t d = UINT64_MAX, exact = UINT64_MAX;
    struct ptl_ni *ni;
    for (unsigned i = 0; (ni = ptl_ni_next_live(&i));) {
        uint64_t x = ptl_rel_deadline(ni, &exact);
        if (x < d)
            d = x;
    }
    ptl_g.exact_due = exact;
    return d;
}

void ptl_lib_progress(void)
{
    ptl_host_lock();
    if (ptl_api_ready())
        ptl_progress_locked();
    ptl_host_unlock();
}

/* Called before every halt and on every frame taken in while a program
 * computes: without a hold begun since the last call, it looks at no peer. */
static void send_held_locked(enum ptl_held_release why)
{
    if (!ptl_g.acks_held)
        return;
    ptl_g.acks_held = false;    /* released below: nothing stays held */
    struct ptl_ni *ni;
    for (unsigned i = 0; (ni = ptl_ni_next_live(&i));)
        ptl_rel_send_held(ni, why);
}

void ptl_lib_send_held(enum ptl_held_release why)
{
    ptl_host_lock();
    if (ptl_api_ready())
        send_held_locked(why);
    ptl_host_unlock();
}

uint64_t ptl_lib_next_deadline(void)
{
    ptl_host_lock();
    uint64_t d = ptl_api_ready() ? deadline_locked() : UINT64_MAX;
    ptl_host_unlock();
    return d;
}

uint64_t ptl_lib_acks_due_by(void)
{
    uint64_t t = ptl_g.init_refs ? __atomic_load_n(&ptl_g.exact_due, __ATOMIC_RELAXED) : UINT64_MAX;
    return t == UINT64_MAX ? t : ptl_rel_grain_up(t);
}

uint64_t ptl_deadline_after_ms(ptl_time_t ms)
{
    if (ms == PTL_TIME_FOREVER)
        return UINT64_MAX;
    return ptl_host_now_ns() + (uint64_t)ms * 1000000u;
}

int ptl_wait(ptl_cond_fn cond, void *arg, uint64_t deadline)
{
    bool first = true;
    uint32_t abort_gen = 0;
    for (;;) {
        ptl_host_lock();
        if (!ptl_api_ready()) {
            ptl_host_unlock();
            return PTL_NO_INIT;
        }
        if (first) {
            abort_gen = ptl_g.abort_gen;
            first = false;
        } else if (ptl_g.abort_gen != abort_gen) {
            ptl_host_unlock();
            return PTL_ABORTED;
        }
        /* The condition first: after a wake it is usually met, and the
         * timers' walk can wait for the next call (it runs below before
         * any halt, so no deadline is slept through). */
        int rc = cond(arg);
        if (rc == PTL_WAIT_AGAIN) {
            ptl_progress_locked();
            rc = cond(arg);
        }
        if (rc != PTL_WAIT_AGAIN) {
            ptl_host_unlock();
            return rc;
        }
        uint64_t now = ptl_host_now_ns();
        if (now >= deadline) {
            ptl_host_unlock();
            return PTL_WAIT_TIMEOUT;
        }
        /* Halting: the program sends nothing meanwhile. */
        send_held_locked(PTL_HELD_WAIT);
        uint64_t d = deadline_locked();
        if (d > deadline)
            d = deadline;
        ptl_host_unlock();
        ptl_host_wait(d);
    }
}

/* Waits in progress (in other threads) return PTL_ABORTED: each notes the
 * generation it started under and checks it after every sleep. */
int PtlAbort(void)
{
    API_ENTER();
    ptl_g.abort_gen++;
    ptl_host_wake();
    API_EXIT(PTL_OK);
}
