/*
 * Groups: ordered sets of the job's ranks (by their MPI_COMM_WORLD rank).
 * A communicator holds one reference to its group; MPI_Group_free drops the
 * program's.  The table is bounded (MAX_GROUPS).
 */
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

#define MAX_GROUPS 4096
static struct mgroup groups[MAX_GROUPS]; /* [0] null, [1] MPI_GROUP_EMPTY */

struct mgroup *mpi_group_get(MPI_Group g)
{
    if (H_KIND(g) != K_GROUP || H_IDX(g) <= 0 || H_IDX(g) >= MAX_GROUPS)
        return NULL;
    struct mgroup *p = &groups[H_IDX(g)];
    if (H_IDX(g) == 1)
        p->in_use = true; /* MPI_GROUP_EMPTY: always there */
    return p->in_use ? p : NULL;
}

MPI_Group mpi_group_new(int size, const int *world)
{
    if (size == 0)
        return MPI_GROUP_EMPTY;
    for (int i = 2; i < MAX_GROUPS; i++)
        if (!groups[i].in_use) {
            int *w = malloc(sizeof(int) * (size_t)size);
            if (!w)
                return MPI_GROUP_NULL;
            memcpy(w, world, sizeof(int) * (size_t)size);
            groups[i] = (struct mgroup){.in_use = true, .refs = 1, .size = size, .world = w};
            return H_MAKE(K_GROUP, i);
        }
    return MPI_GROUP_NULL;
}

void mpi_group_ref(MPI_Group g)
{
    struct mgroup *p = mpi_group_get(g);
    if (p && H_IDX(g) > 1)
        p->refs++;
}

void mpi_group_unref(MPI_Group g)
{
    struct mgroup *p = mpi_group_get(g);
    if (!p || H_IDX(g) <= 1 || --p->refs > 0)
        return;
    free(p->world);
    memset(p, 0, sizeof *p);
}

int mpi_group_rank_of(const struct mgroup *g, int world_rank)
{
    for (int i = 0; i < g->size; i++)
        if (g->world[i] == world_rank)
            return i;
    return MPI_UNDEFINED;
}

static int check_group(const char *call, MPI_Group g, struct mgroup **out)
{
    NEED_INIT(call);
    *out = mpi_group_get(g);
    if (!*out)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_GROUP, call, "%#x is not a group", (unsigned)g);
    return MPI_SUCCESS;
}

static int made(const char *call, MPI_Group g, MPI_Group *newgroup)
{
    if (g == MPI_GROUP_NULL)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, call, "no group left (%d at most)",
                         MAX_GROUPS - 2);
    *newgroup = g;
    return MPI_SUCCESS;
}

int MPI_Group_size(MPI_Group group, int *size)
{
    struct mgroup *g;
    TRY(check_group("MPI_Group_size", group, &g));
    *size = g->size;
    return MPI_SUCCESS;
}

int MPI_Group_rank(MPI_Group group, int *rank)
{
    struct mgroup *g;
    TRY(check_group("MPI_Group_rank", group, &g));
    *rank = mpi_group_rank_of(g, mpi.wrank);
    return MPI_SUCCESS;
}

static int check_ranks(const char *call, const struct mgroup *g, int n, const int ranks[],
                       bool *seen)
{
    if (n < 0 || n > g->size)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, call, "n = %d for a group of %d", n,
                         g->size);
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= g->size)
            return mpi_error(MPI_COMM_NULL, MPI_ERR_RANK, call,
                             "rank %d is not in the group of %d", ranks[i], g->size);
        if (seen[ranks[i]])
            return mpi_error(MPI_COMM_NULL, MPI_ERR_RANK, call, "rank %d given twice",
                             ranks[i]);
        seen[ranks[i]] = true;
    }
    return MPI_SUCCESS;
}

static int incl_excl(const char *call, MPI_Group group, int n, const int ranks[], bool excl,
                     MPI_Group *newgroup)
{
    struct mgroup *g;
    TRY(check_group(call, group, &g));
    bool *seen = calloc((size_t)g->size + 1, 1);
    int *w = malloc(sizeof(int) * ((size_t)g->size + 1));
    if (!seen || !w) {
        free(seen);
        free(w);
        return mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, call, "no memory");
    }
    int rc = check_ranks(call, g, n, ranks, seen), k = 0;
    if (!rc) {
        if (excl) {
            for (int i = 0; i < g->size; i++)
                if (!seen[i])
                    w[k++] = g->world[i];
        } else {
            for (int i = 0; i < n; i++)
                w[k++] = g->world[ranks[i]];
        }
        rc = made(call, mpi_group_new(k, w), newgroup);
    }
    free(seen);
    free(w);
    return rc;
}

int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    return incl_excl("MPI_Group_incl", group, n, ranks, false, newgroup);
}

int MPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    return incl_excl("MPI_Group_excl", group, n, ranks, true, newgroup);
}

/* Ranges (first, last, stride) to a list of ranks. */
static int expand_ranges(const char *call, const struct mgroup *g, int n, int ranges[][3],
                         int **out, int *count)
{
    int total = 0;
    for (int i = 0; i < n; i++) {
        int f = ranges[i][0], l = ranges[i][1], s = ranges[i][2];
        if (s == 0 || (s > 0 && f > l) || (s < 0 && f < l))
            return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, call, "range %d %d %d is empty or bad",
                             f, l, s);
        total += (l - f) / s + 1;
        if (total > g->size)
            return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, call, "ranges name more than %d ranks",
                             g->size);
    }
    int *r = malloc(sizeof(int) * ((size_t)total + 1)), k = 0;
    if (!r)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, call, "no memory");
    for (int i = 0; i < n; i++)
        for (int x = ranges[i][0]; ranges[i][2] > 0 ? x <= ranges[i][1] : x >= ranges[i][1];
             x += ranges[i][2])
            r[k++] = x;
    *out = r;
    *count = k;
    return MPI_SUCCESS;
}

static int range_op(const char *call, MPI_Group group, int n, int ranges[][3], bool excl,
                    MPI_Group *newgroup)
{
    struct mgroup *g;
    TRY(check_group(call, group, &g));
    int *r = NULL, k = 0;
    TRY(expand_ranges(call, g, n, ranges, &r, &k));
    int rc = incl_excl(call, group, k, r, excl, newgroup);
    free(r);
    return rc;
}

int MPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return range_op("MPI_Group_range_incl", group, n, ranges, false, newgroup);
}

int MPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return range_op("MPI_Group_range_excl", group, n, ranges, true, newgroup);
}

/* union: g1 then g2's members not in g1; intersection: g1's members in g2;
 * difference: g1's members not in g2 (MPI-3.1 6.3.2). */
static int set_op(const char *call, MPI_Group g1h, MPI_Group g2h, int which, MPI_Group *newgroup)
{
    struct mgroup *g1, *g2;
    TRY(check_group(call, g1h, &g1));
    TRY(check_group(call, g2h, &g2));
    int *w = malloc(sizeof(int) * ((size_t)g1->size + (size_t)g2->size + 1)), k = 0;
    if (!w)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, call, "no memory");
    for (int i = 0; i < g1->size; i++) {
        bool in2 = mpi_group_rank_of(g2, g1->world[i]) != MPI_UNDEFINED;
        if (which == 0 || (which == 1 && in2) || (which == 2 && !in2))
            w[k++] = g1->world[i];
    }
    if (which == 0)
        for (int i = 0; i < g2->size; i++)
            if (mpi_group_rank_of(g1, g2->world[i]) == MPI_UNDEFINED)
                w[k++] = g2->world[i];
    int rc = made(call, mpi_group_new(k, w), newgroup);
    free(w);
    return rc;
}

int MPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return set_op("MPI_Group_union", group1, group2, 0, newgroup);
}

int MPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return set_op("MPI_Group_intersection", group1, group2, 1, newgroup);
}

int MPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return set_op("MPI_Group_difference", group1, group2, 2, newgroup);
}

int MPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                              int ranks2[])
{
    struct mgroup *g1, *g2;
    TRY(check_group("MPI_Group_translate_ranks", group1, &g1));
    TRY(check_group("MPI_Group_translate_ranks", group2, &g2));
    for (int i = 0; i < n; i++) {
        if (ranks1[i] == MPI_PROC_NULL) {
            ranks2[i] = MPI_PROC_NULL;
            continue;
        }
        if (ranks1[i] < 0 || ranks1[i] >= g1->size)
            return mpi_error(MPI_COMM_NULL, MPI_ERR_RANK, "MPI_Group_translate_ranks",
                             "rank %d is not in the group of %d", ranks1[i], g1->size);
        ranks2[i] = mpi_group_rank_of(g2, g1->world[ranks1[i]]);
    }
    return MPI_SUCCESS;
}

int MPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
    struct mgroup *g1, *g2;
    TRY(check_group("MPI_Group_compare", group1, &g1));
    TRY(check_group("MPI_Group_compare", group2, &g2));
    if (g1->size != g2->size) {
        *result = MPI_UNEQUAL;
        return MPI_SUCCESS;
    }
    bool same_order = true, same_set = true;
    for (int i = 0; i < g1->size; i++) {
        same_order &= g1->world[i] == g2->world[i];
        same_set &= mpi_group_rank_of(g2, g1->world[i]) != MPI_UNDEFINED;
    }
    *result = same_order ? MPI_IDENT : same_set ? MPI_SIMILAR : MPI_UNEQUAL;
    return MPI_SUCCESS;
}

int MPI_Group_free(MPI_Group *group)
{
    struct mgroup *g;
    TRY(check_group("MPI_Group_free", *group, &g));
    mpi_group_unref(*group);
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}
