/* Signals: handlers, masks, the alternate stack, and delivery with a Linux
 * x86-64 rt_sigframe so libc's restorer and sigreturn work unchanged.
 * Faults are not signals here: a hardware fault ends the run (trap.c). */
#include "boot.h"
#include "cpu.h"
#include "kernel.h"
#include "signal.h"
#include "thread.h"
#include "syscall.h"
#include "uaccess.h"

#define SS_ONSTACK 1
#define SS_DISABLE 2
#define BIT(s) (1ULL << ((s) - 1))
#define UNBLOCKABLE SIG_UNBLOCKABLE

static const char *const names[] = {
    [SIGHUP] = "SIGHUP", [SIGINT] = "SIGINT", [SIGQUIT] = "SIGQUIT", [SIGILL] = "SIGILL",
    [SIGTRAP] = "SIGTRAP", [SIGABRT] = "SIGABRT", [SIGBUS] = "SIGBUS", [SIGFPE] = "SIGFPE",
    [SIGKILL] = "SIGKILL", [SIGUSR1] = "SIGUSR1", [SIGSEGV] = "SIGSEGV", [SIGUSR2] = "SIGUSR2",
    [SIGPIPE] = "SIGPIPE", [SIGALRM] = "SIGALRM", [SIGTERM] = "SIGTERM",
    [SIGVTALRM] = "SIGVTALRM", [SIGPROF] = "SIGPROF",
};

const char *signal_name(int sig)
{
    if (sig > 0 && sig < (int)ARRAY_SIZE(names) && names[sig])
        return names[sig];
    return "signal";
}

static bool ignored_by_default(int sig)
{
    return sig == SIGCHLD || sig == SIGCONT || sig == SIGWINCH || sig == 23 /* SIGURG */ ||
           sig == SIGSTOP || sig == 20 || sig == 21 || sig == 22; /* no job control */
}

/* The calling thread; an idle core (no thread) blocks everything. */
static struct thread *me(void)
{
    static struct thread nobody = {.sig_blocked = ~0ULL};
    struct thread *t = thread_current();
    return t ? t : &nobody;
}

uint64_t signal_pending_here(void) { return proc.sig.pending | me()->sig_pending; }

/* Pending sets change with atomic operations: a timer's or yod's signal is
 * raised in an interrupt, beside a thread on another core taking one. */
static void pend(volatile uint64_t *set, int sig) { __atomic_fetch_or(set, BIT(sig), __ATOMIC_SEQ_CST); }
static void unpend(volatile uint64_t *set, int sig) { __atomic_fetch_and(set, ~BIT(sig), __ATOMIC_SEQ_CST); }

/* To the process (kill, a timer, yod): every other thread is kicked to
 * look - the one that may take it could be asleep in a wait, or computing
 * on its own core (the kick's IPI delivers on its way back to user mode:
 * signal_interrupted).  Also with one thread left: it need not be this
 * core's (the first thread exited, CPU 0 serves yod for the last). */
void signal_raise(int sig)
{
    pend(&proc.sig.pending, sig);
    threads_kick_all();
}

bool signal_any_pending(void) { return signal_pending_here() != 0; }

bool signal_blocked_everywhere(int sig) { return threads_blocked_by_all() >> (sig - 1) & 1; }

void signal_take(int sig)
{
    if (me()->sig_pending & BIT(sig))
        unpend(&me()->sig_pending, sig);
    else
        unpend(&proc.sig.pending, sig);
}

static bool ignored(int sig)
{
    const struct k_sigaction *a = &proc.sig.act[sig];
    return a->handler == SIG_IGN || (a->handler == SIG_DFL && ignored_by_default(sig));
}

/* The lowest pending signal that would be acted on now, or 0. */
static int next_acted_on(void)
{
    uint64_t ready = signal_pending_here() & ~me()->sig_blocked;
    while (ready) {
        int sig = __builtin_ctzll(ready) + 1;
        if (!ignored(sig))
            return sig;
        ready &= ~BIT(sig);
    }
    return 0;
}

bool signal_wakes(uint64_t also) { return (signal_pending_here() & also) || next_acted_on(); }

bool signal_ready(void) { return next_acted_on() != 0; }

bool signal_restarts(void)
{
    int sig = next_acted_on();
    return !sig || (proc.sig.act[sig].handler != SIG_DFL && (proc.sig.act[sig].flags & SA_RESTART));
}

SYSCALL(rt_sigaction)
{
    UNUSED_ARGS();
    int sig = (int)a0;
    if (a3 != 8 || sig < 1 || sig > NSIG)
        return -EINVAL;
    struct k_sigaction *act = &proc.sig.act[sig];
    struct k_sigaction old = *act, new;
    if (a1) {
        if (sig == SIGKILL || sig == SIGSTOP)
            return -EINVAL;
        if (copy_from_user(&new, a1, sizeof new))
            return -EFAULT;
    }
    if (a2 && copy_to_user(a2, &old, sizeof old))
        return -EFAULT;
    if (a1) {
        new.mask &= ~UNBLOCKABLE;
        *act = new;
        if (new.handler == SIG_IGN) {
            unpend(&proc.sig.pending, sig);
            unpend(&me()->sig_pending, sig);   /* other threads' own: when they look */
        }
    }
    return 0;
}

SYSCALL(rt_sigprocmask)
{
    UNUSED_ARGS();
    if (a3 != 8)
        return -EINVAL;
    uint64_t *blocked = &me()->sig_blocked;
    uint64_t old = *blocked, set;
    if (a1) {
        if (copy_from_user(&set, a1, 8))
            return -EFAULT;
        switch (a0) {
        case 0: *blocked |= set; break;    /* SIG_BLOCK */
        case 1: *blocked &= ~set; break;   /* SIG_UNBLOCK */
        case 2: *blocked = set; break;     /* SIG_SETMASK */
        default: return -EINVAL;
        }
        *blocked &= ~UNBLOCKABLE;
    }
    if (a2 && copy_to_user(a2, &old, 8)) {
        *blocked = old;
        return -EFAULT;
    }
    return 0;
}

long signal_wait_mask(uint64_t mask_va, uint64_t size)
{
    uint64_t m;
    if (!mask_va)
        return 0;
    if (size != 8)
        return -EINVAL;
    if (copy_from_user(&m, mask_va, 8))
        return -EFAULT;
    struct thread *t = me();
    t->sig_saved_mask = t->sig_blocked;
    t->sig_has_saved_mask = true;
    t->sig_blocked = m & ~UNBLOCKABLE;
    return 0;
}

long signal_wait_mask_end(long r)
{
    struct thread *t = me();
    if (r != -EINTR && t->sig_has_saved_mask) {
        t->sig_blocked = t->sig_saved_mask;
        t->sig_has_saved_mask = false;
    }
    return r;
}

struct stack_t { uint64_t sp; int32_t flags, pad; uint64_t size; };

static bool on_altstack(uint64_t sp)
{
    return thread_current()->altstack_size && sp > thread_current()->altstack_sp &&
           sp <= thread_current()->altstack_sp + thread_current()->altstack_size;
}

SYSCALL(sigaltstack)
{
    UNUSED_ARGS();
    struct stack_t old = {thread_current()->altstack_sp, thread_current()->altstack_size ? 0 : SS_DISABLE, 0,
                          thread_current()->altstack_size};
    if (on_altstack(syscall_regs->rsp))
        old.flags = SS_ONSTACK;
    if (a0) {
        struct stack_t ss;
        if (copy_from_user(&ss, a0, sizeof ss))
            return -EFAULT;
        if (on_altstack(syscall_regs->rsp))
            return -EPERM;
        if (ss.flags & SS_DISABLE) {
            thread_current()->altstack_sp = thread_current()->altstack_size = 0;
        } else {
            if (ss.flags & ~SS_ONSTACK)
                return -EINVAL;
            if (ss.size < 2048)
                return -ENOMEM;
            thread_current()->altstack_sp = ss.sp;
            thread_current()->altstack_size = ss.size;
        }
    }
    if (a1 && copy_to_user(a1, &old, sizeof old))
        return -EFAULT;
    return 0;
}

/* kill: to the process; a thread that does not block it takes it. */
static long send(int64_t pid, uint64_t sig)
{
    if (sig > NSIG)
        return -EINVAL;
    if (pid != (int64_t)proc.pid && pid != 0 && pid != -1)
        return -ESRCH;
    if (sig)
        signal_raise((int)sig);
    return 0;
}

/* tkill, tgkill: to one thread (pthread_kill, raise). */
static long send_to_thread(int64_t tid, uint64_t sig)
{
    if (sig > NSIG)
        return -EINVAL;
    struct thread *t = tid > 0 && tid <= 0x7FFFFFFF ? thread_by_tid((uint32_t)tid) : NULL;
    if (!t)
        return -ESRCH;
    if (sig)
        thread_signal(t, (int)sig);     /* on another core: an IPI (signal_interrupted) */
    return 0;
}

SYSCALL(kill) { UNUSED_ARGS(); return send((int64_t)a0, a1); }
SYSCALL(tkill) { UNUSED_ARGS(); return send_to_thread((int64_t)a0, a1); }
SYSCALL(tgkill)
{
    UNUSED_ARGS();
    if ((int64_t)a0 != (int64_t)proc.pid)
        return -ESRCH;
    return send_to_thread((int64_t)a1, a2);
}

/* Linux's x86-64 signal frame. */
struct sigcontext {
    uint64_t r8, r9, r10, r11, r12, r13, r14, r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip;
    uint64_t eflags;
    uint16_t cs, gs, fs, ss;
    uint64_t err, trapno, oldmask, cr2, fpstate, reserved[8];
};
struct ucontext {
    uint64_t flags, link;
    struct stack_t stack;
    struct sigcontext mc;
    uint64_t sigmask;
};
struct siginfo {
    int32_t signo, errno_, code, pad;
    int32_t pid, uid;
    uint8_t rest[104];
};
struct rt_sigframe {
    uint64_t pretcode;
    struct ucontext uc;
    struct siginfo info;
};
_Static_assert(sizeof(struct siginfo) == SIGINFO_SIZE, "siginfo_t of Linux x86-64");

#define SI_TIMER (-2)

void signal_info(void *out, int sig, const struct timer_expiry *timer)
{
    struct siginfo *i = out;
    memset(i, 0, sizeof *i);
    i->signo = sig;
    i->code = 0;                       /* SI_USER, from this process */
    i->pid = (int32_t)proc.pid;
    i->uid = (int32_t)options.uid;
    if (timer) {                       /* _timer: si_tid, si_overrun, si_value there */
        i->code = SI_TIMER;
        i->pid = timer->id;
        i->uid = timer->overrun;
        memcpy(i->rest, &timer->value, 8);
    }
}

static void save_fpu(uint64_t area) { fpu_save_area((void *)area); }

/* Restores FPU state from user memory, refusing anything xrstor/fxrstor
 * would fault on: a corrupt frame must not crash the kernel. */
static bool restore_fpu(uint64_t area)
{
    if (area & 63 || !user_ok(area, cpu.xsave_size))
        return false;
    uint32_t mxcsr = *(uint32_t *)(area + 24);
    if (mxcsr & 0xFFFF0000)
        return false;
    if (cpu_use_xsave()) {
        uint64_t *hdr = (uint64_t *)(area + 512);
        if ((hdr[0] & ~cpu.xcr0) || hdr[1])
            return false;
        for (int i = 2; i < 8; i++)
            if (hdr[i])
                return false;
    }
    fpu_load_area((const void *)area);
    return true;
}

static void kill_now(int sig)
{
    kprintf("%s: cannot deliver %s (bad stack or frame)\n", proc.name, signal_name(sig));
    node_end(END_SIGNAL, sig);
}

static void build_frame(struct regs *r, int sig, const struct k_sigaction *act,
                        const struct timer_expiry *timer)
{
    uint64_t sp = r->rsp - 128;                    /* skip the red zone */
    if ((act->flags & SA_ONSTACK) && thread_current()->altstack_size && !on_altstack(r->rsp))
        sp = thread_current()->altstack_sp + thread_current()->altstack_size;
    uint64_t fp = ALIGN_DOWN(sp - cpu.xsave_size, 64);
    uint64_t frame = ALIGN_DOWN(fp - sizeof(struct rt_sigframe), 16) - 8;
    if (!user_ok(frame, sp - frame) || !(act->flags & SA_RESTORER))
        kill_now(sig);
    save_fpu(fp);
    struct rt_sigframe *f = (struct rt_sigframe *)frame;
    memset(f, 0, sizeof *f);
    f->pretcode = act->restorer;
    f->uc.stack = (struct stack_t){thread_current()->altstack_sp, thread_current()->altstack_size ? 0 : SS_DISABLE,
                                   0, thread_current()->altstack_size};
    struct sigcontext *m = &f->uc.mc;
    m->r8 = r->r8, m->r9 = r->r9, m->r10 = r->r10, m->r11 = r->r11, m->r12 = r->r12;
    m->r13 = r->r13, m->r14 = r->r14, m->r15 = r->r15, m->rdi = r->rdi, m->rsi = r->rsi;
    m->rbp = r->rbp, m->rbx = r->rbx, m->rdx = r->rdx, m->rax = r->rax, m->rcx = r->rcx;
    m->rsp = r->rsp, m->rip = r->rip, m->eflags = r->rflags, m->cs = USER_CS, m->ss = USER_DS;
    m->fpstate = fp;
    /* The mask the handler's return restores: sigsuspend's own is only
     * for the wait. */
    struct thread *t = me();
    uint64_t old = t->sig_has_saved_mask ? t->sig_saved_mask : t->sig_blocked;
    t->sig_has_saved_mask = false;
    m->oldmask = old;
    f->uc.sigmask = old;
    signal_info(&f->info, sig, timer);

    r->rip = act->handler;
    r->rsp = frame;
    r->rdi = (uint64_t)sig;
    r->rsi = (uint64_t)&f->info;
    r->rdx = (uint64_t)&f->uc;
    r->rax = 0;
    r->rflags &= ~(1ULL << 10 | 1ULL << 8);        /* DF, TF clear, as Linux does */
}

int signal_deliver(struct regs *r)
{
    struct thread *t = me();
    uint64_t ready = signal_pending_here() & ~t->sig_blocked;
    while (ready) {
        int sig = __builtin_ctzll(ready) + 1;
        signal_take(sig);
        ready &= ~BIT(sig);
        struct timer_expiry te;
        bool timer = itimer_taken(sig, &te);
        struct k_sigaction *act = &proc.sig.act[sig];
        if (ignored(sig))
            continue;
        if (act->handler == SIG_DFL)
            node_end(END_SIGNAL, sig);
        struct k_sigaction a = *act;
        build_frame(r, sig, &a, timer ? &te : NULL);
        t->sig_blocked |= a.mask;
        if (!(a.flags & SA_NODEFER))
            t->sig_blocked |= BIT(sig);
        t->sig_blocked &= ~UNBLOCKABLE;
        if (a.flags & SA_RESETHAND)
            act->handler = SIG_DFL;
        return 1;
    }
    if (t->sig_has_saved_mask) {        /* no handler ran: the old mask is back */
        t->sig_blocked = t->sig_saved_mask;
        t->sig_has_saved_mask = false;
    }
    return 0;
}

/* An interrupt returns to the program here (trap.c): the interrupted
 * thread takes what it would take on its way back from a system call.  So
 * a thread computing on a core of its own hears a signal sent from another
 * core at once - the sender's kick is an IPI to that core - and a timer's
 * or the job's tick's signal is delivered the same way.  The frame is the
 * whole interrupted state (every register, the flags; the vector registers
 * are still live and build_frame saves them), and the return to user mode
 * is an iretq that restores all of it: the handler's sigreturn resumes the
 * interrupted instruction exactly. */
void signal_interrupted(struct regs *r)
{
    /* A look without the lock first: nearly every interrupt ends here. */
    if (!thread_current() || !next_acted_on())
        return;
    bool locked = threads_many();       /* signal state is the serial lock's */
    if (locked && !serial_trylock_or_recall())
        return;     /* the holder's unlock kicks this thread: its IPI comes back here */
    signal_deliver(r);
    if (locked)
        serial_unlock();
}

SYSCALL(rt_sigreturn)
{
    UNUSED_ARGS();
    struct regs *r = syscall_regs;
    uint64_t uc_va = r->rsp;      /* the handler's `ret` popped pretcode */
    if (!user_ok(uc_va, sizeof(struct ucontext)))
        kill_now(SIGSEGV);
    const struct ucontext *uc = (const struct ucontext *)uc_va;
    const struct sigcontext *m = &uc->mc;
    if (m->rip >= 0x800000000000ULL || (m->fpstate && !restore_fpu(m->fpstate)))
        kill_now(SIGSEGV);
    r->r8 = m->r8, r->r9 = m->r9, r->r10 = m->r10, r->r11 = m->r11, r->r12 = m->r12;
    r->r13 = m->r13, r->r14 = m->r14, r->r15 = m->r15, r->rdi = m->rdi, r->rsi = m->rsi;
    r->rbp = m->rbp, r->rbx = m->rbx, r->rdx = m->rdx, r->rax = m->rax, r->rcx = m->rcx;
    r->rsp = m->rsp, r->rip = m->rip;
    const uint64_t user_flags = 0x40DD5;           /* CF PF AF ZF SF TF DF OF AC */
    r->rflags = (r->rflags & ~user_flags) | (m->eflags & user_flags) | (1ULL << 9);
    r->cs = USER_CS;
    r->ss = USER_DS;
    me()->sig_blocked = uc->sigmask & ~UNBLOCKABLE;
    return 0;
}
