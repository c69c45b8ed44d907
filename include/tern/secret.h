/* The per-cluster secret that authorises service-node programs: 32 random
 * bytes, stored as 64 hex digits in a file only root can read. */
#ifndef TERN_SECRET_H
#define TERN_SECRET_H
#include <stdbool.h>
#include <stdint.h>
#include <tern/tern_proto.h>

int secret_load(const char *path, uint8_t out[TERN_SECRET_BYTES], char *err, int errlen);
bool secret_equal(const uint8_t a[TERN_SECRET_BYTES], const uint8_t b[TERN_SECRET_BYTES]);
#endif
