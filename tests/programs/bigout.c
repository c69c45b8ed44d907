/* Writes N bytes (argv[1]) of a known pattern to stdout in uneven chunks,
 * a line to stderr, and exits at once: every byte must still arrive. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    static char buf[70000];
    long done = 0, k = 0;
    while (done < n) {
        long chunk = 1 + (k * 7919) % (long)sizeof buf;
        if (chunk > n - done)
            chunk = n - done;
        for (long i = 0; i < chunk; i++)
            buf[i] = (char)('a' + (done + i) % 26);
        if (write(1, buf, (size_t)chunk) != chunk)
            return 1;
        done += chunk;
        k++;
    }
    fprintf(stderr, "wrote %ld bytes\n", n);
    _exit(0);
}
