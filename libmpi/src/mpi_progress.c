/*
 * What MPI does whenever the message engine makes progress, on behalf of
 * parts of it that never wait inside a call: the nonblocking collectives'
 * schedules (mpi_nbc.c), the shared file pointers' keeper (mpi_file_shared.c),
 * MPI_Comm_idup's agreements (mpi_idup.c), one-sided targets (mpi_win.c).
 * The engine has one hook (libmsg/msg.h: it calls up through it, never by
 * name); each part registers its function here, and the hook runs them in
 * turn.
 */
#include "mpi_impl.h"

#define MAX_PROGRESS 8
static void (*fns[MAX_PROGRESS])(void);
static int nfns;

static void run_all(void)
{
    for (int i = 0; i < nfns; i++)
        fns[i]();
}

void mpi_progress_add(void (*fn)(void))
{
    for (int i = 0; i < nfns; i++)
        if (fns[i] == fn)
            return;
    if (nfns == MAX_PROGRESS)
        mpi_fatal("MPI", "more than %d progress functions", MAX_PROGRESS);
    fns[nfns++] = fn;
    if (nfns == 1)
        msg_set_progress_hook(run_all);
}
