/* What the builds of libnx share internally. */
#ifndef NX_IMPL_H
#define NX_IMPL_H

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
#endif
