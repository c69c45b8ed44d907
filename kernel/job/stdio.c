/* A rank's standard streams.  Output goes to yod in Portals puts straight
 * from the program's buffer (no kernel copy), each acknowledged before
 * write() returns: the bytes are in yod's hands, in order, before the
 * program can exit.  yod's buffers may be full for a moment (it prints on a
 * terminal or a pipe); a rejected put is sent again after a pause, never
 * dropped.  Input: rank 0 asks yod for bytes and yod puts them straight into
 * the program's buffer; the other ranks read end of file. */
#include "job.h"
#include "kmalloc.h"
#include "ptl_kernel.h"
#include "time.h"
#include <tern/yod_proto.h>
#include "ptl_me.h"

#define RETRY_MAX_NS 50000000ULL
#define OUTPUT_DEADLINE_NS (120 * 1000000000ULL)

static void pause_ns(uint64_t ns)
{
    uint64_t until = time_monotonic_ns() + ns;
    while (time_monotonic_ns() < until)
        knode_wait(NULL, until);
}

long job_output(unsigned fd, const void *buf, uint64_t len)
{
    const char *p = buf;
    uint64_t left = len, bits = yod_output_bits(job.id, job.rank, fd);
    while (left) {
        uint64_t n = left < YOD_OUTPUT_CHUNK ? left : YOD_OUTPUT_CHUNK;
        uint64_t delay = 100000ULL;
        for (;;) {
            int rc = knode_put(p, n, job.yod_nid, job.yod_pid, YOD_PT_OUTPUT, bits,
                               time_monotonic_ns() + OUTPUT_DEADLINE_NS);
            if (rc == PTL_NI_OK)
                break;
            if (rc == PTL_NI_UNDELIVERABLE || rc == -1) {
                kprintf("job %u: yod does not take output any more: ending the job\n", job.id);
                job.yod_gone = true;
                job_end(END_SIGNAL, 9, NULL);
            }
            pause_ns(delay);              /* yod's buffers are full: try again */
            if (delay < RETRY_MAX_NS)
                delay *= 2;
        }
        p += n;
        left -= n;
    }
    return (long)len;
}

static struct yod_report want;
static ptl_handle_me_t stdin_me;
static bool stdin_linked;

long job_read_stdin(uint64_t ubuf, uint64_t len)
{
    if (job.rank != 0 || job.stdin_eof || len == 0)
        return 0;
    if (len > 1u << 20)
        len = 1u << 20;
    struct kop *op = kmalloc(sizeof *op);
    if (!op)
        return -12;   /* ENOMEM */
    memset(op, 0, sizeof *op);
    uint64_t seq = ++job.stdin_seq;
    ptl_me_t me = ptl_me_phys((void *)ubuf, len,
                              PTL_ME_OP_PUT | PTL_ME_USE_ONCE | PTL_ME_EVENT_LINK_DISABLE |
                              PTL_ME_EVENT_UNLINK_DISABLE,
                              (uint64_t)job.id << 32 | (seq & 0xFFFFFFFF));
    me.match_id.phys.nid = job.yod_nid;
    me.match_id.phys.pid = job.yod_pid;
    ptl_handle_me_t h;
    if (PtlMEAppend(knode.ni, YOD_PT_STDIN, &me, PTL_PRIORITY_LIST, op, &h) != PTL_OK) {
        kfree(op);
        return -5;    /* EIO */
    }
    stdin_me = h;
    stdin_linked = true;
    memset(&want, 0, sizeof want);
    want.magic = YOD_MAGIC;
    want.type = YOD_STDIN_WANT;
    want.job = job.id;
    want.rank = job.rank;
    want.arg = len;
    want.seq = seq;
    if (knode_put(&want, sizeof want, job.yod_nid, job.yod_pid, YOD_PT_REPORT, job.id,
                  time_monotonic_ns() + OUTPUT_DEADLINE_NS) != PTL_NI_OK) {
        stdin_linked = false;
        if (PtlMEUnlink(h) == PTL_OK)
            kfree(op);
        return -5;
    }
    /* As long as it takes the user to type: yod's heartbeat keeps the job
     * alive, and a signal from yod ends this wait like any other. */
    while (!op->done)
        knode_wait(op, time_monotonic_ns() + 1000000000ULL);
    stdin_linked = false;
    long n = (long)op->mlength;
    kfree(op);
    if (n == 0)
        job.stdin_eof = true;
    return n;
}

/* An entry left over a program's buffer must not outlive the program. */
void job_stdio_reset(void)
{
    if (stdin_linked)
        PtlMEUnlink(stdin_me);
    stdin_linked = false;
    memset(&want, 0, sizeof want);
}
