/* The text of the files a node answers itself (kernel/job/nodefiles.c):
 * the CPU lists of /sys/devices/system/cpu, /proc/cpuinfo, /proc/meminfo
 * (kernel/job/procinfo.c).  Each read makes the text afresh and keeps only
 * the bytes it asked for, so no file needs a buffer of its whole size
 * (/proc/cpuinfo of a 64-CPU node is about 100 KiB). */
#ifndef TERN_PROCINFO_H
#define TERN_PROCINFO_H
#include <stdbool.h>
#include <stdint.h>

struct text_out {
    uint64_t from, len;      /* the bytes wanted: [from, from + len) of the text */
    uint64_t ubuf;           /* the buffer they go to, checked by the caller as for a
                              * file server's put (fio_call); 0: only count */
    uint64_t pos;            /* bytes of text made so far (its size, at the end) */
};
void text_printf(struct text_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* len bytes as they are (NULs too). */
void text_write(struct text_out *o, const void *bytes, uint64_t len);
/* Bytes of [from, from + len) the text held. */
uint64_t text_got(const struct text_out *o);

/* A CPU list as Linux writes it ("0" or "0-3"): the CPUs running (online)
 * or found (possible, present). */
void procinfo_cpulist(struct text_out *o, bool online);
/* One stanza per running CPU, in Linux's format and field order. */
void procinfo_cpuinfo(struct text_out *o);
/* The job's memory: MemTotal the application region, MemFree and
 * MemAvailable what brk and mmap can still hand out; the other lines
 * parsers expect, with what a node without swap, page cache or huge-page
 * pool has there. */
void procinfo_meminfo(struct text_out *o);
/* The calling process (kernel/job/procself.c): /proc/self/status's fields
 * programs read (Pid, VmRSS, VmHWM, Threads, Cpus_allowed_list, ...),
 * statm, and /proc/self/maps in Linux's format. */
void procinfo_self_status(struct text_out *o);
void procinfo_self_statm(struct text_out *o);
/* Its argument and environment strings as they are in its memory now,
 * each ended by a NUL (what Linux's cmdline and environ read). */
void procinfo_self_cmdline(struct text_out *o);
void procinfo_self_environ(struct text_out *o);
void procinfo_self_maps(struct text_out *o);
#endif
