/* Threads on a many-core node (issue 17): what each mode prints is what it
 * prints on Linux, apart from the core numbers, which the tests read. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define N (1 << 22)
static uint32_t *data;
static int nthreads;
static pthread_barrier_t all_started;   /* every thread alive at once */

struct part {
    int index, cpu;
    uint64_t sum;
};

static void *sum_part(void *arg)
{
    struct part *p = arg;
    p->cpu = sched_getcpu();
    pthread_barrier_wait(&all_started);
    size_t lo = (size_t)N * p->index / nthreads, hi = (size_t)N * (p->index + 1) / nthreads;
    uint64_t s = 0;
    for (size_t i = lo; i < hi; i++)
        s += data[i] * (uint64_t)data[i] % 1000003;
    p->sum = s;
    return NULL;
}

/* sum T: the array summed by T threads (the first does a part too). */
static int sum(int t)
{
    nthreads = t;
    data = malloc(N * sizeof *data);
    for (size_t i = 0; i < N; i++)
        data[i] = (uint32_t)(i * 2654435761u);
    uint64_t serial = 0;
    for (size_t i = 0; i < N; i++)
        serial += data[i] * (uint64_t)data[i] % 1000003;
    struct part parts[64];
    pthread_t th[64];
    if (t < 1 || t > 64)
        return 2;
    pthread_barrier_init(&all_started, NULL, (unsigned)t);
    for (int i = 1; i < t; i++) {
        parts[i].index = i;
        int e = pthread_create(&th[i], NULL, sum_part, &parts[i]);
        if (e) {
            printf("pthread_create: %s\n", strerror(e));
            return 1;
        }
    }
    parts[0].index = 0;
    sum_part(&parts[0]);
    uint64_t total = parts[0].sum;
    for (int i = 1; i < t; i++) {
        pthread_join(th[i], NULL);
        total += parts[i].sum;
    }
    printf("%d threads: sum %s the serial sum\n", t, total == serial ? "equals" : "DIFFERS from");
    printf("cores:");
    for (int i = 0; i < t; i++)
        printf(" %d", parts[i].cpu);
    printf("\n");
    return total != serial;
}

/* timed: a thread waits on a condition nobody signals, with a timeout. */
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;

static void *timed_wait(void *arg)
{
    (void)arg;
    struct timespec t0, t1, until;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 200000000;
    if (until.tv_nsec >= 1000000000)
        until.tv_sec++, until.tv_nsec -= 1000000000;
    pthread_mutex_lock(&m);
    int e = pthread_cond_timedwait(&c, &m, &until);
    pthread_mutex_unlock(&m);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    printf("timed wait in a thread: %s after at least 200 ms: %s\n",
           e == ETIMEDOUT ? "ETIMEDOUT" : strerror(e), ms >= 200 ? "yes" : "no");
    return NULL;
}

/* pingpong: two threads hand a token back and forth through a condition
 * variable (futex wake across cores). */
static int token, rounds;
static void *pong(void *arg)
{
    (void)arg;
    for (int i = 0; i < rounds; i++) {
        pthread_mutex_lock(&m);
        while (token != 1)
            pthread_cond_wait(&c, &m);
        token = 0;
        pthread_cond_broadcast(&c);
        pthread_mutex_unlock(&m);
    }
    return NULL;
}

static int pingpong(int n)
{
    pthread_t t;
    rounds = n;
    pthread_create(&t, NULL, pong, NULL);
    for (int i = 0; i < n; i++) {
        pthread_mutex_lock(&m);
        token = 1;
        pthread_cond_broadcast(&c);
        while (token != 0)
            pthread_cond_wait(&c, &m);
        pthread_mutex_unlock(&m);
    }
    pthread_join(t, NULL);
    printf("%d round trips between two threads\n", n);
    return 0;
}

static void *crash(void *arg)
{
    (void)arg;
    usleep(50000);
    volatile int *volatile bad = (int *)16;
    *bad = 1;
    return NULL;
}

static void *sleeper(void *arg)
{
    pause();
    return arg;
}

static void *late(void *arg)
{
    usleep(100000);
    printf("thread %s ends the program\n", (char *)arg);
    fflush(stdout);
    return NULL;
}

/* Signal masks are each thread's own: a worker blocking signals does not
 * block them for main, and pthread_kill reaches the thread it names. */
static volatile pid_t usr1_by, usr2_by, worker_tid;
static pthread_barrier_t mask_set;

static void on_usr(int sig)
{
    if (sig == SIGUSR1)
        usr1_by = gettid();
    else
        usr2_by = gettid();
}

static void *masked_worker(void *arg)
{
    (void)arg;
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    sigaddset(&s, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &s, NULL);
    worker_tid = gettid();
    pthread_barrier_wait(&mask_set);
    for (int i = 0; i < 5000 && !usr2_by; i++)
        usleep(1000);
    pthread_barrier_wait(&mask_set);
    while (!usleep(100000))
        ;
    return NULL;
}

static int own_masks(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr;
    sigaction(SIGUSR1, &sa, NULL);
    sigaction(SIGUSR2, &sa, NULL);
    pthread_barrier_init(&mask_set, NULL, 2);
    pthread_t t;
    pthread_create(&t, NULL, masked_worker, NULL);
    pthread_barrier_wait(&mask_set);
    sigset_t cur;
    pthread_sigmask(SIG_BLOCK, NULL, &cur);
    printf("main blocks SIGUSR1: %s\n", sigismember(&cur, SIGUSR1) ? "yes" : "no");
    kill(getpid(), SIGUSR1);
    printf("SIGUSR1 to the process taken by %s\n",
           usr1_by == gettid() ? "main" : usr1_by ? "the worker" : "nobody");
    pthread_kill(t, SIGUSR2);
    for (int i = 0; i < 5000 && !usr2_by; i++)
        usleep(1000);
    printf("SIGUSR2 to the worker taken by %s\n",
           usr2_by == worker_tid ? "the worker" : usr2_by == gettid() ? "main" : "nobody");
    pthread_barrier_wait(&mask_set);
    printf("SIGTERM to the process\n");
    kill(getpid(), SIGTERM);
    usleep(100000);
    printf("survived SIGTERM\n");
    return 0;
}

/* An interval timer set by a thread on another core rings while the first
 * thread computes on CPU 0, which owns the timer (it heard of the new
 * deadline only at its next kernel entry: with no job, never). */
static volatile sig_atomic_t rang;
static void on_alarm(int sig) { (void)sig; rang = 1; }

static void *set_alarm(void *arg)
{
    (void)arg;
    struct itimerval v = {{0, 0}, {0, 100000}};
    setitimer(ITIMER_REAL, &v, NULL);
    return NULL;
}

static int alarm_elsewhere(void)
{
    signal(SIGALRM, on_alarm);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pthread_t th;
    pthread_create(&th, NULL, set_alarm, NULL);
    double waited = 0;
    for (unsigned long n = 1; !rang && waited < 5.0; n++)
        if (n % 4096 == 0) {         /* mostly user mode: few system calls */
            clock_gettime(CLOCK_MONOTONIC, &t);
            waited = (double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9;
        }
    pthread_join(th, NULL);
    printf("alarm set on another core rang: %s\n", rang ? "yes" : "no");
    return 0;
}

/* maps N: one thread reserves, commits and releases memory in a loop (the
 * kernel's list of committed pieces changes under it) while another makes
 * calls that take no lock, with a pointer into committed reserved memory
 * (a page of its own, committed once); every one must succeed. */
static volatile int maps_done;
static void *maps_churn(void *arg)
{
    long n = (long)arg;
    for (long i = 0; i < n; i++) {
        char *p = mmap(NULL, 1 << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            break;
        for (int k = 0; k < 8; k++)        /* eight pieces, apart */
            mprotect(p + k * 131072, 4096, PROT_READ | PROT_WRITE);
        munmap(p, 1 << 20);
    }
    maps_done = 1;
    return NULL;
}

static int maps(long n)
{
    char *own = mmap(NULL, 1 << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (own == MAP_FAILED || mprotect(own + 524288, 4096, PROT_READ | PROT_WRITE))
        return printf("maps: no reserved memory\n"), 1;
    struct timespec *ts = (struct timespec *)(own + 524288);
    pthread_t t;
    pthread_create(&t, NULL, maps_churn, (void *)n);
    long calls = 0, failed = 0;
    while (!maps_done) {
        calls++;
        failed += clock_gettime(CLOCK_MONOTONIC, ts) != 0;
    }
    pthread_join(t, NULL);
    printf("maps: %ld calls, %ld failed\n", calls, failed);
    return failed != 0;
}

/* attrpin: a thread made with an affinity attribute (glibc sets it with
 * sched_setaffinity of the new thread's id, from the creator; musl has no
 * such attribute: set just after), and one moved by another thread's
 * pthread_setaffinity_np while it computes. */
static volatile int pin_go;
static void *report_cpu(void *arg)
{
    int *cpu = arg;
    while (!pin_go)
        ;                               /* computing in user mode */
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);               /* a way back from the kernel */
    *cpu = sched_getcpu();
    return NULL;
}

static int attrpin(void)
{
    int n = (int)sysconf(_SC_NPROCESSORS_ONLN), cpu[2] = {-1, -1}, want[2] = {n - 1, n - 2};
    cpu_set_t set;
    pthread_attr_t attr;
    pthread_t t;
    pthread_attr_init(&attr);
    CPU_ZERO(&set);
    CPU_SET(want[0], &set);
#ifdef __GLIBC__
    pthread_attr_setaffinity_np(&attr, sizeof set, &set);
    pin_go = 1;
    int e = pthread_create(&t, &attr, report_cpu, &cpu[0]);
#else
    /* musl has no affinity attribute: the same call right after */
    int e = pthread_create(&t, &attr, report_cpu, &cpu[0]);
    if (!e)
        e = pthread_setaffinity_np(t, sizeof set, &set);
    pin_go = 1;
#endif
    if (e || pthread_join(t, NULL)) {
        printf("pthread_create with an affinity: %s\n", strerror(e));
        return 1;
    }
    pin_go = 0;
    pthread_create(&t, NULL, report_cpu, &cpu[1]);
    CPU_ZERO(&set);
    CPU_SET(want[1], &set);
    e = pthread_setaffinity_np(t, sizeof set, &set);
    pin_go = 1;
    pthread_join(t, NULL);
    printf("made on cpu %d: ran on %d; moved to cpu %d (%s): ran on %d\n", want[0], cpu[0],
           want[1], e ? strerror(e) : "ok", cpu[1]);
    return 0;
}

/* exitrace: a thread on every core, and at one moment all of them call
 * exit_group: the node's end must be carried once, whichever core wins. */
static volatile int race_ready;

static volatile int race_how;          /* 0 exit_group, 1 a fault, 2 alternate, 3 spin */

static void *race_exit(void *arg)
{
    int i = (int)(intptr_t)arg;
    __atomic_fetch_add(&race_ready, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&race_ready, __ATOMIC_SEQ_CST) < nthreads)
        ;
    while (race_how == 3)
        ;                                 /* until a signal ends the program */
    if (race_how == 1 || (race_how == 2 && i % 2)) {
        volatile int *volatile bad = (int *)8;
        *bad = i;                         /* SIGSEGV */
    }
    syscall(SYS_exit_group, 0);
    return NULL;
}

/* exitrace [fault|mixed|spin]: the program ends on every core at once, by
 * exit_group, by a fault on each, or half of each; or they all compute
 * until a signal (yod's, sent on) ends them. */
static int exitrace(const char *how)
{
    nthreads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    race_how = !how ? 0 : !strcmp(how, "fault") ? 1 : !strcmp(how, "mixed") ? 2 : 3;
    static const char *const what[] = {"call exit_group", "fault", "fault or exit", "spin"};
    printf("%d threads %s at once\n", nthreads, what[race_how]);
    for (int i = 1; i < nthreads; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, race_exit, (void *)(intptr_t)i)) {
            printf("pthread_create failed\n");
            return 1;
        }
    }
    race_exit(NULL);
    return 1;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *mode = argc > 1 ? argv[1] : "sum";
    if (!strcmp(mode, "sum"))
        return sum(argc > 2 ? atoi(argv[2]) : 4);
    if (!strcmp(mode, "timed")) {
        pthread_t t;
        pthread_create(&t, NULL, timed_wait, NULL);
        pthread_join(t, NULL);
        return 0;
    }
    if (!strcmp(mode, "alarm"))
        return alarm_elsewhere();
    if (!strcmp(mode, "maps"))
        return maps(argc > 2 ? atol(argv[2]) : 2000);
    if (!strcmp(mode, "sigmask"))
        return own_masks();
    if (!strcmp(mode, "pingpong"))
        return pingpong(argc > 2 ? atoi(argv[2]) : 1000);
    if (!strcmp(mode, "fault")) {
        pthread_t t;
        pthread_create(&t, NULL, crash, NULL);
        pthread_join(t, NULL);
        printf("not reached\n");
        return 0;
    }
    if (!strcmp(mode, "many")) {
        /* Threads asleep in pause() until creation fails: the sleepers
         * must not hold up the creator's calls (its stacks' mmap). */
        int n = 0, e;
        pthread_t t;
        pthread_attr_t small;            /* memory is real: 64 x 8 MiB would not fit */
        pthread_attr_init(&small);
        pthread_attr_setstacksize(&small, 256 * 1024);
        while (n < 1000 && !(e = pthread_create(&t, &small, sleeper, NULL)))
            n++;
        printf("created %d threads, then: %s\n", n, n < 1000 ? strerror(e) : "stopped");
        exit(0);
    }
    if (!strcmp(mode, "attrpin"))
        return attrpin();
    if (!strcmp(mode, "exitrace"))
        return exitrace(argc > 2 ? argv[2] : NULL);
    if (!strcmp(mode, "mainexit")) {
        pthread_t t;
        pthread_create(&t, NULL, late, "two");
        printf("main thread leaves first\n");
        pthread_exit(NULL);
    }
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
}
