#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <tern/secret.h>

int secret_load(const char *path, uint8_t out[TERN_SECRET_BYTES], char *err, int errlen)
{
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f) {
        snprintf(err, (size_t)errlen, "cannot read the cluster secret %s: %s",
                 path ? path : "(TERN_SECRET_FILE unset)", path ? strerror(errno) : "");
        return -1;
    }
    char hex[2 * TERN_SECRET_BYTES + 2] = "";
    bool ok = fgets(hex, sizeof hex, f) != NULL;
    fclose(f);
    for (int i = 0; ok && i < TERN_SECRET_BYTES; i++) {
        unsigned v;
        ok = sscanf(hex + 2 * i, "%2x", &v) == 1;
        out[i] = (uint8_t)v;
    }
    if (!ok) {
        snprintf(err, (size_t)errlen, "%s: expected %d hex digits", path, 2 * TERN_SECRET_BYTES);
        return -1;
    }
    return 0;
}

bool secret_equal(const uint8_t a[TERN_SECRET_BYTES], const uint8_t b[TERN_SECRET_BYTES])
{
    uint8_t d = 0;            /* no early exit: timing says nothing */
    for (int i = 0; i < TERN_SECRET_BYTES; i++)
        d |= (uint8_t)(a[i] ^ b[i]);
    return d == 0;
}
