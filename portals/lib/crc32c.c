/* CRC32C (Castagnoli), byte-table driven.  The table is built on first use
 * instead of being spelled out, so there is nothing to mistype. */
#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include "ptl_wire.h"

static uint32_t table[256];
static bool table_ready;

static void build_table(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        table[i] = c;
    }
    table_ready = true;
}

uint32_t ptl_crc32c(uint32_t crc, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    if (!table_ready)
        build_table();
    while (len--)
        crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return crc;
}
