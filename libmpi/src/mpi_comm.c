/*
 * Communicators: a list of the job's ranks and a context id.
 *
 * Context ids separate communicators' traffic in the match bits.  A new
 * communicator's id is agreed on by its parent's members: each contributes
 * the bit mask of ids free on it, the bitwise AND over the parent
 * (MPI_Allreduce) names the ids free everywhere, and the lowest is taken.
 * Disjoint communicators made by one call (MPI_Comm_split) share an id,
 * which is safe because no rank belongs to two of them.  The table holds
 * MAX_CONTEXTS communicators.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mpi_impl.h"

#define MASK_WORDS CTX_MASK_WORDS

static struct mcomm comms[MAX_CONTEXTS]; /* [0] null, [1] world, [2] self */
static uint32_t ctx_free[MASK_WORDS];    /* bit set: id free here */

struct mcomm *mpi_comm_get(MPI_Comm c)
{
    if (H_KIND(c) != K_COMM || H_IDX(c) <= 0 || H_IDX(c) >= MAX_CONTEXTS)
        return NULL;
    return comms[H_IDX(c)].in_use ? &comms[H_IDX(c)] : NULL;
}

int mpi_check_comm(const char *call, MPI_Comm c, struct mcomm **out)
{
    NEED_INIT(call);
    *out = mpi_comm_get(c);
    if (!*out)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_COMM, call, "%s is not a communicator",
                         c == MPI_COMM_NULL ? "MPI_COMM_NULL" : "the handle given");
    return MPI_SUCCESS;
}

static void ctx_take(int id) { ctx_free[id / 32] &= ~(1u << (id % 32)); }
static void ctx_give(int id) { ctx_free[id / 32] |= 1u << (id % 32); }

static MPI_Comm slot_new(void)
{
    for (int i = 3; i < MAX_CONTEXTS; i++)
        if (!comms[i].in_use)
            return H_MAKE(K_COMM, i);
    return MPI_COMM_NULL;
}

/* Fill a communicator of n members (world ranks) with context id ctx. */
static int fill(struct mcomm *c, int ctx, int n, const int *members, const char *name)
{
    memset(c, 0, sizeof *c);
    c->ctx = ctx;
    c->size = n;
    c->rank = MPI_UNDEFINED;
    bool identity = n == mpi.wsize;
    for (int i = 0; i < n && identity; i++)
        identity = members[i] == i;
    if (!identity) {
        c->world = malloc(sizeof(int) * (size_t)n);
        c->from_world = malloc(sizeof(int) * (size_t)mpi.wsize);
        if (!c->world || !c->from_world) {
            free(c->world);
            free(c->from_world);
            return MPI_ERR_NO_MEM;
        }
        for (int w = 0; w < mpi.wsize; w++)
            c->from_world[w] = -1;
        for (int i = 0; i < n; i++) {
            c->world[i] = members[i];
            c->from_world[members[i]] = i;
        }
    }
    for (int i = 0; i < n; i++)
        if (members[i] == mpi.wrank)
            c->rank = i;
    c->group = mpi_group_new(n, members);
    if (c->group == MPI_GROUP_NULL) {
        free(c->world);
        free(c->from_world);
        return MPI_ERR_NO_MEM;
    }
    c->errh = MPI_ERRORS_ARE_FATAL;
    snprintf(c->name, sizeof c->name, "%s", name);
    c->in_use = true;
    ctx_take(ctx);
    return MPI_SUCCESS;
}

void mpi_comm_init(void)
{
    for (int i = 0; i < MASK_WORDS; i++)
        ctx_free[i] = ~0u;
    int *all = malloc(sizeof(int) * (size_t)mpi.wsize);
    if (!all)
        mpi_fatal("MPI_Init", "no memory for MPI_COMM_WORLD's %d ranks", mpi.wsize);
    for (int i = 0; i < mpi.wsize; i++)
        all[i] = i;
    if (fill(&comms[1], 0, mpi.wsize, all, "MPI_COMM_WORLD") ||
        fill(&comms[2], 1, 1, &mpi.wrank, "MPI_COMM_SELF"))
        mpi_fatal("MPI_Init", "no memory for the predefined communicators");
    free(all);
    ctx_take(0);
    ctx_take(1);
    ctx_take(CTX_FROM_GROUP); /* no communicator's: MPI_Comm_create_from_group's agreements */
}

/* Context ids come from two halves: the blocking calls agree on ids below
 * IDUP_FIRST, MPI_Comm_idup (mpi_idup.c) on ids from it up, so an agreement
 * that may not wait never races one that does (each half's own rule keeps
 * its agreements apart). */
void mpi_ctx_free_mask(uint32_t *mask)
{
    memcpy(mask, ctx_free, sizeof ctx_free);
    memset(mask + IDUP_FIRST / 32, 0, sizeof ctx_free - IDUP_FIRST / 32 * sizeof *mask);
}

void mpi_ctx_idup_mask(uint32_t *mask)
{
    memset(mask, 0, IDUP_FIRST / 32 * sizeof *mask);
    memcpy(mask + IDUP_FIRST / 32, ctx_free + IDUP_FIRST / 32,
           sizeof ctx_free - IDUP_FIRST / 32 * sizeof *mask);
}

int mpi_ctx_lowest(const uint32_t *mask)
{
    for (int i = 0; i < MAX_CONTEXTS; i++)
        if (mask[i / 32] & (1u << (i % 32)))
            return i;
    return -1;
}

int mpi_comm_install(const char *call, MPI_Comm errcomm, int ctx, int n, const int *members,
                     MPI_Comm *newcomm)
{
    *newcomm = MPI_COMM_NULL;
    if (ctx < 0)
        return mpi_error(errcomm, MPI_ERR_INTERN, call,
                         "no context id free on every rank (%d communicators at most)",
                         MAX_CONTEXTS);
    MPI_Comm h = slot_new();
    if (h == MPI_COMM_NULL)
        return mpi_error(errcomm, MPI_ERR_INTERN, call, "all %d communicators in use",
                         MAX_CONTEXTS);
    if (fill(&comms[H_IDX(h)], ctx, n, members, "") != MPI_SUCCESS)
        return mpi_error(errcomm, MPI_ERR_NO_MEM, call, "no memory for a communicator of %d",
                         n);
    comms[H_IDX(h)].errh = mpi_comm_get(errcomm)->errh;
    mpi_errh_ref(comms[H_IDX(h)].errh);
    *newcomm = h;
    return MPI_SUCCESS;
}

int mpi_comm_make(const char *call, MPI_Comm parent, int n, const int *members,
                  MPI_Comm *newcomm)
{
    uint32_t mask[CTX_OFFER_WORDS];
    struct ctx_round round = {.key = (uint64_t)mpi_comm_get(parent)->ctx << 32};
    *newcomm = MPI_COMM_NULL;
    int id;
    do {
        mpi_ctx_offer(&round, mask);
        int rc = MPI_Allreduce(MPI_IN_PLACE, mask, CTX_OFFER_WORDS, MPI_UNSIGNED, MPI_BAND,
                               parent);
        if (rc) {
            mpi_ctx_abandon(&round);
            return rc;
        }
    } while ((id = mpi_ctx_settle(&round, mask)) == -2);
    if (!members && id >= 0)
        return MPI_SUCCESS;
    return mpi_comm_install(call, parent, id, n, members, newcomm);
}

int MPI_Comm_size(MPI_Comm comm, int *size)
{
    struct mcomm *c;
    TRY(mpi_check_comm("MPI_Comm_size", comm, &c));
    *size = c->size;
    return MPI_SUCCESS;
}

int MPI_Comm_rank(MPI_Comm comm, int *rank)
{
    struct mcomm *c;
    TRY(mpi_check_comm("MPI_Comm_rank", comm, &c));
    *rank = c->rank;
    return MPI_SUCCESS;
}

static const int *members_of(const struct mcomm *c, int **tmp)
{
    if (c->world)
        return c->world;
    *tmp = malloc(sizeof(int) * (size_t)c->size);
    if (*tmp)
        for (int i = 0; i < c->size; i++)
            (*tmp)[i] = i;
    return *tmp;
}

static void copy_topology(struct mcomm *to, const struct mcomm *from)
{
    if (from->graph)
        to->graph = mpi_graph_copy(from->graph);
    if (!from->cart)
        return;
    to->dims = malloc(sizeof(int) * (size_t)(from->ndims + 1));
    to->periods = malloc(sizeof(int) * (size_t)(from->ndims + 1));
    if (!to->dims || !to->periods) {
        free(to->dims);
        free(to->periods);
        to->dims = to->periods = NULL;
        return;
    }
    to->cart = true;
    to->ndims = from->ndims;
    memcpy(to->dims, from->dims, sizeof(int) * (size_t)from->ndims);
    memcpy(to->periods, from->periods, sizeof(int) * (size_t)from->ndims);
}

/* The duplicate gets what each keyval's copy callback says; a callback's
 * error leaves no duplicate (MPI_COMM_NULL, MPI-3.1 6.7.2). */
static int dup_attrs(MPI_Comm comm, MPI_Comm *newcomm)
{
    int rc = mpi_attrs_copy("MPI_Comm_dup", comm, *newcomm);
    if (rc) {
        MPI_Comm_free(newcomm);   /* it has no attributes left */
        *newcomm = MPI_COMM_NULL;
    }
    return rc;
}

/* What MPI_Comm_dup and MPI_Comm_idup give the new communicator besides
 * its members: the topology and the attributes (their copy callbacks). */
int mpi_comm_dup_finish(MPI_Comm comm, MPI_Comm *newcomm)
{
    copy_topology(mpi_comm_get(*newcomm), mpi_comm_get(comm));
    return dup_attrs(comm, newcomm);
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    struct mcomm *c;
    TRY(mpi_check_comm("MPI_Comm_dup", comm, &c));
    if (c->inter) {
        TRY(mpi_intercomm_dup(comm, newcomm));
        return dup_attrs(comm, newcomm);
    }
    int *tmp = NULL;
    const int *m = members_of(c, &tmp);
    if (!m)
        return mpi_error(comm, MPI_ERR_NO_MEM, "MPI_Comm_dup", "no memory");
    int rc = mpi_comm_make("MPI_Comm_dup", comm, c->size, m, newcomm);
    free(tmp);
    return rc ? rc : mpi_comm_dup_finish(comm, newcomm);
}

/* Hints (MPI-3.1 6.4.4): Tern's MPI uses none of them, so it checks the
 * info object (MPI_INFO_NULL: no hints) and keeps nothing;
 * MPI_Comm_get_info returns the hints in use: none. */
static int check_info(const char *call, MPI_Comm comm, MPI_Info info)
{
    if (info != MPI_INFO_NULL && !mpi_info_ok(info))
        return mpi_error(comm, MPI_ERR_INFO, call, "%#x is not an info object", (unsigned)info);
    return MPI_SUCCESS;
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    struct mcomm *c;
    TRY(mpi_check_comm("MPI_Comm_dup_with_info", comm, &c));
    TRY(check_info("MPI_Comm_dup_with_info", comm, info));
    return MPI_Comm_dup(comm, newcomm);
}

int MPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    struct mcomm *c;
    TRY(mpi_check_comm("MPI_Comm_set_info", comm, &c));
    return check_info("MPI_Comm_set_info", comm, info);
}

int MPI_Comm_get_info(MPI_Comm comm, MPI_Info *info)
{
    struct mcomm *c;
    TRY(mpi_check_comm("MPI_Comm_get_info", comm, &c));
    return MPI_Info_create(info);
}

struct ck {
    int color, key, rank;
};

static int by_key(const void *a, const void *b)
{
    const struct ck *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->rank - y->rank;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    struct mcomm *c;
    TRY(mpi_check_comm("MPI_Comm_split", comm, &c));
    if (c->inter)
        return mpi_intercomm_split(comm, color, key, newcomm);
    if (color < 0 && color != MPI_UNDEFINED)
        return mpi_error(comm, MPI_ERR_ARG, "MPI_Comm_split",
                         "color %d is negative (and not MPI_UNDEFINED)", color);
    int n = c->size, mine[2] = {color, key};
    int *all = malloc(sizeof(int) * 2 * (size_t)n);
    struct ck *v = malloc(sizeof *v * (size_t)n);
    int *members = malloc(sizeof(int) * (size_t)n);
    if (!all || !v || !members) {
        free(all);
        free(v);
        free(members);
        return mpi_error(comm, MPI_ERR_NO_MEM, "MPI_Comm_split", "no memory for %d ranks", n);
    }
    int rc = MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, comm);
    int k = 0;
    if (!rc && color != MPI_UNDEFINED) {
        for (int i = 0; i < n; i++)
            if (all[2 * i] == color)
                v[k++] = (struct ck){color, all[2 * i + 1], i};
        qsort(v, (size_t)k, sizeof *v, by_key);
        for (int i = 0; i < k; i++)
            members[i] = mpi_world_of(c, v[i].rank);
    }
    if (!rc)
        rc = mpi_comm_make("MPI_Comm_split", comm, k, color == MPI_UNDEFINED ? NULL : members,
                           newcomm);
    free(all);
    free(v);
    free(members);
    return rc;
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    struct mcomm *c;
    TRY(mpi_check_comm("MPI_Comm_create", comm, &c));
    struct mgroup *g = mpi_group_get(group);
    if (!g)
        return mpi_error(comm, MPI_ERR_GROUP, "MPI_Comm_create", "%#x is not a group",
                         (unsigned)group);
    int gr = mpi_group_rank_of(g, mpi.wrank);
    /* An intercommunicator's: the group is of the local group; what the
     * other group's ranks give makes the remote side (MPI-3.1 6.4.2), as
     * a split by membership in group order would. */
    if (c->inter) {
        for (int i = 0; i < g->size; i++) {
            int w = g->world[i];
            if (c->from_world ? c->from_world[w] < 0 : w >= c->size)
                return mpi_error(comm, MPI_ERR_GROUP, "MPI_Comm_create",
                                 "the group has rank %d of MPI_COMM_WORLD, which is not in "
                                 "the intercommunicator's local group", w);
        }
        return mpi_intercomm_split(comm, gr == MPI_UNDEFINED ? MPI_UNDEFINED : 0, gr, newcomm);
    }
    for (int i = 0; i < g->size; i++)
        if (mpi_rank_of(c, g->world[i]) < 0)
            return mpi_error(comm, MPI_ERR_GROUP, "MPI_Comm_create",
                             "the group has rank %d of MPI_COMM_WORLD, which is not in the "
                             "communicator", g->world[i]);
    bool in = mpi_group_rank_of(g, mpi.wrank) != MPI_UNDEFINED;
    return mpi_comm_make("MPI_Comm_create", comm, g->size, in ? g->world : NULL, newcomm);
}

/* One message of the library's own to or from world rank w, finished. */
static void engine_xfer(const char *call, bool send, int w, uint64_t bits, void *buf, size_t len)
{
    struct msg_req *r = msg_req_new(true);
    if (!r)
        mpi_fatal(call, "no engine request left");
    if (send)
        msg_isend(r, w, bits, buf, len, 0);
    else
        msg_irecv(r, w, bits, 0, buf, len);
    msg_wait(r);
    msg_req_free(r);
}

/* One round of it: the id taken (-1: none), or -2. */
static int agree_in_group_round(const char *call, const struct mgroup *g, int me,
                                uint64_t bits, uint64_t check, bool *same,
                                struct ctx_round *round)
{
    struct {
        uint64_t check;
        uint32_t mask[CTX_OFFER_WORDS];
    } mine, theirs;
    mine.check = check;
    mpi_ctx_offer(round, mine.mask);
    *same = true;
    if (me == 0) {
        for (int i = 1; i < g->size; i++) {
            engine_xfer(call, false, g->world[i], bits, &theirs, sizeof theirs);
            *same = *same && theirs.check == check;
            for (int k = 0; k < CTX_OFFER_WORDS; k++)
                mine.mask[k] &= theirs.mask[k];
        }
        /* A member whose check differs learns it: the answer's check is ~check. */
        mine.check = *same ? check : ~check;
        for (int i = 1; i < g->size; i++)
            engine_xfer(call, true, g->world[i], bits, &mine, sizeof mine);
    } else {
        engine_xfer(call, true, g->world[0], bits, &mine, sizeof mine);
        engine_xfer(call, false, g->world[0], bits, &mine, sizeof mine);
        *same = mine.check == check;
    }
    return mpi_ctx_settle(round, mine.mask);
}

int mpi_ctx_agree_in_group(const char *call, const struct mgroup *g, int me, uint64_t bits,
                           uint64_t check, bool *same)
{
    struct ctx_round round = {.key = bits};
    int id;
    do
        id = agree_in_group_round(call, g, me, bits, check, same, &round);
    while (id == -2);
    return id;
}

/* Only the group's members call it (MPI-3.1 6.4.2): they agree on a
 * context id among themselves (mpi_ctx_agree_in_group) through comm's
 * collective context with the program's tag and bit 31, which the
 * collectives' own tags (sequence number and step) leave clear. */
int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    const char *call = "MPI_Comm_create_group";
    struct mcomm *c;
    TRY(mpi_check_comm(call, comm, &c));
    struct mgroup *g = mpi_group_get(group);
    *newcomm = MPI_COMM_NULL;
    if (!g)
        return mpi_error(comm, MPI_ERR_GROUP, call, "%#x is not a group", (unsigned)group);
    TRY(mpi_check_tag(call, comm, tag, false));
    int me = mpi_group_rank_of(g, mpi.wrank);
    if (me == MPI_UNDEFINED)
        return mpi_error(comm, MPI_ERR_GROUP, call, "the calling rank is not in the group");
    for (int i = 0; i < g->size; i++)
        if (mpi_rank_of(c, g->world[i]) < 0)
            return mpi_error(comm, MPI_ERR_GROUP, call,
                             "the group has rank %d of MPI_COMM_WORLD, which is not in the "
                             "communicator", g->world[i]);
    bool same;
    int ctx = mpi_ctx_agree_in_group(call, g, me, mpi_bits(2 * c->ctx + 1,
                                                           (int)((unsigned)tag | 0x80000000u)),
                                     0, &same);
    return mpi_comm_install(call, comm, ctx, g->size, g->world, newcomm);
}

int MPI_Comm_free(MPI_Comm *comm)
{
    struct mcomm *c;
    TRY(mpi_check_comm("MPI_Comm_free", *comm, &c));
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
        return mpi_error(*comm, MPI_ERR_COMM, "MPI_Comm_free",
                         "%s cannot be freed", c->name);
    TRY(mpi_attrs_delete("MPI_Comm_free", *comm));           /* the delete callbacks, first */
    c = mpi_comm_get(*comm);
    ctx_give(c->ctx);
    if (c->inter)
        mpi_intercomm_release(c);
    /* After its last barrier no put to its entries is on the way
     * (libmsg/msg_barrier.c), so a communicator that takes the context id
     * next starts clean. */
    msg_barrier_free(c->bar);
    mpi_group_unref(c->group);
    free(c->world);
    free(c->from_world);
    free(c->dims);
    free(c->periods);
    mpi_graph_free(c->graph);
    mpi_errh_unref(c->errh);
    memset(c, 0, sizeof *c);
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

int MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    struct mcomm *a, *b;
    TRY(mpi_check_comm("MPI_Comm_compare", comm1, &a));
    TRY(mpi_check_comm("MPI_Comm_compare", comm2, &b));
    if (comm1 == comm2) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    if (a->inter || b->inter)
        return mpi_intercomm_compare(a, b, result);
    TRY(MPI_Group_compare(a->group, b->group, result));
    if (*result == MPI_IDENT)
        *result = MPI_CONGRUENT;
    return MPI_SUCCESS;
}

int MPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    struct mcomm *c;
    TRY(mpi_check_comm("MPI_Comm_group", comm, &c));
    mpi_group_ref(c->group);
    *group = c->group;
    return MPI_SUCCESS;
}

int MPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    struct mcomm *c;
    TRY(mpi_check_comm("MPI_Comm_test_inter", comm, &c));
    *flag = c->inter;
    return MPI_SUCCESS;
}

int mpi_comm_name_set(const char *call, MPI_Comm comm, const char *name, size_t len)
{
    struct mcomm *c;
    TRY(mpi_check_comm(call, comm, &c));
    size_t n = strnlen(name, len < sizeof c->name ? len : sizeof c->name - 1);
    memcpy(c->name, name, n);
    c->name[n] = 0;
    return MPI_SUCCESS;
}

int MPI_Comm_set_name(MPI_Comm comm, const char *name)
{
    return mpi_comm_name_set("MPI_Comm_set_name", comm, name, MPI_MAX_OBJECT_NAME - 1);
}

int MPI_Comm_get_name(MPI_Comm comm, char *name, int *resultlen)
{
    struct mcomm *c;
    TRY(mpi_check_comm("MPI_Comm_get_name", comm, &c));
    /* A name Fortran set may be one character longer than C's buffer holds. */
    size_t n = strnlen(c->name, MPI_MAX_OBJECT_NAME - 1);
    memcpy(name, c->name, n);
    name[n] = 0;
    *resultlen = (int)n;
    return MPI_SUCCESS;
}

/* Only the predefined attributes: their values live here. */
static int attr_tag_ub = TAG_UB, attr_host = MPI_PROC_NULL, attr_io, attr_wtime_global = 0;
static int attr_universe, attr_lastused;

int MPI_Comm_get_attr(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    struct mcomm *c;
    TRY(mpi_check_comm("MPI_Comm_get_attr", comm, &c));
    attr_io = MPI_ANY_SOURCE; /* every rank can do I/O (through yod / fyod) */
    if (keyval >= FIRST_KEYVAL)
        /* a program's own */
        return mpi_attr_get("MPI_Comm_get_attr", comm, keyval, attribute_val, flag);
    int *v = NULL;
    switch (keyval) {
    case MPI_TAG_UB: v = &attr_tag_ub; break;
    case MPI_HOST: v = &attr_host; break;
    case MPI_IO: v = &attr_io; break;
    case MPI_WTIME_IS_GLOBAL: v = &attr_wtime_global; break;
    /* No processes can be spawned: the universe is the job. */
    case MPI_UNIVERSE_SIZE: MPI_Comm_size(MPI_COMM_WORLD, &attr_universe); v = &attr_universe; break;
    case MPI_LASTUSEDCODE:
        attr_lastused = mpi_last_used_code();
        v = &attr_lastused;
        break;
    case MPI_APPNUM: *flag = 0; return MPI_SUCCESS; /* yod runs one program (SPMD) */
    default:
        return mpi_error(comm, MPI_ERR_KEYVAL, "MPI_Comm_get_attr",
                         "keyval %d was not made by MPI_Comm_create_keyval", keyval);
    }
    *(int **)attribute_val = v;
    *flag = 1;
    return MPI_SUCCESS;
}

int MPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    return MPI_Comm_get_attr(comm, keyval, attribute_val, flag);
}

/* MPI_COMM_TYPE_SHARED: the ranks that can make a shared memory region
 * together (MPI-4.0 7.4.2), which MPI_Win_allocate_shared then does
 * (mpi_win_shared.c): those of one node (TERN_MAP) whose kernel shares
 * memory between processes.  A Tern node gives each of its ranks (yod
 * -ppn) memory of its own and shares none (memfd_create answers ENOSYS),
 * so there each rank is alone; on Linux a node's ranks are together.  A
 * program without TERN_MAP is one process.  MPI_Get_processor_name still
 * names the node. */
static bool can_share_memory(void)
{
    static int known; /* 0: not asked yet; 1: yes; -1: no */
    if (!known) {
        int fd = (int)syscall(SYS_memfd_create, "tern-mpi-probe", 1u /* MFD_CLOEXEC */);
        known = fd >= 0 ? 1 : -1;
        if (fd >= 0)
            close(fd);
    }
    return known > 0;
}

/* The color of this rank's shared-memory group. */
static int shared_color(void)
{
    long nid = mpi_node_of(mpi.wrank);
    if (nid >= 0 && !can_share_memory())
        return 0x40000000 | mpi.wrank; /* alone: no other rank has this color */
    return nid < 0 ? 0 : (int)(nid & 0x3FFFFFFF);
}

#define HW_KEY "mpi_hw_resource_type"
#define HW_SHARED "mpi_shared_memory"

/* MPI-4.0 7.4.2's hardware split types.  The one resource type known is
 * the standard's "mpi_shared_memory": the ranks MPI_COMM_TYPE_SHARED
 * groups.  MPI_COMM_TYPE_HW_GUIDED with it splits so; with another type,
 * or none, every rank gets MPI_COMM_NULL.  MPI_COMM_TYPE_HW_UNGUIDED
 * splits at it when that makes communicators smaller than comm (and sets
 * the key in info to say so), else gives MPI_COMM_NULL. */
int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                        MPI_Comm *newcomm)
{
    const char *call = "MPI_Comm_split_type";
    struct mcomm *c;
    TRY(mpi_check_comm(call, comm, &c));
    if (info != MPI_INFO_NULL && !mpi_info_ok(info))
        return mpi_error(comm, MPI_ERR_INFO, call, "%#x is not an info object", (unsigned)info);
    int size = c->size;
    switch (split_type) {
    case MPI_UNDEFINED:
        return MPI_Comm_split(comm, MPI_UNDEFINED, key, newcomm);
    case MPI_COMM_TYPE_SHARED:
        return MPI_Comm_split(comm, shared_color(), key, newcomm);
    case MPI_COMM_TYPE_HW_GUIDED: {
        char v[MPI_MAX_INFO_VAL + 1] = "";
        int flag = 0;
        if (info != MPI_INFO_NULL)
            TRY(MPI_Info_get(info, HW_KEY, MPI_MAX_INFO_VAL, v, &flag));
        bool known = flag && !strcmp(v, HW_SHARED);
        return MPI_Comm_split(comm, known ? shared_color() : MPI_UNDEFINED, key, newcomm);
    }
    case MPI_COMM_TYPE_HW_UNGUIDED: {
        TRY(MPI_Comm_split(comm, shared_color(), key, newcomm));
        int n = 0;
        TRY(MPI_Comm_size(*newcomm, &n));
        if (n == size) /* the same on every rank: all share memory */
            return MPI_Comm_free(newcomm);
        if (info != MPI_INFO_NULL)
            TRY(MPI_Info_set(info, HW_KEY, HW_SHARED));
        return MPI_SUCCESS;
    }
    default:
        return mpi_error(comm, MPI_ERR_ARG, call,
                         "split type %d (MPI_COMM_TYPE_SHARED is %d, _HW_UNGUIDED %d, "
                         "_HW_GUIDED %d)",
                         split_type, MPI_COMM_TYPE_SHARED, MPI_COMM_TYPE_HW_UNGUIDED,
                         MPI_COMM_TYPE_HW_GUIDED);
    }
}
