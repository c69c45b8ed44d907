/* The kernel heap: variable-sized objects (Portals state) in memory taken
 * from the top of the application region at boot (kmem=SIZE). */
#ifndef TERN_KMALLOC_H
#define TERN_KMALLOC_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Takes the heap from the top of the application region: kmem=SIZE, or by
 * default KMEM_DEFAULT and KMEM_PER_CPU for each of `extra` more Portals
 * interfaces (ranks per core: one per rank past the first that can have
 * one) when the node has a NIC, and KMEM_NO_NIC otherwise (a program's
 * pipes and epoll instances, sys/evobj.c).  Call after netdev_init and
 * smp_init and before the program is loaded. */
#define KMEM_NO_NIC (512ULL << 10)
/* One NI with default limits and a few peers peaks near 1.8 MiB: the
 * kernel's and the program's, and one more per rank with ranks per core. */
#define KMEM_DEFAULT (4ULL << 20)
#define KMEM_PER_CPU (2ULL << 20)
void kmem_init(bool have_nic, unsigned extra);

/* 16-byte aligned, NOT zeroed; NULL when the heap cannot hold it. */
void *kmalloc(size_t size);
void kfree(void *p);

struct kmem_stats { uint64_t size, used, peak, fails; };
void kmem_get_stats(struct kmem_stats *s);
#endif
