/* Keys of the job authorisation (docs/security.md): random bytes, and the
 * allocator's file-server key kept beside the node database, as hex in a
 * file only root can read. */
#ifndef TERN_KEY_H
#define TERN_KEY_H
#include <stddef.h>
#include <stdint.h>
#include <tern/tern_proto.h>

/* n random bytes from the kernel: 0, or -1. */
int key_random(uint8_t *out, size_t n);
/* The key in path, made (mode 0600) if there is none: 0, or -1 with a message. */
int key_load_or_create(const char *path, uint8_t out[TERN_KEY_BYTES], char *err, int errlen);
#endif
