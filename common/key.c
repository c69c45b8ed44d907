#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <tern/key.h>

int key_random(uint8_t *out, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = getrandom(out + got, n - got, 0);
        if (r < 0 && errno != EINTR)
            return -1;
        if (r > 0)
            got += (size_t)r;
    }
    return 0;
}

static int key_read(const char *path, uint8_t out[TERN_KEY_BYTES], char *err, int errlen)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char hex[2 * TERN_KEY_BYTES + 2] = "";
    bool ok = fgets(hex, sizeof hex, f) != NULL;
    fclose(f);
    for (int i = 0; ok && i < TERN_KEY_BYTES; i++) {
        unsigned v;
        ok = sscanf(hex + 2 * i, "%2x", &v) == 1;
        out[i] = (uint8_t)v;
    }
    if (!ok) {
        snprintf(err, (size_t)errlen, "%s: expected %d hex digits", path, 2 * TERN_KEY_BYTES);
        return -2;
    }
    return 0;
}

int key_load_or_create(const char *path, uint8_t out[TERN_KEY_BYTES], char *err, int errlen)
{
    int rc = key_read(path, out, err, errlen);
    if (rc == 0)
        return 0;
    if (rc == -2)
        return -1;
    if (key_random(out, TERN_KEY_BYTES)) {
        snprintf(err, (size_t)errlen, "no random bytes for a key: %s", strerror(errno));
        return -1;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        snprintf(err, (size_t)errlen, "cannot create the key file %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    for (int i = 0; i < TERN_KEY_BYTES; i++)
        fprintf(f, "%02x", out[i]);
    fprintf(f, "\n");
    if (fclose(f)) {
        snprintf(err, (size_t)errlen, "cannot write the key file %s", path);
        return -1;
    }
    return 0;
}
