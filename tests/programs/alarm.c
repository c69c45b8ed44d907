/* Timers and waiting for signals.
 *   handler   alarm() with a SIGALRM handler: pause, an interrupted sleep,
 *             a periodic setitimer, alarm's return value, SA_RESTART
 *   default   alarm() with no handler: the program dies of SIGALRM */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t rang;

static void on_alarm(int sig)
{
    (void)sig;
    rang++;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int handler(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);

    alarm(1);
    double t = now();
    int r = pause();
    printf("pause returned %d (%s) after the alarm: %s, waited about a second: %s\n", r,
           errno == EINTR ? "EINTR" : "?", rang == 1 ? "yes" : "no",
           now() - t > 0.5 && now() - t < 5 ? "yes" : "no");

    alarm(1);
    unsigned left = sleep(5);
    printf("sleep(5) cut short by the alarm: %s\n", left >= 3 && left <= 4 ? "yes" : "no");

    printf("alarm(10) then alarm(0) returns %u\n", (alarm(10), alarm(0)));

    struct itimerval it = {{0, 100000}, {0, 100000}}, cur;
    setitimer(ITIMER_REAL, &it, NULL);
    sigset_t none;
    sigemptyset(&none);
    rang = 0;
    while (rang < 3)
        sigsuspend(&none);
    getitimer(ITIMER_REAL, &cur);
    printf("periodic timer rang 3 times; interval %ld us, armed: %s\n", (long)cur.it_interval.tv_usec,
           cur.it_value.tv_sec || cur.it_value.tv_usec ? "yes" : "no");
    it = (struct itimerval){{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &it, NULL);
    getitimer(ITIMER_REAL, &cur);
    printf("disarmed: %s\n", !cur.it_value.tv_sec && !cur.it_value.tv_usec ? "yes" : "no");

    /* A busy loop is interrupted too: the handler runs in the middle. */
    rang = 0;
    setitimer(ITIMER_REAL, &(struct itimerval){{0, 0}, {0, 200000}}, NULL);
    volatile unsigned long spins = 0;
    while (!rang)
        spins++;
    printf("handler ran during a busy loop: yes\n");

    /* Blocked, the signal waits; unblocked, it is delivered. */
    sigset_t alrm;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    sigprocmask(SIG_BLOCK, &alrm, NULL);
    rang = 0;
    alarm(1);
    sleep(2);
    sigset_t pending;
    sigpending(&pending);
    printf("blocked: pending %s, handler ran %d times\n", sigismember(&pending, SIGALRM) ? "yes" : "no",
           (int)rang);
    sigprocmask(SIG_UNBLOCK, &alrm, NULL);
    printf("unblocked: handler ran %d times\n", (int)rang);

    /* sigtimedwait takes a blocked signal without a handler running. */
    sigprocmask(SIG_BLOCK, &alrm, NULL);
    alarm(1);
    struct timespec two = {2, 0};
    int sig = sigtimedwait(&alrm, NULL, &two);
    printf("sigtimedwait took signal %d; times out with %s\n", sig,
           sigtimedwait(&alrm, NULL, &(struct timespec){0, 100000000}) < 0 && errno == EAGAIN ? "EAGAIN" : "?");
    return 0;
}

static int by_default(void)
{
    alarm(1);
    printf("waiting for the alarm\n");
    fflush(stdout);
    pause();
    printf("FAIL: survived SIGALRM\n");
    return 1;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "handler";
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!strcmp(mode, "handler"))
        return handler();
    if (!strcmp(mode, "default"))
        return by_default();
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
}
