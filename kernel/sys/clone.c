/* Threads as Linux programs make them: clone and clone3 with the flags
 * glibc's and musl's pthread_create and the Go runtime use, thread ids,
 * exit, and where a thread runs.  The threads themselves: kernel/thread.c.
 * A clone without CLONE_THREAD asks for a new process, which a node never
 * runs: ENOSYS, as before threads (sys/absent.c). */
#include "kernel.h"
#include "percpu.h"
#include "process.h"
#include "smp.h"
#include "syscall.h"
#include "thread.h"
#include "uaccess.h"

#define CLONE_VM 0x100
#define CLONE_FS 0x200
#define CLONE_FILES 0x400
#define CLONE_SIGHAND 0x800
#define CLONE_PIDFD 0x1000
#define CLONE_PTRACE 0x2000
#define CLONE_VFORK 0x4000
#define CLONE_PARENT 0x8000
#define CLONE_THREAD 0x10000
#define CLONE_SYSVSEM 0x40000
#define CLONE_SETTLS 0x80000
#define CLONE_PARENT_SETTID 0x100000
#define CLONE_CHILD_CLEARTID 0x200000
#define CLONE_DETACHED 0x400000
#define CLONE_CHILD_SETTID 0x1000000

/* What a thread may ask for; CLONE_VM|CLONE_SIGHAND|CLONE_THREAD it must. */
#define THREAD_NEEDS (CLONE_VM | CLONE_SIGHAND | CLONE_THREAD)
#define THREAD_MAY (THREAD_NEEDS | CLONE_FS | CLONE_FILES | CLONE_SYSVSEM | CLONE_SETTLS | \
                    CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID | CLONE_DETACHED |          \
                    CLONE_CHILD_SETTID)

static long do_clone(uint64_t nr, uint64_t flags, uint64_t stack, uint64_t ptid, uint64_t ctid, uint64_t tls,
                     uint64_t exit_signal)
{
    if (!(flags & CLONE_THREAD))
        return syscall_absent(nr);      /* a new process */
    if ((flags & THREAD_NEEDS) != THREAD_NEEDS || (flags & ~THREAD_MAY) || exit_signal)
        return -EINVAL;
    if (tls >= 0x800000000000ULL && (flags & CLONE_SETTLS))
        return -EPERM;
    if (((flags & CLONE_PARENT_SETTID) && !user_ok(ptid, 4)) ||
        ((flags & (CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID)) && !user_ok(ctid, 4)))
        return -EFAULT;
    return thread_create(syscall_regs, stack, (flags & CLONE_SETTLS) ? tls : 0,
                         (flags & CLONE_CHILD_CLEARTID) ? ctid : 0,
                         (flags & CLONE_PARENT_SETTID) ? ptid : 0,
                         (flags & CLONE_CHILD_SETTID) ? ctid : 0);
}

/* clone(flags, stack, parent_tid, child_tid, tls): x86-64 argument order. */
SYSCALL(clone)
{
    UNUSED_ARGS();
    return do_clone(56, a0 & ~0xFFULL, a1, a2, a3, a4, a0 & 0xFF);
}

struct clone_args {
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
    uint64_t set_tid, set_tid_size, cgroup;
};

SYSCALL(clone3)
{
    UNUSED_ARGS();
    struct clone_args ca;
    memset(&ca, 0, sizeof ca);
    if (a1 < 64 || a1 > 4096)
        return -EINVAL;
    if (copy_from_user(&ca, a0, a1 < sizeof ca ? a1 : sizeof ca))
        return -EFAULT;
    if (ca.set_tid || ca.set_tid_size || ca.cgroup || (ca.stack && !ca.stack_size))
        return -EINVAL;
    return do_clone(435, ca.flags, ca.stack ? ca.stack + ca.stack_size : 0, ca.parent_tid,
                    ca.child_tid, ca.tls, ca.exit_signal);
}

SYSCALL(exit) { UNUSED_ARGS(); thread_exit((int)(a0 & 0xFF)); }
SYSCALL(exit_group) { UNUSED_ARGS(); node_end(END_EXIT, (int)(a0 & 0xFF)); }

SYSCALL(gettid)
{
    UNUSED_ARGS();
    struct thread *t = thread_current();
    return t ? t->tid : proc.pid;
}

/* clear_child_tid is what a thread's exit clears and wakes (thread.c). */
SYSCALL(set_tid_address)
{
    UNUSED_ARGS();
    struct thread *t = thread_current();
    if (t)
        t->clear_child_tid = a0;
    return t ? t->tid : proc.pid;
}

SYSCALL(sched_yield)
{
    UNUSED_ARGS();
    thread_yield();
    return 0;
}

/* A thread may run on any core of its process: the node's, or with ranks
 * per core its rank's share (ranks.c).  That is what the mask says (a
 * program sizes its thread pool from it: libgomp, Go); where each thread
 * does run is getcpu's answer. */
static bool known_task(uint64_t pid)
{
    return pid == 0 || pid == proc.pid || thread_by_tid((uint32_t)pid);
}

SYSCALL(sched_getaffinity)
{
    UNUSED_ARGS();
    if (!known_task(a0))
        return -ESRCH;
    unsigned n = smp_ncpus();
    uint64_t bytes = ((n + 63) / 64) * 8;
    if (a1 < bytes || (a1 & 7))
        return -EINVAL;
    uint64_t mask[MAX_CPUS / 64] = {0};
    for (unsigned i = proc.cpu_first; i < proc.cpu_first + proc.cpu_count && i < n; i++)
        mask[i / 64] |= 1ULL << (i % 64);
    return copy_to_user(a2, mask, bytes) ? -EFAULT : (long)bytes;
}

/* Moves the calling thread to the first of its process's cores in the mask
 * if it is not on one of them already.  The first thread stays on its home
 * core (CPU 0, the job's core; a rank's first). */
SYSCALL(sched_setaffinity)
{
    UNUSED_ARGS();
    struct thread *me = thread_current();
    if (!known_task(a0))
        return -ESRCH;
    /* The thread to place: the caller, or another of its process (what
     * glibc's pthread_create does with an attribute's affinity). */
    struct thread *t = a0 == 0 || (me && a0 == me->tid) ? me : thread_by_tid((uint32_t)a0);
    if (a1 == 0)
        return -EINVAL;
    uint64_t mask[MAX_CPUS / 64] = {0};
    if (!user_ok(a2, a1) || copy_from_user(mask, a2, a1 < sizeof mask ? a1 : sizeof mask))
        return -EFAULT;
    unsigned lo = proc.cpu_first, end = lo + proc.cpu_count, here = this_cpu()->index;
    if (end > smp_ncpus())
        end = smp_ncpus();
    unsigned first = end;
    for (unsigned i = end; i-- > lo;)
        if (mask[i / 64] >> (i % 64) & 1)
            first = i;
    if (first == end)
        return -EINVAL;                 /* names none of its process's cores */
    if (t && t != me)
        here = t->cpu;
    if (mask[here / 64] >> (here % 64) & 1)
        return 0;
    if (!t || t->tid == proc.pid)
        return -EINVAL;
    return thread_set_core(t, first);
}

SYSCALL(getcpu)
{
    UNUSED_ARGS();
    uint32_t cpu = this_cpu()->index, node = 0;
    if ((a0 && copy_to_user(a0, &cpu, 4)) || (a1 && copy_to_user(a1, &node, 4)))
        return -EFAULT;
    return 0;
}
