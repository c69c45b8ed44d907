/* The match entry the kernel and the service-node programs post over and
 * over: a buffer any process may reach on a physically addressed NI, no
 * counter, any uid.  Callers narrow match_id or set ignore_bits / min_free
 * on the result.  Not part of the Portals 4 API. */
#ifndef TERN_PTL_ME_H
#define TERN_PTL_ME_H
#include "portals4.h"

static inline ptl_me_t ptl_me_phys(void *start, ptl_size_t length, unsigned int options,
                                   ptl_match_bits_t match_bits)
{
    return (ptl_me_t){.start = start,
                      .length = length,
                      .ct_handle = PTL_CT_NONE,
                      .uid = PTL_UID_ANY,
                      .options = options,
                      .match_id.phys = {.nid = PTL_NID_ANY, .pid = PTL_PID_ANY},
                      .match_bits = match_bits};
}
#endif
