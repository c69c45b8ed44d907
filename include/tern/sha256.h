/* SHA-256 (FIPS 180-4), shared by yod and the node kernel: yod hashes the
 * executable once, every node checks what it fetched before running it.
 * HMAC-SHA256 on it proves a job's messages (docs/security.md). */
#ifndef TERN_SHA256_H
#define TERN_SHA256_H
#include <stddef.h>
#include <stdint.h>

struct sha256 {
    uint32_t h[8];
    uint64_t bytes;
    uint8_t buf[64];
    unsigned fill;
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t len);
void sha256_final(struct sha256 *s, uint8_t out[32]);
void sha256(const void *data, size_t len, uint8_t out[32]);
void hmac_sha256(const uint8_t *key, size_t keylen, const void *data, size_t len,
                 uint8_t out[32]);
/* 1 if equal; the time taken does not depend on where they differ. */
int mac_equal(const uint8_t *a, const uint8_t *b, size_t len);
#endif
