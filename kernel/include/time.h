/* Time: the TSC, calibrated once at boot against the PIT; wall-clock time
 * from the CMOS RTC at boot.  The one timer is the local APIC's, one-shot:
 * armed for a halt's deadline (waits, wait.h), and, only while someone asks
 * for it (a job: once a second), for the tick of a program in user mode. */
#ifndef TERN_TIME_H
#define TERN_TIME_H
#include <stdbool.h>
#include <stdint.h>

void time_init(void);
uint64_t time_monotonic_ns(void);
uint64_t time_realtime_ns(void);
uint64_t time_boot_epoch(void);
uint64_t time_tsc_hz(void);
/* How the TSC was calibrated: PIT windows tried, and the kept one's
 * uncertainty (parts per million of its length). */
void time_calibration(uint64_t *tries, uint64_t *slack_ppm);
/* This CPU's local-APIC timer rings by deadline_ns (maybe earlier: a timer
 * already set sooner stands); nothing ever clears it (time.c says why).
 * False if the timer could not be calibrated: nothing will ring. */
bool time_timer_need(uint64_t deadline_ns);
#define LAPIC_TIMER_VECTOR 0x40      /* time.c handles it on every CPU */
/* Waits until the monotonic clock reaches deadline_ns, halting the CPU. */
void time_sleep_until(uint64_t deadline_ns);
/* Halts once: until any interrupt, or the deadline at the latest. */
void time_halt_until(uint64_t deadline_ns);
/* Set by the thread code (thread.c): hook(deadline) runs another thread of
 * this core instead of halting (returns 0 once back) or gives the deadline
 * to halt until; the slice hook runs when a shared core's time slice ends
 * in user mode (this_cpu()->slice_end).  time_arm_user arms this CPU's
 * timer for what it must ring while the program runs there. */
void time_set_halt_hook(uint64_t (*hook)(uint64_t deadline_ns));
struct regs;
void time_set_slice_hook(void (*fn)(struct regs *));
void time_arm_user(void);
void time_mark_app_start(void);   /* sys/time.c: CPU-time clocks count from here */
struct regs;
/* Calls fn once per period while the program runs in user mode (NULL: off). */
void time_user_tick(void (*fn)(struct regs *), uint64_t period_ns);
/* The tick once more by deadline_ns, if the program still runs in user mode
 * then (CPU 0, where the tick runs; a ring in a kernel wait cancels it). */
void time_user_tick_by(uint64_t deadline_ns);
/* Calls fn once at deadline_ns on CPU cpu, from its timer interrupt (r: the
 * running program's registers) or from a kernel wait (r NULL); NULL
 * cancels.  One alarm per CPU: the interval timers of the process whose
 * home it is (sys/itimer.c). */
void time_user_alarm(unsigned cpu, void (*fn)(struct regs *), uint64_t deadline_ns);
/* Runs CPU cpu's alarm if it is due now (a wait, on any core, that may
 * have spun past it). */
void time_alarm_poll(unsigned cpu);
#endif
