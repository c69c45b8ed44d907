/* Who sends a request to the allocator: MUNGE credentials (docs/security.md).
 * munged's socket is TERN_MUNGE_SOCKET, else MUNGE's own default (the
 * installed munged of a real cluster). */
#ifndef TERN_CRED_H
#define TERN_CRED_H
#include <stddef.h>
#include <stdint.h>
#include <tern/tern_proto.h>

/* Fills req's h.cred with a credential for the first len bytes of the
 * request (its SHA-256, with h.cred zeroed): 0, or -1 with a message. */
int cred_sign(struct tern_hdr *req, size_t len, char *err, int errlen);
/* Checks req's credential against the first len bytes of it; fills the
 * uid and gid MUNGE vouches for: 0, or -1 with a message. */
int cred_verify(const struct tern_hdr *req, size_t len, uint32_t *uid, uint32_t *gid, char *err,
                int errlen);
#endif
