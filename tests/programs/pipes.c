/* Pipes, eventfds, timerfds and epoll within one process: what runtimes (Go's
 * network poller, libuv, libevent) and the self-pipe trick use.  Each line
 * says yes or no, or an errno name; the same on Linux.
 *   pipes       the calls one thread makes
 *   threads     a thread blocked in read, in epoll_wait and in poll, each
 *               woken by the main thread's write 50 ms later
 *   selfblock   reads its own empty pipe, with no other thread (Linux:
 *               waits for ever; a node: a deadlock report) */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static const char *yes(int ok) { return ok ? "yes" : "NO"; }

static const char *ename(int e)
{
    switch (e) {
    case 0: return "OK";
    case EAGAIN: return "EAGAIN";
    case EPIPE: return "EPIPE";
    case EBADF: return "EBADF";
    case EINVAL: return "EINVAL";
    case EEXIST: return "EEXIST";
    case ENOENT: return "ENOENT";
    case EPERM: return "EPERM";
    default: return "OTHER";
    }
}

static volatile int sigpipes;
static void on_sigpipe(int s) { (void)s; sigpipes++; }

static int one_thread(void)
{
    int p[2];
    printf("pipe2: %s", ename(pipe2(p, O_CLOEXEC) ? errno : 0));
    struct stat st;
    fstat(p[0], &st);
    printf(", a FIFO %s, close-on-exec %s\n", yes(S_ISFIFO(st.st_mode)),
           yes(fcntl(p[1], F_GETFD) == FD_CLOEXEC));
    char buf[64] = "";
    ssize_t w = write(p[1], "hello", 5), r = read(p[0], buf, sizeof buf);
    printf("write %zd, read %zd '%.*s'\n", w, r, (int)(r > 0 ? r : 0), buf);
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    r = read(p[0], buf, sizeof buf);
    printf("empty, O_NONBLOCK: %s\n", ename(r < 0 ? errno : 0));
    int d = dup(p[1]);
    close(p[1]);
    struct pollfd pf = {p[0], POLLIN, 0};
    printf("a dup of the write end open: poll %d", poll(&pf, 1, 0));
    close(d);
    pf.revents = 0;
    int n = poll(&pf, 1, 0);
    printf("; all closed: poll %d POLLHUP %s", n, yes(pf.revents & POLLHUP));
    printf(", read %zd\n", read(p[0], buf, sizeof buf));
    close(p[0]);

    pipe(p);
    close(p[0]);
    signal(SIGPIPE, on_sigpipe);
    w = write(p[1], "x", 1);
    printf("no reader: write %s, SIGPIPE %s\n", ename(w < 0 ? errno : 0), yes(sigpipes == 1));
    close(p[1]);

    /* Filling: the capacity may differ, the sum may not. */
    pipe2(p, O_NONBLOCK);
    static char big[1 << 16];
    long in = 0, k;
    while ((k = write(p[1], big, 1000)) > 0)
        in += k;
    int full = errno == EAGAIN;
    long out = 0;
    while ((k = read(p[0], big, sizeof big)) > 0)
        out += k;
    printf("filled until EAGAIN %s, read back all of it %s\n", yes(full && in > 0), yes(out == in));
    close(p[0]);
    close(p[1]);

    int e = eventfd(0, EFD_NONBLOCK);
    uint64_t v = 3, got = 0;
    write(e, &v, 8);
    v = 4;
    write(e, &v, 8);
    read(e, &got, 8);
    printf("eventfd: 3 + 4 read %llu", (unsigned long long)got);
    printf("; again %s", ename(read(e, &got, 8) < 0 ? errno : 0));
    printf("; 4 bytes %s\n", ename(read(e, &got, 4) < 0 ? errno : 0));
    close(e);
    e = eventfd(2, EFD_SEMAPHORE);
    uint64_t a = 0, b = 0;
    read(e, &a, 8);
    read(e, &b, 8);
    printf("semaphore: %llu %llu\n", (unsigned long long)a, (unsigned long long)b);
    close(e);

    int ep = epoll_create1(EPOLL_CLOEXEC);
    pipe(p);
    struct epoll_event ev = {EPOLLIN, {.u64 = 42}}, out_ev[4];
    printf("epoll_ctl ADD %s", ename(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev) ? errno : 0));
    printf(", again %s", ename(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev) ? errno : 0));
    printf(", MOD of another %s", ename(epoll_ctl(ep, EPOLL_CTL_MOD, p[1], &ev) ? errno : 0));
    printf(", of itself %s\n", ename(epoll_ctl(ep, EPOLL_CTL_ADD, ep, &ev) ? errno : 0));
    printf("nothing: %d", epoll_wait(ep, out_ev, 4, 0));
    write(p[1], "ab", 2);
    n = epoll_wait(ep, out_ev, 4, 0);
    printf("; written: %d, EPOLLIN %s, data %llu", n, yes(n == 1 && out_ev[0].events == EPOLLIN),
           (unsigned long long)out_ev[0].data.u64);
    printf("; level-triggered again: %d\n", epoll_wait(ep, out_ev, 4, 0));
    ev.events = EPOLLIN | EPOLLET;
    epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev);
    int first = epoll_wait(ep, out_ev, 4, 0), second = epoll_wait(ep, out_ev, 4, 0);
    write(p[1], "c", 1);
    printf("edge-triggered: %d, then %d, after a write %d\n", first, second,
           epoll_wait(ep, out_ev, 4, 0));
    ev.events = EPOLLIN | EPOLLONESHOT;
    epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev);
    first = epoll_wait(ep, out_ev, 4, 0);
    second = epoll_wait(ep, out_ev, 4, 0);
    epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev);
    printf("one-shot: %d, then %d, after MOD %d\n", first, second, epoll_wait(ep, out_ev, 4, 0));
    ev.events = EPOLLOUT;
    epoll_ctl(ep, EPOLL_CTL_ADD, p[1], &ev);
    close(p[0]);
    n = epoll_wait(ep, out_ev, 4, 0);
    printf("read end closed: %d, the write end's EPOLLERR %s", n,
           yes(n == 1 && (out_ev[0].events & EPOLLERR)));
    printf("; DEL %s", ename(epoll_ctl(ep, EPOLL_CTL_DEL, p[1], NULL) ? errno : 0));
    printf(", again %s\n", ename(epoll_ctl(ep, EPOLL_CTL_DEL, p[1], NULL) ? errno : 0));
    close(p[1]);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    n = epoll_wait(ep, out_ev, 4, 30);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    printf("empty, 30 ms: %d after at least 30 ms %s\n", n, yes(ms >= 30));
    close(ep);

    /* timerfd: expiries counted, read and polled; an absolute time. */
    int tf = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    uint64_t count = 0;
    printf("timerfd: disarmed read %s", ename(read(tf, &count, 8) < 0 ? errno : 0));
    struct itimerspec its = {{0, 20000000}, {0, 20000000}}, cur;
    printf(", settime %s", ename(timerfd_settime(tf, 0, &its, NULL) ? errno : 0));
    ep = epoll_create1(0);
    ev.events = EPOLLIN;
    epoll_ctl(ep, EPOLL_CTL_ADD, tf, &ev);
    n = epoll_wait(ep, out_ev, 4, 5000);
    printf(", epoll_wait %d\n", n);
    struct timespec nap = {0, 70000000};
    nanosleep(&nap, NULL);
    read(tf, &count, 8);
    timerfd_gettime(tf, &cur);
    printf("after 70 ms more: expiries %s, interval kept %s, next within it %s\n",
           yes(count >= 3), yes(cur.it_interval.tv_nsec == 20000000),
           yes(cur.it_value.tv_sec == 0 && cur.it_value.tv_nsec <= 20000000));
    its = (struct itimerspec){{0, 0}, {0, 0}};
    timerfd_settime(tf, 0, &its, NULL);
    timerfd_gettime(tf, &cur);
    printf("disarmed: %s; write %s\n", yes(cur.it_value.tv_sec == 0 && cur.it_value.tv_nsec == 0),
           ename(write(tf, &count, 8) < 0 ? errno : 0));
    close(ep);
    close(tf);
    tf = timerfd_create(CLOCK_REALTIME, 0);
    clock_gettime(CLOCK_REALTIME, &t0);
    its.it_value = t0;
    its.it_value.tv_nsec += 30000000;
    if (its.it_value.tv_nsec >= 1000000000) {
        its.it_value.tv_sec++;
        its.it_value.tv_nsec -= 1000000000;
    }
    timerfd_settime(tf, TFD_TIMER_ABSTIME, &its, NULL);
    ssize_t got8 = read(tf, &count, 8);
    clock_gettime(CLOCK_REALTIME, &t1);
    ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    printf("absolute on CLOCK_REALTIME, a blocking read: %zd bytes, %llu expiry, not early %s\n",
           got8, (unsigned long long)count, yes(ms >= 29));
    close(tf);
    printf("timerfd of clock 99: %s\n", ename(timerfd_create(99, 0) < 0 ? errno : 0));
    return 0;
}

static int pfd[2], efd;

static void *reader(void *arg)
{
    (void)arg;
    char b[16];
    return (void *)(intptr_t)read(pfd[0], b, sizeof b);
}

static void *epoller(void *arg)
{
    (void)arg;
    int ep = epoll_create1(0);
    struct epoll_event ev = {EPOLLIN, {.u64 = 7}};
    epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev);
    int n = epoll_wait(ep, &ev, 1, 20000);
    close(ep);
    return (void *)(intptr_t)(n == 1 && ev.data.u64 == 7);
}

static void *poller(void *arg)
{
    (void)arg;
    struct pollfd p = {pfd[0], POLLIN, 0};
    return (void *)(intptr_t)(poll(&p, 1, 20000) == 1 && (p.revents & POLLIN));
}

static void sleep_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000};
    nanosleep(&ts, NULL);
}

static int threads(void)
{
    pipe(pfd);
    efd = eventfd(0, 0);
    pthread_t t;
    void *res;
    pthread_create(&t, NULL, reader, NULL);
    sleep_ms(50);
    write(pfd[1], "wake", 4);
    pthread_join(t, &res);
    printf("a thread's read: woken with %ld bytes\n", (long)(intptr_t)res);
    pthread_create(&t, NULL, epoller, NULL);
    sleep_ms(50);
    uint64_t one = 1;
    write(efd, &one, 8);
    pthread_join(t, &res);
    printf("a thread's epoll_wait on an eventfd: woken %s\n", yes(res != NULL));
    pthread_create(&t, NULL, poller, NULL);
    sleep_ms(50);
    write(pfd[1], "x", 1);
    pthread_join(t, &res);
    printf("a thread's poll: woken %s\n", yes(res != NULL));
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc > 1 && !strcmp(argv[1], "threads"))
        return threads();
    if (argc > 1 && !strcmp(argv[1], "selfblock")) {
        int p[2];
        char c;
        pipe(p);
        return (int)read(p[0], &c, 1);        /* on Linux: for ever */
    }
    return one_thread();
}
