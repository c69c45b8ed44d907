/* The message-path trace's recorder (msgtrace.h).  Records go to the ring of
 * the CPU that runs the point, so points never share a cache line between
 * CPUs and need no lock.  A point runs with interrupts off (system calls,
 * the NIC's handler, the library) or in netdev_wait between halts, where an
 * interrupt could cut in only between two points, so nothing nests.
 *
 * The rings are kernel pages taken the first time a program starts a trace
 * and kept for later traces: a node that never traces spends no memory on
 * them (256 KiB per CPU otherwise), and no point ever allocates.  The
 * kernel's page pool is small (low memory and the slack between the kernel
 * image and the program's region): it held the rings of two CPUs, not four,
 * and a kernel image 20 KiB larger left too little for one beside a boot
 * module.  So msgtrace=K sets K CPUs' rings aside at boot, off the top of the
 * program's region, as the kernel heap is (bench/msgpath.py asks for it). */
#include "kernel.h"
#include "mem.h"
#include "msgtrace.h"
#include "percpu.h"
#include "smp.h"
#include "x86.h"

#define PER_PAGE (PAGE_SIZE / sizeof(uint64_t))
#define RING_PAGES (MSGTRACE_ENTRIES / PER_PAGE)
#define PAGES_LEFT 64              /* what starting a trace leaves the pool */
_Static_assert(MSGTRACE_ENTRIES % PER_PAGE == 0, "whole pages");

struct ring {
    uint64_t *page[RING_PAGES];
    uint64_t n;                    /* records since the start; the next goes at n % size */
} __attribute__((aligned(64)));

static struct ring rings[MSGTRACE_CPUS];
static unsigned nrings;            /* CPUs 0 .. nrings-1 have their pages */
volatile unsigned char ptl_trace_on;

static void put(unsigned point, uint64_t tsc)
{
    struct percpu *c = this_cpu();
    if (c->index >= nrings)
        return;
    /* One clock for every CPU: CPU 0's (smp.c measured the others' offsets). */
    tsc -= (uint64_t)c->tsc_offset;
    struct ring *r = &rings[c->index];
    uint64_t i = r->n++ % MSGTRACE_ENTRIES;
    r->page[i / PER_PAGE][i % PER_PAGE] = (uint64_t)point << 56 | (tsc & MSGTRACE_TSC_MASK);
}

void ptl_host_trace(unsigned point) { put(point, rdtsc()); }

bool msgtrace_built(void)
{
#ifdef PTL_TRACE_HOOK
    return true;
#else
    return false;
#endif
}

void msgtrace_reserve(unsigned cpus)
{
    if (!msgtrace_built())
        return;
    for (; nrings < cpus && nrings < MSGTRACE_CPUS; nrings++) {
        uint64_t pa = physmem_take_top(RING_PAGES * PAGE_SIZE);
        if (!pa) {
            kprintf("msgtrace: cannot spare the rings of %u CPUs from the application\n",
                    cpus - nrings);
            return;
        }
        for (unsigned p = 0; p < RING_PAGES; p++)
            rings[nrings].page[p] = phys_to_virt(pa + (uint64_t)p * PAGE_SIZE);
    }
    if (nrings)
        kprintf("msgtrace: rings of %u CPUs set aside (%lu KiB, top of the application "
                "region)\n", nrings, (unsigned long)(nrings * RING_PAGES * (PAGE_SIZE / 1024)));
}

bool msgtrace_start(void)
{
    if (!msgtrace_built())
        return false;
    ptl_trace_on = 0;
    unsigned want = smp_ncpus() < MSGTRACE_CPUS ? smp_ncpus() : MSGTRACE_CPUS;
    if (want > nrings && kpages_free() < (want - nrings) * RING_PAGES + PAGES_LEFT)
        return false;
    for (; nrings < want; nrings++)
        for (unsigned p = 0; p < RING_PAGES; p++)
            rings[nrings].page[p] = kpage_alloc();
    for (unsigned i = 0; i < nrings; i++)
        rings[i].n = 0;
    ptl_trace_on = 1;
    return true;
}

void msgtrace_stop(void) { ptl_trace_on = 0; }

void msgtrace_mark(unsigned point, uint64_t tsc)
{
    if (ptl_trace_on && point < TP_LAST)
        put(point, tsc);
}

size_t msgtrace_read(unsigned cpu, uint64_t *out, size_t max, uint64_t *total)
{
    *total = 0;
    if (cpu >= nrings)
        return 0;
    const struct ring *r = &rings[cpu];
    uint64_t n = r->n, first = n > MSGTRACE_ENTRIES ? n - MSGTRACE_ENTRIES : 0;
    *total = n;
    size_t k = 0;
    for (uint64_t i = first; i < n && k < max; i++) {
        uint64_t j = i % MSGTRACE_ENTRIES;
        out[k++] = r->page[j / PER_PAGE][j % PER_PAGE];
    }
    return k;
}
