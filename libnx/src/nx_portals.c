/*
 * libnx on Portals 4 (the Tern build): start-up, identity, time and abort.
 * See nx_ptl.h for the layout of the build.
 *
 * NX programs have no init call, so the library starts the message engine
 * in a constructor (libmsg/msg_start.c: environment, NI, map, start-up
 * barrier); its tunables are TERN_NX_* (docs/libnx.md).
 */
#include "nx.h"
#include "nx_impl.h"
#include "nx_ptl.h"

long nx_info_last[4];

double dclock(void) { return msg_now(); }
long mynode(void) { return msg_rank(); }
long numnodes(void) { return msg_size(); }
long mypid(void) { return 0; }
long myptype(void) { return 0; }
long myhost(void) { return -1; }

_Noreturn void nx_abort(int status) { msg_abort(status); }

__attribute__((constructor)) static void nx_start(void)
{
    static const struct msg_config cfg = {.who = "libnx", .env_prefix = "TERN_NX"};
    msg_start(&cfg);
}
