/* Derived datatypes: contiguous, vector, hvector, indexed, indexed_block,
 * hindexed, struct (with MPI_Get_address and MPI_BOTTOM), resized; their
 * size, extent, true extent; sent one type, received as another with the
 * same signature; Get_count / Get_elements; Pack / Unpack / Pack_size;
 * the value-index pairs as the C structs MPI defines them to be.
 * Needs 2 ranks or more.  Prints "types ok on N ranks". */
#include <stddef.h>

#include "mpitest.h"

struct particle {
    double x[3];
    int id;
    char tag;
};

static void extents(void)
{
    MPI_Datatype v, hv, idx, st, rs;
    MPI_Aint lb, ext, tlb, text;
    int sz;
    OK(MPI_Type_vector(4, 2, 5, MPI_DOUBLE, &v));
    OK(MPI_Type_size(v, &sz));
    OK(MPI_Type_get_extent(v, &lb, &ext));
    CHECK(sz == 64 && lb == 0 && ext == (3 * 5 + 2) * 8, "vector size %d extent %ld", sz, ext);
    OK(MPI_Type_create_hvector(3, 1, -16, MPI_INT, &hv));
    OK(MPI_Type_get_extent(hv, &lb, &ext));
    OK(MPI_Type_get_true_extent(hv, &tlb, &text));
    CHECK(lb == -32 && ext == 36 && tlb == -32 && text == 36, "negative stride %ld %ld", lb, ext);
    int bl[3] = {1, 2, 3}, dp[3] = {6, 0, 2};
    OK(MPI_Type_indexed(3, bl, dp, MPI_SHORT, &idx));
    OK(MPI_Type_size(idx, &sz));
    OK(MPI_Type_get_extent(idx, &lb, &ext));
    CHECK(sz == 12 && lb == 0 && ext == 14, "indexed %d %ld %ld", sz, lb, ext);
    /* A struct's extent is padded to its alignment, like C's. */
    int sbl[3] = {3, 1, 1};
    MPI_Aint sdp[3] = {offsetof(struct particle, x), offsetof(struct particle, id),
                       offsetof(struct particle, tag)};
    MPI_Datatype sty[3] = {MPI_DOUBLE, MPI_INT, MPI_CHAR};
    OK(MPI_Type_create_struct(3, sbl, sdp, sty, &st));
    OK(MPI_Type_size(st, &sz));
    OK(MPI_Type_get_extent(st, &lb, &ext));
    CHECK(sz == 29 && ext == (MPI_Aint)sizeof(struct particle), "struct %d %ld", sz, ext);
    OK(MPI_Type_create_resized(MPI_INT, -4, 16, &rs));
    OK(MPI_Type_get_extent(rs, &lb, &ext));
    OK(MPI_Type_get_true_extent(rs, &tlb, &text));
    CHECK(lb == -4 && ext == 16 && tlb == 0 && text == 4, "resized");
    MPI_Datatype *all[] = {&v, &hv, &idx, &st, &rs};
    for (int i = 0; i < 5; i++)
        OK(MPI_Type_free(all[i]));
    CHECK(v == MPI_DATATYPE_NULL, "Type_free");
}

static void traffic(void)
{
    int peer = t_rank ^ 1;
    if (peer >= t_size)
        return;
    /* 1. A column of a 30x30 matrix (vector) into a contiguous row. */
    double m[30][30], col[30];
    for (int i = 0; i < 30; i++)
        for (int j = 0; j < 30; j++)
            m[i][j] = t_rank * 10000 + i * 100 + j;
    MPI_Datatype column;
    OK(MPI_Type_vector(30, 1, 30, MPI_DOUBLE, &column));
    OK(MPI_Type_commit(&column));
    MPI_Status st;
    OK(MPI_Sendrecv(&m[0][7], 1, column, peer, 1, col, 30, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD,
                    &st));
    for (int i = 0; i < 30; i++)
        CHECK(col[i] == peer * 10000 + i * 100 + 7, "column [%d]", i);
    CHECK(t_count(&st, MPI_DOUBLE) == 30, "count");
    /* and back the other way: a contiguous row into a column */
    double m2[30][30];
    for (int i = 0; i < 30; i++)
        for (int j = 0; j < 30; j++)
            m2[i][j] = -1;
    OK(MPI_Sendrecv(col, 30, MPI_DOUBLE, peer, 2, &m2[0][3], 1, column, peer, 2,
                    MPI_COMM_WORLD, &st));
    for (int i = 0; i < 30; i++)
        for (int j = 0; j < 30; j++)
            CHECK(m2[i][j] == (j == 3 ? t_rank * 10000 + i * 100 + 7 : -1), "into column");
    CHECK(t_count(&st, column) == 1, "count in columns %d", t_count(&st, column));
    /* 2. An array of structs, big enough for rendezvous, nonblocking. */
    enum { NP = 2000 };   /* 80 KB: above the eager limit */
    struct particle *p = malloc(sizeof *p * NP), *q = malloc(sizeof *q * NP);
    int sbl[3] = {3, 1, 1};
    MPI_Aint sdp[3] = {offsetof(struct particle, x), offsetof(struct particle, id),
                       offsetof(struct particle, tag)};
    MPI_Datatype sty[3] = {MPI_DOUBLE, MPI_INT, MPI_CHAR}, pt;
    OK(MPI_Type_create_struct(3, sbl, sdp, sty, &pt));
    OK(MPI_Type_commit(&pt));
    for (int i = 0; i < NP; i++) {
        p[i] = (struct particle){{i, t_rank, -i}, i * 3 + t_rank, (char)('a' + i % 26)};
        memset(&q[i], 0x55, sizeof q[i]);
    }
    MPI_Request rq[2];
    OK(MPI_Irecv(q, NP, pt, peer, 3, MPI_COMM_WORLD, &rq[0]));
    OK(MPI_Isend(p, NP, pt, peer, 3, MPI_COMM_WORLD, &rq[1]));
    MPI_Status sts[2];
    OK(MPI_Waitall(2, rq, sts));
    for (int i = 0; i < NP; i++)
        CHECK(q[i].x[0] == i && q[i].x[1] == peer && q[i].x[2] == -i &&
                  q[i].id == i * 3 + peer && q[i].tag == 'a' + i % 26,
              "particle %d", i);
    int elems;
    OK(MPI_Get_elements(&sts[0], pt, &elems));
    CHECK(elems == NP * 5 && t_count(&sts[0], pt) == NP, "elements %d", elems);
    /* 3. Absolute addresses with MPI_BOTTOM: an int and a double apart. */
    int a = t_rank + 5, ra = 0;
    double d = t_rank + 0.25, rd = 0;
    MPI_Aint addr[2];
    OK(MPI_Get_address(&a, &addr[0]));
    OK(MPI_Get_address(&d, &addr[1]));
    int one[2] = {1, 1};
    MPI_Datatype bt[2] = {MPI_INT, MPI_DOUBLE}, abs_s, abs_r;
    OK(MPI_Type_create_struct(2, one, addr, bt, &abs_s));
    OK(MPI_Type_commit(&abs_s));
    OK(MPI_Get_address(&ra, &addr[0]));
    OK(MPI_Get_address(&rd, &addr[1]));
    OK(MPI_Type_create_struct(2, one, addr, bt, &abs_r));
    OK(MPI_Type_commit(&abs_r));
    OK(MPI_Sendrecv(MPI_BOTTOM, 1, abs_s, peer, 4, MPI_BOTTOM, 1, abs_r, peer, 4,
                    MPI_COMM_WORLD, &st));
    CHECK(ra == peer + 5 && rd == peer + 0.25, "MPI_BOTTOM %d %g", ra, rd);
    /* MPI_Aint_diff/_add: the displacement between two addresses, and back. */
    int pair[2];
    MPI_Aint p0, p1;
    OK(MPI_Get_address(&pair[0], &p0));
    OK(MPI_Get_address(&pair[1], &p1));
    CHECK(MPI_Aint_diff(p1, p0) == (MPI_Aint)sizeof(int) &&
              MPI_Aint_add(p0, MPI_Aint_diff(p1, p0)) == p1,
          "MPI_Aint_diff %ld", (long)MPI_Aint_diff(p1, p0));
    /* 4. indexed, hindexed, indexed_block, resized, contiguous of vectors */
    int buf[64], out[64];
    for (int i = 0; i < 64; i++)
        buf[i] = t_rank * 100 + i;
    int bl[3] = {2, 1, 3}, dp[3] = {10, 0, 20};
    MPI_Aint hdp[3] = {40, 0, 80};
    int bdp[4] = {1, 5, 9, 13};
    MPI_Datatype ix, hx, bx, rs, cv, v2;
    OK(MPI_Type_indexed(3, bl, dp, MPI_INT, &ix));
    OK(MPI_Type_create_hindexed(3, bl, hdp, MPI_INT, &hx));
    OK(MPI_Type_create_indexed_block(4, 2, bdp, MPI_INT, &bx));
    OK(MPI_Type_create_resized(MPI_INT, 0, 8, &rs)); /* every other int */
    OK(MPI_Type_vector(2, 1, 3, MPI_INT, &v2));
    OK(MPI_Type_contiguous(3, v2, &cv));
    MPI_Datatype ts[] = {ix, hx, bx, rs, cv};
    int counts[] = {1, 1, 1, 10, 1};
    int want[5][16] = {{10, 11, 0, 20, 21, 22},
                       {10, 11, 0, 20, 21, 22},
                       {1, 2, 5, 6, 9, 10, 13, 14},
                       {0, 2, 4, 6, 8, 10, 12, 14, 16, 18},
                       {0, 3, 4, 7, 8, 11}};
    int nwant[] = {6, 6, 8, 10, 6};
    for (int k = 0; k < 5; k++) {
        OK(MPI_Type_commit(&ts[k]));
        memset(out, 0, sizeof out);
        OK(MPI_Sendrecv(buf, counts[k], ts[k], peer, 5, out, 64, MPI_INT, peer, 5,
                        MPI_COMM_WORLD, &st));
        CHECK(t_count(&st, MPI_INT) == nwant[k], "type %d count %d", k, t_count(&st, MPI_INT));
        for (int i = 0; i < nwant[k]; i++)
            CHECK(out[i] == peer * 100 + want[k][i], "type %d element %d: %d", k, i, out[i]);
        OK(MPI_Type_free(&ts[k]));
    }
    OK(MPI_Type_free(&v2));
    /* 5. Pack / Unpack */
    char packed[1000];
    int pos = 0, psize;
    OK(MPI_Pack_size(1, column, MPI_COMM_WORLD, &psize));
    CHECK(psize == 240, "pack_size %d", psize);
    OK(MPI_Pack(&a, 1, MPI_INT, packed, sizeof packed, &pos, MPI_COMM_WORLD));
    OK(MPI_Pack(&m[0][2], 1, column, packed, sizeof packed, &pos, MPI_COMM_WORLD));
    CHECK(pos == 4 + 240, "pack position %d", pos);
    OK(MPI_Sendrecv_replace(packed, pos, MPI_PACKED, peer, 6, peer, 6, MPI_COMM_WORLD, &st));
    int ua, upos = 0;
    double ucol[30];
    OK(MPI_Unpack(packed, pos, &upos, &ua, 1, MPI_INT, MPI_COMM_WORLD));
    OK(MPI_Unpack(packed, pos, &upos, ucol, 30, MPI_DOUBLE, MPI_COMM_WORLD));
    CHECK(ua == peer + 5 && ucol[29] == peer * 10000 + 29 * 100 + 2, "unpack");
    OK(MPI_Type_free(&column));
    OK(MPI_Type_free(&pt));
    OK(MPI_Type_free(&abs_s));
    OK(MPI_Type_free(&abs_r));
    free(p);
    free(q);
}

/* MPI_DOUBLE_INT and the other pairs are structs (MPI-3.1 5.9.4): their
 * size counts the value and the index, their extent is the C struct's, and
 * their padding is not data.  Seen wrong before: MPI_Type_size gave 16 for
 * MPI_DOUBLE_INT, as sizeof does, not 12. */
static void pair_traffic(int peer)
{
    /* Sent and received as pairs: the values and indices arrive, the
     * receiver's padding keeps what it had, and the count is in pairs (12
     * bytes each) and basic elements (two each). */
    enum { NPAIR = 100 };
    struct { double v; int i; } s[NPAIR], r[NPAIR];
    struct { short v; int i; } ss[NPAIR], sr[NPAIR];
    memset(s, 0, sizeof s);
    memset(ss, 0, sizeof ss);
    for (int i = 0; i < NPAIR; i++) {
        s[i].v = t_rank + i * 0.5;
        s[i].i = t_rank * 1000 + i;
        ss[i].v = (short)(t_rank * 100 + i);
        ss[i].i = -i;
    }
    memset(r, 0x5a, sizeof r);
    memset(sr, 0x5a, sizeof sr);
    MPI_Status st, st2;
    OK(MPI_Sendrecv(s, NPAIR, MPI_DOUBLE_INT, peer, 7, r, NPAIR, MPI_DOUBLE_INT, peer, 7,
                    MPI_COMM_WORLD, &st));
    OK(MPI_Sendrecv(ss, NPAIR, MPI_SHORT_INT, peer, 8, sr, NPAIR, MPI_SHORT_INT, peer, 8,
                    MPI_COMM_WORLD, &st2));
    for (int i = 0; i < NPAIR; i++) {
        const unsigned char *pad = (const unsigned char *)&r[i] + 12, *spad =
            (const unsigned char *)&sr[i] + 2;
        CHECK(r[i].v == peer + i * 0.5 && r[i].i == peer * 1000 + i, "DOUBLE_INT pair %d", i);
        CHECK(sr[i].v == peer * 100 + i && sr[i].i == -i, "SHORT_INT pair %d", i);
        CHECK(pad[0] == 0x5a && pad[3] == 0x5a && spad[0] == 0x5a && spad[1] == 0x5a,
              "padding of pair %d written: %02x %02x", i, pad[0], spad[0]);
    }
    int elems, bytes;
    OK(MPI_Get_elements(&st, MPI_DOUBLE_INT, &elems));
    OK(MPI_Get_count(&st, MPI_BYTE, &bytes));
    CHECK(t_count(&st, MPI_DOUBLE_INT) == NPAIR && elems == 2 * NPAIR && bytes == 12 * NPAIR,
          "DOUBLE_INT count %d elements %d bytes %d", t_count(&st, MPI_DOUBLE_INT), elems,
          bytes);
}

static void pair_reductions(void)
{
    /* MAXLOC over a type made of pairs: each pair taken whole. */
    MPI_Datatype two;
    OK(MPI_Type_contiguous(2, MPI_DOUBLE_INT, &two));
    OK(MPI_Type_commit(&two));
    struct { double v; int i; } mine[4] = {{t_rank, t_rank}, {-t_rank, t_rank},
                                           {1, t_rank}, {t_rank % 2, t_rank}}, best[4];
    OK(MPI_Allreduce(mine, best, 2, two, MPI_MAXLOC, MPI_COMM_WORLD));
    CHECK(best[0].v == t_size - 1 && best[0].i == t_size - 1 && best[1].v == 0 &&
              best[1].i == 0 && best[2].v == 1 && best[2].i == 0 && best[3].v == 1 &&
              best[3].i == 1,
          "MAXLOC over pairs: (%g %d) (%g %d) (%g %d) (%g %d)", best[0].v, best[0].i, best[1].v,
          best[1].i, best[2].v, best[2].i, best[3].v, best[3].i);
    OK(MPI_Type_free(&two));
    /* A pair's index with a plain int beside it is no pair: MAXLOC refuses. */
    MPI_Datatype mixed;
    int bl[2] = {1, 1};
    MPI_Aint dp[2] = {0, 12};
    MPI_Datatype ty[2] = {MPI_DOUBLE_INT, MPI_INT};
    OK(MPI_Type_create_struct(2, bl, dp, ty, &mixed));
    OK(MPI_Type_commit(&mixed));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    char in[64] = {0}, out[64];
    int rc = MPI_Allreduce(in, out, 1, mixed, MPI_MAXLOC, MPI_COMM_WORLD);
    CHECK(rc == MPI_ERR_OP, "MAXLOC on pair + int gave %d", rc);
    rc = MPI_Allreduce(in, out, 1, MPI_DOUBLE_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(rc == MPI_ERR_OP, "SUM on DOUBLE_INT gave %d", rc);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    OK(MPI_Type_free(&mixed));
}

static void pairs(void)
{
    struct { MPI_Datatype t; int size, extent, elements; const char *name; } want[] = {
        {MPI_FLOAT_INT, 8, 8, 2, "MPI_FLOAT_INT"},
        {MPI_DOUBLE_INT, 12, 16, 2, "MPI_DOUBLE_INT"},
        {MPI_LONG_INT, 12, 16, 2, "MPI_LONG_INT"},
        {MPI_SHORT_INT, 6, 8, 2, "MPI_SHORT_INT"},
        {MPI_2INT, 8, 8, 2, "MPI_2INT"},
        {MPI_LONG_DOUBLE_INT, (int)sizeof(long double) + 4, 2 * (int)sizeof(long double), 2,
         "MPI_LONG_DOUBLE_INT"},
    };
    for (unsigned k = 0; k < sizeof want / sizeof want[0]; k++) {
        int sz;
        MPI_Aint lb, ext, tlb, text;
        OK(MPI_Type_size(want[k].t, &sz));
        OK(MPI_Type_get_extent(want[k].t, &lb, &ext));
        OK(MPI_Type_get_true_extent(want[k].t, &tlb, &text));
        CHECK(sz == want[k].size && lb == 0 && ext == want[k].extent && tlb == 0 &&
                  text <= ext && text >= sz,
              "%s: size %d extent %ld true extent %ld", want[k].name, sz, (long)ext,
              (long)text);
    }
    int peer = t_rank ^ 1;
    if (peer < t_size)
        pair_traffic(peer);
    pair_reductions();
}

/* A message shorter than one element of a derived receive type fills its
 * first part in type-map order (MPI-3.1 3.2.4): 5 ints into a vector of
 * four blocks of 2 ints, 3 apart. */
static void short_into_derived(void)
{
    int to = (t_rank + 1) % t_size, from = (t_rank - 1 + t_size) % t_size;
    int out[5] = {11, 12, 13, 14, 15}, in[12];
    const int want[12] = {11, 12, -1, 13, 14, -1, 15, -1, -1, -1, -1, -1};
    MPI_Datatype v;
    MPI_Status st;
    MPI_Request rq;
    OK(MPI_Type_vector(4, 2, 3, MPI_INT, &v));
    OK(MPI_Type_commit(&v));
    for (int i = 0; i < 12; i++)
        in[i] = -1;
    OK(MPI_Irecv(in, 1, v, from, 77, MPI_COMM_WORLD, &rq));
    OK(MPI_Send(out, 5, MPI_INT, to, 77, MPI_COMM_WORLD));
    OK(MPI_Wait(&rq, &st));
    for (int i = 0; i < 12; i++)
        CHECK(in[i] == want[i], "short message into a vector: [%d] = %d, want %d", i, in[i],
              want[i]);
    int n = 0;
    OK(MPI_Get_elements(&st, v, &n));
    CHECK(n == 5, "MPI_Get_elements of 5 ints in a vector gave %d", n);
    OK(MPI_Get_count(&st, v, &n));
    CHECK(n == MPI_UNDEFINED, "MPI_Get_count of part of an element gave %d", n);
    OK(MPI_Type_free(&v));
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    extents();
    traffic();
    pairs();
    short_into_derived();
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (t_rank == 0)
        printf("types ok on %d ranks\n", t_size);
    OK(MPI_Finalize());
    return 0;
}
