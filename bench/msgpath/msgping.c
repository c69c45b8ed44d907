/* Where the time of one 0-byte Portals message goes (issue 18), on a Tern
 * node: a ping-pong of 0-byte puts between two nodes with the kernel's
 * message-path trace on (TPO_TRACE, include/tern/ptl_syscall.h), then both
 * nodes print their trace records for bench/msgpath.py to take apart.
 *
 *     msgping pong [wait|poll] [ack]           serves until the client says stop
 *     msgping ping NID PID N [wait|poll] [ack] N round trips untraced, N (at most
 *                                              4000) traced
 *
 * wait: the program blocks in PtlEQWait (the kernel halts until the NIC's
 * interrupt); poll: it spins on PtlEQGet.  ack: every put asks for an ACK,
 * as libmsg's eager messages do (the target's ACK rides in its answer's
 * header, reliable.c).  The client prints one-way
 * latencies (half a round trip, medians, from the TSC) of the untraced and
 * the traced loop, so the cost of tracing is seen in the same run.
 *
 * Output (both sides):
 *     MSGPATH side=ping|pong mode=wait|poll hz=TSC_HZ cpus=N
 *     OFF records=R                                (ping only: recorded while
 *                                                  tracing was off; 0)
 *     LAT untraced_us=X traced_us=Y n=N traced_n=M (ping only)
 *     TRACE cpu=C total=T kept=K
 *     P id delta                                   K lines: point, TSC ticks
 *                                                  since the previous record
 *                                                  (the first: since 0)
 *     STATS tx_frames=.. rx_frames=.. acks_sent=.. tx_timeouts=.. tx_carried=..  (the
 *                                                  library's counters, whole run)
 *     END
 * The program stamps TP_APP itself (rdtsc as it holds the event) and hands
 * the stamp to the kernel after its next put, so that the stamp's own system
 * call is not on the path it measures. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trace_out.h"

#define PT 5
#define PING_MB 10
#define CTL_MB 11                  /* hdr_data: the command */
enum { CTL_START = 1, CTL_STOP = 2 };
#define WARMUP 100
#define MAX_N 40000               /* untraced: bench/msgcpu.py runs long loops */
#define TRACED_MAX 4000

#define DIE(...)                                                                                   \
    do {                                                                                           \
        printf("ERROR %s:%d: ", __FILE__, __LINE__);                                              \
        printf(__VA_ARGS__);                                                                       \
        printf("\n");                                                                              \
        exit(1);                                                                                   \
    } while (0)
#define OK(e)                                                                                      \
    do {                                                                                           \
        int rc_ = (e);                                                                             \
        if (rc_ != PTL_OK)                                                                         \
            DIE("%s returned %d", #e, rc_);                                                        \
    } while (0)

static ptl_handle_ni_t ni;
static ptl_handle_eq_t eq;
static ptl_handle_md_t md;
static bool polling, acked;
static uint8_t buf[64];

static void me(ptl_match_bits_t bits)
{
    ptl_me_t m = {.start = buf, .length = sizeof buf, .ct_handle = PTL_CT_NONE,
                  .uid = PTL_UID_ANY, .options = PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE,
                  .match_bits = bits};
    m.match_id.phys.nid = PTL_NID_ANY;
    m.match_id.phys.pid = PTL_PID_ANY;
    ptl_handle_me_t h;
    OK(PtlMEAppend(ni, PT, &m, PTL_PRIORITY_LIST, NULL, &h));
}

static void setup(void)
{
    ptl_ni_limits_t lim;
    OK(PtlInit());
    OK(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY, NULL, &lim,
                 &ni));
    OK(PtlEQAlloc(ni, 256, &eq));
    ptl_pt_index_t pt;
    OK(PtlPTAlloc(ni, 0, eq, PT, &pt));
    me(PING_MB);
    me(CTL_MB);
    ptl_md_t d = {.start = buf, .length = sizeof buf, .options = PTL_MD_EVENT_SEND_DISABLE,
                  .eq_handle = eq, .ct_handle = PTL_CT_NONE};
    OK(PtlMDBind(ni, &d, &md));
}

/* The next put that arrives. */
static void next_put(ptl_event_t *ev)
{
    for (;;) {
        int rc;
        if (polling) {
            while ((rc = PtlEQGet(eq, ev)) == PTL_EQ_EMPTY)
                ;
        } else {
            rc = PtlEQWait(eq, ev);
        }
        if (rc != PTL_OK)
            DIE("EQ returned %d", rc);
        if (ev->type == PTL_EVENT_PUT)
            return;
    }
}

/* ack: each put asks for an ACK (what libmsg's eager messages do); the
 * ACK events are passed over by next_put. */
static void put(ptl_process_t to, ptl_match_bits_t bits, uint64_t hdr)
{
    OK(PtlPut(md, 0, 0, acked ? PTL_ACK_REQ : PTL_NO_ACK_REQ, to, PT, bits, 0, NULL, hdr));
}

static void dump(const char *side)
{
    if (trace_dump(side, polling ? "poll" : "wait"))
        exit(1);
}

static int pong(void)
{
    setup();
    ptl_process_t id;
    OK(PtlGetPhysId(ni, &id));
    printf("READY nid=%u pid=%u\n", id.phys.nid, id.phys.pid);
    fflush(stdout);
    bool tracing = false;
    for (;;) {
        ptl_event_t ev;
        next_put(&ev);
        uint64_t t = rdtsc();
        if (ev.match_bits == CTL_MB && ev.hdr_data == CTL_STOP) {
            dump("pong");
            return 0;
        }
        if (ev.match_bits == CTL_MB && ev.hdr_data == CTL_START) {
            OK(ptl_tern_trace(TERN_TRACE_START, 0, 0, 0, NULL));
            tracing = true;
            put(ev.initiator, PING_MB, 0);
            continue;
        }
        put(ev.initiator, PING_MB, 0);
        if (tracing)
            trace_mark(t);
    }
}

static uint64_t rt[MAX_N];

/* n round trips; the median round trip in TSC ticks. */
static uint64_t loop(ptl_process_t to, int n, bool traced)
{
    uint64_t seen = 0;
    for (int i = 0; i < n; i++) {
        uint64_t t0 = rdtsc();
        put(to, PING_MB, 0);
        if (traced && i)
            trace_mark(seen);
        ptl_event_t ev;
        next_put(&ev);
        seen = rdtsc();
        rt[i] = seen - t0;
    }
    if (traced && n)
        trace_mark(seen);
    return trace_median(rt, n);
}

static int ping(char **argv)
{
    ptl_process_t to;
    to.phys.nid = (ptl_nid_t)strtoul(argv[0], NULL, 0);
    to.phys.pid = (ptl_pid_t)strtoul(argv[1], NULL, 0);
    int n = atoi(argv[2]);
    if (n < 1 || n > MAX_N)
        DIE("N must be 1..%d", MAX_N);
    setup();
    struct tern_trace_info info = {0};
    if (!trace_hz())
        DIE("this kernel has no trace points (made with MSGTRACE=0?)");
    loop(to, WARMUP, false);
    /* Off is off: a trace started and stopped records nothing while the
     * untraced loop runs.  What the short on-window itself caught (a late
     * ack's interrupt from the warm-up) is counted before the loop. */
    OK(ptl_tern_trace(TERN_TRACE_START, 0, 0, 0, NULL));
    OK(ptl_tern_trace(TERN_TRACE_STOP, 0, 0, 0, NULL));
    ptl_tern_trace(TERN_TRACE_READ, 0, (uint64_t)(uintptr_t)trace_rec, 0, &info);
    uint64_t before = info.total;
    uint64_t plain = loop(to, n, false);
    ptl_tern_trace(TERN_TRACE_READ, 0, (uint64_t)(uintptr_t)trace_rec, 0, &info);
    printf("OFF records=%llu\n", (unsigned long long)(info.total - before));
    ptl_event_t ev;
    put(to, CTL_MB, CTL_START);            /* the server starts tracing, then answers */
    next_put(&ev);
    OK(ptl_tern_trace(TERN_TRACE_START, 0, 0, 0, NULL));
    /* The ring keeps 32768 records, about 8 a round trip: a longer traced
     * loop would only lose its start. */
    int traced_n = n < TRACED_MAX ? n : TRACED_MAX;
    uint64_t traced = loop(to, traced_n, true);
    ptl_tern_trace(TERN_TRACE_STOP, 0, 0, 0, NULL);
    put(to, CTL_MB, CTL_STOP);
    double us = 1e6 / (double)info.tsc_hz / 2;
    printf("LAT untraced_us=%.2f traced_us=%.2f n=%d traced_n=%d\n", (double)plain * us,
           (double)traced * us, n, traced_n);
    dump("ping");
    return 0;
}

/* Words after the required arguments: wait (the default) or poll, ack. */
static bool options(int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "poll"))
            polling = true;
        else if (!strcmp(argv[i], "ack"))
            acked = true;
        else if (strcmp(argv[i], "wait"))
            return false;
    }
    return true;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "pong") && options(argc - 2, argv + 2))
        return pong();
    if (argc >= 5 && !strcmp(argv[1], "ping") && options(argc - 5, argv + 5))
        return ping(argv + 2);
    fprintf(stderr, "usage: msgping pong [wait|poll] [ack] | ping NID PID N [wait|poll] [ack]\n");
    return 2;
}
