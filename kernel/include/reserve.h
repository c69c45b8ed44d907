/* Reserved address space (kernel/mem/reserve.c).  The program's real memory
 * is one linear window [proc.vbase, proc.vend) onto the physical region
 * (docs/kernel.md).  A PROT_NONE mapping instead reserves addresses outside
 * that window and takes no memory; when the program makes part of it
 * accessible (mprotect, or mmap MAP_FIXED over it), that part is committed:
 * real memory from the heap area, zeroed, physically contiguous where the
 * kernel can find it so, mapped at once.  Nothing is demand-paged: touching
 * a reserved page that was never made accessible faults. */
#ifndef TERN_RESERVE_H
#define TERN_RESERVE_H
#include <stdbool.h>
#include <stdint.h>
#include "kernel.h"
#include "mem.h"
#include "process.h"
#include "ranges.h"

/* Top of the addresses reservations are placed at when the program names
 * none (Linux's mmap area starts about here too). */
#define RESERVE_TOP 0x7F0000000000ULL

static inline struct range_list heap_list(void)
{
    return (struct range_list){proc.maps, &proc.nmaps, MAX_MAPPINGS};
}
/* Lowest address mmap may use in the heap area: above the current break. */
static inline uint64_t heap_low(void) { return ALIGN_UP(proc.brk, PAGE_SIZE); }

/* The application's memory: sysinfo's totalram, /proc/meminfo's MemTotal
 * (not all RAM: what the kernel keeps is not the program's to size by).
 * The calling CPU's process's region: with ranks per core, its part. */
static inline uint64_t app_memory_bytes(void) { return proc.region_end - proc.region_pa; }

/* What brk and mmap can still hand out: sysinfo's freeram, /proc/meminfo's
 * MemFree. */
static inline uint64_t heap_free_bytes(void)
{
    uint64_t area = proc.heap_end - heap_low(), used = ranges_bytes(heap_list());
    return area > used ? area - used : 0;
}

/* [s, e) touches the linear window. */
static inline bool in_window(uint64_t s, uint64_t e) { return s < proc.vend && proc.vbase < e; }

enum reserve_mode {
    RESERVE_HINT,          /* hint: taken if free, else the kernel chooses */
    RESERVE_FIXED,         /* MAP_FIXED: there, replacing what was */
    RESERVE_NOREPLACE,     /* MAP_FIXED_NOREPLACE: there, or -EEXIST */
};
/* mmap outside the window (len page-rounded); access: commit it all now.
 * The address, or -errno. */
long reserve_map(uint64_t hint, uint64_t len, bool access, enum reserve_mode mode);
/* munmap: [s, e) stops being reserved; its memory goes back. */
long reserve_unmap(uint64_t s, uint64_t e);
/* mprotect: 0, or -ENOMEM when [s, e) is not all reserved.  access commits
 * what is not yet. */
long reserve_protect(uint64_t s, uint64_t e, bool access);
/* madvise(MADV_DONTNEED) zeroes what is committed in [s, e). */
long reserve_advise(uint64_t s, uint64_t e, bool dontneed);
bool reserve_covers(uint64_t s, uint64_t e);
bool reserve_has(uint64_t addr);
/* All of [s, e) committed (user_ok's slow path); within one physically
 * contiguous piece (what a NIC may reach). */
bool reserve_accessible(uint64_t s, uint64_t e);
bool reserve_contiguous(uint64_t s, uint64_t e);
/* Physical address of committed va, or 0. */
uint64_t reserve_phys(uint64_t va);
/* The reserved address of physical pa, where a committed piece holds it;
 * 0 if none does (a rank's Portals event pointing into a piece). */
uint64_t reserve_va_of_phys(uint64_t pa);
#endif
