/* Signals, Linux numbering and x86-64 frame layout. */
#ifndef TERN_SIGNAL_H
#define TERN_SIGNAL_H
#include <stdbool.h>
#include <stdint.h>

#define NSIG 64
#define SIGHUP 1
#define SIGINT 2
#define SIGQUIT 3
#define SIGILL 4
#define SIGTRAP 5
#define SIGABRT 6
#define SIGBUS 7
#define SIGFPE 8
#define SIGKILL 9
#define SIGUSR1 10
#define SIGSEGV 11
#define SIGUSR2 12
#define SIGPIPE 13
#define SIGALRM 14
#define SIGTERM 15
#define SIGCHLD 17
#define SIGCONT 18
#define SIGSTOP 19
#define SIGTTIN 21
#define SIGVTALRM 26
#define SIGPROF 27
#define SIGWINCH 28

#define SIG_UNBLOCKABLE ((1ULL << (SIGKILL - 1)) | (1ULL << (SIGSTOP - 1)))

#define SIG_DFL 0
#define SIG_IGN 1
#define SA_SIGINFO 0x4
#define SA_RESTART 0x10000000
#define SA_ONSTACK 0x08000000
#define SA_RESTORER 0x04000000
#define SA_NODEFER 0x40000000
#define SA_RESETHAND 0x80000000

struct k_sigaction {
    uint64_t handler;
    uint64_t flags;
    uint64_t restorer;
    uint64_t mask;
};

/* The process's: handlers and signals sent to the process.  Each thread
 * has its own mask and its own pending set (tgkill), in struct thread:
 * a process signal is taken by a thread that does not block it. */
struct signal_state {
    struct k_sigaction act[NSIG + 1];
    uint64_t pending;
};

/* A POSIX timer's expiry, as siginfo tells it (si_code SI_TIMER). */
struct timer_expiry {
    int32_t id, overrun;
    uint64_t value;
};
/* sys/itimer.c: sig, just taken, was a POSIX timer's: its expiry. */
bool itimer_taken(int sig, struct timer_expiry *e);
/* The siginfo_t (SIGINFO_SIZE bytes at out) the program gets for sig: SI_USER
 * from this process, or timer's SI_TIMER (a handler's frame, sigtimedwait). */
#define SIGINFO_SIZE 128
void signal_info(void *out, int sig, const struct timer_expiry *timer);

struct regs;
const char *signal_name(int sig);
/* Called on the way back to user mode: delivers a pending, unblocked signal
 * (builds a frame, or ends the run for a default-fatal one).  Returns 1 if the
 * registers changed and need a full restore. */
int signal_deliver(struct regs *r);
/* An interrupt (any vector) is about to return to user mode with frame r:
 * delivers what the interrupted thread would take now, taking the serial
 * lock when it is free (else its holder's unlock kicks the thread back
 * here).  How a thread computing on its own core hears a signal: the
 * sender's kick is an IPI (trap.c). */
void signal_interrupted(struct regs *r);
void signal_raise(int sig);
/* A signal the calling thread would act on now is pending (the job's tick
 * delivers it); any signal at all is pending for it (its own or the
 * process's: the serial lock is needed to look further). */
bool signal_ready(void);
bool signal_any_pending(void);
/* What is pending for the calling thread (its own and the process's), and
 * taking one of them (the thread's own first): rt_sigpending,
 * rt_sigtimedwait and delivery share these. */
uint64_t signal_pending_here(void);
void signal_take(int sig);
/* Blocked by every thread: a process signal stays pending (Linux: a fatal
 * default action ends the process only if some thread can take it). */
bool signal_blocked_everywhere(int sig);
/* A signal is pending that would end a wait: unblocked and not ignored, or
 * one of the set also (sigtimedwait's). */
bool signal_wakes(uint64_t also);
/* The mask a wait runs under (rt_sigsuspend, ppoll, pselect6): the old one
 * comes back after the handler of the signal that ends the wait, or at once
 * through signal_wait_mask_end when the wait ends otherwise (r != -EINTR).
 * mask_va 0: the mask stays.  0, -EINVAL or -EFAULT. */
long signal_wait_mask(uint64_t mask_va, uint64_t size);
long signal_wait_mask_end(long r);
/* A system call interrupted by what is pending now is to be restarted
 * (the handler has SA_RESTART, or no handler runs). */
bool signal_restarts(void);
#endif
