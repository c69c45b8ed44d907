/* The kernel heap: first fit over one range, free list kept in address order
 * so a freed block merges with both neighbours at once.  It serves Portals
 * objects, which are few and long-lived (per-NI tables of up to a few hundred
 * KiB, per-peer state), so a list walk per call costs nothing that matters.
 *
 * The range is touched only at the first allocation: the boot loader may
 * have put the program file there, and it is needed until the program has
 * been loaded (allocations come from system calls, later). */
#include "boot.h"
#include "kernel.h"
#include "kmalloc.h"
#include "mem.h"
#include "spinlock.h"

#define ALIGN 16
#define MAGIC_USED 0x6b6d616c6c6f6321ULL

struct block {
    uint64_t size;                 /* whole block, header included */
    union {
        struct block *next;        /* free: next free block by address */
        uint64_t magic;            /* in use: MAGIC_USED */
    };
};
_Static_assert(sizeof(struct block) == ALIGN, "header keeps payloads aligned");

static uint64_t heap_pa, heap_size;
static bool heap_ready;
static struct block *free_list;
static struct kmem_stats st;
static spinlock_t heap_lock = SPINLOCK_INIT;

void kmem_init(bool have_nic, unsigned extra)
{
    uint64_t want = options.kmem_size >= 0 ? (uint64_t)options.kmem_size
                    : have_nic ? KMEM_DEFAULT + extra * KMEM_PER_CPU : KMEM_NO_NIC;
    if (!want)
        return;
    heap_pa = physmem_take_top(want);
    if (!heap_pa) {
        kprintf("kmem: cannot spare %lu KiB from the application; no kernel heap\n", want >> 10);
        return;
    }
    heap_size = ALIGN_UP(want, PAGE_SIZE);
    st.size = heap_size;
    kprintf("kmem: %lu KiB kernel heap at 0x%lx (top of the application region)\n",
            heap_size >> 10, heap_pa);
}

static void heap_start(void)
{
    heap_ready = true;
    free_list = phys_to_virt(heap_pa);
    free_list->size = heap_size;
    free_list->next = NULL;
}

static void *alloc_locked(size_t size)
{
    if (!heap_size || size > heap_size) {
        st.fails++;
        return NULL;
    }
    if (!heap_ready)
        heap_start();
    uint64_t need = ALIGN_UP((uint64_t)size, ALIGN) + sizeof(struct block);
    for (struct block **pp = &free_list; *pp; pp = &(*pp)->next) {
        struct block *b = *pp;
        if (b->size < need)
            continue;
        if (b->size - need >= 2 * sizeof(struct block)) {
            struct block *rest = (struct block *)((char *)b + need);
            rest->size = b->size - need;
            rest->next = b->next;
            *pp = rest;
            b->size = need;
        } else {
            *pp = b->next;
        }
        b->magic = MAGIC_USED;
        st.used += b->size;
        if (st.used > st.peak)
            st.peak = st.used;
        return b + 1;
    }
    st.fails++;
    return NULL;
}

void *kmalloc(size_t size)
{
    uint64_t f = spin_lock_irqsave(&heap_lock);
    void *p = alloc_locked(size);
    spin_unlock_irqrestore(&heap_lock, f);
    return p;
}

void kfree(void *p)
{
    if (!p)
        return;
    struct block *b = (struct block *)p - 1;
    uint64_t lo = (uint64_t)phys_to_virt(heap_pa);
    if ((uint64_t)b < lo || (uint64_t)b >= lo + heap_size || b->magic != MAGIC_USED)
        panic("kfree(%p): not a kernel heap block", p);
    uint64_t f = spin_lock_irqsave(&heap_lock);
    st.used -= b->size;
    struct block *prev = NULL, *next = free_list;
    while (next && next < b) {
        prev = next;
        next = next->next;
    }
    b->next = next;
    if (next && (char *)b + b->size == (char *)next) {
        b->size += next->size;
        b->next = next->next;
    }
    if (prev && (char *)prev + prev->size == (char *)b) {
        prev->size += b->size;
        prev->next = b->next;
    } else if (prev) {
        prev->next = b;
    } else {
        free_list = b;
    }
    spin_unlock_irqrestore(&heap_lock, f);
}

void kmem_get_stats(struct kmem_stats *s) { *s = st; }
