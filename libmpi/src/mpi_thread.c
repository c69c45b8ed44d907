/*
 * MPI_THREAD_MULTIPLE: one lock over the whole library, held by a thread
 * while it is inside an MPI call, and let go while it waits.
 *
 * Portals itself takes concurrent calls (the node kernel's serial lock, the
 * Linux host library's mutex), so what needs guarding is the library's
 * own state: requests, queues, communicators, the engine.  One lock keeps
 * that simple and costs nothing until a program asks for MULTIPLE
 * (mpi_thread.h).  It is held by a thread (a depth of its own counts
 * nested entries: a reduction's user function or an error handler may call
 * MPI) and let go where the engine would block (libmsg's wait hooks):
 *
 * - one thread at a time waits in Portals (PtlEQPoll with a timeout) with
 *   the lock let go: the poller.  Its events are handled when it has the
 *   lock back, and then every other waiter is woken to look at its own
 *   request again.  Meanwhile no other thread takes events (may_poll), so
 *   they are handled in the order Portals gives them;
 * - a thread that would block while another polls sleeps on a condition
 *   variable instead (at most 50 ms, then it polls without waiting and
 *   looks again), so no event is taken from under the thread it would wake;
 * - what a thread does in memory makes no Portals event (a message to its
 *   own process is copied at once), so while other threads are inside the
 *   library the poller waits 2 ms at a time, not the engine's 50.
 *
 * Meanwhile other threads enter and post sends and receives: a receive one
 * thread blocks in is matched by a send another thread makes.
 */
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include "mpi_impl.h"
#include "mpi_thread.h"

atomic_bool mpi_multiple;

static pthread_mutex_t big = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t news = PTHREAD_COND_INITIALIZER;
static bool polling;              /* under big: a thread waits in Portals without it */
static int inside;                /* under big: threads inside a call, waiting or not */
static _Thread_local int held;    /* this thread's depth of entries */
static _Thread_local int saved;   /* held, while this thread polls */

bool mpi_enter_locked(void)
{
    if (held++ == 0) {
        pthread_mutex_lock(&big);
        inside++;
    }
    return true;
}

void mpi_leave_locked(void)
{
    if (--held == 0) {
        inside--;
        pthread_mutex_unlock(&big);
    }
}

/* Before the engine blocks in Portals: 1 if this thread let the lock go
 * to poll (wait_end takes it back), -1 if it waited for another poller's
 * news instead (the engine then polls without blocking), 0 if it holds no
 * lock (a call outside one: the process's exit). */
static int wait_begin(unsigned *ms)
{
    if (held == 0)
        return 0;
    if (polling) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_nsec += 50 * 1000000L;
        if (t.tv_nsec >= 1000000000L) {
            t.tv_sec++;
            t.tv_nsec -= 1000000000L;
        }
        int depth = held;
        held = 0;
        pthread_cond_timedwait(&news, &big, &t);
        held = depth;
        return -1;
    }
    polling = true;
    saved = held;
    held = 0;
    /* What another thread does in memory (a message to this process, a
     * window request to itself) makes no Portals event: with other
     * threads inside the library the poller looks up every 2 ms. */
    if (inside > 1 && *ms > 2)
        *ms = 2;
    pthread_mutex_unlock(&big);
    return 1;
}

static void wait_end(void)
{
    pthread_mutex_lock(&big);
    held = saved;
    polling = false;
    /* The waiters run once this thread lets the lock go, after it has
     * handled what it got. */
    pthread_cond_broadcast(&news);
}

/* Events are handled in Portals' order (the engine's protocols rely on
 * it: a rendezvous announcement before its data's landing, a peer's
 * pause before its resumption): while the poller waits without the lock,
 * it may hold an event it has yet to handle, so no other thread takes
 * one. */
static bool may_poll(void) { return held == 0 || !polling; }

void mpi_threads_multiple(void)
{
    msg_set_wait_hooks(wait_begin, wait_end, may_poll);
    atomic_store(&mpi_multiple, true);
}

void mpi_thread_yield(void)
{
    if (held == 0) {
        sched_yield();
        return;
    }
    int depth = held;
    held = 0;
    pthread_mutex_unlock(&big);
    sched_yield();
    pthread_mutex_lock(&big);
    held = depth;
}
