/*
 * libnx on Portals 4: NX's calls over the message engine (libmsg/msg.h).
 *
 *   nx_portals.c    start-up (a constructor: NX has no init call), identity,
 *                   time, abort
 *   nx_ptl_calls.c  point-to-point work (nx_do_*), message ids, probes
 *   nx_ptl_coll.c   global operations
 *
 * Match bits: the NX message type; bit 63 marks the library's own messages
 * (global operations), so a type selector -1 (ignore bits 0..62) never
 * takes them.  The source node is the engine's source selector.
 */
#ifndef NX_PTL_H
#define NX_PTL_H

#include <stdbool.h>
#include <stdint.h>

#include "msg.h"

#define MB_INTERNAL (1ULL << 63)
#define MB_TYPES (MB_INTERNAL - 1)
#define NX_MAX_LEN ((long)MSG_MAX_LEN)

/* nx_ptl_calls.c: the global operations' own messages */
struct msg_req *nx_coll_isend(long node, uint64_t bits, const void *buf, long len);
struct msg_req *nx_coll_irecv(long node, uint64_t bits, void *buf, long len);
void nx_coll_wait(struct msg_req *r); /* and release it */
#endif
