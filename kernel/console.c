/* The kernel log on COM1: every line starts "tern: " so it stands apart from
 * application output sharing the console. */
#include "kernel.h"
#include "rlock.h"
#include "serial.h"

static bool at_line_start = true;
/* Whole lines: CPUs logging at once must not interleave within one. */
static struct rlock log_lock = RLOCK_INIT;

void kprintf(const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof buf - 1)
        n = sizeof buf - 1;
    uint64_t f = rlock_take(&log_lock);
    const char *p = buf, *end = buf + n;
    while (p < end) {
        if (at_line_start) {
            serial_write(COM1, "tern: ", 6, 1);
            at_line_start = false;
        }
        const char *nl = p;
        while (nl < end && *nl != '\n')
            nl++;
        if (nl < end) {
            serial_write(COM1, p, (size_t)(nl - p) + 1, 1);
            at_line_start = true;
            p = nl + 1;
        } else {
            serial_write(COM1, p, (size_t)(end - p), 1);
            p = end;
        }
    }
    rlock_give(&log_lock, f);
}
