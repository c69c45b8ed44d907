/* Stopping a service daemon that waits in Portals (allocd, fyod) when it is
 * told to: SIGTERM or SIGINT.
 *
 * The daemons wait for requests in PtlEQPoll, for up to seconds.  A signal
 * handler cannot cut that wait short: with the library's progress thread
 * the wait sleeps on a condition variable, and PtlAbort is no call for a
 * handler.  So the two signals are blocked in every thread (the progress
 * thread inherits the mask: svc_stop_start comes before the first Portals
 * call) and taken by a thread of their own with sigwait.  It marks the
 * daemon stopping and aborts its wait, again and again until the daemon
 * says its loop has ended: an abort just before the loop's next PtlEQPoll
 * began would be missed by that poll.  allocd used to see the signal only
 * when its wait of up to --ping-period seconds ended. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>

#include <tern/svc_portals.h>

static sigset_t stop_set;
static atomic_bool stopping, loop_left;
static pthread_t taker;
static bool started;

static void *take(void *arg)
{
    (void)arg;
    int sig;
    while (sigwait(&stop_set, &sig) != 0)
        ;
    atomic_store(&stopping, true);
    while (!atomic_load(&loop_left)) {
        PtlAbort();
        nanosleep(&(struct timespec){ .tv_nsec = 20 * 1000 * 1000 }, NULL);
    }
    return NULL;
}

int svc_stop_start(void)
{
    sigemptyset(&stop_set);
    sigaddset(&stop_set, SIGTERM);
    sigaddset(&stop_set, SIGINT);
    if (pthread_sigmask(SIG_BLOCK, &stop_set, NULL) || pthread_create(&taker, NULL, take, NULL))
        return -1;
    started = true;
    return 0;
}

bool svc_stopping(void) { return atomic_load(&stopping); }

void svc_stop_loop_left(void)
{
    atomic_store(&loop_left, true);
    if (started && atomic_load(&stopping))
        pthread_join(taker, NULL);      /* no abort after this: the daemon's last waits run whole */
}
