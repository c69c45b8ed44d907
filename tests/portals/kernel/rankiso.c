/* Two ranks of one node (qemu/run-node --ranks 2 with a NIC, or yod -ppn 2)
 * and Portals: each its own interface and pid (16 + rank), messages between
 * them arrive in the right memory with events in the receiver's own
 * addresses, and neither reaches the other's memory or handles.
 *
 * Rank 0 posts a put entry over `inbox` and an MD over `secret`, and sends
 * rank 1 its handles (a put into rank 1's inbox).  Rank 1 then tries them
 * all (each must fail with PTL_ARG_INVALID), tries buffers that are not its
 * own memory (the kernel's direct map, past its region), and finally puts a
 * greeting into rank 0's inbox the proper way.  Rank 0 checks the greeting,
 * the event's start (its own &inbox), its secret intact and its handles
 * still working.  Exit status: the number of unexpected results. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "portals4.h"

#define PT 7
#define DIRECT_MAP ((void *)0xffff800000100000UL)

struct handles {
    ptl_handle_ni_t ni;
    ptl_handle_md_t md;
    ptl_handle_eq_t eq;
    ptl_handle_me_t me;
    ptl_handle_ct_t ct;
};

static int fails, rank;
static unsigned char inbox[4096], secret[4096], out[4096];

static void expect(const char *what, long got, long want)
{
    printf("rank %d: %-40s %ld%s\n", rank, what, got, got == want ? "" : "  UNEXPECTED");
    fails += got != want;
}

static void wait_event(ptl_handle_eq_t eq, ptl_event_kind_t kind, ptl_event_t *ev)
{
    for (;;) {
        int rc = PtlEQWait(eq, ev);
        if (rc != PTL_OK) {
            expect("PtlEQWait", rc, PTL_OK);
            exit(fails);
        }
        if (ev->type == kind)
            return;
    }
}

int main(void)
{
    const char *r = getenv("TERN_RANK");
    rank = r ? atoi(r) : 0;
    ptl_handle_ni_t ni;
    ptl_handle_eq_t eq;
    ptl_handle_md_t md;
    ptl_handle_me_t me;
    ptl_handle_ct_t ct;
    ptl_process_t id, peer;
    ptl_event_t ev;
    if (PtlInit() != PTL_OK ||
        PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY, NULL, NULL,
                  &ni) != PTL_OK ||
        PtlGetId(ni, &id) != PTL_OK || PtlEQAlloc(ni, 64, &eq) != PTL_OK ||
        PtlCTAlloc(ni, &ct) != PTL_OK) {
        printf("rank %d: Portals set-up failed\n", rank);
        return 1;
    }
    expect("my pid (16 + rank)", id.phys.pid, 16 + rank);
    const char *tp = getenv("TERN_PID");          /* under yod: the loader's word for it */
    if (tp)
        expect("my pid is TERN_PID", id.phys.pid, atol(tp));
    peer.phys.nid = id.phys.nid;
    peer.phys.pid = 16 + (1 - rank);
    ptl_pt_index_t pt;
    if (PtlPTAlloc(ni, 0, eq, PT, &pt) != PTL_OK)
        return 1;
    ptl_me_t m = {.start = inbox, .length = sizeof inbox, .ct_handle = PTL_CT_NONE,
                  .uid = PTL_UID_ANY, .options = PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE,
                  .match_id = {.phys = {PTL_NID_ANY, PTL_PID_ANY}}};
    if (PtlMEAppend(ni, PT, &m, PTL_PRIORITY_LIST, NULL, &me) != PTL_OK)
        return 1;
    ptl_md_t d = {.start = out, .length = sizeof out, .eq_handle = eq, .ct_handle = PTL_CT_NONE};
    if (PtlMDBind(ni, &d, &md) != PTL_OK)
        return 1;
    if (rank == 0) {
        memset(secret, 0x5A, sizeof secret);
        ptl_md_t s = {.start = secret, .length = sizeof secret, .eq_handle = PTL_EQ_NONE,
                      .ct_handle = PTL_CT_NONE};
        ptl_handle_md_t smd;
        expect("PtlMDBind(secret)", PtlMDBind(ni, &s, &smd), PTL_OK);
        struct handles h = {ni, smd, eq, me, ct};
        memcpy(out, &h, sizeof h);
        /* Again until rank 1 has its entry posted (until then the put is
         * dropped there: the acknowledgement says so). */
        for (int tries = 0;; tries++) {
            if (PtlPut(md, 0, sizeof h, PTL_ACK_REQ, peer, PT, 0, 0, NULL, 0) != PTL_OK)
                return 1;
            wait_event(eq, PTL_EVENT_ACK, &ev);
            if (ev.ni_fail_type == PTL_NI_OK)
                break;
            if (tries == 1000) {
                expect("handles delivered to rank 1", ev.ni_fail_type, PTL_NI_OK);
                return fails;
            }
            struct timespec t = {0, 1000000};
            nanosleep(&t, NULL);
        }
        wait_event(eq, PTL_EVENT_PUT, &ev);           /* rank 1's greeting */
        expect("greeting's event start is my &inbox", ev.start == (void *)inbox, 1);
        expect("greeting's length", (long)ev.mlength, 32);
        expect("greeting's initiator pid", ev.initiator.phys.pid, 17);
        expect("greeting's bytes", memcmp(inbox, "hello from rank 1, by the rules", 32), 0);
        int intact = 1;
        for (size_t i = 0; i < sizeof secret; i++)
            intact &= secret[i] == 0x5A;
        expect("secret intact", intact, 1);
        ptl_ct_event_t c;
        expect("my CT still mine (PtlCTGet)", PtlCTGet(ct, &c), PTL_OK);
        expect("my secret MD still mine (release)", PtlMDRelease(smd), PTL_OK);
        expect("my ME still mine (unlink)", PtlMEUnlink(me), PTL_OK);
    } else {
        wait_event(eq, PTL_EVENT_PUT, &ev);
        expect("handles' event start is my &inbox", ev.start == (void *)inbox, 1);
        struct handles h;
        memcpy(&h, inbox, sizeof h);
        ptl_md_t s = {.start = out, .length = 64, .eq_handle = PTL_EQ_NONE,
                      .ct_handle = PTL_CT_NONE};
        ptl_handle_md_t x;
        ptl_ct_event_t c;
        ptl_event_t e;
        expect("rank 0's NI: PtlMDBind", PtlMDBind(h.ni, &s, &x), PTL_ARG_INVALID);
        expect("rank 0's secret MD: PtlPut from it",
               PtlPut(h.md, 0, 64, PTL_NO_ACK_REQ, id, PT, 0, 0, NULL, 0), PTL_ARG_INVALID);
        expect("rank 0's EQ: PtlEQGet", PtlEQGet(h.eq, &e), PTL_ARG_INVALID);
        expect("rank 0's CT: PtlCTGet", PtlCTGet(h.ct, &c), PTL_ARG_INVALID);
        expect("rank 0's ME: PtlMEUnlink", PtlMEUnlink(h.me), PTL_ARG_INVALID);
        expect("rank 0's MD: PtlMDRelease", PtlMDRelease(h.md), PTL_ARG_INVALID);
        expect("rank 0's NI: PtlNIFini", PtlNIFini(h.ni), PTL_ARG_INVALID);
        /* Memory that is not this rank's: the kernel's map of all memory,
         * past the top of its region, a buffer running off the end. */
        ptl_md_t bad = s;
        bad.start = DIRECT_MAP;
        expect("MD on the direct map", PtlMDBind(ni, &bad, &x), PTL_ARG_INVALID);
        bad.start = (void *)0x7ffffffff000UL;
        expect("MD on an unmapped address", PtlMDBind(ni, &bad, &x), PTL_ARG_INVALID);
        bad.start = inbox;
        bad.length = (ptl_size_t)1 << 40;
        expect("MD running past my memory", PtlMDBind(ni, &bad, &x), PTL_ARG_INVALID);
        bad.start = NULL;
        bad.length = PTL_SIZE_MAX;
        expect("MD of the whole address space", PtlMDBind(ni, &bad, &x), PTL_ARG_INVALID);
        ptl_iovec_t iov[2] = {{out, 16}, {DIRECT_MAP, 16}};
        ptl_me_t bm = m;
        bm.start = iov;
        bm.length = 2;
        bm.options |= PTL_IOVEC;
        expect("ME iovec with a direct-map piece",
               PtlMEAppend(ni, PT, &bm, PTL_PRIORITY_LIST, NULL, &x), PTL_ARG_INVALID);
        ptl_interface_t kernel_iface = 1;
        expect("NIInit on the kernel's interface",
               PtlNIInit(kernel_iface, PTL_NI_MATCHING | PTL_NI_LOGICAL, PTL_PID_ANY, NULL, NULL,
                         &x), PTL_ARG_INVALID);
        expect("NIInit as rank 0's pid",
               PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_NO_MATCHING | PTL_NI_PHYSICAL, 16, NULL, NULL,
                         &x), PTL_ARG_INVALID);
        memcpy(out, "hello from rank 1, by the rules", 32);
        expect("PtlPut(greeting to rank 0)",
               PtlPut(md, 0, 32, PTL_ACK_REQ, peer, PT, 0, 0, NULL, 0), PTL_OK);
        wait_event(eq, PTL_EVENT_ACK, &ev);
    }
    PtlNIFini(ni);
    PtlFini();
    printf("rank %d: rankiso %s\n", rank, fails ? "FAILED" : "ok");
    return fails;
}
