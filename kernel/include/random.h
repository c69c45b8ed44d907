#ifndef TERN_RANDOM_H
#define TERN_RANDOM_H
#include <stddef.h>
void random_init(void);
/* RDRAND where the CPU has it; otherwise a generator seeded from the TSC and
 * the RTC at boot, good for hash seeds and AT_RANDOM, not for keys. */
void random_bytes(void *buf, size_t len);
#endif
