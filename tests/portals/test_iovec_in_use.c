/* ptl_lib_iovec_in_use: a host that handed the library a copy of an iovec
 * array (the Tern kernel does, for the application's) asks whether the MD,
 * ME or LE it made still uses that copy, so it frees the copy only after
 * the object is gone.  A wrong handle, a wrong kind of handle, another array
 * or a released object must all say "not in use". */
#include "tp.h"

int main(void)
{
    static unsigned char buf[4096];
    ptl_test_host_init(2, 1500);
    OK(PtlInit());
    struct node S, L;
    tp_node(&S, 0, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    tp_node(&L, 1, PTL_NI_NO_MATCHING | PTL_NI_PHYSICAL);
    ptl_iovec_t iov[2] = {{buf, 100}, {buf + 1000, 200}}, other[2];
    memcpy(other, iov, sizeof iov);

    ptl_handle_md_t md = tp_md(&S, iov, 2, PTL_IOVEC, PTL_CT_NONE);
    CHECK(ptl_lib_iovec_in_use(md, iov));
    CHECK(!ptl_lib_iovec_in_use(md, other));
    CHECK(!ptl_lib_iovec_in_use(md ^ 1, iov));          /* another generation */
    CHECK(!ptl_lib_iovec_in_use(PTL_INVALID_HANDLE, iov));
    CHECK(!ptl_lib_iovec_in_use(S.ni, iov));            /* an NI is no buffer */
    OK(PtlMDRelease(md));
    CHECK(!ptl_lib_iovec_in_use(md, iov));

    ptl_pt_index_t pt = tp_pt(&S, 0);
    ptl_me_t me = tp_me(iov, 2, PTL_IOVEC | PTL_ME_OP_PUT, 7, 0);
    ptl_handle_me_t meh;
    OK(PtlMEAppend(S.ni, pt, &me, PTL_PRIORITY_LIST, NULL, &meh));
    CHECK(ptl_lib_iovec_in_use(meh, iov));
    CHECK(!ptl_lib_iovec_in_use(meh, other));
    OK(PtlMEUnlink(meh));
    CHECK(!ptl_lib_iovec_in_use(meh, iov));

    ptl_pt_index_t lpt = tp_pt(&L, 0);
    ptl_le_t le = {.start = iov, .length = 2, .ct_handle = PTL_CT_NONE, .uid = PTL_UID_ANY,
                   .options = PTL_IOVEC | PTL_LE_OP_PUT};
    ptl_handle_le_t leh;
    OK(PtlLEAppend(L.ni, lpt, &le, PTL_PRIORITY_LIST, NULL, &leh));
    CHECK(ptl_lib_iovec_in_use(leh, iov));
    OK(PtlLEUnlink(leh));
    CHECK(!ptl_lib_iovec_in_use(leh, iov));

    /* Gone with its NI. */
    md = tp_md(&L, iov, 2, PTL_IOVEC, PTL_CT_NONE);
    CHECK(ptl_lib_iovec_in_use(md, iov));
    OK(PtlNIFini(L.ni));
    CHECK(!ptl_lib_iovec_in_use(md, iov));
    PtlFini();
    printf("test_iovec_in_use: PASS\n");
    return 0;
}
