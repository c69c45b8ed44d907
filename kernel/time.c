#include "cpu.h"
#include "kernel.h"
#include "lapic.h"
#include "percpu.h"
#include "smp.h"
#include "time.h"
#include "wait.h"
#include "x86.h"

static uint64_t tsc_hz, tsc_boot, boot_epoch;
static uint64_t ns_mult;            /* ns = (ticks * ns_mult) >> 32 */
static uint64_t lapic_hz;
static uint64_t lapic_mult;         /* APIC ticks = (ns * lapic_mult) >> 32 */

static uint8_t cmos(uint8_t reg)
{
    outb(0x70, reg);
    return inb(0x71);
}

static uint64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return (uint64_t)(era * 146097 + (int64_t)doe - 719468);
}

static uint64_t rtc_read_epoch(void)
{
    for (int i = 0; i < 100000 && (cmos(0x0A) & 0x80); i++)
        ;
    uint8_t sec = cmos(0x00), min = cmos(0x02), hour = cmos(0x04);
    uint8_t day = cmos(0x07), mon = cmos(0x08), year = cmos(0x09), b = cmos(0x0B);
    bool pm = hour & 0x80;
    hour &= 0x7F;
    if (!(b & 0x04)) {
#define BCD(x) (uint8_t)(((x) & 0x0F) + ((x) >> 4) * 10)
        sec = BCD(sec), min = BCD(min), hour = BCD(hour);
        day = BCD(day), mon = BCD(mon), year = BCD(year);
    }
    if (!(b & 0x02) && pm)
        hour = (uint8_t)((hour % 12) + 12);
    uint64_t days = days_from_civil(2000 + year, mon, day);
    return days * 86400 + hour * 3600ULL + min * 60ULL + sec;
}

/* One window of `count` ticks of PIT channel 2 (1.193182 MHz): the TSC
 * and local-APIC ticks it took, and the TSC's uncertainty at its two ends
 * (ticks between the readings that bracket the PIT's start and its expiry).
 * Under an emulator on a busy host the vCPU can be descheduled at either end
 * for longer than the window: that shows as a large slack. */
static void pit_window(uint32_t count, uint64_t *tsc, uint64_t *apic, uint64_t *slack,
                       uint64_t *start)
{
    outb(0x61, (inb(0x61) & ~0x02) | 0x01);
    outb(0x43, 0xB0);
    outb(0x42, count & 0xFF);
    lapic_write(LAPIC_TIMER_INIT, 0xFFFFFFFF);
    uint64_t a = rdtsc();
    outb(0x42, count >> 8);          /* counting starts with the count's high byte */
    uint64_t b = rdtsc();
    /* The expiry came after a look that found the PIT still counting, so
     * after the TSC reading just before that look (prev), and before the
     * reading after the look that found it expired (c).  A reading taken
     * after a look is no bound: the vCPU may have stalled in between. */
    uint64_t prev = b;
    for (;;) {
        uint64_t t = rdtsc();
        if (inb(0x61) & 0x20)
            break;
        prev = t;
    }
    uint64_t c = rdtsc();
    uint32_t apic_ticks = 0xFFFFFFFF - lapic_read(LAPIC_TIMER_CUR);
    lapic_write(LAPIC_TIMER_INIT, 0);
    /* Midpoints of each bracket: the error is at most half of each. */
    *tsc = (prev + c) / 2 - (a + b) / 2;
    *slack = (b - a) + (c - prev);
    *apic = apic_ticks;
    *start = a;
}

/* The TSC's and the local APIC timer's frequencies from 2 ms PIT windows.
 * One 10 ms window used to do, but a TCG node on a host with a load of 16-20
 * came up with anything from 9 MHz to 8.8 GHz for a 2.3 GHz TSC, and every
 * kernel clock was that far off: its vCPU thread is descheduled most of the
 * time there, and the PIT's start or expiry often falls into such a gap.  A
 * window is kept only if the TSC is known at both ends to 1/CAL_GOOD of it
 * (the first, on an idle host); else the tightest of CAL_TRIES.  Returns
 * the TSC at the start of the kept window. */
#define CAL_COUNT 2386             /* 2 ms */
#define CAL_TRIES 100
#define CAL_GOOD 512               /* kept: TSC known at the ends to 1/CAL_GOOD of the window */
static uint64_t cal_slack_ppm, cal_tries;
static uint64_t calibrate(void)
{
    uint64_t best_tsc = 0, best_apic = 0, best_slack = UINT64_MAX, best_start = 0;
    for (int i = 0; i < CAL_TRIES; i++) {
        uint64_t t, ap, sl, st;
        pit_window(CAL_COUNT, &t, &ap, &sl, &st);
        cal_tries++;
        if (sl < best_slack) {
            best_tsc = t, best_apic = ap, best_slack = sl, best_start = st;
        }
        if (sl * CAL_GOOD < t)
            break;
    }
    cal_slack_ppm = best_tsc ? best_slack * 1000000 / best_tsc : 0;
    tsc_hz = best_tsc * 1193182ULL / CAL_COUNT;
    lapic_hz = best_apic * 1193182ULL / CAL_COUNT;
    return best_start;
}

static void (*user_tick_fn)(struct regs *);
static uint64_t user_tick_period, user_tick_next;
/* An earlier, one-off call of the tick (time_user_tick_by); UINT64_MAX: none. */
static uint64_t user_tick_extra = UINT64_MAX;

/* This CPU's local-APIC timer is set lazily: a request names the time by
 * which it must ring.  A timer already set to ring before that (and not yet
 * rung) stands, and one no longer wanted is left to ring: every timer
 * interrupt and every wait loop looks at the clock and asks again, so an
 * early ring costs one look.  Why: under QEMU's TCG a write that moves the
 * timer to the head of the emulator's timer list wakes its I/O thread, and
 * a wait used to set the timer before each halt and clear it after, a
 * host-thread wake-up (and its context switches) for every message a node
 * waited for (docs/performance.md, "The timer that woke the emulator"). */
bool time_timer_need(uint64_t deadline)
{
    if (!lapic_mult)
        return false;                /* not calibrated: the caller polls */
    struct percpu *c = this_cpu();
    uint64_t now = time_monotonic_ns();
    if (c->timer_at > now && c->timer_at <= deadline)
        return true;
    uint64_t left = deadline > now ? deadline - now : 1000;
    uint64_t count = (uint64_t)(((unsigned __int128)left * lapic_mult) >> 32);
    if (count > 0xFFFFFFFF) {
        count = 0xFFFFFFFF;          /* rings early: the caller asks again then */
        left = count * 1000000000ULL / lapic_hz;      /* fits: 2^32 * 1e9 < 2^64 */
    }
    if (count == 0)
        count = 1;
    /* Before the count: a ring that comes at once then clears it, not the
     * other way round (a timer_at left set with no timer would stand in
     * for one that never rings). */
    c->timer_at = now + left;
    lapic_write(LAPIC_LVT_TIMER, LAPIC_TIMER_VECTOR); /* one-shot */
    lapic_write(LAPIC_TIMER_INIT, (uint32_t)count);
    return true;
}

static uint64_t (*halt_hook)(uint64_t deadline);
static void (*slice_fn)(struct regs *);

void time_set_halt_hook(uint64_t (*fn)(uint64_t)) { halt_hook = fn; }
void time_set_slice_hook(void (*fn)(struct regs *)) { slice_fn = fn; }

/* This CPU's next deadline while the program runs: on CPU 0 the job's
 * tick, on any CPU the alarm it holds and the end of a shared core's time
 * slice (thread.c). */
static void arm_for_user(void)
{
    uint64_t at = UINT64_MAX;
    struct percpu *c = this_cpu();
    if (c->index == 0 && user_tick_fn)
        at = user_tick_next < user_tick_extra ? user_tick_next : user_tick_extra;
    if (c->alarm_fn && c->alarm_at < at)
        at = c->alarm_at;
    if (c->slice_end && c->slice_end < at)
        at = c->slice_end;
    if (at != UINT64_MAX)
        time_timer_need(at);
    /* else nothing is due: a timer still set rings once, finds nothing
     * and is not set again. */
}

void time_arm_user(void)
{
    if (lapic_regs && lapic_mult)
        arm_for_user();
}

/* CPU c's alarm, once it is due; r: the interrupted program, or NULL.
 * Taken by one caller only: c's own timer interrupt and a wait on another
 * core (time_alarm_poll) may both find it due. */
static void alarm_check(struct percpu *c, struct regs *r)
{
    void (*fn)(struct regs *) = __atomic_load_n(&c->alarm_fn, __ATOMIC_ACQUIRE);
    if (fn && time_monotonic_ns() >= c->alarm_at &&
        __atomic_compare_exchange_n(&c->alarm_fn, &fn, NULL, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_RELAXED))
        fn(r);                       /* may set the next one */
}

/* The timer interrupts a running program sees: the job's tick (once a
 * second, see kernel/job/control.c) and the program's own alarm
 * (sys/itimer.c).  Nothing else runs periodically. */
static void lapic_timer_irq(struct regs *r)
{
    lapic_write(LAPIC_EOI, 0);
    struct percpu *c = this_cpu();
    c->timer_at = 0;                 /* it has rung */
    bool user = (r->cs & 3) == 3;
    alarm_check(c, user ? r : NULL);
    uint64_t now = time_monotonic_ns();
    /* Rung in a kernel wait, the extra call is not owed: the wait does the
     * tick's work itself. */
    bool extra = c->index == 0 && now >= user_tick_extra;
    if (extra)
        user_tick_extra = UINT64_MAX;
    if (!user)
        return;                      /* a kernel wait: time_halt_until re-arms */
    if (c->index == 0 && user_tick_fn && (extra || now >= user_tick_next)) {
        if (now >= user_tick_next)
            user_tick_next = now + user_tick_period;
        user_tick_fn(r);
    }
    if (c->slice_end && time_monotonic_ns() >= c->slice_end && slice_fn)
        slice_fn(r);                 /* may run another thread before returning */
    arm_for_user();
}

void time_user_tick(void (*fn)(struct regs *), uint64_t period_ns)
{
    user_tick_fn = lapic_mult ? fn : NULL;
    user_tick_period = period_ns;
    user_tick_extra = UINT64_MAX;
    if (user_tick_fn)
        user_tick_next = time_monotonic_ns() + period_ns;
    arm_for_user();
}

void time_user_tick_by(uint64_t deadline_ns)
{
    if (this_cpu()->index != 0 || !user_tick_fn || deadline_ns >= user_tick_extra)
        return;
    user_tick_extra = deadline_ns;
    arm_for_user();
}

/* An alarm set from another core (a thread's setitimer, on a core that is
 * not its process's home): the alarm's CPU re-arms its timer.  Halted, it
 * takes the new deadline when the wake ends its halt; in user mode, the
 * wake's hook arms it (else a program computing there heard its alarm only
 * at the next tick, or, with no job, never). */
static void alarm_rearm_hook(struct regs *r)
{
    (void)r;
    struct percpu *c = this_cpu();
    if (c->alarm_moved) {
        c->alarm_moved = false;
        arm_for_user();
    }
}

void time_user_alarm(unsigned cpu, void (*fn)(struct regs *), uint64_t deadline_ns)
{
    struct percpu *c = cpu < MAX_CPUS ? cpus[cpu] : NULL;
    if (!c || (!fn && !c->alarm_fn))
        return;                      /* no such CPU, or nothing to cancel */
    /* The deadline before the function: a CPU that sees the new function
     * compares it with the new deadline. */
    __atomic_store_n(&c->alarm_fn, NULL, __ATOMIC_RELEASE);
    c->alarm_at = deadline_ns;
    __atomic_store_n(&c->alarm_fn, lapic_mult ? fn : NULL, __ATOMIC_RELEASE);
    if (c == this_cpu()) {
        if (lapic_regs)
            arm_for_user();
    } else {
        c->alarm_moved = true;
        cpu_wake(cpu);
    }
}

void time_alarm_poll(unsigned cpu)
{
    if (cpu < MAX_CPUS && cpus[cpu])
        alarm_check(cpus[cpu], NULL);
}

void time_init(void)
{
    lapic_map();
    lapic_write(LAPIC_SVR, 0x100 | 0xFF);
    lapic_write(LAPIC_TIMER_DIV, 0x3);           /* divide by 16 */
    lapic_write(LAPIC_LVT_TIMER, 1u << 16);      /* masked */
    /* Mask the legacy PIC entirely: no device interrupt is wanted yet. */
    outb(0x21, 0xFF);
    outb(0xA1, 0xFF);
    irq_set_handler(LAPIC_TIMER_VECTOR, lapic_timer_irq);
    smp_set_wake_hook(alarm_rearm_hook);

    uint64_t t0 = calibrate();
    if (tsc_hz == 0)
        panic("TSC does not advance");
    ns_mult = (1000000000ULL << 32) / tsc_hz;     /* fits: 1e9 << 32 < 2^64 */
    if (lapic_hz < (1ULL << 31))
        lapic_mult = (lapic_hz << 32) / 1000000000ULL;
    tsc_boot = t0;
    boot_epoch = rtc_read_epoch();
}

static uint64_t ticks_to_ns(uint64_t ticks)
{
    return (uint64_t)(((unsigned __int128)ticks * ns_mult) >> 32);
}

uint64_t time_monotonic_ns(void) { return ticks_to_ns(rdtsc() - tsc_boot); }
uint64_t time_realtime_ns(void) { return boot_epoch * 1000000000ULL + time_monotonic_ns(); }
uint64_t time_boot_epoch(void) { return boot_epoch; }
uint64_t time_tsc_hz(void) { return tsc_hz; }
void time_calibration(uint64_t *tries, uint64_t *slack_ppm) { *tries = cal_tries; *slack_ppm = cal_slack_ppm; }

/* One halt, ended by any interrupt or, at the latest, by the local-APIC
 * timer at deadline.  Close to the deadline it only spins once.  Another
 * thread of this core may run instead (the halt hook); either way the
 * caller looks again when this returns. */
void time_halt_until(uint64_t deadline)
{
    struct percpu *c = this_cpu();
    bool cpu0 = c->index == 0;
    alarm_check(c, NULL);
    if (c->alarm_fn && c->alarm_at < deadline)
        deadline = c->alarm_at;      /* the program's alarm rings on time */
    if (halt_hook && !(deadline = halt_hook(deadline))) {
        arm_for_user();              /* switched out and back */
        return;
    }
    uint64_t now = time_monotonic_ns();
    if (now >= deadline)
        return;
    if (deadline - now < 20000 || !time_timer_need(deadline)) {
        cpu_relax();
        return;
    }
    __asm__ volatile("sti; hlt; cli" ::: "memory");
    if (cpu0 && user_tick_fn) {
        /* Back to the program's tick; the kernel's own waits do the tick's
         * work themselves, so a tick missed while halted is not owed. */
        uint64_t t = time_monotonic_ns();
        if (t >= user_tick_next)
            user_tick_next = t + user_tick_period;
        user_tick_extra = UINT64_MAX;
    }
    arm_for_user();
}

void time_sleep_until(uint64_t deadline)
{
    while (time_monotonic_ns() < deadline) {
        time_halt_until(wait_bound(deadline, false));
        wait_serve(false);  /* a signal from yod ends a sleeping program too */
    }
}
