/* Physical memory: the kernel's pages and the application's one contiguous
 * region, and the page tables that map them. */
#ifndef TERN_MEM_H
#define TERN_MEM_H
#include <stdbool.h>
#include <stdint.h>

#define PAGE_SIZE 4096ULL
#define HUGE_SIZE (2ULL << 20)

struct app_region {
    uint64_t start, end;           /* physical, start 2 MiB aligned */
    uint64_t total_ram;            /* all usable RAM the loader reported */
};
extern struct app_region app_region;
extern uint64_t kernel_image_bytes;   /* text + data + bss */

void physmem_init(void);
/* A zeroed 4 KiB page for the kernel's own use (page tables, later device
 * rings); panics when none is left.  Returns its direct-map address. */
void *kpage_alloc(void);
void kpage_free(void *page);      /* back to the pool (page tables of an ended job) */
uint64_t kpages_free(void);
/* Shrinks the application region by up to `bytes` (page-rounded) from its
 * top and returns the physical start of what was taken, or 0 if the region
 * cannot spare it.  Only before the program is loaded. */
uint64_t physmem_take_top(uint64_t bytes);

void paging_init(void);
/* Maps user virtual [va, va+len) to physical [pa, pa+len): 2 MiB pages where
 * both are aligned, 4 KiB pages elsewhere. */
void user_map(uint64_t va, uint64_t pa, uint64_t len);
/* Removes the user mappings of [va, va+len) (page aligned); a 2 MiB page
 * partly inside is split into 4 KiB pages first.  Tables stay. */
void user_unmap(uint64_t va, uint64_t len);
/* Whether other CPUs run the program too (thread.c): changes are then
 * flushed from every CPU's TLB. */
void paging_set_shared(bool on);
/* Removes every user mapping and frees the tables (a job has ended). */
void user_unmap_all(void);
/* The same for the user half of a given PML4 (a process's, process.h):
 * map, unmap all, and the physical address va reaches there (0: none). */
void pml4_map(uint64_t *pml4, uint64_t va, uint64_t pa, uint64_t len);
void pml4_unmap_all(uint64_t *pml4);
uint64_t pml4_lookup(uint64_t *pml4, uint64_t va);

/* What a job may have written (dirty.c): the region is cleared for the next
 * job only where it was.  The page tables report what went through them
 * (their dirty bits, when a mapping goes); whoever writes the region through
 * the direct map marks it.  mem_dirty_clear zeroes every marked part, in
 * pieces of about `slice` bytes with between() called after each; returns
 * the bytes written.  look_first (RAM of unknown content, at boot): only the
 * pages that do not already read zero are written. */
#define MEM_CLEAR_SLICE (4ULL << 20)   /* zeroed between looks at the network */
void mem_dirty_mark(uint64_t pa, uint64_t len);
uint64_t mem_dirty_clear(uint64_t slice, void (*between)(void), bool look_first);
#endif
