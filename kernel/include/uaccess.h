/* Checking pointers the application hands the kernel.  The application's
 * memory is all mapped and backed, so a range check is the whole story: a
 * pointer that passes can be used directly and will not fault.  Memory
 * committed in reserved address space (mem/reserve.c) is checked there. */
#ifndef TERN_UACCESS_H
#define TERN_UACCESS_H
#include <stdbool.h>
#include <stdint.h>
#include "errno.h"
#include "kernel.h"
#include "process.h"
#include "reserve.h"

static inline bool user_in_region(uint64_t addr, uint64_t end)
{
    return (addr >= proc.map_lo && end <= proc.guard) || (addr >= proc.stack_lo && end <= proc.vend);
}

static inline bool user_ok(uint64_t addr, uint64_t len)
{
    if (len == 0)
        return true;
    uint64_t end = addr + len;
    if (end < addr)
        return false;
    return user_in_region(addr, end) || (proc.npieces && reserve_accessible(addr, end));
}

/* user_ok, and physically contiguous: what a NIC may be given to reach. */
static inline bool user_dma_ok(uint64_t addr, uint64_t len)
{
    uint64_t end = addr + len;
    if (len == 0)
        return true;
    if (end < addr)
        return false;
    return user_in_region(addr, end) || (proc.npieces && reserve_contiguous(addr, end));
}

static inline long copy_from_user(void *dst, uint64_t src, uint64_t len)
{
    if (!user_ok(src, len))
        return -EFAULT;
    memcpy(dst, (const void *)src, len);
    return 0;
}

static inline long copy_to_user(uint64_t dst, const void *src, uint64_t len)
{
    if (!user_ok(dst, len))
        return -EFAULT;
    memcpy((void *)dst, src, len);
    return 0;
}

/* Copies a NUL-terminated string of at most max-1 bytes: -EFAULT for a bad
 * pointer, -ENAMETOOLONG when it does not fit. */
static inline long string_from_user(char *dst, uint64_t src, uint64_t max)
{
    for (uint64_t i = 0; i < max; i++) {
        if (!user_ok(src + i, 1))
            return -EFAULT;
        dst[i] = *(const char *)(src + i);
        if (!dst[i])
            return (long)i;
    }
    return -ENAMETOOLONG;
}
#endif
