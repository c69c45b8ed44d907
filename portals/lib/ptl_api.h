/*
 * The one shape of every non-blocking Ptl* entry point, as each API
 * function of the reference implementation has it:
 *
 *     int PtlCTFree(ptl_handle_ct_t h)
 *     {
 *         API_ENTER();                      lock; PTL_NO_INIT before PtlInit
 *         struct ptl_ni *ni;
 *         struct ptl_ct *ct = ptl_ct_get(h, &ni);
 *         API_CHECK(ct);                    PTL_ARG_INVALID unless true
 *         if (...)
 *             API_RETURN(PTL_IN_USE);       any other answer, on the way
 *         ...
 *         API_EXIT(PTL_OK);                 unlock, return
 *     }
 *
 * Everything between API_ENTER and the return runs with the host lock held
 * (ptl_host.h).  The blocking calls (EQ and CT wait and poll) hold it only
 * while they look, inside ptl_wait (ptl_wait.h).
 */
#ifndef PTL_API_H
#define PTL_API_H
#include "ptl_internal.h"

#define API_ENTER()                                                       \
    int api_rc_;                                                          \
    ptl_host_lock();                                                      \
    if (!ptl_api_ready())                                                 \
        API_RETURN(PTL_NO_INIT)

#define API_RETURN(rc)                                                    \
    do {                                                                  \
        api_rc_ = (rc);                                                   \
        goto api_exit_;                                                   \
    } while (0)

#define API_CHECK(cond)                                                   \
    do {                                                                  \
        if (!(cond))                                                      \
            API_RETURN(PTL_ARG_INVALID);                                  \
    } while (0)

#define API_EXIT(rc)                                                      \
    api_rc_ = (rc);                                                       \
api_exit_:                                                                \
    ptl_host_unlock();                                                    \
    return api_rc_

#endif /* PTL_API_H */
