/* Things every kernel file uses: printing, panics, the string functions. */
#ifndef TERN_KERNEL_H
#define TERN_KERNEL_H
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "layout.h"

#define ALIGN_UP(x, a)   (((x) + ((a) - 1)) & ~((uint64_t)(a) - 1))
#define ALIGN_DOWN(x, a) ((x) & ~((uint64_t)(a) - 1))
#define ARRAY_SIZE(a)    (sizeof(a) / sizeof((a)[0]))
#define KiB(x) ((uint64_t)(x) << 10)
#define MiB(x) ((uint64_t)(x) << 20)
#define GiB(x) ((uint64_t)(x) << 30)

static inline void *phys_to_virt(uint64_t pa) { return (void *)(pa + PHYS_BASE); }
static inline uint64_t kernel_virt_to_phys(const void *va) { return (uint64_t)va - KERNEL_VMA; }

/* lib/string.c */
void *memcpy(void *d, const void *s, size_t n);
/* memcpy in 64-byte blocks of loads then stores rather than `rep movsq`
 * (lib/string.c says when each is faster; cpu_init chooses). */
void string_copy_blocks(bool on);
void *memmove(void *d, const void *s, size_t n);
void *memset(void *d, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
/* -ffreestanding makes every memcpy and memset a call, even of 6 bytes,
 * and under a binary translator (TCG) a call, its `rep` steps and its
 * return cost ~55 instructions where a few moves would do: 35 such calls a
 * 0-byte message round trip.  Through the builtins the compiler moves
 * small constant sizes inline and calls lib/string.c for the rest. */
#ifndef KERNEL_STRING_IMPL
#define memcpy(d, s, n) __builtin_memcpy(d, s, n)
#define memset(d, c, n) __builtin_memset(d, c, n)
#endif
size_t strlen(const char *s);
size_t strnlen(const char *s, size_t max);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
char *strchr(const char *s, int c);
size_t strlcpy(char *d, const char *s, size_t n);

/* lib/printf.c */
int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Kernel log: COM1, every line prefixed "tern: ". */
void kprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
bool parse_size(const char *s, uint64_t *out);

/* node.c: how a node's run ends */
enum end_kind { END_EXIT, END_SIGNAL, END_PANIC, END_LOAD_ERROR };
__attribute__((noreturn)) void node_end(enum end_kind kind, int code);
/* Who owns the program's end: a job (kernel/job/) while it is active, and
 * the node goes on serving jobs; nobody under qemu/run-node, where the
 * program's end is the node's. */
struct node_owner {
    void (*fault)(const char *report, uint64_t len);    /* an application fault's report */
    void (*end)(enum end_kind kind, int code, const char *why);    /* does not return */
};
void node_set_owner(const struct node_owner *owner);    /* NULL: none */
__attribute__((noreturn, format(printf, 1, 2))) void panic(const char *fmt, ...);
__attribute__((noreturn, format(printf, 1, 2))) void load_error(const char *fmt, ...);
/* The kernel ends the program (it can never go on): the message is reported
 * like a fault's, to the log and the user's stderr, and the run ends as if
 * killed by sig. */
__attribute__((noreturn, format(printf, 2, 3))) void program_killed(int sig, const char *fmt, ...);
/* The end of the program at a fault: its report (whole lines, already
 * logged) goes to the host link and to the job's owner (the user's
 * stderr), then the run ends as if killed by sig. */
__attribute__((noreturn)) void program_fault(const char *report, uint64_t len, int sig);

#endif
