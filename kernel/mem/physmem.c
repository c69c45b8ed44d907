/* Choosing the application's region and a small pool of kernel pages.
 *
 * The application gets the largest usable RAM range, starting at the first
 * 2 MiB boundary after the kernel image so it can be mapped with 2 MiB pages.
 * The kernel's own pages come from what is left: conventional memory below
 * 1 MiB and the slack between the kernel image and that boundary. */
#include "boot.h"
#include "kernel.h"
#include "mem.h"
#include "spinlock.h"

struct app_region app_region;
uint64_t kernel_image_bytes;

extern char _kernel_start[], _kernel_end[];

static struct mem_range pool[8];
static int npool;
static uint64_t pool_free_pages;

static bool overlaps_module(uint64_t pa)
{
    for (int i = 0; i < bootinfo.nmods; i++)
        if (pa + PAGE_SIZE > bootinfo.mod[i].start && pa < bootinfo.mod[i].end)
            return true;
    return false;
}

static void pool_add(uint64_t start, uint64_t end)
{
    start = ALIGN_UP(start, PAGE_SIZE);
    end = ALIGN_DOWN(end, PAGE_SIZE);
    if (end <= start || npool == (int)ARRAY_SIZE(pool))
        return;
    pool[npool++] = (struct mem_range){start, end};
    /* Pages under a boot module are skipped when reached: not counted, so
     * kpages_free() is what kpage_alloc can really give (callers that
     * must not panic check it first). */
    for (uint64_t pa = start; pa < end; pa += PAGE_SIZE)
        pool_free_pages += !overlaps_module(pa);
}

void physmem_init(void)
{
    uint64_t kstart = kernel_virt_to_phys(_kernel_start), kend = kernel_virt_to_phys(_kernel_end);
    kernel_image_bytes = kend - kstart;

    struct mem_range best = {0, 0};
    for (int i = 0; i < bootinfo.nram; i++) {
        struct mem_range r = bootinfo.ram[i];
        app_region.total_ram += r.end - r.start;
        /* The boot direct map covers 4 GiB; RAM above it is not used yet. */
        if (r.end > GiB(4))
            r.end = GiB(4);
        if (r.end <= kend)
            continue;
        uint64_t s = ALIGN_UP(r.start > kend ? r.start : kend, HUGE_SIZE);
        uint64_t e = ALIGN_DOWN(r.end, PAGE_SIZE);
        if (e > s && e - s > best.end - best.start)
            best = (struct mem_range){s, e};
    }
    if (best.end - best.start < MiB(2))
        panic("no usable memory for an application (%lu KiB of RAM reported)",
              app_region.total_ram >> 10);
    app_region.start = best.start;
    app_region.end = best.end;

    for (int i = 0; i < bootinfo.nram; i++) {
        struct mem_range r = bootinfo.ram[i];
        if (r.end <= MiB(1)) {
            pool_add(r.start < PAGE_SIZE ? PAGE_SIZE : r.start, r.end);
        } else if (r.start <= kend && r.end > kend) {
            uint64_t e = r.end < app_region.start ? r.end : app_region.start;
            pool_add(kend, e);
        }
    }
}

/* Pages given back, reused first: a singly linked list through the pages. */
static void *freed;
static spinlock_t pool_lock = SPINLOCK_INIT;

void kpage_free(void *page)
{
    uint64_t f = spin_lock_irqsave(&pool_lock);
    *(void **)page = freed;
    freed = page;
    pool_free_pages++;
    spin_unlock_irqrestore(&pool_lock, f);
}

static void *take_page(void)
{
    if (freed) {
        void *p = freed;
        freed = *(void **)p;
        pool_free_pages--;
        return p;
    }
    for (int i = 0; i < npool; i++) {
        while (pool[i].start < pool[i].end) {
            uint64_t pa = pool[i].start;
            pool[i].start += PAGE_SIZE;
            if (overlaps_module(pa))
                continue;      /* never reused (not counted): modules are small and few */
            pool_free_pages--;
            return phys_to_virt(pa);
        }
    }
    return NULL;
}

void *kpage_alloc(void)
{
    uint64_t f = spin_lock_irqsave(&pool_lock);
    void *p = take_page();
    spin_unlock_irqrestore(&pool_lock, f);
    if (!p)
        panic("out of kernel pages");
    memset(p, 0, PAGE_SIZE);
    return p;
}

uint64_t kpages_free(void) { return pool_free_pages; }

/* The region stays one range: the kernel heap is cut off its top end. */
uint64_t physmem_take_top(uint64_t bytes)
{
    bytes = ALIGN_UP(bytes, PAGE_SIZE);
    if (!bytes || app_region.end - app_region.start < bytes + MiB(4))
        return 0;
    app_region.end -= bytes;
    return app_region.end;
}
