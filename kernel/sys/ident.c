/* Process identity, as a session leader on Linux sees it: the program is
 * pid 1, leads its process group and its session, and owns the console as
 * its controlling terminal.  Groups, the command name (prctl), personality
 * and scheduling priority. */
#include "boot.h"
#include "kernel.h"
#include "syscall.h"
#include "uaccess.h"

static bool self(uint64_t pid) { return pid == 0 || pid == proc.pid; }

SYSCALL(getpgrp) { UNUSED_ARGS(); return proc.pid; }
SYSCALL(getpgid) { UNUSED_ARGS(); return self(a0) ? (long)proc.pid : -ESRCH; }
SYSCALL(getsid) { UNUSED_ARGS(); return self(a0) ? (long)proc.pid : -ESRCH; }

/* Into its own group, where it is: done.  (Linux refuses a session leader
 * even this, with EPERM; a program asking for what already holds is better
 * served by success.) */
SYSCALL(setpgid)
{
    UNUSED_ARGS();
    if (!self(a0))
        return -ESRCH;
    return self(a1) ? 0 : -EPERM;
}

/* It leads its session already: the session id, as if made now. */
SYSCALL(setsid) { UNUSED_ARGS(); return proc.pid; }

/* The supplementary groups: the owner's primary group, as after a login. */
SYSCALL(getgroups)
{
    UNUSED_ARGS();
    if ((int32_t)a0 < 0)
        return -EINVAL;
    if (a0 == 0)
        return 1;
    uint32_t g = options.gid;
    return copy_to_user(a1, &g, sizeof g) ? -EFAULT : 1;
}

#define PR_SET_NAME 15
#define PR_GET_NAME 16
#define PR_SET_VMA 0x53564d41
#define PR_SET_VMA_ANON_NAME 0

SYSCALL(prctl)
{
    UNUSED_ARGS();
    switch (a0) {
    case PR_SET_NAME: {
        char name[sizeof proc.comm];
        uint64_t i = 0;
        for (; i < sizeof name - 1; i++) {          /* longer names are cut, as on Linux */
            if (copy_from_user(&name[i], a1 + i, 1))
                return -EFAULT;
            if (!name[i])
                break;
        }
        name[i] = 0;
        memcpy(proc.comm, name, sizeof name);
        return 0;
    }
    case PR_GET_NAME:
        return copy_to_user(a1, proc.comm, sizeof proc.comm);
    case PR_SET_VMA:
        /* Names for anonymous mappings (shown in /proc/PID/maps on Linux):
         * nothing here shows them, so they are accepted and forgotten. */
        if (a1 != PR_SET_VMA_ANON_NAME || (a2 & 4095))
            return -EINVAL;
        return 0;
    default:
        return -EINVAL;
    }
}

/* The execution domain is always Linux; flags (ADDR_NO_RANDOMIZE and the
 * like) are kept and reported back. */
SYSCALL(personality)
{
    UNUSED_ARGS();
    uint32_t old = proc.personality;
    if ((uint32_t)a0 != 0xFFFFFFFFu)
        proc.personality = (uint32_t)a0;
    return old;
}

#define PRIO_PROCESS 0
#define PRIO_USER 2

static long prio_target(uint64_t which, uint64_t who)
{
    if (which > PRIO_USER)
        return -EINVAL;
    uint64_t id = which == PRIO_USER ? options.uid : proc.pid;
    return who == 0 || who == id ? 0 : -ESRCH;
}

/* The system call returns 20 - nice (libc turns it back). */
SYSCALL(getpriority)
{
    UNUSED_ARGS();
    long r = prio_target(a0, a1);
    return r ? r : 20 - proc.nice;
}

SYSCALL(setpriority)
{
    UNUSED_ARGS();
    long r = prio_target(a0, a1);
    if (r)
        return r;
    int nice = (int32_t)a2 < -20 ? -20 : (int32_t)a2 > 19 ? 19 : (int32_t)a2;
    if (nice < proc.nice && options.uid != 0)
        return -EACCES;                   /* a higher priority needs privilege */
    proc.nice = nice;
    return 0;
}
