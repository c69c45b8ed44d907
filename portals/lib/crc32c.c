/* CRC32C (Castagnoli).  Every frame is checksummed once on send and once on
 * receive, so this is the library's only per-byte cost besides the copy
 * into the user buffer; a byte-at-a-time table (~1.5 ns/byte) dominated the
 * latency of large frames.  Two paths, same result:
 *
 *   - the SSE4.2 `crc32` instruction, 8 bytes per instruction.  It works on
 *     general-purpose registers only, so it is legal in the kernel's
 *     -mgeneral-regs-only build.  Whether the CPU has it is asked once with
 *     CPUID (inline asm: there is no libc to ask).
 *   - slice-by-8 tables in portable C for other CPUs (8 lookups per 8
 *     bytes instead of one chain of 8 dependent lookups).
 *
 * The instruction is not always the faster one: an emulator may run it bit
 * by bit (QEMU TCG: 19 us for a 1500-byte frame against 5 us for the
 * tables), while on hardware it is about five times faster than the tables.
 * So ptl_crc32c times both once, on first use, and keeps the faster.  An
 * emulator may also lack it altogether: the KVM of our build machines
 * (kvm_pvm) emulates guest kernel mode, its emulator has no `crc32`, and
 * meeting one stops the VM, so the Tern kernel forbids it there
 * (ptl_crc32c_forbid_hw) before the first checksum.
 *
 * Tables are built on first use rather than spelled out, so there is
 * nothing to mistype.  The library calls this with its lock held; a race on
 * first use would only build identical tables twice. */
#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include "ptl_host.h"
#include "ptl_wire.h"

#define POLY 0x82F63B78u /* reflected Castagnoli polynomial */

static uint32_t tab[8][256];
static bool tab_ready;
/* 0: not probed yet, 1: instruction available, 2: not available. */
static int hw_state;
/* 0: not decided yet, 1: ptl_crc32c uses the instruction, 2: the tables. */
static int use_state;

static void build_tables(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ POLY : c >> 1;
        tab[0][i] = c;
    }
    /* tab[k][i]: CRC of byte i followed by k zero bytes. */
    for (uint32_t i = 0; i < 256; i++)
        for (int k = 1; k < 8; k++)
            tab[k][i] = (tab[k - 1][i] >> 8) ^ tab[0][tab[k - 1][i] & 0xff];
    tab_ready = true;
}

static uint32_t load32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

uint32_t ptl_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    if (!tab_ready)
        build_tables();
    while (len && ((uintptr_t)p & 7)) {
        crc = tab[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
        len--;
    }
    while (len >= 8) {
        uint32_t lo = load32(p) ^ crc, hi = load32(p + 4);
        crc = tab[7][lo & 0xff] ^ tab[6][(lo >> 8) & 0xff] ^
              tab[5][(lo >> 16) & 0xff] ^ tab[4][lo >> 24] ^
              tab[3][hi & 0xff] ^ tab[2][(hi >> 8) & 0xff] ^
              tab[1][(hi >> 16) & 0xff] ^ tab[0][hi >> 24];
        p += 8;
        len -= 8;
    }
    while (len--)
        crc = tab[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return crc;
}

#if defined(__x86_64__)
static bool cpu_has_sse42(void)
{
    uint32_t a = 1, b, c = 0, d;
    __asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
    return c & (1u << 20);
}

uint32_t ptl_crc32c_hw(uint32_t crc, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    uint64_t c = crc;
    while (len && ((uintptr_t)p & 7)) {
        __asm__("crc32b %1, %k0" : "+r"(c) : "rm"(*p));
        p++;
        len--;
    }
    while (len >= 8) {
        uint64_t v;
        __builtin_memcpy(&v, p, 8); /* aligned here; memcpy keeps it legal C */
        __asm__("crc32q %1, %0" : "+r"(c) : "rm"(v));
        p += 8;
        len -= 8;
    }
    while (len--) {
        __asm__("crc32b %1, %k0" : "+r"(c) : "rm"(*p));
        p++;
    }
    return (uint32_t)c;
}
#else
static bool cpu_has_sse42(void) { return false; }

uint32_t ptl_crc32c_hw(uint32_t crc, const void *buf, size_t len)
{
    return ptl_crc32c_sw(crc, buf, len);
}
#endif

int ptl_crc32c_hw_available(void)
{
    if (!hw_state)
        hw_state = cpu_has_sse42() ? 1 : 2;
    return hw_state == 1;
}

void ptl_crc32c_forbid_hw(void)
{
    hw_state = 2;
    use_state = 2;
}

/* Best of three runs over 2 KiB each (the first table run also builds the
 * tables); the two differ by a factor of 4-5 either way, far beyond what a
 * preempted run could blur. */
static int choose(void)
{
    if (!ptl_crc32c_hw_available())
        return 2;
    static const uint8_t probe[2048];
    volatile uint32_t sink = 0;
    uint64_t hw = UINT64_MAX, sw = UINT64_MAX;
    for (int i = 0; i < 3; i++) {
        uint64_t t0 = ptl_host_now_ns();
        sink += ptl_crc32c_hw(PTL_CRC32C_INIT, probe, sizeof(probe));
        uint64_t t1 = ptl_host_now_ns();
        sink += ptl_crc32c_sw(PTL_CRC32C_INIT, probe, sizeof(probe));
        uint64_t t2 = ptl_host_now_ns();
        if (t1 - t0 < hw)
            hw = t1 - t0;
        if (t2 - t1 < sw)
            sw = t2 - t1;
    }
    (void)sink;
    return hw <= sw ? 1 : 2;
}

uint32_t ptl_crc32c(uint32_t crc, const void *buf, size_t len)
{
    if (!use_state)
        use_state = choose();
    if (use_state == 1)
        return ptl_crc32c_hw(crc, buf, len);
    return ptl_crc32c_sw(crc, buf, len);
}
