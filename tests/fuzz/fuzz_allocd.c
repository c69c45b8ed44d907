/* libFuzzer harness: the allocator's request handling (service-node/
 * allocd.c: the header and credential check in handle(), one handler per
 * request type, the acknowledgement of its own puts in on_ack()).  allocd.c
 * is compiled into the harness as it is (its main renamed), so the code
 * fuzzed is the daemon's; it runs on the in-process test wire (interface
 * 0, pid TERN_ALLOC_PID) with its node database in a scratch directory,
 * a node kernel (interface 1) and a launcher (interface 2) taking its
 * replies, pings and kill notices.
 *
 * Input: a sequence of records  [who:1] [len:2, little-endian] [len bytes].
 * who bit 0: the sender is the node (else the launcher); bit 1: it sends
 * from its kernel pid YOD_NODE_PID (else pid 77); who 0xff: no message - the
 * allocator pings its nodes, launchers and fyods instead (a peer that does
 * not exist stops answering); who 0xfe: likewise, only the nodes that are
 * ending a job (given back unsure).  Each message is handed to handle() in a
 * buffer of exactly its length.  Each input starts from an empty database,
 * no jobs and no fyods.
 *
 * Credentials: a fuzzer cannot make MUNGE credentials (munged signs them
 * and decodes each once), so common/cred.c is not linked: this harness's
 * cred_verify takes the same NUL-terminated, non-empty h.cred field and
 * believes "uid:N" (uid and gid N) and nothing else.  Who the request is
 * from then drives allocd's own checks (owner or root) as MUNGE's answer
 * would.  ptl_linux_nid_to_mac (the Linux host's, absent on the test wire)
 * is the same rule: 02:00:00 and the nid's low 24 bits. */
#define main allocd_main
#include "../../service-node/allocd.c"
#undef main

#include <errno.h>
#include <unistd.h>
#include "fuzz.h"
#include "fuzz_wire.h"
#include "ptl_me.h"

int cred_verify(const struct tern_hdr *req, size_t len, uint32_t *uid, uint32_t *gid, char *err,
                int errlen)
{
    if (len < sizeof *req || !memchr(req->cred, 0, sizeof req->cred) || !req->cred[0]) {
        snprintf(err, (size_t)errlen, "no MUNGE credential");
        return -1;
    }
    char *end;
    errno = 0;
    unsigned long u = strncmp(req->cred, "uid:", 4) ? 0 : strtoul(req->cred + 4, &end, 10);
    if (strncmp(req->cred, "uid:", 4) || errno || *end || end == req->cred + 4 ||
        u > UINT32_MAX - 1) {
        snprintf(err, (size_t)errlen, "not a credential");
        return -1;
    }
    *uid = *gid = (uint32_t)u;
    return 0;
}

int ptl_linux_nid_to_mac(uint32_t nid, uint8_t mac[6])
{
    if (nid > 0xffffffu)
        return -1;
    uint8_t m[6] = {2, 0, 0, (uint8_t)(nid >> 16), (uint8_t)(nid >> 8), (uint8_t)nid};
    memcpy(mac, m, 6);
    return 0;
}

struct peer {
    ptl_handle_ni_t ni;
    ptl_handle_eq_t eq;
    ptl_process_t id;
};
static struct peer N, L;
static char dir[4096];
static uint8_t *sink[2];

static void rm_dir(void)
{
    char p[4200];
    snprintf(p, sizeof p, "rm -rf '%s'", dir);
    if (system(p))
        fprintf(stderr, "could not remove %s\n", dir);
}

/* Everything that arrives at a peer is taken and dropped. */
static void peer(struct peer *n, unsigned iface, ptl_pid_t pid, uint8_t **buf)
{
    memset(n, 0, sizeof *n);
    FUZZ_OK(PtlNIInit(iface, PTL_NI_MATCHING | PTL_NI_PHYSICAL, pid, NULL, NULL, &n->ni));
    FUZZ_OK(PtlEQAlloc(n->ni, 1024, &n->eq));
    FUZZ_OK(PtlGetPhysId(n->ni, &n->id));
    *buf = calloc(1, 1 << 20);
    if (!*buf)
        abort();
    ptl_pt_index_t pts[] = {TERN_PT_REPLY, YOD_PT_REPORT, TERN_PT_SERVICE}, got;
    for (unsigned i = 0; i < 3; i++) {
        FUZZ_OK(PtlPTAlloc(n->ni, 0, n->eq, pts[i], &got));
        ptl_me_t me = ptl_me_phys(*buf, 1 << 20, PTL_ME_OP_PUT | PTL_ME_MANAGE_LOCAL, 0);
        me.ignore_bits = ~0ull;
        ptl_handle_me_t h;
        FUZZ_OK(PtlMEAppend(n->ni, pts[i], &me, PTL_PRIORITY_LIST, NULL, &h));
    }
}

static void fresh_state(void)
{
    char err[256], path[4200];
    snprintf(path, sizeof path, "%s/nodes.db", dir);
    unlink(path);
    unlink(launchers_path);
    if (nodedb_load(&db, path, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        abort();
    }
    njobs = 0;
    nfyods = 0;
    next_job = 1;
    memset(ping_outstanding, 0, sizeof ping_outstanding);
    memset(node_pid, 0, sizeof node_pid);
}

static void fuzz_setup(void)
{
    /* The database is written (and fsynced) on every change: tmpfs. */
    snprintf(dir, sizeof dir, "%s/tern-fuzz-allocd-XXXXXX",
             access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    if (!mkdtemp(dir))
        abort();
    atexit(rm_dir);
    snprintf(seq_path, sizeof seq_path, "%s/nodes.db.jobseq", dir);
    snprintf(launchers_path, sizeof launchers_path, "%s/nodes.db.launchers", dir);
    fresh_state();
    memset(fs_key, 0x5e, sizeof fs_key);
    ptl_test_host_init(3, 1500);
    /* A peer that does not answer is given up on after a few resends. */
    struct ptl_lib_tunables t;
    ptl_lib_get_tunables(&t);
    t.rto_init_ns = t.rto_max_ns = 1000000;
    t.giveup_ns = 5000000;
    ptl_lib_set_tunables(&t);
    char err[256];
    if (svc_open(&svc, TERN_ALLOC_PID, TERN_PT_SERVICE, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        abort();
    }
    peer(&N, 1, YOD_NODE_PID, &sink[0]);
    peer(&L, 2, 77, &sink[1]);
}

/* allocd takes its events as its main loop does. */
static bool take_events(void)
{
    ptl_event_t ev;
    bool any = false;
    while (PtlEQGet(svc.eq, &ev) == PTL_OK) {
        any = true;
        if (ev.type == PTL_EVENT_ACK)
            on_ack(&ev);
    }
    while (PtlEQGet(N.eq, &ev) == PTL_OK || PtlEQGet(L.eq, &ev) == PTL_OK)
        any = true;
    return any;
}

static void settle(void) { fuzz_settle(take_events, "allocd"); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_in in = {data, size};
    while (in.n) {
        unsigned who = (unsigned)fuzz_uint(&in, 1);
        if (who >= 0xfe) {         /* the periodic pings, or (0xfe) the ending nodes' */
            ping_nodes(who == 0xfe);
            ping_launchers();
            ping_fyods();
            settle();
            continue;
        }
        size_t want = (size_t)fuzz_uint(&in, 2), len;
        const uint8_t *p = fuzz_bytes(&in, want, &len);
        if (len > TERN_MSG_MAX)    /* the receive buffers' size */
            len = TERN_MSG_MAX;
        uint8_t *msg = malloc(len ? len : 1);
        if (!msg)
            abort();
        memcpy(msg, p, len);
        ptl_process_t from;
        from.phys.nid = (who & 1 ? N : L).id.phys.nid;
        from.phys.pid = who & 2 ? YOD_NODE_PID : 77;
        handle(msg, len, from);
        free(msg);
        settle();
    }
    fresh_state();
    return 0;
}

/* ---- seeds ----------------------------------------------------------------- */

/* A request as uid (the harness's credential, above); uid < 0: none. */
static size_t record_as(uint8_t *out, unsigned who, void *msg, size_t len, uint16_t type, int uid)
{
    struct tern_hdr *h = msg;
    h->magic = TERN_MAGIC;
    h->version = TERN_PROTO_VERSION;
    h->type = type;
    h->request_id = 99;
    h->reply_pid = who & 2 ? YOD_NODE_PID : 77;
    h->reply_pt = TERN_PT_REPLY;
    memset(h->cred, 0, sizeof h->cred);
    if (uid >= 0)
        snprintf(h->cred, sizeof h->cred, "uid:%d", uid);
    out[0] = (uint8_t)who;
    size_t k = 1 + fuzz_put(out + 1, len, 2);
    memcpy(out + k, msg, len);
    return k + len;
}

static size_t record(uint8_t *out, unsigned who, void *msg, size_t len, uint16_t type)
{
    return record_as(out, who, msg, len, type, type == TERN_REGISTER ? -1 : 0);
}

static void fuzz_write_seeds(const char *d)
{
    static uint8_t out[65536];
    struct tern_register reg = {.nid = PTL_TEST_NID(1),
                                .mac = {2, 0, 0, 0, PTL_TEST_NID(1) >> 8, PTL_TEST_NID(1) & 255},
                                .cores = 2, .mem_bytes = 1 << 30};
    struct tern_alloc al = {.count = 1};
    struct tern_alloc list = {.nlist = 1, .list = {PTL_TEST_NID(1)}};
    struct tern_release rel = {.job = 1};
    struct tern_hdr st = {0};
    struct tern_fyod_register fy = {.prefix = "/scratch"};
    size_t n = record(out, 3, &reg, sizeof reg, TERN_REGISTER);
    fuzz_seed(d, "register", out, n);
    n += record(out + n, 0, &al, offsetof(struct tern_alloc, list), TERN_ALLOC);
    n += record(out + n, 0, &st, sizeof st, TERN_STATUS);
    out[n++] = 0xff;
    n += record(out + n, 0, &rel, sizeof rel, TERN_KILL);
    n += record(out + n, 0, &rel, sizeof rel, TERN_RELEASE);
    fuzz_seed(d, "job", out, n);
    n = record(out, 3, &reg, sizeof reg, TERN_REGISTER);
    n += record(out + n, 0, &list, offsetof(struct tern_alloc, list) + 4, TERN_ALLOC);
    fuzz_seed(d, "alloc-list", out, n);
    /* A user's job, killed and released by another user, then by its owner. */
    n = record(out, 3, &reg, sizeof reg, TERN_REGISTER);
    n += record_as(out + n, 0, &al, offsetof(struct tern_alloc, list), TERN_ALLOC, 1000);
    n += record_as(out + n, 0, &rel, sizeof rel, TERN_KILL, 1001);
    n += record_as(out + n, 0, &rel, sizeof rel, TERN_RELEASE, 1001);
    n += record_as(out + n, 0, &rel, sizeof rel, TERN_RELEASE, 1000);
    n += record_as(out + n, 0, &st, sizeof st, TERN_STATUS, -1);
    fuzz_seed(d, "owners", out, n);
    /* A node given back unsure: the next request for it is EBUSY, and the
     * allocator pings it. */
    struct tern_release unsure = {.job = 1, .n_unsure = 1, .unsure = {PTL_TEST_NID(1)}};
    n = record(out, 3, &reg, sizeof reg, TERN_REGISTER);
    n += record(out + n, 0, &al, offsetof(struct tern_alloc, list), TERN_ALLOC);
    n += record(out + n, 0, &unsure, offsetof(struct tern_release, unsure) + 4, TERN_RELEASE);
    n += record(out + n, 0, &list, offsetof(struct tern_alloc, list) + 4, TERN_ALLOC);
    out[n++] = 0xfe;
    fuzz_seed(d, "ending", out, n);
    n = record(out, 0, &fy, sizeof fy, TERN_FYOD_REGISTER);
    n += record(out + n, 0, &st, sizeof st, TERN_FYODS);
    out[n++] = 0xff;
    fy.leaving = 1;
    n += record(out + n, 0, &fy, sizeof fy, TERN_FYOD_REGISTER);
    fuzz_seed(d, "fyod", out, n);
}
