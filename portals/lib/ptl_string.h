/*
 * The only C library functions the Portals library uses.  Declared here
 * rather than via <string.h> so the same sources build freestanding in the
 * kernel (-nostdinc), which provides these five.
 */
#ifndef PTL_STRING_H
#define PTL_STRING_H
#include <stddef.h>
void *memcpy(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
void *memmove(void *dst, const void *src, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
/* A freestanding build (the kernel's) would call these even for a few
 * constant bytes; the builtins move small sizes inline (kernel.h says why). */
#define memcpy(d, s, n) __builtin_memcpy(d, s, n)
#define memset(d, c, n) __builtin_memset(d, c, n)
#endif
