/*
 * NX message passing (Intel iPSC/Paragon, SUNMOS, PUMA), as Tern provides it.
 *
 * Programs written for NX compile unchanged: `#include <nx.h>`.  Two builds
 * of the same interface exist: libnx on Tern (Portals) and libnx-mpi on an
 * ordinary Linux cluster (MPICH); the same program runs on both.
 *
 * Choices where NX practice varied (see docs/libnx.md):
 *  - A message is matched by type (typesel -1 = any), source node and ptype.
 *  - FORCE(t) sets bit 30; a force type is an ordinary distinct type here.
 *  - Sending to one's own node is allowed.
 *  - An error prints "NX error in CALL: CONDITION" and ends the job with
 *    status 1; the _-prefixed variants return -1 and set errno instead.
 */
#ifndef TERN_NX_H
#define TERN_NX_H

#ifdef __cplusplus
extern "C" {
#endif

#define FORCE(t) ((t) | (1L << 30))

/* Error conditions (errno values for the _ variants). */
#define EQPBUF    1001  /* bad buffer pointer */
#define EQBLEN    1002  /* bad buffer length */
#define EQLEN     1003  /* bad length */
#define EQMSGLONG 1004  /* message longer than the receive buffer */
#define EQPID     1005  /* bad process type / pid */
#define EQNODE    1006  /* bad node number */
#define EQTYPE    1007  /* bad message type */
#define EQMID     1008  /* bad message id */
#define EQMEM     1009  /* out of memory */
#define EQNOMID   1010  /* no message id left */
#define EQSET     1011
#define EQNOSET   1012

/* Identity and time */
long mynode(void);
long numnodes(void);
long mypid(void);
long myptype(void);
long myhost(void);
double dclock(void);

/* Point to point */
void csend(long type, void *buf, long count, long node, long ptype);
void crecv(long typesel, void *buf, long count);
void crecvx(long typesel, void *buf, long count, long nodesel, long ptypesel, long info[]);
long isend(long type, void *buf, long count, long node, long ptype);
long irecv(long typesel, void *buf, long count);
long irecvx(long typesel, void *buf, long count, long nodesel, long ptypesel, long info[]);
long msgdone(long mid);
void msgwait(long mid);
void msgignore(long mid);
long msgcancel(long mid);
long iprobe(long typesel);
void cprobe(long typesel);
long iprobex(long typesel, long nodesel, long ptypesel, long info[]);
void cprobex(long typesel, long nodesel, long ptypesel, long info[]);
long infocount(void);
long infonode(void);
long infotype(void);
long infoptype(void);

/* The _ variants: -1 and errno on error instead of ending the job. */
long _csend(long type, void *buf, long count, long node, long ptype);
long _crecv(long typesel, void *buf, long count);
long _isend(long type, void *buf, long count, long node, long ptype);
long _irecv(long typesel, void *buf, long count);
long _msgwait(long mid);

/* Global operations: every node calls them; the result is on every node. */
void gsync(void);
void gdsum(double x[], long n, double work[]);
void gdprod(double x[], long n, double work[]);
void gdhigh(double x[], long n, double work[]);
void gdlow(double x[], long n, double work[]);
void gisum(long x[], long n, long work[]);
void giprod(long x[], long n, long work[]);
void gihigh(long x[], long n, long work[]);
void gilow(long x[], long n, long work[]);
void gssum(float x[], long n, float work[]);
void gsprod(float x[], long n, float work[]);
void gshigh(float x[], long n, float work[]);
void gslow(float x[], long n, float work[]);
void giand(long x[], long n, long work[]);
void gior(long x[], long n, long work[]);
void gixor(long x[], long n, long work[]);
void gland(long x[], long n, long work[]);
void glor(long x[], long n, long work[]);
void gcol(void *x, long xlen, void *y, long ylen, long *ncnt);
void gcolx(void *x, long xlens[], void *y);
void gopf(void *x, long xlen, void *work, long (*fn)(void *a, void *b));

#ifdef __cplusplus
}
#endif
#endif
