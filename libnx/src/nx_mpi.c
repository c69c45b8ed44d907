/*
 * libnx-mpi: NX on an ordinary Linux cluster, over MPI (MPICH).
 *
 * Types travel as MPI tags.  MPICH's tag limit (2^28 - 1) leaves room for
 * types 0 .. 2^27 - 1 and their FORCE() forms: bit 30 maps to tag bit 27.
 * Larger types are refused (EQTYPE); the Portals build takes 0 .. 2^61 - 1.
 * NX programs have no init call, so MPI starts in a constructor.
 */
#include <errno.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nx.h"
#include "nx_impl.h"

#define FORCE_BIT (1L << 30)
#define TAG_FORCE (1 << 27)
#define TYPE_MAX ((1L << 27) - 1)

long nx_info_last[4];
static int rank = -1, size;
static MPI_Comm comm;

struct mid {
    bool used, recv, ignored;
    MPI_Request req;
    long *info;
};
static struct mid mids[NX_MAX_MIDS];

_Noreturn void nx_abort(int status)
{
    /* MPI_Abort kills every rank at once; give mpiexec a moment to forward
     * the error message first, or it can be lost with the process. */
    struct timespec pause = {0, 300 * 1000 * 1000};
    nanosleep(&pause, NULL);
    MPI_Abort(MPI_COMM_WORLD, status);
    exit(status);
}

static void finish(void)
{
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin)
        MPI_Finalize();
}

__attribute__((constructor)) static void nx_start(void)
{
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited)
        MPI_Init(NULL, NULL);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    atexit(finish);
}

long mynode(void) { return rank; }
long numnodes(void) { return size; }
long mypid(void) { return 0; }
long myptype(void) { return 0; }
long myhost(void) { return -1; }

double dclock(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}


/* Type to tag, or -1 with the error reported. */
static int send_tag(const char *call, long type)
{
    long base = type & ~FORCE_BIT;
    if (type < 0 || base > TYPE_MAX)
        return nx_fail(call, EQTYPE, "type %ld outside 0..%ld (and FORCE of those)", type,
                       TYPE_MAX);
    return (int)base | ((type & FORCE_BIT) ? TAG_FORCE : 0);
}

static int recv_tag(const char *call, long typesel)
{
    return typesel == -1 ? MPI_ANY_TAG : send_tag(call, typesel);
}

static long tag_type(int tag) { return (tag & (TAG_FORCE - 1)) | ((tag & TAG_FORCE) ? FORCE_BIT : 0); }

static int check_node(const char *call, long node, bool any_ok)
{
    if ((any_ok && node == -1) || (node >= 0 && node < size))
        return 0;
    return nx_fail(call, EQNODE, "node %ld is not in 0..%d", node, size - 1);
}

static int check_buf(const char *call, const void *buf, long count)
{
    if (count < 0)
        return nx_fail(call, EQLEN, "negative length %ld", count);
    if (count > 0 && !buf)
        return nx_fail(call, EQPBUF, "NULL buffer for %ld bytes", count);
    if (count > INT32_MAX)
        return nx_fail(call, EQLEN, "length %ld exceeds this build's 2 GiB limit", count);
    return 0;
}

static void set_info(const MPI_Status *st, long *info)
{
    int n = 0;
    MPI_Get_count(st, MPI_BYTE, &n);
    long v[4] = {tag_type(st->MPI_TAG), n, st->MPI_SOURCE, 0};
    memcpy(nx_info_last, v, sizeof v);
    if (info)
        memcpy(info, v, sizeof v);
}

long nx_do_send(const char *call, long type, void *buf, long count, long node, long ptype)
{
    int tag = send_tag(call, type);
    if (tag < 0 || check_node(call, node, false) || check_buf(call, buf, count))
        return -1;
    if (ptype != 0 && ptype != -1)
        return nx_fail(call, EQPID, "ptype %ld (only 0 exists)", ptype);
    MPI_Send(buf, (int)count, MPI_BYTE, (int)node, tag, comm);
    return 0;
}


long nx_do_recv(const char *call, long typesel, void *buf, long count, long nodesel,
                    long *info)
{
    int tag = recv_tag(call, typesel);
    if (tag == -1 && typesel != -1)
        return -1;
    if (check_node(call, nodesel, true) || check_buf(call, buf, count))
        return -1;
    int src = nodesel == -1 ? MPI_ANY_SOURCE : (int)nodesel;
    MPI_Status st;
    /* Probe first so a message longer than the buffer is an NX error, not
     * MPI truncation; the receive then takes exactly the probed message. */
    MPI_Probe(src, tag, comm, &st);
    int n;
    MPI_Get_count(&st, MPI_BYTE, &n);
    if (n > count)
        return nx_fail(call, EQMSGLONG, "message of %d bytes (type %ld from node %d) is longer "
                       "than the buffer of %ld", n, tag_type(st.MPI_TAG), st.MPI_SOURCE, count);
    MPI_Recv(buf, n, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, comm, &st);
    set_info(&st, info);
    return 0;
}



static void reap_ignored(void)
{
    for (int i = 0; i < NX_MAX_MIDS; i++)
        if (mids[i].used && mids[i].ignored) {
            int done = 0;
            MPI_Test(&mids[i].req, &done, MPI_STATUS_IGNORE);
            if (done)
                mids[i].used = false;
        }
}

static long new_mid(const char *call)
{
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < NX_MAX_MIDS; i++)
            if (!mids[i].used) {
                memset(&mids[i], 0, sizeof mids[i]);
                mids[i].used = true;
                return i;
            }
        reap_ignored();
    }
    return nx_fail(call, EQNOMID, "all %d message ids in use", NX_MAX_MIDS);
}

long nx_do_isend(const char *call, long type, void *buf, long count, long node, long ptype)
{
    int tag = send_tag(call, type);
    if (tag < 0 || check_node(call, node, false) || check_buf(call, buf, count))
        return -1;
    (void)ptype;
    long m = new_mid(call);
    if (m < 0)
        return -1;
    MPI_Isend(buf, (int)count, MPI_BYTE, (int)node, tag, comm, &mids[m].req);
    return m;
}


long nx_do_irecv(const char *call, long typesel, void *buf, long count, long nodesel,
                     long *info)
{
    int tag = recv_tag(call, typesel);
    if ((tag == -1 && typesel != -1) || check_node(call, nodesel, true) ||
        check_buf(call, buf, count))
        return -1;
    long m = new_mid(call);
    if (m < 0)
        return -1;
    mids[m].recv = true;
    mids[m].info = info;
    MPI_Irecv(buf, (int)count, MPI_BYTE, nodesel == -1 ? MPI_ANY_SOURCE : (int)nodesel, tag,
              comm, &mids[m].req);
    return m;
}



static struct mid *get_mid(const char *call, long mid)
{
    if (mid < 0 || mid >= NX_MAX_MIDS || !mids[mid].used || mids[mid].ignored) {
        nx_fail(call, EQMID, "message id %ld is not active", mid);
        return NULL;
    }
    return &mids[mid];
}

static long complete(const char *call, struct mid *m, int rc, MPI_Status *st)
{
    m->used = false;
    if (rc == MPI_ERR_TRUNCATE || (rc != MPI_SUCCESS && st->MPI_ERROR == MPI_ERR_TRUNCATE))
        return nx_fail(call, EQMSGLONG, "message longer than the receive buffer");
    int cancelled = 0;
    MPI_Test_cancelled(st, &cancelled);
    if (m->recv && !cancelled)
        set_info(st, m->info);
    return 1;
}

long msgdone(long mid)
{
    struct mid *m = get_mid("msgdone", mid);
    if (!m)
        return -1;
    int done = 0;
    MPI_Status st;
    int rc = MPI_Test(&m->req, &done, &st);
    return done ? complete("msgdone", m, rc, &st) : 0;
}

long nx_do_wait(const char *call, long mid)
{
    struct mid *m = get_mid(call, mid);
    if (!m)
        return -1;
    MPI_Status st;
    int rc = MPI_Wait(&m->req, &st);
    return complete(call, m, rc, &st) < 0 ? -1 : 0;
}


void msgignore(long mid)
{
    struct mid *m = get_mid("msgignore", mid);
    if (m)
        m->ignored = true;
}

long msgcancel(long mid)
{
    struct mid *m = get_mid("msgcancel", mid);
    if (!m)
        return -1;
    MPI_Cancel(&m->req);
    MPI_Wait(&m->req, MPI_STATUS_IGNORE);
    m->used = false;
    return 0;
}

long nx_do_probe(const char *call, long typesel, long nodesel, long *info, bool block)
{
    int tag = recv_tag(call, typesel);
    if ((tag == -1 && typesel != -1) || check_node(call, nodesel, true))
        return -1;
    int src = nodesel == -1 ? MPI_ANY_SOURCE : (int)nodesel, flag = 1;
    MPI_Status st;
    if (block)
        MPI_Probe(src, tag, comm, &st);
    else
        MPI_Iprobe(src, tag, comm, &flag, &st);
    if (flag)
        set_info(&st, info);
    return flag;
}




/* Global operations map onto MPI's collectives: what a Linux user gets. */
void gsync(void) { MPI_Barrier(comm); }

#define REDUCE(name, ctype, mtype, op)                                       \
    void name(ctype x[], long n, ctype work[])                               \
    {                                                                        \
        (void)work;                                                          \
        if (n < 0 || n > INT32_MAX) {                                        \
            nx_fail(#name, EQLEN, "bad count %ld", n);                       \
            return;                                                          \
        }                                                                    \
        MPI_Allreduce(MPI_IN_PLACE, x, (int)n, mtype, op, comm);             \
    }

REDUCE(gdsum, double, MPI_DOUBLE, MPI_SUM)
REDUCE(gdprod, double, MPI_DOUBLE, MPI_PROD)
REDUCE(gdhigh, double, MPI_DOUBLE, MPI_MAX)
REDUCE(gdlow, double, MPI_DOUBLE, MPI_MIN)
REDUCE(gisum, long, MPI_LONG, MPI_SUM)
REDUCE(giprod, long, MPI_LONG, MPI_PROD)
REDUCE(gihigh, long, MPI_LONG, MPI_MAX)
REDUCE(gilow, long, MPI_LONG, MPI_MIN)
REDUCE(gssum, float, MPI_FLOAT, MPI_SUM)
REDUCE(gsprod, float, MPI_FLOAT, MPI_PROD)
REDUCE(gshigh, float, MPI_FLOAT, MPI_MAX)
REDUCE(gslow, float, MPI_FLOAT, MPI_MIN)
REDUCE(giand, long, MPI_LONG, MPI_BAND)
REDUCE(gior, long, MPI_LONG, MPI_BOR)
REDUCE(gixor, long, MPI_LONG, MPI_BXOR)
REDUCE(gland, long, MPI_LONG, MPI_LAND)
REDUCE(glor, long, MPI_LONG, MPI_LOR)

void gcolx(void *x, long xlens[], void *y)
{
    int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size);
    if (!counts || !displs) {
        nx_fail("gcolx", EQMEM, "no memory for %d counts", size);
        return;
    }
    long off = 0;
    for (int i = 0; i < size; i++) {
        if (xlens[i] < 0 || off + xlens[i] > INT32_MAX) {
            nx_fail("gcolx", EQLEN, "bad length %ld for node %d", xlens[i], i);
            return;
        }
        counts[i] = (int)xlens[i];
        displs[i] = (int)off;
        off += xlens[i];
    }
    MPI_Allgatherv(x, counts[rank], MPI_BYTE, y, counts, displs, MPI_BYTE, comm);
    free(counts);
    free(displs);
}

void gcol(void *x, long xlen, void *y, long ylen, long *ncnt)
{
    long *lens = malloc(sizeof(long) * (size_t)size);
    if (!lens) {
        nx_fail("gcol", EQMEM, "no memory for %d lengths", size);
        return;
    }
    MPI_Allgather(&xlen, 1, MPI_LONG, lens, 1, MPI_LONG, comm);
    long total = 0;
    for (int i = 0; i < size; i++)
        total += lens[i];
    if (total > ylen) {
        nx_fail("gcol", EQBLEN, "the %ld bytes from all nodes do not fit in %ld", total, ylen);
        return;
    }
    gcolx(x, lens, y);
    *ncnt = total;
    free(lens);
}

static long (*user_fn)(void *, void *);

static void apply_user(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)len, (void)dt;
    /* NX's function combines its second argument into its first. */
    user_fn(inout, in);
}

void gopf(void *x, long xlen, void *work, long (*fn)(void *a, void *b))
{
    (void)work;
    MPI_Datatype blob;
    MPI_Op op;
    MPI_Type_contiguous((int)xlen, MPI_BYTE, &blob);
    MPI_Type_commit(&blob);
    user_fn = fn;
    MPI_Op_create(apply_user, 1, &op);
    MPI_Allreduce(MPI_IN_PLACE, x, 1, blob, op, comm);
    MPI_Op_free(&op);
    MPI_Type_free(&blob);
}
