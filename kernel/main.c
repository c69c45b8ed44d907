/* Boot sequence of a compute node: from the multiboot hand-off to the
 * application's first instruction. */
#include "boot.h"
#include "cpu.h"
#include "fd.h"
#include "hostlink.h"
#include "kmalloc.h"
#include "kernel.h"
#include "mem.h"
#include "msgtrace.h"
#include "netdev.h"
#include "percpu.h"
#include "process.h"
#include "ptl_kernel.h"
#include "job.h"
#include "random.h"
#include "ranks.h"
#include "serial.h"
#include "smp.h"
#include "thread.h"
#include "time.h"

static char module_words[CMDLINE_MAX];
static char *argv[MAX_ARGS];

/* A program started from the boot module (qemu/run-node): frames that
 * arrive while it computes are handled at once (the NIC's interrupt), so a
 * get or atomic aimed at it is answered without its calling Portals. */
static void program_rx(struct regs *r)
{
    (void)r;
    bool locked = threads_many();     /* the library's other callers hold it */
    if (locked && !serial_trylock())
        return;
    knode_answer();
    if (locked)
        serial_unlock();
}

void kmain(uint32_t magic, uint64_t info_phys)
{
    percpu_init_boot();
    serial_init(COM1);
    bootinfo_read(magic, info_phys);   /* copy it all before touching memory */
    options_parse();
    if (options.hostlink)
        hostlink_init();
    cpu_init();
    physmem_init();
    paging_init();
    time_init();
    random_init();
    /* Before the banner: the kernel heap (for Portals, when there is a NIC)
     * comes off the application's region. */
    netdev_init(options.mtu);
    smp_init();                         /* the CPUs first: the heap is sized by them */
    /* Ranks 1 and up have interfaces of their own, up to the library's. */
    unsigned cpus = smp_ncpus_found();
    kmem_init(netdev_present(), cpus - 1 < TERN_PTL_IFACES - 2 ? cpus - 1 : TERN_PTL_IFACES - 2);
    msgtrace_reserve(options.msgtrace_cpus);
    threads_init();
    ptl_kernel_init();
    process_init_main();               /* what the kernel left of the region */

    uint64_t region = app_region.end - app_region.start;
    kprintf("Tern kernel: %lu MiB RAM, kernel image %lu KiB, %lu KiB for the application "
            "(%lu.%lu%%), TSC %lu MHz, %s%s, %u CPU%s\n",
            app_region.total_ram >> 20, kernel_image_bytes >> 10, region >> 10,
            region * 100 / app_region.total_ram, region * 1000 / app_region.total_ram % 10,
            time_tsc_hz() / 1000000, cpu.vendor, cpu.avx ? ", AVX" : "", smp_ncpus_found(),
            smp_ncpus_found() == 1 ? "" : "s");

    uint64_t cal_tries, cal_ppm;
    time_calibration(&cal_tries, &cal_ppm);
    if (cal_ppm * 512 > 1000000)
        kprintf("time: TSC frequency uncertain: best of %lu PIT windows known to %lu ppm\n",
                cal_tries, cal_ppm);

    if (options.nettest_echo)
        nettest_echo();
    if (options.nettest_ping)
        nettest_ping();
    if (options.nettest_barrier)
        nettest_barrier();
    if (bootinfo.nmods == 0 && netdev_present()) {
        smp_start();
        node_wait_for_work();
    }
    if (bootinfo.nmods == 0)
        load_error("no program: give the executable as a multiboot module");
    struct boot_module *m = &bootinfo.mod[0];
    strlcpy(module_words, m->cmdline, sizeof module_words);
    int argc = split_words(module_words, argv, MAX_ARGS - 1);
    argv[argc] = NULL;
    proc.name = argc ? argv[0] : "program";

    if (options.ranks > 1)
        ranks_load(phys_to_virt(m->start), m->end - m->start, options.ranks, proc.name);
    else
        elf_load(phys_to_virt(m->start), m->end - m->start, 0);
    smp_start();                        /* the module's memory is free now */
    if (options.smptest)
        smp_selftest();
    fd_init();
    if (options.ranks > 1) {
        time_mark_app_start();
        netdev_user_rx(program_rx);
        ranks_start(argv, argc, options.envp, options.envc);
    }
    process_setup(argv, argc, options.envp, options.envc);
    kprintf("starting %s: %lu KiB image, heap %lu KiB, stack %lu KiB\n", proc.name,
            (proc.image_end - proc.map_lo) >> 10, (proc.heap_end - proc.brk_start) >> 10,
            (proc.vend - proc.stack_lo) >> 10);
    time_mark_app_start();
    netdev_user_rx(program_rx);
    process_start();
}
