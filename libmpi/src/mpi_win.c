/*
 * One-sided windows (MPI-3.1 11.2, 11.4, 11.5): creation and release,
 * attributes, names, error handlers, info, and the synchronization calls.
 * mpi_rma.h says how operations travel; mpi_rma.c moves them.
 *
 * Active target:
 *   - MPI_Win_fence: every rank tells every other how many operations it
 *     sent it since the last synchronization (an all-to-all of counts),
 *     applies until it has applied that many from each, has its own gets
 *     answered, and a barrier ends it, so no operation of the next epoch
 *     can reach a rank that still applies this one's.
 *   - MPI_Win_post/start/complete/wait/test: post tells the origins of its
 *     group (a message each); start waits for those of its targets;
 *     complete sends each target its count; wait applies that many.
 * Passive target: lock requests queue at the target, granted in order
 * by its progress; unlock and flush send a request behind the operations
 * (the engine keeps a pair's messages in order) and wait for its
 * acknowledgement, so all before it are applied.  MPI_Win_lock waits for
 * the grant.
 *
 * The target applies operations only while it is inside some MPI call
 * (the progress hook): a rank computing outside MPI holds up the
 * operations aimed at it.  The memory model is MPI_WIN_UNIFIED: there is
 * one copy of the window, and MPI_Win_sync is a memory barrier.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_rma.h"

#define MAX_WIN 1025 /* MPICH's rma/window_creation holds 1000 at once */
static struct mwin wins[MAX_WIN]; /* 0: MPI_WIN_NULL */

int mpi_win_check(const char *call, MPI_Win win, struct mwin **out)
{
    int i = H_IDX(win);
    if (H_KIND(win) != K_WIN || i <= 0 || i >= MAX_WIN || !wins[i].in_use)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_WIN, call, "%s is not a window",
                         win == MPI_WIN_NULL ? "MPI_WIN_NULL" : "the handle given");
    *out = &wins[i];
    return MPI_SUCCESS;
}

/* The private communicator's handler is the window's when that is a
 * predefined one (so checks on it report as the window's), else
 * MPI_ERRORS_RETURN and the window's function is called here, with the
 * window's handle. */
int mpi_win_raise(struct mwin *w, int rc)
{
    MPI_Comm_errhandler_function *fn = mpi_errh_fn(w->errh);
    if (rc && fn)
        fn(&w->h, &rc);
    return rc;
}

int mpi_win_error(struct mwin *w, int code, const char *call, const char *fmt, ...)
{
    char detail[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    if (mpi_errh_fn(w->errh))
        return mpi_win_raise(w, code);
    return mpi_error(w->comm, code, call, "%s", detail);
}

/* ---- progress ---- */

static bool serving;

void mpi_win_serve_all(void)
{
    if (serving)
        return;
    serving = true;
    for (int i = 1; i < MAX_WIN; i++)
        if (wins[i].in_use)
            mpi_rma_serve(&wins[i]);
    serving = false;
}

/* A request to oneself is delivered in memory, with no engine event to
 * wake a blocking progress: serve, then block only if still waiting. */
void mpi_win_wait_req(struct msg_req *r)
{
    while (!r->done) {
        mpi_win_serve_all();
        if (!r->done)
            msg_progress(true);
    }
}

/* Until from[i] >= want[i] for every i of mask (NULL: all). */
static void wait_applied(struct mwin *w, const int *want, const bool *mask)
{
    for (;;) {
        mpi_win_serve_all();
        bool all = true;
        for (int i = 0; i < w->size; i++)
            if ((!mask || mask[i]) && w->applied[i] < want[i])
                all = false;
        if (all)
            return;
        msg_progress(true);
    }
}

/* ---- creation and release ---- */

int mpi_win_make(const char *call, void *base, MPI_Aint size, int disp_unit, MPI_Info info,
                 MPI_Comm comm, int flavor, MPI_Win *win)
{
    NEED_INIT(call);
    struct mcomm *c;
    TRY(mpi_check_comm(call, comm, &c));
    if (c->inter)
        return mpi_error(comm, MPI_ERR_COMM, call, "windows over intercommunicators are not "
                                                   "in Tern's MPI");
    if (info != MPI_INFO_NULL && !mpi_info_ok(info))
        return mpi_error(comm, MPI_ERR_INFO, call, "not an info object");
    if (size < 0)
        return mpi_error(comm, MPI_ERR_SIZE, call, "window size %ld is negative", (long)size);
    if (disp_unit <= 0)
        return mpi_error(comm, MPI_ERR_DISP, call, "displacement unit %d is not positive",
                         disp_unit);
    int slot = 0;
    for (int i = 1; i < MAX_WIN && !slot; i++)
        if (!wins[i].in_use)
            slot = i;
    if (!slot)
        return mpi_error(comm, MPI_ERR_NO_MEM, call, "all %d windows in use", MAX_WIN - 1);
    struct mwin *w = &wins[slot];
    memset(w, 0, sizeof *w);
    int n = c->size;
    int *members = malloc((size_t)n * sizeof *members);
    long *mine = malloc(2 * sizeof *mine), *all = malloc(2 * (size_t)n * sizeof *all);
    w->sizes = calloc((size_t)n, sizeof *w->sizes);
    w->units = calloc((size_t)n, sizeof *w->units);
    w->locked = calloc((size_t)n, sizeof *w->locked);
    w->access = calloc((size_t)n, sizeof *w->access);
    w->exposed = calloc((size_t)n, sizeof *w->exposed);
    w->sent = calloc((size_t)n, sizeof *w->sent);
    w->applied = calloc((size_t)n, sizeof *w->applied);
    w->errs = calloc((size_t)n, sizeof *w->errs);
    if (!members || !mine || !all || !w->sizes || !w->units || !w->locked || !w->access ||
        !w->exposed || !w->sent || !w->applied || !w->errs)
        mpi_fatal(call, "no memory for a window of %d ranks", n);
    for (int i = 0; i < n; i++)
        members[i] = mpi_world_of(c, i);
    /* Its own context id, without the program's attributes (MPI_Comm_dup
     * would run their copy callbacks). */
    int rc = mpi_comm_make(call, comm, n, members, &w->comm);
    free(members);
    if (rc == MPI_SUCCESS) {
        mine[0] = (long)size;
        mine[1] = disp_unit;
        rc = MPI_Allgather(mine, 2, MPI_LONG, all, 2, MPI_LONG, w->comm);
    }
    free(mine);
    if (rc) {
        free(all);
        return rc;
    }
    for (int i = 0; i < n; i++) {
        w->sizes[i] = all[2 * i];
        w->units[i] = (int)all[2 * i + 1];
    }
    free(all);
    c = mpi_comm_get(comm); /* making one may have moved the table */
    w->in_use = true;
    w->h = H_MAKE(K_WIN, slot);
    w->rank = c->rank;
    w->size = n;
    w->base = base;
    w->wsize = size;
    w->disp_unit = disp_unit;
    w->flavor = flavor;
    w->model = MPI_WIN_UNIFIED;
    w->excl = -1;
    w->errh = MPI_ERRORS_ARE_FATAL;
    mpi_errh_unref(mpi_comm_get(w->comm)->errh); /* the parent's, counted */
    mpi_comm_get(w->comm)->errh = MPI_ERRORS_ARE_FATAL;
    mpi_comm_get(w->comm)->attr_owner = w->h;
    static bool hooked;
    if (!hooked) {
        mpi_progress_add(mpi_win_serve_all);
        hooked = true;
    }
    *win = w->h;
    return MPI_SUCCESS;
}

int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                   MPI_Win *win)
{
    return mpi_win_make("MPI_Win_create", base, size, disp_unit, info, comm, MPI_WIN_FLAVOR_CREATE,
                    win);
}

/* A window with no memory of its own (MPI-3.1 11.2.4): each rank attaches
 * and detaches regions of its memory, and origins name target memory by
 * its address (MPI_Get_address at the target, told them somehow), with a
 * displacement unit of 1.  The target checks every access against what it
 * has attached when the operation arrives; the origin cannot. */
int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    return mpi_win_make("MPI_Win_create_dynamic", NULL, 0, 1, info, comm, MPI_WIN_FLAVOR_DYNAMIC,
                    win);
}

/* The window of an attach or detach: one of MPI_Win_create_dynamic's. */
static int dynamic_win(const char *call, MPI_Win win, struct mwin **w)
{
    NEED_INIT(call);
    TRY(mpi_win_check(call, win, w));
    if ((*w)->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return mpi_win_error(*w, MPI_ERR_RMA_FLAVOR, call,
                             "not a window of MPI_Win_create_dynamic");
    return MPI_SUCCESS;
}

int MPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    const char *call = "MPI_Win_attach";
    struct mwin *w = NULL;
    TRY(dynamic_win(call, win, &w));
    if (size < 0 || (size > 0 && !base))
        return mpi_win_error(w, MPI_ERR_ARG, call, "%ld bytes at %p", (long)size, base);
    if (size == 0)
        return MPI_SUCCESS; /* nothing any access could reach */
    char *b = base;
    for (int i = 0; i < w->nregions; i++) {
        struct rma_region *g = &w->regions[i];
        if (b < g->base + g->size && g->base < b + size)
            return mpi_win_error(w, MPI_ERR_RMA_ATTACH, call,
                                 "%ld bytes at %p overlap the %ld attached at %p", (long)size,
                                 base, (long)g->size, (void *)g->base);
    }
    if (w->nregions == w->cap_regions) {
        int cap = w->cap_regions ? 2 * w->cap_regions : 8;
        struct rma_region *r = realloc(w->regions, (size_t)cap * sizeof *r);
        if (!r)
            return mpi_win_error(w, MPI_ERR_NO_MEM, call, "no memory for %d regions", cap);
        w->regions = r;
        w->cap_regions = cap;
    }
    w->regions[w->nregions++] = (struct rma_region){b, size};
    return MPI_SUCCESS;
}

int MPI_Win_detach(MPI_Win win, const void *base)
{
    const char *call = "MPI_Win_detach";
    struct mwin *w = NULL;
    TRY(dynamic_win(call, win, &w));
    for (int i = 0; i < w->nregions; i++) {
        if (w->regions[i].base == base) {
            w->regions[i] = w->regions[--w->nregions];
            return MPI_SUCCESS;
        }
    }
    return mpi_win_error(w, MPI_ERR_RMA_ATTACH, call, "no region attached at %p", base);
}

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                     MPI_Win *win)
{
    NEED_INIT("MPI_Win_allocate");
    void *base = size > 0 ? malloc((size_t)size) : NULL;
    if (size > 0 && !base)
        return mpi_error(comm, MPI_ERR_NO_MEM, "MPI_Win_allocate", "no memory for %ld bytes",
                         (long)size);
    int rc = mpi_win_make("MPI_Win_allocate", base, size, disp_unit, info, comm,
                      MPI_WIN_FLAVOR_ALLOCATE, win);
    if (rc) {
        free(base);
        return rc;
    }
    wins[H_IDX(*win)].owns_base = true;
    *(void **)baseptr = base;
    return MPI_SUCCESS;
}

static bool in_epoch(const struct mwin *w)
{
    if (w->lock_all || w->started || w->posted)
        return true;
    for (int i = 0; i < w->size; i++)
        if (w->locked[i])
            return true;
    return false;
}

int MPI_Win_free(MPI_Win *win)
{
    const char *call = "MPI_Win_free";
    NEED_INIT(call);
    struct mwin *w = NULL;
    TRY(mpi_win_check(call, *win, &w));
    if (in_epoch(w))
        return mpi_win_error(w, MPI_ERR_RMA_SYNC, call,
                             "an epoch (lock, start or post) is still open on the window");
    TRY(mpi_win_raise(w, mpi_attrs_delete(call, w->comm))); /* the delete callbacks, first */
    int rc = mpi_rma_complete(w, -1);
    /* Every rank's operations are complete once all are here: passive ones
     * were acknowledged, active ones counted by a fence or a wait. */
    int brc = MPI_Barrier(w->comm);
    mpi_rma_reap(w, true);
    MPI_Comm_free(&w->comm);
    for (struct rma_lockq *q = w->queue, *next; q; q = next) {
        next = q->next;
        free(q);
    }
    if (w->owns_base)
        free(w->base);
    mpi_win_shared_unmap(w);
    free(w->regions);
    free(w->sizes);
    free(w->units);
    free(w->locked);
    free(w->access);
    free(w->exposed);
    free(w->sent);
    free(w->applied);
    free(w->errs);
    mpi_errh_unref(w->errh);
    w->in_use = false;
    *win = MPI_WIN_NULL;
    return rc ? rc : brc;
}

/* ---- what a window is ---- */

int MPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
    NEED_INIT("MPI_Win_get_group");
    struct mwin *w = NULL;
    TRY(mpi_win_check("MPI_Win_get_group", win, &w));
    return MPI_Comm_group(w->comm, group);
}

int MPI_Win_get_attr(MPI_Win win, int win_keyval, void *attribute_val, int *flag)
{
    NEED_INIT("MPI_Win_get_attr");
    struct mwin *w = NULL;
    TRY(mpi_win_check("MPI_Win_get_attr", win, &w));
    void *v = NULL;
    switch (win_keyval) {
    case MPI_WIN_BASE: v = w->base; break;
    case MPI_WIN_SIZE: v = &w->wsize; break;
    case MPI_WIN_DISP_UNIT: v = &w->disp_unit; break;
    case MPI_WIN_CREATE_FLAVOR: v = &w->flavor; break;
    case MPI_WIN_MODEL: v = &w->model; break;
    default:
        /* The program's, kept by the private communicator. */
        return mpi_win_raise(w, mpi_attr_get("MPI_Win_get_attr", w->comm, win_keyval,
                                                 attribute_val, flag));
    }
    *(void **)attribute_val = v;
    *flag = 1;
    return MPI_SUCCESS;
}

/* The program's attributes live on the private communicator, whose
 * callbacks are given the window's handle (mcomm.attr_owner); keyvals are
 * the communicators' (one table, MPI-3.1 allows it). */
int MPI_Win_create_keyval(MPI_Win_copy_attr_function *win_copy_attr_fn,
                          MPI_Win_delete_attr_function *win_delete_attr_fn, int *win_keyval,
                          void *extra_state)
{
    NEED_INIT("MPI_Win_create_keyval");
    /* MPI_Win and MPI_Comm are both ints: the callbacks' types agree. */
    return mpi_keyval_create("MPI_Win_create_keyval", K_COMM,
                             (MPI_Comm_copy_attr_function *)(void *)win_copy_attr_fn, CB_C,
                             (MPI_Comm_delete_attr_function *)(void *)win_delete_attr_fn, CB_C,
                             win_keyval, extra_state);
}

int MPI_Win_free_keyval(int *win_keyval)
{
    NEED_INIT("MPI_Win_free_keyval");
    return MPI_Comm_free_keyval(win_keyval);
}

int MPI_Win_set_attr(MPI_Win win, int win_keyval, void *attribute_val)
{
    NEED_INIT("MPI_Win_set_attr");
    struct mwin *w = NULL;
    TRY(mpi_win_check("MPI_Win_set_attr", win, &w));
    return mpi_win_raise(w, mpi_attr_set("MPI_Win_set_attr", w->comm, win_keyval,
                                         attribute_val));
}

int MPI_Win_delete_attr(MPI_Win win, int win_keyval)
{
    NEED_INIT("MPI_Win_delete_attr");
    struct mwin *w = NULL;
    TRY(mpi_win_check("MPI_Win_delete_attr", win, &w));
    return mpi_win_raise(w, MPI_Comm_delete_attr(w->comm, win_keyval));
}

int MPI_Win_set_name(MPI_Win win, const char *win_name)
{
    NEED_INIT("MPI_Win_set_name");
    struct mwin *w = NULL;
    TRY(mpi_win_check("MPI_Win_set_name", win, &w));
    return mpi_comm_name_set("MPI_Win_set_name", w->comm, win_name, MPI_MAX_OBJECT_NAME - 1);
}

int MPI_Win_get_name(MPI_Win win, char *win_name, int *resultlen)
{
    NEED_INIT("MPI_Win_get_name");
    struct mwin *w = NULL;
    TRY(mpi_win_check("MPI_Win_get_name", win, &w));
    return MPI_Comm_get_name(w->comm, win_name, resultlen);
}

int MPI_Win_create_errhandler(MPI_Win_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    return MPI_Comm_create_errhandler(fn, errhandler);
}

int MPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler)
{
    NEED_INIT("MPI_Win_set_errhandler");
    struct mwin *w = NULL;
    TRY(mpi_win_check("MPI_Win_set_errhandler", win, &w));
    if (!mpi_errh_valid(errhandler))
        return mpi_win_error(w, MPI_ERR_ARG, "MPI_Win_set_errhandler",
                             "%#x is not an error handler", (unsigned)errhandler);
    mpi_errh_ref(errhandler); /* counted while set (mpi_errors.c) */
    mpi_errh_unref(w->errh);
    w->errh = errhandler;
    mpi_comm_get(w->comm)->errh = mpi_errh_fn(errhandler) ? MPI_ERRORS_RETURN : errhandler;
    return MPI_SUCCESS;
}

int MPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler)
{
    NEED_INIT("MPI_Win_get_errhandler");
    struct mwin *w = NULL;
    TRY(mpi_win_check("MPI_Win_get_errhandler", win, &w));
    *errhandler = w->errh;
    return MPI_SUCCESS;
}

int MPI_Win_call_errhandler(MPI_Win win, int errorcode)
{
    NEED_INIT("MPI_Win_call_errhandler");
    struct mwin *w = NULL;
    TRY(mpi_win_check("MPI_Win_call_errhandler", win, &w));
    mpi_win_error(w, errorcode, "MPI_Win_call_errhandler", "raised by the program");
    return MPI_SUCCESS;
}

/* No hint changes what a window does: the info kept is empty. */
int MPI_Win_set_info(MPI_Win win, MPI_Info info)
{
    NEED_INIT("MPI_Win_set_info");
    struct mwin *w = NULL;
    TRY(mpi_win_check("MPI_Win_set_info", win, &w));
    if (!mpi_info_ok(info))
        return mpi_win_error(w, MPI_ERR_INFO, "MPI_Win_set_info", "not an info object");
    return MPI_SUCCESS;
}

int MPI_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
    NEED_INIT("MPI_Win_get_info");
    struct mwin *w = NULL;
    TRY(mpi_win_check("MPI_Win_get_info", win, &w));
    return MPI_Info_create(info_used);
}

/* ---- active target: fence ---- */

int MPI_Win_fence(int assert, MPI_Win win)
{
    const char *call = "MPI_Win_fence";
    NEED_INIT(call);
    struct mwin *w = NULL;
    TRY(mpi_win_check(call, win, &w));
    if (in_epoch(w))
        return mpi_win_error(w, MPI_ERR_RMA_SYNC, call,
                             "a lock, start or post epoch is open on the window");
    int rc = mpi_rma_complete(w, -1);
    int *want = malloc((size_t)w->size * sizeof *want);
    if (!want)
        return mpi_win_error(w, MPI_ERR_NO_MEM, call, "no memory");
    int crc = MPI_Alltoall(w->sent, 1, MPI_INT, want, 1, MPI_INT, w->comm);
    if (crc == MPI_SUCCESS) {
        memset(w->sent, 0, (size_t)w->size * sizeof *w->sent);
        wait_applied(w, want, NULL);
        for (int i = 0; i < w->size; i++)
            w->applied[i] -= want[i];
        crc = MPI_Barrier(w->comm);
    }
    free(want);
    w->fence = !(assert & MPI_MODE_NOSUCCEED);
    if (rc)
        return mpi_win_raise(w, rc);
    return crc;
}

/* ---- active target: post, start, complete, wait ---- */

/* Mark the window ranks of group's members in set; MPI_ERR_GROUP if one
 * is not in the window. */
static int group_ranks(const char *call, struct mwin *w, MPI_Group group, bool *set)
{
    MPI_Group wg;
    int n;
    TRY(mpi_win_raise(w, MPI_Group_size(group, &n)));
    TRY(MPI_Comm_group(w->comm, &wg));
    int *in = malloc((size_t)(n ? n : 1) * sizeof *in);
    int *out = malloc((size_t)(n ? n : 1) * sizeof *out);
    if (!in || !out)
        mpi_fatal(call, "no memory");
    for (int i = 0; i < n; i++)
        in[i] = i;
    int rc = MPI_Group_translate_ranks(group, n, in, wg, out);
    MPI_Group_free(&wg);
    memset(set, 0, (size_t)w->size * sizeof *set);
    for (int i = 0; rc == MPI_SUCCESS && i < n; i++) {
        if (out[i] == MPI_UNDEFINED)
            rc = mpi_win_error(w, MPI_ERR_GROUP, call, "member %d of the group is not in the "
                               "window", i);
        else
            set[out[i]] = true;
    }
    free(in);
    free(out);
    return rc;
}

int MPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
    (void)assert;
    NEED_INIT("MPI_Win_post");
    struct mwin *w = NULL;
    TRY(mpi_win_check("MPI_Win_post", win, &w));
    if (w->posted)
        return mpi_win_error(w, MPI_ERR_RMA_SYNC, "MPI_Win_post", "already posted");
    TRY(group_ranks("MPI_Win_post", w, group, w->exposed));
    w->posted = true;
    int none = 0;
    for (int i = 0; i < w->size; i++)
        if (w->exposed[i])
            mpi_rma_tsend(w, i, T_RMA_POST, &none, sizeof none);
    return MPI_SUCCESS;
}

static uint64_t ptbits(const struct mwin *w, int tag)
{
    return mpi_bits(2 * mpi_comm_get(w->comm)->ctx, tag);
}

/* Receive one int on tag from window rank r. */
static int recv_int(struct mwin *w, int r, int tag)
{
    int v = 0;
    struct msg_req *q = msg_req_new(true);
    if (!q)
        mpi_fatal("MPI one-sided", "no engine request left");
    msg_irecv(q, mpi_world_of(mpi_comm_get(w->comm), r), ptbits(w, tag), 0, &v, sizeof v);
    mpi_win_wait_req(q);
    msg_req_free(q);
    return v;
}

int MPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
    (void)assert;
    NEED_INIT("MPI_Win_start");
    struct mwin *w = NULL;
    TRY(mpi_win_check("MPI_Win_start", win, &w));
    if (w->started)
        return mpi_win_error(w, MPI_ERR_RMA_SYNC, "MPI_Win_start", "already started");
    TRY(group_ranks("MPI_Win_start", w, group, w->access));
    /* Operations may go only once the target has posted. */
    for (int i = 0; i < w->size; i++)
        if (w->access[i])
            recv_int(w, i, T_RMA_POST);
    w->started = true;
    return MPI_SUCCESS;
}

int MPI_Win_complete(MPI_Win win)
{
    NEED_INIT("MPI_Win_complete");
    struct mwin *w = NULL;
    TRY(mpi_win_check("MPI_Win_complete", win, &w));
    if (!w->started)
        return mpi_win_error(w, MPI_ERR_RMA_SYNC, "MPI_Win_complete", "no MPI_Win_start");
    int rc = mpi_rma_complete(w, -1);
    for (int i = 0; i < w->size; i++)
        if (w->access[i]) {
            mpi_rma_tsend(w, i, T_RMA_DONE, &w->sent[i], sizeof w->sent[i]);
            w->sent[i] = 0;
            w->access[i] = false;
        }
    w->started = false;
    return mpi_win_raise(w, rc);
}

int MPI_Win_wait(MPI_Win win)
{
    NEED_INIT("MPI_Win_wait");
    struct mwin *w = NULL;
    TRY(mpi_win_check("MPI_Win_wait", win, &w));
    if (!w->posted)
        return mpi_win_error(w, MPI_ERR_RMA_SYNC, "MPI_Win_wait", "no MPI_Win_post");
    int *want = calloc((size_t)w->size, sizeof *want);
    if (!want)
        return mpi_win_error(w, MPI_ERR_NO_MEM, "MPI_Win_wait", "no memory");
    for (int i = 0; i < w->size; i++)
        if (w->exposed[i])
            want[i] = recv_int(w, i, T_RMA_DONE);
    wait_applied(w, want, w->exposed);
    for (int i = 0; i < w->size; i++) {
        w->applied[i] -= want[i];
        w->exposed[i] = false;
    }
    free(want);
    w->posted = false;
    return MPI_SUCCESS;
}

int MPI_Win_test(MPI_Win win, int *flag)
{
    NEED_INIT("MPI_Win_test");
    struct mwin *w = NULL;
    TRY(mpi_win_check("MPI_Win_test", win, &w));
    if (!w->posted)
        return mpi_win_error(w, MPI_ERR_RMA_SYNC, "MPI_Win_test", "no MPI_Win_post");
    /* Done once every origin's count is there (its operations came before
     * it, so the wait then only applies what has arrived). */
    msg_progress(false);
    mpi_win_serve_all();
    struct msg_probe_info pi;
    for (int i = 0; i < w->size; i++)
        if (w->exposed[i] && !msg_probe(mpi_world_of(mpi_comm_get(w->comm), i),
                                        ptbits(w, T_RMA_DONE), 0, false, &pi)) {
            *flag = 0;
            return MPI_SUCCESS;
        }
    *flag = 1;
    return MPI_Win_wait(win);
}

/* ---- passive target ---- */

static int check_target(const char *call, struct mwin *w, int rank)
{
    if (rank < 0 || rank >= w->size)
        return mpi_win_error(w, MPI_ERR_RANK, call, "rank %d is not in 0..%d", rank,
                             w->size - 1);
    return MPI_SUCCESS;
}

int MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
    (void)assert;
    const char *call = "MPI_Win_lock";
    NEED_INIT(call);
    struct mwin *w = NULL;
    TRY(mpi_win_check(call, win, &w));
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    TRY(check_target(call, w, rank));
    if (lock_type != MPI_LOCK_EXCLUSIVE && lock_type != MPI_LOCK_SHARED)
        return mpi_win_error(w, MPI_ERR_LOCKTYPE, call, "%d is not a lock type", lock_type);
    if (w->locked[rank] || w->lock_all)
        return mpi_win_error(w, MPI_ERR_RMA_SYNC, call, "rank %d is locked already", rank);
    TRY(mpi_rma_control(w, call, rank, RMA_LOCK, lock_type));
    mpi_rma_await(w, rank, RMA_LOCK, NULL);
    w->locked[rank] = lock_type;
    return MPI_SUCCESS;
}

/* Send a request behind the operations to rank and wait for its answer. */
static int sync_target(const char *call, struct mwin *w, int rank, int kind)
{
    int rc = mpi_rma_complete(w, rank), refused = 0;
    TRY(mpi_rma_control(w, call, rank, kind, 0));
    mpi_rma_await(w, rank, kind, &refused);
    if (!rc && refused)
        rc = mpi_win_error(w, MPI_ERR_RMA_RANGE, call,
                           "rank %d refused %d operations outside its window", rank, refused);
    return rc;
}

int MPI_Win_unlock(int rank, MPI_Win win)
{
    const char *call = "MPI_Win_unlock";
    NEED_INIT(call);
    struct mwin *w = NULL;
    TRY(mpi_win_check(call, win, &w));
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    TRY(check_target(call, w, rank));
    if (!w->locked[rank])
        return mpi_win_error(w, MPI_ERR_RMA_SYNC, call, "rank %d is not locked", rank);
    int rc = sync_target(call, w, rank, RMA_UNLOCK);
    w->locked[rank] = 0;
    return rc;
}

int MPI_Win_lock_all(int assert, MPI_Win win)
{
    (void)assert;
    const char *call = "MPI_Win_lock_all";
    NEED_INIT(call);
    struct mwin *w = NULL;
    TRY(mpi_win_check(call, win, &w));
    if (in_epoch(w))
        return mpi_win_error(w, MPI_ERR_RMA_SYNC, call, "an epoch is open on the window");
    for (int i = 0; i < w->size; i++)
        TRY(mpi_rma_control(w, call, i, RMA_LOCK, MPI_LOCK_SHARED));
    for (int i = 0; i < w->size; i++)
        mpi_rma_await(w, i, RMA_LOCK, NULL);
    w->lock_all = true;
    return MPI_SUCCESS;
}

int MPI_Win_unlock_all(MPI_Win win)
{
    const char *call = "MPI_Win_unlock_all";
    NEED_INIT(call);
    struct mwin *w = NULL;
    TRY(mpi_win_check(call, win, &w));
    if (!w->lock_all)
        return mpi_win_error(w, MPI_ERR_RMA_SYNC, call, "no MPI_Win_lock_all");
    int rc = mpi_rma_complete(w, -1);
    for (int i = 0; i < w->size; i++)
        TRY(mpi_rma_control(w, call, i, RMA_UNLOCK, 0));
    for (int i = 0; i < w->size; i++) {
        int refused = 0;
        mpi_rma_await(w, i, RMA_UNLOCK, &refused);
        if (!rc && refused)
            rc = mpi_win_error(w, MPI_ERR_RMA_RANGE, call,
                               "rank %d refused %d operations outside its window", i, refused);
    }
    w->lock_all = false;
    return rc;
}

static int check_passive(const char *call, struct mwin *w, int rank)
{
    TRY(check_target(call, w, rank));
    if (!w->lock_all && !w->locked[rank])
        return mpi_win_error(w, MPI_ERR_RMA_SYNC, call, "rank %d is not locked", rank);
    return MPI_SUCCESS;
}

int MPI_Win_flush(int rank, MPI_Win win)
{
    NEED_INIT("MPI_Win_flush");
    struct mwin *w = NULL;
    TRY(mpi_win_check("MPI_Win_flush", win, &w));
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    TRY(check_passive("MPI_Win_flush", w, rank));
    return sync_target("MPI_Win_flush", w, rank, RMA_FLUSH);
}

int MPI_Win_flush_all(MPI_Win win)
{
    NEED_INIT("MPI_Win_flush_all");
    struct mwin *w = NULL;
    TRY(mpi_win_check("MPI_Win_flush_all", win, &w));
    int rc = MPI_SUCCESS;
    for (int i = 0; i < w->size; i++)
        if (w->lock_all || w->locked[i]) {
            int e = sync_target("MPI_Win_flush_all", w, i, RMA_FLUSH);
            if (!rc)
                rc = e;
        }
    return rc;
}

/* Local completion: the origin's buffers are free and its gets are in. */
int MPI_Win_flush_local(int rank, MPI_Win win)
{
    NEED_INIT("MPI_Win_flush_local");
    struct mwin *w = NULL;
    TRY(mpi_win_check("MPI_Win_flush_local", win, &w));
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    TRY(check_passive("MPI_Win_flush_local", w, rank));
    return mpi_win_raise(w, mpi_rma_complete(w, rank));
}

int MPI_Win_flush_local_all(MPI_Win win)
{
    NEED_INIT("MPI_Win_flush_local_all");
    struct mwin *w = NULL;
    TRY(mpi_win_check("MPI_Win_flush_local_all", win, &w));
    return mpi_win_raise(w, mpi_rma_complete(w, -1));
}

/* The unified model has one copy of the window: a memory barrier, and a
 * chance for the operations aimed at this rank to be applied. */
int MPI_Win_sync(MPI_Win win)
{
    NEED_INIT("MPI_Win_sync");
    struct mwin *w = NULL;
    TRY(mpi_win_check("MPI_Win_sync", win, &w));
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    mpi_win_serve_all();
    return MPI_SUCCESS;
}
