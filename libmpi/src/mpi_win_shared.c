/*
 * Shared-memory windows (MPI-3.1 11.2.3, 11.2.6): MPI_Win_allocate_shared
 * and MPI_Win_shared_query.  The ranks of the communicator must share a
 * node (TERN_MAP: what MPI_Comm_split_type's MPI_COMM_TYPE_SHARED
 * groups); each load and store of one rank's segment by another goes
 * straight to memory, and RMA calls on the window work as on any other.
 *
 * The memory is one mapping, every rank's segment after the one before
 * (contiguous, as MPI asks by default; alloc_shared_noncontig is a hint
 * and contiguous memory meets it too).  Rank 0 makes it with memfd_create
 * and says where it is (its pid and the descriptor's number); the others
 * open /proc/PID/fd/N and map it.  A page at the front carries a random
 * cookie and the length, which every rank checks, so a rank that opened
 * some other file (another process under that pid) refuses it rather
 * than share the wrong memory.  Then every rank closes its descriptor;
 * the memory goes when the last rank unmaps it (MPI_Win_free).
 *
 * A Tern node gives each of its ranks (yod -ppn) memory of its own and
 * no call to share it (memfd_create answers ENOSYS), so there a shared
 * window of more than one rank fails with MPI_ERR_RMA_SHARED; a rank alone
 * (one rank a node, MPI_COMM_SELF) gets memory of its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mpi_rma.h"

#define HEAD 4096 /* the cookie's page, before rank 0's segment */

struct where {
    long pid, fd, err; /* err: rank 0's errno (0: made) */
    uint64_t cookie;
    uint64_t len;
};

struct head {
    uint64_t cookie, len;
};

static uint64_t random_cookie(void)
{
    uint64_t c = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (read(fd, &c, sizeof c) != (ssize_t)sizeof c)
            c = 0;
        close(fd);
    }
    /* No /dev/urandom: the time and pid still make another process's
     * mapping unlikely to carry it. */
    return c ^ (uint64_t)(MPI_Wtime() * 1e9) ^ ((uint64_t)getpid() << 40);
}

/* Rank 0: the memory made and mapped (*map), or its errno. */
static int make(size_t len, struct where *wh, char **map)
{
    int fd = (int)syscall(SYS_memfd_create, "tern-mpi-shared-window", 1u /* MFD_CLOEXEC */);
    if (fd < 0)
        return errno;
    if (ftruncate(fd, (off_t)len)) {
        int e = errno;
        close(fd);
        return e;
    }
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
        int e = errno;
        close(fd);
        return e;
    }
    *map = m;
    wh->pid = getpid();
    wh->fd = fd;
    wh->cookie = random_cookie();
    wh->len = len;
    *(struct head *)m = (struct head){wh->cookie, len};
    return 0;
}

/* Another rank: rank 0's memory mapped (*map), or why not. */
static const char *join(const struct where *wh, char **map, char *why, size_t whylen)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/fd/%ld", wh->pid, wh->fd);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) {
        snprintf(why, whylen, "cannot open rank 0's memory (%s): %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return why;
    }
    void *m = MAP_FAILED;
    if ((uint64_t)st.st_size == wh->len)
        m = mmap(NULL, wh->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) {
        snprintf(why, whylen, "cannot map rank 0's memory (%s, %lld bytes)", path,
                 (long long)st.st_size);
        return why;
    }
    const struct head *h = m;
    if (h->cookie != wh->cookie || h->len != wh->len) {
        munmap(m, wh->len);
        snprintf(why, whylen, "%s is not rank 0's memory (another node's process?)", path);
        return why;
    }
    *map = m;
    return NULL;
}

int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                            void *baseptr, MPI_Win *win)
{
    const char *call = "MPI_Win_allocate_shared";
    NEED_INIT(call);
    *win = MPI_WIN_NULL;
    struct mcomm *c;
    TRY(mpi_check_comm(call, comm, &c));
    if (c->inter)
        return mpi_error(comm, MPI_ERR_COMM, call, "a shared window needs an intracommunicator");
    if (size < 0)
        return mpi_error(comm, MPI_ERR_SIZE, call, "window size %ld is negative", (long)size);
    /* Every rank finds the same answer: no collective call follows a refusal. */
    long node = mpi_node_of(mpi_world_of(c, 0));
    for (int i = 1; i < c->size; i++) {
        long other = mpi_node_of(mpi_world_of(c, i));
        if (other != node)
            return mpi_error(comm, MPI_ERR_RMA_SHARED, call,
                             "rank %d is on nid %ld and rank 0 on nid %ld: a shared window's "
                             "ranks must share a node (MPI_Comm_split_type with "
                             "MPI_COMM_TYPE_SHARED gives those)",
                             i, other, node);
    }
    int n = c->size, me = c->rank;
    MPI_Aint *sizes = malloc((size_t)n * sizeof *sizes);
    if (!sizes)
        return mpi_error(comm, MPI_ERR_NO_MEM, call, "no memory for %d sizes", n);
    int rc = MPI_Allgather(&size, 1, MPI_AINT, sizes, 1, MPI_AINT, comm);
    if (rc) {
        free(sizes);
        return rc;
    }
    size_t total = 0, before = 0;
    for (int i = 0; i < n; i++) {
        if (i == me)
            before = total;
        total += (size_t)sizes[i];
    }
    free(sizes);

    char *map = NULL, *base = NULL;
    size_t len = 0;
    if (n == 1) {
        /* Alone: memory of its own, nothing to share. */
        base = malloc(total ? total : 1);
        if (!base)
            return mpi_error(comm, MPI_ERR_NO_MEM, call, "no memory for %zu bytes", total);
    } else {
        struct where wh = {0};
        char why[200] = "";
        int ok = 1;
        len = HEAD + total;
        if (me == 0)
            wh.err = make(len, &wh, &map);
        TRY(MPI_Bcast(&wh, (int)sizeof wh, MPI_BYTE, 0, comm));
        if (wh.err) {
            ok = 0;
            snprintf(why, sizeof why,
                     "rank 0 could not make %zu bytes of shared memory (%s)%s", total,
                     strerror((int)wh.err),
                     wh.err == ENOSYS ? ": the ranks of a Tern node share no memory; "
                                        "run one rank per node (yod -ppn 1)"
                                      : "");
        } else if (me != 0 && join(&wh, &map, why, sizeof why)) {
            ok = 0;
        }
        int all = 0;
        rc = MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
        if (me == 0 && !wh.err)
            close((int)wh.fd); /* every rank has mapped it or given up */
        if (rc || !all) {
            if (map)
                munmap(map, len);
            if (rc)
                return rc;
            if (ok)
                snprintf(why, sizeof why, "another rank could not reach the shared memory");
            return mpi_error(comm, MPI_ERR_RMA_SHARED, call, "%s", why);
        }
        base = map + HEAD;
    }
    /* A rank with no memory in the window is given none (NULL), as the
     * query says of it. */
    char *own = size > 0 ? base + before : NULL;
    struct mwin held = {.shared_base = base, .shared_map = len ? map : base, .shared_len = len};
    rc = mpi_win_make(call, own, size, disp_unit, info, comm, MPI_WIN_FLAVOR_SHARED, win);
    if (rc) {
        mpi_win_shared_unmap(&held);
        return rc;
    }
    struct mwin *w = NULL;
    (void)mpi_win_check(call, *win, &w);
    w->shared_base = held.shared_base;
    w->shared_map = held.shared_map;
    w->shared_len = held.shared_len;
    *(void **)baseptr = own;
    return MPI_SUCCESS;
}

void mpi_win_shared_unmap(struct mwin *w)
{
    if (w->shared_len)
        munmap(w->shared_map, w->shared_len);
    else
        free(w->shared_map);
    w->shared_map = w->shared_base = NULL;
    w->shared_len = 0;
}

/* Where rank's memory is (MPI_PROC_NULL: the lowest rank with some; NULL
 * for a rank with none).  A window of another flavor shares nothing: a
 * rank reaches only its own. */
int MPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit,
                         void *baseptr)
{
    const char *call = "MPI_Win_shared_query";
    NEED_INIT(call);
    struct mwin *w = NULL;
    TRY(mpi_win_check(call, win, &w));
    if (rank != MPI_PROC_NULL && (rank < 0 || rank >= w->size))
        return mpi_win_error(w, MPI_ERR_RANK, call, "rank %d is not in 0..%d", rank,
                             w->size - 1);
    if (w->flavor != MPI_WIN_FLAVOR_SHARED) {
        bool own = rank == w->rank || (rank == MPI_PROC_NULL && w->size == 1);
        *size = own ? w->wsize : 0;
        *disp_unit = own ? w->disp_unit : w->units[rank == MPI_PROC_NULL ? 0 : rank];
        *(void **)baseptr = own ? w->base : NULL;
        return MPI_SUCCESS;
    }
    if (rank == MPI_PROC_NULL) {
        rank = 0;
        while (rank < w->size - 1 && w->sizes[rank] == 0)
            rank++;
    }
    size_t off = 0;
    for (int i = 0; i < rank; i++)
        off += (size_t)w->sizes[i];
    *size = w->sizes[rank];
    *disp_unit = w->units[rank];
    *(void **)baseptr = w->sizes[rank] > 0 ? w->shared_base + off : NULL;
    return MPI_SUCCESS;
}
