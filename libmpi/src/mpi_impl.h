/*
 * Tern's MPI: what its files share.  MPI is a layer over the message
 * engine (libmsg/msg.h), as NX is.
 *
 *   mpi_init.c     Init/Finalize/Abort, time, version, thread levels
 *   mpi_errors.c   error classes and strings, error handlers, the checks
 *   mpi_comm.c     communicators, context ids, attributes
 *   mpi_group.c    groups
 *   mpi_topo.c     Cartesian topologies, Dims_create, Cart_map, Topo_test
 *   mpi_graph.c    graph and distributed graph topologies
 *   mpi_neighbor.c neighborhood collectives (schedules of mpi_nbc.c)
 *   mpi_type.c     datatypes: predefined, constructors, pack and unpack
 *   mpi_op.c       reduction operations on every predefined type
 *   mpi_pt2pt.c    sends, receives, probes, buffered sends, (I)sendrecv
 *   mpi_mprobe.c   matched probes and their receives (MPI_Message)
 *   mpi_request.c  requests: wait and test, persistent requests, cancel
 *   mpi_coll.c     collective operations (mpi_coll.h: what they share)
 *   mpi_gatherv.c  Gatherv and Scatterv
 *   mpi_fortran.c  the Fortran bindings (mpif.h)
 *   mpi_intercomm.c intercommunicators; mpi_intercoll.c their collectives
 *   mpi_nbc.c      nonblocking collectives (schedules) and Alltoallw
 *   mpi_internbc.c intercommunicators' nonblocking collectives
 *   mpi_pcoll.c    persistent collectives (MPI-4: each start a nonblocking one)
 *   mpi_greq.c     generalized requests (a program's own operations)
 *   mpi_idup.c     MPI_Comm_idup: context ids agreed without blocking
 *   mpi_progress.c what runs whenever the engine makes progress
 *   mpi_type_contents.c  Type_get_envelope/contents, type names, holds
 *   mpi_type_fortran.c   types by Fortran kind: Type_match_size, create_f90_*
 *   mpi_darray.c   distributed array datatypes (Type_create_darray)
 *   mpi_external.c Pack_external and friends: the "external32" representation
 *   mpi_attr.c     attributes of communicators and datatypes, keyvals
 *   mpi_info.c, mpi_file.c  info objects, MPI-IO
 *   mpi_file_shared.c  MPI-IO's shared file pointer (kept by the file's rank 0)
 *   mpi_win.c      one-sided windows and their synchronization (mpi_rma.h)
 *   mpi_rma.c      one-sided operations: origin side and target side
 *
 * Match bits of an MPI message: the communicator's context id in bits
 * 32..61 (even for point to point, odd for the communicator's collectives),
 * the tag in bits 0..31; the engine's source selector is the sender's rank
 * in MPI_COMM_WORLD (the job's rank).
 */
#ifndef MPI_IMPL_H
#define MPI_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "mpi.h"
/* Generated (libmpi/mkpmpi.py): from here on every call's MPI_ name means
 * its PMPI_ one, so the library defines the profiling names and calls
 * them itself; the MPI_ names are weak aliases added to each object. */
#include "mpi_pmpi_names.h"
#include "msg.h"

#define H_KIND(h) ((unsigned)(h) >> 24)
#define H_IDX(h) ((int)((unsigned)(h) & 0xFFFFFF))
#define H_MAKE(kind, idx) ((int)(((unsigned)(kind) << 24) | (unsigned)(idx)))
enum { K_COMM = 1, K_GROUP, K_TYPE, K_OP, K_REQUEST, K_ERRH, K_INFO, K_FILE, K_MESSAGE, K_WIN, K_SESSION };

#define TAG_UB 0x7FFFFFFF
#define MAX_CONTEXTS 4096 /* communicators alive at once (context ids) */
#define TAG_BITS 0xFFFFFFFFULL

/* ---- state of the library ---- */
struct mpi_state {
    bool initialized, finalized; /* the world model: MPI_Init, MPI_Finalize */
    bool up;                     /* the library runs: the world model or a session */
    bool ended;                  /* its engine said goodbye: it cannot start again */
    int thread_level;
    pthread_t main_thread;   /* the caller of MPI_Init(_thread) */
    int wrank, wsize;
};
extern struct mpi_state mpi;
/* The library starts once, for MPI_Init or the first MPI_Session_init, and
 * ends (the engine's exit handshake) at MPI_Finalize when no session is
 * open, else when the process exits (mpi_init.c, mpi_session.c). */
void mpi_library_start(int argc, char **argv, int required);
void mpi_library_finish(void);
int mpi_thread_provided(int required); /* the level given for one asked for */
int mpi_sessions_open(void);           /* sessions initialized and not finalized */

/* ---- errors (mpi_errors.c) ---- */
/* Raise error `code` in `call` on comm (MPI_COMM_NULL: MPI_COMM_WORLD's
 * handler): fatal handler -> message and the job ends; else the code. */
int mpi_error(MPI_Comm comm, int code, const char *call, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The job ends with this message: errors the library cannot return. */
_Noreturn void mpi_fatal(const char *call, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
const char *mpi_err_name(int code);
/* A communicator takes or drops its error handler (counted while set). */
void mpi_errh_ref(MPI_Errhandler e);
void mpi_errh_unref(MPI_Errhandler e);
/* The highest error code or class there is (MPI_LASTUSEDCODE): the
 * predefined ones and those the program added. */
int mpi_last_used_code(void);
/* MPI_INFO_ENV's contents, made by MPI_Init (mpi_info.c). */
void mpi_info_env_init(int argc, char **argv, int nprocs, int thread_level);
bool mpi_info_ok(MPI_Info info); /* an info object (no error raised) */
/* An error on file fh, whose handler is e (mpi_file.c): MPI_ERRORS_RETURN
 * returns code; MPI_ERRORS_ARE_FATAL reports it and ends the job; a
 * program's handler is called with fh, then the code is returned. */
int mpi_error_handled(MPI_Errhandler e, MPI_File fh, int code, const char *call,
                      const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* An error handler the program may name, and its function (NULL for the
 * predefined ones): windows call it with their own handle (mpi_win.c). */
bool mpi_errh_valid(MPI_Errhandler e);
MPI_Comm_errhandler_function *mpi_errh_fn(MPI_Errhandler e);

/* The node world rank wrank runs on, as TERN_MAP lists it (nid or
 * nid:pid per rank; ranks per core share one); -1 without it. */
long mpi_node_of(int wrank);

/* Attributes (mpi_attr.c), cached on communicators and datatypes: an
 * object is its handle (K_COMM or K_TYPE), a keyval is made for one kind.
 * A keyval's callbacks are C's, or Fortran's: by reference with
 * INTEGER(KIND=MPI_ADDRESS_KIND) values (MPI-2), or with default INTEGER
 * values (MPI-1's MPI_KEYVAL_CREATE).  The object's handle is checked by
 * the caller; errors go to a communicator's handler, a datatype's to
 * MPI_COMM_WORLD's. */
enum { CB_C, CB_FORTRAN, CB_FORTRAN_INT };
#define FIRST_KEYVAL 16            /* below: the predefined attributes */
struct attr {
    int keyval;
    void *val;
};
struct attrs {                     /* an object's attributes */
    struct attr *a;
    int n;
};
int mpi_keyval_create(const char *call, int kind, MPI_Comm_copy_attr_function *copy,
                      int copy_kind, MPI_Comm_delete_attr_function *del, int del_kind,
                      int *keyval, void *extra);
int mpi_keyval_free(const char *call, int kind, int *keyval);
int mpi_attr_set(const char *call, int obj, int keyval, void *val);
int mpi_attr_get(const char *call, int obj, int keyval, void **val, int *flag);
int mpi_attr_delete(const char *call, int obj, int keyval);
/* Duplicating from into to (Comm_dup, Type_dup): on an error to has none. */
int mpi_attrs_copy(const char *call, int from, int to);
/* Every attribute's delete callback (Comm_free, Type_free, MPI_Finalize). */
int mpi_attrs_delete(const char *call, int obj);

/* Every call but a few needs the library started: MPI_Init or a session. */
#define NEED_INIT(call)                                                          \
    do {                                                                         \
        if (!mpi.up)                                                             \
            mpi_fatal(call, "called %s",                                         \
                      mpi.ended ? "after MPI_Finalize"                          \
                                : "before MPI_Init or MPI_Session_init");        \
    } while (0)
/* Return a non-zero error code from a check. */
#define TRY(x)                                                                   \
    do {                                                                         \
        int rc_ = (x);                                                           \
        if (rc_)                                                                 \
            return rc_;                                                          \
    } while (0)

/* ---- groups (mpi_group.c) ---- */
struct mgroup {
    bool in_use;
    int refs;
    int size;
    int *world; /* world rank of each member */
};
struct mgroup *mpi_group_get(MPI_Group g); /* NULL if not a valid group */
MPI_Group mpi_group_new(int size, const int *world); /* copies world */
void mpi_group_ref(MPI_Group g);
void mpi_group_unref(MPI_Group g);
int mpi_group_rank_of(const struct mgroup *g, int world_rank);

/* ---- communicators (mpi_comm.c) ---- */
struct mcomm {
    bool in_use;
    int ctx;          /* context id; match bits use 2*ctx and 2*ctx+1 */
    int rank, size;
    int *world;       /* world rank of each member (NULL: identity, world) */
    int *from_world;  /* comm rank of each world rank or -1 (NULL: identity) */
    MPI_Group group;
    MPI_Errhandler errh;
    uint32_t coll_seq; /* collectives called on it, in the same order everywhere */
    uint32_t idups;    /* MPI_Comm_idup calls on it, in the same order everywhere */
    /* MPI_Barrier's way, chosen by its first call (mpi_coll.c): forwarded
     * by Portals through bar, or messages through the engine. */
    enum { BAR_UNDECIDED = 0, BAR_PORTALS, BAR_MESSAGES } bar_mode;
    struct msg_barrier *bar;
    /* C stores MPI_MAX_OBJECT_NAME - 1 characters of a name, Fortran
     * MPI_MAX_OBJECT_NAME (MPI-3.1 6.8: C's buffer holds the NUL too). */
    char name[MPI_MAX_OBJECT_NAME + 1];
    /* Cartesian topology (ndims 0: MPI-2.1's zero-dimensional one, a point) */
    bool cart;
    int ndims;
    int *dims, *periods;
    struct mgraph *graph; /* a graph or distributed graph topology; NULL: none */
    struct attrs attrs;   /* cached attributes (mpi_attr.c) */
    /* An intercommunicator (mpi_intercomm.c): rank, size, world and group
     * are the local group's; the ranks sends and receives name are the
     * remote group's (rworld, from_rworld); local is an intracommunicator
     * over the local group for the local parts of its collectives. */
    bool inter;
    int rsize;
    int *rworld, *from_rworld;
    MPI_Group rgroup;
    MPI_Comm local;
    /* The handle attribute callbacks are given: a window's (mpi_win.c),
     * whose attributes its private communicator keeps; 0: this one's. */
    int attr_owner;
};
/* A graph topology (mpi_graph.c).  MPI_Graph_create's is the whole graph,
 * as every rank gave it; a distributed graph's is only this rank's own
 * neighbours, as MPI_Dist_graph_create(_adjacent) found them. */
struct mgraph {
    bool dist;                 /* MPI_DIST_GRAPH, else MPI_GRAPH */
    int nnodes, *index, *edges;                /* MPI_GRAPH */
    int indeg, outdeg, *in, *inw, *out, *outw; /* MPI_DIST_GRAPH */
    bool weighted;
};
/* A copy for MPI_Comm_dup (NULL: no memory), and its end. */
struct mgraph *mpi_graph_copy(const struct mgraph *g);
void mpi_graph_free(struct mgraph *g);
/* The neighbours of this rank in comm's topology, in the order the
 * neighborhood collectives use (MPI-3.1 7.6): the sources data comes from
 * (*in, *nin) and the destinations it goes to (*out, *nout), malloc'd;
 * MPI_PROC_NULL for a Cartesian edge's missing neighbour.  Raises
 * MPI_ERR_TOPOLOGY on a communicator without a topology. */
int mpi_topo_neighbors(const char *call, MPI_Comm comm, const struct mcomm *c, int *nin,
                       int **in, int *nout, int **out);

struct mcomm *mpi_comm_get(MPI_Comm c);
/* Check a communicator argument: NULL after raising MPI_ERR_COMM. */
int mpi_check_comm(const char *call, MPI_Comm c, struct mcomm **out);
/* Name a communicator with at most len characters of name (C and Fortran
 * limits differ). */
int mpi_comm_name_set(const char *call, MPI_Comm comm, const char *name, size_t len);
/* World rank of peer r (of the remote group on an intercommunicator) and
 * back (-1: not a peer). */
static inline int mpi_world_of(const struct mcomm *c, int r)
{
    if (c->inter)
        return c->rworld[r];
    return c->world ? c->world[r] : r;
}
static inline int mpi_rank_of(const struct mcomm *c, int w)
{
    if (c->inter)
        return c->from_rworld[w];
    return c->from_world ? c->from_world[w] : w;
}
/* How many peers a rank can name: the remote group's size on an
 * intercommunicator. */
static inline int mpi_peers(const struct mcomm *c) { return c->inter ? c->rsize : c->size; }
static inline uint64_t mpi_bits(int ctx, int tag)
{
    return ((uint64_t)(uint32_t)ctx << 32) | (uint32_t)tag;
}
/* A new communicator over comm's members list (members[i] = world rank of
 * new rank i), with a context id agreed over parent (a collective on it):
 * every member of parent calls it; those with members == NULL get
 * MPI_COMM_NULL. */
int mpi_comm_make(const char *call, MPI_Comm parent, int n, const int *members,
                  MPI_Comm *newcomm);
/* Context ids: the mask of those free here (bit set: free), the lowest
 * free in a mask agreed on (-1: none), and a communicator made with an id
 * agreed on some other way (intercommunicators); errors are raised on
 * errcomm. */
#define CTX_MASK_WORDS (MAX_CONTEXTS / 32)
/* The free ids the blocking calls agree on (below IDUP_FIRST), and those
 * MPI_Comm_idup's agreements do (from it up: mpi_idup.c). */
#define IDUP_FIRST (MAX_CONTEXTS / 2)
void mpi_ctx_free_mask(uint32_t *mask);
void mpi_ctx_idup_mask(uint32_t *mask);
int mpi_ctx_lowest(const uint32_t *mask);
/* One agreement's rounds (mpi_ctx.c): an offer is CTX_MASK_WORDS + 1 words
 * (the last says whether the ids are real); settling the ANDed offers gives
 * the id agreed on, -1 if none is free on all, -2 to go round again. */
struct ctx_round {
    uint64_t key; /* the parent's context id << 32 | a tag */
    int rounds;   /* gone so far */
    int pool;     /* the pools (CTX_EAGER | CTX_REST) offered in the round now */
};
#define CTX_OFFER_WORDS (CTX_MASK_WORDS + 1)
/* The two pools of free ids a round may offer (bits; mpi_ctx.c says why),
 * and which a round takes given those some other round of the process
 * holds: a first round the eager pool if it is free; a later one the rest
 * (with the eager pool if that is free too) if the rest is free and no
 * live agreement with a lower key waits.  Blocking agreements and
 * MPI_Comm_idup's (mpi_idup.c) each hold their own. */
enum { CTX_EAGER = 1, CTX_REST = 2 };
int mpi_ctx_pick(bool first_round, int held, bool lower_live);
void mpi_ctx_offer(struct ctx_round *r, uint32_t *mask);
int mpi_ctx_settle(struct ctx_round *r, const uint32_t *agreed);
void mpi_ctx_abandon(struct ctx_round *r); /* a round that failed */
int mpi_comm_install(const char *call, MPI_Comm errcomm, int ctx, int n, const int *members,
                     MPI_Comm *newcomm);
/* A context id agreed among group g's members alone, me being the caller's
 * rank in it (-1: none free on all): member 0 gathers the others' masks,
 * ANDs them and hands back the result, in messages matched by bits.  Each
 * member also sends check; *same says whether every member's equalled
 * member 0's. */
int mpi_ctx_agree_in_group(const char *call, const struct mgroup *g, int me, uint64_t bits,
                           uint64_t check, bool *same);
/* The context id reserved at MPI_Init for MPI_Comm_create_from_group's
 * agreements (there is no parent communicator to hold them). */
#define CTX_FROM_GROUP 2
/* Intercommunicators' parts of MPI_Comm_dup, _free and _compare. */
/* A duplicate's topology and attributes, once it has its members. */
int mpi_comm_dup_finish(MPI_Comm comm, MPI_Comm *newcomm);
int mpi_intercomm_dup(MPI_Comm comm, MPI_Comm *newcomm);
/* MPI_Comm_idup of an intercommunicator: its groups, ids agreed already. */
int mpi_intercomm_install(MPI_Comm comm, int ctx, int priv_ctx, MPI_Comm *newcomm);
int mpi_intercomm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm);
void mpi_intercomm_release(struct mcomm *c);
int mpi_intercomm_compare(struct mcomm *a, struct mcomm *b, int *result);
void mpi_comm_init(void);

/* ---- datatypes (mpi_type.c) ---- */
enum basic {
    B_NONE = 0,
    B_CHAR, B_SCHAR, B_UCHAR, B_BYTE, B_WCHAR, B_SHORT, B_USHORT, B_INT, B_UINT, B_LONG, B_ULONG,
    B_LLONG, B_ULLONG, B_FLOAT, B_DOUBLE, B_LDOUBLE, B_I8, B_I16, B_I32, B_I64, B_U8, B_U16,
    B_U32, B_U64, B_BOOL, B_CFLOAT, B_CDOUBLE, B_CLDOUBLE, B_AINT, B_OFFSET, B_COUNT, B_PACKED,
    B_FLOAT_INT, B_DOUBLE_INT, B_LONG_INT, B_2INT, B_SHORT_INT, B_LDOUBLE_INT,
    B_FINTEGER, B_FREAL, B_FDOUBLE, B_FCOMPLEX, B_FDCOMPLEX, B_FLOGICAL, B_FCHARACTER,
    B_FINTEGER1, B_FINTEGER2, B_FINTEGER4, B_FINTEGER8, B_FREAL4, B_FREAL8, B_FCOMPLEX8,
    B_FCOMPLEX16, B_F2REAL, B_F2DOUBLE, B_F2INTEGER,
    B_COUNT_OF
};
struct block {
    long off, len;  /* bytes */
    int basic;      /* what the bytes are (for reductions and Get_elements) */
    int pair;       /* B_DOUBLE_INT...: a value-index pair starts here, its
                       value this block (its index too when they touch) */
};
struct mtype {
    bool in_use, committed, predefined;
    int combiner;
    long size;            /* bytes of data */
    long lb, ub;          /* extent = ub - lb */
    long true_lb, true_ub;
    int nblocks;          /* the type map: these blocks, in order, */
    struct block *blocks;
    long reps, rep_stride; /* repeated reps times, rep_stride bytes apart (vectors) */
    const char *name;     /* predefined: its name */
    /* How it was made (mpi_type_contents.c): MPI_Type_get_contents's
     * arguments; the derived types among them are held (refs). */
    struct type_args *args;
    int refs;             /* the program's handle and the types made of it */
    char *uname;          /* MPI_Type_set_name's */
    struct attrs attrs;   /* cached attributes (mpi_attr.c) */
};
/* Record how newtype was made; ints, aints and types as
 * MPI_Type_get_contents gives them back.  0 or MPI_ERR_NO_MEM. */
int mpi_type_record(MPI_Datatype newtype, int combiner, int ni, const int *ints, int na,
                    const MPI_Aint *aints, int nt, const MPI_Datatype *types);
/* Drop one hold on a datatype; the last frees it (MPI_Type_free). */
void mpi_type_unref(struct mtype *t);
/* Hold a derived type for a request (MPI_Type_free while a communication
 * uses it lets the communication complete normally, MPI-3.1 4.1.9);
 * predefined ones need no hold.  Drop ends it. */
bool mpi_type_hold(MPI_Datatype t);
void mpi_type_drop(MPI_Datatype t);
struct mtype *mpi_type_get(MPI_Datatype t);
MPI_Datatype mpi_type_handle(const struct mtype *t);
int mpi_check_type(const char *call, MPI_Comm comm, MPI_Datatype t, struct mtype **out);
/* The same, committed or not (constructors, MPI_Type_get_contents ...). */
int mpi_check_type_any(const char *call, MPI_Datatype t, struct mtype **out);
static inline long mpi_extent(const struct mtype *t) { return t->ub - t->lb; }
/* One element of it is one block at 0 as long as the extent. */
static inline bool mpi_contig(const struct mtype *t)
{
    return t->nblocks == 1 && t->reps == 1 && t->blocks[0].off == 0 && t->blocks[0].len == t->ub - t->lb &&
           t->lb == 0;
}
/* Every block of one element's type map, in order: offset of block K of
 * repetition R. */
#define FOR_BLOCKS(t, R, K)                                                     \
    for (long R = 0; R < (t)->reps; R++)                                        \
        for (int K = 0; K < (t)->nblocks; K++)
#define BLOCK_OFF(t, R, K) ((t)->blocks[K].off + (R) * (t)->rep_stride)
void mpi_pack(const void *buf, long count, const struct mtype *t, void *out);
void mpi_unpack(const void *in, long count, const struct mtype *t, void *buf);
/* The first bytes of packed data, whole elements and part of the next. */
void mpi_unpack_bytes(const void *in, long bytes, const struct mtype *t, void *buf);
/* One block of a type map (len bytes of basic in memory at mem) moved to
 * (pack) or from the packed buffer at packed in some representation
 * (mpi_external.c's external32); returns the packed bytes it made or took. */
typedef long mpi_block_fn(char *mem, char *packed, long len, int basic, bool pack);
/* What mpi_pack and mpi_unpack are: every block of count elements in
 * order, as is (f NULL) or through f; returns the packed bytes. */
long mpi_walk(void *buf, long count, const struct mtype *t, void *packed, bool pack,
              mpi_block_fn *f);
long mpi_basic_size(int basic);   /* bytes of one predefined type in memory */
/* external32 (mpi_external.c): a block converted, as an mpi_block_fn; and
 * whether every value of t keeps its size there (then a file view of t
 * lays its bytes out as in memory, only their order differs). */
long mpi_external32_block(char *mem, char *packed, long len, int basic, bool pack);
bool mpi_external32_same_size(const struct mtype *t);
/* Bytes of count elements from the first to the last byte of data. */
long mpi_span(const struct mtype *t, long count);
void mpi_types_init(void);
/* Block k of t is the index of the pair whose value is block k-1: a
 * reduction takes the two together. */
bool mpi_pair_index(const struct mtype *t, int k);

/* ---- operations (mpi_op.c) ---- */
/* inout = in (op) inout over count elements of t laid out as in memory. */
int mpi_op_apply(const char *call, MPI_Comm comm, MPI_Op op, const void *in, void *inout,
                 long count, MPI_Datatype t);
int mpi_check_op(const char *call, MPI_Comm comm, MPI_Op op, MPI_Datatype t);
bool mpi_op_commutes(MPI_Op op);
/* The same for a predefined reduction op (not MPI_REPLACE, MPI_NO_OP) on
 * a type known only by its type map (no handle: one-sided accumulates). */
int mpi_op_apply_type(const char *call, MPI_Comm comm, MPI_Op op, const void *in, void *inout,
                      long count, const struct mtype *t);
bool mpi_op_predefined(MPI_Op op); /* MPI_MAX ... MPI_NO_OP */

/* ---- files (mpi_file.c) for the shared file pointer (mpi_file_shared.c)
 * and the split collectives (mpi_file_split.c) ---- */
#define MPI_FILE_SLOTS 256 /* open files at once; a handle's index is below */
/* count elements at buf to or from the view's data at offset (etypes). */
int mpi_file_at(const char *call, MPI_File fh, MPI_Offset offset, void *buf, int count,
                MPI_Datatype datatype, MPI_Status *status, bool writing, bool collective);
/* The file's private communicator, error handler and etype size. */
int mpi_file_parts(const char *call, MPI_File fh, MPI_Comm *comm, MPI_Errhandler *errh,
                   long *etype_size);
/* The end of the file, in etypes of the view. */
int mpi_file_end(const char *call, MPI_File fh, MPI_Offset *end);
/* A file opened on comm (its private one), its view set, closed. */
void mpi_file_shared_open(MPI_File fh, MPI_Comm comm);
int mpi_file_shared_reset(MPI_File fh);
void mpi_file_shared_close(MPI_File fh);
/* Collective: the shared pointer's byte offset in the file. */
int mpi_file_shared_bytes(MPI_File fh, MPI_Offset *bytes);
/* The file is closed: a split collective begun on it is forgotten. */
void mpi_file_split_close(MPI_File fh);

/* Run fn whenever the engine makes progress (mpi_progress.c): for the
 * parts of MPI that go on between calls' waits. */
void mpi_progress_add(void (*fn)(void));

/* ---- requests (mpi_request.c) ---- */
/* R_PAIR: MPI_Isendrecv(_replace), complete when both its halves are. */
enum rkind { R_SEND, R_RECV, R_COLL, R_PCOLL, R_GREQ, R_PAIR, R_RMA };
/* Its fields are ordered to leave no padding: the table holds thousands
 * (TERN_MPI_REQUESTS) in every rank's memory, which -ppn shares out. */
struct mreq {
    bool in_use, persistent, active, done_now, cancelled, freed;
    bool holds_type;      /* a derived type is held while the request lives */
    enum rkind kind;
    MPI_Comm comm;
    struct msg_req *er;   /* the engine's, while active */
    int peer, tag;        /* as the call gave them */
    int mode;             /* sends: 0 standard, 'S' synchronous, 'B' buffered, 'R' ready */
    int count;
    MPI_Datatype type;
    MPI_Status status;    /* once complete */
    void *buf;            /* the user's */
    void *tmp;            /* packed copy: sends of non-contiguous types, receives to unpack */
    struct nbc *nbc;      /* R_COLL: a nonblocking collective's schedule (mpi_nbc.c) */
    struct pcoll *pcoll;  /* R_PCOLL: a persistent collective's arguments (mpi_pcoll.c) */
    struct greq *greq;    /* R_GREQ: a generalized request's functions (mpi_greq.c) */
    /* R_RMA: a request-based get's answer, until it arrives (mpi_rma.c). */
    struct rma_pend *rma;
    struct mwin *rma_win;
    /* A receive of a message a matched probe took (mpi_mprobe.c): until
     * started, the engine's message, received instead of matching one. */
    struct msg_saved *matched;
    /* R_PAIR: its send and receive halves (heap, not in the table), each
     * an active request of its own; buf, count, type, peer and tag are the
     * receive's (for its errors); tmp is Isendrecv_replace's packed copy
     * of what is sent.  Both go at completion. */
    struct mreq *half;
};
/* A nonblocking collective's request: stepped, waited for, released. */
bool mpi_nbc_test(struct mreq *r);
void mpi_nbc_wait(struct mreq *r);
void mpi_nbc_release(struct mreq *r);
/* A persistent collective's request: started, stepped, waited for, freed. */
int mpi_pcoll_start(const char *call, struct mreq *r);
bool mpi_pcoll_test(struct mreq *r);
void mpi_pcoll_wait(struct mreq *r);
void mpi_pcoll_release(struct mreq *r);
/* A generalized request's: tested, waited for, cancelled, freed. */
bool mpi_greq_test(struct mreq *r);
void mpi_greq_wait(struct mreq *r);
void mpi_greq_cancel(struct mreq *r);
void mpi_greq_release(struct mreq *r);
/* A kind of request whose module registers how it is tested, waited for
 * and released (R_RMA: mpi_rma.c, when it makes its first), so the request
 * core does not name it and a program that never uses it does not link
 * it (one-sided communication brings 1024 windows' slots). */
struct mpi_req_ops {
    bool (*test)(struct mreq *r);
    void (*wait)(struct mreq *r);
    void (*release)(struct mreq *r);
};
void mpi_req_kind_register(enum rkind kind, const struct mpi_req_ops *ops);
struct mpi_greq_fortran {
    void (*query)(MPI_Aint *extra, int *status, int *ierr);
    void (*free_fn)(MPI_Aint *extra, int *ierr);
    void (*cancel)(MPI_Aint *extra, int *complete, int *ierr);
    MPI_Aint extra;
};
int mpi_greq_start_fortran(const struct mpi_greq_fortran *f, MPI_Request *request);
struct mreq *mpi_req_get(MPI_Request h);
MPI_Request mpi_req_handle(const struct mreq *r);
struct mreq *mpi_req_new(const char *call, MPI_Comm comm);
/* A request complete from the start, with status st (work done in the call). */
int mpi_req_done(const char *call, MPI_Comm comm, const MPI_Status *st, bool send,
                 MPI_Request *request);
void mpi_req_release(struct mreq *r);
int mpi_req_start(const char *call, struct mreq *r); /* start the engine's part */
/* Completion of an active request: fills st (may be IGNORE), frees or
 * deactivates it and sets *h; returns the error code the status holds. */
int mpi_req_complete(struct mreq *r, MPI_Request *h, MPI_Status *st);
bool mpi_req_test(struct mreq *r); /* progress once; is it complete? */
void mpi_req_wait(struct mreq *r);
void mpi_status_set(MPI_Status *st, int src, int tag, int err, long long bytes);
void mpi_status_empty(MPI_Status *st);
/* A status to the program: all but MPI_ERROR (which only the calls that
 * complete many requests set, for MPI_ERR_IN_STATUS). */
void mpi_status_out(MPI_Status *st, const MPI_Status *from);
void mpi_status_fill(MPI_Status *st, int src, int tag, long long bytes);
void mpi_status_none(MPI_Status *st);
void mpi_requests_init(void);

/* ---- point to point for the library itself (mpi_pt2pt.c) ---- */
int mpi_check_rank(const char *call, const struct mcomm *c, MPI_Comm comm, int r, bool any_ok);
int mpi_check_tag(const char *call, MPI_Comm comm, int tag, bool any_ok);
int mpi_check_count(const char *call, MPI_Comm comm, int count);
int mpi_check_buf(const char *call, MPI_Comm comm, const void *buf, int count,
                  const struct mtype *t);
void mpi_bsend_reap(void);
void mpi_bsend_forget(struct mreq *r);
void mpi_bsend_cancel(struct mreq *r);
void mpi_req_fill(struct mreq *r, enum rkind kind, int mode, const void *buf, int count,
                  MPI_Datatype type, int peer, int tag, MPI_Comm comm);
/* A blocking call: the request lives on the stack, never in the table;
 * started, waited for, its status given, a truncation raised on its
 * communicator. */
int mpi_req_blocking(const char *call, struct mreq *r, MPI_Status *status);


/* ---- collectives' own messages (mpi_coll.c) ---- */
void mpi_coll_init(void);

/* ---- Fortran (mpi_fortran.c) ---- */
void *mpi_f_buf(void *p);     /* Fortran MPI_BOTTOM / MPI_IN_PLACE to C's */
#endif
