/* Several events per system call (TPO_EQ_POLL_MANY, kept in
 * libportals-tern for the next looks), seen from a program on one node with
 * a NIC.  Local events are enough: every PtlMEAppend posts a LINK event to
 * its portal's EQ, with the ME's user_ptr.
 *   - the looks return every event, in order per EQ, across two EQs;
 *   - six events cost one crossing, not six (the node's call counter);
 *   - events kept for an EQ that is then freed are not handed out, and the
 *     freed handle is refused;
 *   - an EQ that dropped events says so on its own look;
 *   - a process with a second thread gets one event per crossing.
 * Prints "eqahead: ok" and exits 0 when all hold; else each failure. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "portals4.h"
#include "../../../include/tern/ptl_syscall.h"
#include "test_check.h"

int ptl_tern_stats(void *lib, struct tern_ptl_node_stats *node);

static int fails;
static ptl_handle_ni_t ni;

static void expect(const char *what, long got, long want)
{
    printf("%-52s %ld%s\n", what, got, got == want ? "" : "  UNEXPECTED");
    fails += got != want;
}

static uint64_t calls(void)
{
    struct tern_ptl_node_stats st;
    memset(&st, 0, sizeof st);
    CHECK(ptl_tern_stats(NULL, &st));
    return st.calls;
}

/* One LINK event on pt's EQ, tagged tag. */
static void link_event(ptl_pt_index_t pt, uintptr_t tag)
{
    static char buf[8];
    ptl_me_t me = {.start = buf, .length = sizeof buf, .ct_handle = PTL_CT_NONE,
                   .uid = PTL_UID_ANY, .options = PTL_ME_OP_PUT,
                   .match_id.phys = {PTL_NID_ANY, PTL_PID_ANY}, .match_bits = tag};
    ptl_handle_me_t h;
    CHECK(PtlMEAppend(ni, pt, &me, PTL_PRIORITY_LIST, (void *)tag, &h));
}

/* Six events, interleaved over two EQs, taken by six looks at both:
 * returns the crossings the looks made. */
static uint64_t six_looks(ptl_handle_eq_t eqs[2], ptl_pt_index_t pts[2], const char *label)
{
    for (uintptr_t i = 1; i <= 3; i++) {
        link_event(pts[0], i);
        link_event(pts[1], 10 + i);
    }
    uintptr_t next[2] = {1, 11};
    uint64_t c0 = calls();
    int order_ok = 1, got = 0;
    for (int k = 0; k < 6; k++) {
        ptl_event_t ev;
        unsigned which = 99;
        int rc = PtlEQPoll(eqs, 2, 0, &ev, &which);
        if (rc != PTL_OK || which > 1 || ev.type != PTL_EVENT_LINK ||
            (uintptr_t)ev.user_ptr != next[which]) {
            printf("%s look %d: rc %d which %u type %d tag %lu\n", label, k, rc, which, ev.type,
                   (unsigned long)(uintptr_t)ev.user_ptr);
            order_ok = 0;
            continue;
        }
        next[which]++;
        got++;
    }
    uint64_t c1 = calls();
    char what[96];
    snprintf(what, sizeof what, "%s: six events in order per EQ", label);
    expect(what, order_ok && got == 6, 1);
    ptl_event_t ev;
    snprintf(what, sizeof what, "%s: then both EQs empty", label);
    expect(what, PtlEQPoll(eqs, 2, 0, &ev, NULL), PTL_EQ_EMPTY);
    return c1 - c0 - 1;            /* the second counter read counts itself */
}

static volatile int stop;
static void *idle_thread(void *arg)
{
    (void)arg;
    while (!stop) {
        struct timespec t = {0, 1000000};
        nanosleep(&t, NULL);
    }
    return NULL;
}

int main(void)
{
    CHECK(PtlInit());
    CHECK(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY, NULL, NULL,
                    &ni));
    ptl_handle_eq_t eqs[2];
    ptl_pt_index_t pts[2];
    for (int i = 0; i < 2; i++) {
        CHECK(PtlEQAlloc(ni, 32, &eqs[i]));
        CHECK(PtlPTAlloc(ni, 0, eqs[i], PTL_PT_ANY, &pts[i]));
    }

    uint64_t crossings = six_looks(eqs, pts, "one thread");
    printf("one thread: 6 looks, %lu crossings\n", (unsigned long)crossings);
    expect("one thread: one crossing for six events", crossings, 1);

    /* PtlEQGet and PtlEQWait take kept events too, in order. */
    link_event(pts[0], 21);
    link_event(pts[0], 22);
    link_event(pts[0], 23);
    ptl_event_t ev;
    expect("PtlEQGet first", PtlEQGet(eqs[0], &ev) == PTL_OK && (uintptr_t)ev.user_ptr == 21, 1);
    expect("PtlEQWait second (kept)", PtlEQWait(eqs[0], &ev) == PTL_OK &&
           (uintptr_t)ev.user_ptr == 22, 1);
    expect("PtlEQGet third (kept)", PtlEQGet(eqs[0], &ev) == PTL_OK &&
           (uintptr_t)ev.user_ptr == 23, 1);
    expect("PtlEQGet then empty", PtlEQGet(eqs[0], &ev), PTL_EQ_EMPTY);

    /* Kept events of a freed EQ go with it. */
    ptl_handle_eq_t gone;
    ptl_pt_index_t gone_pt;
    CHECK(PtlEQAlloc(ni, 32, &gone));
    CHECK(PtlPTAlloc(ni, 0, gone, PTL_PT_ANY, &gone_pt));
    link_event(pts[0], 31);
    link_event(gone_pt, 41);
    link_event(gone_pt, 42);
    ptl_handle_eq_t pair[2] = {eqs[0], gone};
    expect("look at a live and a doomed EQ", PtlEQPoll(pair, 2, 0, &ev, NULL) == PTL_OK &&
           (uintptr_t)ev.user_ptr == 31, 1);
    /* Its portal still has MEs (so PtlPTFree would refuse): the EQ goes
     * first, which the library allows (a portal naming it posts nothing). */
    expect("PtlEQFree with events kept", PtlEQFree(gone), PTL_OK);
    expect("PtlEQGet on the freed EQ", PtlEQGet(gone, &ev), PTL_ARG_INVALID);
    expect("PtlEQPoll on the freed EQ", PtlEQPoll(&gone, 1, 0, &ev, NULL), PTL_ARG_INVALID);
    ptl_handle_eq_t fresh;
    ptl_pt_index_t fresh_pt;
    CHECK(PtlEQAlloc(ni, 32, &fresh));
    CHECK(PtlPTAlloc(ni, 0, fresh, PTL_PT_ANY, &fresh_pt));
    expect("a new EQ starts empty", PtlEQGet(fresh, &ev), PTL_EQ_EMPTY);

    /* An EQ of 2 given 4 events: its own look reports the loss, even when
     * another EQ's look took events before it. */
    ptl_handle_eq_t small;
    ptl_pt_index_t small_pt;
    CHECK(PtlEQAlloc(ni, 2, &small));
    CHECK(PtlPTAlloc(ni, 0, small, PTL_PT_ANY, &small_pt));
    link_event(pts[0], 51);
    link_event(pts[0], 52);
    for (uintptr_t i = 61; i <= 64; i++)
        link_event(small_pt, i);
    ptl_handle_eq_t both[2] = {eqs[0], small};
    unsigned which = 9;
    expect("look: the full EQ's first event", PtlEQPoll(both, 2, 0, &ev, &which) == PTL_OK &&
           which == 0 && (uintptr_t)ev.user_ptr == 51, 1);
    expect("look: its second", PtlEQPoll(both, 2, 0, &ev, &which) == PTL_OK && which == 0 &&
           (uintptr_t)ev.user_ptr == 52, 1);
    int rc = PtlEQPoll(both, 2, 0, &ev, &which);
    expect("look: the small EQ reports PTL_EQ_DROPPED", rc, PTL_EQ_DROPPED);
    expect("  with its oldest kept event (63)", which == 1 && (uintptr_t)ev.user_ptr == 63, 1);
    expect("look: then its last", PtlEQPoll(both, 2, 0, &ev, &which) == PTL_OK &&
           (uintptr_t)ev.user_ptr == 64, 1);

    /* With a second thread alive, one event per crossing. */
    pthread_t t;
    if (pthread_create(&t, NULL, idle_thread, NULL) != 0) {
        printf("pthread_create failed\n");
        return 1;
    }
    crossings = six_looks(eqs, pts, "two threads");
    printf("two threads: 6 looks, %lu crossings\n", (unsigned long)crossings);
    expect("two threads: a crossing per event", crossings, 6);
    stop = 1;
    pthread_join(t, NULL);

    CHECK(PtlNIFini(ni));
    PtlFini();
    if (fails)
        printf("eqahead: %d failures\n", fails);
    else
        printf("eqahead: ok\n");
    return fails != 0;
}
