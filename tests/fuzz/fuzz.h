/* What every libFuzzer harness of tests/fuzz/ shares: set-up and seed
 * writing around LLVMFuzzerInitialize, and reading an input as a stream
 * of little-endian fields.
 *
 * A harness defines fuzz_setup() (once per process) and
 * fuzz_write_seeds(dir); with TERN_FUZZ_SEEDS=DIR in the environment the
 * harness writes its seed inputs (well-formed messages built from the real
 * protocol headers) into DIR and exits, which is how tests/fuzz/run.py
 * starts each corpus. */
#ifndef TERN_FUZZ_H
#define TERN_FUZZ_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Set-up that must work (0 is success: PTL_OK, and the C library's). */
#define FUZZ_OK(expr)                                                          \
    do {                                                                       \
        long rc_ = (long)(expr);                                               \
        if (rc_ != 0) {                                                        \
            fprintf(stderr, "%s:%d: %s returned %ld\n", __FILE__, __LINE__,   \
                    #expr, rc_);                                               \
            abort();                                                           \
        }                                                                      \
    } while (0)

static void fuzz_setup(void);
static void fuzz_write_seeds(const char *dir);

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    fuzz_setup();
    const char *dir = getenv("TERN_FUZZ_SEEDS");
    if (dir) {
        fuzz_write_seeds(dir);
        exit(0);
    }
    return 0;
}

static inline void fuzz_seed(const char *dir, const char *name, const void *data, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "wb");
    if (!fp || fwrite(data, 1, n, fp) != n || fclose(fp)) {
        perror(path);
        exit(1);
    }
}

/* An input read front to back; past its end every field reads as 0. */
struct fuzz_in {
    const uint8_t *p;
    size_t n;
};

static inline uint64_t fuzz_uint(struct fuzz_in *in, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes && in->n; i++, in->p++, in->n--)
        v |= (uint64_t)in->p[0] << (8 * i);
    return v;
}

/* Up to len bytes of the input (fewer at its end); *got says how many. */
static inline const uint8_t *fuzz_bytes(struct fuzz_in *in, size_t len, size_t *got)
{
    const uint8_t *p = in->p;
    *got = len < in->n ? len : in->n;
    in->p += *got;
    in->n -= *got;
    return p;
}

/* Appends a field to a seed being built. */
static inline size_t fuzz_put(uint8_t *out, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        out[i] = (uint8_t)(v >> (8 * i));
    return (size_t)bytes;
}
#endif
