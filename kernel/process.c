/* Setting up the application: memory split, page tables, the initial stack
 * (SysV x86-64 ABI: argc, argv, envp, auxv), and the jump to user mode. */
#include "boot.h"
#include "cpu.h"
#include "kernel.h"
#include "mem.h"
#include "process.h"
#include "random.h"
#include "reserve.h"
#include "thread.h"
#include "x86.h"

struct process proc_main;
extern uint64_t boot_pml4[512];

#define AT_NULL 0
#define AT_PHDR 3
#define AT_PHENT 4
#define AT_PHNUM 5
#define AT_PAGESZ 6
#define AT_BASE 7
#define AT_FLAGS 8
#define AT_ENTRY 9
#define AT_UID 11
#define AT_EUID 12
#define AT_GID 13
#define AT_EGID 14
#define AT_PLATFORM 15
#define AT_HWCAP 16
#define AT_CLKTCK 17
#define AT_SECURE 23
#define AT_RANDOM 25
#define AT_HWCAP2 26
#define AT_EXECFN 31
#define AT_MINSIGSTKSZ 51

uint64_t user_va_to_phys(uint64_t va)
{
    if (va < proc.vbase || va >= proc.vend)
        return reserve_phys(va);     /* committed reserved memory */
    return proc.region_pa + (va - proc.vbase);
}

uint64_t user_run_kva(uint64_t va, uint64_t len, void **kva)
{
    uint64_t pa = user_va_to_phys(va);
    *kva = phys_to_virt(pa);
    if (va >= proc.vbase && va < proc.vend)      /* the region maps linearly */
        return len < proc.vend - va ? len : proc.vend - va;
    uint64_t run = PAGE_SIZE - (va & (PAGE_SIZE - 1));
    while (run < len && user_va_to_phys(va + run) == pa + run)
        run += PAGE_SIZE;
    return run < len ? run : len;
}

void process_init_main(void)
{
    proc_main.region_pa = app_region.start;
    proc_main.region_end = app_region.end;
    proc_main.pml4 = boot_pml4;
    proc_main.index = 0;
}

bool process_create(struct process *p, unsigned index, uint64_t pa, uint64_t end)
{
    memset(p, 0, sizeof *p);
    if (kpages_free() < 1)
        return false;
    p->pml4 = kpage_alloc();
    /* The kernel half (slots 256-511: the direct map and the kernel image)
     * is the same tables as every other process's: fixed at boot, so a
     * copy of the entries never goes stale. */
    memcpy(&p->pml4[256], &boot_pml4[256], 256 * sizeof(uint64_t));
    p->region_pa = pa;
    p->region_end = end;
    p->index = index;
    return true;
}

void process_destroy(struct process *p)
{
    if (p == &proc_main || !p->pml4)
        return;
    pml4_unmap_all(p->pml4);
    kpage_free(p->pml4);
    p->pml4 = NULL;
}

void process_activate(struct process *p)
{
    struct percpu *c = this_cpu();
    c->process = p;
    /* boot_pml4 is in the kernel image, the others in the direct map. */
    uint64_t va = (uint64_t)p->pml4;
    uint64_t cr3 = va >= KERNEL_VMA ? kernel_virt_to_phys(p->pml4) : va - PHYS_BASE;
    if ((read_cr3() & ~0xFFFULL) != cr3)
        write_cr3(cr3);
}

void process_clear(struct process *p)
{
    /* Field by field: the struct (45 KiB) does not fit on a kernel stack. */
    uint64_t pa = p->region_pa, end = p->region_end, *pml4 = p->pml4;
    unsigned index = p->index;
    memset(p, 0, sizeof *p);
    p->region_pa = pa;
    p->region_end = end;
    p->pml4 = pml4;
    p->index = index;
}

/* Lays out heap and stack above the loaded image and maps it all. */
static void memory_setup(void)
{
    uint64_t stack = options.stack_size;
    if (stack < PAGE_SIZE * 4)
        stack = PAGE_SIZE * 4;
    proc.stack_lo = proc.vend - stack;
    proc.guard = proc.stack_lo - PAGE_SIZE;
    proc.brk_start = proc.brk = proc.image_end;
    if (proc.guard < proc.image_end + PAGE_SIZE)
        load_error("%s: program (%lu KiB) and stack (%lu KiB) do not fit in %lu KiB", proc.name,
                   (proc.image_end - proc.vbase) >> 10, stack >> 10,
                   (proc.vend - proc.vbase) >> 10);
    proc.heap_end = proc.guard;
    if (options.heap_size) {
        if (options.heap_size > proc.guard - proc.image_end)
            load_error("%s: heap=%lu KiB does not fit: %lu KiB left after program and stack",
                       proc.name, options.heap_size >> 10, (proc.guard - proc.image_end) >> 10);
        proc.heap_end = proc.image_end + options.heap_size;
    }
    proc.mmap_floor = proc.heap_end;
    user_map(proc.map_lo, user_va_to_phys(proc.map_lo), proc.guard - proc.map_lo);
    user_map(proc.stack_lo, user_va_to_phys(proc.stack_lo), proc.vend - proc.stack_lo);
}

static uint64_t push_bytes(uint64_t sp, const void *data, uint64_t len)
{
    sp -= len;
    memcpy((void *)sp, data, len);
    return sp;
}

void process_setup(char **argv, int argc, char **envp, int envc)
{
    proc.pid = 1;
    process_prepare(argv, argc, envp, envc);
    threads_start(proc.pid);
}

void process_prepare(char **argv, int argc, char **envp, int envc)
{
    memory_setup();
    /* The command name Linux shows (prctl PR_GET_NAME): the file's base
     * name, 15 bytes at most. */
    const char *base = proc.name ? proc.name : "";
    for (const char *c = base; *c; c++)
        if (*c == '/' && c[1])
            base = c + 1;
    strlcpy(proc.comm, base, sizeof proc.comm);
    for (int s = 1; s <= NSIG; s++)
        proc.sig.act[s].handler = SIG_DFL;

    uint64_t strings = 0;
    for (int i = 0; i < argc; i++)
        strings += strlen(argv[i]) + 1 + 8;
    for (int i = 0; i < envc; i++)
        strings += strlen(envp[i]) + 1 + 8;
    if (strings > (proc.vend - proc.stack_lo) / 2)
        load_error("%s: arguments and environment (%lu bytes) take more than half the stack",
                   proc.name, strings);

    /* The stack's top page is user_start's alone (process_start). */
    uint64_t sp = proc.vend - PAGE_SIZE;
    uint64_t platform = sp = push_bytes(sp, "x86_64", 7);
    uint8_t rnd[16];
    random_bytes(rnd, sizeof rnd);
    uint64_t random = sp = push_bytes(sp, rnd, sizeof rnd);
    static uint64_t argv_va[MAX_ARGS], envp_va[MAX_ARGS];
    /* The strings lie end to end: /proc/self/cmdline and environ read them. */
    proc.env_end = sp;
    for (int i = envc - 1; i >= 0; i--)
        envp_va[i] = sp = push_bytes(sp, envp[i], strlen(envp[i]) + 1);
    proc.env_start = proc.arg_end = sp;
    for (int i = argc - 1; i >= 0; i--)
        argv_va[i] = sp = push_bytes(sp, argv[i], strlen(argv[i]) + 1);
    proc.arg_start = sp;
    uint64_t execfn = argc ? argv_va[0] : 0;

    uint64_t auxv[] = {
        AT_PHDR, proc.phdr_va, AT_PHENT, 56, AT_PHNUM, proc.phnum,
        AT_PAGESZ, PAGE_SIZE, AT_BASE, 0, AT_FLAGS, 0, AT_ENTRY, proc.entry,
        AT_UID, options.uid, AT_EUID, options.uid, AT_GID, options.gid, AT_EGID, options.gid,
        AT_PLATFORM, platform, AT_HWCAP, cpu.hwcap, AT_HWCAP2, 0, AT_CLKTCK, 100,
        AT_SECURE, 0, AT_RANDOM, random, AT_EXECFN, execfn,
        AT_MINSIGSTKSZ, cpu.xsave_size + 1024, AT_NULL, 0,
    };
    uint64_t words = 1 + (uint64_t)argc + 1 + (uint64_t)envc + 1 + ARRAY_SIZE(auxv);
    sp = ALIGN_DOWN(sp - words * 8, 16);
    uint64_t *w = (uint64_t *)sp;
    *w++ = (uint64_t)argc;
    for (int i = 0; i < argc; i++)
        *w++ = argv_va[i];
    *w++ = 0;
    for (int i = 0; i < envc; i++)
        *w++ = envp_va[i];
    *w++ = 0;
    memcpy(w, auxv, sizeof auxv);
    proc.stack_start = sp;
}

/* The program starts through user_start (arch/user_start.S), copied into
 * the stack's top page, above the initial stack.  A page of its own: under
 * QEMU's TCG, code on a page makes every store to that page take the slow
 * self-modifying-code path, and the stack page below the initial pointer
 * is where main's frames live (a 2-node MPI ping-pong took 1.44x NX's time
 * with the stub there, 1.02x with it here, both under TCG). */
uint64_t process_place_start(void)
{
    extern const uint8_t user_start[], user_start_entry[], user_start_end[];
    uint64_t len = (uint64_t)(user_start_end - user_start);
    uint64_t stub = proc.vend - PAGE_SIZE;
    memcpy((void *)stub, user_start, len);
    memcpy((void *)(stub + (uint64_t)(user_start_entry - user_start)), &proc.entry, 8);
    return stub;
}

void process_start(void)
{
    extern char boot_stack_top[];
    uint64_t stub = process_place_start();
    cpu_set_kernel_stack((uint64_t)boot_stack_top);
    enter_user(stub, proc.stack_start);
}
