/*
 * MPI_THREAD_MULTIPLE's lock (mpi_thread.c): every call's PMPI_ wrapper
 * (generated, libmpi/mkpmpi.py) holds it around the call once a program
 * asked for MULTIPLE; until then the wrappers only call through.  The lock
 * is the thread's again when a call made inside a call (a program's
 * callback calling MPI) enters.
 */
#ifndef MPI_THREAD_H
#define MPI_THREAD_H

#include <stdatomic.h>
#include <stdbool.h>

extern atomic_bool mpi_multiple;
bool mpi_enter_locked(void);
void mpi_leave_locked(void);

/* Whether this call took the lock (what mpi_leave is given back). */
static inline bool mpi_enter(void)
{
    return atomic_load_explicit(&mpi_multiple, memory_order_relaxed) && mpi_enter_locked();
}
static inline void mpi_leave(bool locked)
{
    if (locked)
        mpi_leave_locked();
}

/* MPI_THREAD_MULTIPLE from now on (MPI_Init_thread, MPI_Session_init). */
void mpi_threads_multiple(void);
/* A wait that no Portals event ends (a generalized request another thread
 * completes): let the other threads in, then go on. */
void mpi_thread_yield(void);
#endif
