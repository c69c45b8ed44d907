/* Process identity, limits, exit, and the small calls libc makes at start. */
#include "boot.h"
#include "cpu.h"
#include "fd.h"
#include "kernel.h"
#include "mem.h"
#include "ptl_kernel.h"
#include "random.h"
#include "syscall.h"
#include "uaccess.h"
#include "x86.h"

SYSCALL(getpid) { UNUSED_ARGS(); return proc.pid; }
/* wait4, waitid: a node's program has no children to wait for. */
SYSCALL(no_children) { UNUSED_ARGS(); return -ECHILD; }
SYSCALL(getppid) { UNUSED_ARGS(); return 0; }
SYSCALL(getuid) { UNUSED_ARGS(); return options.uid; }
SYSCALL(getgid) { UNUSED_ARGS(); return options.gid; }
SYSCALL(success) { UNUSED_ARGS(); return 0; }

/* Real, effective and saved ids: the job owner's, all three (identity does
 * not change on a node). */
static long three_ids(uint64_t r, uint64_t e, uint64_t s, uint32_t id)
{
    if (copy_to_user(r, &id, sizeof id) || copy_to_user(e, &id, sizeof id) ||
        copy_to_user(s, &id, sizeof id))
        return -EFAULT;
    return 0;
}
SYSCALL(getresuid) { UNUSED_ARGS(); return three_ids(a0, a1, a2, options.uid); }
SYSCALL(getresgid) { UNUSED_ARGS(); return three_ids(a0, a1, a2, options.gid); }

SYSCALL(uname)
{
    UNUSED_ARGS();
    /* "Linux": this is the Linux system-call ABI, and libraries check for it. */
    static char u[6][65];
    memset(u, 0, sizeof u);
    strlcpy(u[0], "Linux", 65);
    /* The node's name, the one MPI_Get_processor_name gives (libmpi):
     * codes that find the ranks sharing a node by host name (a node-local
     * communicator, a shared-memory path) group those of one node, and only
     * those.  Every node was "tern".  Nid 0 is the service node's: a node
     * with no network has no nid. */
    uint32_t nid = ptl_kernel_nid();
    if (nid)
        snprintf(u[1], 65, "nid%u", nid);
    else
        strlcpy(u[1], "tern", 65);
    strlcpy(u[2], "6.1.0-tern", 65);
    strlcpy(u[3], "Tern light-weight kernel", 65);
    strlcpy(u[4], "x86_64", 65);
    strlcpy(u[5], "(none)", 65);
    return copy_to_user(a0, u, sizeof u);
}

#define ARCH_SET_GS 0x1001
#define ARCH_SET_FS 0x1002
#define ARCH_GET_FS 0x1003
#define ARCH_GET_GS 0x1004

SYSCALL(arch_prctl)
{
    UNUSED_ARGS();
    switch (a0) {
    case ARCH_SET_FS:
    case ARCH_SET_GS:
        if (a1 >= 0x800000000000ULL)
            return -EPERM;     /* non-canonical or kernel half */
        /* In the kernel the user's GS base is the swapped-out one. */
        wrmsr(a0 == ARCH_SET_FS ? MSR_FS_BASE : MSR_KERNEL_GS_BASE, a1);
        return 0;
    case ARCH_GET_FS:
    case ARCH_GET_GS: {
        uint64_t v = rdmsr(a0 == ARCH_GET_FS ? MSR_FS_BASE : MSR_KERNEL_GS_BASE);
        return copy_to_user(a1, &v, 8);
    }
    default:
        return -EINVAL;
    }
}

#define RLIMIT_DATA 2
#define RLIMIT_STACK 3
#define RLIMIT_NOFILE 7
#define RLIMIT_AS 9
#define RLIM_NLIMITS 16
#define RLIM_INFINITY (~0ULL)

static void limit_of(uint64_t res, uint64_t out[2])
{
    out[0] = out[1] = RLIM_INFINITY;
    switch (res) {
    case RLIMIT_DATA: out[0] = out[1] = proc.heap_end - proc.brk_start; break;
    case RLIMIT_STACK: out[0] = out[1] = proc.vend - proc.stack_lo; break;
    case RLIMIT_AS: out[0] = out[1] = proc.vend - proc.vbase; break;
    case RLIMIT_NOFILE: out[0] = out[1] = MAX_FDS; break;
    }
}

SYSCALL(prlimit64)
{
    UNUSED_ARGS();
    if (a0 != 0 && a0 != proc.pid)
        return -ESRCH;
    if (a1 >= RLIM_NLIMITS)
        return -EINVAL;
    uint64_t cur[2];
    limit_of(a1, cur);
    if (a2) {
        uint64_t want[2];
        if (copy_from_user(want, a2, sizeof want))
            return -EFAULT;
        if (want[0] > want[1])
            return -EINVAL;
        /* Limits here are facts of the memory layout; lowering is harmless,
         * raising beyond what exists is refused. */
        if (want[1] > cur[1])
            return -EPERM;
    }
    return a3 ? copy_to_user(a3, cur, sizeof cur) : 0;
}

SYSCALL(getrlimit) { UNUSED_ARGS(); return sys_prlimit64(0, a0, 0, a1, 0, 0); }
SYSCALL(setrlimit) { UNUSED_ARGS(); return sys_prlimit64(0, a0, a1, 0, 0, 0); }

#define MEMBARRIER_CMD_QUERY 0
#define MEMBARRIER_CMD_GLOBAL 1
#define MEMBARRIER_CMD_GLOBAL_EXPEDITED 2
#define MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED 4
#define MEMBARRIER_CMD_PRIVATE_EXPEDITED 8
#define MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED 16
#define MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE 32
#define MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE 64
#define MEMBARRIER_SUPPORTED 127

/* One thread on one CPU: every barrier holds as soon as it is asked for.
 * The private ones still want registering first, as Linux checks. */
SYSCALL(membarrier)
{
    UNUSED_ARGS();
    if (a1 & ~1ULL)                   /* MEMBARRIER_CMD_FLAG_CPU */
        return -EINVAL;
    switch (a0) {
    case MEMBARRIER_CMD_QUERY:
        return MEMBARRIER_SUPPORTED;
    case MEMBARRIER_CMD_GLOBAL:
    case MEMBARRIER_CMD_GLOBAL_EXPEDITED:
        return 0;
    case MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED:
    case MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED:
    case MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE:
        proc.membarrier_registered |= (uint32_t)a0;
        return 0;
    case MEMBARRIER_CMD_PRIVATE_EXPEDITED:
    case MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE:
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        return (proc.membarrier_registered & (a0 << 1)) ? 0 : -EPERM;
    default:
        return -EINVAL;
    }
}

SYSCALL(getrandom)
{
    UNUSED_ARGS();
    uint64_t len = a1 > 33554431 ? 33554431 : a1;
    if (a2 & ~7ULL)
        return -EINVAL;
    if (!user_ok(a0, len))
        return -EFAULT;
    random_bytes((void *)a0, len);
    return (long)len;
}
