/* Page tables.  The kernel keeps the boot tables for itself (direct map and
 * image, 2 MiB pages) and owns PML4 slot 0 for the application.  Nothing is
 * ever paged: a mapping is made once, at load, and stays. */
#include "kernel.h"
#include "mem.h"
#include "x86.h"

#define PTE_P  0x001ULL
#define PTE_W  0x002ULL
#define PTE_U  0x004ULL
#define PTE_PS 0x080ULL
#define PTE_ADDR 0x000FFFFFFFFFF000ULL

extern uint64_t boot_pml4[512];

static uint64_t *table_at(uint64_t entry) { return phys_to_virt(entry & PTE_ADDR); }

static uint64_t *next_table(uint64_t *table, unsigned idx)
{
    if (!(table[idx] & PTE_P)) {
        void *page = kpage_alloc();
        table[idx] = ((uint64_t)page - PHYS_BASE) | PTE_P | PTE_W | PTE_U;
    }
    return table_at(table[idx]);
}

void paging_init(void)
{
    /* Drop the boot identity map: the lower half now belongs to the app. */
    boot_pml4[0] = 0;
    write_cr3(read_cr3());
}

void user_map(uint64_t va, uint64_t pa, uint64_t len)
{
    uint64_t end = va + len;
    while (va < end) {
        uint64_t *pdpt = next_table(boot_pml4, (va >> 39) & 511);
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
    write_cr3(read_cr3());
}

/* A job has ended: every user mapping goes, and the page-table pages go back
 * to the pool for the next job's tables. */
static void free_tables(uint64_t *table, int level)
{
    for (int i = 0; i < 512; i++) {
        if (!(table[i] & PTE_P))
            continue;
        if (level > 1 && !(table[i] & PTE_PS)) {
            uint64_t *next = table_at(table[i]);
            free_tables(next, level - 1);
            kpage_free(next);
        }
        table[i] = 0;
    }
}

void user_unmap_all(void)
{
    if (boot_pml4[0] & PTE_P) {
        uint64_t *pdpt = table_at(boot_pml4[0]);
        free_tables(pdpt, 3);
        kpage_free(pdpt);
        boot_pml4[0] = 0;
    }
    write_cr3(read_cr3());
}
