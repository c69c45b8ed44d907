/* Loading a job: a node waits for yod's descriptor, fetches the program from
 * its parent in the fan-out tree (yod, or a lower rank that already has it)
 * with one Portals Get straight into the application region, checks its
 * SHA-256, loads it, serves it to its own children, reports LOADED and
 * starts the program when yod says GO (every rank at once).  Nothing but the
 * kernel runs on the node. */
#include "boot.h"
#include "fd.h"
#include "files.h"
#include "job.h"
#include "kmalloc.h"
#include "mem.h"
#include "process.h"
#include "ptl_kernel.h"
#include "ptl_lib.h"
#include "ranks.h"
#include "smp.h"
#include "time.h"
#include <tern/sha256.h>
#include <tern/yod_proto.h>
#include "ptl_me.h"

#define LOAD_SLOTS 2
#define FETCH_TIMEOUT_NS (600 * 1000000000ULL)

struct job_state job;

static struct load_slot {
    struct { void *buf; } tag;             /* the ME's user_ptr */
    bool full;
    uint64_t mlength, rlength;
    ptl_process_t from;
} slots[LOAD_SLOTS];

static uint64_t default_stack, default_heap;

static int post_slot(struct load_slot *s)
{
    ptl_me_t me = ptl_me_phys(s->tag.buf, YOD_LOAD_MAX,
                              PTL_ME_OP_PUT | PTL_ME_USE_ONCE | PTL_ME_EVENT_LINK_DISABLE |
                              PTL_ME_EVENT_UNLINK_DISABLE,
                              YOD_MB_LOAD);
    ptl_handle_me_t h;
    s->full = false;
    return PtlMEAppend(knode.ni, YOD_PT_JOB, &me, PTL_PRIORITY_LIST, &s->tag, &h);
}

bool job_is_load_slot(const void *p)
{
    for (int i = 0; i < LOAD_SLOTS; i++)
        if (p == &slots[i].tag)
            return true;
    return false;
}

void job_on_load_put(const ptl_event_t *ev)
{
    for (int i = 0; i < LOAD_SLOTS; i++)
        if (ev->user_ptr == &slots[i].tag) {
            slots[i].full = true;
            slots[i].mlength = ev->mlength;
            slots[i].rlength = ev->rlength;
            slots[i].from = ev->initiator;
        }
}

static void report_rank(uint32_t nid, uint32_t pid, uint32_t jobid, uint32_t rank, uint32_t type,
                        const char *msg)
{
    static struct yod_report r;
    memset(&r, 0, sizeof r);
    r.magic = YOD_MAGIC;
    r.type = type;
    r.job = jobid;
    r.rank = rank;
    if (msg)
        strlcpy(r.message, msg, sizeof r.message);
    knode_put(&r, sizeof r, nid, pid, YOD_PT_REPORT, jobid,
              time_monotonic_ns() + 30 * 1000000000ULL);
}

static void report(uint32_t nid, uint32_t pid, uint32_t jobid, uint32_t type, const char *msg)
{
    report_rank(nid, pid, jobid, job.rank, type, msg);
}

/* A descriptor that cannot even be started on: told to its sender. */
static void refuse(const struct load_slot *s, const struct yod_load *d, const char *why)
{
    kprintf("refused a job from nid %u pid %u: %s\n", s->from.phys.nid, s->from.phys.pid, why);
    if (s->mlength >= sizeof *d && d->magic == YOD_MAGIC)
        report(s->from.phys.nid, s->from.phys.pid, d->job, YOD_LOAD_FAILED, why);
}

/* Puts a busy node's answer to a second yod (checked from the service
 * paths, where blocking is allowed).  A job whose end is decided
 * (job.ending: set before yod hears of it, end.c) is not busy: the
 * descriptor waits for the clean-up. */
void job_refuse_busy(void)
{
    for (int i = 0; i < LOAD_SLOTS; i++) {
        struct load_slot *s = &slots[i];
        if (!s->full || !job.active || job.ending)
            continue;
        char msg[96];
        snprintf(msg, sizeof msg, "node busy with job %u", job.id);
        uint32_t saved_rank = job.rank;
        const struct yod_load *d = s->tag.buf;
        job.rank = s->mlength >= sizeof *d ? d->rank : 0;
        refuse(s, d, msg);
        job.rank = saved_rank;
        post_slot(s);
    }
}

/* The file moves in chunks, so that a node passes each chunk on to its
 * children as soon as it has it: the load takes about size/bandwidth plus
 * one chunk per tree level, not size/bandwidth per level.  Chunk k is asked
 * for with match bits image_bits | k << 48 at offset k * chunk; a parent
 * answers for chunk k only once it holds it (until then the Get finds no
 * entry: PTL_NI_DROPPED, and is asked again shortly). */
#define CHUNK_MIN (1u << 20)
#define MAX_CHUNKS 256
#define RETRY_MAX_NS 20000000ULL

static ptl_handle_me_t chunk_me[MAX_CHUNKS];
static unsigned nchunk_me;

static uint64_t chunk_size(uint64_t len)
{
    uint64_t c = CHUNK_MIN;
    while (len / c >= MAX_CHUNKS)
        c *= 2;
    return c;
}

static uint64_t chunk_bits(const struct yod_load *d, uint64_t k)
{
    return d->image_bits | k << 48;
}

static void serve_chunk(const struct yod_load *d, void *img, uint64_t k)
{
    ptl_me_t me = ptl_me_phys(img, d->image_len,
                              PTL_ME_OP_GET | PTL_ME_EVENT_LINK_DISABLE |
                              PTL_ME_EVENT_UNLINK_DISABLE | PTL_ME_EVENT_SUCCESS_DISABLE,
                              chunk_bits(d, k));
    if (nchunk_me < MAX_CHUNKS &&
        PtlMEAppend(knode.ni, YOD_PT_IMAGE, &me, PTL_PRIORITY_LIST, NULL,
                    &chunk_me[nchunk_me]) == PTL_OK)
        nchunk_me++;
}

void job_unserve_image(void)
{
    while (nchunk_me)
        PtlMEUnlink(chunk_me[--nchunk_me]);
}

struct fetch {
    const struct yod_load *d;
    ptl_handle_md_t md;
    ptl_process_t parent;
    uint64_t csize, deadline;
};

static struct kop *get_chunk(const struct fetch *f, uint64_t k)
{
    const struct yod_load *d = f->d;
    uint64_t off = k * f->csize, len = d->image_len - off < f->csize ? d->image_len - off : f->csize;
    struct kop *op = kmalloc(sizeof *op);
    if (!op)
        load_error("%s: no kernel memory to fetch the program", d->name);
    memset(op, 0, sizeof *op);
    if (PtlGet(f->md, off, len, f->parent, YOD_PT_IMAGE, chunk_bits(d, k), off, op) != PTL_OK)
        load_error("%s: cannot start fetching the program", d->name);
    return op;
}

/* Waits for chunk k, asking again while the parent does not have it yet. */
static void finish_chunk(const struct fetch *f, uint64_t k, struct kop *op)
{
    const struct yod_load *d = f->d;
    uint64_t off = k * f->csize, len = d->image_len - off < f->csize ? d->image_len - off : f->csize;
    uint64_t delay = 200000ULL;
    for (;;) {
        if (!knode_wait(op, f->deadline))
            load_error("%s: fetching the program from nid %u took longer than %lu s", d->name,
                       d->parent_nid, (unsigned long)(FETCH_TIMEOUT_NS / 1000000000ULL));
        ptl_ni_fail_t fail = op->fail;
        uint64_t got = op->mlength;
        kfree(op);
        if (fail == PTL_NI_OK && got == len)
            return;
        if (fail == PTL_NI_OK)
            load_error("%s: got %lu of %lu program bytes from nid %u", d->name, got, len,
                       d->parent_nid);
        if (fail == PTL_NI_UNDELIVERABLE)
            load_error("%s: nid %u (pid %u), where the program comes from, does not answer",
                       d->name, d->parent_nid, d->parent_pid);
        if (time_monotonic_ns() >= f->deadline)
            load_error("%s: nid %u never offered the program", d->name, d->parent_nid);
        knode_pause(delay);
        if (delay < RETRY_MAX_NS)
            delay *= 2;
        op = get_chunk(f, k);
    }
}

/* SHA-256 of a chunk in slices, answering the network in between.  Under a
 * hypervisor that emulates kernel mode (kvm_pvm) hashing a 65 KiB program
 * took 6-8 s, a 1 MiB chunk would take minutes, and yod gave up on the
 * silent node after 5 s. */
#define HASH_SLICE 1024u

static void hash_answering(struct sha256 *h, const uint8_t *p, uint64_t len)
{
    while (len) {
        uint64_t n = len < HASH_SLICE ? len : HASH_SLICE;
        sha256_update(h, p, n);
        p += n;
        len -= n;
        knode_keepalive();
    }
}

/* Fetches the file chunk by chunk from the parent, the next chunk already
 * on its way while this one is hashed and offered to this node's children;
 * fills sum. */
static void fetch_image(const struct yod_load *d, uint8_t *dst, uint8_t sum[32])
{
    struct fetch f = {.d = d, .csize = chunk_size(d->image_len),
                      .deadline = time_monotonic_ns() + FETCH_TIMEOUT_NS};
    f.parent.phys.nid = d->parent_nid;
    f.parent.phys.pid = d->parent_pid;
    ptl_md_t mdd = {.start = dst, .length = d->image_len, .options = 0,
                    .eq_handle = knode.eq, .ct_handle = PTL_CT_NONE};
    if (PtlMDBind(knode.ni, &mdd, &f.md) != PTL_OK)
        load_error("%s: no kernel memory to fetch the program", d->name);
    struct sha256 h;
    sha256_init(&h);
    uint64_t n = (d->image_len + f.csize - 1) / f.csize;
    struct kop *next = get_chunk(&f, 0);
    for (uint64_t k = 0; k < n; k++) {
        finish_chunk(&f, k, next);
        if (k + 1 < n)
            next = get_chunk(&f, k + 1);
        uint64_t off = k * f.csize;
        hash_answering(&h, dst + off, d->image_len - off < f.csize ? d->image_len - off : f.csize);
        serve_chunk(d, dst, k);
    }
    PtlMDRelease(f.md);
    sha256_final(&h, sum);
}

/* Checks the descriptor before anything is done with it; NULL or why not. */
static const char *check(const struct load_slot *s, const struct yod_load *d)
{
    if (s->mlength < sizeof *d || d->magic != YOD_MAGIC)
        return "not a job descriptor";
    if (d->version != YOD_PROTO_VERSION)
        return "yod speaks another protocol version";
    if (s->rlength > s->mlength)
        return "descriptor longer than the node accepts (64 KiB)";
    if (d->size == 0 || d->rank >= d->size || d->size > (YOD_LOAD_MAX - sizeof *d) / 4)
        return "bad rank or size";
    if (d->nlocal > d->size - d->rank || d->nlocal > MAX_RANKS)
        return "bad count of ranks for the node";
    if (d->nlocal > smp_ncpus()) {
        static char why[96];
        snprintf(why, sizeof why, "-ppn %u: this node has %u CPU%s, and a rank needs a core of "
                 "its own", d->nlocal, smp_ncpus(), smp_ncpus() == 1 ? "" : "s");
        return why;
    }
    if ((uint64_t)sizeof *d + (uint64_t)d->size * 4 + d->strings_len + d->files_len !=
        s->mlength)
        return "descriptor length does not add up";
    if (d->argc == 0 || (uint64_t)d->argc + d->envc + 8 >= MAX_ARGS)
        return "too many arguments and environment words (limit 500)";
    if (d->image_len == 0)
        return "empty program";
    if (s->from.phys.nid != d->yod_nid || s->from.phys.pid != d->yod_pid)
        return "descriptor names another yod than its sender";
    if (d->parent_pid != YOD_NODE_PID && (d->parent_nid != d->yod_nid ||
                                           d->parent_pid != d->yod_pid))
        return "the program comes from neither yod nor a node kernel";
    const char *p = (const char *)(d + 1) + (uint64_t)d->size * 4, *end = p + d->strings_len;
    uint32_t words = 0;
    for (const char *q = p; q < end; q++)
        words += *q == 0;
    if (words != d->argc + d->envc || (d->strings_len && end[-1] != 0))
        return "argument strings malformed";
    return NULL;
}

#define GRANT_WAIT_NS (5 * 1000000000ULL)

/* The allocator's word for the job: its grant names this launcher, the
 * descriptor proves the job's key (its mac field is zeroed here to check
 * it) and asks for the grant's uid and gid.  NULL or why not. */
static const char *authorised(struct load_slot *s, struct yod_load *d,
                              const struct job_grant **gp)
{
    const struct job_grant *g = job_grant_find(d->job, GRANT_WAIT_NS);
    if (!g)
        return "the allocator has not given this node that job";
    if (s->from.phys.nid != g->launcher_nid || s->from.phys.pid != g->launcher_pid)
        return "not from the launcher the allocator named for the job";
    uint8_t mac[32], want[32];
    memcpy(mac, d->mac, sizeof mac);
    memset(d->mac, 0, sizeof d->mac);
    hmac_sha256(g->key, sizeof g->key, d, s->mlength, want);
    if (!mac_equal(mac, want, sizeof want))
        return "no proof of the job's key";
    if (d->uid != g->uid || d->gid != g->gid)
        return "asks for another uid or gid than the allocator granted";
    *gp = g;
    return NULL;
}

static char *argv[MAX_ARGS], *envp[MAX_ARGS];
static bool ours(const char *e)
{
    static const char *const mine[] = {"TERN_RANK=", "TERN_SIZE=", "TERN_JOB=", "TERN_MAP=",
                                       "TERN_PID="};
    for (unsigned i = 0; i < ARRAY_SIZE(mine); i++)
        if (!strncmp(e, mine[i], strlen(mine[i])))
            return true;
    return false;
}

/* argv and the environment: TERN_* job variables (docs/job-interface.md)
 * first, then yod's environment. */
/* The running job's descriptor (its name is proc.name) and TERN_MAP string:
 * kept until the job ends, then freed by job_loader_reset.  They used to be
 * left behind, 2 KiB or more of the kernel heap per job. */
static struct yod_load *job_desc;
static char *job_map;
/* envp[0] and envp[3]: rewritten for each of a node's ranks (yod -ppn). */
static char rank_var[32], pid_var[32];

void job_loader_reset(void)
{
    kfree(job_map);
    kfree(job_desc);
    job_map = NULL;
    job_desc = NULL;
}

static int build_args(const struct yod_load *d, int *envc)
{
    const uint32_t *nids = (const uint32_t *)(d + 1);
    char *p = (char *)(nids + d->size);
    int argc = 0;
    for (uint32_t i = 0; i < d->argc; i++, p += strlen(p) + 1)
        argv[argc++] = p;
    argv[argc] = NULL;
    snprintf(rank_var, sizeof rank_var, "TERN_RANK=%u", d->rank);
    static char size[32], jobid[32];
    snprintf(size, sizeof size, "TERN_SIZE=%u", d->size);
    snprintf(jobid, sizeof jobid, "TERN_JOB=%u", d->job);
    snprintf(pid_var, sizeof pid_var, "TERN_PID=%u", TERN_APP_PID);
    /* Ranks that share a node (yod -ppn) are told apart by pid: then every
     * entry is nid:pid, the pids of a node's ranks TERN_APP_PID + 0, 1, ...
     * in rank order (yod_proto.h), the same map in every rank. */
    bool shared = false;
    for (uint32_t r = 1; r < d->size && !shared; r++)
        shared = nids[r] == nids[r - 1];
    char *map = kmalloc((uint64_t)d->size * 18 + 16);
    if (!map)
        load_error("%s: no kernel memory for the map of %u ranks", d->name, d->size);
    job_map = map;
    char *m = map + snprintf(map, 16, "TERN_MAP=");
    uint32_t local = 0;
    for (uint32_t r = 0; r < d->size; r++) {
        local = r && nids[r] == nids[r - 1] ? local + 1 : 0;
        if (shared)
            m += snprintf(m, 19, r ? ",%u:%u" : "%u:%u", nids[r], TERN_APP_PID + local);
        else
            m += snprintf(m, 12, r ? ",%u" : "%u", nids[r]);
    }
    int n = 0;
    envp[n++] = rank_var, envp[n++] = size, envp[n++] = jobid, envp[n++] = pid_var;
    envp[n++] = map;
    for (uint32_t i = 0; i < d->envc; i++, p += strlen(p) + 1)
        if (!ours(p))
            envp[n++] = p;
    envp[n] = NULL;
    *envc = n;
    return argc;
}

static void wait_for_go(void)
{
    while (!job.go)
        knode_wait(NULL, time_monotonic_ns() + 1000000000ULL);
}

static void run_job(struct load_slot *s)
{
    struct yod_load *in = s->tag.buf;
    const struct job_grant *g = NULL;
    const char *bad = check(s, in);
    if (!bad && (bad = authorised(s, in, &g)))
        job_refused("a job", s->from.phys.nid, s->from.phys.pid, bad);
    if (!bad) {
        /* It takes the job's mount table and working directory. */
        const char *p = (const char *)(in + 1) + (uint64_t)in->size * 4 + in->strings_len;
        bad = files_job_setup(p, in->files_len, in->rank, in->yod_nid, in->yod_pid);
    }
    if (bad) {
        refuse(s, in, bad);
        post_slot(s);
        return;
    }
    /* The slot goes back to the network at once; the job keeps a copy. */
    struct yod_load *d = kmalloc(s->mlength);
    if (!d) {
        refuse(s, in, "no kernel memory for the descriptor");
        post_slot(s);
        return;
    }
    memcpy(d, in, s->mlength);
    post_slot(s);
    job_loader_reset();           /* nothing should be left, but never leak */
    job_desc = d;
    /* Every yod is a new Portals process, and the kernel NI kept a 4 KiB
     * peer for each one for as long as the node ran: after a few dozen
     * jobs the kernel heap was full (PtlEQAlloc of the next program failed
     * with PTL_NO_SPACE, or a peer could not be created).  The previous
     * job's yod is gone by now; forget it. */
    static uint32_t last_yod_nid, last_yod_pid;
    static bool last_yod;
    if (last_yod && (last_yod_nid != d->yod_nid || last_yod_pid != d->yod_pid))
        ptl_lib_forget_peer(TERN_KERNEL_IFACE, last_yod_nid, last_yod_pid);
    last_yod = true;
    last_yod_nid = d->yod_nid;
    last_yod_pid = d->yod_pid;

    memset(&job, 0, sizeof job);
    job.active = true;
    job_state_publish(d->job);
    job.id = d->job, job.rank = d->rank, job.size = d->size;
    job.uid = g->uid, job.gid = g->gid;
    job.yod_nid = d->yod_nid, job.yod_pid = d->yod_pid;
    memcpy(job.key, g->key, sizeof job.key);
    memcpy(job.fio_token, g->fio_token, sizeof job.fio_token);
    job_grant_drop(d->job);
    job.last_heard_ns = time_monotonic_ns();
    job_attach();
    d->name[sizeof d->name - 1] = 0;
    proc.name = d->name;
    kprintf("job %u: rank %u of %u, %s (%lu KiB) for uid %u from yod at nid %u pid %u\n", d->job,
            d->rank, d->size, d->name, d->image_len >> 10, d->uid, d->yod_nid, d->yod_pid);

    options.stack_size = d->stack ? d->stack : default_stack;
    options.heap_size = d->heap ? d->heap : default_heap;
    options.uid = job.uid;
    options.gid = job.gid;
    uint64_t stack = ALIGN_UP(options.stack_size, PAGE_SIZE);
    uint64_t top = proc.region_end - stack - PAGE_SIZE;
    uint64_t len = ALIGN_UP(d->image_len, PAGE_SIZE);
    if (top < proc.region_pa + len + PAGE_SIZE)
        load_error("%s: the program file (%lu KiB) and stack do not fit in the %lu KiB this "
                   "node has for applications", d->name, d->image_len >> 10,
                   (proc.region_end - proc.region_pa) >> 10);
    uint64_t stage_pa = top - len;
    uint8_t *image = phys_to_virt(stage_pa);
    mem_dirty_mark(stage_pa, len);                     /* the file arrives through the direct map */

    uint64_t t0 = time_monotonic_ns();
    uint8_t sum[32];
    fetch_image(d, image, sum);
    if (memcmp(sum, d->image_sha256, 32))
        load_error("%s: the program arrived corrupted (SHA-256 differs from yod's)", d->name);
    kprintf("job %u: program fetched from nid %u and checked in %lu ms\n", d->job, d->parent_nid,
            (time_monotonic_ns() - t0) / 1000000);

    int envc;
    int argc = build_args(d, &envc);
    files_set_exe(argc ? argv[0] : d->name);
    unsigned nlocal = d->nlocal ? d->nlocal : 1;
    if (nlocal > 1) {
        /* Ranks per core (yod -ppn): the region split nlocal ways, the
         * program loaded into each part, rank i on CPU i (ranks.c). */
        ranks_load(image, d->image_len, nlocal, d->name);
        ranks_set_base(d->rank);
        /* Each rank its own descriptors, and the job's working directory
         * (files_job_setup set rank 0's) to start from. */
        fd_init();
        for (unsigned i = 1; i < nlocal; i++)
            strlcpy(ranks_process(i)->cwd, proc_main.cwd, sizeof proc_main.cwd);
        for (unsigned i = 0; i < nlocal; i++) {
            snprintf(rank_var, sizeof rank_var, "TERN_RANK=%u", d->rank + i);
            snprintf(pid_var, sizeof pid_var, "TERN_PID=%u", TERN_APP_PID + i);
            ranks_prepare(i, argv, argc, envp, envc);
        }
        ranks_set_end_hook(job_rank_ended);
        for (unsigned i = 0; i < nlocal; i++)
            report_rank(job.yod_nid, job.yod_pid, job.id, d->rank + i, YOD_LOADED, NULL);
    } else {
        elf_load(image, d->image_len, stage_pa);
        fd_init();
        process_setup(argv, argc, envp, envc);
        report(job.yod_nid, job.yod_pid, job.id, YOD_LOADED, NULL);
    }
    wait_for_go();

    job_unserve_image();
    kprintf("job %u: starting %s\n", job.id, d->name);
    job.running = true;
    job.start_ns = time_monotonic_ns();
    job_tick_start();
    time_mark_app_start();
    if (nlocal > 1)
        ranks_run();
    process_start();
}

void job_go(void) { job.go = true; }

void job_loop(void)
{
    static bool ready;
    if (!ready) {
        default_stack = options.stack_size;
        default_heap = options.heap_size;
        for (int i = 0; i < LOAD_SLOTS; i++) {
            slots[i].tag.buf = kmalloc(YOD_LOAD_MAX);
            if (!slots[i].tag.buf || post_slot(&slots[i]) != PTL_OK)
                panic("cannot post job descriptor buffers");
        }
        ready = true;
        kprintf("waiting for jobs\n");
    }
    for (;;) {
        for (int i = 0; i < LOAD_SLOTS; i++)
            if (slots[i].full)
                run_job(&slots[i]);
        knode_wait(NULL, time_monotonic_ns() + 1000000000ULL);
        job_refusals_report();
    }
}
