/* The program's threads and the cores they run on (kernel/thread.c).
 *
 * Policy: one thread per core, within its process's cores (the node's, or
 * with ranks per core its rank's share: process.h cpu_first, cpu_count).
 * The first thread runs on the first of them (CPU 0 without ranks); each
 * new thread gets a core of its own, the lowest that has none.  Once every
 * one has a thread, new threads go to the process's last core (CPU 0 on a
 * one-CPU node), whose threads take turns: a switch
 * when one blocks or yields, or after a time slice, timed by that core's
 * own one-shot timer, armed only while it holds more than one thread.  No
 * other core ever gets a timer interrupt for sharing.  sched_setaffinity
 * moves a thread to the first of its process's cores in the mask it gives.
 *
 * Threads never migrate by themselves.  Every thread has its own kernel
 * stack (the first uses the boot stack); a thread that waits in the kernel
 * halts its core unless another thread there can run.  A program with one
 * thread pays for none of this: no lock is taken for it. */
#ifndef TERN_THREAD_H
#define TERN_THREAD_H
#include <stdbool.h>
#include <stdint.h>
#include "cpu.h"
#include "percpu.h"

#define MAX_THREADS 64
#define THREAD_SLICE_NS 10000000ULL        /* on the shared core */

enum thread_state { TS_FREE, TS_RUN, TS_SLEEP, TS_DEAD };
struct process;

struct thread {
    uint32_t tid;                  /* Linux thread id; the first is the pid */
    struct process *process;       /* whose thread: its page tables go with it */
    uint32_t slot;                 /* index in the table */
    volatile uint32_t state;       /* enum thread_state */
    volatile uint32_t cpu;         /* the core it runs on */
    volatile bool on_cpu;          /* its registers are live on some CPU */
    volatile bool kicked;          /* woken (thread_kick) since it last slept */
    bool zombie;                   /* the first thread, exited while others run */
    uint64_t sleep_until;          /* TS_SLEEP: when it wants its core back */
    uint64_t ksp;                  /* kernel stack pointer while switched out */
    uint64_t kstack_top;
    uint64_t fs_base, gs_base;     /* the user's, while switched out */
    uint64_t clear_child_tid;      /* set_tid_address / CLONE_CHILD_CLEARTID */
    uint64_t cpu_ns;               /* user+kernel time on its core (getrusage) */
    void *fpu;                     /* vector registers while switched out */
    uint64_t altstack_sp, altstack_size;   /* sigaltstack: each thread its own */
    int altstack_flags;
    bool portals_wait;             /* in the program's Portals wait (sys/portals.c) */
    /* Signals (sys/signal.c): the thread's mask (a new thread inherits its
     * creator's), what tgkill sent to it alone, and rt_sigsuspend's mask to
     * restore once a handler has run. */
    uint64_t sig_blocked, sig_pending, sig_saved_mask;
    bool sig_has_saved_mask;
    /* Another thread's sched_setaffinity for this one: the core it moves to
     * on its next way back to user mode, plus 1 (0: none). */
    volatile uint32_t move_to;
    uint32_t gen;                  /* threads_gen when it was made */
};

/* Boot: the table and every thread's kernel stack, taken off the top of the
 * application region (before the program is loaded). */
void threads_init(void);
/* The program starts: the table holds its first thread, on CPU 0. */
void threads_start(uint32_t pid);
/* A job ended: forget every thread; the other CPUs go back to idling. */
void threads_reset(void);

struct thread *thread_current(void);   /* NULL on an idle core */
/* Read on every system call: a variable, not a call. */
extern volatile uint32_t threads_alive_count;
static inline unsigned threads_alive(void) { return threads_alive_count; }   /* 1 until clone */
static inline bool threads_many(void) { return threads_alive_count > 1; }
/* Whether the calling thread's process has another live thread (one that
 * could wake it): the node's count above also holds the other ranks'. */
bool threads_others_in_process(void);
/* How many live threads the calling thread's process has (/proc/self/status). */
unsigned threads_in_process(void);
/* A rank's end (ranks.c) ends its other threads: SIGKILL to each, which it
 * takes on its way back to user mode or out of a wait, and leaves. */
void threads_kill_others_in_process(void);
/* Signal sig pending for thread t alone (tkill); t kicked if it is not the
 * caller: a wait ends, a core computing takes an IPI. */
void thread_signal(struct thread *t, int sig);

/* clone(2) for a thread: r holds the parent's registers at the call; the
 * new thread's tid is written at set_tid1 and set_tid2 (0: not) before it
 * runs.  The new thread's tid, or -EAGAIN when the table is full. */
long thread_create(const struct regs *r, uint64_t stack, uint64_t tls, uint64_t clear_tid,
                   uint64_t set_tid1, uint64_t set_tid2);
/* The calling thread ends (exit(2)); the last one ends the program. */
__attribute__((noreturn)) void thread_exit(int code);
/* A rank's first thread (ranks.c), on core cpu, in process p, entering
 * user mode at rip with stack rsp; its tid (p's pid), or -EAGAIN. */
long thread_start_rank(struct process *p, unsigned cpu, uint64_t rip, uint64_t rsp);
/* The calling thread leaves its core for good, the program going on
 * (thread_exit's end for a thread that is not the last; a rank's end). */
__attribute__((noreturn)) void thread_leave(void);

/* A thread that waits: gives its core to another thread there, or halts
 * it; returns early on any wake.  Called by time_halt_until (a hook). */
void thread_kick(struct thread *t);     /* ends t's wait (futex wake) */
void thread_yield(void);
/* Moves the calling thread to cpu (sched_setaffinity). */
long thread_move(unsigned cpu);
/* Moves thread t to cpu: the caller itself at once, another thread on its
 * next way back to user mode (a system call's end, an interrupt: it is
 * kicked), where it calls thread_move_if_asked.  pthread_create with an
 * affinity (libgomp's OMP_PROC_BIND) sets the new thread's so. */
long thread_set_core(struct thread *t, unsigned cpu);
void thread_move_asked(void);
/* On every system call's and user-mode interrupt's way out: a load and a
 * test, and the move only when one was asked for. */
static inline void thread_move_if_asked(void)
{
    struct thread *me = this_cpu()->current;
    if (me && me->move_to)
        thread_move_asked();
}
struct thread *thread_by_tid(uint32_t tid);
/* The AND of the live threads' signal masks; every live thread kicked (a
 * process signal arrived: the ones that may take it look). */
uint64_t threads_blocked_by_all(void);
void threads_kick_all(void);

/* On every way in from user mode (a system call, an exception, an
 * interrupt): a core other than CPU 0 running a thread of a program that
 * has ended (switched in before the clean-up that came after, whatever its
 * slot holds now) goes back to its idle loop, with a line in the log.
 * Such a thread must not reach the end path: on a core other than 0 with
 * no threads left that would run the node's clean-up a second time,
 * beside CPU 0's, and start the job loop on CPU 0's stack.  A load and a
 * test. */
__attribute__((noreturn)) void thread_stray_stop(const struct regs *r);
extern volatile uint32_t threads_gen;  /* one more at each clean-up and start */
static inline void thread_stray_check(const struct regs *r)
{
    struct percpu *c = this_cpu();
    if (c->index && c->current_gen != threads_gen)   /* an idle core's is 0 */
        thread_stray_stop(r);
}

/* The program ends (exit_group, a fault, a fatal signal): called first by
 * whatever ends it.  On CPU 0 it stops the other cores' threads and
 * returns; elsewhere it hands rest(arg) to CPU 0 and never returns.  A
 * second end racing the first waits to be stopped. */
void threads_end_begin(void (*rest)(void *), void *arg);

/* The serial lock: system calls of a program with several threads that
 * touch process-wide state (files, the job, signals, memory maps) take it;
 * the wait hook and the interrupt paths that serve the job try it. */
void serial_lock(void);
bool serial_trylock(void);
void serial_unlock(void);
bool serial_held(void);                 /* by the calling thread */
/* serial_trylock from an interrupt of the calling thread's user mode, which
 * must not wait: on failure the holder's serial_unlock kicks the thread
 * (an IPI to its core), so that it tries again then. */
bool serial_trylock_or_recall(void);
/* Around a halt in a wait that keeps no process state across it (pause, a
 * Portals wait): lets the lock go if held (true), then takes it again. */
bool serial_release(void);
void serial_retake(bool released);
#endif
