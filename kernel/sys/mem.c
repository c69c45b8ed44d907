/* Memory system calls.  All application memory is real: the heap area
 * between the program image and the stack is backed and mapped from the
 * start.  brk grows up from the image; mmap carves ranges down from the top
 * of the heap area.  Handing memory out means zeroing it (Linux semantics);
 * giving it back only updates the bookkeeping.  Protection is not enforced
 * below 2 MiB granularity: mprotect succeeds without changing the mapping.
 * PROT_NONE mappings reserve address space outside the program's region
 * instead, committed when made accessible (mem/reserve.c).  A file's
 * shared mappings are kept in step with it by sys/file_map.c. */
#include "boot.h"
#include "fd.h"
#include "file_map.h"
#include "time.h"
#include "kernel.h"
#include "mem.h"
#include "reserve.h"
#include "syscall.h"
#include "uaccess.h"

#define PROT_NONE 0
#define PROT_WRITE 2
#define O_ACCMODE 3
#define O_WRONLY 1
#define O_RDWR 2
#define MAP_SHARED 0x01
#define MAP_PRIVATE 0x02
#define MAP_FIXED 0x10
#define MAP_ANONYMOUS 0x20
#define MAP_FIXED_NOREPLACE 0x100000
#define MREMAP_MAYMOVE 1
#define MREMAP_FIXED 2
#define MADV_DONTNEED 4
#define MS_ASYNC 1
#define MS_INVALIDATE 2
#define MS_SYNC 4

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

static uint64_t find_gap(uint64_t len)
{
    return ranges_find_gap(heap_list(), heap_low(), proc.heap_end, len, PAGE_SIZE, 0);
}

/* A file's mapping is a copy of its bytes, read in when it is made: what a
 * private mapping is.  A shared one is kept in step with the file while it
 * lives (sys/file_map.c). */
static long map_file(uint64_t fd, uint64_t prot, uint64_t flags, struct fd **out)
{
    struct fd *f = (int64_t)fd < 0 ? NULL : fd_get(fd);
    if (!f)
        return -EBADF;
    if (f->kind != FD_FILE || f->of->dir)
        return -ENODEV;
    if ((f->flags & O_ACCMODE) == O_WRONLY)
        return -EACCES;                /* a mapping is read from the file */
    if ((flags & MAP_SHARED) && (prot & PROT_WRITE) && (f->flags & O_ACCMODE) != O_RDWR)
        return -EACCES;                /* stores would reach a file opened for reading */
    *out = f;
    return 0;
}

/* The file's bytes from off into the new mapping [start, start + len);
 * past its end the mapping stays zero. */
static long map_read(struct fd *f, uint64_t start, uint64_t len, uint64_t off)
{
    for (uint64_t done = 0; done < len;) {
        long n = file_rw(f, start + done, len - done, (int64_t)(off + done), false);
        if (n < 0)
            return n;
        if (n == 0)
            break;
        done += (uint64_t)n;
    }
    return 0;
}

SYSCALL(mmap)
{
    UNUSED_ARGS();
    uint64_t addr = a0, len = a1, prot = a2, flags = a3;
    struct fd *file = NULL;
    if (!(flags & MAP_ANONYMOUS)) {
        long r = map_file(a4, prot, flags, &file);
        if (r)
            return r;
        if ((int64_t)a5 < 0)
            return -EINVAL;
    }
    if (a5 & (PAGE_SIZE - 1))
        return -EINVAL;
    if (len == 0 || (flags & (MAP_SHARED | MAP_PRIVATE)) == 0)
        return -EINVAL;
    if (len > USER_TOP)
        return -ENOMEM;
    len = ALIGN_UP(len, PAGE_SIZE);
    bool fixed = flags & (MAP_FIXED | MAP_FIXED_NOREPLACE);
    if (fixed && (addr & (PAGE_SIZE - 1)))
        return -EINVAL;
    bool shared_file = file && (flags & MAP_SHARED);
    /* Outside the region, and every PROT_NONE mapping: address space only. */
    if ((fixed && !in_window(addr, addr + len)) || (!fixed && prot == PROT_NONE)) {
        /* Committed memory there may go again (mprotect PROT_NONE): no
         * shared file mapping is kept in step there, and a writable one
         * is refused. */
        if (shared_file && (prot & PROT_WRITE))
            return -ENODEV;
        long at = reserve_map(addr, len, prot != PROT_NONE,
                              !fixed ? RESERVE_HINT
                                     : (flags & MAP_FIXED_NOREPLACE) ? RESERVE_NOREPLACE
                                                                     : RESERVE_FIXED);
        if (at >= 0 && file && prot != PROT_NONE) {
            long r = map_read(file, (uint64_t)at, len, a5);
            if (r) {
                reserve_unmap((uint64_t)at, (uint64_t)at + len);
                return r;
            }
        }
        return at;
    }
    uint64_t start;
    if (fixed) {
        if (addr < heap_low() || addr + len > proc.heap_end || addr + len < addr)
            return -ENOMEM;  /* only the heap area is available for mappings */
        if (!ranges_free(heap_list(), addr, addr + len)) {
            if (flags & MAP_FIXED_NOREPLACE)
                return -EEXIST;
            long r = file_map_cut(addr, addr + len);
            if (!r)
                r = ranges_remove(heap_list(), addr, addr + len);
            if (r)
                return r;
        }
        start = addr;
    } else {
        start = find_gap(len);
        if (!start)
            return -ENOMEM;
    }
    long r = ranges_insert(heap_list(), start, start + len);
    if (r)
        return r;
    memset((void *)start, 0, len);
    if (file && ((r = map_read(file, start, len, a5)) ||
                 (shared_file && (r = file_map_add(file, start, len, a5, prot & PROT_WRITE))))) {
        ranges_remove(heap_list(), start, start + len);
        return r;
    }
    return (long)start;
}

SYSCALL(munmap)
{
    UNUSED_ARGS();
    if ((a0 & (PAGE_SIZE - 1)) || a1 == 0 || a0 + a1 < a0 || a0 + a1 > USER_TOP)
        return -EINVAL;
    uint64_t s = a0, e = a0 + ALIGN_UP(a1, PAGE_SIZE);
    /* The part inside the region, and what lies outside it. */
    uint64_t ws = s > proc.vbase ? s : proc.vbase, we = e < proc.vend ? e : proc.vend;
    long r = file_map_cut(s, e);       /* a shared file mapping's stores reach the file */
    if (!r && ws < we)
        r = ranges_remove(heap_list(), ws, we);
    if (!r && s < proc.vbase)
        r = reserve_unmap(s, e < proc.vbase ? e : proc.vbase);
    if (!r && e > proc.vend)
        r = reserve_unmap(s > proc.vend ? s : proc.vend, e);
    return r;
}

/* mincore: every page a program can reach is resident (nothing is paged);
 * a reserved page not yet made accessible is mapped but not resident (0);
 * an address outside both is ENOMEM, as an unmapped one is on Linux
 * (garbage collectors and unwinders ask it whether memory is there). */
SYSCALL(mincore)
{
    UNUSED_ARGS();
    if ((a0 & (PAGE_SIZE - 1)) || a0 + a1 < a0)
        return -EINVAL;
    uint64_t pages = ALIGN_UP(a1, PAGE_SIZE) / PAGE_SIZE;
    if (!user_ok(a2, pages))
        return -EFAULT;
    uint8_t chunk[256];
    for (uint64_t done = 0; done < pages;) {
        uint64_t n = pages - done < sizeof chunk ? pages - done : sizeof chunk;
        for (uint64_t i = 0; i < n; i++) {
            uint64_t p = a0 + (done + i) * PAGE_SIZE;
            if (user_ok(p, PAGE_SIZE))
                chunk[i] = 1;
            else if (reserve_covers(p, p + PAGE_SIZE))
                chunk[i] = 0;
            else
                return -ENOMEM;
        }
        if (copy_to_user(a2 + done, chunk, n))
            return -EFAULT;
        done += n;
    }
    return 0;
}

static const struct mapping *mapping_containing(uint64_t s, uint64_t e)
{
    for (int i = 0; i < proc.nmaps; i++)
        if (proc.maps[i].start <= s && e <= proc.maps[i].end)
            return &proc.maps[i];
    return NULL;
}

static long remap(uint64_t old, uint64_t old_len, uint64_t new_len, uint64_t flags);

SYSCALL(mremap)
{
    UNUSED_ARGS();
    uint64_t old = a0, old_len = ALIGN_UP(a1, PAGE_SIZE), new_len = ALIGN_UP(a2, PAGE_SIZE);
    uint64_t flags = a3;
    if ((old & (PAGE_SIZE - 1)) || new_len == 0 || (flags & ~3ULL))
        return -EINVAL;
    if (flags & MREMAP_FIXED)
        return -EINVAL;   /* not supported: callers fall back to mmap + copy */
    if (old_len == 0)
        return -EFAULT;
    long shared = file_map_remap_begin(old, old_len, new_len);
    if (shared < 0)
        return shared;
    long r = remap(old, old_len, new_len, flags);
    if (shared)
        file_map_remap_end(r);
    return r;
}

static long remap(uint64_t old, uint64_t old_len, uint64_t new_len, uint64_t flags)
{
    if (!mapping_containing(old, old + old_len)) {
        /* The image, the break's heap and the stack are mapped for good:
         * none of them grows where it is (Linux says ENOMEM for that).
         * musl's pthread_getattr_np counts the first thread's stack pages
         * by growing each in turn until that fails otherwise; with EFAULT
         * here it found one page. */
        bool fixed = (old >= proc.map_lo && old + old_len <= ALIGN_UP(proc.brk, PAGE_SIZE)) ||
                     (old >= proc.stack_lo && old + old_len <= proc.vend);
        return fixed && new_len > old_len ? -ENOMEM : -EFAULT;
    }
    if (new_len <= old_len) {
        if (new_len < old_len)
            ranges_remove(heap_list(), old + new_len, old + old_len);
        return (long)old;
    }
    uint64_t grow_end = old + new_len;
    if (grow_end <= proc.heap_end && grow_end > old &&
        ranges_free(heap_list(), old + old_len, grow_end)) {
        long r = ranges_insert(heap_list(), old + old_len, grow_end);
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
    long r = ranges_insert(heap_list(), dst, dst + new_len);
    if (r)
        return r;
    memmove((void *)dst, (void *)old, old_len);
    memset((void *)(dst + old_len), 0, new_len - old_len);
    ranges_remove(heap_list(), old, old + old_len);
    return (long)dst;
}

/* A range the program may name in mprotect, madvise, msync, mlock: page
 * aligned start, and either in the region or all reserved. */
static long named_range(uint64_t addr, uint64_t len, uint64_t *end)
{
    if (addr & (PAGE_SIZE - 1))
        return -EINVAL;
    *end = addr + ALIGN_UP(len, PAGE_SIZE);
    if (*end < addr)
        return -ENOMEM;
    if (in_window(addr, *end))
        return user_ok(addr, *end - addr) ? 0 : -ENOMEM;
    return reserve_covers(addr, *end) ? 0 : -ENOMEM;
}

SYSCALL(mprotect)
{
    UNUSED_ARGS();
    uint64_t end;
    long r = named_range(a0, a1, &end);
    if (!r && in_window(a0, end) && (a2 & PROT_WRITE))
        r = file_map_protect(a0, end);   /* a shared file mapping made writable */
    if (r || in_window(a0, end))
        return r;
    return reserve_protect(a0, end, (a2 & 7) != PROT_NONE);
}

SYSCALL(madvise)
{
    UNUSED_ARGS();
    uint64_t end;
    long r = named_range(a0, a1, &end);
    if (r)
        return r;
    if (!in_window(a0, end))
        return reserve_advise(a0, end, a2 == MADV_DONTNEED);
    if (a2 == MADV_DONTNEED)
        file_map_zero_rest(a0, end);       /* the next touch must see zeros */
    return 0;
}

/* A shared file mapping's changed pages are written back now, with
 * MS_ASYNC too (a node has no daemon to do it later); anonymous memory has
 * nothing to write. */
SYSCALL(msync)
{
    UNUSED_ARGS();
    uint64_t end;
    if ((a2 & ~(uint64_t)(MS_ASYNC | MS_INVALIDATE | MS_SYNC)) ||
        (a2 & (MS_ASYNC | MS_SYNC)) == (MS_ASYNC | MS_SYNC))
        return -EINVAL;
    long r = named_range(a0, a1, &end);
    return r ? r : file_map_sync(a0, end);
}

/* Every byte of a program's memory is resident already: locking it is a
 * promise kept.  (Linux rounds the start down for mlock.) */
SYSCALL(mlock)
{
    UNUSED_ARGS();
    uint64_t end;
    return named_range(ALIGN_DOWN(a0, PAGE_SIZE), a1 + (a0 & (PAGE_SIZE - 1)), &end);
}

SYSCALL(mlock2)
{
    UNUSED_ARGS();
    if (a2 & ~1ULL)                       /* MLOCK_ONFAULT */
        return -EINVAL;
    return sys_mlock(a0, a1, 0, 0, 0, 0);
}

SYSCALL(mlockall)
{
    UNUSED_ARGS();
    /* MCL_CURRENT 1, MCL_FUTURE 2, MCL_ONFAULT 4 (not alone) */
    if (!a0 || (a0 & ~7ULL) || a0 == 4)
        return -EINVAL;
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
    si.totalram = app_memory_bytes();
    si.freeram = heap_free_bytes();
    si.procs = 1;
    si.mem_unit = 1;
    return copy_to_user(a0, &si, sizeof si);
}
