/* Signals to threads that compute in user mode and make no system call
 * (docs/kernel.md, "Threads"): every thread spins in spin_keeping_registers,
 * a loop that holds known values in every general register, the flags and
 * xmm0-15, until a signal handler sets `seen`; then it checks them all.  The
 * handler overwrites every caller-saved register and every xmm register, so
 * a frame that did not resume the interrupted code exactly shows here.
 *
 *   sigcompute thread N   main sends SIGUSR1 to the last of N workers (pthread_kill)
 *   sigcompute process N  main blocks SIGUSR1 and sends it to the process (kill)
 *   sigcompute alarm N    main blocks SIGALRM and sets an interval timer
 *   sigcompute fatal N    main blocks SIGTERM and sends it to the process: no handler,
 *                         the program must end (status 143)
 *   sigcompute yod N      main blocks SIGUSR1, says "computing" and computes: the
 *                         signal comes from yod (its SIGUSR1 forwarded)
 *   sigcompute storm N    main blocks SIGALRM and sets a 2 ms interval timer: the
 *                         workers compute through STORM signals before they stop
 *
 * No thread makes a system call while it waits (so without an interrupt the
 * signal is never delivered); each gives up after GIVE_UP_S seconds,
 * measured with rdtsc, and says so. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#define GIVE_UP_S 20
#define CHUNK (1u << 20)            /* loop iterations between give-up checks */
#define STORM 200

volatile int seen;                  /* set by the handler; read by the loop */
uint64_t spin_left;                 /* the loop's count when it stopped */
uint64_t spin_flags;                /* the flags the loop holds */

/* uint64_t spin_keeping_registers(uint64_t iterations): spins until `seen`
 * or the count runs out, touching only RAX (the count) and RCX (scratch,
 * with jrcxz: no flag changes).  Returns a mask of what changed: bit 0 the
 * flags, bits 1-12 rbx rdx rsi rdi rbp r8-r15, bits 20-35 xmm0-15. */
__asm__(
    "    .text\n"
    "    .globl spin_keeping_registers\n"
    "spin_keeping_registers:\n"
    "    push %rbx\n push %rbp\n push %r12\n push %r13\n push %r14\n push %r15\n"
    "    mov %rdi, %rax\n"
    "    movdqa pattern_xmm+0(%rip), %xmm0\n  movdqa pattern_xmm+16(%rip), %xmm1\n"
    "    movdqa pattern_xmm+32(%rip), %xmm2\n movdqa pattern_xmm+48(%rip), %xmm3\n"
    "    movdqa pattern_xmm+64(%rip), %xmm4\n movdqa pattern_xmm+80(%rip), %xmm5\n"
    "    movdqa pattern_xmm+96(%rip), %xmm6\n movdqa pattern_xmm+112(%rip), %xmm7\n"
    "    movdqa pattern_xmm+128(%rip), %xmm8\n movdqa pattern_xmm+144(%rip), %xmm9\n"
    "    movdqa pattern_xmm+160(%rip), %xmm10\n movdqa pattern_xmm+176(%rip), %xmm11\n"
    "    movdqa pattern_xmm+192(%rip), %xmm12\n movdqa pattern_xmm+208(%rip), %xmm13\n"
    "    movdqa pattern_xmm+224(%rip), %xmm14\n movdqa pattern_xmm+240(%rip), %xmm15\n"
    "    movabs $0x1111111111111101, %rbx\n movabs $0x2222222222222202, %rdx\n"
    "    movabs $0x3333333333333303, %rsi\n movabs $0x4444444444444404, %rdi\n"
    "    movabs $0x5555555555555505, %rbp\n movabs $0x6666666666666606, %r8\n"
    "    movabs $0x7777777777777707, %r9\n movabs $0x8888888888888808, %r10\n"
    "    movabs $0x9999999999999909, %r11\n movabs $0xaaaaaaaaaaaaaa0a, %r12\n"
    "    movabs $0xbbbbbbbbbbbbbb0b, %r13\n movabs $0xcccccccccccccc0c, %r14\n"
    "    movabs $0xdddddddddddddd0d, %r15\n"
    /* OF, SF and CF set, ZF clear: flags the loop never changes */
    "    movabs $0x7fffffffffffffff, %rcx\n add $1, %rcx\n stc\n"
    "    pushfq\n pop %rcx\n mov %rcx, spin_flags(%rip)\n"
    "1:  mov seen(%rip), %ecx\n"
    "    jrcxz 2f\n"
    "    jmp 3f\n"
    "2:  lea -1(%rax), %rcx\n"
    "    mov %rcx, %rax\n"
    "    jrcxz 3f\n"
    "    jmp 1b\n"
    "3:  pushfq\n pop %rcx\n"
    "    mov %rax, spin_left(%rip)\n"
    "    xor spin_flags(%rip), %rcx\n"
    "    xor %eax, %eax\n"
    "    and $0xCD5, %rcx\n"              /* CF PF AF ZF SF DF OF */
    "    jz 4f\n or $1, %rax\n4:\n"
    "    movabs $0x1111111111111101, %rcx\n cmp %rcx, %rbx\n je 4f\n bts $1, %rax\n4:\n"
    "    movabs $0x2222222222222202, %rcx\n cmp %rcx, %rdx\n je 4f\n bts $2, %rax\n4:\n"
    "    movabs $0x3333333333333303, %rcx\n cmp %rcx, %rsi\n je 4f\n bts $3, %rax\n4:\n"
    "    movabs $0x4444444444444404, %rcx\n cmp %rcx, %rdi\n je 4f\n bts $4, %rax\n4:\n"
    "    movabs $0x5555555555555505, %rcx\n cmp %rcx, %rbp\n je 4f\n bts $5, %rax\n4:\n"
    "    movabs $0x6666666666666606, %rcx\n cmp %rcx, %r8\n je 4f\n bts $6, %rax\n4:\n"
    "    movabs $0x7777777777777707, %rcx\n cmp %rcx, %r9\n je 4f\n bts $7, %rax\n4:\n"
    "    movabs $0x8888888888888808, %rcx\n cmp %rcx, %r10\n je 4f\n bts $8, %rax\n4:\n"
    "    movabs $0x9999999999999909, %rcx\n cmp %rcx, %r11\n je 4f\n bts $9, %rax\n4:\n"
    "    movabs $0xaaaaaaaaaaaaaa0a, %rcx\n cmp %rcx, %r12\n je 4f\n bts $10, %rax\n4:\n"
    "    movabs $0xbbbbbbbbbbbbbb0b, %rcx\n cmp %rcx, %r13\n je 4f\n bts $11, %rax\n4:\n"
    "    movabs $0xcccccccccccccc0c, %rcx\n cmp %rcx, %r14\n je 4f\n bts $12, %rax\n4:\n"
    "    movabs $0xdddddddddddddd0d, %rcx\n cmp %rcx, %r15\n je 4f\n bts $13, %rax\n4:\n"
    "    .irp k, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n"
    "    pcmpeqb pattern_xmm+16*\\k(%rip), %xmm\\k\n"
    "    pmovmskb %xmm\\k, %ecx\n"
    "    cmp $0xffff, %ecx\n je 4f\n bts $(20+\\k), %rax\n4:\n"
    "    .endr\n"
    "    pop %r15\n pop %r14\n pop %r13\n pop %r12\n pop %rbp\n pop %rbx\n"
    "    ret\n"
    "    .section .rodata\n"
    "    .balign 16\n"
    "pattern_xmm:\n"
    "    .irp k, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n"
    "    .quad 0x0f0e0d0c0b0a0900+\\k, 0x7060504030201000+\\k*0x10\n"
    "    .endr\n"
    "    .text\n");
uint64_t spin_keeping_registers(uint64_t iterations);

static uint64_t tsc_per_s;
static int handled;                 /* how many times the handler ran */
static int enough = 1;              /* ... when `seen` is set */
static volatile pid_t handled_by;
static volatile int started;

/* Overwrites what a handler may: the caller-saved registers, every xmm
 * register, the flags. */
static void on_signal(int sig)
{
    (void)sig;
    int n = __atomic_add_fetch(&handled, 1, __ATOMIC_SEQ_CST);
    handled_by = gettid();
    __asm__ volatile("pcmpeqb %%xmm0, %%xmm0\n movdqa %%xmm0, %%xmm1\n movdqa %%xmm0, %%xmm2\n"
                     "movdqa %%xmm0, %%xmm3\n movdqa %%xmm0, %%xmm4\n movdqa %%xmm0, %%xmm5\n"
                     "movdqa %%xmm0, %%xmm6\n movdqa %%xmm0, %%xmm7\n movdqa %%xmm0, %%xmm8\n"
                     "movdqa %%xmm0, %%xmm9\n movdqa %%xmm0, %%xmm10\n movdqa %%xmm0, %%xmm11\n"
                     "movdqa %%xmm0, %%xmm12\n movdqa %%xmm0, %%xmm13\n movdqa %%xmm0, %%xmm14\n"
                     "movdqa %%xmm0, %%xmm15\n"
                     "mov $-1, %%rax\n mov %%rax, %%rcx\n mov %%rax, %%rdx\n mov %%rax, %%rsi\n"
                     "mov %%rax, %%rdi\n mov %%rax, %%r8\n mov %%rax, %%r9\n mov %%rax, %%r10\n"
                     "mov %%rax, %%r11\n xor %%eax, %%eax\n"
                     ::: "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "xmm0",
                     "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
                     "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "cc", "memory");
    if (n >= enough)
        seen = 1;
}

struct result { uint64_t bad; int saw; };

/* Computes until the handler has run (in any thread) or GIVE_UP_S pass. */
static struct result compute(void)
{
    struct result r = {0, 0};
    uint64_t end = __rdtsc() + GIVE_UP_S * tsc_per_s;
    while (!seen && __rdtsc() < end)
        r.bad |= spin_keeping_registers(CHUNK);
    r.saw = seen;
    return r;
}

static struct result results[64];
static pid_t tids[64];

/* A thread that gives up says so (the fatal kind's only output). */
static struct result compute_or_report(int i)
{
    struct result r = compute();
    if (!r.saw) {
        /* write(2) itself: stdio's first use may make a system call (its
         * buffer's fstat) that takes the signal before anything is said */
        char line[80];
        int len = snprintf(line, sizeof line, "thread %d gave up after %d s: no signal reached it\n",
                           i, GIVE_UP_S);
        if (write(1, line, (size_t)len) != len)
            exit(3);
    }
    return r;
}

static void *worker(void *arg)
{
    int i = (int)(intptr_t)arg;
    tids[i] = gettid();
    __atomic_fetch_add(&started, 1, __ATOMIC_SEQ_CST);
    results[i] = compute_or_report(i);
    return NULL;
}

static void calibrate(void)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    uint64_t t0 = __rdtsc();
    usleep(200000);
    clock_gettime(CLOCK_MONOTONIC, &b);
    uint64_t t1 = __rdtsc();
    double s = (double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
    tsc_per_s = (uint64_t)((double)(t1 - t0) / s);
}

static void block(int sig)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, sig);
    pthread_sigmask(SIG_BLOCK, &s, NULL);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *kind = argc > 1 ? argv[1] : "thread";
    int n = argc > 2 ? atoi(argv[2]) : 1;
    if (n < 1 || n > 63)
        return 2;
    calibrate();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGUSR1, &sa, NULL);
    sigaction(SIGALRM, &sa, NULL);
    pthread_t th[64];
    for (int i = 1; i <= n; i++)
        pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
    while (__atomic_load_n(&started, __ATOMIC_SEQ_CST) < n)
        usleep(1000);
    usleep(100000);                  /* the workers are in their loops */

    /* Main blocks what goes to the process: only a computing worker can take it. */
    if (!strcmp(kind, "thread")) {
        pthread_kill(th[n], SIGUSR1);
    } else if (!strcmp(kind, "process")) {
        block(SIGUSR1);
        kill(getpid(), SIGUSR1);
    } else if (!strcmp(kind, "alarm")) {
        block(SIGALRM);
        struct itimerval v = {{0, 0}, {0, 100000}};
        setitimer(ITIMER_REAL, &v, NULL);
    } else if (!strcmp(kind, "yod")) {
        block(SIGUSR1);
        printf("computing\n");
    } else if (!strcmp(kind, "storm")) {
        enough = STORM;
        block(SIGALRM);
        struct itimerval v = {{0, 2000}, {0, 2000}};
        setitimer(ITIMER_REAL, &v, NULL);
    } else if (!strcmp(kind, "fatal")) {
        block(SIGTERM);
        kill(getpid(), SIGTERM);
    } else {
        fprintf(stderr, "unknown kind %s\n", kind);
        return 2;
    }
    results[0] = compute_or_report(0);
    for (int i = 1; i <= n; i++)
        pthread_join(th[i], NULL);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);

    int saw = 1;
    uint64_t bad = 0;
    for (int i = 0; i <= n; i++) {
        saw &= results[i].saw;
        bad |= results[i].bad;
    }
    const char *by = "nobody";
    if (handled_by == gettid())
        by = "main";
    for (int i = 1; i <= n; i++)
        if (handled_by == tids[i])
            by = !strcmp(kind, "thread") ? (i == n ? "the worker it was sent to"
                                                   : "another worker")
                                         : "a worker";
    printf("%s: every computing thread saw the handler's flag: %s\n", kind, saw ? "yes" : "no");
    if (!strcmp(kind, "storm"))          /* how many exactly depends on timing */
        printf("handler ran %s %d times, the last in %s\n",
               handled >= STORM ? "at least" : "fewer than", STORM, by);
    else
        printf("handler ran %d time(s), in %s\n", handled, by);
    if (bad)
        printf("registers changed across the signal: mask 0x%lx\n", (unsigned long)bad);
    else
        printf("registers and flags kept: yes\n");
    return 0;
}
