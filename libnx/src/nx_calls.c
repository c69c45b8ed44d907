/* The NX point-to-point calls and their _ variants, the same for every build
 * of libnx: each build implements the nx_do_* work (nx_impl.h). */
#include <stddef.h>

#include <nx.h>

#include "nx_impl.h"

long infocount(void) { return nx_info_last[1]; }
long infonode(void) { return nx_info_last[2]; }
long infotype(void) { return nx_info_last[0]; }
long infoptype(void) { return nx_info_last[3]; }

void csend(long type, void *buf, long count, long node, long ptype)
{
    nx_do_send("csend", type, buf, count, node, ptype);
}

long isend(long type, void *buf, long count, long node, long ptype)
{
    return nx_do_isend("isend", type, buf, count, node, ptype);
}

void crecv(long typesel, void *buf, long count) { nx_do_recv("crecv", typesel, buf, count, -1, NULL); }

void crecvx(long typesel, void *buf, long count, long nodesel, long ptypesel, long info[])
{
    (void)ptypesel;
    nx_do_recv("crecvx", typesel, buf, count, nodesel, info);
}

long irecv(long typesel, void *buf, long count)
{
    return nx_do_irecv("irecv", typesel, buf, count, -1, NULL);
}

long irecvx(long typesel, void *buf, long count, long nodesel, long ptypesel, long info[])
{
    (void)ptypesel;
    return nx_do_irecv("irecvx", typesel, buf, count, nodesel, info);
}

void msgwait(long mid) { nx_do_wait("msgwait", mid); }

long iprobe(long typesel) { return nx_do_probe("iprobe", typesel, -1, NULL, false); }
void cprobe(long typesel) { nx_do_probe("cprobe", typesel, -1, NULL, true); }
long iprobex(long typesel, long nodesel, long ptypesel, long info[])
{
    (void)ptypesel;
    return nx_do_probe("iprobex", typesel, nodesel, info, false);
}
void cprobex(long typesel, long nodesel, long ptypesel, long info[])
{
    (void)ptypesel;
    nx_do_probe("cprobex", typesel, nodesel, info, true);
}

/* The _ variants run the same code with errors turned into errno. */
#define SOFT(expr)                         \
    do {                                   \
        nx_soft_errors = 1;                \
        long r_ = (expr);                  \
        nx_soft_errors = 0;                \
        return r_ < 0 ? -1 : r_;           \
    } while (0)

long _csend(long type, void *buf, long count, long node, long ptype)
{
    SOFT(nx_do_send("_csend", type, buf, count, node, ptype));
}
long _crecv(long typesel, void *buf, long count)
{
    SOFT(nx_do_recv("_crecv", typesel, buf, count, -1, NULL));
}
long _isend(long type, void *buf, long count, long node, long ptype)
{
    SOFT(nx_do_isend("_isend", type, buf, count, node, ptype));
}
long _irecv(long typesel, void *buf, long count)
{
    SOFT(nx_do_irecv("_irecv", typesel, buf, count, -1, NULL));
}
long _msgwait(long mid) { SOFT(nx_do_wait("_msgwait", mid)); }
