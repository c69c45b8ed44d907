/* A program that spins on a non-blocking Portals look (PtlEQGet, PtlCTGet,
 * PtlEQPoll or PtlCTPoll with no time-out) until something arrives keeps
 * its host core busy for as long as it waits: a library written for a NIC
 * polled in user space (MPI progress loops do this) would never let the
 * node halt.  So the kernel watches for a run of looks that find nothing,
 * each soon after the one before: once the run has lasted SPIN_NS, every
 * further empty look waits in the kernel first - halted until the NIC's
 * interrupt, the library's next retransmission or NAP_NS - and then
 * returns what it found.  A look that finds something, any other Portals
 * call, or a pause in the looking (the program computed in between) ends
 * the run.  Nothing a look returns changes; it only returns later when
 * there is nothing to find. */
#include "kernel.h"
#include "portals4.h"
#include "ptl_host.h"
#include "ptl_lib.h"
#include <tern/ptl_syscall.h>
#include "syscall.h"
#include "time.h"
#include "uaccess.h"

#define SPIN_NS 200000ULL          /* spin this long before halting */
#define GAP_NS 100000ULL           /* looks further apart are not a spin */
#define NAP_NS 10000000ULL         /* a halted look returns after this at the latest */

static uint64_t run_start, last_look;
static bool in_run;
static ptl_handle_ct_t last_ct;
static ptl_ct_event_t last_ct_ev;
static bool have_ct;

/* Whether the call found nothing new. */
static bool empty_look(uint64_t op, const uint64_t *a, int rc)
{
    switch (op) {
    case TPO_EQ_GET:
        return rc == PTL_EQ_EMPTY;
    case TPO_EQ_POLL:
        return a[2] == 0 && rc == PTL_EQ_EMPTY;
    case TPO_CT_POLL:
        return a[3] == 0 && rc == PTL_CT_NONE_REACHED;
    case TPO_CT_GET: {
        ptl_ct_event_t ev;
        if (rc != PTL_OK || copy_from_user(&ev, a[1], sizeof ev))
            return false;
        bool same = have_ct && last_ct == (ptl_handle_ct_t)a[0] &&
                    ev.success == last_ct_ev.success && ev.failure == last_ct_ev.failure;
        have_ct = true;
        last_ct = (ptl_handle_ct_t)a[0];
        last_ct_ev = ev;
        return same;
    }
    default:
        return false;
    }
}

void portals_spin_after(uint64_t op, const uint64_t *a, int rc)
{
    if (!empty_look(op, a, rc)) {
        in_run = false;
        if (op != TPO_CT_GET)
            have_ct = false;
        return;
    }
    uint64_t now = time_monotonic_ns();
    if (!in_run || now - last_look > GAP_NS) {
        in_run = true;
        run_start = now;
    }
    if (now - run_start >= SPIN_NS) {
        ptl_lib_send_held(PTL_HELD_WAIT); /* it sends nothing while halted */
        uint64_t d = ptl_lib_next_deadline();
        if (d > now + NAP_NS)
            d = now + NAP_NS;
        ptl_host_wait(d);
        now = time_monotonic_ns();
    }
    last_look = now;
}

void portals_spin_reset(void)
{
    in_run = have_ct = false;
}
