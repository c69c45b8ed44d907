/*
 * The runtime Sandia's Portals 4 reference tests expect (the libtest_*
 * calls of their support.c and tests, and the PMI calls of
 * test_pmi_hello), so that those programs run unchanged against Tern's
 * Portals: Linux processes (libportals) and programs on Tern nodes
 * (libportals-tern).  The reference gets these from a process manager over
 * TCP; a Tern node has nothing but Portals, so this runtime uses Portals.
 *
 * Who is who, from the environment (docs/job-interface.md):
 *   REFTEST_RANK, REFTEST_SIZE, REFTEST_MAP, or else TERN_RANK, TERN_SIZE,
 *   TERN_MAP ("nid" or "nid:pid" per rank, rank order; a nid alone means
 *   pid TERN_APP_PID).  The REFTEST_ names win so that a process yod
 *   starts as a job of one can join a job with a Linux process.
 *   Nothing set: a job of one.
 *
 * Barrier and the PMI key/value space run over an NI of the runtime's own:
 * the first of the four NI kinds (physical before logical) the program has
 * not opened, opened at the first barrier or map request with limits
 * nobody else asks for (which also tells whether PtlNIInit handed back the
 * program's NI: then its limits come back) and released by libtest_fini.
 * Nothing of the program's NI is touched, so its portal indices, counts
 * and status registers stay the program's.
 *
 * Barrier: every rank puts a 0-byte message to every other rank and waits
 * for their acknowledgements, then until its counter has seen (size - 1)
 * puts per barrier so far.  A put
 * the peer could not take yet (its runtime NI not open: Portals gives up
 * on it, or its portal not there yet) is sent again.  Counting is enough:
 * a rank sends for barrier k+1 only after every rank entered barrier k.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <portals4.h>
#include "portals4/pmi.h"
#include <tern/yod_proto.h>

#define KVS_ENTRIES 32
#define KVS_KEY 32
#define KVS_VAL 64
#define RETRY_NS 20000000ull    /* 20 ms between tries of a refused put */
#define GIVE_UP_S 300           /* a peer that never shows up */

struct kvs {
    struct { char key[KVS_KEY], val[KVS_VAL]; } e[KVS_ENTRIES];
};

static struct {
    bool init;
    int rank, size;
    ptl_process_t *map;         /* phys ids, rank order (NULL: job of one) */
    ptl_process_t *mapping;     /* what libtest_get_mapping hands out */
    /* the runtime's NI */
    bool open;
    unsigned kind;
    ptl_handle_ni_t ni;
    ptl_handle_eq_t eq;
    ptl_handle_ct_t rx_ct;
    ptl_handle_md_t md, kvs_md;
    uint32_t ent[2];           /* barrier and KVS entries (LE or ME) */
    uint64_t epoch;
    struct kvs mine, theirs;
    int kvs_used;
} rt;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "refshim (rank %d): ", rt.rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

#define CHECK(call)                                                            \
    do {                                                                       \
        int rc_ = (call);                                                      \
        if (rc_ != PTL_OK)                                                     \
            die("%s failed: %d", #call, rc_);                                  \
    } while (0)

static const char *env2(const char *a, const char *b)
{
    const char *s = getenv(a);
    return s && *s ? s : getenv(b);
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void pause_ns(uint64_t ns)
{
    struct timespec t = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };
    nanosleep(&t, NULL);
}

/* "nid[:pid],..." with exactly rt.size entries. */
static void parse_map(const char *s)
{
    rt.map = calloc((size_t)rt.size, sizeof *rt.map);
    if (!rt.map)
        die("no memory for the map");
    const char *p = s;
    for (int r = 0; r < rt.size; r++) {
        char *end;
        unsigned long nid = strtoul(p, &end, 0), pid = TERN_APP_PID;
        if (end == p)
            die("map \"%s\" is not nid[:pid],... (%d entries)", s, rt.size);
        if (*end == ':') {
            p = end + 1;
            pid = strtoul(p, &end, 0);
            if (end == p)
                die("map \"%s\" is not nid[:pid],... (%d entries)", s, rt.size);
        }
        if (*end != (r == rt.size - 1 ? '\0' : ','))
            die("map \"%s\" does not have %d entries", s, rt.size);
        rt.map[r].phys.nid = (ptl_nid_t)nid;
        rt.map[r].phys.pid = (ptl_pid_t)pid;
        p = end + 1;
    }
}

int libtest_init(void)
{
    if (rt.init)
        return 0;
    rt.init = true;
    const char *r = env2("REFTEST_RANK", "TERN_RANK");
    const char *n = env2("REFTEST_SIZE", "TERN_SIZE");
    rt.rank = r ? atoi(r) : 0;
    rt.size = n ? atoi(n) : 1;
    if (rt.size < 1 || rt.rank < 0 || rt.rank >= rt.size)
        die("rank %d of %d is not in the job", rt.rank, rt.size);
    if (rt.size > 1) {
        const char *m = env2("REFTEST_MAP", "TERN_MAP");
        if (!m)
            die("REFTEST_MAP or TERN_MAP is not set for a job of %d", rt.size);
        parse_map(m);
    }
    return 0;
}

int libtest_fini(void)
{
    if (rt.open) {
        /* The program may already have called PtlNIFini on its own NIs;
         * this NI and this PtlInit are the runtime's.  PtlNIFini waits
         * until the other ranks have what this rank sent last (the ACK of
         * their last barrier put), should it need a resend. */
        PtlNIFini(rt.ni);
        PtlFini();
        rt.open = false;
    }
    return 0;
}

int libtest_get_rank(void)
{
    libtest_init();
    return rt.rank;
}

int libtest_get_size(void)
{
    libtest_init();
    return rt.size;
}

static ptl_process_t peer(int r)
{
    ptl_process_t p;
    if (rt.kind & PTL_NI_LOGICAL)
        p.rank = (ptl_rank_t)r;
    else
        p = rt.map[r];
    return p;
}

/* Entry on a new portal of the runtime's NI: the barrier counter's or the
 * published key/value table's. */
static void entry(int i, void *start, ptl_size_t len, unsigned ops, ptl_handle_ct_t ct)
{
    ptl_pt_index_t pt;
    CHECK(PtlPTAlloc(rt.ni, 0, PTL_EQ_NONE, (ptl_pt_index_t)i, &pt));
    unsigned opts = ops | PTL_ME_EVENT_LINK_DISABLE | PTL_ME_EVENT_COMM_DISABLE |
                    (ct != PTL_CT_NONE ? PTL_ME_EVENT_CT_COMM : 0);
    if (rt.kind & PTL_NI_MATCHING) {
        ptl_me_t me;
        memset(&me, 0, sizeof me);
        me.start = start;
        me.length = len;
        me.ct_handle = ct;
        me.uid = PTL_UID_ANY;
        me.options = opts;
        if (rt.kind & PTL_NI_LOGICAL) {
            me.match_id.rank = PTL_RANK_ANY;
        } else {
            me.match_id.phys.nid = PTL_NID_ANY;
            me.match_id.phys.pid = PTL_PID_ANY;
        }
        me.ignore_bits = ~(ptl_match_bits_t)0;
        CHECK(PtlMEAppend(rt.ni, pt, &me, PTL_PRIORITY_LIST, NULL, &rt.ent[i]));
    } else {
        ptl_le_t le;
        memset(&le, 0, sizeof le);
        le.start = start;
        le.length = len;
        le.ct_handle = ct;
        le.uid = PTL_UID_ANY;
        le.options = opts;
        CHECK(PtlLEAppend(rt.ni, pt, &le, PTL_PRIORITY_LIST, NULL, &rt.ent[i]));
    }
}

static void md(void *start, ptl_size_t len, ptl_handle_md_t *h)
{
    ptl_md_t d = { start, len, PTL_MD_EVENT_SEND_DISABLE, rt.eq, PTL_CT_NONE };
    CHECK(PtlMDBind(rt.ni, &d, h));
}

static void rt_open(void)
{
    if (rt.open || rt.size <= 1)
        return;
    static const unsigned kinds[] = {
        PTL_NI_NO_MATCHING | PTL_NI_PHYSICAL, PTL_NI_MATCHING | PTL_NI_PHYSICAL,
        PTL_NI_NO_MATCHING | PTL_NI_LOGICAL, PTL_NI_MATCHING | PTL_NI_LOGICAL,
    };
    /* Small, and recognisable: an NI the program opened comes back with
     * the program's limits. */
    ptl_ni_limits_t want, got;
    memset(&want, 0, sizeof want);
    want.max_entries = 3;
    want.max_unexpected_headers = 1;
    want.max_mds = 3;
    want.max_cts = 2;
    want.max_eqs = 1;
    want.max_pt_index = 1;
    want.max_iovecs = 1;
    want.max_list_size = 1;
    want.max_triggered_ops = 1;
    want.max_msg_size = sizeof(struct kvs);
    CHECK(PtlInit());
    for (unsigned k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        if (PtlNIInit(PTL_IFACE_DEFAULT, kinds[k], PTL_PID_ANY, &want, &got, &rt.ni) != PTL_OK)
            continue;
        if (got.max_mds == want.max_mds && got.max_cts == want.max_cts) {
            rt.kind = kinds[k];
            rt.open = true;
            break;
        }
        PtlNIFini(rt.ni);       /* the program's own NI: hand its reference back */
    }
    if (!rt.open)
        die("every NI kind is taken: no NI for the runtime");
    if (rt.kind & PTL_NI_LOGICAL)
        CHECK(PtlSetMap(rt.ni, (ptl_size_t)rt.size, rt.map));
    CHECK(PtlEQAlloc(rt.ni, (ptl_size_t)(2 * rt.size + 4), &rt.eq));
    CHECK(PtlCTAlloc(rt.ni, &rt.rx_ct));
    entry(0, NULL, 0, PTL_ME_OP_PUT, rt.rx_ct);
    entry(1, &rt.mine, sizeof rt.mine, PTL_ME_OP_GET, PTL_CT_NONE);
    md(NULL, 0, &rt.md);
    md(&rt.theirs, sizeof rt.theirs, &rt.kvs_md);
}

/* Next ACK or REPLY event of the runtime's MDs by `deadline`; false if
 * none came. */
static bool next_event(ptl_event_t *ev, uint64_t deadline)
{
    for (;;) {
        uint64_t now = now_ns();
        if (now >= deadline)
            return false;
        uint64_t ms = (deadline - now) / 1000000 + 1;
        unsigned which;
        int rc = PtlEQPoll(&rt.eq, 1, ms > 60000 ? 60000 : (ptl_time_t)ms, ev, &which);
        if (rc == PTL_EQ_EMPTY)
            continue;
        if (rc != PTL_OK && rc != PTL_EQ_DROPPED)
            die("PtlEQPoll: %d", rc);
        if (ev->type == PTL_EVENT_ACK || ev->type == PTL_EVENT_REPLY)
            return true;
    }
}

/* One round: a put to every other rank (sent again while a peer cannot
 * take it yet), then the puts of every other rank.  False if `deadline`
 * passed first. */
static bool exchange(uint64_t deadline)
{
    rt.epoch++;
    int left = rt.size - 1;
    char *state = calloc((size_t)rt.size, 1); /* 0 to send, 1 sent, 2 done */
    if (!state)
        die("no memory for a barrier");
    state[rt.rank] = 2;
    while (left) {
        for (int r = 0; r < rt.size; r++)
            if (state[r] == 0) {
                CHECK(PtlPut(rt.md, 0, 0, PTL_ACK_REQ, peer(r), 0, 0, 0,
                             (void *)(uintptr_t)(r + 1), rt.epoch));
                state[r] = 1;
            }
        ptl_event_t ev;
        if (!next_event(&ev, deadline)) {
            free(state);
            return false;
        }
        int r = (int)(uintptr_t)ev.user_ptr - 1;
        if (ev.type != PTL_EVENT_ACK || r < 0 || r >= rt.size || state[r] != 1)
            continue;
        if (ev.ni_fail_type == PTL_NI_OK) {
            state[r] = 2;
            left--;
        } else if (now_ns() + RETRY_NS < deadline) {
            pause_ns(RETRY_NS);
            state[r] = 0;
        } else {
            free(state);
            return false;
        }
    }
    free(state);
    for (;;) {
        uint64_t now = now_ns();
        if (now >= deadline)
            return false;
        uint64_t ms = (deadline - now) / 1000000 + 1;
        ptl_size_t test = rt.epoch * (ptl_size_t)(rt.size - 1);
        ptl_ct_event_t ct;
        unsigned which;
        int rc = PtlCTPoll(&rt.rx_ct, &test, 1, ms > 60000 ? 60000 : (ptl_time_t)ms, &ct,
                           &which);
        if (rc == PTL_OK)
            return true;
        if (rc != PTL_CT_NONE_REACHED)
            die("PtlCTPoll: %d", rc);
    }
}

void libtest_barrier(void)
{
    libtest_init();
    if (rt.size <= 1)
        return;
    rt_open();
    if (!exchange(now_ns() + GIVE_UP_S * 1000000000ull))
        die("the other ranks did not join barrier %llu within %d s",
            (unsigned long long)rt.epoch, GIVE_UP_S);
}

ptl_process_t *libtest_get_mapping(ptl_handle_ni_t ni)
{
    libtest_init();
    ptl_process_t me;
    if (PtlGetPhysId(ni, &me) != PTL_OK)
        return NULL;
    if (!rt.mapping) {
        rt.mapping = calloc((size_t)rt.size, sizeof *rt.mapping);
        if (!rt.mapping)
            return NULL;
    }
    if (rt.size == 1) {
        rt.mapping[0] = me;
        return rt.mapping;
    }
    if (me.phys.nid != rt.map[rt.rank].phys.nid || me.phys.pid != rt.map[rt.rank].phys.pid) {
        fprintf(stderr, "refshim: rank %d is %u:%u by the map but its NI is %u:%u\n", rt.rank,
                rt.map[rt.rank].phys.nid, rt.map[rt.rank].phys.pid, me.phys.nid,
                me.phys.pid);
        exit(1);
    }
    memcpy(rt.mapping, rt.map, sizeof *rt.map * (size_t)rt.size);
    rt_open();
    return rt.mapping;
}

/* ---- PMI ---------------------------------------------------------------- */

static bool pmi_up;

int PMI_Initialized(int *initialized)
{
    if (!initialized)
        return PMI_ERR_INVALID_ARG;
    *initialized = pmi_up;
    return PMI_SUCCESS;
}

int PMI_Init(int *spawned)
{
    libtest_init();
    if (spawned)
        *spawned = 0;
    pmi_up = true;
    return PMI_SUCCESS;
}

int PMI_Finalize(void)
{
    /* A process manager keeps the KVS after a rank is done; here each rank
     * serves its own entries (PMI_KVS_Get reads them from it), so none
     * leaves before all have read: a rank on a slow node may still be
     * reading when a fast one finalizes. */
    if (pmi_up && rt.size > 1)
        libtest_barrier();
    libtest_fini();
    pmi_up = false;
    return PMI_SUCCESS;
}

int PMI_Get_rank(int *rank)
{
    if (!rank)
        return PMI_ERR_INVALID_ARG;
    *rank = libtest_get_rank();
    return PMI_SUCCESS;
}

int PMI_Get_size(int *size)
{
    if (!size)
        return PMI_ERR_INVALID_ARG;
    *size = libtest_get_size();
    return PMI_SUCCESS;
}

int PMI_Barrier(void)
{
    libtest_barrier();
    return PMI_SUCCESS;
}

static int put_len(int *length, int n)
{
    if (!length)
        return PMI_ERR_INVALID_ARG;
    *length = n;
    return PMI_SUCCESS;
}

int PMI_KVS_Get_name_length_max(int *length) { return put_len(length, 16); }
int PMI_KVS_Get_key_length_max(int *length) { return put_len(length, KVS_KEY); }
int PMI_KVS_Get_value_length_max(int *length) { return put_len(length, KVS_VAL); }

int PMI_KVS_Get_my_name(char *name, int length)
{
    if (!name || length < 6)
        return PMI_ERR_INVALID_LENGTH;
    strcpy(name, "job0");
    return PMI_SUCCESS;
}

int PMI_KVS_Put(const char *name, const char *key, const char *value)
{
    (void)name;
    if (!key || !value)
        return PMI_ERR_INVALID_ARG;
    if (strlen(key) >= KVS_KEY || strlen(value) >= KVS_VAL)
        return PMI_ERR_INVALID_LENGTH;
    if (rt.kvs_used == KVS_ENTRIES)
        return PMI_ERR_NOMEM;
    strcpy(rt.mine.e[rt.kvs_used].key, key);
    strcpy(rt.mine.e[rt.kvs_used].val, value);
    rt.kvs_used++;
    return PMI_SUCCESS;
}

/* Entries are readable by Get as soon as they are put; the barrier that
 * follows a commit is what makes them visible. */
int PMI_KVS_Commit(const char *name)
{
    (void)name;
    return PMI_SUCCESS;
}

static bool lookup(const struct kvs *t, const char *key, char *value, int length)
{
    for (int i = 0; i < KVS_ENTRIES; i++)
        if (t->e[i].key[0] && !strncmp(t->e[i].key, key, KVS_KEY)) {
            snprintf(value, (size_t)length, "%s", t->e[i].val);
            return true;
        }
    return false;
}

int PMI_KVS_Get(const char *name, const char *key, char *value, int length)
{
    (void)name;
    if (!key || !value || length < 1)
        return PMI_ERR_INVALID_ARG;
    if (lookup(&rt.mine, key, value, length))
        return PMI_SUCCESS;
    rt_open();
    for (int r = 0; r < rt.size; r++) {
        if (r == rt.rank)
            continue;
        memset(&rt.theirs, 0, sizeof rt.theirs);
        CHECK(PtlGet(rt.kvs_md, 0, sizeof rt.theirs, peer(r), 1, 0, 0, NULL));
        ptl_event_t ev;
        if (next_event(&ev, now_ns() + GIVE_UP_S * 1000000000ull) &&
            ev.type == PTL_EVENT_REPLY && ev.ni_fail_type == PTL_NI_OK &&
            lookup(&rt.theirs, key, value, length))
            return PMI_SUCCESS;
    }
    return PMI_ERR_INVALID_KEY;
}
