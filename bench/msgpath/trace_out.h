/* What the message-path trace's programs (msgping.c on raw Portals,
 * nxping.c on NX) share: the TSC, the program's own stamp, and the dump
 * bench/msgpath.py reads (msgping.c's header comment gives its format).
 * Header-only: each program is one file built on its own. */
#ifndef MSGPATH_TRACE_OUT_H
#define MSGPATH_TRACE_OUT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "portals4.h"
#include "ptl_lib.h"
#include "ptl_trace.h"
#include "ptl_tern.h"
#include "../../include/tern/ptl_syscall.h"

#define TRACE_RING 32768           /* the kernel keeps this many records a CPU */

static uint64_t trace_rec[TRACE_RING];

static inline uint64_t rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return (uint64_t)hi << 32 | lo;
}

static int trace_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The median of n round trips (sorts them). */
static inline uint64_t trace_median(uint64_t *v, int n)
{
    qsort(v, (size_t)n, sizeof v[0], trace_cmp_u64);
    return v[n / 2];
}

/* TP_APP at tsc: the program had the message then.  Handed over after the
 * program's next send, so that this call is not on the path it measures. */
static inline void trace_mark(uint64_t tsc)
{
    ptl_tern_trace(TERN_TRACE_MARK, TP_APP, tsc, 0, NULL);
}

/* The trace's TSC frequency (0: a kernel made without trace points). */
static inline uint64_t trace_hz(void)
{
    struct tern_trace_info info = {0};
    ptl_tern_trace(TERN_TRACE_READ, 0, (uint64_t)(uintptr_t)trace_rec, 0, &info);
    return info.tsc_hz;
}

/* Stops the trace and prints MSGPATH ... END; returns -1 if the trace
 * could not be read. */
static inline int trace_dump(const char *side, const char *mode)
{
    ptl_tern_trace(TERN_TRACE_STOP, 0, 0, 0, NULL);
    struct tern_trace_info info = {0};
    int n = ptl_tern_trace(TERN_TRACE_READ, 0, (uint64_t)(uintptr_t)trace_rec, TRACE_RING, &info);
    printf("MSGPATH side=%s mode=%s hz=%llu cpus=%llu\n", side, mode,
           (unsigned long long)info.tsc_hz, (unsigned long long)info.cpus);
    for (unsigned cpu = 0; cpu < info.cpus; cpu++) {
        if (cpu)
            n = ptl_tern_trace(TERN_TRACE_READ, cpu, (uint64_t)(uintptr_t)trace_rec, TRACE_RING,
                               &info);
        if (n < 0) {
            printf("ERROR trace read returned %d\n", n);
            return -1;
        }
        printf("TRACE cpu=%u total=%llu kept=%d\n", cpu, (unsigned long long)info.total, n);
        uint64_t prev = 0;
        for (int i = 0; i < n; i++) {
            uint64_t tsc = trace_rec[i] & ((1ULL << 56) - 1);
            printf("P %u %lld\n", (unsigned)(trace_rec[i] >> 56), (long long)(tsc - prev));
            prev = tsc;
        }
    }
    struct ptl_lib_stats st;
    if (ptl_tern_stats(&st, NULL) == PTL_OK)
        printf("STATS tx_frames=%llu rx_frames=%llu acks_sent=%llu tx_timeouts=%llu "
               "tx_carried=%llu\n",
               (unsigned long long)st.tx_frames, (unsigned long long)st.rx_frames,
               (unsigned long long)st.acks_sent, (unsigned long long)st.tx_timeouts,
               (unsigned long long)st.tx_carried);
    printf("END\n");
    fflush(stdout);
    return 0;
}
#endif
