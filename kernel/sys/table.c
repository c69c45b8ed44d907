/* The system-call table and dispatcher. */
#include "kernel.h"
#include "signal.h"
#include "syscall.h"
#include "thread.h"
#include "uaccess.h"

typedef long (*syscall_fn)(u64, u64, u64, u64, u64, u64);

static const syscall_fn table[] = {
    [0] = sys_read, [1] = sys_write, [2] = sys_open, [3] = sys_close, [4] = sys_stat,
    [5] = sys_fstat, [6] = sys_lstat, [7] = sys_poll, [8] = sys_lseek,
    [9] = sys_mmap, [10] = sys_mprotect, [11] = sys_munmap, [12] = sys_brk,
    [13] = sys_rt_sigaction, [14] = sys_rt_sigprocmask, [15] = sys_rt_sigreturn,
    [16] = sys_ioctl, [17] = sys_pread64, [18] = sys_pwrite64, [19] = sys_readv,
    [20] = sys_writev, [21] = sys_access, [23] = sys_select, [24] = sys_sched_yield,
    [25] = sys_mremap, [26] = sys_msync, [28] = sys_madvise, [74] = sys_fsync,
    [75] = sys_fdatasync, [76] = sys_truncate,
    [77] = sys_ftruncate, [80] = sys_chdir, [81] = sys_fchdir, [82] = sys_rename,
    [83] = sys_mkdir, [84] = sys_rmdir, [85] = sys_creat, [86] = sys_link,
    [87] = sys_unlink, [88] = sys_symlink, [95] = sys_umask, [217] = sys_getdents64,
    [258] = sys_mkdirat, [263] = sys_unlinkat, [264] = sys_renameat,
    [265] = sys_linkat, [266] = sys_symlinkat, [316] = sys_renameat2,
    [90] = sys_chmod, [91] = sys_fchmod, [92] = sys_chown, [93] = sys_fchown, [94] = sys_lchown,
    [132] = sys_utime, [235] = sys_utimes, [260] = sys_fchownat, [261] = sys_futimesat,
    [268] = sys_fchmodat, [280] = sys_utimensat, [452] = sys_fchmodat2,
    [295] = sys_preadv, [296] = sys_pwritev, [327] = sys_preadv2, [328] = sys_pwritev2,
    [162] = sys_sync, [306] = sys_syncfs,
    [27] = sys_mincore, [118] = sys_getresuid, [120] = sys_getresgid,
    [142] = sys_sched_setparam, [143] = sys_sched_getparam, [144] = sys_sched_setscheduler,
    [145] = sys_sched_getscheduler, [146] = sys_sched_get_priority_max,
    [147] = sys_sched_get_priority_min, [148] = sys_sched_rr_get_interval,
    [187] = sys_readahead, [221] = sys_fadvise64, [436] = sys_close_range,
    [22] = sys_pipe, [293] = sys_pipe2, [284] = sys_eventfd, [290] = sys_eventfd2,
    [213] = sys_epoll_create, [291] = sys_epoll_create1, [233] = sys_epoll_ctl,
    [232] = sys_epoll_wait, [281] = sys_epoll_pwait, [441] = sys_epoll_pwait2,
    [283] = sys_timerfd_create, [286] = sys_timerfd_settime, [287] = sys_timerfd_gettime,
    [332] = sys_statx, [32] = sys_dup, [33] = sys_dup2, [34] = sys_pause, [35] = sys_nanosleep,
    [36] = sys_getitimer, [37] = sys_alarm, [38] = sys_setitimer, [39] = sys_getpid,
    [40] = sys_sendfile, [60] = sys_exit, [61] = sys_no_children /* wait4 */, [62] = sys_kill,
    [63] = sys_uname, [72] = sys_fcntl, [73] = sys_flock, [137] = sys_statfs,
    [138] = sys_fstatfs, [285] = sys_fallocate,
    [79] = sys_getcwd, [89] = sys_readlink, [267] = sys_readlinkat, [96] = sys_gettimeofday,
    [97] = sys_getrlimit, [98] = sys_getrusage,
    [99] = sys_sysinfo, [100] = sys_times, [102] = sys_getuid, [104] = sys_getgid,
    [107] = sys_getuid /* geteuid */, [108] = sys_getgid /* getegid */, [109] = sys_setpgid,
    [110] = sys_getppid, [111] = sys_getpgrp, [112] = sys_setsid, [115] = sys_getgroups,
    [121] = sys_getpgid, [124] = sys_getsid, [127] = sys_rt_sigpending,
    [128] = sys_rt_sigtimedwait, [130] = sys_rt_sigsuspend,
    [131] = sys_sigaltstack, [135] = sys_personality, [140] = sys_getpriority,
    [141] = sys_setpriority, [149] = sys_mlock, [150] = sys_mlock /* munlock */,
    [151] = sys_mlockall, [152] = sys_success /* munlockall */, [157] = sys_prctl,
    [158] = sys_arch_prctl, [160] = sys_setrlimit,
    [186] = sys_gettid, [200] = sys_tkill, [201] = sys_time, [202] = sys_futex,
    [203] = sys_sched_setaffinity, [204] = sys_sched_getaffinity, [218] = sys_set_tid_address,
    [222] = sys_timer_create, [223] = sys_timer_settime, [224] = sys_timer_gettime,
    [225] = sys_timer_getoverrun, [226] = sys_timer_delete,
    [228] = sys_clock_gettime,
    [229] = sys_clock_getres, [230] = sys_clock_nanosleep, [231] = sys_exit_group,
    [234] = sys_tgkill, [247] = sys_no_children /* waitid */, [257] = sys_openat,
    [262] = sys_newfstatat, [269] = sys_faccessat, [270] = sys_pselect6, [271] = sys_ppoll,
    [273] = sys_set_robust_list, [274] = sys_get_robust_list, [292] = sys_dup3,
    [302] = sys_prlimit64, [309] = sys_getcpu, [318] = sys_getrandom, [324] = sys_membarrier,
    [325] = sys_mlock2, [439] = sys_faccessat2, [56] = sys_clone, [435] = sys_clone3,
    [1024] = sys_tern_portals /* Tern-specific, ptl_syscall.h */,
};

/* Calls that touch only the calling thread's state or state with its own
 * lock (futex queue, thread table): threads make them at once.  Every
 * other call of a program with several threads holds the serial lock
 * (thread.h) while it runs: they touch the process's files, memory map,
 * signal state and the job, which one thread at a time changes. */
static bool thread_safe(uint64_t nr)
{
    switch (nr) {
    case 24:  /* sched_yield */ case 35:  /* nanosleep */ case 39:  /* getpid */
    case 56:  /* clone */ case 60:  /* exit */ case 96:  /* gettimeofday */
    case 158: /* arch_prctl */ case 186: /* gettid */ case 201: /* time */
    case 202: /* futex */ case 203: /* sched_setaffinity */ case 204: /* sched_getaffinity */
    case 218: /* set_tid_address */ case 228: /* clock_gettime */ case 229: /* clock_getres */
    case 230: /* clock_nanosleep */ case 231: /* exit_group */ case 273: /* set_robust_list */
    case 274: /* get_robust_list */ case 309: /* getcpu */ case 324: /* membarrier */
    case 435: /* clone3 */
        return true;
    default:
        return false;
    }
}

int syscall_dispatch(struct regs *r)
{
    thread_stray_check(r);
    syscall_regs = r;
    uint64_t nr = r->rax;
    bool serial = threads_many() && !thread_safe(nr);
    if (serial)
        serial_lock();
    long ret;
    if (nr < ARRAY_SIZE(table) && table[nr])
        ret = table[nr](r->rdi, r->rsi, r->rdx, r->r10, r->r8, r->r9);
    else
        ret = syscall_absent(nr);
    syscall_regs = r;                /* a wait may have run another thread here */
    if (ret == -ERESTARTSYS) {
        /* Interrupted by a signal: run again after the handler if it asked
         * for that (SA_RESTART), else the call fails with EINTR. */
        if (signal_restarts()) {
            r->rip -= 2;                      /* back onto the `syscall` */
            ret = (long)nr;
        } else {
            ret = -EINTR;
        }
    }
    if (!serial && threads_many() && signal_any_pending()) {
        serial_lock();               /* signal state is the serial lock's */
        serial = true;
    }
    int full = 0;
    if (nr == 15 && ret == 0)
        full = 1 | signal_deliver(r);  /* rt_sigreturn set every register */
    else {
        r->rax = (uint64_t)ret;
        full = signal_deliver(r);
    }
    if (serial)
        serial_unlock();
    thread_move_if_asked();          /* another thread's sched_setaffinity for this one */
    return full;
}
