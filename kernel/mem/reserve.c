/* Reserved address space and the memory committed in it (reserve.h).
 *
 * Real memory stays what docs/kernel.md says: one physically contiguous
 * region, linearly mapped at [vbase, vend), with nothing demand-paged.  A
 * reservation is only a claim on addresses outside that window.  Committing
 * part of it takes real memory from the heap area (the free stretch between
 * the break and the stack that mmap also carves from, so the program's
 * memory budget is one), zeroes it and maps it at the reserved addresses.
 * The window's own mapping of that memory stays (it is never unmapped), but
 * the heap area counts it as used, so brk and mmap never hand it out twice.
 *
 * "Physically contiguous where the kernel can": a commit first tries to
 * extend the committed piece next to it, then a free stretch at the same
 * offset within a 2 MiB page as the addresses (so 2 MiB pages map it), then
 * any free stretch of its size, and only then splits over several. */
#include "errno.h"
#include "kernel.h"
#include "mem.h"
#include "reserve.h"
#include "x86.h"

/* Page-table pages left for the kernel: a program's commits may not take
 * the last ones (mapping them is what they are for). */
#define KPAGES_KEEP 16

static struct range_list resv(void)
{
    return (struct range_list){proc.reserved, &proc.nreserved, MAX_RESERVED};
}

/* The window address of physical pa, and back. */
static uint64_t alias_of(uint64_t pa) { return proc.vbase + (pa - proc.region_pa); }
static uint64_t pa_of(uint64_t w) { return proc.region_pa + (w - proc.vbase); }

/* ---- pieces, sorted by va ---------------------------------------------------- */

/* The calls a thread makes without the serial lock (sys/table.c,
 * thread_safe: getcpu, futex, clock_gettime ...) check their pointers here
 * while another thread's mmap, mprotect or munmap, under that lock, may be
 * moving pieces about (piece_add, pieces_remove).  A check that read the
 * list half-moved missed its piece: EFAULT for a good pointer, about one
 * call in a hundred while another thread mapped memory
 * (tests/programs/threads.c, maps).  So a sequence count, odd while the
 * list changes, and the checks read it again until they saw it whole.  Only
 * the writer (one at a time: the serial lock) changes it.  Acquire and
 * release order is all a sequence count needs, and on x86 neither costs an
 * instruction on a system call's pointer check. */
static volatile uint32_t pieces_seq;

static void pieces_change_begin(void)
{
    pieces_seq++;
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

static void pieces_change_end(void)
{
    __atomic_thread_fence(__ATOMIC_RELEASE);
    pieces_seq++;
}

static uint32_t pieces_read_begin(void)
{
    uint32_t seq;
    while ((seq = pieces_seq) & 1)
        cpu_relax();
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    return seq;
}

static bool pieces_read_again(uint32_t seq)
{
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    return pieces_seq != seq;
}

/* Index of the last piece starting at or below va, or -1. */
static int piece_below(uint64_t va)
{
    int lo = 0, hi = proc.npieces - 1, found = -1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (proc.pieces[mid].va <= va) {
            found = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return found;
}

/* The piece holding va, or NULL. */
static struct piece *piece_at(uint64_t va)
{
    int i = piece_below(va);
    return i >= 0 && va < proc.pieces[i].end ? &proc.pieces[i] : NULL;
}

static bool follows(const struct piece *a, uint64_t va, uint64_t pa)
{
    return a->end == va && a->pa + (a->end - a->va) == pa;
}

static long piece_add(uint64_t va, uint64_t end, uint64_t pa)
{
    int i = piece_below(va) + 1;             /* where it goes */
    struct piece *prev = i > 0 ? &proc.pieces[i - 1] : NULL;
    struct piece *next = i < proc.npieces ? &proc.pieces[i] : NULL;
    bool join_prev = prev && follows(prev, va, pa);
    bool join_next = next && next->va == end && next->pa == pa + (end - va);
    if (!join_prev && !join_next && proc.npieces == MAX_PIECES)
        return -ENOMEM;
    pieces_change_begin();
    if (join_prev && join_next) {
        prev->end = next->end;
        memmove(next, next + 1, (size_t)(proc.npieces - i - 1) * sizeof *next);
        proc.npieces--;
    } else if (join_prev) {
        prev->end = end;
    } else if (join_next) {
        next->va = va;
        next->pa = pa;
    } else {
        memmove(&proc.pieces[i + 1], &proc.pieces[i],
                (size_t)(proc.npieces - i) * sizeof proc.pieces[0]);
        proc.pieces[i] = (struct piece){va, end, pa};
        proc.npieces++;
    }
    if (!proc.pieces_pa_hi || pa < proc.pieces_pa_lo)
        proc.pieces_pa_lo = pa;
    if (pa + (end - va) > proc.pieces_pa_hi)
        proc.pieces_pa_hi = pa + (end - va);
    pieces_change_end();
    return 0;
}

/* Gives [va, va+len) at physical pa back: unmapped, and the heap area may
 * hand the memory out again.  (If the heap list is too full to split, the
 * memory stays counted as used until the job ends: lost, never shared.) */
static void release(uint64_t va, uint64_t pa, uint64_t len)
{
    user_unmap(va, len);
    ranges_remove(heap_list(), alias_of(pa), alias_of(pa) + len);
}

/* Decommits [s, e).  Only the list's own edits are marked as a change: the
 * release before them unmaps, which waits for the other CPUs to drop the
 * pages from their TLBs, and one of them may be waiting for the change to
 * end, with interrupts off. */
static long pieces_remove(uint64_t s, uint64_t e)
{
    for (int i = 0; i < proc.npieces; i++) {
        struct piece *p = &proc.pieces[i];
        if (p->end <= s || p->va >= e)
            continue;
        uint64_t cs = p->va > s ? p->va : s, ce = p->end < e ? p->end : e;
        bool middle = cs > p->va && ce < p->end;
        if (middle && proc.npieces == MAX_PIECES)
            return -ENOMEM;
        if (kpages_free() < KPAGES_KEEP / 2)
            return -ENOMEM;    /* splitting a 2 MiB page needs a table */
        uint64_t cpa = p->pa + (cs - p->va);
        release(cs, cpa, ce - cs);
        pieces_change_begin();
        if (cs == p->va && ce == p->end) {
            memmove(p, p + 1, (size_t)(proc.npieces - i - 1) * sizeof *p);
            proc.npieces--;
            i--;
        } else if (cs == p->va) {
            p->pa += ce - p->va;
            p->va = ce;
        } else if (ce == p->end) {
            p->end = cs;
        } else {
            memmove(p + 2, p + 1, (size_t)(proc.npieces - i - 1) * sizeof *p);
            p[1] = (struct piece){ce, p->end, p->pa + (ce - p->va)};
            p->end = cs;
            proc.npieces++;
            i++;
        }
        pieces_change_end();
    }
    return 0;
}

/* ---- taking real memory ---------------------------------------------------------- */

static bool heap_free_at(uint64_t w, uint64_t len)
{
    return w >= heap_low() && w + len <= proc.heap_end && w + len > w &&
           ranges_free(heap_list(), w, w + len);
}

/* Chooses window memory for up to len bytes to be mapped at va: its window
 * address, and in *got how much (less than len only when no free stretch
 * is that long).  0 when nothing is free. */
static uint64_t choose(uint64_t va, uint64_t len, uint64_t *got)
{
    *got = len;
    int i = piece_below(va);
    if (i >= 0 && proc.pieces[i].end == va) {
        const struct piece *p = &proc.pieces[i];
        uint64_t w = alias_of(p->pa + (p->end - p->va));
        if (heap_free_at(w, len))
            return w;
    }
    if (i + 1 < proc.npieces && proc.pieces[i + 1].va == va + len) {
        uint64_t w = alias_of(proc.pieces[i + 1].pa) - len;
        if (heap_free_at(w, len))
            return w;
    }
    uint64_t w = 0;
    if (len >= HUGE_SIZE)
        w = ranges_find_gap(heap_list(), heap_low(), proc.heap_end, len, HUGE_SIZE,
                            va & (HUGE_SIZE - 1));
    if (!w)
        w = ranges_find_gap(heap_list(), heap_low(), proc.heap_end, len, PAGE_SIZE, 0);
    if (w)
        return w;
    uint64_t at = 0, n = ranges_largest_gap(heap_list(), heap_low(), proc.heap_end, &at);
    n = ALIGN_DOWN(n, PAGE_SIZE);
    if (n == 0)
        return 0;
    *got = n;                /* shorter than len: the rest goes elsewhere */
    return at;
}

/* Upper bound on the page-table pages mapping [va, va+len) at pa takes. */
static uint64_t tables_needed(uint64_t va, uint64_t pa, uint64_t len)
{
    uint64_t end = va + len;
    uint64_t pts = ((va - pa) & (HUGE_SIZE - 1)) ? (ALIGN_UP(end, HUGE_SIZE) - ALIGN_DOWN(va, HUGE_SIZE)) / HUGE_SIZE
                                                 : 2;
    uint64_t pds = (ALIGN_UP(end, GiB(1)) - ALIGN_DOWN(va, GiB(1))) / GiB(1);
    uint64_t pdpts = (ALIGN_UP(end, GiB(512)) - ALIGN_DOWN(va, GiB(512))) / GiB(512);
    return pts + pds + pdpts;
}

static long commit_run(uint64_t va, uint64_t end)
{
    while (va < end) {
        uint64_t n;
        uint64_t w = choose(va, end - va, &n);
        if (!w)
            return -ENOMEM;
        uint64_t pa = pa_of(w);
        if (kpages_free() < tables_needed(va, pa, n) + KPAGES_KEEP)
            return -ENOMEM;
        long r = ranges_insert(heap_list(), w, w + n);
        if (r)
            return r;
        if ((r = piece_add(va, va + n, pa))) {
            ranges_remove(heap_list(), w, w + n);
            return r;
        }
        memset(phys_to_virt(pa), 0, n);
        user_map(va, pa, n);
        va += n;
    }
    return 0;
}

/* The next uncommitted run at or after *v below e, ending at *run_end:
 * false when there is none. */
static bool next_run(uint64_t *v, uint64_t e, uint64_t *run_end)
{
    const struct piece *p;
    while (*v < e && (p = piece_at(*v)))
        *v = p->end;
    if (*v >= e)
        return false;
    int i = piece_below(*v) + 1;
    *run_end = i < proc.npieces && proc.pieces[i].va < e ? proc.pieces[i].va : e;
    return true;
}

/* Commits whatever in [s, e) is not yet: all of it, or -ENOMEM (then what
 * was committed on the way stays). */
static long commit(uint64_t s, uint64_t e)
{
    uint64_t free_bytes = proc.heap_end - heap_low() - ranges_bytes(heap_list());
    uint64_t v, run_end, need = 0;
    for (v = s; next_run(&v, e, &run_end); v = run_end)
        need += run_end - v;
    if (need > free_bytes)
        return -ENOMEM;
    for (v = s; next_run(&v, e, &run_end); v = run_end) {
        long r = commit_run(v, run_end);
        if (r)
            return r;
    }
    return 0;
}

/* ---- the system calls' side -------------------------------------------------------- */

static bool placeable(uint64_t va, uint64_t len)
{
    return va >= USER_MIN_ADDR && va + len <= USER_TOP && va + len > va && !in_window(va, va + len);
}

long reserve_map(uint64_t hint, uint64_t len, bool access, enum reserve_mode mode)
{
    uint64_t va = 0;
    if (mode != RESERVE_HINT) {
        va = hint;
        if (!placeable(va, len))
            return -ENOMEM;
        if (!ranges_free(resv(), va, va + len)) {
            if (mode == RESERVE_NOREPLACE)
                return -EEXIST;
            long r = reserve_unmap(va, va + len);
            if (r)
                return r;
        }
    } else {
        uint64_t h = ALIGN_DOWN(hint, PAGE_SIZE);
        if (h && placeable(h, len) && ranges_free(resv(), h, h + len))
            va = h;
        else
            va = ranges_find_gap(resv(), proc.vend, RESERVE_TOP, len,
                                 len >= HUGE_SIZE ? HUGE_SIZE : PAGE_SIZE, 0);
        if (!va)
            return -ENOMEM;
    }
    long r = ranges_insert(resv(), va, va + len);
    if (r)
        return r;
    if (access && (r = commit(va, va + len))) {
        reserve_unmap(va, va + len);
        return r;
    }
    return (long)va;
}

long reserve_unmap(uint64_t s, uint64_t e)
{
    long r = pieces_remove(s, e);
    return r ? r : ranges_remove(resv(), s, e);
}

long reserve_protect(uint64_t s, uint64_t e, bool access)
{
    if (!ranges_cover(resv(), s, e))
        return -ENOMEM;
    /* Made inaccessible again, memory stays committed (and readable):
     * protection is not enforced below the mapping's granularity. */
    return access ? commit(s, e) : 0;
}

long reserve_advise(uint64_t s, uint64_t e, bool dontneed)
{
    if (!ranges_cover(resv(), s, e))
        return -ENOMEM;
    for (int i = 0; dontneed && i < proc.npieces; i++) {
        const struct piece *p = &proc.pieces[i];
        if (p->end <= s || p->va >= e)
            continue;
        uint64_t cs = p->va > s ? p->va : s, ce = p->end < e ? p->end : e;
        memset(phys_to_virt(p->pa + (cs - p->va)), 0, ce - cs);
    }
    return 0;
}

bool reserve_covers(uint64_t s, uint64_t e) { return ranges_cover(resv(), s, e); }
bool reserve_has(uint64_t addr) { return ranges_cover(resv(), addr, addr + 1); }

/* A copy of the piece holding va, read whole (pieces_seq); false if none. */
static bool piece_read(uint64_t va, struct piece *out)
{
    for (;;) {
        uint32_t seq = pieces_read_begin();
        const struct piece *p = piece_at(va);
        if (p)
            *out = *p;
        if (!pieces_read_again(seq))
            return p != NULL;
    }
}

bool reserve_accessible(uint64_t s, uint64_t e)
{
    struct piece p;
    while (s < e) {
        if (!piece_read(s, &p))
            return false;
        s = p.end;
    }
    return true;
}

bool reserve_contiguous(uint64_t s, uint64_t e)
{
    struct piece p;
    return piece_read(s, &p) && e <= p.end;
}

uint64_t reserve_phys(uint64_t va)
{
    struct piece p;
    return piece_read(va, &p) ? p.pa + (va - p.va) : 0;
}

uint64_t reserve_va_of_phys(uint64_t pa)
{
    /* Every Portals event of a rank asks (kernel/sys/portals.c): most
     * buffers lie outside every piece, and up to MAX_PIECES are not looked
     * through for them. */
    if (pa < proc.pieces_pa_lo || pa >= proc.pieces_pa_hi)
        return 0;
    for (;;) {
        uint32_t seq = pieces_read_begin();
        uint64_t va = 0;
        for (int i = 0; i < proc.npieces && !va; i++) {
            const struct piece *p = &proc.pieces[i];
            if (pa >= p->pa && pa - p->pa < p->end - p->va)
                va = p->va + (pa - p->pa);
        }
        if (!pieces_read_again(seq))
            return va;
    }
}
