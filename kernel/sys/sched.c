/* Scheduling policy: a node does not share a core by time (docs/kernel.md),
 * so every policy a program may set without privilege (SCHED_OTHER, BATCH,
 * IDLE) is taken and remembered, and the real-time ones are refused as
 * Linux refuses them to a user without RLIMIT_RTPRIO (EPERM).  Runtimes ask
 * for the policy and its priority range before they set a thread's
 * priority; these were ENOSYS. */
#include "kernel.h"
#include "process.h"
#include "syscall.h"
#include "thread.h"
#include "uaccess.h"

#define SCHED_OTHER 0
#define SCHED_FIFO 1
#define SCHED_RR 2
#define SCHED_BATCH 3
#define SCHED_IDLE 5
#define SCHED_RESET_ON_FORK 0x40000000

/* The process or one of its threads (the policy is the process's here). */
static long task_check(uint64_t pid)
{
    if ((int64_t)pid < 0)
        return -EINVAL;
    return pid == 0 || pid == proc.pid || thread_by_tid((uint32_t)pid) ? 0 : -ESRCH;
}

static bool realtime(uint64_t policy) { return policy == SCHED_FIFO || policy == SCHED_RR; }
static bool ordinary(uint64_t policy)
{
    return policy == SCHED_OTHER || policy == SCHED_BATCH || policy == SCHED_IDLE;
}

SYSCALL(sched_getscheduler)
{
    UNUSED_ARGS();
    long rc = task_check(a0);
    return rc ? rc : proc.sched_policy;
}

/* A priority of 0 for the ordinary policies (EINVAL otherwise, as Linux). */
static long set_policy(uint64_t pid, uint64_t policy, uint64_t param, bool keep)
{
    long rc = task_check(pid);
    if (rc)
        return rc;
    if (!param)
        return -EINVAL;
    int32_t prio;
    if (copy_from_user(&prio, param, sizeof prio))
        return -EFAULT;
    policy &= ~(uint64_t)SCHED_RESET_ON_FORK;
    if (keep)
        policy = proc.sched_policy;
    if (realtime(policy))
        return prio < 1 || prio > 99 ? -EINVAL : -EPERM;
    if (!ordinary(policy) || prio != 0)
        return -EINVAL;
    proc.sched_policy = (uint8_t)policy;
    return 0;
}

SYSCALL(sched_setscheduler) { UNUSED_ARGS(); return set_policy(a0, a1, a2, false); }
SYSCALL(sched_setparam) { UNUSED_ARGS(); return set_policy(a0, 0, a1, true); }

SYSCALL(sched_getparam)
{
    UNUSED_ARGS();
    long rc = task_check(a0);
    if (rc)
        return rc;
    int32_t prio = 0;
    return a1 ? copy_to_user(a1, &prio, sizeof prio) : -EINVAL;
}

SYSCALL(sched_get_priority_max)
{
    UNUSED_ARGS();
    return realtime(a0) ? 99 : ordinary(a0) ? 0 : -EINVAL;
}

SYSCALL(sched_get_priority_min)
{
    UNUSED_ARGS();
    return realtime(a0) ? 1 : ordinary(a0) ? 0 : -EINVAL;
}

/* A thread keeps its core for as long as it runs: no time slice (0, what
 * Linux says for SCHED_FIFO). */
SYSCALL(sched_rr_get_interval)
{
    UNUSED_ARGS();
    long rc = task_check(a0);
    if (rc)
        return rc;
    struct timespec64 ts = {0, 0};
    return copy_to_user(a1, &ts, sizeof ts);
}
