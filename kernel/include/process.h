/* An application process on this node: its memory layout and kernel-side
 * state.  A node runs one process (the job's rank) unless it runs several
 * ranks, one per core (docs/kernel.md, "Processes"); `proc` is always the
 * process of the CPU that reads it. */
#ifndef TERN_PROCESS_H
#define TERN_PROCESS_H
#include <stdbool.h>
#include <stdint.h>
#include "fd.h"
#include "file_map.h"
#include "percpu.h"
#include "ranges.h"
#include "signal.h"

#define USER_PIE_BASE 0x400000ULL   /* where static-PIE programs are placed */
#define USER_MIN_ADDR 0x10000ULL    /* below this stays unmapped (NULL faults) */
#define USER_TOP 0x7FFFFFFFF000ULL  /* end of the user half (Linux's TASK_SIZE) */
#define MAX_MAPPINGS 1024
#define MAX_RESERVED 256
#define MAX_PIECES 1024
#define PROCESS_POSIX_TIMERS 32

/* Committed memory in reserved address space (kernel/mem/reserve.c):
 * [va, end) is mapped to physical [pa, pa + end - va). */
struct piece { uint64_t va, end, pa; };

struct process {
    /* Where it lives: its own physically contiguous region [region_pa,
     * region_end) and its own page tables (the kernel half shared with every
     * other process, the user half its own).  Kept when a job's process is
     * cleared (process_clear): they belong to the slot, not the program. */
    uint64_t region_pa, region_end;
    uint64_t *pml4;                /* its kernel address */
    unsigned index;                /* 0: the node's first (or only) process */
    /* Its cores, [cpu_first, cpu_first + cpu_count): the node's all, or a
     * rank's share (ranks.c).  Its threads go there (thread.c), the first
     * is its home: its first thread's and its interval timers' core. */
    unsigned cpu_first, cpu_count;
    /* Its threads are being ended (a rank's end: thread.c): it makes no
     * more, or one made as the others were told would run on. */
    bool threads_ending;

    /* Virtual layout.  [vbase, vend) maps linearly onto the physical region;
     * [map_lo, guard) and [stack_lo, vend) are mapped, the guard page is not. */
    uint64_t vbase, vend, map_lo;
    uint64_t image_end;            /* end of text/data/bss */
    uint64_t brk_start, brk;       /* heap grows up from brk_start ... */
    uint64_t mmap_floor;           /* ... and mmap carves down from heap_end */
    uint64_t heap_end, guard, stack_lo;
    struct mapping maps[MAX_MAPPINGS]; /* mmap'd ranges, sorted by start */
    int nmaps;
    /* Address space reserved outside [vbase, vend) (PROT_NONE mappings),
     * and the parts of it made accessible, each backed by real memory
     * taken from the heap area (listed in maps there). */
    struct mapping reserved[MAX_RESERVED];
    int nreserved;
    struct piece pieces[MAX_PIECES];
    int npieces;
    /* Physical bounds of every piece committed so far (never shrunk): an
     * event's buffer outside them is in no piece (reserve_va_of_phys). */
    uint64_t pieces_pa_lo, pieces_pa_hi;
    /* Its MAP_SHARED mappings of forwarded files (sys/file_map.c). */
    struct file_map fmaps[FILE_MAPS];
    int nfmaps;

    uint64_t entry, phdr_va, phnum;
    uint64_t fs_base;
    uint64_t stack_start;          /* initial RSP */
    /* Where its argument and environment strings lie on its stack
     * (/proc/self/cmdline and environ). */
    uint64_t arg_start, arg_end, env_start, env_end;
    /* Its POSIX timers (timer_create; sys/itimer.c): id = index. */
    struct posix_timer {
        bool used, pending;            /* pending: its signal not yet taken */
        uint8_t notify;                /* SIGEV_NONE, SIGEV_SIGNAL, SIGEV_THREAD_ID */
        uint8_t sig;
        uint8_t clock;                 /* its clock id: TIMER_ABSTIME's times */
        uint32_t tid;                  /* SIGEV_THREAD_ID: the thread told */
        uint64_t value;                /* sigev_value, given back in siginfo */
        uint64_t next_ns, interval_ns; /* monotonic; next 0: disarmed */
        int32_t overrun, last_overrun; /* expiries while pending; as last taken */
    } ptimers[PROCESS_POSIX_TIMERS];
    uint64_t robust_list;          /* set_robust_list */
    uint32_t pid;
    const char *name;              /* argv[0], for messages */
    char comm[16];                 /* prctl(PR_SET_NAME) */
    uint32_t personality;
    int nice;
    uint8_t sched_policy;          /* sched_setscheduler's SCHED_OTHER, BATCH or IDLE (sys/sched.c) */
    uint32_t membarrier_registered;
    struct signal_state sig;
    /* Its descriptors (sys/io.c) and, in a job, its working directory
     * (job/files.c): with ranks per core each rank has its own, as
     * processes do. */
    struct fd fds[MAX_FDS];
    char cwd[4096];                /* FILES_PATH_MAX */
    /* A job's view of this process (kernel/job/): bytes of stdout [1] and
     * stderr [2] yod has taken, the first line of its fault report, and
     * whether yod has been told how it ended. */
    uint64_t out_bytes[3];
    char fault_line[200];
    bool end_reported;
};
/* The first process: the only one unless a node runs several ranks.  Every
 * CPU starts with it as its process, so a program's threads on other cores
 * are in it too. */
extern struct process proc_main;
/* The calling CPU's process.  A macro over the per-CPU pointer, so that the
 * code written for one process per node reads the right one on every core. */
#ifdef TERN_KERNEL_ON_HOST
/* The kernel's ELF loader built for the host (tests/fuzz/kernel_host.h):
 * one process, no per-CPU area. */
#define proc proc_main
#else
#define proc (*this_cpu()->process)
#endif

/* elf.c: validates and copies the program into the region; fills proc.
 * limit_pa: physical address the program must end below (where its file
 * lies while a job loads), or 0. */
void elf_load(const uint8_t *image, uint64_t size, uint64_t limit_pa);
/* process.c */
void process_setup(char **argv, int argc, char **envp, int envc);
/* process_setup without the pid and the thread table: memory, stack, names
 * and handlers of proc (a rank's, ranks.c). */
void process_prepare(char **argv, int argc, char **envp, int envc);
__attribute__((noreturn)) void process_start(void);
/* The kernel's (direct-map) address of user address va in the calling
 * CPU's process, in *kva, and how many bytes from there (at most len) are
 * physically contiguous: what the Portals library may be given, as it
 * reaches buffers later from any core, under any process's page tables. */
uint64_t user_run_kva(uint64_t va, uint64_t len, void **kva);
/* Copies user_start into the stack's top page; its address (process_start's
 * first user instruction). */
uint64_t process_place_start(void);
uint64_t user_va_to_phys(uint64_t va);

/* The first process gets what is left of the application region once the
 * kernel has taken its part (after threads_init), and the boot page tables. */
void process_init_main(void);
/* A further process in p (zeroed here): its region [pa, end) and new page
 * tables whose kernel half is the kernel's.  False when no page is left for
 * its tables. */
bool process_create(struct process *p, unsigned index, uint64_t pa, uint64_t end);
/* Unmaps everything p mapped and frees its tables (not proc_main's). */
void process_destroy(struct process *p);
/* The calling CPU runs p from now on: its page tables in CR3. */
void process_activate(struct process *p);
/* A job's program is gone: everything but the region and page tables. */
void process_clear(struct process *p);
#endif
