/* System calls for facilities a node does not have.  Each answers with the
 * errno Linux gives when the facility is absent (ENOSYS: not built into
 * that kernel) and is logged once, with the reason, on the kernel log.  The
 * list in docs/kernel.md follows this table; keep the two in step. */
#include "errno.h"
#include "kernel.h"
#include "process.h"
#include "syscall.h"

struct absent {
    uint16_t nr;
    const char *name;
    const char *why;          /* NULL: not logged (libc asks at every start and copes) */
};

static const struct absent absent[] = {
    {56, "clone", "one process per node: a clone without CLONE_THREAD"},
    {435, "clone3", "one process per node: a clone without CLONE_THREAD"},
    {57, "fork", "one process per node"},
    {58, "vfork", "one process per node"},
    {59, "execve", "the node runs the one program it was given"},
    {322, "execveat", "the node runs the one program it was given"},
    {41, "socket", "no sockets on a node (Portals is its network)"},
    {53, "socketpair", "no sockets on a node (Portals is its network)"},
    {116, "setgroups", "identity is the job owner's and does not change"},
    {319, "memfd_create", "a node's ranks have memory of their own and share none"},
    {334, "rseq", NULL},
};

static uint8_t reported[512 / 8];
static bool reported_out_of_range;

long syscall_absent(uint64_t nr)
{
    if (nr >= 512) {
        if (!reported_out_of_range)
            kprintf("%s: system call %lu does not exist (ENOSYS)\n", proc.name, nr);
        reported_out_of_range = true;
        return -ENOSYS;
    }
    bool first = !(reported[nr / 8] & (1 << (nr % 8)));
    reported[nr / 8] |= (uint8_t)(1 << (nr % 8));
    for (unsigned i = 0; i < ARRAY_SIZE(absent); i++) {
        if (absent[i].nr != nr)
            continue;
        if (first && absent[i].why)
            kprintf("%s: %s (system call %lu): %s (ENOSYS); reported once\n", proc.name,
                    absent[i].name, nr, absent[i].why);
        return -ENOSYS;
    }
    if (first)
        kprintf("%s: system call %lu is not implemented (ENOSYS); reported once\n", proc.name, nr);
    return -ENOSYS;
}
