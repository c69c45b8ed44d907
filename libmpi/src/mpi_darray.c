/*
 * Distributed array datatypes (MPI-3.1 4.1.4): the part of a global
 * ndims-dimensional array that one process of a process grid holds, as
 * HPF lays it out: each dimension block, cyclic(k) or not distributed.
 *
 * Each dimension gives this process a list of runs of global indices
 * (start, length): one for a block (or none), one every psize*k for
 * cyclic(k).  The type is built from the innermost dimension out: the
 * runs of a dimension are an hindexed type over the type of the dimensions
 * inside it, that type resized to one whole row of them, so consecutive
 * indices of a run lie one row apart.  The type map so lists the
 * elements in the local array's order (each dimension's indices
 * increasing), and the result is resized to the whole global array (lower
 * bound 0), as the standard defines.  The process grid is row-major
 * whatever the array's order (as Cartesian topologies are).
 */
#include <stdlib.h>

#include "mpi_impl.h"

static const char *const call = "MPI_Type_create_darray";

/* The runs of dimension d's global indices that coord holds: their starts
 * and lengths in st[] and len[] (room for all of them), how many returned;
 * -1 after raising an error for bad arguments. */
static int runs(int d, int gsize, int distrib, int darg, int psize, int coord, int *st,
                int *len)
{
    int n = 0;
    switch (distrib) {
    case MPI_DISTRIBUTE_NONE:
        if (psize != 1) {
            mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, call,
                      "dimension %d is not distributed (MPI_DISTRIBUTE_NONE) but has %d "
                      "processes: it must have 1", d, psize);
            return -1;
        }
        st[0] = 0, len[0] = gsize;
        return 1;
    case MPI_DISTRIBUTE_BLOCK: {
        /* The default block: the array spread as evenly as ceil allows. */
        long b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (gsize + psize - 1) / psize : darg;
        if (b <= 0 || b * psize < gsize) {
            mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, call,
                      "dimension %d: blocks of %d on %d processes do not hold its %d "
                      "elements", d, darg, psize, gsize);
            return -1;
        }
        long s = coord * b;
        if (s < gsize) {
            st[0] = (int)s;
            len[0] = (int)(gsize - s < b ? gsize - s : b);
            n = 1;
        }
        return n;
    }
    case MPI_DISTRIBUTE_CYCLIC: {
        long k = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
        if (k <= 0) {
            mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, call, "dimension %d: cyclic(%d)", d, darg);
            return -1;
        }
        for (long s = coord * k; s < gsize; s += k * psize) {
            st[n] = (int)s;
            len[n++] = (int)(gsize - s < k ? gsize - s : k);
        }
        return n;
    }
    }
    mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, call, "dimension %d: distribution %d is not "
              "MPI_DISTRIBUTE_BLOCK, _CYCLIC or _NONE", d, distrib);
    return -1;
}

static int check_args(int size, int rank, int ndims, const int gsizes[], const int psizes[],
                      int order)
{
    if (size < 1 || rank < 0 || rank >= size || ndims < 1 ||
        (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN))
        return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, call,
                         "size %d, rank %d, ndims %d, order %d", size, rank, ndims, order);
    long procs = 1;
    for (int d = 0; d < ndims; d++) {
        if (gsizes[d] < 1 || psizes[d] < 1)
            return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, call,
                             "dimension %d: global size %d on %d processes", d, gsizes[d],
                             psizes[d]);
        procs *= psizes[d];
        if (procs > size)
            break;
    }
    if (procs != size)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, call,
                         "the process grid's sizes do not multiply to %d", size);
    return MPI_SUCCESS;
}

/* Record how it was made: size, rank, ndims, the four arrays, order. */
static int record(MPI_Datatype t, int size, int rank, int ndims, const int gsizes[],
                  const int distribs[], const int dargs[], const int psizes[], int order,
                  MPI_Datatype oldtype)
{
    int ni = 4 * ndims + 4;
    int *ints = malloc(sizeof(int) * (size_t)ni);
    if (!ints) {
        MPI_Type_free(&t);
        return mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, call, "no memory");
    }
    ints[0] = size, ints[1] = rank, ints[2] = ndims;
    for (int d = 0; d < ndims; d++) {
        ints[3 + d] = gsizes[d];
        ints[3 + ndims + d] = distribs[d];
        ints[3 + 2 * ndims + d] = dargs[d];
        ints[3 + 3 * ndims + d] = psizes[d];
    }
    ints[3 + 4 * ndims] = order;
    int rc = mpi_type_record(t, MPI_COMBINER_DARRAY, ni, ints, 0, NULL, 1, &oldtype);
    free(ints);
    return rc;
}

int MPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[],
                           const int array_of_distribs[], const int array_of_dargs[],
                           const int array_of_psizes[], int order, MPI_Datatype oldtype,
                           MPI_Datatype *newtype)
{
    struct mtype *o;
    TRY(mpi_check_type_any(call, oldtype, &o));
    TRY(check_args(size, rank, ndims, array_of_gsizes, array_of_psizes, order));
    /* Room for the most runs a dimension gives: one for a block, one per
     * psize*k indices for cyclic(k) (a bad k is refused by runs()). */
    long maxr = 1;
    for (int d = 0; d < ndims; d++)
        if (array_of_distribs[d] == MPI_DISTRIBUTE_CYCLIC) {
            long k = array_of_dargs[d] == MPI_DISTRIBUTE_DFLT_DARG || array_of_dargs[d] <= 0
                         ? 1 : array_of_dargs[d];
            long r = (array_of_gsizes[d] + k * array_of_psizes[d] - 1) / (k * array_of_psizes[d]);
            if (r > maxr)
                maxr = r;
        }
    int *st = malloc(sizeof(int) * (size_t)maxr), *len = malloc(sizeof(int) * (size_t)maxr);
    MPI_Aint *disp = malloc(sizeof(MPI_Aint) * (size_t)maxr);
    if (!st || !len || !disp) {
        free(st), free(len), free(disp);
        return mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, call, "no memory");
    }
    /* This process's coordinates: row-major, the last dimension fastest. */
    int rest = rank, rc = MPI_SUCCESS;
    int *coord = malloc(sizeof(int) * (size_t)ndims);
    if (!coord) {
        free(st), free(len), free(disp);
        return mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, call, "no memory");
    }
    for (int d = ndims - 1; d >= 0; d--) {
        coord[d] = rest % array_of_psizes[d];
        rest /= array_of_psizes[d];
    }
    /* t: the dimensions done so far (oldtype before the first, which is
     * not ours to free). */
    MPI_Datatype t = oldtype;
    long row = mpi_extent(o);   /* bytes of one index of the next dimension */
    for (int k = 0; k < ndims && !rc; k++) {
        int d = order == MPI_ORDER_FORTRAN ? k : ndims - 1 - k;
        int n = runs(d, array_of_gsizes[d], array_of_distribs[d], array_of_dargs[d],
                     array_of_psizes[d], coord[d], st, len);
        if (n < 0) {
            rc = MPI_ERR_ARG;
            break;
        }
        for (int i = 0; i < n; i++)
            disp[i] = (MPI_Aint)st[i] * row;
        MPI_Datatype rowt = t, next = MPI_DATATYPE_NULL;
        if (k > 0)
            rc = MPI_Type_create_resized(t, 0, row, &rowt);
        if (!rc)
            rc = MPI_Type_create_hindexed(n, len, disp, rowt, &next);
        if (rowt != t)
            MPI_Type_free(&rowt);
        if (t != oldtype)
            MPI_Type_free(&t);
        t = rc ? oldtype : next;
        row *= array_of_gsizes[d];
    }
    free(st), free(len), free(disp), free(coord);
    if (rc) {
        if (t != oldtype)
            MPI_Type_free(&t);
        return rc;
    }
    rc = MPI_Type_create_resized(t, 0, row, newtype);
    MPI_Type_free(&t);
    if (rc)
        return rc;
    /* What it was made of, for MPI_Type_get_contents: not the steps above. */
    return record(*newtype, size, rank, ndims, array_of_gsizes, array_of_distribs,
                  array_of_dargs, array_of_psizes, order, oldtype);
}
