/* The CPUs of a node: finding them (ACPI MADT), starting the application
 * processors, and what the CPUs do for each other (IPIs, calls, TLB
 * shootdown, halting until woken).  docs/kernel.md, "CPUs". */
#ifndef TERN_SMP_H
#define TERN_SMP_H

/* The real-mode trampoline's parameter block (arch/smp_trampoline.S), at
 * these offsets from smp_tramp_params; smp.c fills it in for each AP. */
#define TP_GDT    0                /* 4 descriptors: null, code32, data, code64 */
#define TP_GDTR   32               /* limit (2), base (4) */
#define TP_FAR32  40               /* offset (4), selector (2): protected mode */
#define TP_FAR64  48               /* offset (4), selector (2): long mode */
#define TP_CR3    56               /* trampoline page tables (below 4 GiB) */
#define TP_APIC   60               /* the APIC id that may go on; others halt */
#define TP_STACK  64
#define TP_PERCPU 72
#define TP_ENTRY  80               /* smp_ap_main */
#define TP_ALIVE  88               /* set by any CPU that enters the trampoline */
#define TP_SIZE   96

#define IPI_CALL_VECTOR 0xF0       /* run the posted call (smp_call) */
#define IPI_WAKE_VECTOR 0xF1       /* nothing to do: ends a halt */
#define IPI_STOP_VECTOR 0xF2       /* halt for good (a panic elsewhere) */

#ifndef __ASSEMBLER__
#include <stdbool.h>
#include <stdint.h>

/* Finds the CPUs and sets memory aside for the others (from the top of the
 * application region, before the program is loaded).  After time_init. */
void smp_init(void);
/* Starts the CPUs smp_init found.  Only once the boot module has been
 * consumed: the memory set aside may hold it until then. */
void smp_start(void);
unsigned smp_ncpus_found(void);    /* usable CPUs the firmware lists (>= 1) */
unsigned smp_ncpus(void);          /* CPUs running (index 0 .. n-1) */

/* IPIs by CPU index. */
void smp_send_ipi(unsigned cpu, uint8_t vector);
void smp_send_ipi_others(uint8_t vector);

/* Runs fn(arg) on CPU `cpu` from its IPI handler (interrupts off, on its
 * kernel stack) and returns once fn has returned there.  On this CPU: a
 * plain call.  A CPU is interrupted only with interrupts enabled: in user
 * mode or halted (docs/kernel.md), so a call to a busy CPU 0 waits for it.
 * While waiting, calls posted to this CPU are run, so two CPUs calling each
 * other do not deadlock. */
void smp_call(unsigned cpu, void (*fn)(void *), void *arg);
/* The same, returning as soon as the target has picked the call up; fn may
 * then halt or wait there. */
void smp_call_async(unsigned cpu, void (*fn)(void *), void *arg);
/* smp_call_async for an fn that may never return there (it switches the
 * CPU to another thread for good, or ends the job on a fresh stack).  The
 * target takes it only from its IPI handler, never while it waits for a
 * call of its own: run there, fn would leave that wait's frame, and the
 * other CPU's call slot it holds, behind for ever. */
void smp_call_async_noreturn(unsigned cpu, void (*fn)(void *), void *arg);
/* fn on every other running CPU, at once; returns when all have returned. */
void smp_call_others(void (*fn)(void *), void *arg);
/* fn on every running CPU, this one included (while the others run it). */
void smp_call_all(void (*fn)(void *), void *arg);

/* Flushes [va, va+len) from every CPU's TLB (this one's too) after a change
 * to the shared page tables.  len ~0: everything but global pages. */
void tlb_shootdown(uint64_t va, uint64_t len);

/* The wait primitive: halts this CPU until an interrupt arrives (any: an
 * IPI from cpu_wake, a device) or the monotonic clock reaches deadline_ns
 * (UINT64_MAX: no timer armed).  May return early; callers loop on their
 * condition, checked with interrupts off so a wake between the check and
 * the halt is not lost (sti;hlt takes it).  No tick: one one-shot timer, and
 * only with a deadline. */
void cpu_halt_until(uint64_t deadline_ns);
void cpu_wake(unsigned cpu);
/* What an idle CPU other than CPU 0 does each time it wakes (thread.c:
 * run a thread placed on it), before halting again. */
void smp_set_idle_hook(void (*fn)(void));       /* ends cpu's halt */
/* This AP leaves whatever it ran (a thread no program has any more:
 * thread.c) for its idle loop, on its own stack and the kernel's page
 * tables.  Never on CPU 0, whose stack is the job loop's. */
__attribute__((noreturn)) void smp_idle_again(void);
/* Run by a cpu_wake that interrupts the program in user mode (r): time.c
 * re-arms CPU 0's timer for an alarm another core set. */
struct regs;
void smp_set_wake_hook(void (*fn)(struct regs *r));

/* A panic: stop every other CPU (they halt with interrupts off). */
void smp_stop_others(void);

/* smptest=1 (smp_selftest.c): exercise the above, log the results. */
/* The question a CPU that waits too long asks the silent one (an NMI):
 * where cpu was, and where the NMI's own frame was; false if no answer
 * within wait_ns. */
bool smp_nmi_probe(unsigned cpu, uint64_t wait_ns, uint64_t *rip, uint64_t *handler_sp);
void smp_selftest(void);
#endif
#endif
