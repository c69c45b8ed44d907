/*
 * Errors: classes and their strings, error handlers, and how an error is
 * raised.  MPI_ERRORS_ARE_FATAL (every communicator's default) prints
 *   MPI error on rank R in MPI_Xxx: MPI_ERR_YYY (code N): detail
 * on stderr and ends the whole job with status 1 (yod exits 1 and names
 * the rank); MPI_ERRORS_RETURN returns the code; a handler made with
 * MPI_Comm_create_errhandler is called, then the code is returned.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

static const struct {
    const char *name, *text;
} classes[] = {
    [MPI_SUCCESS] = {"MPI_SUCCESS", "no error"},
    [MPI_ERR_BUFFER] = {"MPI_ERR_BUFFER", "invalid buffer pointer"},
    [MPI_ERR_COUNT] = {"MPI_ERR_COUNT", "invalid count argument"},
    [MPI_ERR_TYPE] = {"MPI_ERR_TYPE", "invalid datatype"},
    [MPI_ERR_TAG] = {"MPI_ERR_TAG", "invalid tag"},
    [MPI_ERR_COMM] = {"MPI_ERR_COMM", "invalid communicator"},
    [MPI_ERR_RANK] = {"MPI_ERR_RANK", "invalid rank"},
    [MPI_ERR_REQUEST] = {"MPI_ERR_REQUEST", "invalid request"},
    [MPI_ERR_ROOT] = {"MPI_ERR_ROOT", "invalid root"},
    [MPI_ERR_GROUP] = {"MPI_ERR_GROUP", "invalid group"},
    [MPI_ERR_OP] = {"MPI_ERR_OP", "invalid operation"},
    [MPI_ERR_TOPOLOGY] = {"MPI_ERR_TOPOLOGY", "invalid topology"},
    [MPI_ERR_DIMS] = {"MPI_ERR_DIMS", "invalid dimension argument"},
    [MPI_ERR_ARG] = {"MPI_ERR_ARG", "invalid argument"},
    [MPI_ERR_UNKNOWN] = {"MPI_ERR_UNKNOWN", "unknown error"},
    [MPI_ERR_TRUNCATE] = {"MPI_ERR_TRUNCATE", "message truncated on receive"},
    [MPI_ERR_OTHER] = {"MPI_ERR_OTHER", "other error"},
    [MPI_ERR_INTERN] = {"MPI_ERR_INTERN", "internal error"},
    [MPI_ERR_IN_STATUS] = {"MPI_ERR_IN_STATUS", "error code is in status"},
    [MPI_ERR_PENDING] = {"MPI_ERR_PENDING", "pending request"},
    [MPI_ERR_KEYVAL] = {"MPI_ERR_KEYVAL", "invalid key value"},
    [MPI_ERR_NO_MEM] = {"MPI_ERR_NO_MEM", "out of memory"},
    [MPI_ERR_INFO] = {"MPI_ERR_INFO", "invalid info object"},
    [MPI_ERR_UNSUPPORTED_OPERATION] = {"MPI_ERR_UNSUPPORTED_OPERATION",
                                       "operation not supported by Tern's MPI"},
    [MPI_ERR_FILE] = {"MPI_ERR_FILE", "invalid file handle"},
    [MPI_ERR_NOT_SAME] = {"MPI_ERR_NOT_SAME", "arguments differ between the ranks"},
    [MPI_ERR_AMODE] = {"MPI_ERR_AMODE", "invalid access mode"},
    [MPI_ERR_UNSUPPORTED_DATAREP] = {"MPI_ERR_UNSUPPORTED_DATAREP",
                                     "data representation not supported"},
    [MPI_ERR_NO_SUCH_FILE] = {"MPI_ERR_NO_SUCH_FILE", "no such file"},
    [MPI_ERR_FILE_EXISTS] = {"MPI_ERR_FILE_EXISTS", "file exists"},
    [MPI_ERR_BAD_FILE] = {"MPI_ERR_BAD_FILE", "invalid file name"},
    [MPI_ERR_ACCESS] = {"MPI_ERR_ACCESS", "permission denied"},
    [MPI_ERR_NO_SPACE] = {"MPI_ERR_NO_SPACE", "no space left"},
    [MPI_ERR_QUOTA] = {"MPI_ERR_QUOTA", "quota exceeded"},
    [MPI_ERR_READ_ONLY] = {"MPI_ERR_READ_ONLY", "read-only file or file system"},
    [MPI_ERR_FILE_IN_USE] = {"MPI_ERR_FILE_IN_USE", "file in use"},
    [MPI_ERR_IO] = {"MPI_ERR_IO", "input/output error"},
    [MPI_ERR_WIN] = {"MPI_ERR_WIN", "invalid window"},
    [MPI_ERR_BASE] = {"MPI_ERR_BASE", "invalid base address"},
    [MPI_ERR_SIZE] = {"MPI_ERR_SIZE", "invalid size"},
    [MPI_ERR_DISP] = {"MPI_ERR_DISP", "invalid displacement unit"},
    [MPI_ERR_LOCKTYPE] = {"MPI_ERR_LOCKTYPE", "invalid lock type"},
    [MPI_ERR_ASSERT] = {"MPI_ERR_ASSERT", "invalid assertion"},
    [MPI_ERR_RMA_CONFLICT] = {"MPI_ERR_RMA_CONFLICT", "conflicting accesses to a window"},
    [MPI_ERR_RMA_SYNC] = {"MPI_ERR_RMA_SYNC", "wrong synchronization of RMA calls"},
    [MPI_ERR_RMA_RANGE] = {"MPI_ERR_RMA_RANGE", "target memory outside the window"},
    [MPI_ERR_RMA_ATTACH] = {"MPI_ERR_RMA_ATTACH", "memory cannot be attached"},
    [MPI_ERR_RMA_SHARED] = {"MPI_ERR_RMA_SHARED", "memory cannot be shared"},
    [MPI_ERR_RMA_FLAVOR] = {"MPI_ERR_RMA_FLAVOR", "wrong window flavor"},
};

/* Classes and codes a program adds (MPI-3.1 8.5), numbered on from
 * MPI_ERR_LASTCODE: added[i] is code MPI_ERR_LASTCODE + 1 + i.  A class is
 * a code of its own class; an added code's class may be a predefined one.
 * Never taken back (MPI-3.1 has no call for it), so at most MAX_ADDED. */
#define MAX_ADDED 4096
static struct {
    int cls;
    char *text; /* MPI_Add_error_string's, or NULL: "" (MPI-3.1 8.5) */
    bool is_class;
} added[MAX_ADDED];
static int nadded;
static pthread_mutex_t added_lock = PTHREAD_MUTEX_INITIALIZER;

int mpi_last_used_code(void) { return MPI_ERR_LASTCODE + nadded; }

static bool is_added(int code) { return code > MPI_ERR_LASTCODE && code <= mpi_last_used_code(); }

const char *mpi_err_name(int code)
{
    if (code >= 0 && code <= MPI_ERR_LASTCODE)
        return classes[code].name;
    if (is_added(code)) {
        /* Its string when the program gave one. */
        const char *t = added[code - MPI_ERR_LASTCODE - 1].text;
        return t && *t ? t
               : added[code - MPI_ERR_LASTCODE - 1].is_class ? "an error class of the program"
                                                             : "an error code of the program";
    }
    return "MPI_ERR_UNKNOWN";
}

int MPI_Error_class(int errorcode, int *errorclass)
{
    if (is_added(errorcode)) {
        *errorclass = added[errorcode - MPI_ERR_LASTCODE - 1].cls;
        return MPI_SUCCESS;
    }
    if (errorcode < 0 || errorcode > MPI_ERR_LASTCODE)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Error_class",
                         "%d is not an error code", errorcode);
    *errorclass = errorcode;
    return MPI_SUCCESS;
}

int MPI_Error_string(int errorcode, char *string, int *resultlen)
{
    int n;
    if (is_added(errorcode)) {
        const char *t = added[errorcode - MPI_ERR_LASTCODE - 1].text;
        n = snprintf(string, MPI_MAX_ERROR_STRING, "%s", t ? t : "");
    } else if (errorcode < 0 || errorcode > MPI_ERR_LASTCODE) {
        return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Error_string",
                         "%d is not an error code", errorcode);
    } else {
        n = snprintf(string, MPI_MAX_ERROR_STRING, "%s: %s", classes[errorcode].name,
                     classes[errorcode].text);
    }
    *resultlen = n < MPI_MAX_ERROR_STRING ? n : MPI_MAX_ERROR_STRING - 1;
    return MPI_SUCCESS;
}

static int add(const char *call, int cls, bool is_class, int *code)
{
    pthread_mutex_lock(&added_lock);
    if (nadded == MAX_ADDED) {
        pthread_mutex_unlock(&added_lock);
        return mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, call,
                         "the program has added %d error codes and classes, the most there can be",
                         MAX_ADDED);
    }
    int c = MPI_ERR_LASTCODE + 1 + nadded;
    added[nadded].cls = is_class ? c : cls;
    added[nadded].is_class = is_class;
    nadded++; /* after the entry is filled: readers take no lock */
    pthread_mutex_unlock(&added_lock);
    *code = c;
    return MPI_SUCCESS;
}

int MPI_Add_error_class(int *errorclass)
{
    NEED_INIT("MPI_Add_error_class");
    return add("MPI_Add_error_class", 0, true, errorclass);
}

int MPI_Add_error_code(int errorclass, int *errorcode)
{
    NEED_INIT("MPI_Add_error_code");
    bool ok = (errorclass > MPI_SUCCESS && errorclass <= MPI_ERR_LASTCODE) ||
              (is_added(errorclass) && added[errorclass - MPI_ERR_LASTCODE - 1].is_class);
    if (!ok)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Add_error_code",
                         "%d is not an error class", errorclass);
    return add("MPI_Add_error_code", errorclass, false, errorcode);
}

int MPI_Add_error_string(int errorcode, const char *string)
{
    NEED_INIT("MPI_Add_error_string");
    if (!is_added(errorcode))
        return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Add_error_string",
                         "%d is not an error code or class the program added", errorcode);
    if (!string || strlen(string) >= MPI_MAX_ERROR_STRING)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Add_error_string",
                         "the string is longer than MPI_MAX_ERROR_STRING - 1 (%d) characters",
                         MPI_MAX_ERROR_STRING - 1);
    char *t = strdup(string);
    if (!t)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Add_error_string", "no memory");
    pthread_mutex_lock(&added_lock);
    char *old = added[errorcode - MPI_ERR_LASTCODE - 1].text;
    added[errorcode - MPI_ERR_LASTCODE - 1].text = t;
    pthread_mutex_unlock(&added_lock);
    free(old);
    return MPI_SUCCESS;
}

/* ---- handlers ---- */

/* A handler's slot is taken again once the program has freed it and no
 * communicator uses it (MPI-3.1 8.3.4: those keep using it); refs counts
 * the program's handle and each communicator's. */
#define MAX_ERRH 256
static struct {
    bool in_use, freed;
    int refs;
    MPI_Comm_errhandler_function *fn;
} errhs[MAX_ERRH] = {[1] = {true, false, 1, NULL}, [2] = {true, false, 1, NULL}};

static bool errh_ok(MPI_Errhandler e)
{
    return H_KIND(e) == K_ERRH && H_IDX(e) > 0 && H_IDX(e) < MAX_ERRH && errhs[H_IDX(e)].in_use;
}

bool mpi_errh_valid(MPI_Errhandler e) { return errh_ok(e); }

MPI_Comm_errhandler_function *mpi_errh_fn(MPI_Errhandler e)
{
    return errh_ok(e) && e != MPI_ERRORS_ARE_FATAL && e != MPI_ERRORS_RETURN ? errhs[H_IDX(e)].fn
                                                                             : NULL;
}

static void vreport(const char *call, int code, const char *fmt, va_list ap)
{
    fflush(stdout);
    char detail[400];
    vsnprintf(detail, sizeof detail, fmt, ap);
    /* Before MPI_Init the rank is only in the environment. */
    const char *env = getenv("TERN_RANK");
    int rank = mpi.up || mpi.ended ? mpi.wrank : env ? atoi(env) : 0;
    fprintf(stderr, "MPI error on rank %d in %s: %s (code %d): %s\n", rank, call,
            mpi_err_name(code), code, detail);
    fflush(stderr);
}

/* Reports the error and ends the job (MPI_ERRORS_ARE_FATAL). */
_Noreturn static void fatal(const char *call, int code, const char *fmt, va_list ap)
{
    vreport(call, code, fmt, ap);
    msg_abort(1);
}

_Noreturn void mpi_fatal(const char *call, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(call, MPI_ERR_OTHER, fmt, ap);
    va_end(ap);
    msg_abort(1);
}

int mpi_error(MPI_Comm comm, int code, const char *call, const char *fmt, ...)
{
    struct mcomm *c = mpi_comm_get(comm);
    if (!c) {
        comm = MPI_COMM_WORLD;
        c = mpi_comm_get(comm);
    }
    MPI_Errhandler e = c ? c->errh : MPI_ERRORS_ARE_FATAL;
    if (e == MPI_ERRORS_RETURN)
        return code;
    if (e != MPI_ERRORS_ARE_FATAL && errh_ok(e)) {
        errhs[H_IDX(e)].fn(&comm, &code);
        return code;
    }
    va_list ap;
    va_start(ap, fmt);
    fatal(call, code, fmt, ap);
}

int mpi_error_handled(MPI_Errhandler e, MPI_File fh, int code, const char *call,
                      const char *fmt, ...)
{
    MPI_Comm_errhandler_function *fn = mpi_errh_fn(e);
    if (fn) /* MPI_File_errhandler_function: the same call with the file's handle */
        fn((MPI_Comm *)&fh, &code);
    if (e != MPI_ERRORS_ARE_FATAL)
        return code;
    va_list ap;
    va_start(ap, fmt);
    fatal(call, code, fmt, ap);
}

/* Predefined handlers (slots 1 and 2) are never counted. */
void mpi_errh_ref(MPI_Errhandler e)
{
    if (errh_ok(e) && H_IDX(e) > 2)
        errhs[H_IDX(e)].refs++;
}

void mpi_errh_unref(MPI_Errhandler e)
{
    if (errh_ok(e) && H_IDX(e) > 2 && --errhs[H_IDX(e)].refs == 0)
        errhs[H_IDX(e)] = (typeof(errhs[0])){0};
}

int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    NEED_INIT("MPI_Comm_set_errhandler");
    struct mcomm *c;
    TRY(mpi_check_comm("MPI_Comm_set_errhandler", comm, &c));
    if (!errh_ok(errhandler))
        return mpi_error(comm, MPI_ERR_ARG, "MPI_Comm_set_errhandler",
                         "%#x is not an error handler", (unsigned)errhandler);
    mpi_errh_ref(errhandler);
    mpi_errh_unref(c->errh);
    c->errh = errhandler;
    return MPI_SUCCESS;
}

int MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    NEED_INIT("MPI_Comm_get_errhandler");
    struct mcomm *c;
    TRY(mpi_check_comm("MPI_Comm_get_errhandler", comm, &c));
    *errhandler = c->errh;
    return MPI_SUCCESS;
}

int MPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler)
{
    return MPI_Comm_set_errhandler(comm, errhandler);
}

int MPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    return MPI_Comm_get_errhandler(comm, errhandler);
}

int MPI_Comm_create_errhandler(MPI_Comm_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    NEED_INIT("MPI_Comm_create_errhandler");
    for (int i = 3; i < MAX_ERRH; i++)
        if (!errhs[i].in_use) {
            errhs[i] = (typeof(errhs[0])){.in_use = true, .refs = 1, .fn = fn};
            *errhandler = H_MAKE(K_ERRH, i);
            return MPI_SUCCESS;
        }
    return mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Comm_create_errhandler",
                     "all %d error handlers in use (freed ones still set on a communicator "
                     "count)", MAX_ERRH - 3);
}

int MPI_Errhandler_create(MPI_Handler_function *fn, MPI_Errhandler *errhandler)
{
    return MPI_Comm_create_errhandler(fn, errhandler);
}

int MPI_Errhandler_free(MPI_Errhandler *errhandler)
{
    NEED_INIT("MPI_Errhandler_free");
    if (!errh_ok(*errhandler))
        return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Errhandler_free",
                         "%#x is not an error handler", (unsigned)*errhandler);
    /* Communicators that use it keep using it (MPI-3.1 8.3.4): the slot
     * goes with the last of them. */
    if (H_IDX(*errhandler) > 2 && !errhs[H_IDX(*errhandler)].freed) {
        errhs[H_IDX(*errhandler)].freed = true;
        mpi_errh_unref(*errhandler);
    }
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}

int MPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    NEED_INIT("MPI_Comm_call_errhandler");
    struct mcomm *c;
    TRY(mpi_check_comm("MPI_Comm_call_errhandler", comm, &c));
    mpi_error(comm, errorcode, "MPI_Comm_call_errhandler", "raised by the program");
    return MPI_SUCCESS;
}
