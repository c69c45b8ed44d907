/* A program whose file is 1 MiB of the word "TERNDIRT" (what `ranks scan`
 * looks for): a node stages a job's file at the top of the heap area while
 * it arrives, and the next job must not find it there. */
#include <stdint.h>

#define WORD 0x545249444E524554ULL   /* "TERNDIRT", little-endian */

static const volatile uint64_t fat[131072] = {[0 ... 131071] = WORD};

int main(int argc, char **argv)
{
    (void)argv;
    return fat[argc] != WORD;
}
