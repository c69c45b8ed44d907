/* System calls: Linux x86-64 numbers and semantics.  Each handler takes the
 * six raw argument registers and returns the value for RAX (a negative errno
 * on failure).  sys/table.c maps numbers to handlers. */
#ifndef TERN_SYSCALL_H
#define TERN_SYSCALL_H
#include <stdint.h>
#include "cpu.h"

typedef uint64_t u64;
#define SYSCALL(name) long sys_##name(u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
#define UNUSED_ARGS(...) (void)a0, (void)a1, (void)a2, (void)a3, (void)a4, (void)a5

/* The registers of the system call being handled (for rt_sigreturn). */
extern struct regs *syscall_regs;

/* sys/io.c */
SYSCALL(read); SYSCALL(write); SYSCALL(readv); SYSCALL(writev); SYSCALL(pread64);
SYSCALL(pwrite64); SYSCALL(lseek); SYSCALL(ioctl); SYSCALL(fstat); SYSCALL(newfstatat);
SYSCALL(stat); SYSCALL(open); SYSCALL(openat); SYSCALL(access); SYSCALL(faccessat);
SYSCALL(close); SYSCALL(dup); SYSCALL(dup2); SYSCALL(dup3); SYSCALL(fcntl); SYSCALL(getcwd);
SYSCALL(poll); SYSCALL(readlink); SYSCALL(readlinkat);
/* sys/mem.c */
SYSCALL(brk); SYSCALL(mmap); SYSCALL(munmap); SYSCALL(mremap); SYSCALL(mprotect);
SYSCALL(madvise); SYSCALL(sysinfo);
/* sys/time.c */
SYSCALL(clock_gettime); SYSCALL(clock_getres); SYSCALL(gettimeofday); SYSCALL(time);
SYSCALL(nanosleep); SYSCALL(clock_nanosleep); SYSCALL(times); SYSCALL(getrusage);
/* sys/proc.c */
SYSCALL(exit); SYSCALL(exit_group); SYSCALL(getpid); SYSCALL(getppid); SYSCALL(getuid);
SYSCALL(getgid); SYSCALL(uname); SYSCALL(arch_prctl); SYSCALL(set_tid_address);
SYSCALL(set_robust_list); SYSCALL(prlimit64); SYSCALL(getrlimit); SYSCALL(setrlimit);
SYSCALL(sched_yield); SYSCALL(sched_getaffinity); SYSCALL(getrandom); SYSCALL(enosys_quiet);
SYSCALL(success);
/* sys/signal.c */
SYSCALL(rt_sigaction); SYSCALL(rt_sigprocmask); SYSCALL(rt_sigreturn); SYSCALL(sigaltstack);
SYSCALL(kill); SYSCALL(tgkill); SYSCALL(tkill);

/* sys/portals.c: the Tern Portals call (ptl_syscall.h) */
SYSCALL(tern_portals);

int syscall_dispatch(struct regs *r);
#endif
