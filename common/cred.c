/* MUNGE credentials on allocator requests: the payload is the request's
 * SHA-256, so a credential proves this request and no other, and munged
 * decodes each credential once only (a replay is refused). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <munge.h>

#include <tern/cred.h>
#include <tern/sha256.h>

static munge_ctx_t context(char *err, int errlen)
{
    munge_ctx_t ctx = munge_ctx_create();
    if (!ctx) {
        snprintf(err, (size_t)errlen, "cannot create a MUNGE context");
        return NULL;
    }
    const char *sock = getenv("TERN_MUNGE_SOCKET");
    if (sock && *sock && munge_ctx_set(ctx, MUNGE_OPT_SOCKET, sock) != EMUNGE_SUCCESS) {
        snprintf(err, (size_t)errlen, "MUNGE socket %s: %s", sock, munge_ctx_strerror(ctx));
        munge_ctx_destroy(ctx);
        return NULL;
    }
    return ctx;
}

/* SHA-256 of the request with its credential field zeroed. */
static void digest(const struct tern_hdr *req, size_t len, uint8_t out[32])
{
    static const char zero[TERN_CRED_MAX];
    size_t at = offsetof(struct tern_hdr, cred);
    struct sha256 s;
    sha256_init(&s);
    sha256_update(&s, req, at);
    sha256_update(&s, zero, sizeof zero);
    sha256_update(&s, (const char *)req + at + TERN_CRED_MAX, len - at - TERN_CRED_MAX);
    sha256_final(&s, out);
}

int cred_sign(struct tern_hdr *req, size_t len, char *err, int errlen)
{
    uint8_t d[32];
    memset(req->cred, 0, sizeof req->cred);
    digest(req, len, d);
    munge_ctx_t ctx = context(err, errlen);
    if (!ctx)
        return -1;
    char *c = NULL;
    munge_err_t e = munge_encode(&c, ctx, d, sizeof d);
    if (e != EMUNGE_SUCCESS || !c || strlen(c) >= sizeof req->cred) {
        snprintf(err, (size_t)errlen, "no MUNGE credential (is munged running? "
                 "TERN_MUNGE_SOCKET=%s): %s", getenv("TERN_MUNGE_SOCKET") ?
                 getenv("TERN_MUNGE_SOCKET") : "unset", e ? munge_ctx_strerror(ctx) : "too long");
        free(c);
        munge_ctx_destroy(ctx);
        return -1;
    }
    strcpy(req->cred, c);
    free(c);
    munge_ctx_destroy(ctx);
    return 0;
}

int cred_verify(const struct tern_hdr *req, size_t len, uint32_t *uid, uint32_t *gid, char *err,
                int errlen)
{
    if (len < sizeof *req || !memchr(req->cred, 0, sizeof req->cred) || !req->cred[0]) {
        snprintf(err, (size_t)errlen, "no MUNGE credential");
        return -1;
    }
    munge_ctx_t ctx = context(err, errlen);
    if (!ctx)
        return -1;
    void *payload = NULL;
    int plen = 0;
    uid_t u;
    gid_t g;
    munge_err_t e = munge_decode(req->cred, ctx, &payload, &plen, &u, &g);
    uint8_t d[32];
    digest(req, len, d);
    int rc = -1;
    if (e != EMUNGE_SUCCESS)
        snprintf(err, (size_t)errlen, "MUNGE credential refused: %s", munge_ctx_strerror(ctx));
    else if (plen != (int)sizeof d || !mac_equal(payload, d, sizeof d))
        snprintf(err, (size_t)errlen, "the MUNGE credential is for another request");
    else {
        *uid = (uint32_t)u;
        *gid = (uint32_t)g;
        rc = 0;
    }
    free(payload);
    munge_ctx_destroy(ctx);
    return rc;
}
