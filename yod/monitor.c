/* The running job: events from the nodes (reports, output), yod's
 * heartbeats (a node that does not acknowledge one is lost), signals typed
 * at yod, stdin for rank 0, -timeout, and `yod -kill`.  The job ends when
 * every rank has ended or is lost; one rank failing ends the others, after
 * FAIL_GRACE_S in which ranks that are ending anyway report their own end. */
#define _GNU_SOURCE
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tern/fileserver.h>
#include <tern/tern_proto.h>
#include "yod.h"
#include "ptl_me.h"

#define REPORT_BUF (1u << 20)
#define OUTPUT_BUF (8u << 20)
#define GRACE_S 5.0
#define FAIL_GRACE_S 2.0

static bool kill_requested;            /* yod -kill, through the allocator */
static bool killing;                   /* SIGKILL sent to every rank */
static double killed_at;
#define KILL_WAIT_S 20.0                /* then ranks that never answered are lost */
static double escalate_at;
static char why_killed[200];           /* for the job: "job 3 <why>" */
static char kill_reason[200];          /* for a rank: "killed by yod because <reason>" */
static double failed_at;               /* a rank failed: the others are killed after the grace */
static int first_failed = -1;

/* stdin of yod goes to rank 0 when it asks. */
static struct { bool want; uint64_t len, seq; bool busy; bool eof; char buf[65536];
                ptl_handle_md_t md; } in;

void note(const char *fmt, ...)
{
    if (Y.opt.quiet)
        return;
    char buf[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    output_say("yod: %s\n", buf);
}

/* ---- receive buffers: MANAGE_LOCAL, re-posted when used up -------------- */

struct rbuf { ptl_pt_index_t pt; uint64_t bits, ignore; size_t len, min_free; char *mem;
              bool held; };
static struct rbuf rbufs[6];
static bool output_pt_off;    /* refused puts disabled it while output was held */

static void post_rbuf(struct rbuf *b)
{
    /* Back-pressure: while yod's own output waits for its reader, a used
     * output buffer is not given back, and the ranks' puts are refused
     * (they are sent again; their writes wait). */
    if (b->pt == YOD_PT_OUTPUT && output_queued() > OUTPUT_QUEUE_HIGH) {
        b->held = true;
        return;
    }
    b->held = false;
    ptl_me_t me = ptl_me_phys(b->mem, b->len,
                              PTL_ME_OP_PUT | PTL_ME_MANAGE_LOCAL | PTL_ME_NO_TRUNCATE |
                              PTL_ME_EVENT_LINK_DISABLE,
                              b->bits);
    me.min_free = b->min_free;
    me.ignore_bits = b->ignore;
    ptl_handle_me_t h;
    PtlMEAppend(Y.ni, b->pt, &me, PTL_PRIORITY_LIST, b, &h);
}

int post_receive_buffers(void)
{
    for (int i = 0; i < 6; i++) {
        bool out = i >= 2;
        rbufs[i] = (struct rbuf){out ? YOD_PT_OUTPUT : YOD_PT_REPORT,
                                 out ? (uint64_t)Y.job << 32 : Y.job,
                                 out ? 0xFFFFFFFFull : 0,
                                 out ? OUTPUT_BUF : REPORT_BUF,
                                 out ? YOD_OUTPUT_CHUNK : sizeof(struct yod_report), NULL, false};
        rbufs[i].mem = malloc(rbufs[i].len);
        if (!rbufs[i].mem)
            return -1;
        post_rbuf(&rbufs[i]);
    }
    return 0;
}

static bool is_rbuf(const void *p) { return p >= (void *)rbufs && p < (void *)(rbufs + 6); }

/* Output buffers held back go back once the reader has caught up. */
static bool release_output(void)
{
    bool held = false;
    for (int i = 0; i < 6; i++)
        if (rbufs[i].held) {
            post_rbuf(&rbufs[i]);
            held |= rbufs[i].held;
        }
    if (!held && output_pt_off) {
        output_pt_off = false;
        PtlPTEnable(Y.ni, YOD_PT_OUTPUT);
    }
    return held;
}

/* ---- events -------------------------------------------------------------- */

static void rank_lost(int r, const char *why)
{
    struct rank *rk = &Y.ranks[r];
    if (rk->state == R_EXITED || rk->state == R_LOST || rk->state == R_FAILED_LOAD)
        return;
    rk->state = R_LOST;
    snprintf(rk->message, sizeof rk->message, "%s", why);
    output_flush(r);
}

/* What a rank's last write still owed yod when the rank ended: a write cut
 * by a kill (more than YOD_FINISH_MAX left), or in flight on a lost node. */
static void owed_text(const struct rank *rk, char *out, size_t len)
{
    out[0] = 0;
    for (int fd = 1; fd <= 2; fd++)
        if (rk->owed[fd] > rk->got[fd]) {
            size_t o = strlen(out);
            snprintf(out + o, len - o, "; %llu bytes of its last write to %s never reached yod",
                     (unsigned long long)(rk->owed[fd] - rk->got[fd]),
                     fd == 1 ? "stdout" : "stderr");
        }
}

static void on_report(const ptl_event_t *ev)
{
    const uint32_t *w = ev->start;
    if (ev->mlength == 8 && w[0] == TERN_KILL_NOTICE && w[1] == Y.job &&
        ev->initiator.phys.nid == Y.alloc_nid && ev->initiator.phys.pid == TERN_ALLOC_PID) {
        kill_requested = true;
        return;
    }
    const struct yod_report *rp = ev->start;
    if (ev->mlength != sizeof *rp || rp->magic != YOD_MAGIC || rp->job != Y.job ||
        rp->rank >= (uint32_t)Y.size)
        return;
    struct rank *rk = &Y.ranks[rp->rank];
    if (ev->initiator.phys.nid != rk->nid || ev->initiator.phys.pid != YOD_NODE_PID)
        return;
    switch (rp->type) {
    case YOD_LOADED:
        if (rk->state == R_LOADING)
            rk->state = R_LOADED;
        break;
    case YOD_LOAD_FAILED:
        if (rk->state == R_LOADING || rk->state == R_LOADED) {
            rk->state = R_FAILED_LOAD;
            snprintf(rk->message, sizeof rk->message, "%.223s", rp->message);
        }
        break;
    case YOD_EXITED:
        if (rk->state == R_EXITED || rk->state == R_LOST)
            break;
        output_flush((int)rp->rank);
        rk->state = R_EXITED;
        rk->status = rp->status;
        rk->signal = rp->signal;
        rk->by_yod = rp->signal && (rp->arg & YOD_ENDED_BY_YOD);
        rk->usec = rp->usec;
        snprintf(rk->message, sizeof rk->message, "%.223s", rp->message);
        break;
    case YOD_STDIN_WANT:
        if (rp->rank == 0) {
            in.want = true;
            in.len = rp->arg;
            in.seq = rp->seq;
        }
        break;
    default:
        break;
    }
}

static void on_output(const ptl_event_t *ev)
{
    uint32_t rank = (uint32_t)(ev->match_bits >> 2) & 0x3FFFFFFF;
    int fd = (int)(ev->match_bits & 3);
    if (rank >= (uint32_t)Y.size || ev->initiator.phys.nid != Y.ranks[rank].nid ||
        (fd != 1 && fd != 2))
        return;
    struct rank *rk = &Y.ranks[rank];
    rk->got[fd] += ev->mlength;
    if (ev->hdr_data > rk->owed[fd])
        rk->owed[fd] = ev->hdr_data;
    output_append((int)rank, fd, ev->start, ev->mlength);
}

static int pause_acks;

static void on_ack(const ptl_event_t *ev)
{
    uint64_t tag = (uint64_t)(uintptr_t)ev->user_ptr;
    int kind = (int)(tag >> 32), r = (int)(uint32_t)tag - 1;
    if (r < 0 || r >= Y.size)
        return;
    struct rank *rk = &Y.ranks[r];
    bool gone = ev->ni_fail_type == PTL_NI_UNDELIVERABLE;
    char why[160];
    snprintf(why, sizeof why, "node nid %u stopped answering", rk->nid);
    switch (kind) {
    case OP_DESC:
        PtlMDRelease(rk->desc_md);
        free(rk->desc);
        rk->desc = NULL;
        if (gone)
            rank_lost(r, why);
        else if (ev->ni_fail_type != PTL_NI_OK && rk->state == R_LOADING) {
            rk->state = R_FAILED_LOAD;
            snprintf(rk->message, sizeof rk->message,
                     "node nid %u did not take the job (Portals failure %d): is it a Tern node "
                     "waiting for jobs?", rk->nid, (int)ev->ni_fail_type);
        }
        break;
    case OP_HEARTBEAT:
        rk->hb_outstanding = false;
        /* fall through */
    case OP_PAUSE:
        pause_acks += kind == OP_PAUSE;
        /* fall through */
    case OP_CTL:
        ctl_unacked -= kind == OP_CTL;
        if (gone)
            rank_lost(r, why);
        break;
    case OP_STDIN:
        PtlMDRelease(in.md);
        in.busy = false;
        break;
    default:
        break;
    }
}

void handle_event(const ptl_event_t *ev)
{
    if (fs_event(ev))       /* a file request of a rank, or its transfers */
        return;
    switch (ev->type) {
    case PTL_EVENT_PUT:
        if (ev->pt_index == YOD_PT_REPORT)
            on_report(ev);
        else if (ev->pt_index == YOD_PT_OUTPUT)
            on_output(ev);
        break;
    case PTL_EVENT_AUTO_UNLINK:
        if (is_rbuf(ev->user_ptr))
            post_rbuf(ev->user_ptr);
        break;
    case PTL_EVENT_PT_DISABLED:
        /* We fell behind and senders were refused (they retry); there is room
         * again now that events are being taken - unless output is held
         * back, then once it is released. */
        if (ev->pt_index == YOD_PT_OUTPUT && output_queued() > OUTPUT_QUEUE_HIGH)
            output_pt_off = true;
        else
            PtlPTEnable(Y.ni, ev->pt_index);
        break;
    case PTL_EVENT_ACK:
        on_ack(ev);
        break;
    default:
        break;
    }
}

/* ---- the run ------------------------------------------------------------- */

/* why: for the job line (unless one was set); reason: for each rank it ends. */
static void kill_all(const char *why, const char *reason)
{
    if (killing)
        return;
    killing = true;
    killed_at = now_s();
    if (why && !why_killed[0])
        snprintf(why_killed, sizeof why_killed, "%s", why);
    snprintf(kill_reason, sizeof kill_reason, "%s", reason);
    for (int r = 0; r < Y.size; r++)
        if (Y.ranks[r].state == R_RUNNING)
            send_ctl(r, YOD_SIGNAL, SIGKILL);
}

static void signal_all(int sig)
{
    for (int r = 0; r < Y.size; r++)
        if (Y.ranks[r].state == R_RUNNING)
            send_ctl(r, YOD_SIGNAL, (uint32_t)sig);
}

static void serve_stdin(void)
{
    if (!in.want || in.busy)
        return;
    size_t n = 0;
    if (!in.eof) {
        struct pollfd p = {0, POLLIN, 0};
        if (poll(&p, 1, 0) <= 0)
            return;
        size_t want = in.len < sizeof in.buf ? in.len : sizeof in.buf;
        ssize_t k = read(0, in.buf, want);
        if (k < 0)
            return;
        n = (size_t)k;
        in.eof = k == 0;
    }
    ptl_md_t mdd = {.start = in.buf, .length = n, .options = PTL_MD_EVENT_SEND_DISABLE,
                    .eq_handle = Y.eq, .ct_handle = PTL_CT_NONE};
    if (PtlMDBind(Y.ni, &mdd, &in.md) != PTL_OK)
        return;
    ptl_process_t to;
    to.phys.nid = Y.ranks[0].nid;
    to.phys.pid = YOD_NODE_PID;
    in.busy = true;
    in.want = false;
    PtlPut(in.md, 0, n, PTL_ACK_REQ, to, YOD_PT_STDIN, (uint64_t)Y.job << 32 | (in.seq & 0xFFFFFFFF),
           0, op_tag(OP_STDIN, 0), 0);
}

static const char *signame(int s)
{
    static char buf[16];
    const char *n = s > 0 && s < NSIG ? sigabbrev_np(s) : NULL;
    if (!n) {
        snprintf(buf, sizeof buf, "%d", s);
        return buf;
    }
    snprintf(buf, sizeof buf, "SIG%s", n);
    return buf;
}

static void poll_for(double secs, const int *until_acks)
{
    double end = now_s() + secs;
    while (now_s() < end && !(until_acks && pause_acks >= *until_acks)) {
        ptl_event_t ev;
        unsigned which;
        if (PtlEQPoll(&Y.eq, 1, 20, &ev, &which) == PTL_OK)
            handle_event(&ev);
    }
}

/* ^Z: the nodes are told to send yod nothing, and to wait for it (up to
 * YOD_PAUSE_MAX_S), before yod stops; what they were sending when the
 * PAUSE came is taken in first.  At SIGCONT a heartbeat lets them go on. */
static void stop_for_the_shell(void)
{
    int want = 0;
    pause_acks = 0;
    for (int r = 0; r < Y.size; r++)
        if (Y.ranks[r].state == R_RUNNING) {
            send_ctl(r, YOD_PAUSE, 0);
            want++;
        }
    poll_for(2.0, &want);
    poll_for(0.3, NULL);
    signal(SIGTSTP, SIG_DFL);
    raise(SIGTSTP);                        /* stopped here until SIGCONT */
    yod_catch_tstp();
    for (int r = 0; r < Y.size; r++)
        if (Y.ranks[r].state == R_RUNNING) {
            Y.ranks[r].hb_outstanding = true;
            send_ctl(r, YOD_HEARTBEAT, 0);
        }
}

static bool rank_failed(const struct rank *rk)
{
    return rk->state == R_LOST || (rk->state == R_EXITED && (rk->status || rk->signal));
}

int monitor(void)
{
    for (int r = 0; r < Y.size; r++)
        Y.ranks[r].state = R_RUNNING;
    send_ctl_all(YOD_GO, 0);
    Y.t_loaded = now_s();
    double next_hb = now_s() + YOD_HEARTBEAT_S;
    int seen_int = 0;
    bool held = false;
    while (count_state(R_RUNNING) > 0) {
        ptl_event_t ev;
        unsigned which;
        int rc = PtlEQPoll(&Y.eq, 1, in.want || held ? 20 : 200, &ev, &which);
        while (rc == PTL_OK || rc == PTL_EQ_DROPPED) {
            handle_event(&ev);
            rc = PtlEQGet(Y.eq, &ev);
        }
        if (yod_tstp) {
            yod_tstp = 0;
            stop_for_the_shell();
        }
        held = release_output();
        double t = now_s();
        serve_stdin();
        if (t >= next_hb) {
            for (int r = 0; r < Y.size; r++)
                if (Y.ranks[r].state == R_RUNNING && !Y.ranks[r].hb_outstanding) {
                    Y.ranks[r].hb_outstanding = true;
                    send_ctl(r, YOD_HEARTBEAT, 0);
                }
            next_hb = t + YOD_HEARTBEAT_S;
        }
        if (yod_interrupted > seen_int) {
            seen_int = yod_interrupted;
            if (seen_int == 1) {
                output_say("yod: interrupt: sending SIGINT to the job (again to kill it)\n");
                snprintf(why_killed, sizeof why_killed, "interrupted");
                signal_all(SIGINT);
                escalate_at = t + GRACE_S;
            } else {
                kill_all("interrupted", "yod was interrupted twice");
            }
        }
        if (escalate_at && t >= escalate_at) {
            escalate_at = 0;
            snprintf(why_killed, sizeof why_killed, "interrupted (the job ignored SIGINT for %g s)",
                     GRACE_S);
            char m[96];
            snprintf(m, sizeof m, "it ignored SIGINT for %g s", GRACE_S);
            kill_all(NULL, m);
        }
        if (yod_terminated)
            kill_all("yod was terminated", "yod was terminated");
        if (yod_usr1) {
            yod_usr1 = 0;
            signal_all(SIGUSR1);
        }
        if (yod_usr2) {
            yod_usr2 = 0;
            signal_all(SIGUSR2);
        }
        if (kill_requested)
            kill_all("killed by yod -kill", "of yod -kill");
        if (Y.opt.timeout > 0 && t > Y.t_start + Y.opt.timeout) {
            char m[96], reason[96];
            snprintf(m, sizeof m, "ran past -timeout %g s", Y.opt.timeout);
            snprintf(reason, sizeof reason, "the job ran past -timeout %g s", Y.opt.timeout);
            kill_all(m, reason);
        }
        if (killing && t > killed_at + KILL_WAIT_S)
            for (int r = 0; r < Y.size; r++)
                if (Y.ranks[r].state == R_RUNNING)
                    rank_lost(r, "no answer to SIGKILL");
        /* One rank failed: the others go, but ranks that are ending anyway
         * (the same failure everywhere, an exit under way) have the grace
         * to report their own end first. */
        for (int r = 0; r < Y.size && first_failed < 0; r++)
            if (rank_failed(&Y.ranks[r])) {
                first_failed = r;
                failed_at = t;
                if (!why_killed[0])
                    snprintf(why_killed, sizeof why_killed, "rank %d failed", r);
            }
        if (first_failed >= 0 && !killing && t >= failed_at + FAIL_GRACE_S) {
            char m[96];
            snprintf(m, sizeof m, "rank %d failed", first_failed);
            kill_all(NULL, m);
        }
    }
    Y.t_end = now_s();
    int failed = 0;
    for (int r = 0; r < Y.size; r++)
        failed += rank_failed(&Y.ranks[r]);
    if (why_killed[0] && (failed || killing))
        note("job %u %s", Y.job, why_killed);
    for (int r = 0; r < Y.size; r++) {
        const struct rank *rk = &Y.ranks[r];
        if (!rank_failed(rk))
            continue;
        char owed[200];
        owed_text(rk, owed, sizeof owed);
        if (rk->state == R_LOST)
            note("rank %d (nid %u): lost: %s%s", r, rk->nid, rk->message, owed);
        else if (rk->by_yod && rk->signal == SIGKILL)
            note("rank %d (nid %u): killed by yod because %s%s", r, rk->nid, kill_reason, owed);
        else if (rk->by_yod)        /* SIGINT (^C), SIGUSR1, SIGUSR2 */
            note("rank %d (nid %u): killed by %s (from yod)%s", r, rk->nid, signame(rk->signal),
                 owed);
        else if (rk->signal)
            note("rank %d (nid %u): killed by %s%s%s%s", r, rk->nid, signame(rk->signal),
                 rk->message[0] ? ": " : "", rk->message, owed);
        else
            note("rank %d (nid %u): exited with status %d%s", r, rk->nid, rk->status, owed);
    }
    if (Y.opt.verbose)
        output_say("yod: job %u: %d ranks loaded in %.1f ms, ran %.1f ms, %.1f ms in all\n",
                Y.job, Y.size, (Y.t_loaded - Y.t_start) * 1e3, (Y.t_end - Y.t_loaded) * 1e3,
                (Y.t_end - Y.t_start) * 1e3);
    return failed ? 1 : 0;
}
