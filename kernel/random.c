#include "cpu.h"
#include "kernel.h"
#include "random.h"
#include "time.h"
#include "x86.h"

static uint64_t state;

void random_init(void)
{
    state = rdtsc() ^ (time_boot_epoch() * 0x9E3779B97F4A7C15ULL);
}

static uint64_t next(void)
{
    if (cpu.rdrand) {
        for (int tries = 0; tries < 10; tries++) {
            uint64_t v;
            unsigned char ok;
            __asm__ volatile("rdrand %0; setc %1" : "=r"(v), "=qm"(ok));
            if (ok)
                return v;
        }
    }
    /* splitmix64, stirred with the TSC */
    uint64_t z = (state += 0x9E3779B97F4A7C15ULL ^ (rdtsc() << 17));
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

void random_bytes(void *buf, size_t len)
{
    unsigned char *p = buf;
    while (len) {
        uint64_t v = next();
        size_t k = len < 8 ? len : 8;
        memcpy(p, &v, k);
        p += k;
        len -= k;
    }
}
