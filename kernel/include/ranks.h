/* Ranks per core on one node (kernel/ranks.c): K copies of the program, each
 * its own process (own physically contiguous region, own page tables) on
 * cores of its own (C/K of the node's C, its threads' too).  Started with the kernel option ranks=K (qemu/run-node
 * --ranks K); docs/kernel.md, "Ranks per core". */
#ifndef TERN_RANKS_H
#define TERN_RANKS_H
#include <stdbool.h>
#include <stdint.h>
#include "kernel.h"

#define MAX_RANKS 64
struct process;

/* Whether this node runs several ranks (set once their images are loaded). */
bool ranks_active(void);
/* Splits the application region K ways (the rest of the node untouched),
 * moves the program's file out of the way and loads it into every rank's
 * region.  A node with fewer CPUs than K is refused (load_error). */
void ranks_load(const uint8_t *image, uint64_t size, unsigned k, const char *name);
/* Builds every rank's stack (TERN_RANK, TERN_SIZE before envp), starts
 * ranks 1.. on CPUs 1.. and runs rank 0 here, on CPU 0 (qemu/run-node). */
__attribute__((noreturn)) void ranks_start(char **argv, int argc, char **envp, int envc);
/* The same in two steps (a job's, kernel/job/loader.c): rank r's stack
 * with exactly this environment, then every rank started. */
void ranks_prepare(unsigned r, char **argv, int argc, char **envp, int envc);
__attribute__((noreturn)) void ranks_run(void);
unsigned ranks_count(void);            /* 1 without ranks */
/* The rank number a process is known by: a job's (yod -ppn) counts from
 * the node's first rank, set with ranks_set_base; else its index. */
void ranks_set_base(unsigned base);
unsigned ranks_number(const struct process *p);
struct process *ranks_process(unsigned r);
/* A job has ended on this node: the ranks' processes go (their memory is
 * cleared with the rest, mem/dirty.c), the first process has the whole
 * region again, and every CPU runs on its page tables. */
void ranks_reset(void);
/* A signal from yod: to every rank still running (to the process without
 * ranks). */
void ranks_signal_all(int sig);
/* Called with each rank's own end (its exit, fault or fatal signal), on its
 * core, before its thread leaves (a job reports it to yod). */
void ranks_set_end_hook(void (*fn)(unsigned rank, enum end_kind kind, int code));
/* The calling CPU's rank ends (node_end's first step for an exit or a
 * signal).  Returns only when the node's run ends with it, with *kind and
 * *code the node's: the first failed rank's end, else exit 0; otherwise its
 * thread leaves its core and the other ranks go on. */
bool ranks_end_one(enum end_kind *kind, int *code);
/* Every rank has ended (each counted before its end is reported): the
 * node's end is decided, though the core carrying it may not have begun
 * it yet.  False without ranks. */
bool ranks_all_ended(void);
#endif
