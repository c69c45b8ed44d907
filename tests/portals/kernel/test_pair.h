/* Two ranks under yod, each with one put entry: the set-up the kernel-node
 * Portals test programs for a pair of ranks share (ackhold, latestart). */
#ifndef TEST_PAIR_H
#define TEST_PAIR_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "portals4.h"
#include "test_check.h"

struct pair {
    ptl_handle_ni_t ni;
    ptl_handle_eq_t eq;
    ptl_pt_index_t pt;
    ptl_handle_md_t md;            /* over the message to send */
    ptl_process_t peer;            /* the other rank */
};

/* PtlInit and a matching physical NI; an event queue; portal 0 with a
 * use-once put entry over buf (match bits 7); an MD over msg; the other
 * rank's nid and pid from TERN_MAP (rank order, "nid" or "nid:pid" each,
 * docs/job-interface.md; a bare nid has our pid).  Exits 1 without a map
 * of two ranks. */
static inline void pair_setup(struct pair *p, int rank, void *buf, size_t len, void *msg,
                              size_t msg_len)
{
    CHECK(PtlInit());
    CHECK(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY, NULL, NULL,
                    &p->ni));
    CHECK(PtlEQAlloc(p->ni, 64, &p->eq));
    CHECK(PtlPTAlloc(p->ni, 0, p->eq, 0, &p->pt));
    ptl_me_t me = {.start = buf, .length = len, .ct_handle = PTL_CT_NONE,
                   .uid = PTL_UID_ANY,
                   .options = PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE | PTL_ME_USE_ONCE,
                   .match_id.phys = {PTL_NID_ANY, PTL_PID_ANY}, .match_bits = 7};
    ptl_handle_me_t h;
    CHECK(PtlMEAppend(p->ni, p->pt, &me, PTL_PRIORITY_LIST, NULL, &h));
    ptl_md_t md = {.start = msg, .length = msg_len, .eq_handle = p->eq,
                   .ct_handle = PTL_CT_NONE};
    CHECK(PtlMDBind(p->ni, &md, &p->md));
    const char *map = getenv("TERN_MAP");
    if (!map || !strchr(map, ',')) {
        printf("no TERN_MAP of two ranks\n");
        exit(1);
    }
    const char *other = rank == 0 ? strchr(map, ',') + 1 : map;
    char *end;
    ptl_process_t me_id;
    CHECK(PtlGetPhysId(p->ni, &me_id));
    p->peer.phys.nid = (ptl_nid_t)strtoul(other, &end, 10);
    p->peer.phys.pid = *end == ':' ? (ptl_pid_t)strtoul(end + 1, NULL, 10) : me_id.phys.pid;
}
#endif
