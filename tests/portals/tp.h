/* Helpers shared by the Portals unit tests (in-process test host). */
#ifndef TP_H
#define TP_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "portals4.h"
#include "ptl_lib.h"
#include "ptl_test_host.h"

#define CHECK(c)                                                          \
    do {                                                                  \
        if (!(c)) {                                                       \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__,        \
                    __LINE__, #c);                                        \
            exit(1);                                                      \
        }                                                                 \
    } while (0)

#define CHECK_RC(expr, want)                                              \
    do {                                                                  \
        int rc_ = (expr);                                                 \
        if (rc_ != (want)) {                                              \
            fprintf(stderr, "%s:%d: %s returned %d, expected %d\n",       \
                    __FILE__, __LINE__, #expr, rc_, (int)(want));         \
            exit(1);                                                      \
        }                                                                 \
    } while (0)

#define OK(expr) CHECK_RC(expr, PTL_OK)

struct node {
    unsigned iface;
    ptl_handle_ni_t ni;
    ptl_handle_eq_t eq;
    ptl_process_t id;
    ptl_ni_limits_t lim;
};

static inline ptl_process_t tp_phys(unsigned iface)
{
    ptl_process_t p;
    p.phys.nid = PTL_TEST_NID(iface);
    p.phys.pid = PTL_TEST_PID;
    return p;
}

static inline void tp_node(struct node *n, unsigned iface, unsigned opts)
{
    memset(n, 0, sizeof(*n));
    n->iface = iface;
    OK(PtlNIInit(iface, opts, PTL_PID_ANY, NULL, &n->lim, &n->ni));
    OK(PtlEQAlloc(n->ni, 1024, &n->eq));
    OK(PtlGetPhysId(n->ni, &n->id));
}

static inline ptl_pt_index_t tp_pt(struct node *n, unsigned opts)
{
    ptl_pt_index_t pt;
    OK(PtlPTAlloc(n->ni, opts, n->eq, PTL_PT_ANY, &pt));
    return pt;
}

static inline ptl_handle_md_t tp_md(struct node *n, void *buf, ptl_size_t len,
                                    unsigned opts, ptl_handle_ct_t ct)
{
    ptl_md_t md = { .start = buf, .length = len, .options = opts,
                    .eq_handle = n->eq, .ct_handle = ct };
    ptl_handle_md_t h;
    OK(PtlMDBind(n->ni, &md, &h));
    return h;
}

static inline ptl_me_t tp_me(void *buf, ptl_size_t len, unsigned opts,
                             ptl_match_bits_t bits, ptl_match_bits_t ignore)
{
    ptl_me_t me;
    memset(&me, 0, sizeof(me));
    me.start = buf;
    me.length = len;
    me.ct_handle = PTL_CT_NONE;
    me.uid = PTL_UID_ANY;
    me.options = opts;
    me.match_id.phys.nid = PTL_NID_ANY;
    me.match_id.phys.pid = PTL_PID_ANY;
    me.match_bits = bits;
    me.ignore_bits = ignore;
    return me;
}

static const char *tp_kind(int k)
{
    static const char *n[] = { "GET", "GET_OVERFLOW", "PUT", "PUT_OVERFLOW",
                               "ATOMIC", "ATOMIC_OVERFLOW", "FETCH_ATOMIC",
                               "FETCH_ATOMIC_OVERFLOW", "REPLY", "SEND", "ACK",
                               "PT_DISABLED", "LINK", "AUTO_UNLINK",
                               "AUTO_FREE", "SEARCH" };
    return k >= 0 && k < 16 ? n[k] : "?";
}

/* Next event on eq (waits up to 20 s of simulated time); must be `kind`. */
#define EXPECT_EVENT(eq, kind) tp_expect(eq, kind, __FILE__, __LINE__)
static inline ptl_event_t tp_expect(ptl_handle_eq_t eq, ptl_event_kind_t kind,
                                    const char *file, int line)
{
    ptl_event_t ev;
    unsigned which;
    int rc = PtlEQPoll(&eq, 1, 20000, &ev, &which);
    if (rc != PTL_OK) {
        fprintf(stderr, "%s:%d: expected event %s, PtlEQPoll returned %d\n",
                file, line, tp_kind(kind), rc);
        exit(1);
    }
    if (ev.type != kind) {
        fprintf(stderr, "%s:%d: expected event %s, got %s (fail %d)\n", file,
                line, tp_kind(kind), tp_kind(ev.type), ev.ni_fail_type);
        exit(1);
    }
    return ev;
}

/* The next two events on eq, one of kind a and one of kind b, in either
 * order: an ACK carried in an answer's header is taken in by the next
 * progress step (ptl_op_acked_later), after the answer's own event or
 * before it, as the looks fall.  *ea and *eb get them. */
#define EXPECT_EITHER(eq, a, b, ea, eb) tp_expect_either(eq, a, b, ea, eb, __FILE__, __LINE__)
static inline void tp_expect_either(ptl_handle_eq_t eq, ptl_event_kind_t a, ptl_event_kind_t b,
                                    ptl_event_t *ea, ptl_event_t *eb, const char *file, int line)
{
    bool got_a = false, got_b = false;
    for (int i = 0; i < 2; i++) {
        ptl_event_t ev;
        unsigned which;
        int rc = PtlEQPoll(&eq, 1, 20000, &ev, &which);
        if (rc != PTL_OK) {
            fprintf(stderr, "%s:%d: expected events %s and %s, PtlEQPoll returned %d\n",
                    file, line, tp_kind(a), tp_kind(b), rc);
            exit(1);
        }
        if (ev.type == a && !got_a) {
            got_a = true;
            *ea = ev;
        } else if (ev.type == b && !got_b) {
            got_b = true;
            *eb = ev;
        } else {
            fprintf(stderr, "%s:%d: expected events %s and %s, got %s (fail %d)\n", file,
                    line, tp_kind(a), tp_kind(b), tp_kind(ev.type), ev.ni_fail_type);
            exit(1);
        }
    }
}

/* A put of len bytes from md that must be sent and acknowledged whole. */
static inline void tp_put_acked(struct node *c, ptl_handle_md_t md, ptl_process_t t,
                                ptl_pt_index_t pt, size_t len)
{
    OK(PtlPut(md, 0, len, PTL_ACK_REQ, t, pt, 1, 0, NULL, 0));
    ptl_event_t ev = EXPECT_EVENT(c->eq, PTL_EVENT_SEND);
    CHECK(ev.ni_fail_type == PTL_NI_OK);
    ev = EXPECT_EVENT(c->eq, PTL_EVENT_ACK);
    CHECK(ev.ni_fail_type == PTL_NI_OK && ev.mlength == len);
}

#define EXPECT_NO_EVENT(eq) tp_expect_none(eq, __FILE__, __LINE__)
static inline void tp_expect_none(ptl_handle_eq_t eq, const char *file,
                                  int line)
{
    ptl_event_t ev;
    unsigned which;
    int rc = PtlEQPoll(&eq, 1, 100, &ev, &which);
    if (rc != PTL_EQ_EMPTY) {
        fprintf(stderr, "%s:%d: expected no event, got rc %d type %s\n", file,
                line, rc, rc == PTL_OK ? tp_kind(ev.type) : "-");
        exit(1);
    }
}

static inline void tp_fill(void *buf, size_t n, unsigned seed)
{
    unsigned char *p = buf;
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(seed + i * 7 + (i >> 8));
}

#endif
