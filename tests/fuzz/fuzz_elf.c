/* libFuzzer harness: the compute-node kernel's ELF loader (kernel/elf.c,
 * built for the host unchanged; see kernel_host.h).  The input is the
 * program file.  It is loaded the three ways a node loads one:
 *   - from outside the application region (limit 0);
 *   - from the start of the region, where a boot loader may put the module
 *     (the file must be moved out of the program's way first);
 *   - staged at the top of the region below the stack, as
 *     kernel/job/loader.c does for a job (limit = where the file lies).
 * The region is a heap block of its exact size, so AddressSanitizer
 * catches any byte written or read outside it.  A file the loader accepts
 * must have given a layout that holds together (checked below); one it
 * refuses must be refused through load_error, never a fault. */
#include <elf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "kernel.h"
#include "mem.h"
#include "process.h"

#define REGION_PA (16ull << 20)
#define REGION_LEN (4ull << 20)
#define STACK_LEN (64ull << 10)

uint64_t fuzz_phys_base;
struct process proc;
struct app_region app_region;
static uint8_t *region;
static jmp_buf refused;
static char why[256];

void load_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    longjmp(refused, 1);
}

/* The loader marks what it wrote for the end-of-job clear (kernel/mem/dirty.c):
 * a mark outside the application region would clear kernel memory. */
void mem_dirty_mark(uint64_t pa, uint64_t len)
{
    if (len && (pa < app_region.start || pa + len > app_region.end || pa + len < pa))
        __builtin_trap();
}

static void fuzz_setup(void)
{
    region = malloc(REGION_LEN);
    if (!region)
        abort();
    fuzz_phys_base = (uint64_t)(uintptr_t)region - REGION_PA;
    app_region.start = REGION_PA;
    app_region.end = REGION_PA + REGION_LEN;
    app_region.total_ram = REGION_LEN;
}

/* What the rest of the kernel relies on after a successful load. */
static void check_layout(uint64_t size, uint64_t limit_pa)
{
    uint64_t len = app_region.end - app_region.start;
    if (!(proc.vbase % HUGE_SIZE == 0 && proc.vend == proc.vbase + len &&
          proc.vbase <= proc.map_lo && proc.map_lo < proc.image_end &&
          proc.image_end <= proc.vend && proc.map_lo >= USER_MIN_ADDR &&
          proc.entry >= proc.map_lo && proc.entry < proc.image_end &&
          proc.image_end - proc.vbase + ALIGN_UP(size, PAGE_SIZE) <= len &&
          (!limit_pa || app_region.start + (proc.image_end - proc.vbase) <= limit_pa))) {
        fprintf(stderr, "accepted with a bad layout: vbase %#lx map_lo %#lx image_end %#lx "
                "vend %#lx entry %#lx\n", proc.vbase, proc.map_lo, proc.image_end, proc.vend,
                proc.entry);
        abort();
    }
}

static void load(const uint8_t *image, uint64_t size, uint64_t limit_pa)
{
    memset(&proc, 0, sizeof proc);
    proc.name = "prog";
    if (setjmp(refused))
        return;
    elf_load(image, size, limit_pa);
    check_layout(size, limit_pa);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* 1: from elsewhere; a private copy so reads past the file are caught */
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        abort();
    memcpy(copy, data, size);
    load(copy, size, 0);
    free(copy);
    if (size > REGION_LEN - STACK_LEN - 2 * PAGE_SIZE)
        return 0;
    /* 2: where a boot loader put the module, at the region's start */
    memcpy(region, data, size);
    load(region, size, 0);
    /* 3: staged below the stack, as a job's file is */
    uint64_t stage_pa = app_region.end - STACK_LEN - PAGE_SIZE - ALIGN_UP(size, PAGE_SIZE);
    uint8_t *staged = phys_to_virt(stage_pa);
    memcpy(staged, data, size);
    load(staged, size, stage_pa);
    return 0;
}

/* ---- seeds: small programs of each kind the loader takes or refuses ---- */

struct seed_elf {
    Elf64_Ehdr eh;
    Elf64_Phdr ph[3];
    uint8_t text[64];
};

static void fuzz_write_seeds(const char *dir)
{
    struct seed_elf e;
    memset(&e, 0, sizeof e);
    memcpy(e.eh.e_ident, ELFMAG "\2\1\1", 7);
    e.eh.e_type = ET_EXEC;
    e.eh.e_machine = EM_X86_64;
    e.eh.e_version = EV_CURRENT;
    e.eh.e_phoff = offsetof(struct seed_elf, ph);
    e.eh.e_ehsize = sizeof e.eh;
    e.eh.e_phentsize = sizeof e.ph[0];
    e.eh.e_phnum = 2;
    e.ph[0] = (Elf64_Phdr){PT_PHDR, PF_R, e.eh.e_phoff, 0x400000 + e.eh.e_phoff, 0,
                           3 * sizeof e.ph[0], 3 * sizeof e.ph[0], 8};
    e.ph[1] = (Elf64_Phdr){PT_LOAD, PF_R | PF_X, 0, 0x400000, 0, sizeof e, sizeof e + 8192,
                           4096};
    e.eh.e_entry = 0x400000 + offsetof(struct seed_elf, text);
    fuzz_seed(dir, "exec", &e, sizeof e);
    /* static PIE: ET_DYN with PT_DYNAMIC, based at 0 */
    struct seed_elf p = e;
    p.eh.e_type = ET_DYN;
    p.eh.e_phnum = 3;
    p.ph[0].p_vaddr -= 0x400000;
    p.ph[1].p_vaddr = 0;
    p.ph[2] = (Elf64_Phdr){PT_DYNAMIC, PF_R | PF_W, 0, 0, 0, 0, 0, 8};
    p.eh.e_entry -= 0x400000;
    fuzz_seed(dir, "pie", &p, sizeof p);
    /* two ascending segments, text then data with bss */
    struct seed_elf t = e;
    t.eh.e_phnum = 3;
    t.ph[1].p_filesz = t.ph[1].p_memsz = 0x100;
    t.ph[2] = (Elf64_Phdr){PT_LOAD, PF_R | PF_W, 0x100, 0x401100, 0, sizeof e - 0x100, 0x3000,
                           4096};
    fuzz_seed(dir, "two-segments", &t, sizeof t);
    struct seed_elf d = e;
    d.ph[0].p_type = PT_INTERP;    /* dynamically linked */
    fuzz_seed(dir, "interp", &d, sizeof d);
}
