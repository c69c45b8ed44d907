/* Preloaded into every process on a Linux comparison node (/etc/ld.so.preload):
 * keeps an MPI rank's UCX worker progressing while it waits in MPI_Finalize's
 * PMI barrier.
 *
 * Debian 12's MPICH 4.0.2 (ch4:ucx) finalizes by closing every UCX endpoint in
 * flush mode (ucp_disconnect_nb), progressing until all closes complete, and
 * only then meeting the other ranks in a PMI barrier, a blocking read() on the
 * PMI socket.  An endpoint that never carried traffic still has its wireup to
 * do, so its flush needs an answer from the peer; a peer that has finished its
 * own closes sits in the barrier, no longer progresses UCX, and never answers:
 * the rank spins in ucp_worker_progress and the job hangs until
 * MPIEXEC_TIMEOUT (docs/linux-cluster.md).  MPICH later dropped that barrier
 * (pmodels/mpich#6596, MPICH 4.2).  Here a rank that has started disconnecting
 * keeps calling ucp_worker_progress while it waits for the PMI socket, until
 * MPICH destroys the worker; nothing else changes.  Without PMI_FD (not an
 * MPICH rank) or before finalize this only forwards the calls. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>

typedef void *ucp_ep_h, *ucp_worker_h, *ucs_status_ptr_t;   /* UCX's opaque handles */

static ucp_worker_h worker;   /* the worker MPI_Finalize progresses, once it disconnects */
static int finalizing;
static int pmi_fd = -1;

__attribute__((constructor)) static void init(void)
{
    const char *s = getenv("PMI_FD");   /* hydra's PMI socket of this rank */
    if (s)
        pmi_fd = atoi(s);
}

ucs_status_ptr_t ucp_disconnect_nb(ucp_ep_h ep)
{
    static ucs_status_ptr_t (*real)(ucp_ep_h);
    if (!real)
        real = (ucs_status_ptr_t (*)(ucp_ep_h))dlsym(RTLD_NEXT, "ucp_disconnect_nb");
    finalizing = 1;
    return real(ep);
}

unsigned ucp_worker_progress(ucp_worker_h w)
{
    static unsigned (*real)(ucp_worker_h);
    if (!real)
        real = (unsigned (*)(ucp_worker_h))dlsym(RTLD_NEXT, "ucp_worker_progress");
    if (finalizing)
        worker = w;
    return real(w);
}

void ucp_worker_destroy(ucp_worker_h w)
{
    static void (*real)(ucp_worker_h);
    if (!real)
        real = (void (*)(ucp_worker_h))dlsym(RTLD_NEXT, "ucp_worker_destroy");
    if (w == worker)
        worker = NULL;
    real(w);
}

ssize_t read(int fd, void *buf, size_t n)
{
    static ssize_t (*real)(int, void *, size_t);
    if (!real)
        real = (ssize_t (*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
    if (worker && fd == pmi_fd) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        while (poll(&p, 1, 0) == 0)
            ucp_worker_progress(worker);
    }
    return real(fd, buf, n);
}
