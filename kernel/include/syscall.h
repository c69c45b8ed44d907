/* System calls: Linux x86-64 numbers and semantics.  Each handler takes the
 * six raw argument registers and returns the value for RAX (a negative errno
 * on failure).  sys/table.c maps numbers to handlers. */
#ifndef TERN_SYSCALL_H
#define TERN_SYSCALL_H
#include <stdbool.h>
#include <stdint.h>
#include "cpu.h"

typedef uint64_t u64;
#define SYSCALL(name) long sys_##name(u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
#define UNUSED_ARGS(...) (void)a0, (void)a1, (void)a2, (void)a3, (void)a4, (void)a5

/* The registers of the system call being handled (for rt_sigreturn). */
extern struct regs *syscall_regs;

/* sys/io.c */
SYSCALL(read); SYSCALL(write); SYSCALL(readv); SYSCALL(writev); SYSCALL(ioctl);
SYSCALL(close); SYSCALL(dup); SYSCALL(dup2); SYSCALL(dup3); SYSCALL(fcntl); SYSCALL(poll);
/* sys/file.c */
SYSCALL(pread64); SYSCALL(pwrite64); SYSCALL(lseek); SYSCALL(fstat); SYSCALL(newfstatat);
SYSCALL(stat); SYSCALL(lstat); SYSCALL(statx); SYSCALL(open); SYSCALL(openat); SYSCALL(creat);
SYSCALL(access); SYSCALL(faccessat); SYSCALL(faccessat2); SYSCALL(getcwd); SYSCALL(chdir);
SYSCALL(fchdir); SYSCALL(readlink); SYSCALL(readlinkat); SYSCALL(getdents64); SYSCALL(unlink);
SYSCALL(unlinkat); SYSCALL(rmdir); SYSCALL(mkdir); SYSCALL(mkdirat); SYSCALL(rename);
SYSCALL(renameat); SYSCALL(renameat2); SYSCALL(truncate); SYSCALL(ftruncate); SYSCALL(fsync);
SYSCALL(fdatasync); SYSCALL(umask); SYSCALL(link_unsupported);
struct fd;
long file_rw(struct fd *f, uint64_t buf, uint64_t len, int64_t off, bool writing);
long file_setfl(struct fd *f, uint32_t flags);
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
