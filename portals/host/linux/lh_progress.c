/* The progress thread: Portals makes progress while the program computes.
 * A target that never calls Portals still answers gets and atomics, takes
 * puts, acknowledges frames and resends its own (spec: an implementation
 * must progress without the application calling in; the reference tests
 * sleep, then look at the result).
 *
 * One thread per process, started with the host (the first PtlNIInit)
 * unless TERN_PTL_PROGRESS=0.  It sleeps in ppoll on the packet socket and
 * an eventfd (lh_progress_kick: a frame to this very process was queued),
 * hands frames to the library and runs its timers.  Program threads that
 * wait (PtlEQWait, PtlCTWait, the polls) then sleep on a condition
 * variable the thread signals after every batch, instead of polling the
 * socket themselves: one poller, no frames taken from under each other.
 *
 * Lost wakeups: a waiter notes the batch count when it takes the library
 * lock (lh_progress_note), the library checks its condition under that
 * lock, and the waiter sleeps only while the count is still the one it
 * noted; a batch that ends after the check counts up and wakes it. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include "lh_internal.h"
#include "ptl_host.h"
#include "ptl_lib.h"

#define BATCH_MAX 256            /* frames per batch before timers run */
#define SLEEP_CAP_NS 50000000ull /* see lh_host.c: timers armed meanwhile */

static pthread_mutex_t wake_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake_c;
static uint64_t batches;            /* under wake_m */
static bool running;
static int kick_fd = -1;
static pthread_t thread;
static _Thread_local uint64_t noted;

bool lh_progress_running(void) { return __atomic_load_n(&running, __ATOMIC_ACQUIRE); }

void lh_progress_note(void)
{
    if (lh_progress_running())
        noted = __atomic_load_n(&batches, __ATOMIC_ACQUIRE);
}

/* Wake every waiter (a batch ended, or PtlAbort). */
void lh_progress_signal(void)
{
    pthread_mutex_lock(&wake_m);
    __atomic_add_fetch(&batches, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&wake_c);
    pthread_mutex_unlock(&wake_m);
}

void lh_progress_kick(void)
{
    if (kick_fd >= 0) {
        uint64_t one = 1;
        ssize_t r = write(kick_fd, &one, sizeof one);
        (void)r; /* a full counter is a pending wakeup already */
    }
}

/* A program thread waiting for the library's condition. */
void lh_progress_wait(uint64_t deadline_ns)
{
    struct timespec ts;
    ts.tv_sec = (time_t)(deadline_ns / 1000000000ull);
    ts.tv_nsec = (long)(deadline_ns % 1000000000ull);
    pthread_mutex_lock(&wake_m);
    while (__atomic_load_n(&batches, __ATOMIC_ACQUIRE) == noted &&
           ptl_host_now_ns() < deadline_ns)
        if (pthread_cond_timedwait(&wake_c, &wake_m, &ts) == ETIMEDOUT)
            break;
    pthread_mutex_unlock(&wake_m);
}

static void *progress_main(void *arg)
{
    (void)arg;
    lh_host_enter();
    for (;;) {
        uint64_t d = ptl_lib_next_deadline(), now = ptl_host_now_ns();
        if (d > now + SLEEP_CAP_NS)
            d = now + SLEEP_CAP_NS;
        int n = 0;
        if (!lh_packet_rx_ready() && !lh_loop_ready() && d > now) {
            struct pollfd pfd[2] = { { .fd = lh_packet_fd(), .events = POLLIN },
                                     { .fd = kick_fd, .events = POLLIN } };
            uint64_t ns = d - now;
            struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };
            if (ppoll(pfd, 2, &ts, NULL) > 0 && (pfd[1].revents & POLLIN)) {
                uint64_t v;
                ssize_t r = read(kick_fd, &v, sizeof v);
                (void)r;
            }
        }
        int got;
        do {
            got = lh_loop_drain(LH_RX_BATCH) + lh_packet_drain(LH_RX_BATCH, true);
            n += got;
        } while (got && n < BATCH_MAX);
        ptl_lib_progress();
        lh_progress_signal();
    }
    return NULL;
}

/* fork() copies only the calling thread: the child has no progress thread,
 * so its waits poll the socket themselves again (as with
 * TERN_PTL_PROGRESS=0), instead of sleeping for a thread that is not there. */
static void child_after_fork(void)
{
    __atomic_store_n(&running, false, __ATOMIC_RELEASE);
    if (kick_fd >= 0)
        close(kick_fd);
    kick_fd = -1;
}

/* TERN_PTL_PROGRESS=0 (or "off"): no thread; progress inside Ptl* calls
 * only, as before. */
static bool wanted(void)
{
    const char *s = getenv("TERN_PTL_PROGRESS");
    return !s || !(*s == '0' || !strcmp(s, "off") || !strcmp(s, "no"));
}

void lh_progress_start(void)
{
    if (!wanted())
        return;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&wake_c, &ca);
    pthread_condattr_destroy(&ca);
    kick_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (kick_fd < 0) {
        fprintf(stderr, "tern portals: eventfd: %s: no progress thread\n", strerror(errno));
        return;
    }
    /* Signals are the program's: the thread takes none. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&thread, NULL, progress_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc) {
        fprintf(stderr, "tern portals: progress thread: %s\n", strerror(rc));
        close(kick_fd);
        kick_fd = -1;
        return;
    }
    pthread_detach(thread);
    pthread_atfork(NULL, NULL, child_after_fork);
    __atomic_store_n(&running, true, __ATOMIC_RELEASE);
}
