/*
 * Graph topologies (MPI-3.1 7.5.3) and distributed graph topologies
 * (7.5.4).  reorder is accepted and ignored, as for Cartesian ones
 * (mpi_topo.c): ranks keep their order, every node being alike.
 *
 * MPI_Graph_create's graph is the same on every rank, so each keeps all of
 * it.  A distributed graph is never whole anywhere: each rank keeps only
 * its own in and out neighbours; MPI_Dist_graph_create, where a rank may
 * name edges between any two ranks, sends each edge to both its ends.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

/* The sentinels (mpi.h): what they point at is never read or written. */
static int unweighted_sentinel, weights_empty_sentinel;
int *const MPI_UNWEIGHTED = &unweighted_sentinel;
int *const MPI_WEIGHTS_EMPTY = &weights_empty_sentinel;

static int *dup_ints(const int *a, int n, bool *ok)
{
    if (!a || n <= 0)
        return NULL;
    int *p = malloc(sizeof(int) * (size_t)n);
    if (!p)
        *ok = false;
    else
        memcpy(p, a, sizeof(int) * (size_t)n);
    return p;
}

void mpi_graph_free(struct mgraph *g)
{
    if (!g)
        return;
    free(g->index);
    free(g->edges);
    free(g->in);
    free(g->inw);
    free(g->out);
    free(g->outw);
    free(g);
}

struct mgraph *mpi_graph_copy(const struct mgraph *g)
{
    struct mgraph *n = malloc(sizeof *n);
    if (!n)
        return NULL;
    bool ok = true;
    *n = *g;
    n->index = dup_ints(g->index, g->nnodes, &ok);
    n->edges = dup_ints(g->edges, g->nnodes ? g->index[g->nnodes - 1] : 0, &ok);
    n->in = dup_ints(g->in, g->indeg, &ok);
    n->inw = dup_ints(g->inw, g->indeg, &ok);
    n->out = dup_ints(g->out, g->outdeg, &ok);
    n->outw = dup_ints(g->outw, g->outdeg, &ok);
    if (!ok) {
        mpi_graph_free(n);
        return NULL;
    }
    return n;
}

/* comm_old's ranks below n, in order, as a new communicator with graph g
 * (the others get MPI_COMM_NULL and g is freed): collective on comm_old. */
static int attach(const char *call, MPI_Comm comm_old, int rank, int n, struct mgraph *g,
                  bool ok, MPI_Comm *newcomm)
{
    MPI_Comm nc;
    int rc = MPI_Comm_split(comm_old, rank < n ? 0 : MPI_UNDEFINED, rank, &nc);
    if (rc || nc == MPI_COMM_NULL) {
        mpi_graph_free(g);
        *newcomm = MPI_COMM_NULL;
        return rc;
    }
    if (!ok || !g) {
        /* The split was made (every rank takes part in it); this rank had
         * no memory for its part of the graph. */
        mpi_graph_free(g);
        MPI_Comm_free(&nc);
        *newcomm = MPI_COMM_NULL;
        return mpi_error(comm_old, MPI_ERR_NO_MEM, call, "no memory for the graph");
    }
    mpi_comm_get(nc)->graph = g;
    *newcomm = nc;
    return MPI_SUCCESS;
}

static int check_intra(const char *call, MPI_Comm comm, struct mcomm **c)
{
    TRY(mpi_check_comm(call, comm, c));
    if ((*c)->inter)
        return mpi_error(comm, MPI_ERR_COMM, call, "topologies on intercommunicators are not "
                         "defined");
    return MPI_SUCCESS;
}

/* ---- MPI_GRAPH ---- */

/* MPI_Graph_create's and MPI_Graph_map's arguments: nnodes nodes of a
 * communicator of size, index non-decreasing, every edge a node. */
static int check_graph(const char *call, MPI_Comm comm, int size, int nnodes,
                       const int index[], const int edges[])
{
    if (nnodes < 0 || nnodes > size)
        return mpi_error(comm, MPI_ERR_ARG, call, "nnodes %d is not in 0..%d (the "
                         "communicator's size)", nnodes, size);
    if (nnodes && !index)
        return mpi_error(comm, MPI_ERR_ARG, call, "index is NULL");
    for (int i = 0; i < nnodes; i++)
        if (index[i] < (i ? index[i - 1] : 0))
            return mpi_error(comm, MPI_ERR_ARG, call, "index[%d] = %d is below %s %d", i,
                             index[i], i ? "index[i-1] =" : "", i ? index[i - 1] : 0);
    int nedges = nnodes ? index[nnodes - 1] : 0;
    if (nedges && !edges)
        return mpi_error(comm, MPI_ERR_ARG, call, "edges is NULL");
    for (int k = 0; k < nedges; k++)
        if (edges[k] < 0 || edges[k] >= nnodes)
            return mpi_error(comm, MPI_ERR_TOPOLOGY, call, "edges[%d] = %d is not a node "
                             "(0..%d)", k, edges[k], nnodes - 1);
    return MPI_SUCCESS;
}

int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[],
                     int reorder, MPI_Comm *comm_graph)
{
    static const char call[] = "MPI_Graph_create";
    (void)reorder;
    struct mcomm *c;
    TRY(check_intra(call, comm_old, &c));
    TRY(check_graph(call, comm_old, c->size, nnodes, index, edges));
    struct mgraph *g = NULL;
    bool ok = true;
    if (c->rank < nnodes) {
        g = calloc(1, sizeof *g);
        if (g) {
            g->nnodes = nnodes;
            g->index = dup_ints(index, nnodes, &ok);
            g->edges = dup_ints(edges, index[nnodes - 1], &ok);
        }
    }
    return attach(call, comm_old, c->rank, nnodes, g, ok, comm_graph);
}

static int check_graph_comm(const char *call, MPI_Comm comm, struct mgraph **g)
{
    struct mcomm *c;
    TRY(mpi_check_comm(call, comm, &c));
    if (!c->graph || c->graph->dist)
        return mpi_error(comm, MPI_ERR_TOPOLOGY, call, "the communicator has no graph "
                         "topology (MPI_Graph_create's)");
    *g = c->graph;
    return MPI_SUCCESS;
}

int MPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
    struct mgraph *g = NULL;
    TRY(check_graph_comm("MPI_Graphdims_get", comm, &g));
    *nnodes = g->nnodes;
    *nedges = g->index[g->nnodes - 1];
    return MPI_SUCCESS;
}

int MPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
    struct mgraph *g = NULL;
    TRY(check_graph_comm("MPI_Graph_get", comm, &g));
    if (maxindex < 0 || maxedges < 0)
        return mpi_error(comm, MPI_ERR_ARG, "MPI_Graph_get", "maxindex %d, maxedges %d",
                         maxindex, maxedges);
    /* As much as the arrays hold (their lengths are the program's). */
    int ni = maxindex < g->nnodes ? maxindex : g->nnodes;
    int ne = g->index[g->nnodes - 1];
    ne = maxedges < ne ? maxedges : ne;
    if (ni)
        memcpy(index, g->index, sizeof(int) * (size_t)ni);
    if (ne)
        memcpy(edges, g->edges, sizeof(int) * (size_t)ne);
    return MPI_SUCCESS;
}

static int node_edges(const char *call, MPI_Comm comm, const struct mgraph *g, int rank,
                      int *first)
{
    if (rank < 0 || rank >= g->nnodes)
        return mpi_error(comm, MPI_ERR_RANK, call, "rank %d is not in 0..%d", rank,
                         g->nnodes - 1);
    *first = rank ? g->index[rank - 1] : 0;
    return MPI_SUCCESS;
}

int MPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
    struct mgraph *g = NULL;
    int first = 0;
    TRY(check_graph_comm("MPI_Graph_neighbors_count", comm, &g));
    TRY(node_edges("MPI_Graph_neighbors_count", comm, g, rank, &first));
    *nneighbors = g->index[rank] - first;
    return MPI_SUCCESS;
}

int MPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
    struct mgraph *g = NULL;
    int first = 0;
    TRY(check_graph_comm("MPI_Graph_neighbors", comm, &g));
    TRY(node_edges("MPI_Graph_neighbors", comm, g, rank, &first));
    if (maxneighbors < 0)
        return mpi_error(comm, MPI_ERR_ARG, "MPI_Graph_neighbors", "maxneighbors %d",
                         maxneighbors);
    int n = g->index[rank] - first;
    if (maxneighbors < n)
        n = maxneighbors;
    if (n)
        memcpy(neighbors, g->edges + first, sizeof(int) * (size_t)n);
    return MPI_SUCCESS;
}

/* The mapping MPI_Graph_create makes: the identity (see the top). */
int MPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[],
                  int *newrank)
{
    struct mcomm *c;
    TRY(check_intra("MPI_Graph_map", comm, &c));
    if (nnodes < 1)
        return mpi_error(comm, MPI_ERR_ARG, "MPI_Graph_map", "nnodes %d", nnodes);
    TRY(check_graph("MPI_Graph_map", comm, c->size, nnodes, index, edges));
    *newrank = c->rank < nnodes ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* ---- MPI_DIST_GRAPH ---- */

static int check_peers(const char *call, MPI_Comm comm, int size, const char *what,
                       const int *r, int n)
{
    if (n < 0)
        return mpi_error(comm, MPI_ERR_ARG, call, "%s: a degree of %d", what, n);
    if (n && !r)
        return mpi_error(comm, MPI_ERR_ARG, call, "%s is NULL", what);
    for (int i = 0; i < n; i++)
        if (r[i] < 0 || r[i] >= size)
            return mpi_error(comm, MPI_ERR_RANK, call, "%s[%d] = %d is not a rank (0..%d)",
                             what, i, r[i], size - 1);
    return MPI_SUCCESS;
}

/* Weights given for n edges: MPI_UNWEIGHTED or an array (MPI_WEIGHTS_EMPTY
 * only when there are none). */
static int check_weights(const char *call, MPI_Comm comm, const char *what, const int *w,
                         int n)
{
    if (w == MPI_UNWEIGHTED)
        return MPI_SUCCESS;
    if (n && (!w || w == MPI_WEIGHTS_EMPTY))
        return mpi_error(comm, MPI_ERR_ARG, call, "%s: %s for %d edges", what,
                         w ? "MPI_WEIGHTS_EMPTY" : "NULL", n);
    for (int i = 0; i < n; i++)
        if (w[i] < 0)
            return mpi_error(comm, MPI_ERR_ARG, call, "%s[%d] = %d (weights are "
                             "non-negative)", what, i, w[i]);
    return MPI_SUCCESS;
}

/* A distributed graph's part of this rank; weights NULL or unweighted:
 * every weight 1 (what Dist_graph_neighbors gives an unweighted graph's
 * weights is unspecified; 1 is MPI's meaning of "no weight"). */
static struct mgraph *dist_new(int indeg, const int *in, const int *inw, int outdeg,
                               const int *out, const int *outw, bool weighted, bool *ok)
{
    struct mgraph *g = calloc(1, sizeof *g);
    if (!g) {
        *ok = false;
        return NULL;
    }
    g->dist = true;
    g->weighted = weighted;
    g->indeg = indeg;
    g->outdeg = outdeg;
    g->in = dup_ints(in, indeg, ok);
    g->out = dup_ints(out, outdeg, ok);
    g->inw = indeg ? malloc(sizeof(int) * (size_t)indeg) : NULL;
    g->outw = outdeg ? malloc(sizeof(int) * (size_t)outdeg) : NULL;
    if ((indeg && !g->inw) || (outdeg && !g->outw)) {
        *ok = false;
        return g;
    }
    bool win = inw && inw != MPI_UNWEIGHTED, wout = outw && outw != MPI_UNWEIGHTED;
    for (int i = 0; i < indeg; i++)
        g->inw[i] = win ? inw[i] : 1;
    for (int i = 0; i < outdeg; i++)
        g->outw[i] = wout ? outw[i] : 1;
    return g;
}

int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                   const int sourceweights[], int outdegree,
                                   const int destinations[], const int destweights[],
                                   MPI_Info info, int reorder, MPI_Comm *comm_dist_graph)
{
    static const char call[] = "MPI_Dist_graph_create_adjacent";
    (void)info; /* no hints are used */
    (void)reorder;
    struct mcomm *c;
    TRY(check_intra(call, comm_old, &c));
    TRY(check_peers(call, comm_old, c->size, "sources", sources, indegree));
    TRY(check_peers(call, comm_old, c->size, "destinations", destinations, outdegree));
    TRY(check_weights(call, comm_old, "sourceweights", sourceweights, indegree));
    TRY(check_weights(call, comm_old, "destweights", destweights, outdegree));
    /* Weighted unless MPI_UNWEIGHTED was given (MPI-3.1 7.5.5); the
     * standard has both weight arguments be MPI_UNWEIGHTED or neither. */
    bool ok = true;
    bool weighted = sourceweights != MPI_UNWEIGHTED || destweights != MPI_UNWEIGHTED;
    struct mgraph *g = dist_new(indegree, sources, sourceweights, outdegree, destinations,
                                destweights, weighted, &ok);
    return attach(call, comm_old, c->rank, c->size, g, ok, comm_dist_graph);
}

/* An edge as it travels to one of its ends: the end's other end, the
 * weight, and which list it goes in. */
enum { E_IN, E_OUT };
struct edge_msg {
    int peer, weight, kind;
};

int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                          const int destinations[], const int weights[], MPI_Info info,
                          int reorder, MPI_Comm *comm_dist_graph)
{
    static const char call[] = "MPI_Dist_graph_create";
    (void)info;
    (void)reorder;
    struct mcomm *c;
    TRY(check_intra(call, comm_old, &c));
    TRY(check_peers(call, comm_old, c->size, "sources", sources, n));
    long nedges = 0;
    for (int i = 0; i < n; i++) {
        if (!degrees || degrees[i] < 0)
            return mpi_error(comm_old, MPI_ERR_ARG, call, "degrees[%d] = %d", i,
                             degrees ? degrees[i] : 0);
        nedges += degrees[i];
    }
    if (nedges > 0x7FFFFFFF / 3)
        return mpi_error(comm_old, MPI_ERR_ARG, call, "%ld edges", nedges);
    TRY(check_peers(call, comm_old, c->size, "destinations", destinations, (int)nedges));
    TRY(check_weights(call, comm_old, "weights", weights, (int)nedges));
    bool weighted = weights != MPI_UNWEIGHTED, wt = weighted && nedges;

    /* Every edge to both its ends, grouped by the rank it goes to: counts
     * first (an all-to-all), then the edges (an all-to-all-v), both on
     * comm_old, whose collective context keeps them apart from anything
     * else. */
    int size = c->size, me = c->rank;
    int *scount = calloc((size_t)size * 4, sizeof(int));
    struct edge_msg *sbuf = malloc(sizeof *sbuf * (size_t)(2 * nedges + 1));
    if (!scount || !sbuf) {
        free(scount);
        free(sbuf);
        return mpi_error(comm_old, MPI_ERR_NO_MEM, call, "no memory for %ld edges", nedges);
    }
    int *sdispl = scount + size, *rcount = sdispl + size, *rdispl = rcount + size;
    for (int i = 0, k = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, k++) {
            scount[sources[i]]++;
            scount[destinations[k]]++;
        }
    for (int r = 0, at = 0; r < size; r++) {
        sdispl[r] = at;
        at += scount[r];
    }
    /* In edge order, so a rank's lists keep the order the edges were given
     * in (rank by rank of the givers). */
    int *fill = malloc(sizeof(int) * (size_t)size);
    if (!fill) {
        free(scount);
        free(sbuf);
        return mpi_error(comm_old, MPI_ERR_NO_MEM, call, "no memory");
    }
    memcpy(fill, sdispl, sizeof(int) * (size_t)size);
    for (int i = 0, k = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, k++) {
            int s = sources[i], d = destinations[k], w = wt ? weights[k] : 1;
            sbuf[fill[s]++] = (struct edge_msg){d, w, E_OUT};
            sbuf[fill[d]++] = (struct edge_msg){s, w, E_IN};
        }
    free(fill);
    /* Three ints an edge: a contiguous type would do, but MPI_INT counts
     * keep this free of a datatype to make and free. */
    int rc = MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, comm_old);
    long total = 0;
    for (int r = 0; !rc && r < size; r++) {
        rdispl[r] = (int)(3 * total);
        total += rcount[r];
        scount[r] *= 3;
        sdispl[r] *= 3;
        rcount[r] *= 3;
    }
    struct edge_msg *rbuf = rc ? NULL : malloc(sizeof *rbuf * (size_t)(total + 1));
    if (!rc && !rbuf)
        mpi_fatal(call, "no memory for %ld edges (the other ranks are in the exchange)",
                  total);
    if (!rc)
        rc = MPI_Alltoallv(sbuf, scount, sdispl, MPI_INT, rbuf, rcount, rdispl, MPI_INT,
                           comm_old);
    free(scount);
    free(sbuf);
    if (rc) {
        free(rbuf);
        return rc;
    }
    int nin = 0, nout = 0;
    for (long e = 0; e < total; e++)
        *(rbuf[e].kind == E_IN ? &nin : &nout) += 1;
    int *lists = malloc(sizeof(int) * (size_t)(2 * (nin + nout) + 1));
    bool ok = lists != NULL;
    struct mgraph *g = NULL;
    if (ok) {
        int *in = lists, *inw = in + nin, *out = inw + nin, *outw = out + nout;
        int a = 0, b = 0;
        for (long e = 0; e < total; e++)
            if (rbuf[e].kind == E_IN) {
                in[a] = rbuf[e].peer;
                inw[a++] = rbuf[e].weight;
            } else {
                out[b] = rbuf[e].peer;
                outw[b++] = rbuf[e].weight;
            }
        g = dist_new(nin, in, inw, nout, out, outw, weighted, &ok);
    }
    free(lists);
    free(rbuf);
    return attach(call, comm_old, me, size, g, ok, comm_dist_graph);
}

static int check_dist_comm(const char *call, MPI_Comm comm, struct mgraph **g)
{
    struct mcomm *c;
    TRY(mpi_check_comm(call, comm, &c));
    if (!c->graph || !c->graph->dist)
        return mpi_error(comm, MPI_ERR_TOPOLOGY, call, "the communicator has no distributed "
                         "graph topology");
    *g = c->graph;
    return MPI_SUCCESS;
}

int MPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree,
                                   int *weighted)
{
    struct mgraph *g = NULL;
    TRY(check_dist_comm("MPI_Dist_graph_neighbors_count", comm, &g));
    *indegree = g->indeg;
    *outdegree = g->outdeg;
    *weighted = g->weighted;
    return MPI_SUCCESS;
}

static void copy_out(int *to, const int *from, int n, int max)
{
    if (max < n)
        n = max;
    if (to && n > 0 && to != MPI_UNWEIGHTED && to != MPI_WEIGHTS_EMPTY)
        memcpy(to, from, sizeof(int) * (size_t)n);
}

int MPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[],
                             int sourceweights[], int maxoutdegree, int destinations[],
                             int destweights[])
{
    struct mgraph *g = NULL;
    TRY(check_dist_comm("MPI_Dist_graph_neighbors", comm, &g));
    if (maxindegree < 0 || maxoutdegree < 0)
        return mpi_error(comm, MPI_ERR_ARG, "MPI_Dist_graph_neighbors",
                         "maxindegree %d, maxoutdegree %d", maxindegree, maxoutdegree);
    copy_out(sources, g->in, g->indeg, maxindegree);
    copy_out(destinations, g->out, g->outdeg, maxoutdegree);
    /* An unweighted graph's weights are not written (MPI-3.1 7.5.5: the
     * program may pass MPI_UNWEIGHTED for them). */
    if (g->weighted) {
        copy_out(sourceweights, g->inw, g->indeg, maxindegree);
        copy_out(destweights, g->outw, g->outdeg, maxoutdegree);
    }
    return MPI_SUCCESS;
}
