/* Commits the fault named by its argument; a kernel must report it, not die. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile int depth_limit = 1 << 30;

static int recurse(volatile char *p, int depth)
{
    volatile char big[4096];
    big[0] = p ? p[0] : 0;
    if (depth > depth_limit)
        return 0;
    return recurse(big, depth + 1) + big[1];
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";
    printf("committing %s\n", what);
    fflush(stdout);
    volatile int zero = 0;
    volatile uintptr_t null_ish = 0;
    if (!strcmp(what, "null-read"))
        return *(volatile int *)null_ish;
    if (!strcmp(what, "null-write"))
        *(volatile int *)(null_ish + 8) = 1;
    else if (!strcmp(what, "kernel-write"))
        *(volatile long *)0xffffffff80100000UL = 1;
    else if (!strcmp(what, "kernel-read"))
        return (int)*(volatile long *)0xffff800000001000UL;
    else if (!strcmp(what, "stack-overflow"))
        return recurse(NULL, 0);
    else if (!strcmp(what, "divide"))
        return 10 / zero;
    else if (!strcmp(what, "illegal"))
        __asm__ volatile("ud2");
    else if (!strcmp(what, "abort"))
        abort();
    else if (!strcmp(what, "privileged"))
        __asm__ volatile("cli");
    printf("survived %s\n", what);
    return 0;
}
