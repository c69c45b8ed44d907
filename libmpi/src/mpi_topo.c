/*
 * Cartesian topologies (row-major: the last dimension varies fastest),
 * MPI_Dims_create, MPI_Topo_test, and the neighbours every topology gives
 * the neighborhood collectives (mpi_neighbor.c).  reorder is accepted and
 * ignored: ranks keep their order (one rank per node, every node alike).
 */
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

static int check_cart(const char *call, MPI_Comm comm, struct mcomm **c)
{
    TRY(mpi_check_comm(call, comm, c));
    if (!(*c)->cart)
        return mpi_error(comm, MPI_ERR_TOPOLOGY, call, "the communicator has no Cartesian "
                         "topology");
    return MPI_SUCCESS;
}

int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                    int reorder, MPI_Comm *comm_cart)
{
    (void)reorder;
    struct mcomm *c;
    TRY(mpi_check_comm("MPI_Cart_create", comm_old, &c));
    /* ndims 0: a zero-dimensional grid, one point (MPI-3.1 7.5.1). */
    if (ndims < 0)
        return mpi_error(comm_old, MPI_ERR_DIMS, "MPI_Cart_create", "ndims = %d", ndims);
    long prod = 1;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] <= 0)
            return mpi_error(comm_old, MPI_ERR_DIMS, "MPI_Cart_create", "dims[%d] = %d", i,
                             dims[i]);
        prod *= dims[i];
        if (prod > c->size)
            break;
    }
    if (prod > c->size)
        return mpi_error(comm_old, MPI_ERR_TOPOLOGY, "MPI_Cart_create",
                         "the grid has more points than the communicator's %d ranks", c->size);
    MPI_Comm nc;
    TRY(MPI_Comm_split(comm_old, c->rank < prod ? 0 : MPI_UNDEFINED, c->rank, &nc));
    *comm_cart = nc;
    if (nc == MPI_COMM_NULL)
        return MPI_SUCCESS;
    struct mcomm *n = mpi_comm_get(nc);
    n->dims = malloc(sizeof(int) * (size_t)(ndims + 1));
    n->periods = malloc(sizeof(int) * (size_t)(ndims + 1));
    if (!n->dims || !n->periods)
        return mpi_error(comm_old, MPI_ERR_NO_MEM, "MPI_Cart_create", "no memory");
    n->cart = true;
    n->ndims = ndims;
    for (int i = 0; i < ndims; i++) {
        n->dims[i] = dims[i];
        n->periods[i] = periods[i] != 0;
    }
    return MPI_SUCCESS;
}

static void coords_of(const struct mcomm *c, int rank, int *coords)
{
    for (int i = c->ndims - 1; i >= 0; i--) {
        coords[i] = rank % c->dims[i];
        rank /= c->dims[i];
    }
}

int MPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    struct mcomm *c;
    TRY(check_cart("MPI_Cart_coords", comm, &c));
    if (rank < 0 || rank >= c->size)
        return mpi_error(comm, MPI_ERR_RANK, "MPI_Cart_coords", "rank %d is not in 0..%d",
                         rank, c->size - 1);
    if (maxdims < c->ndims)
        return mpi_error(comm, MPI_ERR_ARG, "MPI_Cart_coords", "maxdims %d < %d dimensions",
                         maxdims, c->ndims);
    coords_of(c, rank, coords);
    return MPI_SUCCESS;
}

int MPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    struct mcomm *c;
    TRY(check_cart("MPI_Cart_rank", comm, &c));
    int r = 0;
    for (int i = 0; i < c->ndims; i++) {
        int x = coords[i];
        if (c->periods[i])
            x = ((x % c->dims[i]) + c->dims[i]) % c->dims[i];
        else if (x < 0 || x >= c->dims[i])
            return mpi_error(comm, MPI_ERR_ARG, "MPI_Cart_rank",
                             "coordinate %d of dimension %d is outside 0..%d (not periodic)", x,
                             i, c->dims[i] - 1);
        r = r * c->dims[i] + x;
    }
    *rank = r;
    return MPI_SUCCESS;
}

int MPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
    struct mcomm *c;
    TRY(check_cart("MPI_Cart_shift", comm, &c));
    if (direction < 0 || direction >= c->ndims)
        return mpi_error(comm, MPI_ERR_DIMS, "MPI_Cart_shift", "direction %d of %d dimensions",
                         direction, c->ndims);
    int co[c->ndims], me = c->rank;
    for (int k = 0; k < 2; k++) {
        coords_of(c, me, co);
        int x = co[direction] + (k ? disp : -disp), n = c->dims[direction];
        int *out = k ? rank_dest : rank_source;
        if (c->periods[direction]) {
            x = ((x % n) + n) % n;
        } else if (x < 0 || x >= n) {
            *out = MPI_PROC_NULL;
            continue;
        }
        co[direction] = x;
        MPI_Cart_rank(comm, co, out);
    }
    return MPI_SUCCESS;
}

int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    struct mcomm *c;
    TRY(check_cart("MPI_Cart_sub", comm, &c));
    int nd = c->ndims, co[nd + 1], color = 0, key = 0, kept = 0; /* + 1: never 0 long */
    int dims[nd + 1], periods[nd + 1];
    coords_of(c, c->rank, co);
    for (int i = 0; i < nd; i++) {
        if (remain_dims[i]) {
            key = key * c->dims[i] + co[i];
            dims[kept] = c->dims[i];
            periods[kept++] = c->periods[i];
        } else {
            color = color * c->dims[i] + co[i];
        }
    }
    MPI_Comm nc;
    TRY(MPI_Comm_split(comm, color, key, &nc));
    struct mcomm *n = mpi_comm_get(nc);
    /* No dimension kept: each rank its own zero-dimensional grid (MPI-3.1
     * 7.5.7), a point. */
    n->dims = malloc(sizeof(int) * (size_t)(kept + 1));
    n->periods = malloc(sizeof(int) * (size_t)(kept + 1));
    if (!n->dims || !n->periods)
        return mpi_error(comm, MPI_ERR_NO_MEM, "MPI_Cart_sub", "no memory");
    n->cart = true;
    n->ndims = kept;
    memcpy(n->dims, dims, sizeof(int) * (size_t)kept);
    memcpy(n->periods, periods, sizeof(int) * (size_t)kept);
    *newcomm = nc;
    return MPI_SUCCESS;
}

int MPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    struct mcomm *c;
    TRY(check_cart("MPI_Cart_get", comm, &c));
    if (maxdims < c->ndims)
        return mpi_error(comm, MPI_ERR_ARG, "MPI_Cart_get", "maxdims %d < %d dimensions",
                         maxdims, c->ndims);
    for (int i = 0; i < c->ndims; i++) {
        dims[i] = c->dims[i];
        periods[i] = c->periods[i];
    }
    coords_of(c, c->rank, coords);
    return MPI_SUCCESS;
}

int MPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
    struct mcomm *c;
    TRY(check_cart("MPI_Cartdim_get", comm, &c));
    *ndims = c->ndims;
    return MPI_SUCCESS;
}

int MPI_Topo_test(MPI_Comm comm, int *status)
{
    struct mcomm *c;
    TRY(mpi_check_comm("MPI_Topo_test", comm, &c));
    *status = c->cart ? MPI_CART
              : c->graph ? (c->graph->dist ? MPI_DIST_GRAPH : MPI_GRAPH)
                         : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* The mapping MPI_Cart_create makes: the identity (see the top), ranks
 * past the grid's points left out. */
int MPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[],
                 int *newrank)
{
    (void)periods;
    struct mcomm *c;
    TRY(mpi_check_comm("MPI_Cart_map", comm, &c));
    if (c->inter)
        return mpi_error(comm, MPI_ERR_COMM, "MPI_Cart_map", "an intercommunicator");
    if (ndims < 0)
        return mpi_error(comm, MPI_ERR_DIMS, "MPI_Cart_map", "ndims = %d", ndims);
    long prod = 1;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] <= 0)
            return mpi_error(comm, MPI_ERR_DIMS, "MPI_Cart_map", "dims[%d] = %d", i, dims[i]);
        prod *= dims[i];
        if (prod > c->size)
            return mpi_error(comm, MPI_ERR_DIMS, "MPI_Cart_map", "the grid has more points "
                             "than the communicator's %d ranks", c->size);
    }
    *newrank = c->rank < prod ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* The neighborhood collectives' neighbours (mpi_impl.h).  A Cartesian
 * communicator's, in and out alike: for each dimension the rank at -1,
 * then the one at +1 (MPI_Cart_shift's source and destination for a
 * displacement of 1), MPI_PROC_NULL past a non-periodic edge.  A graph's:
 * MPI_Graph_neighbors, in and out alike.  A distributed graph's: its
 * sources and its destinations. */
int mpi_topo_neighbors(const char *call, MPI_Comm comm, const struct mcomm *c, int *nin,
                       int **in, int *nout, int **out)
{
    const struct mgraph *g = c->graph;
    int ni, no;
    const int *gi = NULL, *go = NULL;
    if (c->cart) {
        ni = no = 2 * c->ndims;
    } else if (g && g->dist) {
        ni = g->indeg;
        no = g->outdeg;
        gi = g->in;
        go = g->out;
    } else if (g) {
        int first = c->rank ? g->index[c->rank - 1] : 0;
        ni = no = g->index[c->rank] - first;
        gi = go = g->edges + first;
    } else {
        return mpi_error(comm, MPI_ERR_TOPOLOGY, call, "the communicator has no topology "
                         "(Cartesian, graph or distributed graph)");
    }
    *in = malloc(sizeof(int) * (size_t)(ni + 1));
    *out = malloc(sizeof(int) * (size_t)(no + 1));
    if (!*in || !*out) {
        free(*in);
        free(*out);
        return mpi_error(comm, MPI_ERR_NO_MEM, call, "no memory for %d neighbours", ni + no);
    }
    *nin = ni;
    *nout = no;
    if (c->cart) {
        for (int d = 0; d < c->ndims; d++)
            MPI_Cart_shift(comm, d, 1, &(*in)[2 * d], &(*in)[2 * d + 1]);
        memcpy(*out, *in, sizeof(int) * (size_t)ni);
        return MPI_SUCCESS;
    }
    if (ni)
        memcpy(*in, gi, sizeof(int) * (size_t)ni);
    if (no)
        memcpy(*out, go, sizeof(int) * (size_t)no);
    return MPI_SUCCESS;
}

/* Spread nnodes over the free (zero) dimensions as evenly as possible, in
 * non-increasing order: factor it into primes, largest first, each onto
 * the free dimension with the smallest product so far. */
static int sum_ints(const int *a, int n)
{
    int t = 0;
    for (int i = 0; i < n; i++)
        t += a[i];
    return t;
}

/* <0, 0, >0 as a is lower, equal, higher than b first to last. */
static int memcmp_ints(const int *a, const int *b, int n)
{
    for (int i = 0; i < n; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

/* d^k >= n, without overflow. */
static bool power_reaches(long d, int k, long n)
{
    long p = 1;
    for (int i = 0; i < k && p < n; i++)
        p *= d;
    return p >= n;
}

/* Factors of rest into k more dimensions, each at most cap, after the
 * first `at` of cur; the best so far in best (its gap, largest minus
 * smallest, in *gap; -1: none yet).  divs: the divisors of the whole,
 * largest first.  A dimension is at least rest's k-th root (the largest
 * of what is left must be), and none is tried that cannot match the gap. */
static void balanced(const long *divs, int nd, long rest, int k, long cap, int *cur, int at,
                     int *best, long *gap)
{
    if (k == 1) {
        if (rest > cap)
            return;
        cur[at] = (int)rest;
        long g = cur[0] - rest;
        /* Ties go to the smaller sum (13 x 9 x 8 x 6, not 13 x 12 x 6 x 6),
         * then to the larger first dimensions (21 x 16 x 15, not 20 x 18 x
         * 14), the choices MPICH's test suite expects. */
        int c = g == *gap ? sum_ints(cur, at + 1) - sum_ints(best, at + 1) : 0;
        if (*gap < 0 || g < *gap ||
            (g == *gap && (c < 0 || (c == 0 && memcmp_ints(cur, best, at + 1) > 0)))) {
            *gap = g;
            memcpy(best, cur, sizeof(int) * (size_t)(at + 1));
        }
        return;
    }
    for (int i = 0; i < nd; i++) {
        long d = divs[i];
        if (d > cap || rest % d)
            continue;
        if (!power_reaches(d, k, rest))
            break;
        if (*gap >= 0 && at > 0 && cur[0] - d > *gap)
            break;
        cur[at] = (int)d;
        balanced(divs, nd, rest / d, k - 1, d, cur, at + 1, best, gap);
    }
}

int MPI_Dims_create(int nnodes, int ndims, int dims[])
{
    NEED_INIT("MPI_Dims_create");
    if (nnodes < 1 || ndims < 0)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_DIMS, "MPI_Dims_create",
                         "nnodes %d, ndims %d", nnodes, ndims);
    int fixed = 1, nfree = 0;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0)
            return mpi_error(MPI_COMM_NULL, MPI_ERR_DIMS, "MPI_Dims_create", "dims[%d] = %d",
                             i, dims[i]);
        if (dims[i])
            fixed *= dims[i];
        else
            nfree++;
    }
    if (nnodes % fixed)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_DIMS, "MPI_Dims_create",
                         "%d nodes cannot be divided by the fixed dimensions' %d", nnodes,
                         fixed);
    if (!nfree)
        return nnodes == fixed ? MPI_SUCCESS
                               : mpi_error(MPI_COMM_NULL, MPI_ERR_DIMS, "MPI_Dims_create",
                                           "the dimensions give %d, not %d", fixed, nnodes);
    /* The most even split (the smallest gap between the largest and the
     * smallest), non-increasing: 72 in two is 9 x 8 (a greedy spread of
     * prime factors gave 12 x 6). */
    long n = nnodes / fixed, *divs = malloc(sizeof(long) * 2 * 1500);
    int nd = 0, v[nfree], cur[nfree];
    if (!divs)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Dims_create", "no memory");
    /* Divisors, largest first: the big ones, then the small ones' pairs. */
    int nsmall = 0;
    long small[1500];
    for (long d = 1; d * d <= n; d++)
        if (n % d == 0)
            small[nsmall++] = d;
    for (int i = 0; i < nsmall; i++)
        divs[nd++] = n / small[i];
    for (int i = nsmall - 1; i >= 0; i--)
        if (small[i] != n / small[i])
            divs[nd++] = small[i];
    long gap = -1;
    balanced(divs, nd, n, nfree, n, cur, 0, v, &gap);
    free(divs);
    for (int i = 0, k = 0; i < ndims; i++)
        if (!dims[i])
            dims[i] = v[k++];
    return MPI_SUCCESS;
}
