/* Page tables.  The kernel keeps the boot tables for itself (direct map and
 * image, 2 MiB pages) and gives the lower half (PML4 slots 0-255) to the
 * application.  Each process has its own PML4 (process.h; the first one's
 * is boot_pml4): the calls without a pml4 argument change the calling
 * CPU's process's.  Nothing is ever paged: the program's region is mapped once,
 * at load, and stays; memory committed in reserved address space
 * (mem/reserve.c) is mapped when committed and unmapped when released.
 * Whatever a leaf entry's dirty bit says is passed on (mem_dirty_mark)
 * before the entry goes: that is how the next job's clearing knows what
 * this one wrote. */
#include "kernel.h"
#include "mem.h"
#include "process.h"
#include "smp.h"
#include "x86.h"

#define PTE_P  0x001ULL
#define PTE_W  0x002ULL
#define PTE_U  0x004ULL
#define PTE_D  0x040ULL
#define PTE_PS 0x080ULL
#define PTE_ADDR 0x000FFFFFFFFFF000ULL

extern uint64_t boot_pml4[512];

static uint64_t *table_at(uint64_t entry) { return phys_to_virt(entry & PTE_ADDR); }

static uint64_t *next_table(uint64_t *table, unsigned idx)
{
    if ((table[idx] & (PTE_P | PTE_PS)) == (PTE_P | PTE_PS))
        panic("user_map: a 4 KiB mapping inside a 2 MiB page");
    if (!(table[idx] & PTE_P)) {
        void *page = kpage_alloc();
        table[idx] = ((uint64_t)page - PHYS_BASE) | PTE_P | PTE_W | PTE_U;
    }
    return table_at(table[idx]);
}

/* The memory a leaf entry maps, marked if it was written through it. */
static void harvest(uint64_t e, bool huge)
{
    if ((e & (PTE_P | PTE_D)) == (PTE_P | PTE_D))
        mem_dirty_mark(e & PTE_ADDR & ~(huge ? HUGE_SIZE - 1 : 0), huge ? HUGE_SIZE : PAGE_SIZE);
}

/* Set while other CPUs run the program's threads: a change to the user
 * half must leave their TLBs too. */
static bool shared_user;
void paging_set_shared(bool on) { shared_user = on; }

static void flush_user(uint64_t va, uint64_t len)
{
    if (shared_user)
        tlb_shootdown(va, len);
    else
        write_cr3(read_cr3());
}


void paging_init(void)
{
    /* Drop the boot identity map: the lower half now belongs to the app. */
    boot_pml4[0] = 0;
    write_cr3(read_cr3());
}

/* A change to a process that is not the calling CPU's may be cached by any
 * other CPU that ran it. */
static void flush_other(uint64_t *pml4, uint64_t va, uint64_t len)
{
    if (pml4 == proc.pml4)
        flush_user(va, len);
    else if (smp_ncpus() > 1)
        tlb_shootdown(va, len);
}

static void map_in(uint64_t *pml4, uint64_t va, uint64_t pa, uint64_t len)
{
    uint64_t end = va + len;
    while (va < end) {
        uint64_t *pdpt = next_table(pml4, (va >> 39) & 511);
        uint64_t *pd = next_table(pdpt, (va >> 30) & 511);
        unsigned pdi = (va >> 21) & 511;
        if (!(va & (HUGE_SIZE - 1)) && !(pa & (HUGE_SIZE - 1)) && end - va >= HUGE_SIZE &&
            !(pd[pdi] & PTE_P)) {
            pd[pdi] = pa | PTE_P | PTE_W | PTE_U | PTE_PS;
            va += HUGE_SIZE;
            pa += HUGE_SIZE;
            continue;
        }
        uint64_t *pt = next_table(pd, pdi);
        pt[(va >> 12) & 511] = pa | PTE_P | PTE_W | PTE_U;
        va += PAGE_SIZE;
        pa += PAGE_SIZE;
    }
}

void user_map(uint64_t va, uint64_t pa, uint64_t len)
{
    map_in(proc.pml4, va, pa, len);
    flush_user(va, len);
}

void pml4_map(uint64_t *pml4, uint64_t va, uint64_t pa, uint64_t len)
{
    map_in(pml4, va, pa, len);
    flush_other(pml4, va, len);
}

/* The page-table entry for va at the level that maps it, or NULL; *huge:
 * it is a 2 MiB page. */
static uint64_t *leaf(uint64_t *pml4, uint64_t va, bool *huge)
{
    uint64_t *t = pml4;
    unsigned idx[3] = {(va >> 39) & 511, (va >> 30) & 511, (va >> 21) & 511};
    for (int l = 0; l < 3; l++) {
        if (!(t[idx[l]] & PTE_P))
            return NULL;
        if (l == 2 && (t[idx[l]] & PTE_PS)) {
            *huge = true;
            return &t[idx[l]];
        }
        t = table_at(t[idx[l]]);
    }
    *huge = false;
    return &t[(va >> 12) & 511];
}

static bool table_empty(const uint64_t *t)
{
    for (int i = 0; i < 512; i++)
        if (t[i])
            return false;
    return true;
}

/* Frees the tables below entry *e (a table at level, 3 = PDPT) that map
 * nothing in [va, end) any more, and *e with them when its table is left
 * empty: a program that commits and releases here and there must not use
 * up the kernel's small pool of pages. */
static void reclaim(uint64_t *e, int level, uint64_t base, uint64_t va, uint64_t end)
{
    if (!(*e & PTE_P) || (*e & PTE_PS))
        return;
    uint64_t *t = table_at(*e);
    uint64_t span = 1ULL << (12 + 9 * (level - 1));       /* what one entry maps */
    if (level > 1)
        for (int i = 0; i < 512; i++) {
            uint64_t s = base + (uint64_t)i * span;
            if (s < end && va < s + span)
                reclaim(&t[i], level - 1, s, va, end);
        }
    if (table_empty(t)) {
        *e = 0;
        kpage_free(t);
    }
}

void user_unmap(uint64_t va, uint64_t len)
{
    uint64_t start = va, end = va + len;
    while (va < end) {
        bool huge;
        uint64_t *e = leaf(proc.pml4, va, &huge);
        if (!e) {
            va = ALIGN_DOWN(va, PAGE_SIZE) + PAGE_SIZE;
            continue;
        }
        harvest(*e, huge);
        if (huge && !(va & (HUGE_SIZE - 1)) && end - va >= HUGE_SIZE) {
            *e = 0;
            va += HUGE_SIZE;
            continue;
        }
        if (huge) {
            /* Part of a 2 MiB page goes: it becomes a table of 4 KiB pages. */
            uint64_t pa = *e & PTE_ADDR & ~(HUGE_SIZE - 1);
            uint64_t *pt = kpage_alloc();
            for (int i = 0; i < 512; i++)
                pt[i] = (pa + (uint64_t)i * PAGE_SIZE) | PTE_P | PTE_W | PTE_U;
            *e = ((uint64_t)pt - PHYS_BASE) | PTE_P | PTE_W | PTE_U;
            continue;
        }
        *e = 0;
        va += PAGE_SIZE;
    }
    for (uint64_t slot = start >> 39; slot <= (end - 1) >> 39 && slot < 256; slot++)
        reclaim(&proc.pml4[slot], 3, slot << 39, start, end);
    flush_user(start, end - start);
}

/* A job has ended: every user mapping goes, and the page-table pages go back
 * to the pool for the next job's tables. */
static void free_tables(uint64_t *table, int level)
{
    for (int i = 0; i < 512; i++) {
        if (!(table[i] & PTE_P))
            continue;
        if (level == 1 || (level == 2 && (table[i] & PTE_PS)))
            harvest(table[i], level == 2);
        if (level > 1 && !(table[i] & PTE_PS)) {
            uint64_t *next = table_at(table[i]);
            free_tables(next, level - 1);
            kpage_free(next);
        }
        table[i] = 0;
    }
}

uint64_t pml4_lookup(uint64_t *pml4, uint64_t va)
{
    bool huge;
    uint64_t *e = leaf(pml4, va, &huge);
    if (!e || !(*e & PTE_P))
        return 0;
    uint64_t off = va & (huge ? HUGE_SIZE - 1 : PAGE_SIZE - 1);
    return (*e & PTE_ADDR & ~(huge ? HUGE_SIZE - 1 : 0)) + off;
}

void pml4_unmap_all(uint64_t *pml4)
{
    for (int slot = 0; slot < 256; slot++) {
        if (!(pml4[slot] & PTE_P))
            continue;
        uint64_t *pdpt = table_at(pml4[slot]);
        free_tables(pdpt, 3);
        kpage_free(pdpt);
        pml4[slot] = 0;
    }
    /* Every CPU: one that ran a thread of this job still holds its
     * translations (and the freed tables in its paging caches); the next
     * job's memory must not be reached through them. */
    if (smp_ncpus() > 1)
        tlb_shootdown(0, ~0ULL);
    else
        write_cr3(read_cr3());
}

void user_unmap_all(void) { pml4_unmap_all(proc.pml4); }
