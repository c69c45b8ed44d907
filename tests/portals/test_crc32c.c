/* CRC32C implementations against each other and against a bit-at-a-time
 * reference written here from the definition: random data at every
 * alignment, lengths 0..300 and large buffers, and split (incremental)
 * computations.  The SSE4.2 path is checked whenever the CPU has it (and
 * the test says which path it could not check). */
#include "tp.h"
#include "ptl_wire.h"

static uint32_t ref(uint32_t crc, const uint8_t *p, size_t n)
{
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++)
            crc = (crc & 1) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
    }
    return crc;
}

static uint64_t rs = 0x9E3779B97F4A7C15ull;
static uint8_t rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (uint8_t)(rs >> 32);
}

int main(void)
{
    enum { BIG = 1 << 20 };
    uint8_t *buf = malloc(BIG + 16);
    CHECK(buf);
    for (size_t i = 0; i < BIG + 16; i++)
        buf[i] = rnd();
    int hw = ptl_crc32c_hw_available();
    unsigned checked = 0;
    for (size_t align = 0; align < 16; align++) {
        for (size_t len = 0; len <= 300; len++) {
            const uint8_t *p = buf + align + len * 7 % 512;
            uint32_t seed = len & 1 ? PTL_CRC32C_INIT : (uint32_t)len * 77u;
            uint32_t want = ref(seed, p, len);
            CHECK(ptl_crc32c_sw(seed, p, len) == want);
            CHECK(ptl_crc32c_hw(seed, p, len) == want);
            CHECK(ptl_crc32c(seed, p, len) == want);
            checked++;
        }
    }
    for (size_t align = 0; align < 8; align++) {
        size_t len = BIG - align * 3;
        uint32_t want = ref(PTL_CRC32C_INIT, buf + align, len);
        CHECK(ptl_crc32c_sw(PTL_CRC32C_INIT, buf + align, len) == want);
        CHECK(ptl_crc32c_hw(PTL_CRC32C_INIT, buf + align, len) == want);
        /* Split at odd points: chaining the partial CRCs is the same. */
        size_t cut = 1 + (size_t)rnd() * 37;
        uint32_t c = ptl_crc32c(PTL_CRC32C_INIT, buf + align, cut);
        c = ptl_crc32c(c, buf + align + cut, len - cut);
        CHECK(c == want);
        checked++;
    }
    printf("crc32c: %u cases, hardware path %s\n", checked,
           hw ? "checked" : "NOT available on this CPU (tables only)");
    free(buf);
    printf("test_crc32c: PASS\n");
    return 0;
}
