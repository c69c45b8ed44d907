/* Loading a static x86-64 ELF executable (ET_EXEC or static-PIE) into the
 * application region.  Everything about the file is checked before a byte is
 * copied: a bad file gets a load error naming the problem, never a fault. */
#include "kernel.h"
#include "mem.h"
#include "process.h"

#define PT_LOAD 1
#define PT_DYNAMIC 2
#define PT_INTERP 3
#define PT_PHDR 6
#define ET_EXEC 2
#define ET_DYN 3
#define EM_X86_64 62

struct elf64_ehdr {
    unsigned char ident[16];
    uint16_t type, machine;
    uint32_t version;
    uint64_t entry, phoff, shoff;
    uint32_t flags;
    uint16_t ehsize, phentsize, phnum, shentsize, shnum, shstrndx;
};

struct elf64_phdr {
    uint32_t type, flags;
    uint64_t offset, vaddr, paddr, filesz, memsz, align;
};

/* The file header: a static x86-64 executable with sane program headers. */
static void check_header(const struct elf64_ehdr *eh, uint64_t size, const char *name)
{
    if (memcmp(eh->ident, "\177ELF", 4))
        load_error("%s: not an ELF file", name);
    if (eh->ident[4] != 2)
        load_error("%s: a 32-bit ELF; Tern runs x86-64 (64-bit) programs", name);
    if (eh->ident[5] != 1 || eh->machine != EM_X86_64)
        load_error("%s: not an x86-64 program (machine %u)", name, eh->machine);
    if (eh->type != ET_EXEC && eh->type != ET_DYN)
        load_error("%s: not an executable (ELF type %u)", name, eh->type);
    /* The headers are read in place: misaligned ones (no linker makes them)
     * would be misaligned accesses. */
    if (eh->phentsize != sizeof(struct elf64_phdr) || eh->phnum == 0 || eh->phnum > 64 ||
        eh->phoff % _Alignof(struct elf64_phdr) || eh->phoff > size ||
        size - eh->phoff < (uint64_t)eh->phnum * sizeof(struct elf64_phdr))
        load_error("%s: truncated or corrupt program headers", name);
}

/* What the segments span, before relocation. */
struct extent {
    uint64_t lo, hi, phdr_vaddr;
};

/* Checks every program header; the span of the PT_LOAD segments. */
static struct extent scan_segments(const struct elf64_ehdr *eh, const struct elf64_phdr *ph,
                                   uint64_t size, const char *name)
{
    struct extent x = {UINT64_MAX, 0, 0};
    bool dynamic = false;
    for (int i = 0; i < eh->phnum; i++) {
        const struct elf64_phdr *p = &ph[i];
        if (p->type == PT_INTERP)
            load_error("%s: dynamically linked; Tern needs a static program (link with -static)",
                       name);
        if (p->type == PT_DYNAMIC)
            dynamic = true;
        if (p->type == PT_PHDR)
            x.phdr_vaddr = p->vaddr;
        if (p->type != PT_LOAD || p->memsz == 0)
            continue;
        if (p->filesz > p->memsz || p->offset > size || size - p->offset < p->filesz)
            load_error("%s: truncated ELF (segment %d needs bytes %lu..%lu of a %lu-byte file)",
                       name, i, p->offset, p->offset + p->filesz, size);
        if (p->vaddr + p->memsz < p->vaddr || p->vaddr + p->memsz > GiB(256))
            load_error("%s: segment %d at 0x%lx is outside the user address range", name, i,
                       p->vaddr);
        if (x.hi && p->vaddr < x.hi)
            load_error("%s: segment %d at 0x%lx overlaps or precedes the one before it "
                       "(PT_LOAD segments must ascend)", name, i, p->vaddr);
        if (p->vaddr < x.lo)
            x.lo = p->vaddr;
        if (p->vaddr + p->memsz > x.hi)
            x.hi = p->vaddr + p->memsz;
        if (!x.phdr_vaddr && eh->phoff >= p->offset && eh->phoff < p->offset + p->filesz)
            x.phdr_vaddr = p->vaddr + (eh->phoff - p->offset);
    }
    if (x.hi == 0)
        load_error("%s: no loadable segments", name);
    if (eh->type == ET_DYN && !dynamic)
        load_error("%s: a shared object, not a program", name);
    return x;
}

/* Where the program goes (proc's layout fields), checked against the
 * region and, with limit_pa, against the file still lying above it; the
 * relocation of a static PIE. */
static uint64_t place(const struct elf64_ehdr *eh, struct extent x, uint64_t size,
                      uint64_t limit_pa, const char *name)
{
    uint64_t bias = eh->type == ET_DYN ? USER_PIE_BASE - ALIGN_DOWN(x.lo, HUGE_SIZE) : 0;
    uint64_t lo = x.lo + bias, hi = x.hi + bias;
    if (lo < USER_MIN_ADDR)
        load_error("%s: program maps address 0x%lx; Tern keeps the first 64 KiB unmapped", name,
                   lo);
    uint64_t entry = eh->entry + bias;
    if (entry < lo || entry >= hi)
        load_error("%s: entry point 0x%lx is outside the program", name, entry);

    proc.vbase = ALIGN_DOWN(lo, HUGE_SIZE);
    proc.map_lo = ALIGN_DOWN(lo, PAGE_SIZE);
    proc.image_end = ALIGN_UP(hi, PAGE_SIZE);
    proc.vend = proc.vbase + (proc.region_end - proc.region_pa);
    proc.entry = entry;
    proc.phdr_va = x.phdr_vaddr ? x.phdr_vaddr + bias : 0;
    proc.phnum = eh->phnum;

    uint64_t img_pa_end = proc.region_pa + (proc.image_end - proc.vbase);
    if (limit_pa && img_pa_end > limit_pa)
        load_error("%s: program (%lu KiB) and its file (%lu KiB) do not fit together in the "
                   "%lu KiB this node has for applications", name,
                   (img_pa_end - proc.region_pa) >> 10, size >> 10,
                   (proc.region_end - proc.region_pa) >> 10);
    uint64_t copy_bytes = ALIGN_UP(size, PAGE_SIZE);
    if (img_pa_end + copy_bytes > proc.region_end)
        load_error("%s: program needs %lu KiB; this node has %lu KiB for applications", name,
                   (img_pa_end - proc.region_pa + copy_bytes) >> 10,
                   (proc.region_end - proc.region_pa) >> 10);
    return bias;
}

/* Each byte is written once: file bytes copied, everything else in the
 * image (gaps between segments, bss) zeroed. */
static void copy_segments(const struct elf64_ehdr *eh, const struct elf64_phdr *ph,
                          const uint8_t *image, uint64_t bias)
{
    uint8_t *base = phys_to_virt(proc.region_pa) - proc.vbase;
    uint64_t cursor = proc.map_lo;
    mem_dirty_mark(proc.region_pa + (proc.map_lo - proc.vbase), proc.image_end - proc.map_lo);
    for (int i = 0; i < eh->phnum; i++) {
        const struct elf64_phdr *p = &ph[i];
        if (p->type != PT_LOAD || p->memsz == 0)
            continue;
        uint64_t start = p->vaddr + bias;
        memset(base + cursor, 0, start - cursor);
        memcpy(base + start, image + p->offset, p->filesz);
        memset(base + start + p->filesz, 0, p->memsz - p->filesz);
        cursor = start + p->memsz;
    }
    memset(base + cursor, 0, proc.image_end - cursor);
}

void elf_load(const uint8_t *image, uint64_t size, uint64_t limit_pa)
{
    const char *name = proc.name;
    if (size < sizeof(struct elf64_ehdr))
        load_error("%s: not an ELF file (only %lu bytes)", name, size);
    struct elf64_ehdr ehdr;     /* a copy: the file itself may be moved below */
    memcpy(&ehdr, image, sizeof ehdr);
    const struct elf64_ehdr *eh = &ehdr;
    check_header(eh, size, name);
    const struct elf64_phdr *ph = (const void *)(image + eh->phoff);
    struct extent x = scan_segments(eh, ph, size, name);
    uint64_t bias = place(eh, x, size, limit_pa, name);

    /* The boot loader may have put the file where the program goes: move it
     * to the top of the region first (the stack and heap reclaim it later). */
    uint64_t img_pa_end = proc.region_pa + (proc.image_end - proc.vbase);
    uint64_t copy_bytes = ALIGN_UP(size, PAGE_SIZE);
    uint64_t file_pa = (uint64_t)image - PHYS_BASE;
    if (file_pa < img_pa_end && file_pa + size > proc.region_pa) {
        uint64_t dst = proc.region_end - copy_bytes;
        mem_dirty_mark(dst, copy_bytes);
        memmove(phys_to_virt(dst), image, size);
        image = phys_to_virt(dst);
        ph = (const void *)(image + eh->phoff);
    }
    copy_segments(eh, ph, image, bias);
}
