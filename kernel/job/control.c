/* Control of a job while it loads and runs: GO, signals and ABORT from yod,
 * yod's heartbeat.  Messages are only believed from the yod that loaded the
 * job.  They are acted on where the kernel can safely stop what it is doing:
 * in its own waits (a program blocked in a Portals wait or a sleep included),
 * in a once-a-second timer tick while the program computes, and when a frame
 * arrives while it computes (the NIC's interrupt, netdev_user_rx): Portals
 * traffic aimed at a computing program is answered at once, without the
 * program calling the library (the reference tests rely on it). */
#include "cpu.h"
#include "job.h"
#include "ranks.h"
#include "netdev.h"
#include "process.h"
#include "ptl_kernel.h"
#include "ptl_lib.h"
#include "signal.h"
#include "thread.h"
#include "time.h"
#include "wait.h"
#include <tern/sha256.h>
#include <tern/yod_proto.h>

static bool in_service;
static int signal_from_yod;
static bool abort_from_yod;
static bool revoked;           /* the allocator says yod stopped answering (TERN_REVOKE) */
static unsigned hold;          /* writes to yod in progress (job_control_hold) */

void job_on_ctl_put(const ptl_event_t *ev)
{
    const struct yod_ctl *c = ev->start;
    if (ev->mlength != sizeof *c || c->magic != YOD_MAGIC || !job.active || c->job != job.id)
        return;
    uint8_t mac[32];
    hmac_sha256(job.key, sizeof job.key, c, offsetof(struct yod_ctl, mac), mac);
    if (ev->initiator.phys.nid != job.yod_nid || ev->initiator.phys.pid != job.yod_pid ||
        !mac_equal(mac, c->mac, sizeof mac)) {
        job_refused("a control message", ev->initiator.phys.nid, ev->initiator.phys.pid,
                    ev->initiator.phys.nid != job.yod_nid || ev->initiator.phys.pid != job.yod_pid
                        ? "not from the job's launcher" : "no proof of the job's key");
        return;
    }
    job.last_heard_ns = time_monotonic_ns();
    job.yod_paused_until = 0;
    switch (c->type) {
    case YOD_GO:
        job_go();
        break;
    case YOD_SIGNAL:
        if (c->arg >= 1 && c->arg <= NSIG && signal_from_yod != SIGKILL)
            signal_from_yod = (int)c->arg;
        break;
    case YOD_ABORT:
        abort_from_yod = true;
        break;
    case YOD_PAUSE:
        job.yod_paused_until = job.last_heard_ns + YOD_PAUSE_MAX_S * 1000000000ULL;
        break;
    default:
        break;
    }
}

static bool fatal_by_default(int sig)
{
    if (sig == SIGCHLD || sig == SIGCONT || sig == SIGWINCH || sig == 23 /* SIGURG */)
        return false;
    return proc.sig.act[sig].handler == SIG_DFL;
}

const char *job_yod_gone_why(void)
{
    if (job.yod_paused_until)
        return "paused longer than it may be";
    if (revoked && time_monotonic_ns() - job.last_heard_ns <= YOD_SILENCE_S * 1000000000ULL)
        return "the allocator says so, and it has been silent 5 s";
    return "nothing from it for 15 s";
}

void job_revoked(uint32_t id)
{
    if (job.active && job.id == id)
        revoked = true;
}

/* A yod stopped by ^Z said PAUSE first: its silence is allowed longer.
 * When the allocator says yod stopped answering it too, a shorter silence
 * is enough: two witnesses.  A paused yod does not answer the allocator
 * either, so a pause still counts as the pause; a yod heard from since
 * (slow, not gone) has not been silent long enough. */
bool job_yod_silent(void)
{
    uint64_t now = time_monotonic_ns();
    if (job.yod_paused_until)
        return now > job.yod_paused_until;
    uint64_t quiet = now - job.last_heard_ns;
    return quiet > YOD_SILENCE_S * 1000000000ULL ||
           (revoked && quiet > YOD_REVOKED_SILENCE_S * 1000000000ULL);
}

void job_wait_yod_awake(void)
{
    while (job.yod_paused_until && !job_yod_silent())
        knode_pause(100000000ULL);
}

static bool signal_ends_job(int sig)
{
    return sig == SIGKILL || !job.running ||
           (fatal_by_default(sig) && !signal_blocked_everywhere(sig));
}

bool job_end_pending(void)
{
    return !job.ending && (abort_from_yod || (signal_from_yod && signal_ends_job(signal_from_yod)) ||
                           job_yod_silent());
}

/* Acts on what the dispatcher recorded.  May end the job (and not return).
 * Not while a write to yod is under way (its release acts), nor once the
 * rank is ending anyway: its own end (exit status, fault) is what yod must
 * hear, and the report in flight must not be cut off. */
static void act(void)
{
    if (hold || job.ending)
        return;
    if (abort_from_yod) {
        kprintf("job %u: aborted by yod\n", job.id);
        job_end(END_LOAD_ERROR, 0, NULL);
    }
    if (signal_from_yod) {
        int sig = signal_from_yod;
        signal_from_yod = 0;
        if (!job.go) {
            kprintf("job %u: signal %d from yod while loading: job dropped\n", job.id, sig);
            job_end(END_LOAD_ERROR, 0, NULL);
        }
        job.yod_signal = sig;
        if (signal_ends_job(sig))    /* before GO's first instruction too */
            job_end(END_SIGNAL, sig, NULL);
        ranks_signal_all(sig);       /* every rank of the node (one without ranks) */
    }
    if (revoked && job_yod_silent()) {
        kprintf("job %u: its yod (nid %u pid %u) is gone (%s): ending the job\n", job.id,
                job.yod_nid, job.yod_pid, job_yod_gone_why());
        job.yod_gone = true;
        job_end(job.running ? END_SIGNAL : END_LOAD_ERROR, SIGKILL, NULL);
    }
    if (job_yod_silent()) {
        kprintf("job %u: nothing from yod (nid %u pid %u) for %u s: ending the job\n", job.id,
                job.yod_nid, job.yod_pid, YOD_SILENCE_S);
        job.yod_gone = true;
        job_end(job.running ? END_SIGNAL : END_LOAD_ERROR, SIGKILL, NULL);
    }
}

void job_control_hold(void) { hold++; }

void job_control_release(void)
{
    if (hold && --hold == 0)
        act();
}

/* Nearly every wake of a program's wait is its own message: nothing came
 * to the kernel's interface, so nothing of yod's can wait in the kernel's
 * queue, and no flag for act() is up.  The turn (a look at that queue, the
 * load slots, two looks at the clock) was then work on every message's
 * path.  So a turn is taken when a frame came for the kernel, a flag is
 * up, or SERVE_EVERY_NS passed (yod's silence is a look at the clock,
 * counted in seconds).  A 2-node NX ping-pong under yod under TCG, medians
 * of four alternating pairs: 106.2 -> 104.0 us one-way
 * (docs/performance.md). */
#define SERVE_EVERY_NS 100000000ULL
static uint64_t served_frames, serve_due;

void job_service_from_wait(void)
{
    if (!job.active || in_service || !knode.open)
        return;
    /* The clock last: the counter and the flags are plain loads. */
    uint64_t frames = ptl_kernel_iface_frames();
    if (frames == served_frames && !signal_from_yod && !abort_from_yod &&
        time_monotonic_ns() < serve_due)
        return;
    serve_due = time_monotonic_ns() + SERVE_EVERY_NS;
    in_service = true;
    /* Reached from inside the program's Portals call too, where the
     * library only lets the program's interface be named: the kernel's
     * own work here names its own. */
    uint32_t restricted = ptl_lib_restrict(0);
    if (!knode_waiting) {           /* else that wait takes the queue's events */
        knode_dispatch_pending();
        job_refuse_busy();
        served_frames = frames;
    }
    in_service = false;
    act();
    ptl_lib_restrict(restricted);
}

void job_control_reset(void)
{
    in_service = false;
    serve_due = 0;                  /* a new job's first turn is taken */
    signal_from_yod = 0;
    abort_from_yod = false;
    revoked = false;
    hold = 0;
}

/* At most this often while the program computes, the tick comes back for
 * the library's next deadline: a deadline the library cannot clear at once
 * (no memory for a window, a full transmit ring) would otherwise ring
 * again and again in the program's time. */
#define TICK_AGAIN_MIN_NS 100000ULL

/* The library's next deadline, not sooner than TICK_AGAIN_MIN_NS from now:
 * when the tick comes back, and how long a wait that is not the library's
 * own may halt (the wait hook's due). */
static uint64_t net_due(void)
{
    uint64_t d = ptl_lib_next_deadline(), soonest = time_monotonic_ns() + TICK_AGAIN_MIN_NS;
    return d > soonest ? d : soonest;
}

/* The program has the CPU: hand over what has arrived, let the library
 * retransmit, and act on yod's messages; a signal it asked for is delivered
 * on the interrupt's way back (signal_interrupted), to this thread or, by
 * the kick's IPI, to one computing on another core. */
static void tick(struct regs *r)
{
    (void)r;
    /* With several threads this is the serial lock's work: skipped while
     * another thread holds it (its own waits serve the job meanwhile). */
    bool locked = threads_many();
    if (locked && !serial_trylock())
        return;
    int frames = knode_take();
    /* The program computes: an ACK of a frame that arrived just now waits
     * for no answer of its (reliable.c).  An interrupt that brought nothing
     * new is most often the late one of a frame the program's own wait took
     * in by polling before it returned; the program is then about to
     * answer, and the ACK it holds rides in that answer's header.  Released
     * here, it cost a frame of its own on each side, ahead of the answer on
     * its path: 1-5 % of the messages of an idle 2-node NX ping-pong under
     * TCG, 15 % on a busier host (docs/performance.md).  It is held until
     * its time, with the tick called again by then in case the program
     * computes on. */
    if (frames > 0)
        ptl_lib_send_held(PTL_HELD_FRAME);
    /* Back by the library's next deadline either way: the frames just
     * taken in may be owed an acknowledgement. */
    time_user_tick_by(net_due());
    job_service_from_wait();
    if (locked)
        serial_unlock();
}

/* In every kernel wait while the job is active (wait.h): what has arrived
 * is handed over, the library's timers run, then yod's messages are acted
 * on.  In the library's own wait, which has just taken in what arrived and
 * runs the timers right after, only the last: in a 2-node NX ping-pong
 * under TCG the turn took 6-13 us of every wake with them, 3-4 us without,
 * on the way from the frame to the program (docs/performance.md). */
static void serve_in_wait(bool net_progress_next)
{
    if (!net_progress_next) {
        ptl_kernel_poll();
        ptl_lib_progress();
    }
    job_service_from_wait();
}

static const struct wait_hook job_wait = {YOD_HEARTBEAT_S * 1000000000ULL, serve_in_wait,
                                          net_due};
static const struct node_owner job_owner = {job_fault_report, job_program_end};

void job_attach(void)
{
    wait_set_hook(&job_wait);
    node_set_owner(&job_owner);
    ptl_kernel_set_app_jid(job.id);
}

void job_detach(void)
{
    wait_set_hook(NULL);
    node_set_owner(NULL);
    ptl_kernel_set_app_jid(0);
}

/* The same work when a frame arrives while the program computes (the NIC's
 * interrupt): a get or atomic aimed at it is answered at once. */
void job_tick_start(void)
{
    time_user_tick(tick, YOD_HEARTBEAT_S * 1000000000ULL);
    netdev_user_rx(tick);
}

void job_tick_stop(void)
{
    netdev_user_rx(NULL);
    time_user_tick(NULL, 0);
}
