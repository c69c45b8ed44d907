/* A rank's standard streams.  Output goes to yod in Portals puts straight
 * from the program's buffers (no kernel copy; a writev is one write, its
 * pieces gathered into each put), each acknowledged before write() returns:
 * the bytes are in yod's hands, in order, before the program can exit.
 * yod takes no more while its own output waits for a slow reader (a pipe
 * read slowly, a terminal): a rejected put is sent again after a pause,
 * never dropped, and the write waits as long as yod is alive - also when
 * yod is stopped (^Z: it says PAUSE first, and is sent nothing until it
 * speaks again).  Only a yod silent past YOD_SILENCE_S (or a pause past
 * YOD_PAUSE_MAX_S) ends the job: it is gone.  A
 * signal from yod that arrives during a write acts when the write is done,
 * so a line is never cut by a kill; only a write that still has more than
 * YOD_FINISH_MAX to send when the kill comes is cut there.  Each put carries
 * where the write ends in the stream (yod_proto.h), so yod knows what a lost
 * node never sent.  Input: rank 0 asks yod for bytes and yod puts them
 * straight into the program's buffer; the other ranks read end of file. */
#include "job.h"
#include "kmalloc.h"
#include "process.h"
#include "ranks.h"
#include "ptl_kernel.h"
#include "time.h"
#include <tern/yod_proto.h>
#include "ptl_me.h"

#define RETRY_MAX_NS 50000000ULL
#define OUTPUT_DEADLINE_NS (120 * 1000000000ULL)
#define PUT_PIECES 64            /* iovec pieces in one put */

static void pause_ns(uint64_t ns)
{
    uint64_t until = time_monotonic_ns() + ns;
    while (time_monotonic_ns() < until)
        knode_wait(NULL, until);
}

/* One put of pieces (len bytes), sent again while yod's buffers are full. */
static void put_output(unsigned fd, const ptl_iovec_t *pieces, unsigned n, uint64_t len,
                       uint64_t write_end)
{
    uint64_t bits = yod_output_bits(job.id, job.rank + proc.index, fd), delay = 100000ULL;
    for (;;) {
        job_wait_yod_awake();
        if (job_yod_silent()) {
            kprintf("job %u: yod is gone (%s) while its output waited: ending the job\n",
                    job.id, job_yod_gone_why());
            job.yod_gone = true;
            job_end(END_SIGNAL, 9, NULL);
        }
        int rc = knode_putv(pieces, n, len, job.yod_nid, job.yod_pid, YOD_PT_OUTPUT, bits,
                            write_end, time_monotonic_ns() + OUTPUT_DEADLINE_NS);
        if (rc == PTL_NI_OK)
            return;
        pause_ns(delay);              /* yod takes no more now: try again */
        if (delay < RETRY_MAX_NS)
            delay *= 2;
    }
}

long job_output_v(unsigned fd, const ptl_iovec_t *iov, unsigned niov)
{
    static ptl_iovec_t pieces[PUT_PIECES];   /* must outlive a put left in flight */
    fd &= 3;
    uint64_t total = 0;
    for (unsigned i = 0; i < niov; i++)
        total += iov[i].iov_len;
    uint64_t write_end = proc.out_bytes[fd] + total, sent = 0, since_end_asked = 0;
    bool ranks = ranks_active();
    unsigned i = 0;
    uint64_t at = 0;                 /* offset in iov[i] */
    job_control_hold();
    while (sent < total) {
        unsigned n = 0;
        uint64_t len = 0;
        while (i < niov && n < PUT_PIECES && len < YOD_OUTPUT_CHUNK) {
            uint64_t k = iov[i].iov_len - at;
            if (k > YOD_OUTPUT_CHUNK - len)
                k = YOD_OUTPUT_CHUNK - len;
            if (k) {
                pieces[n].iov_base = (char *)iov[i].iov_base + at;
                /* Ranks per core: the library may resend the piece from
                 * another core, under another rank's page tables, so it
                 * gets the kernel's address (a program's buffer; the
                 * kernel's own, a fault report, is one already). */
                if (ranks && (uint64_t)pieces[n].iov_base < USER_TOP)
                    k = user_run_kva((uint64_t)pieces[n].iov_base, k, &pieces[n].iov_base);
                pieces[n++].iov_len = k;
                len += k;
                at += k;
            }
            if (at == iov[i].iov_len) {
                i++;
                at = 0;
            }
        }
        put_output(fd, pieces, n, len, write_end);
        sent += len;
        proc.out_bytes[fd] += len;
        if (job_end_pending() && (since_end_asked += len) >= YOD_FINISH_MAX)
            break;
    }
    job_control_release();            /* a kill that came meanwhile ends the job here */
    return (long)sent;
}

long job_output(unsigned fd, const void *buf, uint64_t len)
{
    ptl_iovec_t one = {(void *)buf, len};
    return job_output_v(fd, &one, 1);
}

static struct yod_report want;
static ptl_handle_me_t stdin_me;
static bool stdin_linked;

long job_read_stdin(uint64_t ubuf, uint64_t len)
{
    if (job.rank + proc.index != 0 || job.stdin_eof || len == 0)
        return 0;
    if (len > 1u << 20)
        len = 1u << 20;
    void *kbuf = (void *)ubuf;
    if (ranks_active())           /* reached from any core: the kernel's address (stdout) */
        len = user_run_kva(ubuf, len, &kbuf);
    struct kop *op = kmalloc(sizeof *op);
    if (!op)
        return -12;   /* ENOMEM */
    memset(op, 0, sizeof *op);
    uint64_t seq = ++job.stdin_seq;
    ptl_me_t me = ptl_me_phys(kbuf, len,
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
