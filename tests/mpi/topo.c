/* Process topologies beyond Cartesian, and the neighborhood collectives.
 *
 * 1. A graph (MPI_Graph_create): a ring with chords; what Graphdims_get,
 *    Graph_get, Graph_neighbors(_count), Topo_test and a Comm_dup give back.
 * 2. A distributed graph with different in and out neighbours (repeated
 *    edges and edges to oneself among them), made with
 *    MPI_Dist_graph_create_adjacent and with MPI_Dist_graph_create from
 *    edges other ranks give: the same neighbours and weights both ways;
 *    unweighted graphs and MPI_WEIGHTS_EMPTY.
 * 3. Every neighborhood collective, blocking and nonblocking (those all
 *    open at once), on 2-D Cartesian communicators (periodic, not, mixed),
 *    on the graph and on the distributed graph, against the values each
 *    rank works out itself from the neighbour lists it works out itself.
 * 4. Errors under MPI_ERRORS_RETURN.
 *
 * Prints "topo ok on N ranks" on rank 0 when every check passed (a failed
 * one aborts the job). */
#include <stdbool.h>

#include "mpitest.h"

#define MAXN 64
#define C 3 /* elements of an allgather's block */

/* A topology's neighbours as this test works them out, and for in-slot i
 * which of its sender's out-blocks arrives there (srck). */
struct nb {
    const char *name;
    MPI_Comm comm;
    int nin, nout, in[MAXN], out[MAXN], srck[MAXN];
};

/* ---- the distributed graph: out(r) = r+1, r+3, r itself if even, and
 * r+1 again from rank 0 ---- */
static int dg_out(int r, int n, int *out, int *w)
{
    int k = 0;
    out[k++] = (r + 1) % n;
    out[k++] = (r + 3) % n;
    if (r % 2 == 0)
        out[k++] = r;
    if (r == 0)
        out[k++] = 1 % n;
    for (int i = 0; w && i < k; i++)
        w[i] = 100 * r + i + 1;
    return k;
}

/* In-neighbours: every edge to me, by sender, then by its out order. */
static int dg_in(int me, int n, int *in, int *w)
{
    int k = 0;
    for (int r = 0; r < n; r++) {
        int out[8], ow[8], no = dg_out(r, n, out, ow);
        for (int j = 0; j < no; j++)
            if (out[j] == me) {
                in[k] = r;
                if (w)
                    w[k] = ow[j];
                k++;
            }
    }
    return k;
}

/* ---- the graph: i+1, i-1, and i+n/2 for even n >= 4 ---- */
static int gr_nb(int i, int n, int *nb)
{
    int k = 0;
    nb[k++] = (i + 1) % n;
    nb[k++] = (i - 1 + n) % n;
    if (n % 2 == 0 && n >= 4)
        nb[k++] = (i + n / 2) % n;
    return k;
}

/* A graph's in-slot i from s: the m-th of s's edges to me pairs with my
 * m-th from s. */
static void pair_slots(struct nb *t, int (*out_of)(int, int, int *, int *))
{
    for (int i = 0; i < t->nin; i++) {
        int s = t->in[i], m = 0, out[MAXN], no = out_of(s, t_size, out, NULL);
        for (int j = 0; j < i; j++)
            m += t->in[j] == s;
        t->srck[i] = -1;
        for (int k = 0; k < no; k++)
            if (out[k] == t_rank && m-- == 0) {
                t->srck[i] = k;
                break;
            }
        CHECK(t->srck[i] >= 0, "%s: no edge %d -> %d", t->name, s, t_rank);
    }
}

static int gr_out(int r, int n, int *out, int *w)
{
    (void)w;
    return gr_nb(r, n, out);
}

/* ---- Cartesian: row-major coordinates, -1 then +1 per dimension ---- */
static void cart_nb(struct nb *t, const int *dims, const int *periods)
{
    int co[2] = {t_rank / dims[1], t_rank % dims[1]};
    t->nin = t->nout = 4;
    for (int d = 0; d < 2; d++)
        for (int s = 0; s < 2; s++) {
            int c[2] = {co[0], co[1]};
            c[d] += s ? 1 : -1;
            int r;
            if (c[d] < 0 || c[d] >= dims[d]) {
                if (!periods[d]) {
                    r = MPI_PROC_NULL;
                    goto set;
                }
                c[d] = (c[d] + dims[d]) % dims[d];
            }
            r = c[0] * dims[1] + c[1];
        set:
            t->in[2 * d + s] = t->out[2 * d + s] = r;
            /* From my -1 neighbour comes what it sent its +1 one. */
            t->srck[2 * d + s] = 2 * d + 1 - s;
        }
}

/* ---- values ---- */
static int v_all(int r, int j) { return r * 10000 + 7700 + j; }
static int v_blk(int r, int k, int j) { return r * 10000 + k * 100 + j + 1; }
static int sc_v(int r) { return 1 + r % 3; }               /* allgatherv's count */
static int sc_a(int r, int k) { return (r + k) % 3; }      /* alltoallv's counts */

/* Buffers of the five calls. */
struct bufs {
    int sag[C], rag[MAXN * C];
    int sagv[3], ragv[MAXN * 4], rcv[MAXN], rdv[MAXN];
    int sa2a[MAXN * 2], ra2a[MAXN * 2];
    int sa2av[MAXN * 4], ra2av[MAXN * 4], scv[MAXN], sdv[MAXN], rcav[MAXN], rdav[MAXN];
    int sw[MAXN * 4], rw[MAXN * 2], swc[MAXN], rwc[MAXN];
    MPI_Aint swd[MAXN], rwd[MAXN];
    MPI_Datatype swt[MAXN], rwt[MAXN];
};

static MPI_Datatype vec2, con2; /* two ints two apart; two ints together */

static void fill_bufs(const struct nb *t, struct bufs *b)
{
    memset(b->rag, 0xff, sizeof b->rag);
    memset(b->ragv, 0xff, sizeof b->ragv);
    memset(b->ra2a, 0xff, sizeof b->ra2a);
    memset(b->ra2av, 0xff, sizeof b->ra2av);
    memset(b->rw, 0xff, sizeof b->rw);
    for (int j = 0; j < C; j++)
        b->sag[j] = v_all(t_rank, j);
    for (int j = 0; j < sc_v(t_rank); j++)
        b->sagv[j] = v_all(t_rank, j);
    /* allgatherv: blocks from the end backwards, one int apart */
    for (int i = 0, at = MAXN * 4; i < t->nin; i++) {
        b->rcv[i] = t->in[i] == MPI_PROC_NULL ? 1 : sc_v(t->in[i]);
        at -= b->rcv[i] + 1;
        b->rdv[i] = at;
    }
    for (int k = 0; k < t->nout; k++)
        for (int j = 0; j < 2; j++)
            b->sa2a[2 * k + j] = v_blk(t_rank, k, j);
    /* alltoallv: send blocks backwards, packed; receive blocks forwards,
     * one apart */
    for (int k = 0, at = MAXN * 4; k < t->nout; k++) {
        b->scv[k] = sc_a(t_rank, k);
        at -= b->scv[k];
        b->sdv[k] = at;
        for (int j = 0; j < b->scv[k]; j++)
            b->sa2av[at + j] = v_blk(t_rank, k, j);
    }
    for (int i = 0, at = 0; i < t->nin; i++) {
        b->rcav[i] = t->in[i] == MPI_PROC_NULL ? 2 : sc_a(t->in[i], t->srck[i]);
        b->rdav[i] = at;
        at += b->rcav[i] + 1;
    }
    /* alltoallw: odd blocks go as one vec2 (ints 0 and 2 of 4), even as
     * two ints; odd slots come as one con2, even as two ints */
    for (int k = 0; k < t->nout; k++) {
        int *p = b->sw + 4 * k;
        b->swd[k] = (MPI_Aint)(4 * k * sizeof(int));
        b->swt[k] = k % 2 ? vec2 : MPI_INT;
        b->swc[k] = k % 2 ? 1 : 2;
        p[0] = v_blk(t_rank, k, 0);
        p[k % 2 ? 2 : 1] = v_blk(t_rank, k, 1);
        if (k % 2)
            p[1] = -7;  /* the hole: never sent */
    }
    for (int i = 0; i < t->nin; i++) {
        b->rwd[i] = (MPI_Aint)(2 * (t->nin - 1 - i) * sizeof(int));
        b->rwt[i] = i % 2 ? con2 : MPI_INT;
        b->rwc[i] = i % 2 ? 1 : 2;
    }
}

static void verify(const struct nb *t, const struct bufs *b, const char *how)
{
    for (int i = 0; i < t->nin; i++) {
        int s = t->in[i], k = t->srck[i];
        bool none = s == MPI_PROC_NULL;
        for (int j = 0; j < C; j++)
            CHECK(b->rag[i * C + j] == (none ? -1 : v_all(s, j)),
                  "%s %s allgather: slot %d[%d] = %d from %d", how, t->name, i, j,
                  b->rag[i * C + j], s);
        for (int j = 0; j < b->rcv[i]; j++)
            CHECK(b->ragv[b->rdv[i] + j] == (none ? -1 : v_all(s, j)),
                  "%s %s allgatherv: slot %d[%d] = %d from %d", how, t->name, i, j,
                  b->ragv[b->rdv[i] + j], s);
        CHECK(b->ragv[b->rdv[i] + b->rcv[i]] == -1, "%s %s allgatherv: gap written", how,
              t->name);
        for (int j = 0; j < 2; j++)
            CHECK(b->ra2a[2 * i + j] == (none ? -1 : v_blk(s, k, j)),
                  "%s %s alltoall: slot %d[%d] = %d from %d block %d", how, t->name, i, j,
                  b->ra2a[2 * i + j], s, k);
        for (int j = 0; j <= b->rcav[i]; j++)
            CHECK(b->ra2av[b->rdav[i] + j] == (none || j == b->rcav[i] ? -1 : v_blk(s, k, j)),
                  "%s %s alltoallv: slot %d[%d] = %d from %d block %d", how, t->name, i, j,
                  b->ra2av[b->rdav[i] + j], s, k);
        const int *w = b->rw + 2 * (t->nin - 1 - i);
        for (int j = 0; j < 2; j++)
            CHECK(w[j] == (none ? -1 : v_blk(s, k, j)),
                  "%s %s alltoallw: slot %d[%d] = %d from %d block %d", how, t->name, i, j,
                  w[j], s, k);
    }
}

static void collectives(const struct nb *t)
{
    static struct bufs b;
    MPI_Comm c = t->comm;
    fill_bufs(t, &b);
    OK(MPI_Neighbor_allgather(b.sag, C, MPI_INT, b.rag, C, MPI_INT, c));
    OK(MPI_Neighbor_allgatherv(b.sagv, sc_v(t_rank), MPI_INT, b.ragv, b.rcv, b.rdv, MPI_INT, c));
    OK(MPI_Neighbor_alltoall(b.sa2a, 2, MPI_INT, b.ra2a, 2, MPI_INT, c));
    OK(MPI_Neighbor_alltoallv(b.sa2av, b.scv, b.sdv, MPI_INT, b.ra2av, b.rcav, b.rdav, MPI_INT,
                              c));
    OK(MPI_Neighbor_alltoallw(b.sw, b.swc, b.swd, b.swt, b.rw, b.rwc, b.rwd, b.rwt, c));
    verify(t, &b, "blocking");

    /* All five open at once, with point-to-point traffic on the same
     * communicator beside them (it must not meet theirs). */
    fill_bufs(t, &b);
    MPI_Request r[7];
    int ps = 4242 + t_rank, pr = -1, n;
    OK(MPI_Comm_size(c, &n));
    int me;
    OK(MPI_Comm_rank(c, &me));
    OK(MPI_Irecv(&pr, 1, MPI_INT, (me + n - 1) % n, 0, c, &r[5]));
    OK(MPI_Ineighbor_alltoallw(b.sw, b.swc, b.swd, b.swt, b.rw, b.rwc, b.rwd, b.rwt, c, &r[4]));
    OK(MPI_Ineighbor_allgather(b.sag, C, MPI_INT, b.rag, C, MPI_INT, c, &r[0]));
    OK(MPI_Ineighbor_alltoall(b.sa2a, 2, MPI_INT, b.ra2a, 2, MPI_INT, c, &r[2]));
    OK(MPI_Isend(&ps, 1, MPI_INT, (me + 1) % n, 0, c, &r[6]));
    OK(MPI_Ineighbor_allgatherv(b.sagv, sc_v(t_rank), MPI_INT, b.ragv, b.rcv, b.rdv, MPI_INT, c,
                                &r[1]));
    OK(MPI_Ineighbor_alltoallv(b.sa2av, b.scv, b.sdv, MPI_INT, b.ra2av, b.rcav, b.rdav,
                               MPI_INT, c, &r[3]));
    OK(MPI_Waitall(7, r, MPI_STATUSES_IGNORE));
    verify(t, &b, "nonblocking");
    /* (Every communicator here keeps MPI_COMM_WORLD's ranks.) */
    CHECK(pr == 4242 + (me + n - 1) % n, "point to point beside: %d", pr);
}

/* ---- 1: the graph ---- */
static void graph(void)
{
    int n = t_size, index[MAXN], edges[3 * MAXN], ne = 0;
    for (int i = 0; i < n; i++) {
        ne += gr_nb(i, n, edges + ne);
        index[i] = ne;
    }
    MPI_Comm g, d;
    OK(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 1, &g));
    CHECK(g != MPI_COMM_NULL, "no graph communicator");
    int st, nn, nedges, gi[MAXN], ge[3 * MAXN], cnt, nb[8], mine[8];
    OK(MPI_Topo_test(g, &st));
    CHECK(st == MPI_GRAPH, "Topo_test %d", st);
    OK(MPI_Comm_dup(g, &d));
    for (int pass = 0; pass < 2; pass++) {
        MPI_Comm x = pass ? d : g;
        OK(MPI_Topo_test(x, &st));
        CHECK(st == MPI_GRAPH, "Topo_test %d (dup %d)", st, pass);
        OK(MPI_Graphdims_get(x, &nn, &nedges));
        CHECK(nn == n && nedges == ne, "Graphdims_get %d %d", nn, nedges);
        OK(MPI_Graph_get(x, MAXN, 3 * MAXN, gi, ge));
        CHECK(!memcmp(gi, index, sizeof(int) * (size_t)n), "Graph_get index");
        CHECK(!memcmp(ge, edges, sizeof(int) * (size_t)ne), "Graph_get edges");
        for (int r = 0; r < n; r++) {
            int k = gr_nb(r, n, mine);
            OK(MPI_Graph_neighbors_count(x, r, &cnt));
            CHECK(cnt == k, "Graph_neighbors_count(%d) %d, not %d", r, cnt, k);
            OK(MPI_Graph_neighbors(x, r, 8, nb));
            CHECK(!memcmp(nb, mine, sizeof(int) * (size_t)k), "Graph_neighbors(%d)", r);
        }
    }
    int nr;
    OK(MPI_Graph_map(MPI_COMM_WORLD, n, index, edges, &nr));
    CHECK(nr == t_rank, "Graph_map %d", nr);
    struct nb t = {.name = "graph", .comm = d};
    t.nin = t.nout = gr_nb(t_rank, n, t.in);
    memcpy(t.out, t.in, sizeof t.in);
    pair_slots(&t, gr_out);
    collectives(&t);
    OK(MPI_Comm_free(&d));
    OK(MPI_Comm_free(&g));

    /* Fewer nodes than ranks: the last is left out. */
    if (n > 1) {
        int i2[MAXN], e2[1] = {0};
        for (int i = 0; i < n - 1; i++)
            i2[i] = 0;
        OK(MPI_Graph_create(MPI_COMM_WORLD, n - 1, i2, e2, 0, &g));
        CHECK((g == MPI_COMM_NULL) == (t_rank == n - 1), "Graph_create of %d nodes", n - 1);
        if (g != MPI_COMM_NULL) {
            OK(MPI_Graph_neighbors_count(g, t_rank, &cnt));
            CHECK(cnt == 0, "an edgeless node has %d neighbours", cnt);
            OK(MPI_Comm_free(&g));
        }
    }
}

/* ---- 2: distributed graphs ---- */
static int cmp_pair(const void *a, const void *b)
{
    const int *x = a, *y = b;
    return x[0] != y[0] ? x[0] - y[0] : x[1] - y[1];
}

/* Neighbours and weights as sorted (rank, weight) pairs. */
static void sorted(int n, const int *r, const int *w, int *pairs)
{
    for (int i = 0; i < n; i++) {
        pairs[2 * i] = r[i];
        pairs[2 * i + 1] = w ? w[i] : 0;
    }
    qsort(pairs, (size_t)n, 2 * sizeof(int), cmp_pair);
}

static void dist(void)
{
    int n = t_size, in[MAXN], inw[MAXN], out[8], outw[8];
    int nin = dg_in(t_rank, n, in, inw), nout = dg_out(t_rank, n, out, outw);
    MPI_Comm a, g, d;
    OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, nin, in, inw, nout, out, outw,
                                      MPI_INFO_NULL, 0, &a));
    int st, ki, ko, w, gin[MAXN], ginw[MAXN], gout[MAXN], goutw[MAXN];
    OK(MPI_Topo_test(a, &st));
    CHECK(st == MPI_DIST_GRAPH, "Topo_test %d", st);
    OK(MPI_Comm_dup(a, &d));
    for (int pass = 0; pass < 2; pass++) {
        MPI_Comm x = pass ? d : a;
        OK(MPI_Dist_graph_neighbors_count(x, &ki, &ko, &w));
        CHECK(ki == nin && ko == nout && w, "neighbors_count %d %d %d (dup %d)", ki, ko, w,
              pass);
        OK(MPI_Dist_graph_neighbors(x, MAXN, gin, ginw, MAXN, gout, goutw));
        CHECK(!memcmp(gin, in, sizeof(int) * (size_t)nin) &&
              !memcmp(ginw, inw, sizeof(int) * (size_t)nin), "adjacent: sources (dup %d)", pass);
        CHECK(!memcmp(gout, out, sizeof(int) * (size_t)nout) &&
              !memcmp(goutw, outw, sizeof(int) * (size_t)nout), "adjacent: destinations");
    }
    struct nb t = {.name = "dist graph", .comm = d, .nin = nin, .nout = nout};
    memcpy(t.in, in, sizeof(int) * (size_t)nin);
    memcpy(t.out, out, sizeof(int) * (size_t)nout);
    pair_slots(&t, dg_out);
    collectives(&t);
    OK(MPI_Comm_free(&d));

    /* The same graph from edges other ranks give: rank r gives source
     * r+1's edges but the last, and source r+2's last. */
    int s1 = (t_rank + 1) % n, s2 = (t_rank + 2) % n, o1[8], w1[8], o2[8], w2[8];
    int n1 = dg_out(s1, n, o1, w1), n2 = dg_out(s2, n, o2, w2);
    int srcs[2] = {s1, s2}, degs[2] = {n1 - 1, 1}, dsts[8], ws[8];
    memcpy(dsts, o1, sizeof(int) * (size_t)(n1 - 1));
    memcpy(ws, w1, sizeof(int) * (size_t)(n1 - 1));
    dsts[n1 - 1] = o2[n2 - 1];
    ws[n1 - 1] = w2[n2 - 1];
    OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 2, srcs, degs, dsts, ws, MPI_INFO_NULL, 1, &g));
    OK(MPI_Dist_graph_neighbors_count(g, &ki, &ko, &w));
    CHECK(ki == nin && ko == nout && w, "general: neighbors_count %d %d %d", ki, ko, w);
    OK(MPI_Dist_graph_neighbors(g, MAXN, gin, ginw, MAXN, gout, goutw));
    int p1[2 * MAXN], p2[2 * MAXN];
    sorted(nin, in, inw, p1);
    sorted(nin, gin, ginw, p2);
    CHECK(!memcmp(p1, p2, sizeof(int) * 2 * (size_t)nin), "general: other sources");
    sorted(nout, out, outw, p1);
    sorted(nout, gout, goutw, p2);
    CHECK(!memcmp(p1, p2, sizeof(int) * 2 * (size_t)nout), "general: other destinations");
    /* Its own order (unspecified) still pairs the blocks: an allgather's
     * come from the sources it lists. */
    int sb[C], rb[MAXN * C];
    for (int j = 0; j < C; j++)
        sb[j] = v_all(t_rank, j);
    OK(MPI_Neighbor_allgather(sb, C, MPI_INT, rb, C, MPI_INT, g));
    for (int i = 0; i < nin; i++)
        for (int j = 0; j < C; j++)
            CHECK(rb[i * C + j] == v_all(gin[i], j), "general: allgather slot %d", i);
    OK(MPI_Comm_free(&g));
    OK(MPI_Comm_free(&a));

    /* Unweighted, both ways: the flag is false, weights arguments may be
     * MPI_UNWEIGHTED. */
    OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, nin, in, MPI_UNWEIGHTED, nout, out,
                                      MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &a));
    OK(MPI_Dist_graph_neighbors_count(a, &ki, &ko, &w));
    CHECK(ki == nin && ko == nout && !w, "unweighted adjacent: %d %d %d", ki, ko, w);
    OK(MPI_Dist_graph_neighbors(a, MAXN, gin, MPI_UNWEIGHTED, MAXN, gout, MPI_UNWEIGHTED));
    CHECK(!memcmp(gin, in, sizeof(int) * (size_t)nin), "unweighted adjacent: sources");
    OK(MPI_Comm_free(&a));
    OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 2, srcs, degs, dsts, MPI_UNWEIGHTED,
                             MPI_INFO_NULL, 0, &g));
    OK(MPI_Dist_graph_neighbors_count(g, &ki, &ko, &w));
    CHECK(ki == nin && ko == nout && !w, "unweighted general: %d %d %d", ki, ko, w);
    OK(MPI_Comm_free(&g));

    /* A star from rank 0 alone; the others give no edges, with
     * MPI_WEIGHTS_EMPTY. */
    int star[MAXN], sw[MAXN], zero = 0, all = n;
    for (int i = 0; i < n; i++) {
        star[i] = i;
        sw[i] = 50 + i;
    }
    if (t_rank == 0)
        OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &zero, &all, star, sw, MPI_INFO_NULL, 0,
                                 &g));
    else
        OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 0, NULL, NULL, NULL, MPI_WEIGHTS_EMPTY,
                                 MPI_INFO_NULL, 0, &g));
    OK(MPI_Dist_graph_neighbors_count(g, &ki, &ko, &w));
    CHECK(ki == 1 && ko == (t_rank ? 0 : n) && w, "star: %d %d %d", ki, ko, w);
    OK(MPI_Dist_graph_neighbors(g, 1, gin, ginw, MAXN, gout, goutw));
    CHECK(gin[0] == 0 && ginw[0] == 50 + t_rank, "star: source %d weight %d", gin[0], ginw[0]);
    OK(MPI_Comm_free(&g));
}

/* ---- 3: Cartesian ---- */
static void cart(const int *periods, const char *name)
{
    int dims[2] = {0, 0};
    OK(MPI_Dims_create(t_size, 2, dims));
    MPI_Comm c;
    OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &c));
    int nr;
    OK(MPI_Cart_map(MPI_COMM_WORLD, 2, dims, periods, &nr));
    CHECK(nr == t_rank, "Cart_map %d", nr);
    struct nb t = {.name = name, .comm = c};
    cart_nb(&t, dims, periods);
    collectives(&t);
    OK(MPI_Comm_free(&c));
}

/* A zero-dimensional grid: one point, rank 0; no neighbours. */
static void cart0(void)
{
    MPI_Comm c;
    OK(MPI_Cart_create(MPI_COMM_WORLD, 0, NULL, NULL, 0, &c));
    CHECK((c == MPI_COMM_NULL) == (t_rank != 0), "0-D Cart_create");
    int nr;
    OK(MPI_Cart_map(MPI_COMM_WORLD, 0, NULL, NULL, &nr));
    CHECK(nr == (t_rank ? MPI_UNDEFINED : 0), "0-D Cart_map %d", nr);
    if (c == MPI_COMM_NULL)
        return;
    int st, nd = -1, size, x = 5, y = -1;
    OK(MPI_Topo_test(c, &st));
    OK(MPI_Cartdim_get(c, &nd));
    OK(MPI_Comm_size(c, &size));
    CHECK(st == MPI_CART && nd == 0 && size == 1, "0-D: %d %d %d", st, nd, size);
    OK(MPI_Neighbor_allgather(&x, 1, MPI_INT, &y, 1, MPI_INT, c));
    CHECK(y == -1, "0-D: a neighbour wrote %d", y);
    OK(MPI_Comm_free(&c));
}

/* ---- 4: errors ---- */
static void errors(void)
{
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int index[2] = {1, 2}, edges[2] = {1, 2}, cls, rc;
    MPI_Comm g = MPI_COMM_NULL;
    int nn = t_size >= 2 ? 2 : 1;
    edges[0] = nn; /* not a node */
    rc = MPI_Graph_create(MPI_COMM_WORLD, nn, index, edges, 0, &g);
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && (cls == MPI_ERR_TOPOLOGY || cls == MPI_ERR_ARG),
          "Graph_create with an edge to %d: %d", nn, rc);
    rc = MPI_Graph_create(MPI_COMM_WORLD, t_size + 1, index, edges, 0, &g);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "Graph_create of %d nodes: %d", t_size + 1, rc);
    int src = t_size;
    rc = MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &src, MPI_UNWEIGHTED, 0, NULL,
                                        MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g);
    CHECK(rc != MPI_SUCCESS, "Dist_graph_create_adjacent from rank %d", src);
    int deg = -1;
    rc = MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &t_rank, &deg, NULL, MPI_UNWEIGHTED,
                               MPI_INFO_NULL, 0, &g);
    CHECK(rc != MPI_SUCCESS, "Dist_graph_create with a degree of -1");
    /* Calls of the wrong topology, and none. */
    int x[4], cnt;
    rc = MPI_Graph_neighbors_count(MPI_COMM_WORLD, 0, &cnt);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TOPOLOGY, "Graph_neighbors_count on world: %d", rc);
    rc = MPI_Dist_graph_neighbors_count(MPI_COMM_WORLD, &x[0], &x[1], &x[2]);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TOPOLOGY, "Dist_graph_neighbors_count on world: %d", rc);
    rc = MPI_Neighbor_allgather(x, 1, MPI_INT, x + 1, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TOPOLOGY, "Neighbor_allgather on world: %d", rc);
    int dims[1] = {t_size}, per[1] = {1};
    OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, per, 0, &g));
    rc = MPI_Graphdims_get(g, &x[0], &x[1]);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TOPOLOGY, "Graphdims_get on a Cartesian communicator: %d", rc);
    OK(MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN));
    rc = MPI_Neighbor_allgather(MPI_IN_PLACE, 1, MPI_INT, x, 1, MPI_INT, g);
    CHECK(rc != MPI_SUCCESS, "Neighbor_allgather in place");
    OK(MPI_Comm_free(&g));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    CHECK(t_size <= MAXN / 4, "at most %d ranks", MAXN / 4);
    OK(MPI_Type_vector(2, 1, 2, MPI_INT, &vec2));
    OK(MPI_Type_commit(&vec2));
    OK(MPI_Type_contiguous(2, MPI_INT, &con2));
    OK(MPI_Type_commit(&con2));
    graph();
    dist();
    int per[2] = {1, 1}, non[2] = {0, 0}, mix[2] = {0, 1};
    cart(per, "periodic 2-D");
    cart(non, "non-periodic 2-D");
    cart(mix, "mixed 2-D");
    cart0();
    errors();
    OK(MPI_Type_free(&vec2));
    OK(MPI_Type_free(&con2));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (t_rank == 0)
        printf("topo ok on %d ranks\n", t_size);
    OK(MPI_Finalize());
    return 0;
}
