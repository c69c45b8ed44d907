/*
 * libnx on Portals 4 (the Tern build): start-up, the event loop, exit and
 * abort, identity and time.  See nx_ptl.h for the layout of the build.
 *
 * NX programs have no init call, so the library starts in a constructor:
 * rank, size and the process map come from the environment
 * (docs/job-interface.md), the NI is a matching logical one opened with
 * PTL_PID_ANY, and a start-up barrier over the control portal makes sure
 * every rank's portals exist before any data message is sent to it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nx.h"
#include "nx_impl.h"
#include "nx_ptl.h"
#include "ptl_lib.h"
#include <tern/yod_proto.h>    /* TERN_APP_PID */

/* The Linux-host library's counters (absent on Tern: weak). */
extern int ptl_lib_get_stats(unsigned iface, struct ptl_lib_stats *out) __attribute__((weak));
struct ptl_linux_stats;
extern int ptl_linux_get_stats(struct ptl_linux_stats *out) __attribute__((weak));
/* Tern: the library's and the node's counters (TPO_STATS). */
struct tern_ptl_node_stats;
extern int ptl_tern_stats(struct ptl_lib_stats *lib, struct tern_ptl_node_stats *node)
    __attribute__((weak));

struct nx_state nx = {.rank = 0, .size = 1};
long nx_info_last[4];

_Noreturn void nx_fatal(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "libnx (node %ld): ", nx.rank);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    nx_abort(1);
}

long nx_env_long(const char *name, long dflt)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return dflt;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 0);
    if (errno || *end) {
        fprintf(stderr, "libnx: %s=%s is not a number\n", name, v);
        exit(1);
    }
    return x;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

double dclock(void) { return now(); }
long mynode(void) { return nx.rank; }
long numnodes(void) { return nx.size; }
long mypid(void) { return 0; }
long myptype(void) { return 0; }
long myhost(void) { return -1; }

/* ---- the event loop --------------------------------------------------- */

void nx_control(long from, uint64_t hd)
{
    uint64_t arg = hd & ((1ULL << 56) - 1);
    if (from < 0 || from >= nx.size)
        return;
    switch ((int)(hd >> 56)) {
    case CTL_PAUSE: nx_peer_pause(from, arg); break;
    case CTL_PAUSE_ACK: nx_flow_pause_ack(from, arg); break;
    case CTL_UNPAUSE: nx_peer_unpause(from); break;
    case CTL_BARRIER: nx.barrier_got |= 1ULL << (arg & 63); break;
    case CTL_EXITING:
        nx.peers[from].exiting = true;
        nx_flow_peer_exiting(from);
        break;
    case CTL_ABORT:
        /* Another rank hit an NX error: the whole job ends with its status. */
        fflush(stdout);
        fflush(stderr);
        _exit((int)arg);
    }
}

static void dispatch(const ptl_event_t *ev)
{
    int kind = ev->user_ptr ? *(const int *)ev->user_ptr : 0;
    switch (ev->type) {
    case PTL_EVENT_ACK:
    case PTL_EVENT_REPLY:
        nx.ops_inflight--;
        if (kind == OBJ_MSG)
            nx_send_ack(ev->user_ptr, ev);
        else if (kind == OBJ_CTL)
            nx_ctl_ack(ev->user_ptr, ev);
        else if (kind == OBJ_REQ)
            nx_recv_reply(ev->user_ptr, ev);
        if (nx.starved)
            nx_kick();
        return;
    case PTL_EVENT_GET:
        if (kind == OBJ_MSG)
            nx_rdv_pulled(ev->user_ptr, ev);
        return;
    case PTL_EVENT_PUT:
        if (ev->pt_index == PT_CTL)
            nx_control((long)ev->initiator.rank, ev->hdr_data);
        else if (kind == OBJ_REQ)
            nx_recv_event(ev->user_ptr, ev);
        else
            nx_flow_event(ev);
        return;
    case PTL_EVENT_PUT_OVERFLOW:
        if (kind == OBJ_REQ) {
            nx_ovf_claimed(ev);
            nx_recv_event(ev->user_ptr, ev);
        } else {
            nx_flow_event(ev);
        }
        return;
    case PTL_EVENT_SEARCH:
        if (kind == OBJ_PROBE)
            nx_probe_event(ev->user_ptr, ev);
        else
            nx_flow_event(ev);
        return;
    case PTL_EVENT_PT_DISABLED:
    case PTL_EVENT_AUTO_UNLINK:
    case PTL_EVENT_AUTO_FREE:
        nx_flow_event(ev);
        return;
    default:
        return;
    }
}

/* TERN_NX_DEBUG=S: every S seconds spent in the event loop, one line of
 * this rank's flow-control state and counters on stderr (hang diagnosis). */
static void debug_dump(void)
{
    static double every = -1, next;
    if (every < 0) {
        every = (double)nx_env_long("TERN_NX_DEBUG", 0);
        next = now() + every;
    }
    if (every <= 0 || now() < next)
        return;
    next = now() + every;
    long saved = 0;
    for (struct saved *s = nx.saved_head; s; s = s->next)
        saved++;
    fprintf(stderr,
            "nxdbg node %ld: recovering=%d draining=%d epoch=%llu ops=%d/%d starved=%d "
            "saved=%ld unexpected=%llu recoveries=%llu resent=%llu drained=%llu\n",
            nx.rank, nx.recovering, nx.draining, (unsigned long long)nx.epoch, nx.ops_inflight,
            nx.ops_max, nx.starved, saved, (unsigned long long)nx.st_unexpected,
            (unsigned long long)nx.st_recoveries, (unsigned long long)nx.st_resent,
            (unsigned long long)nx.st_drained);
    for (long r = 0; r < nx.size; r++) {
        struct nx_peer *p = &nx.peers[r];
        long q = 0, st[4] = {0, 0, 0, 0};
        for (struct nx_msg *m = p->head; m; m = m->next)
            q++, st[m->state & 3]++;
        fprintf(stderr,
                "nxdbg node %ld peer %ld: msgs=%ld (queued %ld inflight %ld rejected %ld) "
                "inflight=%d ctl_inflight=%d paused=%d pause_owed=%d pause_epoch=%llu "
                "acked_epoch=%llu exiting=%d\n",
                nx.rank, r, q, st[MSG_QUEUED], st[MSG_INFLIGHT], st[MSG_REJECTED], p->inflight,
                p->ctl_inflight, p->paused, p->pause_owed, (unsigned long long)p->pause_epoch,
                (unsigned long long)p->acked_epoch, p->exiting);
    }
    struct ptl_lib_stats ls;
    uint64_t ns[11];
    memset(&ls, 0, sizeof ls);
    memset(ns, 0, sizeof ns);
    if (ptl_tern_stats && ptl_tern_stats(&ls, (struct tern_ptl_node_stats *)ns) == PTL_OK)
        fprintf(stderr,
                "nxdbg node %ld: lib rx=%llu tx=%llu retx=%llu timeouts=%llu no_res=%llu "
                "ooo_drop=%llu dup=%llu window=%llu host_busy=%llu peer_fail=%llu | nic tx=%llu "
                "txerr=%llu rx=%llu rxdrop=%llu irq=%llu | kmem used=%llu peak=%llu/%llu "
                "fails=%llu | self frames=%llu refused=%llu\n",
                nx.rank, (unsigned long long)ls.rx_frames, (unsigned long long)ls.tx_frames,
                (unsigned long long)ls.tx_retransmits, (unsigned long long)ls.tx_timeouts,
                (unsigned long long)ls.rx_no_resources, (unsigned long long)ls.rx_ooo_dropped,
                (unsigned long long)ls.rx_dup, (unsigned long long)ls.rx_window,
                (unsigned long long)ls.tx_host_busy, (unsigned long long)ls.peer_failures,
                (unsigned long long)ns[0], (unsigned long long)ns[1], (unsigned long long)ns[2],
                (unsigned long long)ns[3], (unsigned long long)ns[4], (unsigned long long)ns[6],
                (unsigned long long)ns[7], (unsigned long long)ns[5], (unsigned long long)ns[8],
                (unsigned long long)ns[9], (unsigned long long)ns[10]);
}

/* Handle every event that is there; with block, first wait (bounded) for
 * one.  Callers loop until their condition holds. */
void nx_progress_ms(unsigned ms)
{
    ptl_handle_eq_t eqs[2] = {nx.eq_data, nx.eq_misc};
    for (int n = 0;; n++) {
        ptl_event_t ev;
        unsigned which;
        ptl_time_t timeout = n == 0 ? (nx.starved && ms > 1 ? 1 : ms) : 0;
        int rc = PtlEQPoll(eqs, 2, timeout, &ev, &which);
        if (rc == PTL_EQ_EMPTY)
            break;
        if (rc == PTL_EQ_DROPPED)
            nx_fatal("Portals event queue %u overflowed: events were lost", which);
        if (rc != PTL_OK)
            nx_fatal("PtlEQPoll failed (%d)", rc);
        dispatch(&ev);
    }
    if (nx.starved)
        nx_kick();
    debug_dump();
}

void nx_progress(bool block) { nx_progress_ms(block ? 50 : 0); }

/* ---- start-up ----------------------------------------------------------- */

static void check(int rc, const char *what)
{
    if (rc != PTL_OK) {
        fprintf(stderr, "libnx: %s failed (Portals error %d)\n", what, rc);
        exit(1);
    }
}

static ptl_process_t *parse_map(const char *s, long size)
{
    ptl_process_t *map = calloc((size_t)size, sizeof *map);
    if (!map) {
        fprintf(stderr, "libnx: no memory for a map of %ld ranks\n", size);
        exit(1);
    }
    for (long r = 0; r < size; r++) {
        char *end;
        errno = 0;
        unsigned long nid = strtoul(s, &end, 0), pid = TERN_APP_PID;
        if (errno || end == s)
            goto bad;
        if (*end == ':') {
            s = end + 1;
            pid = strtoul(s, &end, 0);
            if (errno || end == s)
                goto bad;
        }
        if ((*end != ',' && *end != 0) || (*end == 0 && r != size - 1) ||
            (*end == ',' && r == size - 1))
            goto bad;
        map[r].phys.nid = (ptl_nid_t)nid;
        map[r].phys.pid = (ptl_pid_t)pid;
        s = end + 1;
    }
    return map;
bad:
    fprintf(stderr, "libnx: TERN_MAP does not list %ld entries of nid or nid:pid (near \"%s\")\n",
            size, s);
    exit(1);
}

static void startup_barrier(void)
{
    /* Dissemination barrier over the control portal; control puts that
     * find a peer not yet set up are retried (nx_ctl_send retry). */
    int round = 0;
    for (long d = 1; d < nx.size; d <<= 1, round++) {
        nx_ctl_send((nx.rank + d) % nx.size, CTL_HD(CTL_BARRIER, round), true);
        while (!(nx.barrier_got & (1ULL << round)))
            nx_progress(true);
    }
}

static void print_stats(void)
{
    if (nx_env_long("TERN_NX_STATS", 0))
        fprintf(stderr,
                "libnx stats node %ld: eager=%llu rendezvous=%llu unexpected=%llu "
                "recoveries=%llu resent=%llu drained=%llu\n",
                nx.rank, (unsigned long long)nx.st_eager, (unsigned long long)nx.st_rdv,
                (unsigned long long)nx.st_unexpected, (unsigned long long)nx.st_recoveries,
                (unsigned long long)nx.st_resent, (unsigned long long)nx.st_drained);
    struct ptl_lib_stats st;
    if (nx_env_long("TERN_NX_STATS", 0) > 1 && ptl_lib_get_stats && !ptl_lib_get_stats(0, &st))
        fprintf(stderr,
                "portals stats node %ld: tx=%llu retransmits=%llu timeouts=%llu "
                "no_resources=%llu ooo_dropped=%llu dup=%llu\n",
                nx.rank, (unsigned long long)st.tx_frames, (unsigned long long)st.tx_retransmits,
                (unsigned long long)st.tx_timeouts, (unsigned long long)st.rx_no_resources,
                (unsigned long long)st.rx_ooo_dropped, (unsigned long long)st.rx_dup);
    if (nx_env_long("TERN_NX_STATS", 0) > 2 && ptl_lib_get_stats && !ptl_lib_get_stats(0, &st)) {
        const uint64_t *v = (const uint64_t *)&st;
        fprintf(stderr, "portals raw node %ld:", nx.rank);
        for (size_t i = 0; i < sizeof st / 8; i++)
            fprintf(stderr, " %llu", (unsigned long long)v[i]);
        fprintf(stderr, "\n");
    }
    uint64_t ns[11] = {0};
    if (nx_env_long("TERN_NX_STATS", 0) > 1 && ptl_tern_stats &&
        ptl_tern_stats(NULL, (struct tern_ptl_node_stats *)ns) == PTL_OK)
        fprintf(stderr,
                "tern node stats node %ld: kmem_used=%llu kmem_peak=%llu kmem_size=%llu "
                "kmem_fails=%llu self_frames=%llu self_refused=%llu\n",
                nx.rank, (unsigned long long)ns[6], (unsigned long long)ns[7],
                (unsigned long long)ns[5], (unsigned long long)ns[8], (unsigned long long)ns[9],
                (unsigned long long)ns[10]);
    uint64_t h[9];
    if (nx_env_long("TERN_NX_STATS", 0) > 1 && ptl_linux_get_stats &&
        !ptl_linux_get_stats((struct ptl_linux_stats *)h))
        fprintf(stderr, "linux host stats node %ld: rx=%llu skipped=%llu truncated=%llu ring_drops=%llu tx_busy=%llu tx_errors=%llu\n",
                nx.rank, (unsigned long long)h[0], (unsigned long long)h[1], (unsigned long long)h[2], (unsigned long long)h[3],
                (unsigned long long)h[5], (unsigned long long)h[6]);
}

/* At exit: every message this rank sent must be accepted by its target
 * (csend returns before that), this rank's own flow-control episode must be
 * over, and the others must learn that it will never send again (so their
 * episodes stop waiting for it).  Then the NI may go. */
static void finish(void)
{
    if (!nx.up || nx.aborting)
        return;
    double t0 = now();
    while (!nx_sends_idle() || nx.recovering)
        nx_progress(true);
    double t1 = now();
    nx.exiting = true;
    /* Not to ranks that announced their own exit: they may be gone (a put
     * to them would wait for Portals' give-up), and they need nothing from
     * us.  Whoever we do tell is alive: it has not announced, or it did
     * and is waiting for our acknowledgement.  So we wait for every
     * acknowledgement of ours, and two ranks leaving at once each stay
     * until the other's library has taken its message. */
    for (long r = 0; r < nx.size; r++)
        if (r != nx.rank && !nx.peers[r].exiting)
            nx_ctl_send(r, CTL_HD(CTL_EXITING, 0), false);
    /* Wait for the acknowledgements of peers still running.  Bounded. */
    double until = now() + nx_env_long("TERN_NX_EXIT_WAIT", 10);
    while ((nx.exit_pending || !nx_ctl_idle() || nx.recovering || !nx_sends_idle()) &&
           now() < until)
        nx_progress(true);
    /* Linger a little: acknowledgements our library has queued (for the
     * EXITING of a peer that is waiting for it) leave only when Portals
     * runs again. */
    for (double end = now() + 0.01; now() < end;)
        nx_progress_ms(1);
    if (nx_env_long("TERN_NX_STATS", 0))
        fprintf(stderr, "libnx exit node %ld: sends settled in %.3f s, exit handshake %.3f s\n",
                nx.rank, t1 - t0, now() - t1);
    print_stats();
    nx.up = false;
}

_Noreturn void nx_abort(int status)
{
    /* Tell every rank, give the puts a moment to leave, and go. */
    fflush(stdout);
    fflush(stderr);
    if (nx.up && !nx.aborting) {
        nx.aborting = true;
        for (long r = 0; r < nx.size; r++)
            if (r != nx.rank)
                nx_ctl_send(r, CTL_HD(CTL_ABORT, status), false);
        double until = now() + 0.5;
        while (!nx_ctl_idle() && now() < until)
            nx_progress(true);
    }
    _exit(status);
}

__attribute__((constructor)) static void nx_start(void)
{
    const char *size_s = getenv("TERN_SIZE");
    nx.size = nx_env_long("TERN_SIZE", 1);
    nx.rank = nx_env_long("TERN_RANK", 0);
    if (nx.size < 1 || nx.rank < 0 || nx.rank >= nx.size) {
        fprintf(stderr, "libnx: TERN_RANK=%ld is not in 0..TERN_SIZE-1 (%ld)\n", nx.rank,
                nx.size - 1);
        exit(1);
    }
    nx.eager_max = (size_t)nx_env_long("TERN_NX_EAGER", 8192);
    nx.verbose = (int)nx_env_long("TERN_NX_STATS", 0);
    if (nx.eager_max > (1 << 20)) {
        fprintf(stderr, "libnx: TERN_NX_EAGER above 1 MiB\n");
        exit(1);
    }
    check(PtlInit(), "PtlInit");
    ptl_ni_limits_t want;
    memset(&want, 0, sizeof want);
    want.max_unexpected_headers = (int)nx_env_long("TERN_NX_UH", 0);
    check(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_LOGICAL, PTL_PID_ANY, &want,
                    &nx.lim, &nx.ni),
          "PtlNIInit (matching, logical, PTL_PID_ANY)");
    ptl_process_t me;
    check(PtlGetPhysId(nx.ni, &me), "PtlGetPhysId");
    ptl_process_t *map;
    if (size_s) {
        const char *m = getenv("TERN_MAP");
        if (!m) {
            fprintf(stderr, "libnx: TERN_SIZE is set but TERN_MAP is not\n");
            exit(1);
        }
        map = parse_map(m, nx.size);
    } else {
        /* Started without a launcher: a job of one. */
        map = calloc(1, sizeof *map);
        if (!map)
            exit(1);
        map[0] = me;
    }
    check(PtlSetMap(nx.ni, (ptl_size_t)nx.size, map), "PtlSetMap");
    free(map);
    ptl_process_t id;
    if (PtlGetId(nx.ni, &id) != PTL_OK || (long)id.rank != nx.rank) {
        fprintf(stderr, "libnx: this process (nid %u pid %u) is not rank %ld of TERN_MAP\n",
                me.phys.nid, me.phys.pid, nx.rank);
        exit(1);
    }
    nx.peers = calloc((size_t)nx.size, sizeof *nx.peers);
    if (!nx.peers) {
        fprintf(stderr, "libnx: no memory for %ld peers\n", nx.size);
        exit(1);
    }
    /* The data EQ must hold a whole drain (one event per unexpected
     * header) on top of what is already queued; the misc EQ holds at most
     * one event per operation, rendezvous send and control message. */
    check(PtlEQAlloc(nx.ni, (ptl_size_t)nx.lim.max_unexpected_headers * 2 + 256 + 2 * nx.size,
                     &nx.eq_data),
          "PtlEQAlloc");
    nx.ops_max = nx.lim.max_mds / 2;
    check(PtlEQAlloc(nx.ni, (ptl_size_t)(nx.ops_max + 1024 + 8 * nx.size), &nx.eq_misc),
          "PtlEQAlloc");
    nx_send_init();   /* control portal first: it answers the barrier */
    nx_flow_init();   /* data portal and unexpected space */
    nx.up = true;
    atexit(finish);
    double t0 = now();
    startup_barrier();
    if (nx_env_long("TERN_NX_STATS", 0))
        fprintf(stderr, "libnx start node %ld: start-up barrier %.3f s\n", nx.rank, now() - t0);
}
