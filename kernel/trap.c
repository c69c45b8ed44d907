/* Exceptions and interrupts.  A fault in the application is fatal and
 * reported (no signal handler is run for it: real memory has nothing to fix
 * up); a fault in the kernel is a panic.  Both reports name the cause, RIP,
 * the fault address and the registers. */
#include "cpu.h"
#include "hostlink.h"
#include "kernel.h"
#include "process.h"
#include "ranks.h"
#include "percpu.h"
#include "reserve.h"
#include "signal.h"
#include "smp.h"
#include "syscall.h"
#include "thread.h"
#include "uaccess.h"
#include "x86.h"

static void (*irq_handlers[256])(struct regs *);
extern void syscall_entry(void);

void irq_set_handler(int vector, void (*fn)(struct regs *)) { irq_handlers[vector] = fn; }

static const char *const exception_names[32] = {
    "divide error", "debug", "NMI", "breakpoint", "overflow", "bound range exceeded",
    "invalid opcode", "device not available", "double fault", "coprocessor overrun",
    "invalid TSS", "segment not present", "stack fault", "general protection fault",
    "page fault", "reserved", "x87 floating-point error", "alignment check", "machine check",
    "SIMD floating-point error", "virtualization exception", "control protection",
};

static int signal_for(int vector)
{
    switch (vector) {
    case 0: case 16: case 19: return SIGFPE;
    case 1: case 3: return SIGTRAP;
    case 6: return SIGILL;
    case 12: case 17: return SIGBUS;
    default: return SIGSEGV;
    }
}

struct report {
    char buf[2048];
    size_t len;
};

static void rep(struct report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void rep(struct report *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(r->buf + r->len, sizeof r->buf - r->len, fmt, ap);
    va_end(ap);
    r->len += (size_t)n;
    if (r->len >= sizeof r->buf)
        r->len = sizeof r->buf - 1;
}

static void describe_page_fault(struct report *r, const struct regs *f, uint64_t addr, bool user)
{
    bool present = f->error & 1, write = f->error & 2, fetch = f->error & 16;
    const char *access = fetch ? "instruction fetch from" : write ? "write to" : "read from";
    const char *what;
    if (!user)
        what = "address";
    else if (addr >= 0xFFFF800000000000ULL)
        what = "kernel memory at";
    else if (addr < 4096)
        what = "NULL pointer, address";
    else if (addr >= proc.guard && addr < proc.guard + 4096)
        what = "stack guard page (stack overflow; raise stack=), address";
    else if (!present && reserve_has(addr))
        what = "reserved address never made accessible (PROT_NONE; no demand paging),";
    else if (!present)
        what = "unmapped address";
    else
        what = "protected address";
    rep(r, "page fault: %s %s 0x%lx\n", access, what, addr);
}

static void build_report(struct report *r, const struct regs *f, bool user)
{
    uint64_t cr2 = read_cr2();
    const char *name = f->vector < 32 && exception_names[f->vector] ? exception_names[f->vector]
                                                                    : "interrupt";
    struct thread *t = thread_current();
    if (user && ranks_active())
        rep(r, "*** application fault in %s (rank %u, on CPU %u): ", proc.name ? proc.name : "?",
            ranks_number(&proc), this_cpu()->index);
    else if (user && t && threads_alive() > 1)
        rep(r, "*** application fault in %s (thread %u, on CPU %u): ", proc.name ? proc.name : "?",
            t->tid, this_cpu()->index);
    else if (user)
        rep(r, "*** application fault in %s: ", proc.name ? proc.name : "?");
    else
        rep(r, "*** kernel panic: ");
    if (f->vector == 14)
        describe_page_fault(r, f, cr2, user);
    else
        rep(r, "%s (vector %ld, error 0x%lx)\n", name, f->vector, f->error);
    rep(r, "    rip %016lx  cs %04lx  rflags %016lx  fault address %016lx\n", f->rip, f->cs,
        f->rflags, f->vector == 14 ? cr2 : 0);
    rep(r, "    rax %016lx  rbx %016lx  rcx %016lx  rdx %016lx\n", f->rax, f->rbx, f->rcx, f->rdx);
    rep(r, "    rsi %016lx  rdi %016lx  rbp %016lx  rsp %016lx\n", f->rsi, f->rdi, f->rbp, f->rsp);
    rep(r, "    r8  %016lx  r9  %016lx  r10 %016lx  r11 %016lx\n", f->r8, f->r9, f->r10, f->r11);
    rep(r, "    r12 %016lx  r13 %016lx  r14 %016lx  r15 %016lx\n", f->r12, f->r13, f->r14, f->r15);
    if (!user && smp_ncpus() > 1)
        rep(r, "    on CPU %u (APIC id %u)\n", this_cpu()->index, this_cpu()->apic_id);
    if (user && f->rip >= proc.map_lo && f->rip < proc.image_end)
        rep(r, "    (rip is %s+0x%lx in the program image)\n", proc.name, f->rip - proc.map_lo);
}

static bool syscall_without_kernel_mode(struct regs *f)
{
    if ((f->cs & 3) == 3 && f->vector == 14 && f->rip == (uint64_t)syscall_entry) {
        /* A `syscall` that jumped to LSTAR without leaving user mode: the
         * paravirtual KVM on our build machines (kvm_pvm) does this for a
         * guest that is not Linux.  The CPU already did the rest of the
         * instruction (RCX = return RIP, R11 = RFLAGS), so run the call from
         * this frame.  Harmless elsewhere: a program jumping here itself
         * gets what executing `syscall` would have given it. */
        if (!cpu.ring0_emulated) {
            cpu.ring0_emulated = true;
            kprintf("the hypervisor runs `syscall` without entering kernel mode: using the "
                    "fault path (slow; signal frames keep x87/SSE state only)\n");
        }
        f->rip = f->rcx;
        f->rflags = (f->r11 & 0x40DD5) | 0x202;
        syscall_dispatch(f);
        return true;
    }
    return false;
}

/* An exception: reported, and the program or the node ends.  Kept out of
 * trap_handler: its 2 KiB report would otherwise be part of the stack
 * frame of every interrupt, which may arrive deep in a system call on the
 * same 16 KiB stack. */
static __attribute__((noinline, noreturn)) void exception(struct regs *f)
{
    bool user = (f->cs & 3) == 3;
    /* On this CPU's stack: threads on two CPUs may fault at once. */
    struct report r;
    r.len = 0;
    build_report(&r, f, user);
    /* Log line by line so each gets the "tern: " prefix. */
    char *line = r.buf;
    for (char *p = r.buf; *p; p++) {
        if (*p == '\n') {
            *p = 0;
            kprintf("%s\n", line);
            *p = '\n';
            line = p + 1;
        }
    }
    if (user)
        program_fault(r.buf, r.len, signal_for((int)f->vector));
    hostlink_send(HL_REPORT, r.buf, (uint32_t)r.len);
    hostlink_send(HL_PANIC, "kernel fault", 12);
    node_end(END_PANIC, 0);
}

void trap_handler(struct regs *f)
{
    if (f->vector == 2 && irq_handlers[2]) {
        irq_handlers[2](f);           /* an NMI: smp.c's question where this CPU is */
        return;
    }
    if (f->vector < 32) {
        if ((f->cs & 3) == 3)
            thread_stray_check(f);    /* not a fault of the program's */
        if (!syscall_without_kernel_mode(f))
            exception(f);
        return;
    }
    if (irq_handlers[f->vector])
        irq_handlers[f->vector](f);   /* spurious or unexpected: nothing to acknowledge */
    if ((f->cs & 3) == 3) {
        thread_stray_check(f);        /* after the handler's EOI */
        signal_interrupted(f);        /* a signal sent here from another core, a timer's */
        thread_move_if_asked();       /* another thread's sched_setaffinity (its kick) */
    }
}
