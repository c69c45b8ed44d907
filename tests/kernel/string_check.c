/* The kernel's memcpy (kernel/lib/string.c) built for the host under other
 * names (tests/test_kernel_string.py): both ways it copies (64-byte blocks,
 * `rep movsq`) give the bytes of the source, for every length up to 300 and
 * every alignment of source and destination, and touch nothing outside the
 * destination. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

void *k_memcpy(void *d, const void *s, size_t n);
void string_copy_blocks(bool on);

int main(void)
{
    static unsigned char src[512], dst[512], want[512];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (unsigned char)(i * 131 + 7);
    long checked = 0;
    for (int blocks = 0; blocks < 2; blocks++) {
        string_copy_blocks(blocks);
        for (size_t n = 0; n <= 300; n++)
            for (size_t so = 0; so < 8; so++)
                for (size_t doff = 0; doff < 8; doff++) {
                    memset(dst, 0xA5, sizeof dst);
                    memset(want, 0xA5, sizeof want);
                    memcpy(want + 64 + doff, src + so, n);
                    void *r = k_memcpy(dst + 64 + doff, src + so, n);
                    if (r != dst + 64 + doff || memcmp(dst, want, sizeof dst)) {
                        printf("FAIL blocks=%d n=%zu src+%zu dst+%zu\n", blocks, n, so, doff);
                        return 1;
                    }
                    checked++;
                }
    }
    printf("memcpy ok: %ld copies\n", checked);
    return 0;
}
