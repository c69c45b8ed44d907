/* Where the time of one 0-byte NX message goes (issue 18): msgping.c's
 * ping-pong and trace, through NX (libnx over libmsg: matching, an ACK asked
 * of every eager put, the request bookkeeping) instead of bare Portals.
 * Two ranks, started by bench/msgpath.py --nx on two nodes (TERN_SIZE=2,
 * TERN_RANK, TERN_MAP), or by yod:
 *
 *     nxping N      rank 0: N round trips untraced, then N (at most 4000)
 *                   traced; rank 1 answers until rank 0 says stop
 *
 * Output: msgping.c's (the LAT line on rank 0 only).  Message types: PING
 * answered by PING, START (rank 1 starts its trace, then answers), STOP
 * (rank 1 answers, prints its trace and ends). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "nx.h"
#include "trace_out.h"

enum { PING = 1, START = 2, STOP = 3 };
#define WARMUP 100
#define MAX_N 40000
#define TRACED_MAX 4000          /* the ring holds about 8 records a round trip */

static char buf[8];

/* Recording needs kernel pages for its rings (PTL_NO_SPACE: too few; see
 * the build rule in libnx/Makefile.inc). */
static void trace_start(void)
{
    int rc = ptl_tern_trace(TERN_TRACE_START, 0, 0, 0, NULL);
    if (rc != PTL_OK) {
        printf("ERROR the trace did not start (%d): too little kernel memory?\n", rc);
        exit(1);
    }
}
static uint64_t rt[MAX_N];


static int pong(void)
{
    bool tracing = false;
    for (;;) {
        crecv(-1, buf, 0);
        uint64_t t = rdtsc();
        long type = infotype();
        if (type == STOP) {
            /* Answered first: the answer carries STOP's ACK (held for this
             * rank's next message, reliable.c), and the dump takes seconds. */
            ptl_tern_trace(TERN_TRACE_STOP, 0, 0, 0, NULL);
            csend(PING, buf, 0, 0, 0);
            return trace_dump("pong", "wait") ? 1 : 0;
        }
        if (type == START) {
            trace_start();
            tracing = true;
            csend(PING, buf, 0, 0, 0);
            continue;
        }
        csend(PING, buf, 0, 0, 0);
        if (tracing)
            trace_mark(t);
    }
}

/* n round trips; the median in TSC ticks. */
static uint64_t loop(int n, bool traced)
{
    uint64_t seen = 0;
    for (int i = 0; i < n; i++) {
        uint64_t t0 = rdtsc();
        csend(PING, buf, 0, 1, 0);
        if (traced && i)
            trace_mark(seen);
        crecv(PING, buf, 0);
        seen = rdtsc();
        rt[i] = seen - t0;
    }
    if (traced && n)
        trace_mark(seen);
    return trace_median(rt, n);
}

static int ping(int n)
{
    uint64_t hz = trace_hz();
    if (!hz) {
        printf("ERROR this kernel has no trace points (made with MSGTRACE=0?)\n");
        return 1;
    }
    loop(WARMUP, false);
    /* Off is off: a trace started and stopped records nothing while the
     * untraced loop runs (as in msgping.c). */
    trace_start();
    ptl_tern_trace(TERN_TRACE_STOP, 0, 0, 0, NULL);
    struct tern_trace_info info = {0};
    ptl_tern_trace(TERN_TRACE_READ, 0, (uint64_t)(uintptr_t)trace_rec, 0, &info);
    uint64_t before = info.total;
    uint64_t plain = loop(n, false);
    ptl_tern_trace(TERN_TRACE_READ, 0, (uint64_t)(uintptr_t)trace_rec, 0, &info);
    printf("OFF records=%llu\n", (unsigned long long)(info.total - before));
    csend(START, buf, 0, 1, 0);
    crecv(PING, buf, 0);
    trace_start();
    int traced_n = n < TRACED_MAX ? n : TRACED_MAX;
    uint64_t traced = loop(traced_n, true);
    ptl_tern_trace(TERN_TRACE_STOP, 0, 0, 0, NULL);
    csend(STOP, buf, 0, 1, 0);
    crecv(PING, buf, 0);
    double us = 1e6 / (double)hz / 2;
    printf("LAT untraced_us=%.2f traced_us=%.2f n=%d traced_n=%d\n", (double)plain * us,
           (double)traced * us, n, traced_n);
    return trace_dump("ping", "wait") ? 1 : 0;
}

int main(int argc, char **argv)
{
    int n = argc == 2 ? atoi(argv[1]) : 0;
    if (n < 1 || n > MAX_N || numnodes() != 2) {
        fprintf(stderr, "usage: nxping N (1..%d), on two nodes\n", MAX_N);
        return 2;
    }
    return mynode() == 0 ? ping(n) : pong();
}
