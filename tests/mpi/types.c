/* Derived datatypes: contiguous, vector, hvector, indexed, indexed_block,
 * hindexed, struct (with MPI_Get_address and MPI_BOTTOM), resized; their
 * size, extent, true extent; sent one type, received as another with the
 * same signature; Get_count / Get_elements; Pack / Unpack / Pack_size.
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

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    extents();
    traffic();
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (t_rank == 0)
        printf("types ok on %d ranks\n", t_size);
    OK(MPI_Finalize());
    return 0;
}
