#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tern/svc_portals.h>
#include "ptl_me.h"

double svc_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int svc_open(struct svc *s, ptl_pid_t pid, ptl_pt_index_t pt, char *err, int errlen)
{
    ptl_ni_limits_t lim;
    ptl_pt_index_t got;
    int rc;
    if ((rc = PtlInit()) != PTL_OK ||
        (rc = PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, pid, NULL, &lim,
                        &s->ni)) != PTL_OK) {
        snprintf(err, (size_t)errlen, "cannot open the Portals interface (TERN_IFACE=%s): "
                 "error %d", getenv("TERN_IFACE") ? getenv("TERN_IFACE") : "unset", rc);
        return -1;
    }
    if ((rc = PtlEQAlloc(s->ni, 256, &s->eq)) != PTL_OK ||
        (rc = PtlGetPhysId(s->ni, &s->me)) != PTL_OK ||
        (rc = PtlPTAlloc(s->ni, 0, s->eq, pt, &got)) != PTL_OK) {
        snprintf(err, (size_t)errlen, "Portals set-up failed: error %d", rc);
        return -1;
    }
    return 0;
}

int svc_post(struct svc *s, ptl_pt_index_t pt, void *buf, uint64_t len, uint64_t bits,
             uint64_t ignore)
{
    ptl_me_t me = ptl_me_phys(buf, len,
                              PTL_ME_OP_PUT | PTL_ME_USE_ONCE | PTL_ME_EVENT_LINK_DISABLE |
                              PTL_ME_EVENT_UNLINK_DISABLE,
                              bits);
    me.ignore_bits = ignore;
    ptl_handle_me_t h;
    return PtlMEAppend(s->ni, pt, &me, PTL_PRIORITY_LIST, NULL, &h) == PTL_OK ? 0 : -1;
}

/* Events of other kinds that arrive while waiting are kept, not lost. */
static ptl_event_t stash[64];
static int nstash;

int svc_wait(struct svc *s, ptl_event_kind_t kind, ptl_event_t *ev, double secs)
{
    for (int i = 0; i < nstash; i++)
        if (stash[i].type == kind) {
            *ev = stash[i];
            memmove(&stash[i], &stash[i + 1], (size_t)(nstash - i - 1) * sizeof stash[0]);
            nstash--;
            return 0;
        }
    double end = svc_now() + secs;
    for (;;) {
        double left = end - svc_now();
        if (left <= 0)
            return -1;
        unsigned which;
        int rc = PtlEQPoll(&s->eq, 1, (ptl_time_t)(left * 1000) + 1, ev, &which);
        if (rc != PTL_OK && rc != PTL_EQ_DROPPED)
            continue;
        if (ev->type == kind)
            return 0;
        if (nstash < (int)(sizeof stash / sizeof stash[0]))
            stash[nstash++] = *ev;
    }
}

int svc_put(struct svc *s, const void *buf, uint64_t len, uint32_t nid, uint32_t pid,
            ptl_pt_index_t pt, uint64_t bits, double secs)
{
    ptl_md_t md = {.start = (void *)buf, .length = len, .options = 0, .eq_handle = s->eq,
                   .ct_handle = PTL_CT_NONE};
    ptl_handle_md_t h;
    if (PtlMDBind(s->ni, &md, &h) != PTL_OK)
        return -1;
    ptl_process_t target;
    target.phys.nid = nid;
    target.phys.pid = (ptl_pid_t)pid;
    int result = -1;
    if (PtlPut(h, 0, len, PTL_ACK_REQ, target, pt, bits, 0, NULL, 0) == PTL_OK) {
        ptl_event_t ev;
        if (svc_wait(s, PTL_EVENT_ACK, &ev, secs) == 0)
            result = ev.ni_fail_type == PTL_NI_OK ? 0 : (int)ev.ni_fail_type;
    }
    PtlMDRelease(h);
    return result;
}
