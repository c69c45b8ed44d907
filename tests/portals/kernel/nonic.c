/* On a node without a NIC, Portals calls fail cleanly and the program goes
 * on.  Also the call's own argument checks (bad block, unknown op). */
#include <stdint.h>
#include <stdio.h>
#include "portals4.h"
#include "ptl_tern.h"

static long raw(long op, const void *args)
{
    long ret;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(1024L), "D"(op), "S"(args) : "rcx", "r11", "memory");
    return ret;
}

int main(void)
{
    int fails = 0;
#define EXPECT(what, got, want)                                                  \
    do {                                                                         \
        long g_ = (got);                                                         \
        printf("%s = %ld%s\n", what, g_, g_ == (want) ? "" : " UNEXPECTED");     \
        fails += g_ != (want);                                                   \
    } while (0)
    EXPECT("PtlInit", PtlInit(), PTL_FAIL);
    ptl_handle_ni_t ni;
    ptl_ni_limits_t lim;
    EXPECT("PtlNIInit", PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL,
                                  PTL_PID_ANY, NULL, &lim, &ni), PTL_NO_INIT);
    ptl_handle_eq_t eq;
    EXPECT("PtlEQAlloc", PtlEQAlloc(0, 16, &eq), PTL_NO_INIT);
    PtlFini();
    EXPECT("nop", ptl_tern_nop(), 0);
    uint64_t args[16] = {0};
    EXPECT("unknown op", raw(4242, args), -22);
    EXPECT("op 0", raw(0, args), -22);
    EXPECT("args in kernel memory", raw(1, (void *)0xffffffff80100000UL), -14);
    EXPECT("args NULL", raw(1, NULL), -14);
    printf("nonic: %s\n", fails ? "FAILED" : "ok");
    return fails ? 1 : 0;
}
