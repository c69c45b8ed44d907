/* Helpers shared by the Linux-host Portals test and bench programs.  The
 * host is configured through TERN_* environment variables (ptl_linux.h);
 * the Python side sets them per network namespace. */
#ifndef PL_H
#define PL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "portals4.h"
#include "ptl_lib.h"
#include "ptl_linux.h"

#define PL_PT 5 /* every program uses this portal index */
#define PL_MB_RT 1
#define PL_MB_ATOMIC 2
#define PL_MB_STREAM 3
#define PL_MB_CTL 4     /* "ptlnode ctl": 0-byte puts, the command in hdr_data */
enum { PL_CTL_STATS = 1, PL_CTL_QUIT = 2 };

#define DIE(...)                                                          \
    do {                                                                  \
        printf("ERROR %s:%d: ", __FILE__, __LINE__);                      \
        printf(__VA_ARGS__);                                              \
        printf("\n");                                                     \
        fflush(stdout);                                                   \
        exit(1);                                                          \
    } while (0)

#define OK(expr)                                                          \
    do {                                                                  \
        int rc_ = (expr);                                                 \
        if (rc_ != PTL_OK)                                                \
            DIE("%s returned %d", #expr, rc_);                            \
    } while (0)

struct pl {
    ptl_handle_ni_t ni;
    ptl_handle_eq_t eq;
    ptl_process_t me;
    ptl_ni_limits_t lim;
};

static inline double pl_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline void pl_init(struct pl *p, unsigned eq_size)
{
    OK(PtlInit());
    OK(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL,
                 PTL_PID_ANY, NULL, &p->lim, &p->ni));
    OK(PtlEQAlloc(p->ni, eq_size, &p->eq));
    OK(PtlGetPhysId(p->ni, &p->me));
    ptl_pt_index_t pt;
    OK(PtlPTAlloc(p->ni, 0, p->eq, PL_PT, &pt));
    if (pt != PL_PT)
        DIE("got portal %u", pt);
}

static inline void pl_me(struct pl *p, void *buf, ptl_size_t len,
                         ptl_match_bits_t bits, unsigned extra)
{
    ptl_me_t me;
    memset(&me, 0, sizeof(me));
    me.start = buf;
    me.length = len;
    me.ct_handle = PTL_CT_NONE;
    me.uid = PTL_UID_ANY;
    me.options = PTL_ME_OP_PUT | PTL_ME_OP_GET | extra;
    me.match_id.phys.nid = PTL_NID_ANY;
    me.match_id.phys.pid = PTL_PID_ANY;
    me.match_bits = bits;
    ptl_handle_me_t h;
    OK(PtlMEAppend(p->ni, PL_PT, &me, PTL_PRIORITY_LIST, NULL, &h));
}

static inline ptl_handle_md_t pl_md(struct pl *p, void *buf, ptl_size_t len)
{
    ptl_md_t md = { .start = buf, .length = len, .options = 0,
                    .eq_handle = p->eq, .ct_handle = PTL_CT_NONE };
    ptl_handle_md_t h;
    OK(PtlMDBind(p->ni, &md, &h));
    return h;
}

/* Wait for the next event of `type` (others are discarded) for at most
 * `secs`; returns 0 or -1 on timeout. */
static inline int pl_wait(struct pl *p, ptl_event_kind_t type,
                          ptl_event_t *ev, double secs)
{
    double end = pl_now() + secs;
    for (;;) {
        double left = end - pl_now();
        if (left <= 0)
            return -1;
        unsigned which;
        int rc = PtlEQPoll(&p->eq, 1, (ptl_time_t)(left * 1000) + 1, ev,
                           &which);
        if (rc == PTL_EQ_EMPTY)
            continue;
        if (rc != PTL_OK && rc != PTL_EQ_DROPPED)
            DIE("PtlEQPoll %d", rc);
        if (ev->type == type)
            return 0;
    }
}

/* Deterministic payload: any corruption or misplacement shows. */
static inline uint8_t pl_byte(uint32_t msg, uint64_t j)
{
    return (uint8_t)(msg * 131u + j * 7u + (j >> 8) + (j >> 16));
}

static inline uint32_t pl_fnv(const uint8_t *b, uint64_t n)
{
    uint32_t h = 2166136261u;
    for (uint64_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 16777619u;
    return h;
}

/* The message sizes of a stream: fixed edge cases (headers, one frame at
 * 1500 and 9000, multi-frame, 16 MiB) then `n_random` seeded sizes. */
static const uint64_t pl_fixed_sizes[] = {
    0, 1, 2, 7, 64, 1356, 1357, 1500, 4096, 8856, 8857, 9000, 65536,
    100003, 1 << 20, (1 << 20) + 1, (4 << 20) + 3, 16 << 20,
};
#define PL_N_FIXED (sizeof(pl_fixed_sizes) / sizeof(pl_fixed_sizes[0]))

static inline uint64_t pl_size(unsigned i, uint64_t max_size)
{
    uint64_t s;
    if (i < PL_N_FIXED) {
        s = pl_fixed_sizes[i];
    } else {
        uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ull;
        x ^= x >> 29;
        s = x % 70000u;
    }
    return s > max_size ? max_size : s;
}

static inline uint64_t pl_total(unsigned n, uint64_t max_size)
{
    uint64_t t = 0;
    for (unsigned i = 0; i < n; i++)
        t += pl_size(i, max_size);
    return t;
}

static inline void pl_print_stats(struct pl *p)
{
    struct ptl_lib_stats s;
    struct ptl_linux_stats h;
    ptl_sr_value_t drop = 0, perm = 0, opv = 0;
    if (ptl_lib_get_stats(0, &s) || ptl_linux_get_stats(&h))
        DIE("stats");
    PtlNIStatus(p->ni, PTL_SR_DROP_COUNT, &drop);
    PtlNIStatus(p->ni, PTL_SR_PERMISSIONS_VIOLATIONS, &perm);
    PtlNIStatus(p->ni, PTL_SR_OPERATIONS_VIOLATIONS, &opv);
    printf("STATS rx_frames=%llu rx_short=%llu rx_bad_version=%llu "
           "rx_bad_crc=%llu rx_bad_op=%llu rx_bad_field=%llu "
           "rx_not_for_us=%llu rx_dup=%llu rx_ooo_dropped=%llu "
           "tx_frames=%llu tx_retransmits=%llu tx_host_busy=%llu "
           "peer_failures=%llu sr_drop=%d sr_perm=%d sr_op=%d "
           "host_rx=%llu host_skipped=%llu host_trunc=%llu "
           "host_ring_drops=%llu host_tx=%llu host_tx_busy=%llu "
           "host_tx_err=%llu filter_pid=%lld tx_timeouts=%llu "
           "tx_fast_retransmits=%llu peer_restarts=%llu host_spoofed=%llu\n",
           (unsigned long long)s.rx_frames, (unsigned long long)s.rx_short,
           (unsigned long long)s.rx_bad_version,
           (unsigned long long)s.rx_bad_crc, (unsigned long long)s.rx_bad_op,
           (unsigned long long)s.rx_bad_field,
           (unsigned long long)s.rx_not_for_us, (unsigned long long)s.rx_dup,
           (unsigned long long)s.rx_ooo_dropped,
           (unsigned long long)s.tx_frames,
           (unsigned long long)s.tx_retransmits,
           (unsigned long long)s.tx_host_busy,
           (unsigned long long)s.peer_failures, drop, perm, opv,
           (unsigned long long)h.rx_frames, (unsigned long long)h.rx_skipped,
           (unsigned long long)h.rx_truncated,
           (unsigned long long)h.rx_ring_drops,
           (unsigned long long)h.tx_frames, (unsigned long long)h.tx_busy,
           (unsigned long long)h.tx_errors,
           h.filter_pid == UINT64_MAX ? -1LL : (long long)h.filter_pid,
           (unsigned long long)s.tx_timeouts,
           (unsigned long long)s.tx_fast_retransmits,
           (unsigned long long)s.peer_restarts, (unsigned long long)h.rx_spoofed);
    fflush(stdout);
}

#endif
