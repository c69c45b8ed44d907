/*
 * The message engine: start-up, the event loop, exit and abort.  See
 * msg_internal.h for the layout of the engine.
 *
 * A layer starts it (NX in a constructor, MPI in MPI_Init): rank, size and
 * the process map come from the environment (docs/job-interface.md), the NI
 * is a matching logical one opened with PTL_PID_ANY, and a start-up barrier
 * over the control portal makes sure every rank's portals exist before any
 * data message is sent to it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "msg_internal.h"
#include "ptl_lib.h"
#include <tern/ptl_syscall.h> /* struct tern_ptl_node_stats */
#include <tern/yod_proto.h>    /* TERN_APP_PID */

/* The Linux-host library's counters (absent on Tern: weak). */
extern int ptl_lib_get_stats(unsigned iface, struct ptl_lib_stats *out) __attribute__((weak));
struct ptl_linux_stats;
extern int ptl_linux_get_stats(struct ptl_linux_stats *out) __attribute__((weak));
/* Tern: the library's and the node's counters (TPO_STATS). */
extern int ptl_tern_stats(struct ptl_lib_stats *lib, struct tern_ptl_node_stats *node)
    __attribute__((weak));

struct msg_engine eng = {.rank = 0, .size = 1, .who = "libmsg", .prefix = "TERN_MSG"};

_Noreturn void msg_fatal(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s (node %ld): ", eng.who, eng.rank);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    msg_abort(1);
}

static long env_num(const char *name, long dflt)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return dflt;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 0);
    if (errno || *end) {
        fprintf(stderr, "%s: %s=%s is not a number\n", eng.who, name, v);
        exit(1);
    }
    return x;
}

long msg_env_long(const char *suffix, long dflt)
{
    char name[96];
    snprintf(name, sizeof name, "%s_%s", eng.prefix, suffix);
    return env_num(name, dflt);
}

double msg_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
#define now msg_now

ptl_me_t msg_me(void *start, uint64_t length, unsigned options, ptl_rank_t rank, uint64_t bits,
                uint64_t ignore)
{
    ptl_me_t me;
    memset(&me, 0, sizeof me);
    me.start = start;
    me.length = (ptl_size_t)length;
    me.ct_handle = PTL_CT_NONE;
    me.uid = PTL_UID_ANY;
    me.options = options;
    me.match_id.rank = rank;
    me.match_bits = bits;
    me.ignore_bits = ignore;
    return me;
}

long msg_rank(void) { return eng.rank; }
long msg_size(void) { return eng.size; }
bool msg_started(void) { return eng.started; }
bool msg_finished(void) { return eng.finished; }

/* ---- the event loop --------------------------------------------------- */

void msg_control(long from, uint64_t hd, uint64_t bits)
{
    uint64_t arg = hd & ((1ULL << 56) - 1);
    if (from < 0 || from >= eng.size)
        return;
    switch ((int)(hd >> 56)) {
    case CTL_PAUSE: msg_peer_pause(from, arg); break;
    case CTL_PAUSE_ACK: msg_flow_pause_ack(from, arg); break;
    case CTL_UNPAUSE: msg_peer_unpause(from); break;
    case CTL_BARRIER: eng.barrier_got |= 1ULL << (arg & 63); break;
    case CTL_WAKE: break; /* a barrier is done: the event was the point */
    case CTL_READY: msg_send_ready(from, arg); break;
    case CTL_CANCEL: msg_cancel_asked(from, arg, bits); break;
    case CTL_CANCEL_ANS: msg_cancel_answered(from, arg, bits); break;
    case CTL_EXITING:
        eng.peers[from].exiting = true;
        msg_flow_peer_exiting(from);
        break;
    case CTL_ABORT:
        /* Another rank failed: the whole job ends with its status. */
        fflush(stdout);
        fflush(stderr);
        if (eng.abort_linger_ms && !eng.aborting) {
            eng.aborting = true;
            for (double end = now() + eng.abort_linger_ms / 1000.0; now() < end;)
                msg_progress(true);
        }
        _exit((int)arg);
    }
}

static void dispatch(const ptl_event_t *ev)
{
    int kind = ev->user_ptr ? *(const int *)ev->user_ptr : 0;
    switch (ev->type) {
    case PTL_EVENT_ACK:
    case PTL_EVENT_REPLY:
        eng.ops_inflight--;
        if (kind == OBJ_MSG)
            msg_send_ack(ev->user_ptr, ev);
        else if (kind == OBJ_LATE)
            msg_send_late_acked(ev->user_ptr, ev);
        else if (kind == OBJ_CTL)
            msg_ctl_ack(ev->user_ptr, ev);
        else if (kind == OBJ_REQ)
            msg_recv_reply(ev->user_ptr, ev);
        if (eng.starved)
            msg_kick();
        return;
    case PTL_EVENT_GET:
        if (kind == OBJ_MSG)
            msg_rdv_pulled(ev->user_ptr, ev);
        return;
    case PTL_EVENT_PUT:
        if (ev->pt_index == PT_COLL)
            msg_barrier_event(ev);
        else if (ev->pt_index == PT_CTL)
            msg_control((long)ev->initiator.rank, ev->hdr_data, ev->match_bits);
        else if (ev->pt_index == PT_RDV && kind == OBJ_REQ)
            msg_recv_landed(ev->user_ptr, ev);
        else if (kind == OBJ_REQ)
            msg_recv_event(ev->user_ptr, ev);
        else if (kind == OBJ_MPROBE)
            msg_mprobe_event(ev->user_ptr, ev);
        else {
            msg_flow_event(ev);
            if (ev->pt_index == PT_DATA && eng.held_head)
                msg_held_hint((long)ev->initiator.rank, ev->match_bits);
        }
        return;
    case PTL_EVENT_PUT_OVERFLOW:
        if (kind == OBJ_REQ || kind == OBJ_MPROBE) {
            msg_ovf_claimed(ev);
            if (kind == OBJ_REQ)
                msg_recv_event(ev->user_ptr, ev);
            else
                msg_mprobe_event(ev->user_ptr, ev);
        } else {
            msg_flow_event(ev);
        }
        return;
    case PTL_EVENT_SEARCH:
        if (kind == OBJ_PROBE)
            msg_probe_event(ev->user_ptr, ev);
        else if (kind == OBJ_REQ)
            msg_held_search_event(ev);
        else if (kind == OBJ_CANCEL)
            msg_cancel_event(ev);
        else
            msg_flow_event(ev);
        return;
    case PTL_EVENT_PT_DISABLED:
    case PTL_EVENT_AUTO_UNLINK:
    case PTL_EVENT_AUTO_FREE:
        msg_flow_event(ev);
        return;
    default:
        return;
    }
}

/* The library's counters for this process: on Linux its own; on Tern its
 * interface's, which count from boot, less what they were when this job's
 * interface came up (lib_base). */
static struct ptl_lib_stats lib_base;

static bool lib_stats(struct ptl_lib_stats *st)
{
    if (ptl_lib_get_stats)
        return ptl_lib_get_stats(0, st) == PTL_OK;
    if (!ptl_tern_stats || ptl_tern_stats(st, NULL) != PTL_OK)
        return false;
    uint64_t *v = (uint64_t *)st;
    const uint64_t *b = (const uint64_t *)&lib_base;
    for (size_t i = 0; i < sizeof *st / sizeof *v; i++)
        v[i] -= b[i];
    return true;
}

/* Tern: the node's counters (kernel heap, frames to itself, NIC), one line
 * that tests read. */
static void print_node_stats(void)
{
    struct tern_ptl_node_stats ns = {0};   /* an older kernel fills fewer fields */
    if (!ptl_tern_stats || ptl_tern_stats(NULL, &ns) != PTL_OK)
        return;
    fprintf(stderr,
            "tern node stats node %ld: kmem_used=%llu kmem_peak=%llu kmem_size=%llu "
            "kmem_fails=%llu self_frames=%llu self_refused=%llu self_by_reference=%llu "
            "tx=%llu rx=%llu rx_dropped=%llu interrupts=%llu tx_errors=%llu calls=%llu "
            "doorbells=%llu\n",
            eng.rank, (unsigned long long)ns.kmem_used, (unsigned long long)ns.kmem_peak,
            (unsigned long long)ns.kmem_size, (unsigned long long)ns.kmem_fails,
            (unsigned long long)ns.loop_frames, (unsigned long long)ns.loop_full,
            (unsigned long long)ns.loop_by_ref, (unsigned long long)ns.nic_tx_frames,
            (unsigned long long)ns.nic_rx_frames, (unsigned long long)ns.nic_rx_dropped,
            (unsigned long long)ns.nic_interrupts, (unsigned long long)ns.nic_tx_errors,
            (unsigned long long)ns.calls, (unsigned long long)ns.nic_tx_doorbells);
}

/* PREFIX_DEBUG=S: every S seconds spent in the event loop, one line of
 * this rank's flow-control state and counters on stderr (hang diagnosis). */
static void debug_dump(void)
{
    static double every = -1, next;
    if (every < 0) {
        every = (double)msg_env_long("DEBUG", 0);
        next = now() + every;
    }
    if (every <= 0 || now() < next)
        return;
    next = now() + every;
    long saved = 0;
    for (struct msg_saved *s = eng.saved_head; s; s = s->next)
        saved++;
    fprintf(stderr,
            "msgdbg node %ld: recovering=%d draining=%d epoch=%llu ops=%d/%d starved=%d "
            "saved=%ld unexpected=%llu recoveries=%llu resent=%llu drained=%llu\n",
            eng.rank, eng.recovering, eng.draining, (unsigned long long)eng.epoch, eng.ops_inflight,
            eng.ops_max, eng.starved, saved, (unsigned long long)eng.st_unexpected,
            (unsigned long long)eng.st_recoveries, (unsigned long long)eng.st_resent,
            (unsigned long long)eng.st_drained);
    long held = 0;
    for (struct msg_req *r = eng.held_head; r; r = r->held_next)
        held++;
    fprintf(stderr, "msgdbg node %ld: receives in Portals=%ld of %ld, held=%ld, own events=%d\n",
            eng.rank, eng.recv_mes, eng.recv_cap, held, eng.local_events);
    for (long r = 0; r < eng.size; r++) {
        struct msg_peer *p = &eng.peers[r];
        long q = 0, st[4] = {0, 0, 0, 0};
        for (struct msg_out *m = p->head; m; m = m->next)
            q++, st[m->state & 3]++;
        fprintf(stderr,
                "msgdbg node %ld peer %ld: msgs=%ld (queued %ld inflight %ld rejected %ld) "
                "inflight=%d ctl_inflight=%d paused=%d pause_owed=%d pause_epoch=%llu "
                "acked_epoch=%llu exiting=%d\n",
                eng.rank, r, q, st[OUT_QUEUED], st[OUT_INFLIGHT], st[OUT_REJECTED], p->inflight,
                p->ctl_inflight, p->paused, p->pause_owed, (unsigned long long)p->pause_epoch,
                (unsigned long long)p->acked_epoch, p->exiting);
    }
    struct ptl_lib_stats ls;
    memset(&ls, 0, sizeof ls);
    if (lib_stats(&ls)) {
        fprintf(stderr,
                "msgdbg node %ld: lib rx=%llu tx=%llu retx=%llu timeouts=%llu no_res=%llu "
                "ooo_drop=%llu dup=%llu window=%llu host_busy=%llu peer_fail=%llu acks_sent=%llu "
                "carried=%llu\n",
                eng.rank, (unsigned long long)ls.rx_frames, (unsigned long long)ls.tx_frames,
                (unsigned long long)ls.tx_retransmits, (unsigned long long)ls.tx_timeouts,
                (unsigned long long)ls.rx_no_resources, (unsigned long long)ls.rx_ooo_dropped,
                (unsigned long long)ls.rx_dup, (unsigned long long)ls.rx_window,
                (unsigned long long)ls.tx_host_busy, (unsigned long long)ls.peer_failures,
                (unsigned long long)ls.acks_sent, (unsigned long long)ls.tx_carried);
        print_node_stats();
    }
}

/* ms 0: handle every event that is there.  Otherwise wait (at most ms) for
 * one event and handle just that one: callers loop until their condition
 * holds, and a further look here would mostly find nothing, a system call
 * per message.  Except during a flow-control drain (msg_flow.c): its events
 * are all queued when it starts, and until the last is handled the saved
 * queue lacks some drained messages, so a receive that read it would go to
 * Portals and match a later message from the same sender. */
static void (*progress_hook)(void);

void msg_set_progress_hook(void (*hook)(void)) { progress_hook = hook; }

static int (*wait_begin)(unsigned *ms);
static void (*wait_end)(void);
static bool (*may_poll)(void);

void msg_set_wait_hooks(int (*begin)(unsigned *ms), void (*end)(void), bool (*may)(void))
{
    wait_begin = begin;
    wait_end = end;
    may_poll = may;
}

/* The layer's hook may call the engine (msg_test): it is not run again
 * from inside itself. */
static void run_hook(void)
{
    static bool running;
    if (!progress_hook || running)
        return;
    running = true;
    progress_hook();
    running = false;
}

/* What a poll gave: true for an event to handle, false when both EQs are
 * empty (all the data EQ's room is free again).  A lost event is fatal. */
static bool polled(int rc, unsigned which)
{
    if (rc == PTL_EQ_EMPTY) {
        eng.local_events = 0;
        return false;
    }
    if (rc == PTL_EQ_DROPPED)
        msg_fatal("Portals event queue %u overflowed: events were lost", which);
    if (rc != PTL_OK)
        msg_fatal("PtlEQPoll failed (%d)", rc);
    return true;
}

/* Held receives wait for the data EQ to empty (the room for their events,
 * msg_held.c): what is queued now is handled without waiting.  Not while
 * another thread holds an event (it handles it, and the queue, next). */
static void drain_queued(ptl_handle_eq_t *eqs)
{
    for (int n = 0; n < 4096; n++) {
        if (may_poll && !may_poll())
            return;
        ptl_event_t ev;
        unsigned which;
        if (!polled(PtlEQPoll(eqs, 2, 0, &ev, &which), which))
            return;
        dispatch(&ev);
    }
}

void msg_progress_ms(unsigned ms)
{
    ptl_handle_eq_t eqs[2] = {eng.eq_data, eng.eq_misc};
    for (int n = 0;; n++) {
        ptl_event_t ev;
        unsigned which;
        unsigned wait_ms = n == 0 ? (eng.starved && ms > 1 ? 1 : ms) : 0;
        int hooked = wait_ms && wait_begin ? wait_begin(&wait_ms) : 0;
        ptl_time_t timeout = hooked < 0 ? 0 : (ptl_time_t)wait_ms;
        /* Events are handled in the order Portals gives them: not while
         * another thread holds one it has yet to handle. */
        if (hooked <= 0 && may_poll && !may_poll())
            break;
        int rc = PtlEQPoll(eqs, 2, timeout, &ev, &which);
        if (hooked > 0)
            wait_end();
        if (!polled(rc, which))
            break;
        dispatch(&ev);
        if (ms && !eng.draining && !eng.cancel_drains)
            break;
    }
    if (eng.starved)
        msg_kick();
    if (eng.pull_head)
        msg_recv_pulls_waiting();
    if (eng.ready_head)
        msg_send_ready_run();
    if (eng.parked_retry)
        msg_recv_parked_run();
    if (eng.held_head && eng.local_events >= LOCAL_EVENTS_MAX)
        drain_queued(eqs);
    if (eng.held_head)
        msg_held_run();
    debug_dump();
    run_hook();
}

void msg_progress(bool block) { msg_progress_ms(block ? 50 : 0); }

/* ---- start-up ----------------------------------------------------------- */

static void check(int rc, const char *what)
{
    if (rc != PTL_OK) {
        fprintf(stderr, "%s: %s failed (Portals error %d)\n", eng.who, what, rc);
        exit(1);
    }
}

static ptl_process_t *parse_map(const char *s, long size)
{
    ptl_process_t *map = calloc((size_t)size, sizeof *map);
    if (!map) {
        fprintf(stderr, "%s: no memory for a map of %ld ranks\n", eng.who, size);
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
    fprintf(stderr, "%s: TERN_MAP does not list %ld entries of nid or nid:pid (near \"%s\")\n",
            eng.who, size, s);
    exit(1);
}

static void startup_barrier(void)
{
    /* Dissemination barrier over the control portal; control puts that
     * find a peer not yet set up are retried (msg_ctl_send retry). */
    int round = 0;
    for (long d = 1; d < eng.size; d <<= 1, round++) {
        msg_ctl_send((eng.rank + d) % eng.size, CTL_HD(CTL_BARRIER, round), true);
        while (!(eng.barrier_got & (1ULL << round)))
            msg_progress(true);
    }
}

static void print_stats(void)
{
    if (eng.verbose)
        fprintf(stderr,
                "%s stats node %ld: eager=%llu rendezvous=%llu pushed=%llu push_missed=%llu "
                "received=%llu unexpected=%llu recoveries=%llu resent=%llu drained=%llu "
                "portals_barriers=%llu barrier_wakes=%llu barrier_waits=%llu held=%llu "
                "held_taken=%llu pulls_waited=%llu late=%llu\n",
                eng.who, eng.rank, (unsigned long long)eng.st_eager,
                (unsigned long long)eng.st_rdv, (unsigned long long)eng.st_rdv_pushed,
                (unsigned long long)eng.st_push_missed, (unsigned long long)eng.st_received,
                (unsigned long long)eng.st_unexpected,
                (unsigned long long)eng.st_recoveries, (unsigned long long)eng.st_resent,
                (unsigned long long)eng.st_drained, (unsigned long long)eng.st_ptl_barriers,
                (unsigned long long)eng.st_ptl_wakes, (unsigned long long)eng.st_ptl_waits,
                (unsigned long long)eng.st_held, (unsigned long long)eng.st_held_taken,
                (unsigned long long)eng.st_pulls_waited, (unsigned long long)eng.st_rdv_late);
    struct ptl_lib_stats st;
    if (eng.verbose > 1 && lib_stats(&st))
        fprintf(stderr,
                "portals stats node %ld: tx=%llu retransmits=%llu timeouts=%llu "
                "no_resources=%llu ooo_dropped=%llu dup=%llu acks_sent=%llu carried=%llu "
                "alone_time=%llu alone_wait=%llu alone_frame=%llu unparked=%llu\n",
                eng.rank, (unsigned long long)st.tx_frames, (unsigned long long)st.tx_retransmits,
                (unsigned long long)st.tx_timeouts, (unsigned long long)st.rx_no_resources,
                (unsigned long long)st.rx_ooo_dropped, (unsigned long long)st.rx_dup,
                (unsigned long long)st.acks_sent, (unsigned long long)st.tx_carried,
                (unsigned long long)st.acks_alone_time, (unsigned long long)st.acks_alone_wait,
                (unsigned long long)st.acks_alone_frame, (unsigned long long)st.rx_unparked);
    if (eng.verbose > 2 && lib_stats(&st)) {
        const uint64_t *v = (const uint64_t *)&st;
        fprintf(stderr, "portals raw node %ld:", eng.rank);
        for (size_t i = 0; i < sizeof st / 8; i++)
            fprintf(stderr, " %llu", (unsigned long long)v[i]);
        fprintf(stderr, "\n");
    }
    if (eng.verbose > 1)
        print_node_stats();
    uint64_t h[9];
    if (eng.verbose > 1 && ptl_linux_get_stats &&
        !ptl_linux_get_stats((struct ptl_linux_stats *)h))
        fprintf(stderr,
                "linux host stats node %ld: rx=%llu skipped=%llu truncated=%llu "
                "ring_drops=%llu tx_busy=%llu tx_errors=%llu\n",
                eng.rank, (unsigned long long)h[0], (unsigned long long)h[1],
                (unsigned long long)h[2], (unsigned long long)h[3], (unsigned long long)h[5],
                (unsigned long long)h[6]);
}

/* Every message this rank sent must be accepted by its target (a send
 * returns before that), this rank's own flow-control episode must be over,
 * and the others must learn that it will never send again (so their
 * episodes stop waiting for it).  Then the NI may go. */
void msg_finish(void)
{
    if (!eng.up || eng.aborting || eng.finished)
        return;
    double t0 = now();
    while (!msg_sends_idle() || eng.recovering)
        msg_progress(true);
    double t1 = now();
    eng.exiting = true;
    /* Take in what has arrived first: a peer whose EXITING waits unseen in
     * our event queue (we computed without calling the library) may be gone
     * already, and a put to it would wait out Portals' give-up (5 s; seen at
     * 32 nodes: a few ranks of one job in three, tests/nx/exitlate.c). */
    msg_progress_ms(0);
    /* Not to ranks that announced their own exit: they may be gone (a put
     * to them would wait for Portals' give-up), and they need nothing from
     * us.  Whoever we do tell is alive: it has not announced, or it did
     * and is waiting for our acknowledgement.  So we wait for every
     * acknowledgement of ours, and two ranks leaving at once each stay
     * until the other's library has taken its message. */
    for (long r = 0; r < eng.size; r++)
        if (r != eng.rank && !eng.peers[r].exiting)
            msg_ctl_send(r, CTL_HD(CTL_EXITING, 0), false);
    /* Wait for the acknowledgements of peers still running.  Bounded.  A
     * peer whose EXITING comes in meanwhile no longer counts
     * (msg_ctl_idle): it needs nothing more from us and may be gone, so our
     * EXITING to it may never be acknowledged. */
    double until = now() + msg_env_long("EXIT_WAIT", 10);
    while ((!msg_ctl_idle() || eng.recovering || !msg_sends_idle()) &&
           now() < until)
        msg_progress(true);
    /* Linger a little: acknowledgements our library has queued (for the
     * EXITING of a peer that is waiting for it) leave only when Portals
     * runs again. */
    for (double end = now() + 0.01; now() < end;)
        msg_progress_ms(1);
    if (eng.verbose)
        fprintf(stderr, "%s exit node %ld: sends settled in %.3f s, exit handshake %.3f s\n",
                eng.who, eng.rank, t1 - t0, now() - t1);
    print_stats();
    eng.finished = true;
}

_Noreturn void msg_abort(int status)
{
    /* Tell every rank, give the puts a moment to leave, and go. */
    fflush(stdout);
    fflush(stderr);
    if (eng.up && !eng.aborting && !eng.finished) {
        eng.aborting = true;
        for (long r = 0; r < eng.size; r++)
            if (r != eng.rank)
                msg_ctl_send(r, CTL_HD(CTL_ABORT, status), false);
        double until = now() + 0.5;
        while (!msg_ctl_idle() && now() < until)
            msg_progress(true);
    }
    _exit(status);
}

/* Portals' match entries (2048 by default) are shared by everything the
 * engine posts, and a refused append it cannot wait out ends the job: a
 * rendezvous send must expose its buffer, unexpected space must go back on
 * the overflow list.  So each user gets a share of its own that the others
 * cannot take:
 *   1/16     the engine itself: control, unexpected space and its catches,
 *            probes, held receives' searches and takes (all a handful or
 *            gone by the next event);
 *   1/4      rendezvous sends exposed at once (at most 512; more are late,
 *            put into their receives, msg_send.c);
 *   1/8      barriers' rounds (msg_barrier.c; past it a communicator's
 *            barrier is made of messages);
 *   the rest receives (_POSTED, half the entries by default; past it they
 *            wait in the library, msg_held.c).
 * With 250 communicators' barriers and 1024 receives posted, the 500th
 * rendezvous send found no entry left (tests/mpi/manyrecv.c, expose). */
static void split_entries(void)
{
    long e = eng.lim.max_entries;
    eng.rdv_max = e / 4 < 512 ? e / 4 : 512;
    eng.barrier_entries_max = e / 8;
    long most = e - e / 16 - eng.rdv_max - eng.barrier_entries_max;
    eng.recv_cap = msg_env_long("POSTED", e / 2);
    if (eng.recv_cap < 1)
        eng.recv_cap = 1;
    if (eng.recv_cap > most)
        eng.recv_cap = most;
}

static void finish_at_exit(void) { msg_finish(); }

void msg_start(const struct msg_config *cfg)
{
    if (eng.started)
        return;
    eng.started = true;
    eng.who = cfg->who;
    eng.prefix = cfg->env_prefix;
    eng.abort_linger_ms = cfg->abort_linger_ms;
    const char *size_s = getenv("TERN_SIZE");
    eng.size = env_num("TERN_SIZE", 1);
    eng.rank = env_num("TERN_RANK", 0);
    if (eng.size < 1 || eng.rank < 0 || eng.rank >= eng.size) {
        fprintf(stderr, "%s: TERN_RANK=%ld is not in 0..TERN_SIZE-1 (%ld)\n", eng.who, eng.rank,
                eng.size - 1);
        exit(1);
    }
    /* 64 KiB: a rendezvous costs two one-way trips more than an eager
     * message (announcement, get, reply): on TCG nodes 16 KiB took 290-360
     * us one way by rendezvous and 105-165 us eager (docs/performance.md,
     * "Eager up to 64 KiB"). */
    eng.eager_max = (size_t)msg_env_long("EAGER", 65536);
    /* 256 KiB: what a rendezvous announcement carries (msg_send.c).  The
     * bytes of one that finds no receive posted cross the wire for nothing,
     * and its receive waits for them to pass before it can pull: with 1 MiB
     * the 2-node ring of 8 MiB messages (one after each gsync, whose ranks
     * leave it apart) lost what 256 KiB gains (docs/performance.md, "A
     * rendezvous announcement that carries data"). */
    long push_max = msg_env_long("PUSH_MAX", 256L << 10);
    if (push_max < 0) {
        fprintf(stderr, "%s: %s_PUSH_MAX is negative\n", eng.who, eng.prefix);
        exit(1);
    }
    eng.push_max = (uint64_t)push_max;
    eng.verbose = (int)msg_env_long("STATS", 0);
    if (eng.eager_max > (1 << 20)) {
        fprintf(stderr, "%s: %s_EAGER above 1 MiB\n", eng.who, eng.prefix);
        exit(1);
    }
    check(PtlInit(), "PtlInit");
    ptl_ni_limits_t want;
    memset(&want, 0, sizeof want);
    want.max_unexpected_headers = (int)msg_env_long("UH", 0);
    check(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_LOGICAL, PTL_PID_ANY, &want,
                    &eng.lim, &eng.ni),
          "PtlNIInit (matching, logical, PTL_PID_ANY)");
    if (!ptl_lib_get_stats && ptl_tern_stats)
        ptl_tern_stats(&lib_base, NULL);
    ptl_process_t me;
    check(PtlGetPhysId(eng.ni, &me), "PtlGetPhysId");
    ptl_process_t *map;
    if (size_s) {
        const char *m = getenv("TERN_MAP");
        if (!m) {
            fprintf(stderr, "%s: TERN_SIZE is set but TERN_MAP is not\n", eng.who);
            exit(1);
        }
        map = parse_map(m, eng.size);
    } else {
        /* Started without a launcher: a job of one. */
        map = calloc(1, sizeof *map);
        if (!map)
            exit(1);
        map[0] = me;
    }
    check(PtlSetMap(eng.ni, (ptl_size_t)eng.size, map), "PtlSetMap");
    free(map);
    ptl_process_t id;
    if (PtlGetId(eng.ni, &id) != PTL_OK || (long)id.rank != eng.rank) {
        fprintf(stderr, "%s: this process (nid %u pid %u) is not rank %ld of TERN_MAP\n",
                eng.who, me.phys.nid, me.phys.pid, eng.rank);
        exit(1);
    }
    eng.peers = calloc((size_t)eng.size, sizeof *eng.peers);
    if (!eng.peers) {
        fprintf(stderr, "%s: no memory for %ld peers\n", eng.who, eng.size);
        exit(1);
    }
    split_entries();
    /* The data EQ must hold a whole drain (one event per unexpected
     * header) on top of what is already queued: an event per header and
     * per receive posted, and what the process's own calls add before it
     * polls again (LOCAL_EVENTS_MAX); Portals holds messages back only
     * when it is full.  The misc EQ holds at most one event per operation,
     * rendezvous send and control message: per peer a few of flow control
     * and, either way, LATE_READY_MAX of late sends (their READYs, the puts
     * into our receives). */
    check(PtlEQAlloc(eng.ni,
                     (ptl_size_t)eng.lim.max_unexpected_headers * 2 + (ptl_size_t)eng.recv_cap +
                         2 * LOCAL_EVENTS_MAX + 256 + 2 * (ptl_size_t)eng.size,
                     &eng.eq_data),
          "PtlEQAlloc");
    eng.ops_max = eng.lim.max_mds / 2;
    check(PtlEQAlloc(eng.ni, (ptl_size_t)(eng.ops_max + 1024 + (8 + 2 * LATE_READY_MAX) * eng.size),
                     &eng.eq_misc),
          "PtlEQAlloc");
    msg_reqs_init();
    msg_send_init();   /* control portal first: it answers the barrier */
    msg_flow_init();   /* data portal and unexpected space */
    eng.up = true;
    atexit(finish_at_exit);
    double t0 = now();
    startup_barrier();
    if (eng.verbose)
        fprintf(stderr, "%s start node %ld: start-up barrier %.3f s\n", eng.who, eng.rank,
                now() - t0);
}
