/* The text of /proc/self/status, statm, maps, cmdline and environ
 * (procinfo.h): the calling process on this node, not yod's process on the
 * service node a forwarded read described.  glibc's pthread_getattr_np finds the first
 * thread's stack in /proc/self/maps (it failed with ENOENT: yod's map has
 * no line holding the node's stack), as Rust's runtime, garbage collectors
 * and sanitizers do; codes that report their memory read VmRSS and VmHWM
 * in /proc/self/status (they printed yod's).
 *
 * Tern's memory is real: the whole region is the process's from its start
 * (getrusage's ru_maxrss says so too), so VmRSS, VmHWM, VmSize and VmPeak
 * are the region.  Every page a program can reach is mapped readable,
 * writable and executable; the map lists what the program was given, in
 * Linux's layout: the image under its name, [heap] (brk), each mmap, the
 * address space it reserved (---p, with what it made accessible there),
 * [stack].  The unallocated rest of the heap area and the guard page below
 * the stack are not listed. */
#include "boot.h"
#include "files.h"
#include "kernel.h"
#include "mem.h"
#include "procinfo.h"
#include "process.h"
#include "thread.h"

/* ---- /proc/self/status ----------------------------------------------------- */

static void kb(struct text_out *o, const char *name, uint64_t bytes)
{
    text_printf(o, "%s\t%8lu kB\n", name, bytes >> 10);
}

void procinfo_self_status(struct text_out *o)
{
    uint64_t region = proc.vend - proc.vbase;
    uint64_t image = ALIGN_UP(proc.image_end, PAGE_SIZE) - proc.map_lo;
    uint64_t stack = proc.vend - proc.stack_lo;
    uint32_t u = files_umask;          /* octal by hand: the kernel's printf has no %o */
    text_printf(o, "Name:\t%s\nUmask:\t0%u%u%u\nState:\tR (running)\n", proc.comm, u >> 6 & 7,
                u >> 3 & 7, u & 7);
    text_printf(o, "Tgid:\t%u\nNgid:\t0\nPid:\t%u\nPPid:\t0\nTracerPid:\t0\n", proc.pid,
                proc.pid);
    text_printf(o, "Uid:\t%u\t%u\t%u\t%u\nGid:\t%u\t%u\t%u\t%u\n", options.uid, options.uid,
                options.uid, options.uid, options.gid, options.gid, options.gid, options.gid);
    text_printf(o, "FDSize:\t%u\nGroups:\t\n", MAX_FDS);
    kb(o, "VmPeak:", region);
    kb(o, "VmSize:", region);
    kb(o, "VmLck:", 0);
    kb(o, "VmPin:", 0);
    kb(o, "VmHWM:", region);
    kb(o, "VmRSS:", region);
    kb(o, "RssAnon:", region);
    kb(o, "RssFile:", 0);
    kb(o, "RssShmem:", 0);
    kb(o, "VmData:", region - image - stack);
    kb(o, "VmStk:", stack);
    kb(o, "VmExe:", image);
    kb(o, "VmLib:", 0);
    kb(o, "VmSwap:", 0);
    text_printf(o, "Threads:\t%u\n", threads_in_process());
    unsigned first = proc.cpu_first, last = proc.cpu_first + proc.cpu_count - 1;
    if (last > first)
        text_printf(o, "Cpus_allowed_list:\t%u-%u\n", first, last);
    else
        text_printf(o, "Cpus_allowed_list:\t%u\n", first);
}

/* ---- /proc/self/statm ------------------------------------------------------ */

/* size resident shared text lib data dt, in pages: what memory reporters
 * that do not parse status read (PETSc's, among others). */
void procinfo_self_statm(struct text_out *o)
{
    uint64_t region = (proc.vend - proc.vbase) / PAGE_SIZE;
    uint64_t image = (ALIGN_UP(proc.image_end, PAGE_SIZE) - proc.map_lo) / PAGE_SIZE;
    text_printf(o, "%lu %lu 0 %lu 0 %lu 0\n", region, region, image, region - image);
}

/* ---- /proc/self/cmdline, environ -------------------------------------------- */

/* [s, e) of its stack, as it is now (a program may rewrite its arguments,
 * as setproctitle does; Linux shows that too). */
static void stack_bytes(struct text_out *o, uint64_t s, uint64_t e)
{
    if (s >= proc.stack_lo && s <= e && e <= proc.vend)
        text_write(o, (const void *)s, e - s);
}

void procinfo_self_cmdline(struct text_out *o) { stack_bytes(o, proc.arg_start, proc.arg_end); }
void procinfo_self_environ(struct text_out *o) { stack_bytes(o, proc.env_start, proc.env_end); }

/* ---- /proc/self/maps ------------------------------------------------------- */

struct seg {
    uint64_t start, end;
    const char *perms, *name;
};

/* One line as Linux writes it, the name (if any) from column 74. */
static void line(struct text_out *o, const struct seg *s)
{
    char l[96];
    int n = snprintf(l, sizeof l, "%08lx-%08lx %s 00000000 00:00 0", s->start, s->end, s->perms);
    if (s->name && s->name[0])
        while (n < 73)                 /* the kernel's printf has no %*s */
            l[n++] = ' ';
    text_write(o, l, (uint64_t)n);
    if (s->name)
        text_write(o, s->name, strlen(s->name));   /* a path may be longer than a line */
    text_write(o, "\n", 1);
}

/* The reserved ranges in address order, each split at the pieces made
 * accessible in it (both lists are sorted). */
struct reserved_walk {
    int r, p;
    uint64_t at;                       /* where in reserved[r] the next segment starts */
};

static bool reserved_next(struct reserved_walk *w, struct seg *s)
{
    while (w->r < proc.nreserved) {
        const struct mapping *m = &proc.reserved[w->r];
        if (w->at < m->start)
            w->at = m->start;
        if (w->at >= m->end) {
            w->r++;
            continue;
        }
        while (w->p < proc.npieces && proc.pieces[w->p].end <= w->at)
            w->p++;
        const struct piece *pc = w->p < proc.npieces ? &proc.pieces[w->p] : NULL;
        if (pc && pc->va <= w->at) {
            *s = (struct seg){w->at, pc->end < m->end ? pc->end : m->end, "rwxp", NULL};
        } else {
            uint64_t end = pc && pc->va < m->end ? pc->va : m->end;
            *s = (struct seg){w->at, end, "---p", NULL};
        }
        return true;
    }
    return false;
}

void procinfo_self_maps(struct text_out *o)
{
    struct seg fixed[3] = {
        {proc.map_lo, ALIGN_UP(proc.image_end, PAGE_SIZE), "rwxp", proc.name},
        {proc.brk_start, ALIGN_UP(proc.brk, PAGE_SIZE), "rwxp", "[heap]"},
        {proc.stack_lo, proc.vend, "rwxp", "[stack]"},
    };
    struct reserved_walk w = {0, 0, 0};
    struct seg res;
    bool have_res = reserved_next(&w, &res);
    int f = 0, m = 0;
    uint64_t done = 0;                 /* the end of the last line: none overlap */
    for (;;) {
        struct seg s = {UINT64_MAX, 0, NULL, NULL};
        int from = -1;
        if (f < 3 && fixed[f].start < s.start)
            s = fixed[f], from = 0;
        if (m < proc.nmaps && proc.maps[m].start < s.start)
            s = (struct seg){proc.maps[m].start, proc.maps[m].end, "rwxp", NULL}, from = 1;
        if (have_res && res.start < s.start)
            s = res, from = 2;
        if (from < 0)
            return;
        if (from == 0)
            f++;
        else if (from == 1)
            m++;
        else
            have_res = (w.at = res.end, reserved_next(&w, &res));
        if (s.start < done)
            s.start = done;
        if (s.start < s.end) {
            line(o, &s);
            done = s.end;
        }
    }
}
