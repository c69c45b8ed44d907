/* Blocking Portals waits with nothing to wait for: PtlEQPoll and PtlCTPoll
 * time out after the time asked, and the node halts meanwhile (the test
 * compares QEMU's CPU time with the time waited). */
#include <stdio.h>
#include <time.h>
#include "portals4.h"
#include "test_clock.h"

int main(void)
{
    ptl_handle_ni_t ni;
    ptl_handle_eq_t eq;
    ptl_handle_ct_t ct;
    if (PtlInit() != PTL_OK ||
        PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY, NULL, NULL,
                  &ni) != PTL_OK ||
        PtlEQAlloc(ni, 16, &eq) != PTL_OK || PtlCTAlloc(ni, &ct) != PTL_OK)
        return 2;
    ptl_event_t ev;
    ptl_ct_event_t cev;
    unsigned which;
    ptl_size_t test = 1;
    double t0 = now_s();
    int rc1 = PtlEQPoll(&eq, 1, 2000, &ev, &which);
    double t1 = now_s();
    int rc2 = PtlCTPoll(&ct, &test, 1, 2000, &cev, &which);
    double t2 = now_s();
    printf("EQPoll %d after %.3f s, CTPoll %d after %.3f s\n", rc1, t1 - t0, rc2, t2 - t1);
    return rc1 == PTL_EQ_EMPTY && rc2 == PTL_CT_NONE_REACHED ? 0 : 1;
}
