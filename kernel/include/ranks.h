/* Ranks per core on one node (kernel/ranks.c): K copies of the program, each
 * its own process (own physically contiguous region, own page tables) on a
 * core of its own.  Started with the kernel option ranks=K (qemu/run-node
 * --ranks K); docs/kernel.md, "Ranks per core". */
#ifndef TERN_RANKS_H
#define TERN_RANKS_H
#include <stdbool.h>
#include <stdint.h>
#include "kernel.h"

#define MAX_RANKS 64

/* Whether this node runs several ranks (set once their images are loaded). */
bool ranks_active(void);
/* Splits the application region K ways (the rest of the node untouched),
 * moves the program's file out of the way and loads it into every rank's
 * region.  A node with fewer CPUs than K is refused (load_error). */
void ranks_load(const uint8_t *image, uint64_t size, unsigned k, const char *name);
/* Builds every rank's stack (TERN_RANK, TERN_SIZE before envp), starts
 * ranks 1.. on CPUs 1.. and runs rank 0 here, on CPU 0. */
__attribute__((noreturn)) void ranks_start(char **argv, int argc, char **envp, int envc);
/* The calling CPU's rank ends (node_end's first step for an exit or a
 * signal).  Returns only when the node's run ends with it, with *kind and
 * *code the node's: the first failed rank's end, else exit 0; otherwise its
 * thread leaves its core and the other ranks go on. */
bool ranks_end_one(enum end_kind *kind, int *code);
#endif
