/* Ranks per core: K copies of one program on one node, each a process of
 * its own (process.h: its own physically contiguous part of the application
 * region, its own page tables) on cores of its own, for the whole run.
 *
 * The region is cut in K parts of equal size (2 MiB multiples, so every
 * rank keeps 2 MiB pages); rank r gets part r.  The node's C cores are
 * shared out the same way: rank r has cores [r * C/K, (r + 1) * C/K), one
 * each when K = C.  A rank reaches no memory but its own part: its page
 * tables map nothing else, so an address past its own memory faults,
 * whatever lies there physically.  A rank's threads are threads of the
 * node's thread table (thread.c), tied to its process: a core that switches
 * to one loads its page tables.  The threads a rank makes (pthreads,
 * OpenMP) go to its other cores and, past them, share its last one, never
 * another rank's.  A rank's end (exit, a fault, a fatal signal) ends that
 * rank alone, its threads with it; the node's run ends with the last rank,
 * with the first failed rank's end as its own.
 *
 * Used by qemu/run-node (ranks=K: main.c) and by a job's node for yod -ppn
 * (kernel/job/loader.c, which reports each rank's end through the end
 * hook).  Each rank has its own interval timers, ringing on its first core
 * (sys/itimer.c), its own futexes (sys/futex.c keys them by process), and
 * its own descriptors and working directory (process.h).  What is still
 * the node's, not a rank's: the Portals library and NIC (each rank its own
 * interface: sys/portals.c) and the serial lock (one rank's system call at
 * a time but those that touch only the calling thread): docs/kernel.md,
 * "Ranks per core". */
#include "boot.h"
#include "kernel.h"
#include "mem.h"
#include "percpu.h"
#include "process.h"
#include "ranks.h"
#include "signal.h"
#include "smp.h"
#include "spinlock.h"
#include "thread.h"
#include "time.h"

static struct process *rank_proc[MAX_RANKS];
static unsigned nranks;                /* 0 or 1: one process, as always */
static spinlock_t end_lock = SPINLOCK_INIT;
static unsigned ranks_left;
static bool rank_ended[MAX_RANKS];
static bool all_ended, have_failure;
static enum end_kind node_kind;
static int node_code;
static uint64_t main_region_end;       /* the first process's region before the split */
static void (*end_hook)(unsigned rank, enum end_kind kind, int code);

bool ranks_active(void) { return nranks > 1; }

/* A job's ranks are numbered from its node's first (loader.c). */
static unsigned rank_base;
void ranks_set_base(unsigned base) { rank_base = base; }
unsigned ranks_number(const struct process *p) { return rank_base + p->index; }

void ranks_load(const uint8_t *image, uint64_t size, unsigned k, const char *name)
{
    unsigned cpus = smp_ncpus_found();
    if (k > MAX_RANKS)
        load_error("ranks=%u: at most %u ranks on a node", k, MAX_RANKS);
    if (k > cpus)
        load_error("ranks=%u: this node has %u CPU%s, and a rank needs a core of its own", k,
                   cpus, cpus == 1 ? "" : "s");
    /* At the top: the other ranks' process structs (45 KiB each: not in the
     * kernel image), outside every rank's region; below them the program's
     * file, at the top of the last rank's region (its stack goes there once
     * every rank is loaded).  The file may lie anywhere the loader put it,
     * the structs' place included: it is moved before they are written. */
    uint64_t sbytes = ALIGN_UP(sizeof(struct process), PAGE_SIZE);
    uint64_t copy = ALIGN_UP(size, PAGE_SIZE);
    uint64_t base = proc_main.region_pa, top = proc_main.region_end;
    uint64_t structs = top - (k - 1) * sbytes;
    uint64_t part = ALIGN_DOWN((structs - base) / k, HUGE_SIZE);
    if (structs < base + copy || part < MiB(4) || structs - copy < base + (k - 1) * part)
        load_error("%s: %lu KiB for applications do not make %u ranks of at least 4 MiB", name,
                   (top - base) >> 10, k);
    uint64_t file = structs - copy;
    memmove(phys_to_virt(file), image, size);
    mem_dirty_mark(file, copy);
    mem_dirty_mark(structs, top - structs);

    main_region_end = proc_main.region_end;
    proc_main.region_end = base + part;
    rank_proc[0] = &proc_main;
    /* Counted as they are made: a load that fails from here on (a job's
     * node goes on to the next job) is undone by ranks_reset. */
    nranks = ranks_left = 1;
    for (unsigned r = 1; r < k; r++) {
        struct process *p = phys_to_virt(structs + (r - 1) * sbytes);
        uint64_t end = r == k - 1 ? structs : base + (r + 1) * part;
        if (!process_create(p, r, base + r * part, end))
            load_error("ranks=%u: no kernel pages for rank %u's page tables", k, r);
        rank_proc[r] = p;
        nranks = ranks_left = r + 1;
    }
    /* Each rank's image through its own process (elf_load fills proc). */
    for (unsigned r = 0; r < k; r++) {
        process_activate(rank_proc[r]);
        proc.name = name;
        elf_load(phys_to_virt(file), size, file);
    }
    process_activate(&proc_main);
}

unsigned ranks_count(void) { return nranks > 1 ? nranks : 1; }
struct process *ranks_process(unsigned r) { return r < nranks ? rank_proc[r] : &proc_main; }

static uint64_t stub[MAX_RANKS];

void ranks_prepare(unsigned r, char **argv, int argc, char **envp, int envc)
{
    process_activate(rank_proc[r]);
    proc.pid = r + 1;
    process_prepare(argv, argc, envp, envc);
    stub[r] = process_place_start();
    process_activate(&proc_main);
}

void ranks_run(void)
{
    if (smp_ncpus() < nranks)
        load_error("ranks=%u: only %u CPUs started", nranks, smp_ncpus());
    process_activate(&proc_main);
    threads_start(proc_main.pid);
    /* The node's cores shared out: rank r has cores [r * per, (r + 1) * per),
     * its first thread on the first; the threads it makes go to the others
     * and, past them, share its last (thread.c).  What a division leaves
     * over stays idle: no rank gets more than another. */
    unsigned per = smp_ncpus() / nranks;
    for (unsigned r = 0; r < nranks; r++) {
        rank_proc[r]->cpu_first = r * per;
        rank_proc[r]->cpu_count = per;
    }
    for (unsigned r = 1; r < nranks; r++)
        if (thread_start_rank(rank_proc[r], r * per, stub[r], rank_proc[r]->stack_start) < 0)
            load_error("ranks=%u: no thread for rank %u", nranks, r);
    uint64_t part = proc_main.region_end - proc_main.region_pa;
    char cores[24] = "one per core";
    if (per > 1)
        snprintf(cores, sizeof cores, "%u cores each", per);
    kprintf("starting %s as %u ranks, %s: %lu KiB each, image %lu KiB, stack %lu KiB\n",
            proc.name, nranks, cores, part >> 10, (proc.image_end - proc.map_lo) >> 10,
            (proc.vend - proc.stack_lo) >> 10);
    process_start();
}

void ranks_start(char **argv, int argc, char **envp, int envc)
{
    static char rank_var[MAX_RANKS][24], size_var[24];
    static char *env[MAX_ARGS];
    snprintf(size_var, sizeof size_var, "TERN_SIZE=%u", nranks);
    if (envc > MAX_ARGS - 3)
        envc = MAX_ARGS - 3;
    for (int i = 0; i < envc; i++)
        env[2 + i] = envp[i];
    env[2 + envc] = NULL;
    env[1] = size_var;
    for (unsigned r = 0; r < nranks; r++) {
        snprintf(rank_var[r], sizeof rank_var[r], "TERN_RANK=%u", r);
        env[0] = rank_var[r];          /* copied onto the rank's stack at once */
        ranks_prepare(r, argv, argc, env, envc + 2);
    }
    ranks_run();
}

static void back_to_main(void *arg)
{
    (void)arg;
    process_activate(&proc_main);
}

void ranks_reset(void)
{
    if (nranks <= 1)
        return;
    /* No CPU may keep a rank's page tables in CR3 once they are freed:
     * their kernel half is what an idle core runs on. */
    smp_call_all(back_to_main, NULL);
    for (unsigned r = 1; r < nranks; r++) {
        process_destroy(rank_proc[r]);
        rank_proc[r] = NULL;
    }
    proc_main.region_end = main_region_end;
    nranks = 0;
    ranks_left = 0;
    rank_base = 0;
    all_ended = have_failure = false;
    memset(rank_ended, 0, sizeof rank_ended);
}

void ranks_signal_all(int sig)
{
    if (nranks <= 1) {
        signal_raise(sig);
        return;
    }
    /* signal_raise reaches the calling CPU's process and its threads: this
     * CPU stands in for each rank's for a moment (no user memory is
     * touched, so its page tables stay). */
    struct percpu *c = this_cpu();
    struct process *mine = c->process;
    for (unsigned r = 0; r < nranks; r++)
        if (!rank_ended[r]) {
            c->process = rank_proc[r];
            signal_raise(sig);
        }
    c->process = mine;
}

bool ranks_all_ended(void)
{
    return nranks > 1 && __atomic_load_n(&ranks_left, __ATOMIC_ACQUIRE) == 0;
}

void ranks_set_end_hook(void (*fn)(unsigned rank, enum end_kind kind, int code))
{
    end_hook = fn;
}

bool ranks_end_one(enum end_kind *kind, int *code)
{
    if (nranks <= 1)
        return true;
    uint64_t f = spin_lock_irqsave(&end_lock);
    unsigned r = proc.index;
    if (all_ended || rank_ended[r]) {
        /* The node's end, carried on CPU 0 (thread.c), or a rank's second
         * end (a fault while it ends): the node's end stands. */
        bool node = all_ended;
        spin_unlock_irqrestore(&end_lock, f);
        if (!node) {
            if (serial_held())
                serial_unlock();
            thread_leave();
        }
        *kind = node_kind;
        *code = node_code;
        return true;
    }
    rank_ended[r] = true;
    /* Its interval timers ring no more (their alarm is on its home core,
     * sys/itimer.c): their signal would be for a rank that is gone. */
    time_user_alarm(proc.cpu_first, NULL, 0);
    /* Its other threads end with it, each on its own core (a second end
     * of this rank: thread_leave above); the other ranks' run on. */
    threads_kill_others_in_process();
    /* Counted here once: ranks ending together (after a last barrier) each
     * see their own count, and only the last carries the node's end.  Read
     * again after the hook, two saw 0 and both ended the node. */
    unsigned left = --ranks_left;
    spin_unlock_irqrestore(&end_lock, f);
    if (end_hook)
        end_hook(r, *kind, *code);     /* a job's report of this rank's end (end.c) */
    f = spin_lock_irqsave(&end_lock);
    if (*kind == END_SIGNAL)
        kprintf("rank %u (CPU %u) killed by signal %d (%s); %u rank%s still running\n",
                rank_base + r, this_cpu()->index, *code, signal_name(*code), left,
                left == 1 ? "" : "s");
    else
        kprintf("rank %u (CPU %u) exited with status %d; %u rank%s still running\n",
                rank_base + r, this_cpu()->index, *code, left, left == 1 ? "" : "s");
    if (!have_failure && (*kind != END_EXIT || *code != 0)) {
        have_failure = true;
        node_kind = *kind;
        node_code = *code;
    }
    if (left) {
        spin_unlock_irqrestore(&end_lock, f);
        /* A fatal signal is delivered with the serial lock held: the other
         * ranks' next system calls would wait for it for ever. */
        if (serial_held())
            serial_unlock();
        thread_leave();                /* the others go on; never returns */
    }
    all_ended = true;
    if (!have_failure)
        node_kind = END_EXIT, node_code = 0;
    *kind = node_kind;
    *code = node_code;
    spin_unlock_irqrestore(&end_lock, f);
    return true;
}
