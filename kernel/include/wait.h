/* Waiting in the kernel, and the one hook through which the work that owns
 * the node runs inside every wait.
 *
 * A kernel wait (a sleeping program, a Portals wait, the network's idle
 * wait) is a loop: halt this CPU until an interrupt or a deadline
 * (time_halt_until: the local-APIC one-shot timer), look whether what it
 * waits for has come, and give the wait hook a turn (wait_serve).  The hook
 * is how kernel/job/, while a job is active, reads yod's control messages
 * and notices yod's silence in the middle of any wait, without the layers
 * that wait - time.c, the Portals host, netdev - knowing jobs exist: the
 * way xv6's sleep/wakeup and Kitten's wait queues keep device code ignorant
 * of processes.
 *
 * Each CPU halts only itself and any interrupt ends its halt, after which
 * its loop looks again: waking a CPU that waits is sending it an interrupt
 * (an IPI, once there are several), and a hook is per CPU then. */
#ifndef TERN_WAIT_H
#define TERN_WAIT_H
#include <stdbool.h>
#include <stdint.h>

struct wait_hook {
    uint64_t period_ns;        /* a wait halts at most this long between turns */
    /* A turn, after each halt; may end the wait by not returning.
     * net_progress_next: the caller is the Portals library's own wait, whose
     * loop runs the library's progress walk (timers, retransmissions) right
     * after the turn, so the turn need not run one of its own. */
    void (*serve)(bool net_progress_next);
    /* When a turn has work due next (the Portals library's next timer: a
     * delayed acknowledgement, a retransmission), UINT64_MAX for none; NULL
     * if never.  A wait that is not the library's own (a sleep, a futex)
     * halts no longer than that, so the node acknowledges and resends on
     * time while its program sleeps.  Before, such a wait halted until its
     * own end or the next interrupt: a peer resent frames that had arrived
     * (tests/test_nx_tern.py, a sleeping sender). */
    uint64_t (*due)(void);
};

/* Installs the hook (NULL: none). */
void wait_set_hook(const struct wait_hook *hook);
/* The deadline to halt until: deadline_ns, or sooner when the hook's
 * period ends first or, unless the caller is the Portals library's own
 * wait (net_progress_next, which counts the library's timers already),
 * when the hook has work due. */
uint64_t wait_bound(uint64_t deadline_ns, bool net_progress_next);
/* Whether a hook is installed: a job is active, whose yod may send the
 * program a signal (so a wait with no deadline is not a deadlock). */
bool wait_hooked(void);
/* The hook's turn; nothing without a hook (net_progress_next: above). */
void wait_serve(bool net_progress_next);
#endif
