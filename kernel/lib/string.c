/* Freestanding string functions.  The kernel is built without SSE (so the
 * application's vector registers are never touched) and these are plain
 * byte/word loops and string instructions. */
#define KERNEL_STRING_IMPL      /* defines them: no builtin macros here */
#include "kernel.h"

/* How memcpy moves the bulk of a copy; cpu_init chooses (string_copy_blocks).
 *  - `rep movsq`, eight bytes a step, then the tail: `rep movsb` is as fast
 *    on CPUs with ERMS, but an emulator runs it a byte per step (QEMU TCG:
 *    6 us for a 1356-byte frame payload, against 0.8 us with `rep movsq`),
 *    and every received Portals payload goes through here.  Hardware,
 *    ordinary KVM, and a hypervisor that interprets kernel mode (kvm_pvm:
 *    one emulator step per instruction, so the fewest instructions win).
 *  - 64-byte blocks, eight loads then eight stores: under a binary translator
 *    (TCG) each `rep` step is a trip through the translated block and one
 *    softmmu TLB lookup per load and per store.  A block costs a quarter less
 *    per byte there (a 64 KiB Portals frame delivered in 48-50k TSC cycles
 *    rather than 61-71k), and far less where source and destination sit at
 *    the same offset of two 2 MiB-aligned regions (two ranks of one node,
 *    the same buffer of the same program: their pages share a TLB slot, so
 *    each alternating load and store evicted the other; 81-115k cycles
 *    against 190-316k for such a frame, docs/performance.md, experiment 12). */
static bool copy_blocks;

void string_copy_blocks(bool on) { copy_blocks = on; }

typedef uint64_t u64_any __attribute__((may_alias, aligned(1)));

/* No pattern matching of the block loop back into a memcpy call. */
__attribute__((optimize("no-tree-loop-distribute-patterns")))
void *memcpy(void *d, const void *s, size_t n)
{
    void *ret = d;
    if (copy_blocks) {
        u64_any *dq = d;
        const u64_any *sq = s;
        for (; n >= 64; n -= 64, dq += 8, sq += 8) {
            uint64_t a = sq[0], b = sq[1], c = sq[2], e = sq[3];
            uint64_t f = sq[4], g = sq[5], h = sq[6], i = sq[7];
            dq[0] = a, dq[1] = b, dq[2] = c, dq[3] = e;
            dq[4] = f, dq[5] = g, dq[6] = h, dq[7] = i;
        }
        d = dq, s = sq;
    }
    size_t words = n / 8, tail = n % 8;
    __asm__ volatile("rep movsq" : "+D"(d), "+S"(s), "+c"(words) : : "memory");
    __asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(tail) : : "memory");
    return ret;
}

void *memmove(void *d, const void *s, size_t n)
{
    if ((uintptr_t)d <= (uintptr_t)s || (uintptr_t)d >= (uintptr_t)s + n)
        return memcpy(d, s, n);
    char *dp = (char *)d + n - 1;
    const char *sp = (const char *)s + n - 1;
    __asm__ volatile("std; rep movsb; cld" : "+D"(dp), "+S"(sp), "+c"(n) : : "memory");
    return d;
}

/* Words, then the tail, for the reason memcpy gives: clearing a node's
 * application region after a job took 3 s per 4 MiB with `rep stosb` under
 * a hypervisor that emulates kernel mode (kvm_pvm), a step per byte. */
void *memset(void *d, int c, size_t n)
{
    void *ret = d;
    size_t words = n / 8, tail = n % 8;
    uint64_t v = 0x0101010101010101ULL * (uint8_t)c;
    __asm__ volatile("rep stosq" : "+D"(d), "+c"(words) : "a"(v) : "memory");
    __asm__ volatile("rep stosb" : "+D"(d), "+c"(tail) : "a"(v) : "memory");
    return ret;
}

int memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    for (size_t i = 0; i < n; i++)
        if (x[i] != y[i])
            return x[i] - y[i];
    return 0;
}

size_t strlen(const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    return n;
}

size_t strnlen(const char *s, size_t max)
{
    size_t n = 0;
    while (n < max && s[n])
        n++;
    return n;
}

int strcmp(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return (unsigned char)*a - (unsigned char)*b;
}

int strncmp(const char *a, const char *b, size_t n)
{
    for (; n; n--, a++, b++) {
        if (*a != *b)
            return (unsigned char)*a - (unsigned char)*b;
        if (!*a)
            return 0;
    }
    return 0;
}

char *strchr(const char *s, int c)
{
    for (;; s++) {
        if (*s == (char)c)
            return (char *)s;
        if (!*s)
            return NULL;
    }
}

size_t strlcpy(char *d, const char *s, size_t n)
{
    size_t len = strlen(s);
    if (n) {
        size_t k = len < n - 1 ? len : n - 1;
        memcpy(d, s, k);
        d[k] = 0;
    }
    return len;
}
