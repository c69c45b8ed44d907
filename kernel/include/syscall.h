/* System calls: Linux x86-64 numbers and semantics.  Each handler takes the
 * six raw argument registers and returns the value for RAX (a negative errno
 * on failure).  sys/table.c maps numbers to handlers. */
#ifndef TERN_SYSCALL_H
#define TERN_SYSCALL_H
#include <stdbool.h>
#include <stdint.h>
#include "cpu.h"
#include "percpu.h"

typedef uint64_t u64;
#define SYSCALL(name) long sys_##name(u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
#define UNUSED_ARGS(...) (void)a0, (void)a1, (void)a2, (void)a3, (void)a4, (void)a5

/* The registers of the system call this CPU handles (rt_sigreturn, clone). */
#define syscall_regs (this_cpu()->sys_regs)

/* A handler's answer for "interrupted by a signal: restart the call if the
 * handler has SA_RESTART, else EINTR" (sys/table.c acts on it). */
#define ERESTARTSYS 512
#define WAIT_FOREVER UINT64_MAX

struct timespec64 { int64_t sec, nsec; };
static inline struct timespec64 ns_timespec(uint64_t ns)
{
    return (struct timespec64){(int64_t)(ns / 1000000000ULL), (int64_t)(ns % 1000000000ULL)};
}
/* A program's timespec in ns (past WAIT_FOREVER / 2: that), or -EINVAL. */
long timespec_ns(struct timespec64 ts, uint64_t *ns);

/* sys/io.c */
SYSCALL(read); SYSCALL(write); SYSCALL(readv); SYSCALL(writev); SYSCALL(ioctl);
SYSCALL(preadv); SYSCALL(pwritev); SYSCALL(preadv2); SYSCALL(pwritev2);
SYSCALL(close); SYSCALL(dup); SYSCALL(dup2); SYSCALL(dup3); SYSCALL(fcntl); SYSCALL(close_range);
/* A copy of descriptor old at the lowest free one from min. */
long dup_lowest(uint64_t old, uint64_t min, bool cloexec);
struct fd;
void console_write(const struct fd *f, const void *buf, uint64_t len);
/* sys/console_in.c: fd 0 forwarded by qemu/run-node */
bool console_in_forwarded(void);
long console_in_wait(uint64_t deadline);          /* 0 ready, -ETIMEDOUT, -EINTR */
long console_in_read(uint64_t buf, uint64_t len); /* buf already checked */
/* sys/poll.c */
SYSCALL(poll); SYSCALL(ppoll); SYSCALL(select); SYSCALL(pselect6);
/* sys/evobj.c */
SYSCALL(pipe); SYSCALL(pipe2); SYSCALL(eventfd); SYSCALL(eventfd2); SYSCALL(epoll_create);
SYSCALL(epoll_create1); SYSCALL(epoll_ctl); SYSCALL(epoll_wait); SYSCALL(epoll_pwait);
SYSCALL(epoll_pwait2); SYSCALL(timerfd_create); SYSCALL(timerfd_settime);
SYSCALL(timerfd_gettime);
/* sys/sendfile.c */
SYSCALL(sendfile);
/* sys/file.c */
SYSCALL(pread64); SYSCALL(pwrite64); SYSCALL(lseek); SYSCALL(fstat); SYSCALL(newfstatat);
SYSCALL(stat); SYSCALL(lstat); SYSCALL(statx); SYSCALL(open); SYSCALL(openat); SYSCALL(creat);
SYSCALL(access); SYSCALL(faccessat); SYSCALL(faccessat2); SYSCALL(getcwd); SYSCALL(chdir);
SYSCALL(fchdir); SYSCALL(readlink); SYSCALL(readlinkat); SYSCALL(getdents64); SYSCALL(unlink);
SYSCALL(unlinkat); SYSCALL(rmdir); SYSCALL(mkdir); SYSCALL(mkdirat); SYSCALL(rename);
SYSCALL(renameat); SYSCALL(renameat2); SYSCALL(flock); SYSCALL(fallocate); SYSCALL(statfs);
SYSCALL(fstatfs); SYSCALL(truncate); SYSCALL(ftruncate); SYSCALL(fsync);
SYSCALL(fdatasync); SYSCALL(umask); SYSCALL(syncfs); SYSCALL(sync); SYSCALL(fadvise64);
SYSCALL(readahead);
long file_rw(struct fd *f, uint64_t buf, uint64_t len, int64_t off, bool writing);
/* file_rw for a kernel buffer (no user check): sendfile's bounce buffer. */
long file_xfer(struct fd *f, void *buf, uint64_t len, int64_t off, bool writing);
long file_setfl(struct fd *f, uint32_t flags);
/* fcntl's lock commands (F_GETLK ... F_OFD_SETLKW) on f; arg: the struct flock. */
long file_lock(struct fd *f, uint64_t cmd, uint64_t arg);
/* fsync (all) or fdatasync of f's file. */
long file_sync(struct fd *f, bool all);
/* sys/file_meta.c */
SYSCALL(chmod); SYSCALL(fchmod); SYSCALL(fchmodat); SYSCALL(fchmodat2); SYSCALL(chown);
SYSCALL(lchown); SYSCALL(fchown); SYSCALL(fchownat); SYSCALL(utimensat); SYSCALL(utimes);
SYSCALL(futimesat); SYSCALL(utime); SYSCALL(symlink); SYSCALL(symlinkat); SYSCALL(link);
SYSCALL(linkat);
/* sys/mem.c */
SYSCALL(brk); SYSCALL(mmap); SYSCALL(munmap); SYSCALL(mremap); SYSCALL(mprotect);
SYSCALL(madvise); SYSCALL(sysinfo); SYSCALL(msync); SYSCALL(mlock); SYSCALL(mlock2);
SYSCALL(mlockall); SYSCALL(mincore);
/* sys/time.c */
SYSCALL(clock_gettime); SYSCALL(clock_getres); SYSCALL(gettimeofday); SYSCALL(time);
SYSCALL(nanosleep); SYSCALL(clock_nanosleep); SYSCALL(times); SYSCALL(getrusage);
/* Clock clk's time now (clock_gettime's answer), or -EINVAL for a clock
 * the node does not have. */
long clock_now(uint64_t clk, uint64_t *ns);
/* sys/proc.c */
SYSCALL(getpid); SYSCALL(getppid); SYSCALL(getuid);
SYSCALL(getgid); SYSCALL(getresuid); SYSCALL(getresgid); SYSCALL(uname); SYSCALL(arch_prctl); SYSCALL(prlimit64); SYSCALL(getrlimit);
SYSCALL(setrlimit); SYSCALL(membarrier); SYSCALL(getrandom);
SYSCALL(success); SYSCALL(no_children);
/* sys/ident.c */
SYSCALL(getpgrp); SYSCALL(getpgid); SYSCALL(getsid); SYSCALL(setpgid); SYSCALL(setsid);
SYSCALL(getgroups); SYSCALL(prctl); SYSCALL(personality); SYSCALL(getpriority);
SYSCALL(setpriority);
/* sys/futex.c */
SYSCALL(futex); SYSCALL(set_robust_list); SYSCALL(get_robust_list);
void futex_reset(void);
/* Wakes up to n waiters on the word at uaddr (a thread's exit, thread.c). */
long futex_wake_word(uint64_t uaddr, int n);
/* sys/clone.c */
SYSCALL(clone); SYSCALL(clone3); SYSCALL(exit); SYSCALL(exit_group); SYSCALL(gettid);
SYSCALL(set_tid_address); SYSCALL(sched_yield); SYSCALL(sched_getaffinity);
SYSCALL(sched_setaffinity); SYSCALL(getcpu);
/* sys/sched.c */
SYSCALL(sched_getscheduler); SYSCALL(sched_setscheduler); SYSCALL(sched_getparam);
SYSCALL(sched_setparam); SYSCALL(sched_get_priority_max); SYSCALL(sched_get_priority_min);
SYSCALL(sched_rr_get_interval);
/* sys/itimer.c */
SYSCALL(getitimer); SYSCALL(setitimer); SYSCALL(alarm);
SYSCALL(timer_create); SYSCALL(timer_settime); SYSCALL(timer_gettime); SYSCALL(timer_getoverrun);
SYSCALL(timer_delete);
uint64_t itimer_next_ns(void);     /* when the first armed timer rings; 0: none */
/* A timer as timer_settime and timerfd_settime take it and give it back,
 * kept as a monotonic next expiry (0: disarmed) and a period. */
struct itimerspec64 { struct timespec64 interval, value; };
/* Arms from its: relative to now or (absolute) a time on clock clk;
 * 0 or -EINVAL (nothing changed then). */
long timer_arm(const struct itimerspec64 *its, bool absolute, uint64_t clk, uint64_t *next,
               uint64_t *interval);
/* What is left (a due one: 1 ns) and the period. */
struct itimerspec64 timer_left(uint64_t next, uint64_t interval);
/* Expiries due by now, periods missed included (0: none); next moves on in
 * the period's phase, or to 0 for a one-shot timer. */
uint64_t timer_due(uint64_t *next, uint64_t interval, uint64_t now);
void itimer_reset(void);
void itimer_poll(void);            /* runs the calling process's due timers (a wait, any core) */
/* sys/sigwait.c */
SYSCALL(pause); SYSCALL(rt_sigsuspend); SYSCALL(rt_sigpending); SYSCALL(rt_sigtimedwait);
/* Waits until the monotonic deadline (-ETIMEDOUT; WAIT_FOREVER: none) or a
 * signal that ends waits, or one of also, is pending (-EINTR).  A wait no
 * one could end (no deadline, no timer, and no job whose yod may signal
 * when job_may_signal) ends the program instead: what names the wait. */
long wait_until(uint64_t deadline, uint64_t also, bool job_may_signal, const char *what);
/* The same, ending with 0 as soon as *done is set (a futex wake from
 * another thread). */
long wait_until_done(uint64_t deadline, uint64_t also, bool job_may_signal, const char *what,
                     volatile bool *done);
/* A timespec at va as a deadline in ns: now + it, or it (absolute);
 * va 0: WAIT_FOREVER.  0, -EFAULT or -EINVAL. */
long timeout_from_user(uint64_t va, bool absolute, uint64_t now, uint64_t *deadline);
/* sys/absent.c: a call the kernel does not have */
long syscall_absent(uint64_t nr);
/* sys/signal.c */
SYSCALL(rt_sigaction); SYSCALL(rt_sigprocmask); SYSCALL(rt_sigreturn); SYSCALL(sigaltstack);
SYSCALL(kill); SYSCALL(tgkill); SYSCALL(tkill);

/* sys/portals.c: the Tern Portals call (ptl_syscall.h) */
SYSCALL(tern_portals);
/* sys/portals_spin.c: after each Portals call (op, its arguments, its
 * result): a program spinning on empty looks is made to halt; and the
 * watch forgotten (a job ends). */
void portals_spin_after(uint64_t op, const uint64_t *args, int rc);
void portals_spin_reset(void);

int syscall_dispatch(struct regs *r);
#endif
