/* Signal handlers on the Linux ABI: delivery to self, masks, frame and
 * sigreturn (registers and FP state survive the handler). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static volatile sig_atomic_t got;
static volatile int seen_sig;

static void handler(int sig, siginfo_t *info, void *uc)
{
    (void)uc;
    got++;
    seen_sig = sig;
    volatile double clobber = 123.456;   /* FP registers used inside the handler */
    (void)clobber;
    if (info->si_signo != sig)
        got = -100;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGUSR1, &sa, NULL);

    volatile double x = 2.5;
    raise(SIGUSR1);
    printf("handler ran %d time(s) for signal %d; x = %.2f\n", (int)got, seen_sig, x * 2);

    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigprocmask(SIG_BLOCK, &set, NULL);
    raise(SIGUSR1);
    printf("while blocked: %d\n", (int)got);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    printf("after unblock: %d\n", (int)got);

    signal(SIGUSR2, SIG_IGN);
    raise(SIGUSR2);
    printf("ignored SIGUSR2 survived\n");

    struct rlimit rl;
    getrlimit(RLIMIT_STACK, &rl);
    printf("stack limit %lu KiB\n", (unsigned long)(rl.rlim_cur >> 10));
    fflush(stdout);
    kill(getpid(), SIGTERM);
    printf("not reached\n");
    return 0;
}
