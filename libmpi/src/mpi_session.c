/*
 * Sessions (MPI-4.0 11.3): MPI without MPI_Init, for a library that wants
 * its own communicators whatever the program did.  The first session
 * starts the library as MPI_Init would (mpi_init.c); the library stays up
 * until the process exits, so objects made in one session serve the next
 * (MPI-4.1 11.3.1), and MPI_Finalize ends it only when no session is open.
 *
 * A session's process sets are the job's ranks, "mpi://WORLD", and the
 * calling process, "mpi://SELF" (matched without regard to case, as MPICH
 * does).  MPI_Comm_create_from_group makes a communicator of a group with
 * no parent communicator: the group's members agree on a context id among
 * themselves in messages on a context reserved for it (CTX_FROM_GROUP),
 * tagged with a hash of the string tag; each member also sends the whole
 * 64-bit hash of the tag and of the group, so members that passed
 * different tags or groups get MPI_ERR_ARG rather than a communicator.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mpi_impl.h"
#include "mpi_thread.h"

#define MAX_SESSIONS 64

static struct msession {
    bool in_use;
    int thread_level;    /* provided: SINGLE or FUNNELED */
    MPI_Errhandler errh; /* counted while set */
} sessions[MAX_SESSIONS];
static int nopen;
static bool at_exit_set;

int mpi_sessions_open(void) { return nopen; }

static const char *const levels[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                     "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};

static struct msession *get(MPI_Session s)
{
    int i = H_IDX(s);
    if (H_KIND(s) != K_SESSION || i <= 0 || i >= MAX_SESSIONS || !sessions[i].in_use)
        return NULL;
    return &sessions[i];
}

/* An error in a call on session s: its handler decides (a session's
 * handler is called with the session's handle). */
#define SESSION_ERROR(s, e, code, call, ...) mpi_error_handled((e), (MPI_File)(s), (code), (call), __VA_ARGS__)

static int check(const char *call, MPI_Session s, struct msession **out)
{
    NEED_INIT(call);
    *out = get(s);
    if (!*out)
        return SESSION_ERROR(MPI_SESSION_NULL, MPI_ERRORS_ARE_FATAL, MPI_ERR_ARG, call,
                             "%#x is not a session", (unsigned)s);
    return MPI_SUCCESS;
}

/* The library ends when the process does: its engine says goodbye to the
 * other ranks, as MPI_Finalize would have. */
static void finish_at_exit(void)
{
    if (!mpi.initialized || mpi.finalized)
        mpi_library_finish();
}

/* The level the info's "thread_level" asks for (MPI-4.0 11.3.1), or
 * MPI_THREAD_SINGLE; -1 for a value that names no level. */
static int level_asked(MPI_Info info)
{
    if (info == MPI_INFO_NULL)
        return MPI_THREAD_SINGLE;
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    if (MPI_Info_get(info, "thread_level", MPI_MAX_INFO_VAL, v, &flag) || !flag)
        return MPI_THREAD_SINGLE;
    for (int l = 0; l < 4; l++)
        if (!strcasecmp(v, levels[l]))
            return MPI_THREAD_SINGLE + l;
    return -1;
}

int MPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session)
{
    const char *call = "MPI_Session_init";
    *session = MPI_SESSION_NULL;
    /* Handlers and info objects are tables of their own, usable before
     * the library starts (MPI-4.0 11.4.1 lets a program make info objects
     * first). */
    MPI_Errhandler e = mpi_errh_valid(errhandler) ? errhandler : MPI_ERRORS_ARE_FATAL;
    if (e != errhandler)
        return SESSION_ERROR(MPI_SESSION_NULL, e, MPI_ERR_ARG, call,
                             "%#x is not an error handler", (unsigned)errhandler);
    if (mpi.ended)
        return SESSION_ERROR(MPI_SESSION_NULL, e, MPI_ERR_OTHER, call,
                             "MPI_Finalize ended the library with no session open; it cannot "
                             "start again");
    if (info != MPI_INFO_NULL && !mpi_info_ok(info))
        return SESSION_ERROR(MPI_SESSION_NULL, e, MPI_ERR_INFO, call,
                             "%#x is not an info object", (unsigned)info);
    int asked = level_asked(info);
    if (asked < 0)
        return SESSION_ERROR(MPI_SESSION_NULL, e, MPI_ERR_ARG, call,
                             "thread_level is none of MPI_THREAD_SINGLE, _FUNNELED, _SERIALIZED, "
                             "_MULTIPLE");
    int i = 1;
    while (i < MAX_SESSIONS && sessions[i].in_use)
        i++;
    if (i == MAX_SESSIONS)
        return SESSION_ERROR(MPI_SESSION_NULL, e, MPI_ERR_OTHER, call,
                             "%d sessions are open, the most there can be", MAX_SESSIONS - 1);
    mpi_library_start(0, NULL, asked);
    if (!at_exit_set) {
        atexit(finish_at_exit);
        at_exit_set = true;
    }
    mpi_errh_ref(errhandler);
    /* Once a program has asked for MULTIPLE, every thread may call: a
     * session that asked for less has MULTIPLE too (MPICH's threads/init
     * tests expect it). */
    int level = mpi_thread_provided(asked);
    if (atomic_load(&mpi_multiple))
        level = MPI_THREAD_MULTIPLE;
    sessions[i] = (struct msession){.in_use = true, .thread_level = level, .errh = errhandler};
    nopen++;
    *session = H_MAKE(K_SESSION, i);
    return MPI_SUCCESS;
}

/* Objects the session made stay the program's to free (MPI-4.0 11.3.1);
 * the library stays up for the next session (above). */
int MPI_Session_finalize(MPI_Session *session)
{
    struct msession *s;
    TRY(check("MPI_Session_finalize", *session, &s));
    mpi_errh_unref(s->errh);
    *s = (struct msession){0};
    nopen--;
    *session = MPI_SESSION_NULL;
    return MPI_SUCCESS;
}

/* "thread_level": the level the session has, the one it asked for. */
int MPI_Session_get_info(MPI_Session session, MPI_Info *info_used)
{
    struct msession *s;
    TRY(check("MPI_Session_get_info", session, &s));
    TRY(MPI_Info_create(info_used));
    int rc = MPI_Info_set(*info_used, "thread_level", levels[s->thread_level - MPI_THREAD_SINGLE]);
    if (rc)
        MPI_Info_free(info_used);
    return rc;
}

static const char *const psets[] = {"mpi://WORLD", "mpi://SELF"};
#define NPSETS 2

/* Which process set name is (-1: none): MPI-4.0 11.3.2's two. */
static int pset_of(const char *name)
{
    for (int p = 0; name && p < NPSETS; p++)
        if (!strcasecmp(name, psets[p]))
            return p;
    return -1;
}

int MPI_Session_get_num_psets(MPI_Session session, MPI_Info info, int *npset_names)
{
    struct msession *s;
    (void)info; /* no keys select among process sets */
    TRY(check("MPI_Session_get_num_psets", session, &s));
    *npset_names = NPSETS;
    return MPI_SUCCESS;
}

/* pset_len 0 asks for the length the name needs, its terminating zero
 * included; otherwise at most pset_len - 1 characters and the zero are
 * written, and pset_len becomes the length the name needs. */
int MPI_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n, int *pset_len,
                             char *pset_name)
{
    const char *call = "MPI_Session_get_nth_pset";
    struct msession *s;
    (void)info;
    TRY(check(call, session, &s));
    if (n < 0 || n >= NPSETS)
        return SESSION_ERROR(session, s->errh, MPI_ERR_ARG, call,
                             "process set %d of %d (they are numbered from 0)", n, NPSETS);
    if (*pset_len < 0)
        return SESSION_ERROR(session, s->errh, MPI_ERR_ARG, call, "pset_len %d is negative",
                             *pset_len);
    int need = (int)strlen(psets[n]) + 1;
    if (*pset_len > 0)
        snprintf(pset_name, (size_t)*pset_len, "%s", psets[n]);
    *pset_len = need;
    return MPI_SUCCESS;
}

static int bad_pset(const char *call, MPI_Session session, struct msession *s, const char *name)
{
    return SESSION_ERROR(session, s->errh, MPI_ERR_ARG, call,
                         "\"%.64s\" is no process set (there are mpi://WORLD and mpi://SELF)",
                         name ? name : "(null)");
}

/* "mpi_size": how many processes the set has (MPI-4.0 11.3.2). */
int MPI_Session_get_pset_info(MPI_Session session, const char *pset_name, MPI_Info *info)
{
    const char *call = "MPI_Session_get_pset_info";
    struct msession *s;
    TRY(check(call, session, &s));
    int p = pset_of(pset_name);
    if (p < 0)
        return bad_pset(call, session, s, pset_name);
    char size[16];
    snprintf(size, sizeof size, "%d", p == 0 ? mpi.wsize : 1);
    TRY(MPI_Info_create(info));
    int rc = MPI_Info_set(*info, "mpi_size", size);
    if (rc)
        MPI_Info_free(info);
    return rc;
}

int MPI_Group_from_session_pset(MPI_Session session, const char *pset_name,
                                MPI_Group *newgroup)
{
    const char *call = "MPI_Group_from_session_pset";
    struct msession *s;
    TRY(check(call, session, &s));
    *newgroup = MPI_GROUP_NULL;
    int p = pset_of(pset_name);
    if (p < 0)
        return bad_pset(call, session, s, pset_name);
    if (p == 1) {
        *newgroup = mpi_group_new(1, &mpi.wrank);
    } else {
        int *all = malloc(sizeof(int) * (size_t)mpi.wsize);
        if (all) {
            for (int r = 0; r < mpi.wsize; r++)
                all[r] = r;
            *newgroup = mpi_group_new(mpi.wsize, all);
            free(all);
        }
    }
    if (*newgroup == MPI_GROUP_NULL)
        return SESSION_ERROR(session, s->errh, MPI_ERR_NO_MEM, call,
                             "no memory or no group left for %s", psets[p]);
    return MPI_SUCCESS;
}

/* FNV-1a, 64 bits: a string tag's hash and, from its members, a group's. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}

int MPI_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info,
                               MPI_Errhandler errhandler, MPI_Comm *newcomm)
{
    const char *call = "MPI_Comm_create_from_group";
    NEED_INIT(call);
    *newcomm = MPI_COMM_NULL;
    (void)info; /* no hints */
    MPI_Errhandler e = mpi_errh_valid(errhandler) ? errhandler : MPI_ERRORS_ARE_FATAL;
    if (e != errhandler)
        return mpi_error_handled(e, MPI_COMM_NULL, MPI_ERR_ARG, call,
                                 "%#x is not an error handler", (unsigned)errhandler);
    struct mgroup *g = mpi_group_get(group);
    if (!g || group == MPI_GROUP_EMPTY)
        return mpi_error_handled(e, MPI_COMM_NULL, MPI_ERR_GROUP, call,
                                 "%#x is not a group with members", (unsigned)group);
    size_t tn = stringtag ? strnlen(stringtag, MPI_MAX_STRINGTAG_LEN) : MPI_MAX_STRINGTAG_LEN;
    if (tn >= MPI_MAX_STRINGTAG_LEN)
        return mpi_error_handled(e, MPI_COMM_NULL, MPI_ERR_ARG, call,
                                 "the string tag is missing or MPI_MAX_STRINGTAG_LEN (%d) "
                                 "characters or longer", MPI_MAX_STRINGTAG_LEN);
    int me = mpi_group_rank_of(g, mpi.wrank);
    if (me == MPI_UNDEFINED)
        return mpi_error_handled(e, MPI_COMM_NULL, MPI_ERR_GROUP, call,
                                 "the calling process is not in the group");
    uint64_t tag = fnv(0xcbf29ce484222325ULL, stringtag, tn);
    uint64_t check = fnv(tag, g->world, sizeof(int) * (size_t)g->size);
    bool same;
    int ctx = mpi_ctx_agree_in_group(call, g, me,
                                     mpi_bits(2 * CTX_FROM_GROUP + 1, (int)(uint32_t)tag),
                                     check, &same);
    if (!same)
        return mpi_error_handled(e, MPI_COMM_NULL, MPI_ERR_ARG, call,
                                 "the group's members passed different string tags or groups");
    if (ctx < 0)
        return mpi_error_handled(e, MPI_COMM_NULL, MPI_ERR_INTERN, call,
                                 "no context id free on every member (%d communicators at most)",
                                 MAX_CONTEXTS);
    /* Installed under MPI_COMM_SELF's handler for a moment: the program's
     * own replaces it at once. */
    int rc = mpi_comm_install(call, MPI_COMM_SELF, ctx, g->size, g->world, newcomm);
    if (rc)
        return mpi_error_handled(e, MPI_COMM_NULL, rc, call, "no communicator made");
    return MPI_Comm_set_errhandler(*newcomm, errhandler);
}

int MPI_Session_create_errhandler(MPI_Session_errhandler_function *fn,
                                  MPI_Errhandler *errhandler)
{
    /* The same call as a communicator's, with the session's handle. */
    return MPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)fn, errhandler);
}

int MPI_Session_set_errhandler(MPI_Session session, MPI_Errhandler errhandler)
{
    const char *call = "MPI_Session_set_errhandler";
    struct msession *s;
    TRY(check(call, session, &s));
    if (!mpi_errh_valid(errhandler))
        return SESSION_ERROR(session, s->errh, MPI_ERR_ARG, call, "%#x is not an error handler",
                             (unsigned)errhandler);
    mpi_errh_ref(errhandler);
    mpi_errh_unref(s->errh);
    s->errh = errhandler;
    return MPI_SUCCESS;
}

int MPI_Session_get_errhandler(MPI_Session session, MPI_Errhandler *errhandler)
{
    struct msession *s;
    TRY(check("MPI_Session_get_errhandler", session, &s));
    *errhandler = s->errh;
    return MPI_SUCCESS;
}

int MPI_Session_call_errhandler(MPI_Session session, int errorcode)
{
    const char *call = "MPI_Session_call_errhandler";
    struct msession *s;
    TRY(check(call, session, &s));
    SESSION_ERROR(session, s->errh, errorcode, call, "raised by the program");
    return MPI_SUCCESS;
}
