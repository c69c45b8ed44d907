/* Every rank of one node (qemu/run-node --ranks K with a NIC) puts a message
 * to the next rank (rank + 1 mod K) and takes one from the previous: K ranks,
 * each with an interface of its own, all of them using Portals at once.
 * Each message is 100000 bytes made from its sender's rank and is checked
 * byte by byte.  Prints "rank R: from rank P ok" or what was wrong; exit
 * status: 0 when the message arrived whole from the right rank.
 * "rankring piece": each rank's inbox is memory mapped PROT_NONE and then
 * opened (a reservation's committed piece, as a thread's stack is), and
 * the put's event must give the inbox's own address as its start. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include "portals4.h"
#include "test_clock.h"

#define PT 9
#define LEN 100000

static unsigned char inbox_static[LEN], out[LEN];

static unsigned char byte_of(int rank, size_t i) { return (unsigned char)(rank * 37 + i * 11 + (i >> 9)); }

int main(int argc, char **argv)
{
    const char *r = getenv("TERN_RANK"), *s = getenv("TERN_SIZE");
    int rank = r ? atoi(r) : 0, size = s ? atoi(s) : 1;
    unsigned char *inbox = inbox_static;
    if (argc > 1 && !strcmp(argv[1], "piece")) {
        inbox = mmap(NULL, LEN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (inbox == MAP_FAILED || mprotect(inbox, LEN, PROT_READ | PROT_WRITE)) {
            printf("rank %d: no reserved piece\n", rank);
            return 1;
        }
    }
    void *start = NULL;
    ptl_handle_ni_t ni;
    ptl_handle_eq_t eq;
    ptl_handle_md_t md;
    ptl_handle_me_t me;
    ptl_process_t id, next;
    ptl_pt_index_t pt;
    int rc = PtlInit();
    if (rc != PTL_OK) {
        printf("rank %d: PtlInit failed (%d)\n", rank, rc);
        return 1;
    }
    if (PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY, NULL, NULL,
                  &ni) != PTL_OK || PtlGetId(ni, &id) != PTL_OK ||
        PtlEQAlloc(ni, 64, &eq) != PTL_OK || PtlPTAlloc(ni, 0, eq, PT, &pt) != PTL_OK) {
        printf("rank %d: Portals set-up failed\n", rank);
        return 1;
    }
    ptl_me_t m = {.start = inbox, .length = LEN, .ct_handle = PTL_CT_NONE,
                  .uid = PTL_UID_ANY, .options = PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE,
                  .match_id = {.phys = {PTL_NID_ANY, PTL_PID_ANY}}};
    if (PtlMEAppend(ni, PT, &m, PTL_PRIORITY_LIST, NULL, &me) != PTL_OK)
        return 1;
    for (size_t i = 0; i < LEN; i++)
        out[i] = byte_of(rank, i);
    ptl_md_t d = {.start = out, .length = LEN, .eq_handle = eq, .ct_handle = PTL_CT_NONE};
    if (PtlMDBind(ni, &d, &md) != PTL_OK)
        return 1;
    next.phys.nid = id.phys.nid;
    next.phys.pid = 16 + (rank + 1) % size;
    /* The next rank may not have its entry yet: a put that finds none is
     * dropped at the target (an ACK saying so), and is sent again after a
     * millisecond, for up to 30 s.  Bounded by time, not by count: with 9
     * vCPUs on 2 host cores a rank can go unscheduled while its neighbour
     * had 1000 refusals in a tight loop, and then neither finished. */
    int got = 0, acked = 0, from = -1;
    double give_up = now_s() + 30;
    long len = -1;
    rc = PtlPut(md, 0, LEN, PTL_ACK_REQ, next, PT, 0, 0, NULL, (ptl_hdr_data_t)rank);
    while (rc == PTL_OK && (!got || !acked)) {
        ptl_event_t ev;
        rc = PtlEQWait(eq, &ev);
        if (rc != PTL_OK)
            break;
        if (ev.type == PTL_EVENT_PUT) {
            got = 1, from = (int)ev.hdr_data, len = (long)ev.mlength, start = ev.start;
        } else if (ev.type == PTL_EVENT_ACK) {
            if (ev.ni_fail_type == PTL_NI_OK && ev.mlength == LEN)
                acked = 1;
            else if (now_s() < give_up) {
                nanosleep(&(struct timespec){0, 1000000}, NULL);
                rc = PtlPut(md, 0, LEN, PTL_ACK_REQ, next, PT, 0, 0, NULL, (ptl_hdr_data_t)rank);
            } else {
                break;
            }
        }
    }
    int prev = (rank + size - 1) % size;
    long bad = -1;
    for (size_t i = 0; got && i < LEN && bad < 0; i++)
        if (inbox[i] != byte_of(prev, i))
            bad = (long)i;
    if (rc != PTL_OK || !got || !acked || from != prev || len != LEN || bad >= 0 ||
        start != inbox) {
        printf("rank %d: rc %d got %d acked %d from %d len %ld first bad byte %ld start %s\n",
               rank, rc, got, acked, from, len, bad, start == inbox ? "inbox" : "elsewhere");
        return 1;
    }
    printf("rank %d: from rank %d ok\n", rank, prev);
    PtlNIFini(ni);
    PtlFini();
    return 0;
}
