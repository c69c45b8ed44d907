/*
 * What the one-sided files share (mpi_win.c: windows and synchronization;
 * mpi_rma.c: the operations, at the origin and at the target).
 *
 * A window has a private communicator over the same ranks (its own
 * context id): its point-to-point context carries the window's messages,
 * which so never meet the program's.  An operation is a message to the
 * target (tag T_RMA_REQ): a header, the target datatype's type map as the
 * origin has it (so derived target types need nothing agreed beforehand),
 * then the data, packed.  The target applies it when it makes progress in
 * any MPI call (the progress hook): one operation at a time, so each is
 * atomic with respect to the others.  Answers (gets, fetches, lock grants,
 * acknowledgements) come back on tags of their own.
 */
#ifndef MPI_RMA_H
#define MPI_RMA_H

#include "mpi_impl.h"

enum { T_RMA_REQ = 1, T_RMA_GRANT, T_RMA_ACK, T_RMA_POST, T_RMA_DONE, T_RMA_REPLY = 16 };
enum { RMA_PUT = 1, RMA_GET, RMA_ACC, RMA_GACC, RMA_CAS, RMA_LOCK, RMA_UNLOCK, RMA_FLUSH };

struct rma_hdr {
    int32_t kind;
    int32_t counted;     /* of an active-target epoch: the target counts it */
    int64_t disp;        /* bytes from the target window's base */
    int64_t count;       /* elements of the target datatype */
    int32_t op;          /* accumulates: the MPI_Op; RMA_LOCK: the lock type */
    int32_t reply_tag;   /* where the answer goes */
    int32_t nblocks;     /* the target type's blocks follow, then the data */
    int32_t pad;
    int64_t lb, ub, true_lb, true_ub, size, reps, rep_stride;
};

/* An origin's operation not yet complete: a send whose buffer is still
 * the engine's, or the receive of an answer to unpack into dst. */
struct rma_pend {
    struct msg_req *r;
    int target;
    uint32_t seq;            /* its number (mwin.pend_seq) */
    bool finishing;          /* a thread waits for it (MPI_THREAD_MULTIPLE) */
    const void *claim;       /* the mpi_rma_complete call finishing it */
    void *buf;
    void *dst;
    long dcount;
    MPI_Datatype dtype;
    bool held;               /* dtype is held for it */
    struct mreq *req;        /* MPI_Rget ...'s request, completed with it */
    struct rma_pend *next;
};

struct rma_lockq {
    int rank, type;
    struct rma_lockq *next;
};

/* A target's message in flight (answers, grants, acknowledgements). */
struct rma_tsend {
    struct msg_req *r;
    void *buf;
    struct rma_tsend *next;
};

/* Small fields first, then pointers: no padding (1024 windows' slots are
 * in every rank's memory, which -ppn shares out). */
struct mwin {
    bool in_use;
    bool owns_base;          /* MPI_Win_allocate's memory */
    bool fence;              /* as an origin: in a fence epoch */
    bool lock_all;           /* as an origin: MPI_Win_lock_all */
    bool started;            /* as an origin: MPI_Win_start */
    bool posted;             /* as a target: MPI_Win_post */
    MPI_Win h;
    MPI_Comm comm;           /* the private communicator */
    int rank, size;
    int disp_unit, flavor, model;
    MPI_Errhandler errh;
    int nregions, cap_regions; /* regions, below */
    uint32_t next_tag;       /* as an origin: of the next answer */
    uint32_t pend_seq;       /* as an origin: the number the next entry of pend gets */
    int npend;               /* entries of pend */
    int excl;                /* as a target: the exclusive lock's holder; -1: none */
    int shared;              /* as a target: shared locks held */
    char *base;
    MPI_Aint wsize;
    /* MPI_Win_create_dynamic's: the memory attached here, which
     * displacements (absolute addresses) must fall in. */
    struct rma_region { char *base; MPI_Aint size; } *regions;
    MPI_Aint *sizes;         /* every rank's window size and unit */
    int *units;
    /* as an origin */
    int *locked;             /* lock type held at each target; 0: none */
    bool *access;            /* MPI_Win_start's group */
    int *sent;               /* counted operations to each target since the last sync */
    struct rma_pend *pend;
    /* as a target */
    int *applied;            /* counted operations from each origin, not yet synced */
    struct rma_lockq *queue;
    int *errs;               /* operations refused from each origin since its last ack */
    bool *exposed;           /* MPI_Win_post's group */
    struct rma_tsend *tsends;
    /* MPI_Win_allocate_shared's: every rank's memory, rank 0's first
     * (shared_len: the mapping, 0 if this process alone holds it). */
    char *shared_base, *shared_map;
    size_t shared_len;
};

/* mpi_win.c */
/* A window over base (the checks, the private communicator, every rank's
 * size and unit); the flavor says which call made it. */
int mpi_win_make(const char *call, void *base, MPI_Aint size, int disp_unit, MPI_Info info,
                 MPI_Comm comm, int flavor, MPI_Win *win);
int mpi_win_check(const char *call, MPI_Win win, struct mwin **out);
int mpi_win_error(struct mwin *w, int code, const char *call, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A code a check raised on w->comm: the window's own handler too. */
int mpi_win_raise(struct mwin *w, int rc);
/* Progress on every window's target side until *done (or r done); serves
 * this rank's own requests without waiting for an engine event. */
void mpi_win_wait_req(struct msg_req *r);
void mpi_win_serve_all(void);

/* mpi_win_shared.c: a shared window's mapping let go (at MPI_Win_free). */
void mpi_win_shared_unmap(struct mwin *w);

/* mpi_rma.c */
void mpi_rma_serve(struct mwin *w);                 /* the target: every request there */
int mpi_rma_complete(struct mwin *w, int target);   /* the origin's operations (-1: all) */
/* A control message (RMA_LOCK/UNLOCK/FLUSH) to target, and the wait for
 * its answer (grant or acknowledgement); an acknowledgement tells how many
 * operations the target refused: MPI_ERR_RMA_RANGE then. */
int mpi_rma_control(struct mwin *w, const char *call, int target, int kind, int type);
void mpi_rma_await(struct mwin *w, int target, int kind, int *refused);
void mpi_rma_tsend(struct mwin *w, int to, int tag, const void *data, long len);
void mpi_rma_reap(struct mwin *w, bool all);
#endif
