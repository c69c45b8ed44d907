/* The message-path trace (issue 18; points in portals/include/ptl_trace.h):
 * a fixed ring of (point, TSC) records per CPU, filled only while a program
 * has turned tracing on (TPO_TRACE, ptl_syscall.h), read back by it.  Built
 * in unless the kernel is made with MSGTRACE=0, which compiles every point to
 * nothing; built in and off, a point costs one load and a branch not taken. */
#ifndef TERN_MSGTRACE_H
#define TERN_MSGTRACE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ptl_trace.h"

#define MSGTRACE_CPUS 4            /* CPUs with a ring; points on others are not kept */
#define MSGTRACE_ENTRIES 32768     /* per CPU, a power of two: 256 KiB of kernel pages */

/* One record: point << 56 | (TSC as CPU 0 reads it, low 56 bits). */
#define MSGTRACE_TSC_MASK ((1ULL << 56) - 1)

bool msgtrace_built(void);             /* false when made with MSGTRACE=0 */
/* At boot, before the program's region is settled: the rings of CPUs
 * 0 .. cpus-1 (at most MSGTRACE_CPUS) off the top of the application's
 * region (msgtrace=K), so that a trace starts however few kernel pages are
 * free.  Without it they are kernel pages taken at the first start. */
void msgtrace_reserve(unsigned cpus);
/* Empties every ring and starts recording; false when the kernel has no
 * trace points or too few free pages for the rings (taken the first time). */
bool msgtrace_start(void);
void msgtrace_stop(void);
/* A point stamped by the program itself (TP_APP: it holds the event). */
void msgtrace_mark(unsigned point, uint64_t tsc);
/* Copies CPU cpu's records, oldest first, into out[0..max); returns how many,
 * and in *total how many were recorded there since the start (more than the
 * ring holds: the oldest were overwritten). */
size_t msgtrace_read(unsigned cpu, uint64_t *out, size_t max, uint64_t *total);
#endif
