/* System calls a one-process node answers as Linux does, one line each.
 *   ident     process groups, session, groups, prctl, personality, priority
 *   futex     futex operations a single thread can make
 *   once      pthread_once (glibc calls FUTEX_WAKE after the first)
 *   deadlock  locks a mutex twice: on Linux a hang, here a report
 *   absent    calls for facilities a node does not have
 *   misc      affinity, getcpu, membarrier, msync, mlock, /proc/self/exe
 *   more      getresuid, scheduling policy, close_range, FIOCLEX and FIONBIO, mincore
 *   stdin     reads fd 0 to its end: bytes, and whether it is a terminal */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Linux's futex interface (musl has no <linux/futex.h>) */
#define FUTEX_WAIT 0
#define FUTEX_WAKE 1
#define FUTEX_REQUEUE 3
#define FUTEX_CMP_REQUEUE 4
#define FUTEX_WAKE_OP 5
#define FUTEX_LOCK_PI 6
#define FUTEX_UNLOCK_PI 7
#define FUTEX_WAIT_BITSET 9
#define FUTEX_PRIVATE_FLAG 128
#define FUTEX_CLOCK_REALTIME 256
#define FUTEX_WAIT_PRIVATE (FUTEX_WAIT | FUTEX_PRIVATE_FLAG)
#define FUTEX_WAKE_PRIVATE (FUTEX_WAKE | FUTEX_PRIVATE_FLAG)
#define FUTEX_BITSET_MATCH_ANY 0xffffffff
#define FUTEX_OP_ADD 1
#define FUTEX_OP_CMP_EQ 0
#define FUTEX_OP(op, oparg, cmp, cmparg) \
    (((op & 0xf) << 28) | ((cmp & 0xf) << 24) | ((oparg & 0xfff) << 12) | (cmparg & 0xfff))

#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#define PR_SET_VMA_ANON_NAME 0
#endif

/* errno by name: the libcs word their messages differently */
static const char *e(long r)
{
    if (r >= 0)
        return "ok";
    switch (errno) {
    case EPERM: return "EPERM";
    case ESRCH: return "ESRCH";
    case EINTR: return "EINTR";
    case ECHILD: return "ECHILD";
    case EAGAIN: return "EAGAIN";
    case ENOMEM: return "ENOMEM";
    case EFAULT: return "EFAULT";
    case EINVAL: return "EINVAL";
    case ENOSYS: return "ENOSYS";
    case EDEADLK: return "EDEADLK";
    case ETIMEDOUT: return "ETIMEDOUT";
    default: return "other";
    }
}

static long sys(long nr, long a, long b, long c, long d, long f, long g)
{
    return syscall(nr, a, b, c, d, f, g);
}

static int ident(void)
{
    printf("pid %d pgrp %d pgid %d sid %d\n", getpid(), getpgrp(), getpgid(0), getsid(0));
    printf("getpgid(other) %s, getsid(other) %s\n", e(getpgid(4242)), e(getsid(4242)));
    printf("setpgid(0, 0) %s, setsid() %ld\n", e(setpgid(0, 0)), (long)setsid());
    printf("tcgetpgrp(2) %d\n", tcgetpgrp(2));
    gid_t g[8];
    int n = getgroups(8, g);
    printf("getgroups: %d group(s), first is getgid(): %s; count only: %d\n", n,
           n > 0 && g[0] == getgid() ? "yes" : "no", getgroups(0, NULL));
    char name[16] = "";
    prctl(PR_GET_NAME, name);
    printf("PR_GET_NAME at start: %s\n", name);
    prctl(PR_SET_NAME, "a-very-long-thread-name");
    prctl(PR_GET_NAME, name);
    printf("PR_SET_NAME, cut to 15: %s\n", name);
    void *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("PR_SET_VMA %s", e(prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)m, 8192, (unsigned long)"x")));
    printf(", unknown option %s\n", e(prctl(9999, 0, 0, 0, 0)));
    printf("personality %#x", personality(0xffffffff));
    personality(ADDR_NO_RANDOMIZE);
    printf(", set ADDR_NO_RANDOMIZE, now %#x\n", personality(0xffffffff));
    printf("priority %d", getpriority(PRIO_PROCESS, 0));
    printf(", setpriority(5) %s", e(setpriority(PRIO_PROCESS, 0, 5)));
    printf(", now %d\n", getpriority(PRIO_PROCESS, 0));
    return 0;
}

static int futex_ops(void)
{
    uint32_t w = 7;
    printf("WAKE: %ld\n", sys(SYS_futex, (long)&w, FUTEX_WAKE_PRIVATE, 1, 0, 0, 0));
    long r = sys(SYS_futex, (long)&w, FUTEX_WAIT_PRIVATE, 6, 0, 0, 0);
    printf("WAIT, value differs: %s\n", e(r));
    struct timespec rel = {0, 50 * 1000 * 1000}, t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    r = sys(SYS_futex, (long)&w, FUTEX_WAIT_PRIVATE, 7, (long)&rel, 0, 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double waited = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("WAIT 50 ms: %s, waited its timeout: %s\n", e(r), waited >= 0.045 ? "yes" : "no");
    struct timespec abs;
    clock_gettime(CLOCK_REALTIME, &abs);
    abs.tv_nsec += 20 * 1000 * 1000;
    if (abs.tv_nsec >= 1000000000)
        abs.tv_sec++, abs.tv_nsec -= 1000000000;
    r = sys(SYS_futex, (long)&w, FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME, 7, (long)&abs, 0,
            FUTEX_BITSET_MATCH_ANY);
    printf("WAIT_BITSET until a realtime deadline: %s\n", e(r));
    printf("WAIT_BITSET with bitset 0: %s\n",
           e(sys(SYS_futex, (long)&w, FUTEX_WAIT_BITSET, 7, 0, 0, 0)));
    printf("unaligned: %s, bad address: %s\n",
           e(sys(SYS_futex, (long)((char *)&w + 1), FUTEX_WAKE, 1, 0, 0, 0)),
           e(sys(SYS_futex, 16, FUTEX_WAIT, 0, 0, 0, 0)));
    uint32_t w2 = 1;
    r = sys(SYS_futex, (long)&w, FUTEX_WAKE_OP, 1, 1, (long)&w2, FUTEX_OP(FUTEX_OP_ADD, 5, FUTEX_OP_CMP_EQ, 1));
    printf("WAKE_OP: %ld, second word now %u\n", r, w2);
    printf("CMP_REQUEUE, value differs: %s; REQUEUE: %ld\n",
           e(sys(SYS_futex, (long)&w, FUTEX_CMP_REQUEUE, 1, 1, (long)&w2, 99)),
           sys(SYS_futex, (long)&w, FUTEX_REQUEUE, 1, 1, (long)&w2, 0));
    uint32_t pi = 0;
    r = sys(SYS_futex, (long)&pi, FUTEX_LOCK_PI, 0, 0, 0, 0);
    printf("LOCK_PI: %s, owner is me: %s", e(r), pi == (uint32_t)getpid() ? "yes" : "no");
    printf(", again: %s", e(sys(SYS_futex, (long)&pi, FUTEX_LOCK_PI, 0, 0, 0, 0)));
    printf(", UNLOCK_PI: %s", e(sys(SYS_futex, (long)&pi, FUTEX_UNLOCK_PI, 0, 0, 0, 0)));
    printf(", word %u\n", pi);
    printf("unknown op: %s\n", e(sys(SYS_futex, (long)&w, 99, 0, 0, 0, 0)));
    void *head;
    size_t len;
    r = sys(SYS_get_robust_list, 0, (long)&head, (long)&len, 0, 0, 0);
    printf("get_robust_list: %s, len %zu\n", e(r), len);
    return 0;
}

static pthread_once_t once_control = PTHREAD_ONCE_INIT;
static int once_runs;
static void once_init(void) { once_runs++; }

static int once(void)
{
    pthread_once(&once_control, once_init);
    pthread_once(&once_control, once_init);
    printf("pthread_once ran the routine %d time(s)\n", once_runs);
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t c = PTHREAD_COND_INITIALIZER;
    pthread_mutex_lock(&m);
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_nsec += 10 * 1000 * 1000;
    if (t.tv_nsec >= 1000000000)
        t.tv_sec++, t.tv_nsec -= 1000000000;
    int r = pthread_cond_timedwait(&c, &m, &t);
    printf("pthread_cond_timedwait: %s\n", r == ETIMEDOUT ? "ETIMEDOUT" : "?");
    pthread_cond_signal(&c);
    pthread_mutex_unlock(&m);
    return 0;
}

static int deadlock(void)
{
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&m);
    printf("locked once\n");
    fflush(stdout);
    pthread_mutex_lock(&m);
    printf("FAIL: locked twice\n");
    return 1;
}

static int absent(void)
{
    printf("socket %s\n", e(socket(AF_INET, SOCK_STREAM, 0)));
    printf("fork %s\n", e(sys(SYS_fork, 0, 0, 0, 0, 0, 0)));
    /* A new process (no CLONE_THREAD): clone_args with exit_signal SIGCHLD. */
    uint64_t args[11] = {0, 0, 0, 0, SIGCHLD};
    printf("clone3 %s\n", e(sys(435, (long)args, sizeof args, 0, 0, 0, 0)));
    int status;
    printf("wait4 %s\n", e(wait4(-1, &status, 0, NULL)));
    return 0;
}

static int misc(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(0, &set);
    printf("sched_setaffinity(cpu 0) %s", e(sched_setaffinity(0, sizeof set, &set)));
    CPU_ZERO(&set);
    CPU_SET(1, &set);
    printf(", (cpu 1) %s\n", e(sched_setaffinity(0, sizeof set, &set)));
    unsigned cpu = 9, node = 9;
    printf("getcpu %s", e(sys(SYS_getcpu, (long)&cpu, (long)&node, 0, 0, 0, 0)));
    printf(": cpu %u node %u\n", cpu, node);
    long q = sys(SYS_membarrier, 0, 0, 0, 0, 0, 0);
    printf("membarrier query has GLOBAL: %s", q > 0 && (q & 1) ? "yes" : "no");
    printf("; PRIVATE_EXPEDITED before registering %s", e(sys(SYS_membarrier, 8, 0, 0, 0, 0, 0)));
    sys(SYS_membarrier, 16, 0, 0, 0, 0, 0);
    printf(", after %s\n", e(sys(SYS_membarrier, 8, 0, 0, 0, 0, 0)));
    char *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("msync %s", e(msync(m, 8192, MS_SYNC)));
    printf(", mlock %s", e(mlock(m + 100, 100)));
    printf(", munlock %s", e(munlock(m, 8192)));
    printf(", mlockall %s\n", e(mlockall(MCL_CURRENT)));
    printf("msync unmapped %s\n", e(msync((void *)0x10000000000UL, 4096, MS_ASYNC)));
    char exe[256];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    printf("/proc/self/exe: %s\n", exe);
    return 0;
}

/* Ids, scheduling policy, close_range, mincore: what runtimes and
 * libraries ask, the same lines as on Linux for an unprivileged user. */
static int more(void)
{
    uid_t r, ef, sv;
    gid_t gr, ge, gs;
    int uok = getresuid(&r, &ef, &sv) == 0 && r == getuid() && ef == geteuid() && sv == getuid();
    int gok = getresgid(&gr, &ge, &gs) == 0 && gr == getgid() && ge == getegid() && gs == getgid();
    printf("getresuid all getuid() %s, getresgid all getgid() %s\n", uok ? "yes" : "no",
           gok ? "yes" : "no");
    printf("sched_getscheduler %d; priorities FIFO %d..%d, OTHER %d..%d; policy 9 %s\n",
           sched_getscheduler(0), sched_get_priority_min(SCHED_FIFO),
           sched_get_priority_max(SCHED_FIFO), sched_get_priority_min(SCHED_OTHER),
           sched_get_priority_max(SCHED_OTHER), e(sched_get_priority_max(9)));
    struct sched_param sp = {0};
    printf("setscheduler BATCH %s", e(sched_setscheduler(0, SCHED_BATCH, &sp)));
    printf(", now %d", sched_getscheduler(0));
    sp.sched_priority = 10;
    printf("; FIFO 10 %s", e(sched_setscheduler(0, SCHED_FIFO, &sp)));
    sp.sched_priority = 5;
    printf("; OTHER 5 %s", e(sched_setscheduler(0, SCHED_OTHER, &sp)));
    sp.sched_priority = 0;
    printf("; OTHER 0 %s", e(sched_setscheduler(0, SCHED_OTHER, &sp)));
    printf(", now %d\n", sched_getscheduler(0));
    sp.sched_priority = 7;
    int got = sched_getparam(0, &sp);
    printf("sched_getparam %s priority %d", e(got), sp.sched_priority);
    printf("; setparam 0 %s", e(sched_setparam(0, &(struct sched_param){0})));
    printf("; of pid 4242 %s\n", e(sched_getscheduler(4242)));

    for (int i = 3; i < 9; i++)
        dup2(2, i);
    long cr = sys(SYS_close_range, 5, ~0L & 0xffffffffL, 0, 0, 0, 0);
    printf("close_range 5.. %s", e(cr));
    printf(": fd 4 open %s", fcntl(4, F_GETFD) >= 0 ? "yes" : "no");
    printf(", fd 5 closed %s", fcntl(5, F_GETFD) < 0 && errno == EBADF ? "yes" : "no");
    cr = sys(SYS_close_range, 3, 4, 4 /* CLOSE_RANGE_CLOEXEC */, 0, 0, 0);
    printf("; CLOEXEC 3..4 %s", e(cr));
    printf(": fd 3 FD_CLOEXEC %s", fcntl(3, F_GETFD) == FD_CLOEXEC ? "yes" : "no");
    printf("; 4..3 %s\n", e(sys(SYS_close_range, 4, 3, 0, 0, 0, 0)));
    close(3);
    close(4);

    int fd = dup(2);
    printf("ioctl FIOCLEX %s", e(ioctl(fd, FIOCLEX)));
    printf(": FD_CLOEXEC %s", fcntl(fd, F_GETFD) == FD_CLOEXEC ? "yes" : "no");
    ioctl(fd, FIONCLEX);
    printf(", FIONCLEX: cleared %s", fcntl(fd, F_GETFD) == 0 ? "yes" : "no");
    int on = 1;
    printf("; FIONBIO 1 %s", e(ioctl(fd, FIONBIO, &on)));
    printf(": O_NONBLOCK %s", fcntl(fd, F_GETFL) & O_NONBLOCK ? "yes" : "no");
    on = 0;
    ioctl(fd, FIONBIO, &on);
    printf(", 0: cleared %s\n", fcntl(fd, F_GETFL) & O_NONBLOCK ? "no" : "yes");
    close(fd);

    long pg = sysconf(_SC_PAGESIZE);
    char *m = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(m, 1, 3 * pg);                   /* resident on Linux too */
    unsigned char v[4] = {9, 9, 9, 9};
    /* (Untouched and PROT_NONE pages: Linux's answer changed between
     * versions, so not asked.) */
    printf("mincore of 3 touched pages %s", e(mincore(m, 3 * pg, v)));
    printf(": %d %d %d", v[0] & 1, v[1] & 1, v[2] & 1);
    printf("; unaligned %s", e(mincore(m + 1, pg, v)));
    printf("; unmapped %s\n", e(mincore((void *)0x10000000000UL, pg, v)));
    return 0;
}

static int in(void)
{
    char buf[65536];
    long total = 0;
    ssize_t n;
    unsigned sum = 0;
    while ((n = read(0, buf, sizeof buf)) > 0) {
        for (ssize_t i = 0; i < n; i++)
            sum = sum * 31 + (unsigned char)buf[i];
        total += n;
    }
    struct stat st;
    fstat(0, &st);
    printf("read %ld bytes (sum %08x), last read %zd, isatty(0) %d, fifo %d\n", total, sum, n,
           isatty(0), S_ISFIFO(st.st_mode));
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!strcmp(mode, "ident"))
        return ident();
    if (!strcmp(mode, "more"))
        return more();
    if (!strcmp(mode, "futex"))
        return futex_ops();
    if (!strcmp(mode, "once"))
        return once();
    if (!strcmp(mode, "deadlock"))
        return deadlock();
    if (!strcmp(mode, "absent"))
        return absent();
    if (!strcmp(mode, "misc"))
        return misc();
    if (!strcmp(mode, "stdin"))
        return in();
    fprintf(stderr, "unknown mode '%s'\n", mode);
    return 2;
}
