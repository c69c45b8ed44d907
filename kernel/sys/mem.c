/* Memory system calls.  All application memory is real: the heap area
 * between the program image and the stack is backed and mapped from the
 * start.  brk grows up from the image; mmap carves ranges down from the top
 * of the heap area.  Handing memory out means zeroing it (Linux semantics);
 * giving it back only updates the bookkeeping.  Protection is not enforced
 * below 2 MiB granularity: mprotect succeeds without changing the mapping. */
#include "boot.h"
#include "fd.h"
#include "time.h"
#include "kernel.h"
#include "mem.h"
#include "syscall.h"
#include "uaccess.h"

#define PROT_NONE 0
#define MAP_SHARED 0x01
#define MAP_PRIVATE 0x02
#define MAP_FIXED 0x10
#define MAP_ANONYMOUS 0x20
#define MAP_FIXED_NOREPLACE 0x100000
#define MREMAP_MAYMOVE 1
#define MREMAP_FIXED 2
#define MADV_DONTNEED 4

/* Lowest address mmap may use: above the current break. */
static uint64_t mmap_low(void) { return ALIGN_UP(proc.brk, PAGE_SIZE); }

static bool overlaps(const struct mapping *m, uint64_t s, uint64_t e) { return m->start < e && s < m->end; }

/* Removes [s, e) from the mapping list, splitting where needed. */
static long unmap_range(uint64_t s, uint64_t e)
{
    for (int i = 0; i < proc.nmaps; i++) {
        struct mapping *m = &proc.maps[i];
        if (!overlaps(m, s, e))
            continue;
        if (s > m->start && e < m->end) {          /* split in two */
            if (proc.nmaps == MAX_MAPPINGS)
                return -ENOMEM;
            memmove(&proc.maps[i + 2], &proc.maps[i + 1],
                    (size_t)(proc.nmaps - i - 1) * sizeof *m);
            proc.maps[i + 1] = (struct mapping){e, m->end};
            m->end = s;
            proc.nmaps++;
            return 0;
        }
        if (s <= m->start && e >= m->end) {        /* whole mapping */
            memmove(m, m + 1, (size_t)(proc.nmaps - i - 1) * sizeof *m);
            proc.nmaps--;
            i--;
        } else if (s <= m->start) {
            m->start = e;
        } else {
            m->end = s;
        }
    }
    return 0;
}

/* Inserts [s, e), known to be free, merging with neighbours. */
static long insert_range(uint64_t s, uint64_t e)
{
    int i = 0;
    while (i < proc.nmaps && proc.maps[i].start < s)
        i++;
    bool join_prev = i > 0 && proc.maps[i - 1].end == s;
    bool join_next = i < proc.nmaps && proc.maps[i].start == e;
    if (join_prev && join_next) {
        proc.maps[i - 1].end = proc.maps[i].end;
        memmove(&proc.maps[i], &proc.maps[i + 1], (size_t)(proc.nmaps - i - 1) * sizeof proc.maps[0]);
        proc.nmaps--;
    } else if (join_prev) {
        proc.maps[i - 1].end = e;
    } else if (join_next) {
        proc.maps[i].start = s;
    } else {
        if (proc.nmaps == MAX_MAPPINGS)
            return -ENOMEM;
        memmove(&proc.maps[i + 1], &proc.maps[i], (size_t)(proc.nmaps - i) * sizeof proc.maps[0]);
        proc.maps[i] = (struct mapping){s, e};
        proc.nmaps++;
    }
    return 0;
}

static bool range_free(uint64_t s, uint64_t e)
{
    for (int i = 0; i < proc.nmaps; i++)
        if (overlaps(&proc.maps[i], s, e))
            return false;
    return true;
}

/* Highest free gap of len bytes in [mmap_low, heap_end): top-down first fit,
 * so the break and mmap grow toward each other. */
static uint64_t find_gap(uint64_t len)
{
    uint64_t top = proc.heap_end, low = mmap_low();
    for (int i = proc.nmaps - 1; i >= -1; i--) {
        uint64_t gap_lo = i >= 0 ? proc.maps[i].end : low;
        if (gap_lo < low)
            gap_lo = low;
        if (top >= gap_lo && top - gap_lo >= len)
            return top - len;
        if (i >= 0)
            top = proc.maps[i].start;
    }
    return 0;
}

static uint64_t mapped_bytes(void)
{
    uint64_t n = 0;
    for (int i = 0; i < proc.nmaps; i++)
        n += proc.maps[i].end - proc.maps[i].start;
    return n;
}

SYSCALL(brk)
{
    UNUSED_ARGS();
    uint64_t want = a0;
    if (want < proc.brk_start)
        return (long)proc.brk;
    uint64_t limit = proc.nmaps ? proc.maps[0].start : proc.heap_end;
    if (want > limit)
        return (long)proc.brk;                  /* Linux reports failure this way */
    uint64_t old_top = ALIGN_UP(proc.brk, PAGE_SIZE), new_top = ALIGN_UP(want, PAGE_SIZE);
    if (new_top > old_top)
        memset((void *)old_top, 0, new_top - old_top);
    proc.brk = want;
    return (long)proc.brk;
}

SYSCALL(mmap)
{
    UNUSED_ARGS();
    uint64_t addr = a0, len = a1, flags = a3;
    (void)a2;
    if (!(flags & MAP_ANONYMOUS))
        return (int64_t)a4 < 0 || !fd_get(a4) ? -EBADF : -ENODEV;
    if (a5 & (PAGE_SIZE - 1))
        return -EINVAL;
    if (len == 0 || (flags & (MAP_SHARED | MAP_PRIVATE)) == 0)
        return -EINVAL;
    if (len > proc.heap_end)
        return -ENOMEM;
    len = ALIGN_UP(len, PAGE_SIZE);
    uint64_t start;
    if (flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)) {
        if (addr & (PAGE_SIZE - 1))
            return -EINVAL;
        if (addr < mmap_low() || addr + len > proc.heap_end || addr + len < addr)
            return -ENOMEM;  /* only the heap area is available for mappings */
        if (!range_free(addr, addr + len)) {
            if (flags & MAP_FIXED_NOREPLACE)
                return -EEXIST;
            long r = unmap_range(addr, addr + len);
            if (r)
                return r;
        }
        start = addr;
    } else {
        start = find_gap(len);
        if (!start)
            return -ENOMEM;
    }
    long r = insert_range(start, start + len);
    if (r)
        return r;
    memset((void *)start, 0, len);
    return (long)start;
}

SYSCALL(munmap)
{
    UNUSED_ARGS();
    if ((a0 & (PAGE_SIZE - 1)) || a1 == 0 || a0 + a1 < a0)
        return -EINVAL;
    return unmap_range(a0, a0 + ALIGN_UP(a1, PAGE_SIZE));
}

static const struct mapping *mapping_containing(uint64_t s, uint64_t e)
{
    for (int i = 0; i < proc.nmaps; i++)
        if (proc.maps[i].start <= s && e <= proc.maps[i].end)
            return &proc.maps[i];
    return NULL;
}

SYSCALL(mremap)
{
    UNUSED_ARGS();
    uint64_t old = a0, old_len = ALIGN_UP(a1, PAGE_SIZE), new_len = ALIGN_UP(a2, PAGE_SIZE);
    uint64_t flags = a3;
    if ((old & (PAGE_SIZE - 1)) || new_len == 0 || (flags & ~3ULL))
        return -EINVAL;
    if (flags & MREMAP_FIXED)
        return -EINVAL;   /* not supported: callers fall back to mmap + copy */
    if (old_len == 0 || !mapping_containing(old, old + old_len))
        return -EFAULT;
    if (new_len <= old_len) {
        if (new_len < old_len)
            unmap_range(old + new_len, old + old_len);
        return (long)old;
    }
    uint64_t grow_end = old + new_len;
    if (grow_end <= proc.heap_end && grow_end > old && range_free(old + old_len, grow_end)) {
        long r = insert_range(old + old_len, grow_end);
        if (r)
            return r;
        memset((void *)(old + old_len), 0, new_len - old_len);
        return (long)old;
    }
    if (!(flags & MREMAP_MAYMOVE))
        return -ENOMEM;
    uint64_t dst = find_gap(new_len);
    if (!dst)
        return -ENOMEM;
    long r = insert_range(dst, dst + new_len);
    if (r)
        return r;
    memmove((void *)dst, (void *)old, old_len);
    memset((void *)(dst + old_len), 0, new_len - old_len);
    unmap_range(old, old + old_len);
    return (long)dst;
}

SYSCALL(mprotect)
{
    UNUSED_ARGS();
    if (a0 & (PAGE_SIZE - 1))
        return -EINVAL;
    return user_ok(a0, a1) ? 0 : -ENOMEM;
}

SYSCALL(madvise)
{
    UNUSED_ARGS();
    if (a0 & (PAGE_SIZE - 1))
        return -EINVAL;
    uint64_t len = ALIGN_UP(a1, PAGE_SIZE);
    if (!user_ok(a0, len))
        return -ENOMEM;
    if (a2 == MADV_DONTNEED)
        memset((void *)a0, 0, len);   /* the next touch must see zeros */
    return 0;
}

struct linux_sysinfo {
    int64_t uptime;
    uint64_t loads[3], totalram, freeram, sharedram, bufferram, totalswap, freeswap;
    uint16_t procs, pad;
    uint32_t pad2;
    uint64_t totalhigh, freehigh;
    uint32_t mem_unit;
    char reserved[4];
};

SYSCALL(sysinfo)
{
    UNUSED_ARGS();
    struct linux_sysinfo si = {0};
    si.uptime = (int64_t)(time_monotonic_ns() / 1000000000ULL);
    si.totalram = app_region.total_ram;
    /* Free: what brk and mmap can still hand out. */
    uint64_t area = proc.heap_end - ALIGN_UP(proc.brk, PAGE_SIZE);
    uint64_t used = mapped_bytes();
    si.freeram = area > used ? area - used : 0;
    si.procs = 1;
    si.mem_unit = 1;
    return copy_to_user(a0, &si, sizeof si);
}
