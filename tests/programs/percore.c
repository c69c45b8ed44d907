/* Ranks per core on one node (qemu/run-node --ranks K, kernel ranks=K):
 * `percore MODE [ARG]`.
 *   hello        "rank R of S: pid P, cpu C, affinity N cpu(s), &data 0x..."
 *                (under yod: "; TERN_PID=P TERN_MAP=M" after it)
 *   isolate A    rank A writes past the end of its own memory, where the
 *                next rank's region lies physically (and faults); every
 *                other rank prints a checksum of its text and of 1 MiB of
 *                its data before, waits 1.5 s, and prints them again.
 *   team N       each rank sums an array with N threads of its own (itself
 *                and N - 1 pthreads, each computing 0.3 s so that all run at
 *                once): prints the cores they ran on, its affinity and the
 *                sum, "rank R: N threads on cpus C,D..., affinity A, sum ok"
 *   teamend A HOW  one thread of rank A prints "rank A: tick" every 20 ms,
 *                and after 0.2 s the rank ends: HOW exit (the ticker is a
 *                second thread, the first calls exit(3)) or fault (the
 *                first thread ticks, a second writes to address 0).  The
 *                others print, sleep 1 s, print again
 *   pin          a thread of each rank asks sched_setaffinity for the next
 *                rank's first core, then for its own rank's last: prints
 *                what each said and where the thread then runs
 *   storm        rank 0 makes threads (that wait for ever) until
 *                pthread_create fails, and ends 1.5 s later (its exit ends
 *                them); rank 1 makes one 1 s in: prints what each got
 *   abort A      rank A calls abort() (SIGABRT, delivered with the kernel's
 *                serial lock held); the others print, sleep, print again
 *   signals      raises SIGUSR1 at itself (a handler prints it), sends
 *                SIGTERM to the next rank's pid (kill) and thread id (tkill),
 *                sets an alarm: prints what each did
 *   futex        rank 1 waits 2 s on a futex word; rank 0 wakes the word
 *                at the same address in its own memory after 0.3 s: prints
 *                how many it woke and how rank 1's wait ended
 *   fds DIR      (under yod) rank 0 opens DIR/r0 and writes to it 0.5 s later;
 *                rank 1 meanwhile closes descriptor 3 and changes directory
 *                to DIR: prints what each saw
 *   timers       each rank its own periodic ITIMER_REAL, every (rank + 1) *
 *                50 ms, for 1.5 s: even ranks compute meanwhile, odd ones
 *                wait in sigsuspend; prints how many SIGALRMs it took and
 *                the interval getitimer reads back
 *   alarmkill A  as abort, but rank A sets alarm(1) with no handler and
 *                pauses (SIGALRM ends it), and the others sleep 2 s
 *   deadlock A   as abort, but rank A waits on a futex with no time-out,
 *                which nothing in its process can wake
 * The rank comes from TERN_RANK, the size from TERN_SIZE. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define FUTEX_WAIT 0             /* linux/futex.h (not in musl's headers) */
#define FUTEX_WAKE 1

extern const char __executable_start[], etext[];
static unsigned char data[1 << 20];

static uint64_t checksum(const unsigned char *p, size_t n)
{
    uint64_t h = 1469598103934665603ULL;      /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* team: each thread sums its share of an array and notes where it ran. */
#define TEAM_MAX 64
#define TEAM_LEN (1 << 16)
static uint32_t team_data[TEAM_LEN];
static struct member { int index, n, cpu; uint64_t sum; } members[TEAM_MAX];

static void *team_member(void *arg)
{
    struct member *m = arg;
    double end = 0;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    end = (double)t.tv_sec + (double)t.tv_nsec / 1e9 + 0.3;
    uint64_t sum = 0;
    do {                           /* computes long enough for all to run at once */
        sum = 0;
        for (int i = m->index; i < TEAM_LEN; i += m->n)
            sum += team_data[i];
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((double)t.tv_sec + (double)t.tv_nsec / 1e9 < end);
    m->sum = sum;
    m->cpu = sched_getcpu();
    return NULL;
}

/* write(2), not stdio: exit() holds stdout's lock while it flushes, and a
 * ticker waiting for it would stop for that reason alone. */
static volatile int ticking_rank;
static void say(const char *what)
{
    char line[64];
    int n = snprintf(line, sizeof line, "rank %d: %s\n", ticking_rank, what);
    if (write(1, line, (size_t)n) != n)
        _exit(1);
}

static void *ticker(void *arg)
{
    for (;;) {
        say("tick");
        sleep_ms(20);
    }
    return arg;
}

static void *sleeper(void *arg)
{
    for (;;)
        pause();
    return arg;
}

static void *pinner(void *arg)
{
    int *cores = arg;              /* [0] another rank's core, [1] its own rank's last */
    char out[2][64];
    for (int i = 0; i < 2; i++) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cores[i], &set);
        int e = sched_setaffinity(0, sizeof set, &set) ? errno : 0;
        snprintf(out[i], sizeof out[i], "cpu %d: %s, on cpu %d", cores[i],
                 e ? strerror(e) : "moved", sched_getcpu());
    }
    printf("rank %d: %s; %s\n", ticking_rank, out[0], out[1]);
    return NULL;
}

static void *faulter(void *arg)
{
    sleep_ms(200);
    say("faulting");
    *(volatile int *)0 = 1;
    return arg;
}

static volatile sig_atomic_t got_usr1, alarms;
static void on_usr1(int sig) { (void)sig; got_usr1 = 1; }
static void on_alarm(int sig) { (void)sig; alarms++; }

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    const char *r = getenv("TERN_RANK"), *s = getenv("TERN_SIZE");
    int rank = r ? atoi(r) : -1, size = s ? atoi(s) : -1;
    const char *mode = argc > 1 ? argv[1] : "hello";
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!strcmp(mode, "hello")) {
        cpu_set_t set;
        int n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1;
        data[0] = (unsigned char)rank;
        const char *map = getenv("TERN_MAP"), *pid = getenv("TERN_PID");
        char job[4096] = "";
        if (map)               /* under yod: what the job interface says too */
            snprintf(job, sizeof job, "; TERN_PID=%s TERN_MAP=%s", pid ? pid : "", map);
        printf("rank %d of %d: pid %d, cpu %d, affinity %d cpu%s, &data %p%s\n", rank, size,
               (int)getpid(), sched_getcpu(), n, n == 1 ? "" : "s", (void *)data, job);
        return 0;
    }
    if (!strcmp(mode, "isolate") && argc > 2) {
        int attacker = atoi(argv[2]);
        if (rank == attacker) {
            /* The stack's top page ends this rank's memory (docs/kernel.md):
             * AT_PLATFORM's string lies just below it. */
            uintptr_t end = ((uintptr_t)getauxval(AT_PLATFORM) | 4095) + 1 + 4096;
            sleep_ms(300);
            printf("rank %d: writing past its memory at %#lx\n", rank, (unsigned long)end);
            for (uintptr_t a = end; a < end + (1 << 20); a += 4096)
                *(volatile uint64_t *)a = 0x5A5A5A5A5A5A5A5AULL;
            printf("rank %d: wrote past its memory and is still running\n", rank);
            return 0;
        }
        for (size_t i = 0; i < sizeof data; i++)
            data[i] = (unsigned char)(i * 7 + (size_t)rank);
        size_t tlen = (size_t)(etext - __executable_start);
        uint64_t t0 = checksum((const unsigned char *)__executable_start, tlen);
        uint64_t d0 = checksum(data, sizeof data);
        printf("rank %d: text %016llx data %016llx\n", rank, (unsigned long long)t0,
               (unsigned long long)d0);
        sleep_ms(1500);
        uint64_t t1 = checksum((const unsigned char *)__executable_start, tlen);
        uint64_t d1 = checksum(data, sizeof data);
        printf("rank %d: text %016llx data %016llx: %s\n", rank, (unsigned long long)t1,
               (unsigned long long)d1, t0 == t1 && d0 == d1 ? "intact" : "CHANGED");
        return t0 == t1 && d0 == d1 ? 0 : 1;
    }
    if (!strcmp(mode, "team") && argc > 2) {
        int n = atoi(argv[2]);
        if (n < 1 || n > TEAM_MAX)
            return 2;
        uint64_t want = 0;
        for (int i = 0; i < TEAM_LEN; i++)
            want += team_data[i] = (uint32_t)(i * 2654435761u + (unsigned)rank);
        pthread_t t[TEAM_MAX];
        for (int i = 0; i < n; i++)
            members[i] = (struct member){i, n, -1, 0};
        for (int i = 1; i < n; i++) {
            int e = pthread_create(&t[i], NULL, team_member, &members[i]);
            if (e) {
                printf("rank %d: pthread_create: %s\n", rank, strerror(e));
                return 1;
            }
        }
        team_member(&members[0]);
        uint64_t sum = members[0].sum;
        for (int i = 1; i < n; i++) {
            pthread_join(t[i], NULL);
            sum += members[i].sum;
        }
        /* The cores, each once, in order. */
        char cpus[512] = "";
        size_t len = 0;
        for (int c = 0; c < 256; c++)
            for (int i = 0; i < n; i++)
                if (members[i].cpu == c) {
                    len += (size_t)snprintf(cpus + len, sizeof cpus - len, "%s%d", len ? "," : "", c);
                    break;
                }
        cpu_set_t set;
        int a = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1;
        printf("rank %d: %d threads on cpus %s, affinity %d, sum %s\n", rank, n, cpus, a,
               sum == want ? "ok" : "WRONG");
        return sum == want ? 0 : 1;
    }
    if (!strcmp(mode, "pin")) {
        cpu_set_t set;
        sched_getaffinity(0, sizeof set, &set);
        int per = CPU_COUNT(&set), cores[2] = {((rank + 1) % size) * per, rank * per + per - 1};
        pthread_t t;
        ticking_rank = rank;
        if (pthread_create(&t, NULL, pinner, cores) || pthread_join(t, NULL))
            return 1;
        return 0;
    }
    if (!strcmp(mode, "storm")) {
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, 64 << 10);
        pthread_t t;
        int made = 0, e = 0;
        if (rank == 0)
            while (made < 1000 && !(e = pthread_create(&t, &attr, sleeper, NULL)))
                made++;
        else {
            sleep_ms(1000);
            if (!(e = pthread_create(&t, &attr, sleeper, NULL)))
                made++;
        }
        printf("rank %d: made %d thread%s%s%s\n", rank, made, made == 1 ? "" : "s",
               e ? ", then: " : "", e ? strerror(e) : "");
        if (rank == 0)
            sleep_ms(1500);
        exit(0);                   /* its threads end with it */
    }
    if (!strcmp(mode, "teamend") && argc > 3) {
        bool fault = !strcmp(argv[3], "fault");
        if (rank == atoi(argv[2])) {
            pthread_t t;
            ticking_rank = rank;
            if (pthread_create(&t, NULL, fault ? faulter : ticker, NULL)) {
                printf("rank %d: pthread_create failed\n", rank);
                return 1;
            }
            if (fault)
                ticker(NULL);
            sleep_ms(200);
            printf("rank %d: exiting with 3\n", rank);
            exit(3);
        }
        printf("rank %d: running\n", rank);
        sleep_ms(1000);
        printf("rank %d: done\n", rank);
        return 0;
    }
    bool by_alarm = !strcmp(mode, "alarmkill"), by_futex = !strcmp(mode, "deadlock");
    if ((!strcmp(mode, "abort") || by_alarm || by_futex) && argc > 2) {
        if (rank == atoi(argv[2])) {
            if (by_futex) {
                static uint32_t never;     /* nothing in this rank can wake it */
                syscall(SYS_futex, &never, FUTEX_WAIT, 0, NULL, NULL, 0);
                printf("rank %d: futex wait returned\n", rank);
                return 1;
            }
            if (by_alarm) {
                alarm(1);                   /* no handler: SIGALRM ends the rank */
                pause();
                printf("rank %d: pause returned\n", rank);
                return 1;
            }
            sleep_ms(200);
            abort();
        }
        printf("rank %d: before\n", rank);
        sleep_ms(by_alarm ? 2000 : 1000);
        printf("rank %d: after\n", rank);
        return 0;
    }
    if (!strcmp(mode, "signals")) {
        signal(SIGUSR1, on_usr1);
        raise(SIGUSR1);
        int next = (rank + 1) % size + 1;            /* the next rank's pid */
        int k = kill(next, SIGTERM), ke = errno;
        int t = (int)syscall(SYS_tkill, next, SIGTERM), te = errno;   /* its thread id */
        errno = 0;
        alarm(1);          /* left armed: it must not ring in a next job */
        int ae = errno;
        printf("rank %d: SIGUSR1 %s; kill(%d, SIGTERM): %s; tkill: %s; alarm: %s\n", rank,
               got_usr1 ? "taken" : "LOST", next, k ? strerror(ke) : "sent",
               t ? strerror(te) : "sent", ae ? strerror(ae) : "set");
        return 0;
    }
    if (!strcmp(mode, "futex")) {
        static uint32_t word;          /* the same address in every rank */
        if (rank == 0) {
            sleep_ms(300);
            long n = syscall(SYS_futex, &word, FUTEX_WAKE, 1, NULL, NULL, 0);
            printf("rank 0: futex wake woke %ld\n", n);
        } else if (rank == 1) {
            struct timespec t = {2, 0};
            double t0 = now_s();
            long r = syscall(SYS_futex, &word, FUTEX_WAIT, 0, &t, NULL, 0);
            int e = errno;
            printf("rank 1: futex wait %s after %s 1.5 s\n", r ? strerror(e) : "woken",
                   now_s() - t0 >= 1.5 ? "more than" : "less than");
        }
        return 0;
    }
    if (!strcmp(mode, "fds") && argc > 2) {
        char path[4096], before[4096], after[4096];
        if (rank == 0) {
            snprintf(path, sizeof path, "%s/r0", argv[2]);
            int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
            if (!getcwd(before, sizeof before))
                strcpy(before, "?");
            sleep_ms(500);
            long w = write(fd, "rank 0\n", 7);
            int e = errno;
            if (!getcwd(after, sizeof after))
                strcpy(after, "?");
            printf("rank 0: fd %d, its write after rank 1's close: %s, cwd %s -> %s\n", fd,
                   w == 7 ? "written" : strerror(e), before, after);
        } else if (rank == 1) {
            sleep_ms(200);
            int c = close(3), e = errno;
            int d = chdir(argv[2]);
            printf("rank 1: close(3): %s, chdir: %s\n", c ? strerror(e) : "closed",
                   d ? strerror(errno) : "done");
        }
        return 0;
    }
    if (!strcmp(mode, "timers")) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_alarm;
        sigaction(SIGALRM, &sa, NULL);
        long us = (rank + 1) * 50000L;
        struct itimerval it = {{us / 1000000, us % 1000000}, {us / 1000000, us % 1000000}}, cur;
        if (setitimer(ITIMER_REAL, &it, NULL)) {
            printf("rank %d: setitimer: %s\n", rank, strerror(errno));
            return 1;
        }
        double end = now_s() + 1.5;
        volatile uint64_t spin = 0;
        sigset_t none;
        sigemptyset(&none);
        while (now_s() < end) {
            if (rank % 2)
                sigsuspend(&none);
            else
                spin++;
        }
        getitimer(ITIMER_REAL, &cur);
        it = (struct itimerval){{0, 0}, {0, 0}};
        setitimer(ITIMER_REAL, &it, NULL);
        printf("rank %d: every %ld ms, %s: %d alarms; getitimer interval %ld ms\n", rank,
               us / 1000, rank % 2 ? "waiting" : "computing", (int)alarms,
               (long)(cur.it_interval.tv_sec * 1000 + cur.it_interval.tv_usec / 1000));
        return 0;
    }
    fprintf(stderr, "usage: percore hello | isolate RANK | team N | teamend RANK exit|fault | "
            "abort RANK | signals | futex | fds DIR | timers | alarmkill RANK | deadlock RANK\n");
    return 2;
}
