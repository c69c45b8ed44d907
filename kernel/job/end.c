/* How a job ends on a node, whatever the end (exit, fault, signal from yod,
 * load failure, yod gone): yod gets one report after all the program's
 * output, then the node forgets everything about the job - the program's
 * Portals NIs, its page tables, every byte of its memory - and waits for the
 * next job on a fresh kernel stack.  The node stays registered. */
#include "boot.h"
#include "file_map.h"
#include "files.h"
#include "job.h"
#include "kmalloc.h"
#include "mem.h"
#include "process.h"
#include "ptl_kernel.h"
#include "ptl_lib.h"
#include "ranks.h"
#include "syscall.h"
#include "thread.h"
#include "time.h"
#include <tern/yod_proto.h>

extern char boot_stack_top[];

void job_fault_report(const char *text, uint64_t len)
{
    if (!job.running)
        return;
    /* The fault is this rank's end, whatever yod says now; with ranks per
     * core only this rank's (ranks.c), and the job goes on for the others. */
    bool lock = ranks_active() && !serial_held();
    if (!ranks_active())
        job.ending = true;
    else if (lock)
        serial_lock();            /* the other ranks run on: stdio is the serial lock's */
    job_output(2, text, len);
    uint64_t n = 0;
    while (n < len && n + 1 < sizeof proc.fault_line && text[n] != '\n')
        n++;
    memcpy(proc.fault_line, text, n);
    proc.fault_line[n] = 0;
    if (lock)
        serial_unlock();
}

/* Rank `rank` of the job (job.rank + local) ended: yod is told once, after
 * all its output. */
static void report_end(unsigned local, enum end_kind kind, int code, const char *why)
{
    struct process *p = ranks_process(local);
    if (p->end_reported)
        return;
    p->end_reported = true;
    uint32_t rank = job.rank + local;
    static struct yod_report r;
    memset(&r, 0, sizeof r);
    r.magic = YOD_MAGIC;
    r.job = job.id;
    r.rank = rank;
    if (job.running || job.go) {
        r.type = YOD_EXITED;
        r.status = kind == END_EXIT ? code : 0;
        r.signal = kind == END_SIGNAL ? code : 0;
        r.usec = job.running ? (time_monotonic_ns() - job.start_ns) / 1000 : 0;
        if (kind == END_SIGNAL && code == job.yod_signal)
            r.arg = YOD_ENDED_BY_YOD;
        strlcpy(r.message, why ? why : p->fault_line, sizeof r.message);
        kprintf("job %u: rank %u %s %d after %lu ms\n", job.id, rank,
                r.signal ? "killed by signal" : "exited with status",
                r.signal ? r.signal : r.status, r.usec / 1000);
    } else {
        r.type = YOD_LOAD_FAILED;
        strlcpy(r.message, why ? why : "load failed", sizeof r.message);
    }
    /* Silent ends: yod said ABORT (it knows), or yod is gone. */
    bool tell = !job.yod_gone && (job.running || job.go || why);
    /* Again while yod is alive (stopped by ^Z, or its queue full). */
    while (tell) {
        job_wait_yod_awake();
        if (knode_put(&r, sizeof r, job.yod_nid, job.yod_pid, YOD_PT_REPORT, job.id,
                      time_monotonic_ns() + 20 * 1000000000ULL) == PTL_NI_OK)
            break;
        if (job_yod_silent()) {
            kprintf("job %u: yod did not take the end report\n", job.id);
            break;
        }
        knode_pause(200000000ULL);
    }
}

/* ranks.c's hook: one of a node's ranks ended by itself (its exit, fault or
 * fatal signal), on its own core; the others go on. */
void job_rank_ended(unsigned local, enum end_kind kind, int code)
{
    bool held = serial_held();
    if (!held)
        serial_lock();             /* the job's state and the kernel's NI */
    /* The last rank: the node's end is decided now, before yod hears of it
     * (and may free the node), not when job_end begins on the core that
     * carries it, which a busy host can delay.  From here a new job's
     * descriptor waits for the clean-up instead of being refused as busy,
     * and yod's messages no longer end the job (control.c), as after a
     * fault without ranks (job_fault_report). */
    bool last = ranks_all_ended();
    if (last)
        job.ending = true;
    if (job.running)
        file_map_flush_all();      /* before yod hears of the end (job_program_end) */
    report_end(local, kind, code, NULL);
    if (!held)
        serial_unlock();
    /* end_hold (testing): the moment between the last rank's report, after
     * which yod frees the nodes, and the node's clean-up held open, serving
     * the network meanwhile, as a busy host's scheduler can hold it. */
    if (options.end_hold_ms && last) {
        kprintf("job %u: end held for %u ms (end_hold)\n", job.id, options.end_hold_ms);
        time_sleep_until(time_monotonic_ns() + options.end_hold_ms * 1000000ULL);
    }
}

/* The x87/SSE state of a freshly reset CPU, as fxrstor reads it: control
 * word 0x37F, MXCSR 0x1F80 (all exceptions masked), registers zero, every
 * x87 register empty. */
static const uint8_t clean_fpu[512] __attribute__((aligned(16))) = {
    [0] = 0x7F, [1] = 0x03, [24] = 0x80, [25] = 0x1F};

static void clear_vector_registers(void)
{
    /* The next user's program must not see this one's data.  fxrstor
     * resets x87, MXCSR and XMM0-15 in one instruction, one that the
     * instruction emulator of a hypervisor emulating kernel mode has
     * (kvm_pvm's lacks ldmxcsr: the VM stopped at the end of every job).
     * The AVX and AVX-512 registers are cleared in user mode, before the
     * next program's first instruction (arch/user_start.S): that emulator
     * has no VEX instructions either. */
    __asm__ volatile("fxrstor64 %0" ::"m"(clean_fpu));
}

/* Only what the job may have written is cleared (mem/dirty.c): a job that
 * touched a few MiB of a 256 MiB node costs a few MiB of zeroing, not the
 * whole region, and the next job still sees nothing of this one. */
static uint64_t reset_node(void)
{
    job_tick_stop();
    job_unserve_image();
    ptl_lib_iface_reset(0);
    for (unsigned i = TERN_KERNEL_IFACE + 1; i < TERN_PTL_IFACES; i++)
        ptl_lib_iface_reset(i);        /* ranks per core: ranks 1.. */
    ptl_kernel_loop_discard();
    portals_syscall_reset();
    job_stdio_reset();
    files_reset();
    itimer_reset();                   /* no alarm of this program rings in the next */
    futex_reset();
    threads_reset();
    job_control_reset();
    /* A wait the job's end left for good (the end came from inside it, or
     * stopped the core it ran on) would keep counting as a waiter, and the
     * next job's control messages would never be taken in (knode.c). */
    knode_waiting = 0;
    /* In slices, answering the network in between: on a busy host zeroing
     * a large region takes long enough for the allocator to think a silent
     * node has died. */
    ranks_reset();                    /* the ranks' page tables go: their dirty bits too */
    ranks_set_end_hook(NULL);
    user_unmap_all();                 /* hands the page tables' dirty bits over */
    uint64_t cleared = mem_dirty_clear(MEM_CLEAR_SLICE, knode_answer, false);
    process_clear(&proc);
    job_loader_reset();               /* after proc: its name lived there */
    clear_vector_registers();
    memset(&job, 0, sizeof job);
    job_detach();
    return cleared;
}

struct end_args {
    enum end_kind kind;
    int code;
    const char *why;
};

static void end_rest(void *arg)
{
    const struct end_args *a = arg;
    job_end(a->kind, a->code, a->why);
}

void job_program_end(enum end_kind kind, int code, const char *why)
{
    /* On CPU 0, the program's other threads stopped (node.c).  Not when yod
     * ends the job (control.c calls job_end): a job killed from outside
     * loses what it had not written back, as on a node that fails. */
    if (job.running && (kind == END_EXIT || kind == END_SIGNAL))
        file_map_flush_all();
    job_end(kind, code, why);
}

void job_end(enum end_kind kind, int code, const char *why)
{
    static bool ending;
    struct end_args a = {kind, code, why};
    threads_end_begin(end_rest, &a);   /* on CPU 0, the program's other threads stopped */
    if (!ending) {
        ending = true;
        job.ending = true;
        job_state_publish(0);     /* a new job's descriptor now waits for the clean-up */
        job_state_ending(job.id);
        job_tick_stop();
        /* The servers close the rank's files (the allocator's view and the
         * next job from this node make fyod close them too, if this fails). */
        if (job.running)
            files_job_end();
        /* Every rank of the node that has not ended by itself (ranks per
         * core: those that have were reported then, ranks.c). */
        for (unsigned i = 0; i < ranks_count(); i++)
            report_end(i, kind, code, why);
    }
    uint64_t t0 = time_monotonic_ns();
    uint32_t id = job.id;
    uint64_t cleared = reset_node();
    job_state_ending(0);
    struct kmem_stats km;
    kmem_get_stats(&km);
    kprintf("job %u: ended; node cleaned in %lu ms (%lu KiB cleared) and free (kernel heap %lu "
            "of %lu KiB in use)\n", id, (time_monotonic_ns() - t0) / 1000000, cleared >> 10,
            km.used >> 10, km.size >> 10);
    ending = false;
    __asm__ volatile("cli; mov %0, %%rsp; xor %%ebp, %%ebp; call job_loop; ud2"
                     :: "r"(boot_stack_top) : "memory");
    __builtin_unreachable();
}
