/* What the boot loader told us (multiboot v1), copied into kernel memory
 * before anything can overwrite it, and the options parsed from it. */
#ifndef TERN_BOOT_H
#define TERN_BOOT_H
#include <stdbool.h>
#include <stdint.h>

#define MAX_RAM_RANGES 32
#define MAX_MODULES 4
#define CMDLINE_MAX 8192
#define MAX_ARGS 512

struct mem_range { uint64_t start, end; };

struct boot_module {
    uint64_t start, end;           /* physical */
    char cmdline[CMDLINE_MAX];
};

struct bootinfo {
    char cmdline[CMDLINE_MAX];
    struct mem_range ram[MAX_RAM_RANGES];
    int nram;
    struct boot_module mod[MAX_MODULES];
    int nmods;
};

/* Where the program's fd 0 reads from. */
enum stdin_mode {
    STDIN_NONE,        /* nothing: end of file at once (a console that looks like a tty) */
    STDIN_PIPE,        /* forwarded over the host link, not a terminal */
    STDIN_TTY,         /* forwarded over the host link from a terminal */
};

/* Kernel options (see docs/kernel.md for the list). */
struct boot_options {
    uint64_t stack_size;           /* application stack */
    uint64_t heap_size;            /* 0: all that is left */
    bool hostlink;                 /* hostlink=com2 */
    enum stdin_mode stdin_mode;    /* stdin=pipe|tty (with hostlink=com2) */
    int exit_port;                 /* exit=qemu: isa-debug-exit port, or 0 */
    uint32_t uid, gid;
    uint32_t alloc_nid;            /* alloc_nid=N: where the allocator runs (default 0) */
    bool nettest_echo;             /* nettest=echo: NIC driver test, no program */
    bool nettest_ping;             /* nettest=ping: the other side of it (nettest.c) */
    bool nettest_barrier;          /* nettest=barrier: a barrier's floor (nettest_barrier.c) */
    bool smptest;                  /* smptest=1: check the CPUs' IPIs etc. at boot */
    unsigned ranks;                /* ranks=K: the program K times, one per core (ranks.c) */
    unsigned end_hold_ms;          /* end_hold=MS: testing, a job's end waits MS ms
                                    * after its last rank's end is reported (end.c) */
    bool payload_crc;              /* payload_crc=1: Portals checksums payloads too
                                    * (a fabric that can deliver damaged frames) */
    unsigned msgtrace_cpus;        /* msgtrace=K: the message-path trace's rings for
                                    * K CPUs set aside at boot (msgtrace.c) */
    int64_t kmem_size;             /* kmem=SIZE: kernel heap; -1: default */
    int64_t nid;                   /* nid=N: Portals node id; -1: from the MAC */
    unsigned mtu;                  /* mtu=N: the fabric's MTU, for a NIC that cannot
                                    * state one (e1000); 0: not given */
    char *envp[MAX_ARGS];          /* words after "--" */
    int envc;
};

extern struct bootinfo bootinfo;
extern struct boot_options options;

void bootinfo_read(uint32_t magic, uint64_t info_phys);
void options_parse(void);
/* Splits a command line in place into words (spaces separate, "..." groups,
 * backslash escapes); returns the count, at most max. */
int split_words(char *s, char **words, int max);
#endif
