/* The console's input side for a program run by qemu/run-node: its
 * standard input, forwarded over the host link (hostlink.h) as the program
 * asks for it.  Without forwarding (stdin=none, and a node booted by GRUB
 * or iPXE) input is at end of file at once; under a job, rank 0's stdin
 * comes from yod instead (kernel/job/stdio.c). */
#include "boot.h"
#include "errno.h"
#include "hostlink.h"
#include "kernel.h"
#include "signal.h"
#include "syscall.h"
#include "time.h"

/* COM2 raises no interrupt: it is polled.  QEMU refills its FIFO within
 * microseconds of the guest emptying it, so while bytes flow it is polled
 * every POLL_MIN_NS; after BURST_NS without a byte, ever more slowly (a user
 * who has not typed yet). */
#define POLL_MIN_NS 50000ULL
#define POLL_MAX_NS 10000000ULL
#define BURST_NS 5000000ULL

bool console_in_forwarded(void) { return options.stdin_mode != STDIN_NONE; }

long console_in_wait(uint64_t deadline)
{
    if (!console_in_forwarded())
        return 0;
    hostlink_stdin_request();
    uint64_t backoff = POLL_MIN_NS, since = time_monotonic_ns();
    bool progress;
    while (!hostlink_stdin_ready(&progress)) {
        itimer_poll();
        if (signal_wakes(0))
            return -EINTR;
        uint64_t now = time_monotonic_ns();
        if (now >= deadline)
            return -ETIMEDOUT;
        if (progress) {
            since = now;
            backoff = POLL_MIN_NS;
        }
        time_halt_until(deadline - now < backoff ? deadline : now + backoff);
        if (backoff < POLL_MAX_NS && now - since > BURST_NS)
            backoff *= 2;
    }
    return 0;
}

long console_in_read(uint64_t buf, uint64_t len)
{
    if (!console_in_forwarded() || len == 0)
        return 0;
    if (console_in_wait(WAIT_FOREVER) == -EINTR)
        return -ERESTARTSYS;
    return hostlink_stdin_take((void *)buf, len > HL_STDIN_MAX ? HL_STDIN_MAX : (uint32_t)len);
}
