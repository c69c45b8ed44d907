/* A hostile job's program and its victim, for tests/test_security.py: what
 * a program can send with the Portals calls every Tern program has.
 *
 *   intruder wait S              sleeps S seconds (a job to kill or release)
 *   intruder victim S [N]        a logical NI over TERN_MAP: a put entry on
 *                                PT 5 and a get entry over a secret on PT 6;
 *                                prints every put that arrives in S seconds
 *                                (or until N requests were refused) and the
 *                                NI's count of refused requests
 *   intruder inject NID          as "rank 0" of a map {itself, NID}: puts a
 *                                message into rank 1's PT 5, Gets its PT 6
 *   intruder flood NID N         the same map: N puts of 1 MiB into rank 1's
 *                                PT 5, each right after the last one's ACK;
 *                                each is refused at its first frame, while
 *                                its other frames are still on their way
 *   intruder forge-load NID PROG a job descriptor naming itself as yod and
 *                                uid 0, PROG served by itself, to NID's kernel
 *   intruder forge-register      a node's REGISTER, for a MAC it makes up, to
 *                                the allocator
 *   intruder forge-fio NID PID PATH   (the Linux build, as pid 1 on the
 *                                service node: TERN_PID=1) a node kernel's
 *                                file request for PATH as uid 0, to the file
 *                                server at NID PID
 * Each prints what happened: "... fail=N" is the Portals ni_fail_type
 * (0 delivered, 4 PTL_NI_PERM_VIOLATION: refused), or "no answer". */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "portals4.h"
#include "test_clock.h"
#include <tern/fio_proto.h>
#include <tern/sha256.h>
#include <tern/tern_proto.h>
#include <tern/yod_proto.h>

#define PT_PUT 5
#define PT_GET 6

static ptl_handle_ni_t ni;
static ptl_handle_eq_t eq;
static bool logical;

static void check(int rc, const char *what)
{
    if (rc != PTL_OK) {
        printf("%s = %d\n", what, rc);
        exit(2);
    }
}

static void open_ni(unsigned kind)
{
    check(PtlInit(), "PtlInit");
    check(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | kind, PTL_PID_ANY, NULL, NULL, &ni),
          "PtlNIInit");
    logical = kind == PTL_NI_LOGICAL;
    check(PtlEQAlloc(ni, 256, &eq), "PtlEQAlloc");
}

static void pt_at(ptl_pt_index_t want)
{
    ptl_pt_index_t got;
    check(PtlPTAlloc(ni, 0, eq, want, &got), "PtlPTAlloc");
}

static void append(ptl_pt_index_t pt, void *start, uint64_t len, unsigned opts, uint64_t bits,
                   uint64_t ignore)
{
    ptl_me_t me = {.start = start, .length = len, .ct_handle = PTL_CT_NONE, .uid = PTL_UID_ANY,
                   .options = opts | PTL_ME_EVENT_LINK_DISABLE, .match_bits = bits,
                   .ignore_bits = ignore};
    if (logical)
        me.match_id.rank = PTL_RANK_ANY;
    else {
        me.match_id.phys.nid = PTL_NID_ANY;
        me.match_id.phys.pid = PTL_PID_ANY;
    }
    ptl_handle_me_t h;
    check(PtlMEAppend(ni, pt, &me, PTL_PRIORITY_LIST, NULL, &h), "PtlMEAppend");
}

/* The next event of one of the kinds asked for, or 0 after s seconds. */
static int next_event(ptl_event_t *ev, double s, ptl_event_kind_t a, ptl_event_kind_t b)
{
    double end = now_s() + s;
    while (now_s() < end) {
        unsigned which;
        int rc = PtlEQPoll(&eq, 1, 200, ev, &which);
        if ((rc == PTL_OK || rc == PTL_EQ_DROPPED) && (ev->type == a || ev->type == b))
            return 1;
    }
    return 0;
}

static ptl_handle_md_t bind(void *buf, uint64_t len)
{
    ptl_md_t md = {.start = buf, .length = len, .options = PTL_MD_EVENT_SEND_DISABLE,
                   .eq_handle = eq, .ct_handle = PTL_CT_NONE};
    ptl_handle_md_t h;
    check(PtlMDBind(ni, &md, &h), "PtlMDBind");
    return h;
}

static ptl_process_t phys(uint32_t nid, uint32_t pid)
{
    ptl_process_t p;
    p.phys.nid = nid;
    p.phys.pid = pid;
    return p;
}

/* Puts len bytes and says how it went: the ni_fail_type, -1 no answer. */
static int put_and_tell(const char *what, void *buf, uint64_t len, ptl_process_t to,
                         ptl_pt_index_t pt, uint64_t bits)
{
    check(PtlPut(bind(buf, len), 0, len, PTL_ACK_REQ, to, pt, bits, 0, NULL, 0), "PtlPut");
    ptl_event_t ev;
    int fail = -1;
    if (next_event(&ev, 15, PTL_EVENT_ACK, PTL_EVENT_ACK))
        printf("%s: put fail=%d\n", what, fail = (int)ev.ni_fail_type);
    else
        printf("%s: put no answer\n", what);
    fflush(stdout);
    return fail;
}

/* Ends after secs, or once `enough` requests were refused (0: never): an
 * intruder's requests are each answered, so by then the last has come and
 * gone, and one that got in was printed before.  A request that gets in
 * keeps the count below `enough`, and the victim listens for all of secs. */
static int victim(double secs, unsigned long enough)
{
    open_ni(PTL_NI_LOGICAL);
    const char *m = getenv("TERN_MAP");
    int size = atoi(getenv("TERN_SIZE") ? getenv("TERN_SIZE") : "0");
    ptl_process_t *map = calloc((size_t)size + 1, sizeof *map);
    for (int r = 0; m && r < size; r++) {
        map[r] = phys((uint32_t)strtoul(m, (char **)&m, 10), TERN_APP_PID);
        if (*m == ',')
            m++;
    }
    check(PtlSetMap(ni, (ptl_size_t)size, map), "PtlSetMap");
    pt_at(PT_PUT);
    pt_at(PT_GET);
    static char inbox[4096], secret[64];
    snprintf(secret, sizeof secret, "VICTIM-SECRET-%s", getenv("TERN_JOB"));
    append(PT_PUT, inbox, sizeof inbox, PTL_ME_OP_PUT | PTL_ME_MANAGE_LOCAL, 0, ~0ULL);
    append(PT_GET, secret, sizeof secret, PTL_ME_OP_GET, 0, ~0ULL);
    printf("victim ready\n");
    fflush(stdout);
    double end = now_s() + secs;
    int got = 0;
    ptl_event_t ev;
    ptl_sr_value_t refused = 0;
    while (now_s() < end) {
        PtlNIStatus(ni, PTL_SR_PERMISSIONS_VIOLATIONS, &refused);
        if (enough && (unsigned long)refused >= enough)
            break;
        double left = end - now_s();
        if (next_event(&ev, left < 0.2 ? left : 0.2, PTL_EVENT_PUT, PTL_EVENT_GET)) {
            if (ev.type == PTL_EVENT_PUT)
                printf("victim: got from rank %u: %.*s\n", ev.initiator.rank, (int)ev.mlength,
                       (char *)ev.start);
            else
                printf("victim: rank %u read the secret\n", ev.initiator.rank);
            fflush(stdout);
            got++;
        }
    }
    PtlNIStatus(ni, PTL_SR_PERMISSIONS_VIOLATIONS, &refused);
    printf("victim: %d arrived, %lu refused\n", got, (unsigned long)refused);
    return 0;
}

static int inject(uint32_t nid)
{
    open_ni(PTL_NI_LOGICAL);
    ptl_process_t self;
    PtlGetPhysId(ni, &self);
    ptl_process_t map[2] = {self, phys(nid, TERN_APP_PID)};
    check(PtlSetMap(ni, 2, map), "PtlSetMap");
    static char msg[] = "INJECTED by another user's job";
    ptl_process_t to = {.rank = 1};
    put_and_tell("inject", msg, sizeof msg - 1, to, PT_PUT, 0);
    static char loot[64];
    check(PtlGet(bind(loot, sizeof loot), 0, sizeof loot, to, PT_GET, 0, 0, NULL), "PtlGet");
    ptl_event_t ev;
    if (next_event(&ev, 15, PTL_EVENT_REPLY, PTL_EVENT_REPLY))
        printf("get: fail=%d got '%.*s'\n", (int)ev.ni_fail_type, (int)ev.mlength, loot);
    else
        printf("get: no answer\n");
    return 0;
}

static int flood(uint32_t nid, int n)
{
    open_ni(PTL_NI_LOGICAL);
    ptl_process_t self;
    PtlGetPhysId(ni, &self);
    ptl_process_t map[2] = {self, phys(nid, TERN_APP_PID)};
    check(PtlSetMap(ni, 2, map), "PtlSetMap");
    static char big[1 << 20];
    memset(big, 'F', sizeof big);
    ptl_handle_md_t md = bind(big, sizeof big);
    ptl_process_t to = {.rank = 1};
    int refused = 0, other = 0, silent = 0;
    for (int i = 0; i < n; i++) {
        check(PtlPut(md, 0, sizeof big, PTL_ACK_REQ, to, PT_PUT, 0, 0, NULL, 0), "PtlPut");
        ptl_event_t ev;
        if (!next_event(&ev, 15, PTL_EVENT_ACK, PTL_EVENT_ACK))
            silent++;
        else if (ev.ni_fail_type == PTL_NI_PERM_VIOLATION)
            refused++;
        else
            other++;
    }
    printf("flood: %d puts, %d refused, %d otherwise, %d no answer\n", n, refused, other, silent);
    return 0;
}

static int forge_load(uint32_t nid, const char *prog)
{
    int fd = open(prog, O_RDONLY);
    static uint8_t image[8 << 20];
    ssize_t n = fd < 0 ? -1 : read(fd, image, sizeof image);
    if (n <= 0) {
        printf("forge-load: cannot read %s\n", prog);
        return 2;
    }
    open_ni(PTL_NI_PHYSICAL);
    ptl_process_t self;
    PtlGetPhysId(ni, &self);
    pt_at(YOD_PT_IMAGE);
    pt_at(YOD_PT_REPORT);
    const uint64_t bits = 0x4242ULL << 16;
    /* Every chunk the node asks for (bits | k << 48) comes from one entry. */
    append(YOD_PT_IMAGE, image, (uint64_t)n, PTL_ME_OP_GET, bits, 0xFFFFULL << 48);
    static struct yod_report rep;
    append(YOD_PT_REPORT, &rep, sizeof rep, PTL_ME_OP_PUT, 0, ~0ULL);
    const char *name = "forged";
    size_t files = sizeof(struct yod_files) + 2;
    size_t len = sizeof(struct yod_load) + 4 + strlen(name) + 1 + files;
    uint8_t *buf = calloc(1, len);
    struct yod_load *d = (struct yod_load *)buf;
    *d = (struct yod_load){.magic = YOD_MAGIC, .version = YOD_PROTO_VERSION, .job = 4242,
                           .rank = 0, .size = 1, .yod_nid = self.phys.nid,
                           .yod_pid = self.phys.pid, .uid = 0, .gid = 0,
                           .parent_nid = self.phys.nid, .parent_pid = self.phys.pid, .argc = 1,
                           .envc = 0, .strings_len = (uint32_t)strlen(name) + 1,
                           .image_bits = bits, .image_len = (uint64_t)n,
                           .files_len = (uint32_t)files};
    sha256(image, (size_t)n, d->image_sha256);
    strcpy(d->name, name);
    uint8_t *p = buf + sizeof *d;
    memcpy(p, &nid, 4);
    p += 4;
    strcpy((char *)p, name);
    p += strlen(name) + 1;
    struct yod_files fh = {YOD_FILES_MAGIC, YOD_FILES_VERSION, (uint32_t)files, 0, 022, 2};
    memcpy(p, &fh, sizeof fh);
    strcpy((char *)p + sizeof fh, "/");
    int fail = put_and_tell("forge-load", buf, len, phys(nid, YOD_NODE_PID), YOD_PT_JOB,
                            YOD_MB_LOAD);
    ptl_event_t ev;
    if (fail == PTL_NI_OK && next_event(&ev, 30, PTL_EVENT_PUT, PTL_EVENT_PUT))
        printf("forge-load: report %u from the node: %s\n", rep.type,
               rep.type == YOD_LOADED ? "LOADED" : rep.message);
    else
        printf("forge-load: no report\n");
    return 0;
}

static int forge_register(void)
{
    open_ni(PTL_NI_PHYSICAL);
    ptl_process_t self;
    PtlGetPhysId(ni, &self);
    pt_at(TERN_PT_REPLY);
    static struct tern_reply rep;
    append(TERN_PT_REPLY, &rep, sizeof rep, PTL_ME_OP_PUT, 0, ~0ULL);
    static struct tern_register r;
    r.h = (struct tern_hdr){.magic = TERN_MAGIC, .version = TERN_PROTO_VERSION,
                            .type = TERN_REGISTER, .request_id = 77,
                            .reply_pid = self.phys.pid, .reply_pt = TERN_PT_REPLY};
    r.nid = self.phys.nid;
    static const uint8_t fake[6] = {0x02, 0, 0, 0, 0, 0x77};
    memcpy(r.mac, fake, 6);
    int fail = put_and_tell("forge-register", &r, sizeof r, phys(0, TERN_ALLOC_PID),
                            TERN_PT_SERVICE, 0);
    ptl_event_t ev;
    if (fail == PTL_NI_OK && next_event(&ev, 10, PTL_EVENT_PUT, PTL_EVENT_PUT))
        printf("forge-register: the allocator says %d: %s\n", rep.status, rep.message);
    else
        printf("forge-register: no answer\n");
    return 0;
}

static int forge_revoke(uint32_t nid, uint32_t job)
{
    open_ni(PTL_NI_PHYSICAL);
    static struct tern_grant g;
    g.h = (struct tern_hdr){.magic = TERN_MAGIC, .version = TERN_PROTO_VERSION,
                            .type = TERN_REVOKE};
    g.job = job;
    put_and_tell("forge-revoke", &g, sizeof g, phys(nid, YOD_NODE_PID), TERN_PT_SERVICE,
                 TERN_MB_GRANT);
    return 0;
}

static int forge_fio(uint32_t nid, uint32_t pid, const char *path)
{
    open_ni(PTL_NI_PHYSICAL);
    pt_at(FIO_PT_REPLY);
    static struct fio_reply rep;
    append(FIO_PT_REPLY, &rep, sizeof rep, PTL_ME_OP_PUT, 0, ~0ULL);
    static uint8_t buf[sizeof(struct fio_req) + FIO_PATH_MAX];
    struct fio_req *r = (struct fio_req *)buf;
    *r = (struct fio_req){.magic = FIO_MAGIC, .version = FIO_VERSION, .op = FIO_OPEN,
                          .id = 99, .job = 4242, .uid = 0, .gid = 0, .flags = 0 /* O_RDONLY */,
                          .path_len = (uint32_t)strlen(path) + 1};
    strcpy((char *)(r + 1), path);
    int fail = put_and_tell("forge-fio", buf, sizeof *r + r->path_len, phys(nid, pid),
                            FIO_PT_REQ, FIO_MB_REQ);
    ptl_event_t ev;
    if (fail == PTL_NI_OK && next_event(&ev, 10, PTL_EVENT_PUT, PTL_EVENT_PUT))
        printf("forge-fio: result %lld\n", (long long)rep.result);
    else
        printf("forge-fio: no answer\n");
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 3 && !strcmp(argv[1], "wait")) {
        printf("waiting\n");
        fflush(stdout);
        sleep((unsigned)atoi(argv[2]));
        return 0;
    }
    if ((argc == 3 || argc == 4) && !strcmp(argv[1], "victim"))
        return victim(atof(argv[2]), argc == 4 ? strtoul(argv[3], NULL, 10) : 0);
    if (argc == 3 && !strcmp(argv[1], "inject"))
        return inject((uint32_t)atoi(argv[2]));
    if (argc == 4 && !strcmp(argv[1], "flood"))
        return flood((uint32_t)atoi(argv[2]), atoi(argv[3]));
    if (argc == 4 && !strcmp(argv[1], "forge-load"))
        return forge_load((uint32_t)atoi(argv[2]), argv[3]);
    if (argc == 2 && !strcmp(argv[1], "forge-register"))
        return forge_register();
    if (argc == 4 && !strcmp(argv[1], "forge-revoke"))
        return forge_revoke((uint32_t)atoi(argv[2]), (uint32_t)atoi(argv[3]));
    if (argc == 5 && !strcmp(argv[1], "forge-fio"))
        return forge_fio((uint32_t)atoi(argv[2]), (uint32_t)atoi(argv[3]), argv[4]);
    fprintf(stderr, "usage: see tests/portals/kernel/intruder.c\n");
    return 2;
}
