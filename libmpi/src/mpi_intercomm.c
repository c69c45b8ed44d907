/*
 * Intercommunicators: two disjoint groups, each rank's sends and receives
 * naming ranks of the other group (MPI-3.1 6.6).
 *
 * An intercommunicator is a communicator (mpi_comm.c) whose rank, size
 * and group are its local group's, with the remote group beside them
 * (struct mcomm's inter fields); the message engine needs nothing new,
 * since a message carries its sender's world rank and the context id.
 * The id must be free on the ranks of both groups: each group ANDs its
 * ranks' masks of free ids, the two leaders swap theirs, and each leader
 * hands the result to its group.  The leaders swap through the peer
 * communicator at MPI_Intercomm_create, through the intercommunicator's
 * own collective context afterwards (dup, merge, collectives).
 */
#include <stdlib.h>
#include <string.h>

#include "mpi_coll.h"

/* World rank of member i of c's local group. */
static int local_world(const struct mcomm *c, int i) { return c->world ? c->world[i] : i; }

/* The two leaders' swap: out (outlen bytes) goes, in (inlen) comes. */
struct swap {
    MPI_Comm peer;         /* MPI_Intercomm_create: through the peer communicator */
    int remote_leader, tag;
    struct mcomm *inter;   /* afterwards: through the intercommunicator itself */
};

/* Over an existing intercommunicator its rank 0s meet on its collective
 * context, with a tag the collectives never make (theirs, sequence number
 * and step, leave bit 31 clear). */
#define LEADER_TAG 0x80000000u
static int leaders_swap(const char *call, const struct swap *w, const void *out, long outlen,
                        void *in, long inlen)
{
    if (!w->inter)
        return MPI_Sendrecv(out, (int)outlen, MPI_BYTE, w->remote_leader, w->tag, in,
                            (int)inlen, MPI_BYTE, w->remote_leader, w->tag, w->peer,
                            MPI_STATUS_IGNORE);
    uint64_t bits = mpi_bits(2 * w->inter->ctx + 1, (int)LEADER_TAG);
    struct msg_req *r = msg_req_new(true), *s = msg_req_new(true);
    if (!r || !s)
        mpi_fatal(call, "no engine request left for the leaders' swap");
    msg_irecv(r, mpi_world_of(w->inter, 0), bits, 0, in, (uint64_t)inlen);
    msg_isend(s, mpi_world_of(w->inter, 0), bits, out, (uint64_t)outlen, 0);
    msg_wait(r);
    msg_wait(s);
    msg_req_free(r);
    msg_req_free(s);
    return MPI_SUCCESS;
}

/* Make an intercommunicator of local (an intracommunicator whose members
 * are the local group) and the remote group `remote` (world ranks, rsize),
 * with context id ctx; takes remote. */
/* An intercommunicator over local's group and the remote world ranks
 * (taken), with context id ctx; its private local communicator gets
 * priv_ctx, or (-1) one agreed over local here, a collective on it. */
static int make_inter(const char *call, MPI_Comm local, int ctx, int priv_ctx, int rsize,
                      int *remote, MPI_Comm *newcomm)
{
    struct mcomm *l = mpi_comm_get(local);
    int *members = malloc(sizeof(int) * (size_t)l->size);
    int *from_r = malloc(sizeof(int) * (size_t)mpi.wsize);
    if (!members || !from_r) {
        free(members);
        free(from_r);
        free(remote);
        return mpi_error(local, MPI_ERR_NO_MEM, call, "no memory for an intercommunicator");
    }
    for (int i = 0; i < l->size; i++)
        members[i] = local_world(l, i);
    for (int w = 0; w < mpi.wsize; w++)
        from_r[w] = -1;
    for (int i = 0; i < rsize; i++)
        from_r[remote[i]] = i;
    /* The local parts of its collectives go on a communicator of their own,
     * made after the intercommunicator has taken its id (so not that id). */
    MPI_Comm priv = MPI_COMM_NULL;
    int rc = mpi_comm_install(call, local, ctx, l->size, members, newcomm);
    int rc2 = priv_ctx >= 0
                  ? mpi_comm_install(call, local, priv_ctx, l->size, members, &priv)
                  : mpi_comm_make(call, local, l->size, members, &priv);
    free(members);
    if (rc || rc2) {
        if (priv != MPI_COMM_NULL)
            MPI_Comm_free(&priv);
        if (*newcomm != MPI_COMM_NULL)
            MPI_Comm_free(newcomm);
        free(from_r);
        free(remote);
        return rc ? rc : rc2;
    }
    struct mcomm *c = mpi_comm_get(*newcomm);
    c->inter = true;
    c->rsize = rsize;
    c->rworld = remote;
    c->from_rworld = from_r;
    c->rgroup = mpi_group_new(rsize, remote);
    c->local = priv;
    return MPI_SUCCESS;
}

/* What the leaders swap first: the group's free ids (ANDed over it), its
 * size and, for a merge, its "high" flag; then its members. */
struct side {
    uint32_t mask[CTX_OFFER_WORDS]; /* an offer (mpi_ctx.c) */
    int size, high;
};

/* Every rank of local: the other side and its members (world ranks,
 * *remote, malloc'd) come back; both = the ids free on both groups. */
static int agree_round(const char *call, MPI_Comm local, int leader, int high,
                       const struct swap *w, struct side *theirs, int **remote, uint32_t *both,
                       struct ctx_round *round)
{
    struct mcomm *l = mpi_comm_get(local);
    struct side mine = {.size = l->size, .high = high};
    *remote = NULL;
    mpi_ctx_offer(round, mine.mask);
    int rc0 = MPI_Allreduce(MPI_IN_PLACE, mine.mask, CTX_OFFER_WORDS, MPI_UNSIGNED, MPI_BAND,
                            local);
    if (rc0) {
        mpi_ctx_abandon(round);
        return rc0;
    }
    int *members = malloc(sizeof(int) * (size_t)l->size);
    if (!members)
        return mpi_error(local, MPI_ERR_NO_MEM, call, "no memory");
    for (int i = 0; i < l->size; i++)
        members[i] = local_world(l, i);
    int rc = MPI_SUCCESS;
    if (l->rank == leader)
        rc = leaders_swap(call, w, &mine, sizeof mine, theirs, sizeof *theirs);
    /* A failed swap still lets the group leave its broadcast. */
    if (rc)
        theirs->size = -1;
    int rc2 = MPI_Bcast(theirs, sizeof *theirs, MPI_BYTE, leader, local);
    if (!rc2 && theirs->size < 0)
        rc2 = rc ? rc : MPI_ERR_INTERN;
    if (!rc2) {
        *remote = malloc(sizeof(int) * (size_t)(theirs->size > 0 ? theirs->size : 1));
        if (!*remote)
            mpi_fatal(call, "no memory for a remote group of %d", theirs->size);
        if (l->rank == leader)
            rc2 = leaders_swap(call, w, members, (long)sizeof(int) * l->size, *remote,
                               (long)sizeof(int) * theirs->size);
        if (!rc2)
            rc2 = MPI_Bcast(*remote, theirs->size, MPI_INT, leader, local);
    }
    free(members);
    if (rc2) {
        mpi_ctx_abandon(round);
        free(*remote);
        *remote = NULL;
        return rc2;
    }
    for (int i = 0; i < CTX_OFFER_WORDS; i++)
        both[i] = mine.mask[i] & theirs->mask[i];
    return MPI_SUCCESS;
}

/* The rounds (mpi_ctx.c): both comes back with the one id agreed on, or
 * none (no id free on both groups).  The key is the local communicator's:
 * the two groups' keys differ, which only orders this agreement among the
 * others of each process. */
static int agree(const char *call, MPI_Comm local, int leader, int high, const struct swap *w,
                 struct side *theirs, int **remote, uint32_t *both)
{
    struct ctx_round round = {.key = (uint64_t)mpi_comm_get(local)->ctx << 32 | 1};
    uint32_t offers[CTX_OFFER_WORDS];
    int id;
    do {
        TRY(agree_round(call, local, leader, high, w, theirs, remote, offers, &round));
        id = mpi_ctx_settle(&round, offers);
        if (id == -2) {
            free(*remote);
            *remote = NULL;
        }
    } while (id == -2);
    memset(both, 0, CTX_MASK_WORDS * sizeof *both);
    if (id >= 0)
        both[id / 32] = 1u << (id % 32);
    return MPI_SUCCESS;
}

int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                         int remote_leader, int tag, MPI_Comm *newintercomm)
{
    const char *call = "MPI_Intercomm_create";
    struct mcomm *l, *p = NULL;
    TRY(mpi_check_comm(call, local_comm, &l));
    *newintercomm = MPI_COMM_NULL;
    if (l->inter)
        return mpi_error(local_comm, MPI_ERR_COMM, call,
                         "the local communicator is an intercommunicator");
    if (local_leader < 0 || local_leader >= l->size)
        return mpi_error(local_comm, MPI_ERR_RANK, call, "local leader %d is not in 0..%d",
                         local_leader, l->size - 1);
    if (l->rank == local_leader) {
        /* Only the leaders need the peer communicator (MPI-3.1 6.6.2). */
        TRY(mpi_check_comm(call, peer_comm, &p));
        TRY(mpi_check_rank(call, p, peer_comm, remote_leader, false));
        TRY(mpi_check_tag(call, peer_comm, tag, false));
        if (remote_leader == MPI_PROC_NULL)
            return mpi_error(peer_comm, MPI_ERR_RANK, call, "the remote leader is MPI_PROC_NULL");
    }
    struct swap w = {.peer = peer_comm, .remote_leader = remote_leader, .tag = tag};
    struct side theirs;
    int *remote;
    uint32_t both[CTX_MASK_WORDS];
    TRY(agree(call, local_comm, local_leader, 0, &w, &theirs, &remote, both));
    for (int i = 0; i < theirs.size; i++)
        if (mpi_rank_of(l, remote[i]) >= 0) {
            free(remote);
            return mpi_error(local_comm, MPI_ERR_COMM, call,
                             "rank %d of MPI_COMM_WORLD is in both groups", remote[i]);
        }
    return make_inter(call, local_comm, mpi_ctx_lowest(both), -1, theirs.size, remote,
                      newintercomm);
}

int mpi_intercomm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    struct mcomm *c = mpi_comm_get(comm);
    struct swap w = {.inter = c};
    struct side theirs;
    int *remote;
    uint32_t both[CTX_MASK_WORDS];
    TRY(agree("MPI_Comm_dup", c->local, 0, 0, &w, &theirs, &remote, both));
    c = mpi_comm_get(comm);
    TRY(make_inter("MPI_Comm_dup", c->local, mpi_ctx_lowest(both), -1, theirs.size, remote,
                   newcomm));
    struct mcomm *n = mpi_comm_get(*newcomm);
    mpi_errh_unref(n->errh);
    n->errh = mpi_comm_get(comm)->errh;
    mpi_errh_ref(n->errh);
    return MPI_SUCCESS;
}

int mpi_intercomm_install(MPI_Comm comm, int ctx, int priv_ctx, MPI_Comm *newcomm)
{
    struct mcomm *c = mpi_comm_get(comm);
    int *remote = malloc(sizeof(int) * (size_t)c->rsize);
    if (!remote)
        return mpi_error(comm, MPI_ERR_NO_MEM, "MPI_Comm_idup", "no memory");
    memcpy(remote, c->rworld, sizeof(int) * (size_t)c->rsize);
    TRY(make_inter("MPI_Comm_idup", c->local, ctx, priv_ctx, c->rsize, remote, newcomm));
    struct mcomm *n = mpi_comm_get(*newcomm);
    mpi_errh_unref(n->errh);
    n->errh = mpi_comm_get(comm)->errh;
    mpi_errh_ref(n->errh);
    return MPI_SUCCESS;
}

int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    const char *call = "MPI_Intercomm_merge";
    struct mcomm *c;
    TRY(mpi_check_comm(call, intercomm, &c));
    *newintracomm = MPI_COMM_NULL;
    if (!c->inter)
        return mpi_error(intercomm, MPI_ERR_COMM, call, "not an intercommunicator");
    struct swap w = {.inter = c};
    struct side theirs;
    int *remote;
    uint32_t both[CTX_MASK_WORDS];
    high = high != 0;
    TRY(agree(call, c->local, 0, high, &w, &theirs, &remote, both));
    c = mpi_comm_get(intercomm);
    /* The group that said "high" goes second; when both said the same, the
     * group whose leader is the lower world rank goes first. */
    bool first = high != theirs.high ? !high : local_world(c, 0) < remote[0];
    int n = c->size + theirs.size;
    int *members = malloc(sizeof(int) * (size_t)n);
    if (!members) {
        free(remote);
        return mpi_error(intercomm, MPI_ERR_NO_MEM, call, "no memory for %d members", n);
    }
    int *mine = members + (first ? 0 : theirs.size), *other = members + (first ? c->size : 0);
    for (int i = 0; i < c->size; i++)
        mine[i] = local_world(c, i);
    memcpy(other, remote, sizeof(int) * (size_t)theirs.size);
    free(remote);
    int rc = mpi_comm_install(call, intercomm, mpi_ctx_lowest(both), n, members, newintracomm);
    free(members);
    return rc;
}

/* MPI_Comm_split of an intercommunicator (MPI-3.1 6.4.2): for each color,
 * an intercommunicator between this group's ranks of that color and the
 * other group's, each side ordered by key then rank; MPI_COMM_NULL where
 * either side has none.  All share one context id (no rank is in two). */
static int by_key_rank(const void *a, const void *b)
{
    const int *x = a, *y = b;   /* color, key, rank */
    if (x[1] != y[1])
        return x[1] < y[1] ? -1 : 1;
    return x[2] - y[2];
}

int mpi_intercomm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    const char *call = "MPI_Comm_split";
    struct mcomm *c = mpi_comm_get(comm);
    *newcomm = MPI_COMM_NULL;
    MPI_Comm sub;
    TRY(MPI_Comm_split(c->local, color, key, &sub));
    /* Every rank's color and key, the other group's. */
    c = mpi_comm_get(comm);
    int rn = c->rsize, mine[2] = {color, key};
    int *theirs = malloc(sizeof(int) * 3 * (size_t)rn), *pairs = malloc(sizeof(int) * 2 * (size_t)rn);
    if (!theirs || !pairs) {
        free(theirs);
        free(pairs);
        return mpi_error(comm, MPI_ERR_NO_MEM, call, "no memory");
    }
    int rc = MPI_Allgather(mine, 2, MPI_INT, pairs, 2, MPI_INT, comm);
    struct swap w = {.inter = mpi_comm_get(comm)};
    struct side other;
    int *remote = NULL;
    uint32_t both[CTX_MASK_WORDS];
    if (!rc)
        rc = agree(call, mpi_comm_get(comm)->local, 0, 0, &w, &other, &remote, both);
    int k = 0;
    if (!rc && color != MPI_UNDEFINED) {
        for (int i = 0; i < rn; i++)
            if (pairs[2 * i] == color) {
                theirs[3 * k] = color;
                theirs[3 * k + 1] = pairs[2 * i + 1];
                theirs[3 * k + 2] = i;
                k++;
            }
        qsort(theirs, (size_t)k, 3 * sizeof(int), by_key_rank);
    }
    free(pairs);
    if (!rc && sub != MPI_COMM_NULL && k > 0) {
        int *rw = malloc(sizeof(int) * (size_t)k);
        if (!rw)
            rc = mpi_error(comm, MPI_ERR_NO_MEM, call, "no memory");
        for (int i = 0; !rc && i < k; i++)
            rw[i] = remote[theirs[3 * i + 2]];
        if (!rc)
            rc = make_inter(call, sub, mpi_ctx_lowest(both), -1, k, rw, newcomm);
    }
    free(theirs);
    free(remote);
    if (sub != MPI_COMM_NULL)
        MPI_Comm_free(&sub);
    return rc;
}

int MPI_Comm_remote_size(MPI_Comm comm, int *size)
{
    struct mcomm *c;
    TRY(mpi_check_comm("MPI_Comm_remote_size", comm, &c));
    if (!c->inter)
        return mpi_error(comm, MPI_ERR_COMM, "MPI_Comm_remote_size",
                         "not an intercommunicator");
    *size = c->rsize;
    return MPI_SUCCESS;
}

int MPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    struct mcomm *c;
    TRY(mpi_check_comm("MPI_Comm_remote_group", comm, &c));
    if (!c->inter)
        return mpi_error(comm, MPI_ERR_COMM, "MPI_Comm_remote_group",
                         "not an intercommunicator");
    mpi_group_ref(c->rgroup);
    *group = c->rgroup;
    return MPI_SUCCESS;
}

void mpi_intercomm_release(struct mcomm *c)
{
    mpi_group_unref(c->rgroup);
    free(c->rworld);
    free(c->from_rworld);
    MPI_Comm_free(&c->local);
}

/* Two intercommunicators compare as their local groups and remote groups
 * both do; an intercommunicator and an intracommunicator are unequal. */
int mpi_intercomm_compare(struct mcomm *a, struct mcomm *b, int *result)
{
    *result = MPI_UNEQUAL;
    if (!a->inter || !b->inter)
        return MPI_SUCCESS;
    int l, r;
    TRY(MPI_Group_compare(a->group, b->group, &l));
    TRY(MPI_Group_compare(a->rgroup, b->rgroup, &r));
    if (l == MPI_UNEQUAL || r == MPI_UNEQUAL)
        return MPI_SUCCESS;
    *result = l == MPI_IDENT && r == MPI_IDENT ? MPI_CONGRUENT : MPI_SIMILAR;
    return MPI_SUCCESS;
}
