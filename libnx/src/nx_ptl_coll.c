/*
 * Global operations over the library's own messages (match bit 63, so no
 * user receive can take them), ceil(log2 N) message steps each:
 *   gsync         dissemination barrier forwarded by Portals (triggered puts
 *                 on counters, libmsg/msg_barrier.c); over messages where
 *                 Portals' resources ran out or TERN_NX_TRIGGERED=0
 *   reductions    recursive doubling; with N not a power of two the ranks
 *                 above the largest power of two fold into a partner first
 *                 and get the result back at the end
 *   gcol, gcolx   Bruck's allgather (variable lengths), then unrotated
 * Every call takes a fresh sequence number (all ranks call the global
 * operations in the same order), part of the match bits, so a fast rank's
 * next operation cannot be confused with the current one.
 * The combine functions must be commutative: the two partners of a step
 * compute f(a,b) and f(b,a), and so every rank ends with the same bits.
 */
#include <stdlib.h>
#include <string.h>

#include "nx.h"
#include "nx_impl.h"
#include "nx_ptl.h"

#define STEP_FOLD_IN 0
#define STEP_FOLD_OUT 63

static uint64_t seq;

static uint64_t tag(int step)
{
    return MB_INTERNAL | ((seq & ((1ULL << 53) - 1)) << 8) | (uint64_t)step;
}

static void exchange(long to, long from, const void *sbuf, long slen, void *rbuf, long rlen,
                     int step)
{
    struct msg_req *r = nx_coll_irecv(from, tag(step), rbuf, rlen);
    struct msg_req *s = nx_coll_isend(to, tag(step), sbuf, slen);
    nx_coll_wait(r);
    nx_coll_wait(s);
}

typedef void combine_fn(void *a, const void *b, long n, void *ctx);

static void allreduce(const char *call, void *x, long n, size_t elsize, void *work,
                      combine_fn *combine, void *ctx)
{
    if (n < 0) {
        nx_fail(call, EQLEN, "bad count %ld", n);
        return;
    }
    seq++;
    long bytes = n * (long)elsize, me = msg_rank();
    if (msg_size() == 1 || bytes == 0)
        return;
    void *tmp = NULL;
    if (!work) {
        work = tmp = malloc((size_t)bytes);
        if (!tmp) {
            nx_fail(call, EQMEM, "no memory for %ld bytes of scratch", bytes);
            return;
        }
    }
    long p2 = 1;
    while (p2 * 2 <= msg_size())
        p2 *= 2;
    long extra = msg_size() - p2;
    if (me >= p2) { /* fold into me - p2, get the answer back */
        nx_coll_wait(nx_coll_isend(me - p2, tag(STEP_FOLD_IN), x, bytes));
        nx_coll_wait(nx_coll_irecv(me - p2, tag(STEP_FOLD_OUT), x, bytes));
        free(tmp);
        return;
    }
    if (me < extra) {
        nx_coll_wait(nx_coll_irecv(me + p2, tag(STEP_FOLD_IN), work, bytes));
        combine(x, work, n, ctx);
    }
    int step = 1;
    for (long d = 1; d < p2; d <<= 1, step++) {
        long partner = me ^ d;
        exchange(partner, partner, x, bytes, work, bytes, step);
        combine(x, work, n, ctx);
    }
    if (me < extra)
        nx_coll_wait(nx_coll_isend(me + p2, tag(STEP_FOLD_OUT), x, bytes));
    free(tmp);
}

#define COMBINE(name, ctype, expr)                                        \
    static void name(void *a_, const void *b_, long n, void *ctx)        \
    {                                                                     \
        (void)ctx;                                                        \
        ctype *a = a_;                                                    \
        const ctype *b = b_;                                              \
        for (long i = 0; i < n; i++)                                      \
            a[i] = (expr);                                                \
    }

COMBINE(c_dsum, double, a[i] + b[i])
COMBINE(c_dprod, double, a[i] * b[i])
COMBINE(c_dhigh, double, a[i] > b[i] ? a[i] : b[i])
COMBINE(c_dlow, double, a[i] < b[i] ? a[i] : b[i])
COMBINE(c_isum, long, (long)((unsigned long)a[i] + (unsigned long)b[i]))
COMBINE(c_iprod, long, (long)((unsigned long)a[i] * (unsigned long)b[i]))
COMBINE(c_ihigh, long, a[i] > b[i] ? a[i] : b[i])
COMBINE(c_ilow, long, a[i] < b[i] ? a[i] : b[i])
COMBINE(c_ssum, float, a[i] + b[i])
COMBINE(c_sprod, float, a[i] * b[i])
COMBINE(c_shigh, float, a[i] > b[i] ? a[i] : b[i])
COMBINE(c_slow, float, a[i] < b[i] ? a[i] : b[i])
COMBINE(c_iand, long, a[i] & b[i])
COMBINE(c_ior, long, a[i] | b[i])
COMBINE(c_ixor, long, a[i] ^ b[i])
COMBINE(c_land, long, a[i] && b[i])
COMBINE(c_lor, long, a[i] || b[i])

#define REDUCE(name, ctype, fn)                                              \
    void name(ctype x[], long n, ctype work[])                               \
    {                                                                        \
        allreduce(#name, x, n, sizeof(ctype), work, fn, NULL);               \
    }

REDUCE(gdsum, double, c_dsum)
REDUCE(gdprod, double, c_dprod)
REDUCE(gdhigh, double, c_dhigh)
REDUCE(gdlow, double, c_dlow)
REDUCE(gisum, long, c_isum)
REDUCE(giprod, long, c_iprod)
REDUCE(gihigh, long, c_ihigh)
REDUCE(gilow, long, c_ilow)
REDUCE(gssum, float, c_ssum)
REDUCE(gsprod, float, c_sprod)
REDUCE(gshigh, float, c_shigh)
REDUCE(gslow, float, c_slow)
REDUCE(giand, long, c_iand)
REDUCE(gior, long, c_ior)
REDUCE(gixor, long, c_ixor)
REDUCE(gland, long, c_land)
REDUCE(glor, long, c_lor)

static void c_user(void *a, const void *b, long n, void *ctx)
{
    (void)n;
    long (*fn)(void *, void *) = *(long (**)(void *, void *))ctx;
    fn(a, (void *)b); /* NX: fn combines its second argument into its first */
}

void gopf(void *x, long xlen, void *work, long (*fn)(void *a, void *b))
{
    allreduce("gopf", x, xlen, 1, work, c_user, &fn);
}

void gcolx(void *x, long xlens[], void *y)
{
    long n = msg_size(), me = msg_rank(), total = 0;
    for (long i = 0; i < n; i++) {
        if (xlens[i] < 0 || total + xlens[i] > NX_MAX_LEN) {
            nx_fail("gcolx", EQLEN, "bad length %ld for node %ld", xlens[i], i);
            return;
        }
        total += xlens[i];
    }
    seq++;
    /* tmp holds the blocks of ranks me, me+1, ... (mod n), in that order. */
    char *tmp = malloc((size_t)total + 1);
    long *off = malloc(sizeof(long) * (size_t)n);
    if (!tmp || !off) {
        nx_fail("gcolx", EQMEM, "no memory for %ld bytes", total);
        return;
    }
    memcpy(tmp, x, (size_t)xlens[me]);
    long used = xlens[me], have = 1;
    int step = 1;
    for (long d = 1; d < n; d <<= 1, step++) {
        long cnt = d < n - have ? d : n - have, sbytes = 0, rbytes = 0;
        for (long i = 0; i < cnt; i++) {
            sbytes += xlens[(me + i) % n];
            rbytes += xlens[(me + d + i) % n];
        }
        exchange((me - d + n) % n, (me + d) % n, tmp, sbytes, tmp + used, rbytes, step);
        used += rbytes;
        have += cnt;
    }
    long pos = 0;
    for (long i = 0; i < n; i++) {
        off[i] = pos;
        pos += xlens[i];
    }
    pos = 0;
    for (long i = 0; i < n; i++) {
        long k = (me + i) % n;
        memcpy((char *)y + off[k], tmp + pos, (size_t)xlens[k]);
        pos += xlens[k];
    }
    free(tmp);
    free(off);
}

void gcol(void *x, long xlen, void *y, long ylen, long *ncnt)
{
    if (xlen < 0) {
        nx_fail("gcol", EQLEN, "negative length %ld", xlen);
        return;
    }
    long n = msg_size();
    long *lens = malloc(sizeof(long) * (size_t)n), *eight = malloc(sizeof(long) * (size_t)n);
    if (!lens || !eight) {
        nx_fail("gcol", EQMEM, "no memory for %ld lengths", n);
        return;
    }
    for (long i = 0; i < n; i++)
        eight[i] = sizeof(long);
    gcolx(&xlen, eight, lens);
    long total = 0;
    for (long i = 0; i < n; i++)
        total += lens[i];
    if (total > ylen) {
        free(lens);
        free(eight);
        nx_fail("gcol", EQBLEN, "the %ld bytes from all nodes do not fit in %ld", total, ylen);
        return;
    }
    gcolx(x, lens, y);
    *ncnt = total;
    free(lens);
    free(eight);
}

/* NX's one barrier object: id 1 << 20, above any MPI context id (a program
 * linking both layers keeps them apart). */
#define GSYNC_ID (1ULL << 20)
static enum { GS_UNDECIDED, GS_PORTALS, GS_MESSAGES } gs_mode;
static struct msg_barrier *gs_bar;

static void gsync_messages(void)
{
    seq++;
    int step = 1;
    long n = msg_size(), me = msg_rank();
    for (long d = 1; d < n; d <<= 1, step++)
        exchange((me + d) % n, (me - d + n) % n, NULL, 0, NULL, 0, step);
}

void gsync(void)
{
    if (gs_mode == GS_PORTALS) {
        msg_barrier_wait(gs_bar);
        return;
    }
    if (gs_mode == GS_MESSAGES || msg_size() == 1) {
        gsync_messages();
        return;
    }
    /* The first gsync makes the Portals barrier and agrees (a reduction,
     * which is also this barrier) whether every node has one; no node's
     * triggered put can then arrive before the entries it aims at. */
    gs_mode = GS_MESSAGES;
    struct msg_barrier *b = NULL;
    if (msg_env_long("TRIGGERED", 1))
        b = msg_barrier_new(GSYNC_ID, msg_size(), msg_rank(), NULL);
    long ok = b != NULL;
    allreduce("gsync", &ok, 1, sizeof ok, NULL, c_ilow, NULL);
    if (ok) {
        gs_bar = b;
        gs_mode = GS_PORTALS;
    } else {
        msg_barrier_free(b);
    }
}
