/*
 * The MPI environment: Init (starts the message engine with the TERN_MPI_*
 * tunables), Finalize, Abort, thread levels, time, names and versions.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mpi_impl.h"
#include "mpi_thread.h"

struct mpi_state mpi;

/* The library's state, made once, by MPI_Init or by the first
 * MPI_Session_init (mpi_session.c): the engine, the tables, the predefined
 * communicators.  required: the thread level asked for. */
void mpi_library_start(int argc, char **argv, int required)
{
    if (mpi.up)
        return;
    /* After MPI_Abort or a fatal error on one rank, the others wait 2 s
     * before they end too: under yod the failing rank's end is reported
     * first (its rank, the call and the code are its last words on
     * stderr) and yod ends the rest. */
    static const struct msg_config cfg = {.who = "MPI", .env_prefix = "TERN_MPI",
                                          .abort_linger_ms = 2000};
    msg_start(&cfg);
    mpi.wrank = (int)msg_rank();
    mpi.wsize = (int)msg_size();
    /* Progress is made only inside MPI calls, by the calling thread; under
     * MULTIPLE one lock keeps the calls of several threads apart
     * (mpi_thread.c). */
    mpi.thread_level = mpi_thread_provided(required);
    mpi.main_thread = pthread_self(); /* the one FUNNELED means */
    mpi_types_init();
    mpi_requests_init();
    mpi.up = true; /* communicators are made with MPI calls */
    mpi_comm_init();
    mpi_coll_init();
    if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE)
        required = MPI_THREAD_SINGLE;
    mpi_info_env_init(argc, argv, mpi.wsize, required);
}

/* Every level is given as asked (MULTIPLE: the lock of mpi_thread.c from
 * then on); a value that is no level is SINGLE. */
int mpi_thread_provided(int required)
{
    if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE)
        return MPI_THREAD_SINGLE;
    if (required == MPI_THREAD_MULTIPLE)
        mpi_threads_multiple();
    return required;
}

/* The engine's exit handshake: every message this rank sent is accepted
 * and the others know it is done.  Once; the library cannot start again. */
void mpi_library_finish(void)
{
    if (!mpi.up)
        return;
    /* Buffered messages leave first. */
    mpi_bsend_reap();
    msg_finish();
    mpi.up = false;
    mpi.ended = true;
}

static int start(int *argc, char ***argv, int required)
{
    if (mpi.initialized || mpi.finalized)
        mpi_fatal("MPI_Init", "MPI is %s already", mpi.finalized ? "finalized" : "initialized");
    if (mpi.ended)
        mpi_fatal("MPI_Init", "the library has ended (its sessions were finalized before)");
    if (mpi.up) /* started by a session: the world model's level is its own */
        mpi.thread_level = mpi_thread_provided(required);
    mpi_library_start(argc ? *argc : 0, argv ? *argv : NULL, required);
    mpi.initialized = true;
    return MPI_SUCCESS;
}

int MPI_Init(int *argc, char ***argv)
{
    return start(argc, argv, MPI_THREAD_SINGLE);
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    TRY(start(argc, argv, required));
    *provided = mpi.thread_level;
    return MPI_SUCCESS;
}

/* MPI-3.1 14.2.4: the level is for a profiler that defines MPI_Pcontrol
 * itself (this one is weak, libmpi/mkpmpi.py); the library has no use for
 * it, and the standard has it return at once. */
int MPI_Pcontrol(const int level, ...)
{
    (void)level;
    return MPI_SUCCESS;
}

int MPI_Initialized(int *flag)
{
    *flag = mpi.initialized;
    return MPI_SUCCESS;
}

int MPI_Finalized(int *flag)
{
    *flag = mpi.finalized;
    return MPI_SUCCESS;
}

int MPI_Query_thread(int *provided)
{
    NEED_INIT("MPI_Query_thread");
    *provided = mpi.thread_level;
    return MPI_SUCCESS;
}

int MPI_Is_thread_main(int *flag)
{
    NEED_INIT("MPI_Is_thread_main");
    *flag = pthread_equal(pthread_self(), mpi.main_thread) != 0;
    return MPI_SUCCESS;
}

int MPI_Finalize(void)
{
    if (!mpi.initialized || mpi.finalized)
        mpi_fatal("MPI_Finalize", "called %s MPI_Init", mpi.finalized ? "after MPI_Finalize, not" : "before");
    /* MPI_COMM_SELF's attributes go first, as if it were freed (MPI-3.1
     * 8.7.1): libraries hang their clean-up there. */
    TRY(mpi_attrs_delete("MPI_Finalize", MPI_COMM_SELF));
    /* Sessions still open keep the library: it ends with the last of
     * them, or when the process exits (mpi_session.c). */
    if (!mpi_sessions_open())
        mpi_library_finish();
    mpi.finalized = true;
    return MPI_SUCCESS;
}

int MPI_Abort(MPI_Comm comm, int errorcode)
{
    struct mcomm *c = mpi.up ? mpi_comm_get(comm) : NULL;
    fflush(stdout);
    fprintf(stderr, "MPI_Abort(%s, %d) called on rank %d: the job ends with error code %d\n",
            c && c->name[0] ? c->name : "comm", errorcode, mpi.wrank, errorcode);
    fflush(stderr);
    /* The rank's exit status is the error code (1 if that is 0 or does not
     * fit a status): every rank of the job ends with it. */
    int status = errorcode > 0 && errorcode < 256 ? errorcode : 1;
    msg_abort(status);
}

double MPI_Wtime(void) { return msg_now(); }

double MPI_Wtick(void)
{
    struct timespec r;
    if (clock_getres(CLOCK_MONOTONIC, &r) || (r.tv_sec == 0 && r.tv_nsec == 0))
        return 1e-9;
    return (double)r.tv_sec + (double)r.tv_nsec * 1e-9;
}

/* "nidN" from this rank's entry of TERN_MAP (docs/job-interface.md). */
long mpi_node_of(int wrank)
{
    const char *m = getenv("TERN_MAP");
    for (int r = 0; m && *m; r++) {
        if (r == wrank)
            return (long)strtoul(m, NULL, 0);
        m = strchr(m, ',');
        if (m)
            m++;
    }
    return -1;
}

int MPI_Get_processor_name(char *name, int *resultlen)
{
    NEED_INIT("MPI_Get_processor_name");
    long nid = mpi_node_of(mpi.wrank);
    if (nid >= 0)
        snprintf(name, MPI_MAX_PROCESSOR_NAME, "nid%ld", nid);
    else if (gethostname(name, MPI_MAX_PROCESSOR_NAME))
        snprintf(name, MPI_MAX_PROCESSOR_NAME, "localhost");
    name[MPI_MAX_PROCESSOR_NAME - 1] = 0;
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}

int MPI_Get_version(int *version, int *subversion)
{
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}

int MPI_Get_library_version(char *version, int *resultlen)
{
    int n = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
                     "Tern MPI %d.%d on Portals 4 (docs/mpi.md)", MPI_VERSION, MPI_SUBVERSION);
    *resultlen = n;
    return MPI_SUCCESS;
}

/* Memory for the program to use in messages: any memory serves (Portals
 * reaches it where it is), so it is malloc's.  baseptr: a void **. */
int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    (void)info;
    NEED_INIT("MPI_Alloc_mem");
    if (size < 0)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Alloc_mem", "size %ld", (long)size);
    void *p = malloc(size ? (size_t)size : 1);
    if (!p)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Alloc_mem", "%ld bytes",
                         (long)size);
    memcpy(baseptr, &p, sizeof p);
    return MPI_SUCCESS;
}

int MPI_Free_mem(void *base)
{
    NEED_INIT("MPI_Free_mem");
    free(base);
    return MPI_SUCCESS;
}
