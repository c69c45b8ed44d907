/* Lines a test can check one by one, for yod's output guarantees
 * (tests/test_yod_output.py): `lines MODE [ARG...]`.
 *   say CODE            every rank prints one line through the C library and
 *                       exits with CODE
 *   unended             every rank writes a line without a newline, exits 0
 *   flood R KIB CODE [PER]
 *                       rank R writes KIB KiB of numbered lines, then says on
 *                       stderr how many and exits with CODE; every other rank
 *                       writes numbered lines until it is killed (R = -1: all)
 * A numbered line is "RANK N PAD\n": N counts from 0 (8 digits), PAD is
 * pad_len(N) letters starting at 'a' + N % 26.  Lines go out in write()s of
 * 1 to 1500 lines, some longer than one of yod's 64 KiB puts (or PER lines
 * each, up to 4000). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const int batch[] = {1, 7, 50, 1500, 3, 200, 1};

static int pad_len(long n) { return (int)(n * 37 % 91); }

static size_t line(char *p, int rank, long n)
{
    int k = sprintf(p, "%d %08ld ", rank, n);
    for (int i = 0; i < pad_len(n); i++)
        p[k++] = (char)('a' + (n + i) % 26);
    p[k++] = '\n';
    return (size_t)k;
}

static int write_all(const char *p, size_t len)
{
    while (len) {
        ssize_t k = write(1, p, len);
        if (k <= 0)
            return -1;
        p += k;
        len -= (size_t)k;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int rank = getenv("TERN_RANK") ? atoi(getenv("TERN_RANK")) : 0;
    int size = getenv("TERN_SIZE") ? atoi(getenv("TERN_SIZE")) : 1;
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "say") && argc > 2) {
        printf("rank %d of %d says goodbye with %s\n", rank, size, argv[2]);
        return atoi(argv[2]);
    }
    if (!strcmp(mode, "unended")) {
        printf("rank %d has no newline", rank);
        return 0;
    }
    if (strcmp(mode, "flood") || argc < 5) {
        fprintf(stderr, "usage: lines say CODE | unended | flood RANK KIB CODE [PER]\n");
        return 2;
    }
    int stopper = atoi(argv[2]);
    long limit = atol(argv[3]) * 1024;
    int per = argc > 5 ? atoi(argv[5]) : 0;
    if (per < 0 || per > 4000)
        per = 4000;
    static char buf[4000 * 120];
    long n = 0, bytes = 0;
    for (unsigned b = 0; rank != stopper || bytes < limit; b++) {
        size_t len = 0;
        int k = per ? per : batch[b % (sizeof batch / sizeof batch[0])];
        for (int i = 0; i < k; i++)
            len += line(buf + len, rank, n++);
        if (write_all(buf, len))
            return 1;
        bytes += (long)len;
    }
    fprintf(stderr, "rank %d wrote %ld lines, %ld bytes\n", rank, n, bytes);
    return atoi(argv[4]);
}
