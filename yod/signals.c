/* yod's signals: ^C, SIGTERM and the like end the job, SIGUSR1/2 are
 * forwarded, ^Z pauses it (monitor.c tells the nodes before yod stops).
 * The handlers only set these flags; the monitor acts on them. */
#include <signal.h>
#include <string.h>

#include "yod.h"

volatile int yod_interrupted, yod_terminated, yod_usr1, yod_usr2, yod_tstp;

static void on_signal(int sig)
{
    if (sig == SIGINT)
        yod_interrupted++;
    else if (sig == SIGUSR1)
        yod_usr1 = 1;
    else if (sig == SIGUSR2)
        yod_usr2 = 1;
    else if (sig == SIGTSTP)
        yod_tstp = 1;
    else
        yod_terminated = 1;
}

void yod_install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
    for (unsigned i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction(sigs[i], &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    yod_catch_tstp();
}

/* ^Z while the job runs: monitor.c tells the nodes before yod stops. */
void yod_catch_tstp(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTSTP, &sa, NULL);
}
