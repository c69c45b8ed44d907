/* libFuzzer harness: what yod takes from the network while a job runs
 * (yod/monitor.c handle_event: node reports, the allocator's kill notice,
 * output puts; yod/output.c: line assembly per rank and stream).  yod's own
 * files but main.c are linked in; the harness is its main: a job of four
 * ranks on nids 0x101..0x104, running.
 *
 * Input: [flags:1] then records
 *   [kind:1] [from:1] [match_bits:8] [hdr_data:8] [len:2] [len bytes]
 * each handed to handle_event as a put event whose data is a heap block of
 * exactly len bytes.  flags bit 0: -label.  kind bit 0: on YOD_PT_REPORT
 * (else YOD_PT_OUTPUT); bit 1: from pid YOD_NODE_PID (else TERN_ALLOC_PID).
 * from: the sender is rank from % 5's node, or (4) the allocator.  Output
 * goes to /dev/null (run with -close_fd_mask=3). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fuzz.h"
#include "yod.h"
#include <tern/fio_proto.h>
#include <tern/tern_proto.h>

#define RANKS 4
#define ALLOC_NID 0x1ffu

struct yod Y;

double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void job_start(void)
{
    for (int r = 0; r < RANKS; r++) {
        for (int fd = 0; fd < 3; fd++)
            free(Y.ranks[r].out[fd].buf);
        memset(&Y.ranks[r], 0, sizeof Y.ranks[r]);
        Y.ranks[r].nid = 0x101u + (uint32_t)r;
        Y.ranks[r].state = R_RUNNING;
    }
}

static void fuzz_setup(void)
{
    Y.job = 7;
    Y.size = RANKS;
    Y.alloc_nid = ALLOC_NID;
    Y.opt.quiet = true;
    job_start();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_in in = {data, size};
    Y.opt.label = fuzz_uint(&in, 1) & 1;
    while (in.n) {
        unsigned kind = (unsigned)fuzz_uint(&in, 1);
        unsigned from = (unsigned)fuzz_uint(&in, 1) % (RANKS + 1);
        ptl_event_t ev;
        memset(&ev, 0, sizeof ev);
        ev.type = PTL_EVENT_PUT;
        ev.pt_index = kind & 1 ? YOD_PT_REPORT : YOD_PT_OUTPUT;
        ev.initiator.phys.nid = from < RANKS ? Y.ranks[from].nid : ALLOC_NID;
        ev.initiator.phys.pid = kind & 2 ? YOD_NODE_PID : TERN_ALLOC_PID;
        ev.match_bits = fuzz_uint(&in, 8);
        ev.hdr_data = fuzz_uint(&in, 8);
        size_t want = (size_t)fuzz_uint(&in, 2), len;
        const uint8_t *p = fuzz_bytes(&in, want, &len);
        void *msg = malloc(len ? len : 1);
        if (!msg)
            abort();
        memcpy(msg, p, len);
        ev.start = msg;
        ev.mlength = ev.rlength = len;
        handle_event(&ev);
        free(msg);
    }
    for (int r = 0; r < RANKS; r++)
        output_flush(r);
    job_start();
    return 0;
}

/* ---- seeds ----------------------------------------------------------------- */

static size_t record(uint8_t *out, unsigned kind, unsigned from, uint64_t bits, uint64_t hdr,
                     const void *msg, size_t len)
{
    size_t k = fuzz_put(out, kind, 1);
    k += fuzz_put(out + k, from, 1);
    k += fuzz_put(out + k, bits, 8);
    k += fuzz_put(out + k, hdr, 8);
    k += fuzz_put(out + k, len, 2);
    memcpy(out + k, msg, len);
    return k + len;
}

static void fuzz_write_seeds(const char *dir)
{
    static uint8_t out[65536];
    struct yod_report rp = {.magic = YOD_MAGIC, .type = YOD_LOADED, .job = 7, .rank = 1};
    size_t n = fuzz_put(out, 1, 1);
    n += record(out + n, 3, 1, 7, 0, &rp, sizeof rp);
    n += record(out + n, 2, 1, yod_output_bits(7, 1, 1), 12, "hello\nwor", 9);
    n += record(out + n, 2, 1, yod_output_bits(7, 1, 2), 4, "err\n", 4);
    n += record(out + n, 2, 2, yod_output_bits(7, 2, 1), 3, "xyz", 3);
    n += record(out + n, 2, 1, yod_output_bits(7, 1, 1), 12, "ld\n", 3);
    rp.type = YOD_EXITED;
    rp.status = 3;
    strcpy(rp.message, "exited");
    n += record(out + n, 3, 1, 7, 0, &rp, sizeof rp);
    fuzz_seed(dir, "output-exit", out, n);
    rp = (struct yod_report){.magic = YOD_MAGIC, .type = YOD_STDIN_WANT, .job = 7, .arg = 100,
                             .seq = 1};
    n = fuzz_put(out, 0, 1);
    n += record(out + n, 3, 0, 7, 0, &rp, sizeof rp);
    rp.type = YOD_LOAD_FAILED;
    rp.rank = 3;
    strcpy(rp.message, "no");
    n += record(out + n, 3, 3, 7, 0, &rp, sizeof rp);
    uint32_t kill[2] = {TERN_KILL_NOTICE, 7};
    n += record(out + n, 1, 4, 7, 0, kill, sizeof kill);
    fuzz_seed(dir, "reports", out, n);
}
