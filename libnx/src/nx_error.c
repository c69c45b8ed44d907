/* NX errors: the message every build prints, and the _ variants' errno path. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "nx.h"
#include "nx_impl.h"

static const char *const names[] = {
    [EQPBUF - 1000] = "EQPBUF", [EQBLEN - 1000] = "EQBLEN", [EQLEN - 1000] = "EQLEN",
    [EQMSGLONG - 1000] = "EQMSGLONG", [EQPID - 1000] = "EQPID", [EQNODE - 1000] = "EQNODE",
    [EQTYPE - 1000] = "EQTYPE", [EQMID - 1000] = "EQMID", [EQMEM - 1000] = "EQMEM",
    [EQNOMID - 1000] = "EQNOMID", [EQSET - 1000] = "EQSET", [EQNOSET - 1000] = "EQNOSET",
};

const char *nx_error_name(int code)
{
    if (code > 1000 && code <= EQNOSET)
        return names[code - 1000];
    return "error";
}

/* Set by the _ variants around their call: report through errno instead. */
int nx_soft_errors;
int nx_last_error;

int nx_fail(const char *call, int code, const char *fmt, ...)
{
    char detail[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    if (nx_soft_errors) {
        nx_last_error = code;
        errno = code;
        return -1;
    }
    fprintf(stderr, "NX error in %s on node %ld: %s: %s\n", call, mynode(), nx_error_name(code),
            detail);
    fflush(stderr);
    nx_abort(1);
    return -1;
}
