/* Which parts of the application region a job may have written, so that the
 * node clears only those before the next job (mem.h).
 *
 * The region is mapped writable as a whole, so what the program allocated
 * (brk, mmap, stack high-water marks) does not bound what it wrote: a
 * hostile program writes wherever its mappings reach.  The CPU does know:
 * it sets the dirty bit of every page-table entry it writes through (user
 * mode or the kernel on the program's behalf, e.g. Portals delivering into
 * a receive buffer).  paging.c reports each leaf's dirty bit here whenever
 * a user mapping goes (munmap, a split 2 MiB page, the job's end), and the
 * kernel marks what it writes through the direct map itself (the program's
 * file while it arrives, the loaded image).  Nothing else writes the
 * region: device receive buffers are the kernel's own pages.
 *
 * One bit per 2 MiB of the region (the size of the pages that map it); a
 * marked stretch is zeroed whole. */
#include "kernel.h"
#include "mem.h"

#define CHUNK HUGE_SIZE
#define MAX_CHUNKS 2048                  /* 4 GiB: the direct map's reach */

static uint64_t marks[MAX_CHUNKS / 64];

void mem_dirty_mark(uint64_t pa, uint64_t len)
{
    if (!len || pa >= app_region.end || pa + len <= app_region.start)
        return;
    uint64_t lo = pa < app_region.start ? app_region.start : pa;
    uint64_t hi = pa + len > app_region.end ? app_region.end : pa + len;
    for (uint64_t c = (lo - app_region.start) / CHUNK;
         c <= (hi - 1 - app_region.start) / CHUNK && c < MAX_CHUNKS; c++)
        marks[c / 64] |= 1ULL << (c % 64);
}

static bool marked(uint64_t c) { return marks[c / 64] >> (c % 64) & 1; }

/* Whether the 4 KiB page at p reads all zero. */
static bool page_reads_zero(const uint64_t *p)
{
    for (int i = 0; i < 512; i++)
        if (p[i])
            return false;
    return true;
}

/* Zeroes [lo, hi), or, looking first, only its pages that are not zero
 * already (the region's ends are page-aligned: physmem.c); returns the
 * bytes written. */
static uint64_t zero_range(uint64_t lo, uint64_t hi, bool look_first)
{
    if (!look_first) {
        memset(phys_to_virt(lo), 0, hi - lo);
        return hi - lo;
    }
    uint64_t written = 0;
    for (uint64_t pa = lo; pa < hi; pa += PAGE_SIZE) {
        uint64_t *p = phys_to_virt(pa);
        if (!page_reads_zero(p)) {
            memset(p, 0, PAGE_SIZE);
            written += PAGE_SIZE;
        }
    }
    return written;
}

uint64_t mem_dirty_clear(uint64_t slice, void (*between)(void), bool look_first)
{
    uint64_t nchunks = (app_region.end - app_region.start + CHUNK - 1) / CHUNK, cleared = 0;
    if (nchunks > MAX_CHUNKS)
        nchunks = MAX_CHUNKS;
    for (uint64_t c = 0; c < nchunks;) {
        if (!marked(c)) {
            c++;
            continue;
        }
        uint64_t e = c + 1;
        while (e < nchunks && marked(e) && (e + 1 - c) * CHUNK <= slice)
            e++;
        uint64_t lo = app_region.start + c * CHUNK, hi = app_region.start + e * CHUNK;
        if (hi > app_region.end)
            hi = app_region.end;
        cleared += zero_range(lo, hi, look_first);
        for (; c < e; c++)
            marks[c / 64] &= ~(1ULL << (c % 64));
        if (between)
            between();
    }
    return cleared;
}
