/* How a node's run ends: the program exits, is killed by a signal (a fault),
 * fails to load, or the kernel panics.  Each end is logged on COM1, sent to
 * the host link as a record, and, under QEMU with exit=qemu, ends the VM. */
#include "boot.h"
#include "hostlink.h"
#include "kernel.h"
#include "ranks.h"
#include "serial.h"
#include "signal.h"
#include "smp.h"
#include "thread.h"
#include "x86.h"

static const struct node_owner *owner;

/* An end begun on a CPU other than CPU 0 goes on there (thread.h). */
struct end_args {
    bool fault;
    enum end_kind kind;
    int code;
    const char *report;
    uint64_t len;
};

static void end_rest(void *arg)
{
    const struct end_args *a = arg;
    if (a->fault)
        program_fault(a->report, a->len, a->code);
    node_end(a->kind, a->code);
}

void node_set_owner(const struct node_owner *o) { owner = o; }

static void halt_forever(void)
{
    for (;;)
        __asm__ volatile("cli; hlt");
}

void node_end(enum end_kind kind, int code)
{
    static const uint8_t qemu_code[] = {
        [END_EXIT] = 0, [END_SIGNAL] = 1, [END_PANIC] = 2, [END_LOAD_ERROR] = 3};
    /* With ranks per core, an exit or a fatal signal ends the calling rank
     * only, and goes on from here with the last rank's (ranks.c). */
    if (kind == END_EXIT || kind == END_SIGNAL)
        ranks_end_one(&kind, &code);
    if (kind != END_PANIC) {
        struct end_args a = {false, kind, code, NULL, 0};
        threads_end_begin(end_rest, &a);
    }
    if (owner && kind != END_PANIC)
        owner->end(kind, code, NULL);  /* the node goes on serving jobs */
    if (kind == END_PANIC)
        smp_stop_others();             /* nothing goes on beside a dead kernel */
    int32_t c = code;
    switch (kind) {
    case END_EXIT:
        kprintf("program exited with status %d\n", code);
        hostlink_send(HL_EXIT, &c, 4);
        break;
    case END_SIGNAL:
        kprintf("program killed by signal %d (%s)\n", code, signal_name(code));
        hostlink_send(HL_SIGNAL, &c, 4);
        break;
    default:
        break;  /* panic() and load_error() sent their message already */
    }
    serial_drain(COM1);
    if (hostlink_enabled)
        serial_drain(COM2);
    if (options.exit_port)
        outb((uint16_t)options.exit_port, qemu_code[kind]);
    halt_forever();
    __builtin_unreachable();
}

__attribute__((noreturn)) static void end_with_message(enum end_kind kind, enum hostlink_type hl, const char *what,
                             const char *fmt, va_list ap)
{
    char msg[400];
    vsnprintf(msg, sizeof msg, fmt, ap);
    kprintf("%s%s\n", what, msg);
    if (owner && kind != END_PANIC)
        owner->end(kind, 0, msg);
    hostlink_send(hl, msg, (uint32_t)strlen(msg));
    node_end(kind, 0);
}

void program_killed(int sig, const char *fmt, ...)
{
    static char msg[400];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof msg - 1, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof msg - 2)
        n = (int)sizeof msg - 2;
    msg[n++] = '\n';
    msg[n] = 0;
    kprintf("%s", msg);
    program_fault(msg, (uint64_t)n, sig);
}

void program_fault(const char *report, uint64_t len, int sig)
{
    struct end_args a = {true, END_SIGNAL, sig, report, len};
    if (!ranks_active())               /* a rank's fault stops no other rank */
        threads_end_begin(end_rest, &a);
    hostlink_send(HL_REPORT, report, (uint32_t)len);
    if (owner)
        owner->fault(report, len);
    node_end(END_SIGNAL, sig);
}

void panic(const char *fmt, ...)
{
    __asm__ volatile("cli");
    va_list ap;
    va_start(ap, fmt);
    end_with_message(END_PANIC, HL_PANIC, "*** kernel panic: ", fmt, ap);
}

void load_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    end_with_message(END_LOAD_ERROR, HL_LOAD_ERROR, "load failed: ", fmt, ap);
}
