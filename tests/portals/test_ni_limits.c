/* Desired limits are a wish (spec 3.6.1): a program that asks for more
 * than fits (Sandia's test_unlink_race leaves most fields of its desired
 * limits uninitialised, so on a Tern node with an 8 MiB kernel heap it
 * asked for anything and got PTL_NO_SPACE) gets an NI with the defaults
 * where its wish did not fit, and `actual` says so.  Small requests are
 * still honoured as asked. */
#include "tp.h"

int main(void)
{
    ptl_test_host_init(1, 1500);
    ptl_test_alloc_max(4u << 20);          /* no table above 4 MiB */
    OK(PtlInit());
    ptl_ni_limits_t want, got;
    memset(&want, 0, sizeof want);
    want.max_unexpected_headers = 1 << 20;  /* tables far above 4 MiB */
    want.max_triggered_ops = 1 << 20;
    want.max_mds = 64;                      /* below the default: kept */
    ptl_handle_ni_t ni;
    OK(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, 7, &want, &got, &ni));
    CHECK(got.max_unexpected_headers == 2048);
    CHECK(got.max_triggered_ops == 1024);
    CHECK(got.max_mds == 64);
    OK(PtlNIFini(ni));
    /* What fits is given as asked. */
    want.max_unexpected_headers = 4096;
    want.max_triggered_ops = 1;
    OK(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, 7, &want, &got, &ni));
    CHECK(got.max_unexpected_headers == 4096);
    CHECK(got.max_triggered_ops == 1);
    OK(PtlNIFini(ni));
    PtlFini();
    printf("test_ni_limits: PASS\n");
    return 0;
}
