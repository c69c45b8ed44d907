/* yod's reading of a program's symbol table (program_may_start_threads,
 * yod/program.c), built with the sanitizers by tests/test_yod_threads.py:
 * the answers for real programs given on the command line as NAME=yes|no,
 * then damaged copies of the first (every length cut short, bytes of its
 * section headers and symbol table changed) read without a fault.
 * Prints "ok N damaged copies" or what went wrong. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "yod.h"

struct yod Y;

/* Writes d to tmp and reads it back as yod would; the answer does not
 * matter for a damaged copy, only that reading it is sound. */
static void read_damaged(const uint8_t *d, size_t len, const char *tmp)
{
    FILE *f = fopen(tmp, "wb");
    if (!f || fwrite(d, 1, len, f) != len || fclose(f))
        exit(2);
    struct program p;
    char err[256];
    const char *why = "";
    if (program_read(&p, tmp, err, sizeof err) == 0)
        (void)program_may_start_threads(&p, &why);
    free(p.data);
    free(p.path);
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    const char *tmp = argv[1];
    uint8_t *first = NULL;
    size_t first_len = 0;
    for (int i = 2; i < argc; i++) {
        char *eq = strrchr(argv[i], '=');
        if (!eq)
            return 2;
        *eq = 0;
        struct program p;
        char err[256];
        const char *why = "";
        if (program_read(&p, argv[i], err, sizeof err)) {
            printf("%s: %s\n", argv[i], err);
            return 1;
        }
        bool may = program_may_start_threads(&p, &why);
        if (may != !strcmp(eq + 1, "yes")) {
            printf("%s: may start threads %s (%s), expected %s\n", argv[i], may ? "yes" : "no",
                   why ? why : "-", eq + 1);
            return 1;
        }
        if (!first)
            first = p.data, first_len = p.len;
        else
            free(p.data);
        free(p.path);
    }
    long damaged = 0;
    for (size_t len = 64; len < first_len; len += 1 + len / 64, damaged++)
        read_damaged(first, len, tmp);
    uint8_t *copy = malloc(first_len);
    srand(1);
    for (int k = 0; k < 3000; k++, damaged++) {
        memcpy(copy, first, first_len);
        for (int j = 0; j < 8; j++) {
            /* Mostly the tail (section headers, symbol and string tables). */
            size_t at = rand() % 4 ? first_len - 1 - (size_t)rand() % (first_len / 4)
                                   : (size_t)rand() % first_len;
            copy[at] = (uint8_t)rand();
        }
        read_damaged(copy, first_len, tmp);
    }
    free(copy);
    free(first);
    printf("ok %ld damaged copies\n", damaged);
    return 0;
}
