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
#endif
