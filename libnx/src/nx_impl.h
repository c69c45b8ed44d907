/* What the builds of libnx share internally. */
#ifndef NX_IMPL_H
#define NX_IMPL_H

#include <stdbool.h>

#define NX_MAX_MIDS 4096

extern int nx_soft_errors;
extern int nx_last_error;
extern long nx_info_last[4];   /* type, count, node, ptype of the last message */

const char *nx_error_name(int code);
/* Reports an NX error: ends the job (status 1), or, inside an _ variant,
 * sets errno and returns -1. */
int nx_fail(const char *call, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Ends every rank of the job (build specific). */
_Noreturn void nx_abort(int status);

/* Point-to-point work, one implementation per build; nx_calls.c makes the
 * NX calls of them.  `call` names the NX call in error messages; -1 after
 * an error (only reached inside an _ variant), else 0 or a message id. */
long nx_do_send(const char *call, long type, void *buf, long count, long node, long ptype);
long nx_do_isend(const char *call, long type, void *buf, long count, long node, long ptype);
long nx_do_recv(const char *call, long typesel, void *buf, long count, long nodesel, long *info);
long nx_do_irecv(const char *call, long typesel, void *buf, long count, long nodesel,
                 long *info);
long nx_do_wait(const char *call, long mid);
long nx_do_probe(const char *call, long typesel, long nodesel, long *info, bool block);
#endif
