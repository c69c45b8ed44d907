/* MPI-4 sessions: MPI used without MPI_Init, as a library that wants its
 * own communicators does.  Rank numbers come from TERN_RANK/TERN_SIZE (no
 * MPI_COMM_WORLD in the sessions model).
 *   session          sessions only, and the process exits without
 *                    MPI_Finalize (the library says goodbye at exit)
 *   session world    the same inside MPI_Init .. MPI_Finalize, and a
 *                    session's communicator still working after
 *                    MPI_Finalize while the session is open
 * Prints "session ok on N ranks" (rank 0). */
#include <stdbool.h>

#include "mpitest.h"

static int world_rank(void) { return atoi(getenv("TERN_RANK") ? getenv("TERN_RANK") : "0"); }
static int world_size(void) { return atoi(getenv("TERN_SIZE") ? getenv("TERN_SIZE") : "1"); }

static int handler_calls, handler_code;
static MPI_Session handler_session;
static void on_error(MPI_Session *s, int *code, ...)
{
    handler_calls++;
    handler_session = *s;
    handler_code = *code;
}

/* Process sets: their names, sizes and groups. */
static void psets(MPI_Session s)
{
    int n = -1;
    OK(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n));
    CHECK(n == 2, "%d process sets", n);
    const char *want[] = {"mpi://WORLD", "mpi://SELF"};
    for (int i = 0; i < n; i++) {
        int len = 0;
        OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, NULL));
        CHECK(len == (int)strlen(want[i]) + 1, "pset %d: length %d", i, len);
        char name[MPI_MAX_PSET_NAME_LEN];
        OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name));
        CHECK(!strcmp(name, want[i]), "pset %d is %s", i, name);
        /* A short buffer gets what fits, and the length needed. */
        char shortname[5] = "xxxx";
        len = 5;
        OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, shortname));
        CHECK(!strcmp(shortname, "mpi:") && len == (int)strlen(want[i]) + 1, "short: %s %d",
              shortname, len);
        MPI_Info info;
        OK(MPI_Session_get_pset_info(s, name, &info));
        char v[32];
        int flag = 0;
        OK(MPI_Info_get(info, "mpi_size", sizeof v - 1, v, &flag));
        CHECK(flag && atoi(v) == (i == 0 ? world_size() : 1), "%s: mpi_size %s", name, v);
        OK(MPI_Info_free(&info));
        MPI_Group g;
        OK(MPI_Group_from_session_pset(s, name, &g));
        int gs = -1, gr = -1;
        OK(MPI_Group_size(g, &gs));
        OK(MPI_Group_rank(g, &gr));
        CHECK(gs == (i == 0 ? world_size() : 1), "%s: group of %d", name, gs);
        CHECK(gr == (i == 0 ? world_rank() : 0), "%s: rank %d in it", name, gr);
        OK(MPI_Group_free(&g));
    }
    /* Names are matched without regard to case (MPICH's own tests use
     * "mpi://self"). */
    MPI_Group g;
    OK(MPI_Group_from_session_pset(s, "mpi://self", &g));
    OK(MPI_Group_free(&g));
}

/* A communicator of the whole set, with messages and a collective on it. */
static MPI_Comm world_comm(MPI_Session s, const char *tag)
{
    MPI_Group g;
    OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    MPI_Comm c;
    OK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    OK(MPI_Group_free(&g));
    int r, n;
    OK(MPI_Comm_rank(c, &r));
    OK(MPI_Comm_size(c, &n));
    CHECK(r == world_rank() && n == world_size(), "%s: rank %d of %d", tag, r, n);
    MPI_Errhandler e;
    OK(MPI_Comm_get_errhandler(c, &e));
    CHECK(e == MPI_ERRORS_RETURN, "%s: its error handler is not the one given", tag);
    return c;
}

static void use(MPI_Comm c, int round)
{
    int r, n, sum = -1;
    OK(MPI_Comm_rank(c, &r));
    OK(MPI_Comm_size(c, &n));
    OK(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == n * (n - 1) / 2, "round %d: sum of ranks %d", round, sum);
    int to = (r + 1) % n, from = (r + n - 1) % n, got = -1, mine = 1000 * round + r;
    OK(MPI_Sendrecv(&mine, 1, MPI_INT, to, 7, &got, 1, MPI_INT, from, 7, c,
                    MPI_STATUS_IGNORE));
    CHECK(got == 1000 * round + from, "round %d: got %d from %d", round, got, from);
}

/* Two communicators of one group, made with different tags, are apart:
 * a message sent on one is not received on the other. */
static void apart(MPI_Comm a, MPI_Comm b)
{
    int r, n;
    OK(MPI_Comm_rank(a, &r));
    OK(MPI_Comm_size(a, &n));
    if (n < 2)
        return;
    if (r == 0) {
        int x = 1, y = 2;
        OK(MPI_Send(&x, 1, MPI_INT, 1, 0, a));
        OK(MPI_Send(&y, 1, MPI_INT, 1, 0, b));
    } else if (r == 1) {
        int x = 0, y = 0;
        OK(MPI_Recv(&y, 1, MPI_INT, 0, 0, b, MPI_STATUS_IGNORE));
        OK(MPI_Recv(&x, 1, MPI_INT, 0, 0, a, MPI_STATUS_IGNORE));
        CHECK(x == 1 && y == 2, "crossed: %d on a, %d on b", x, y);
    }
}

/* The even ranks alone: only they call. */
static void evens(MPI_Session s)
{
    if (world_rank() % 2)
        return;
    int k = (world_size() + 1) / 2, *ranks = malloc(sizeof(int) * (size_t)k);
    for (int i = 0; i < k; i++)
        ranks[i] = 2 * i;
    MPI_Group all, ev;
    OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &all));
    OK(MPI_Group_incl(all, k, ranks, &ev));
    MPI_Comm c;
    OK(MPI_Comm_create_from_group(ev, "org.tern.test.evens", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                  &c));
    int n;
    OK(MPI_Comm_size(c, &n));
    CHECK(n == k, "evens: %d of %d", n, k);
    use(c, 3);
    OK(MPI_Comm_free(&c));
    OK(MPI_Group_free(&ev));
    OK(MPI_Group_free(&all));
    free(ranks);
}

static void self(MPI_Session s)
{
    MPI_Group g;
    OK(MPI_Group_from_session_pset(s, "mpi://SELF", &g));
    MPI_Comm c;
    OK(MPI_Comm_create_from_group(g, "self", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    OK(MPI_Group_free(&g));
    MPI_Request q;
    int in = -1, out = world_rank();
    OK(MPI_Irecv(&in, 1, MPI_INT, 0, 3, c, &q));
    OK(MPI_Send(&out, 1, MPI_INT, 0, 3, c));
    OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    CHECK(in == out, "self: %d", in);
    OK(MPI_Comm_free(&c));
}

/* Errors go to the session's handler: returned, or the program's called
 * with the session's handle. */
static void errors(MPI_Session s)
{
    MPI_Group g = MPI_GROUP_NULL;
    int rc = MPI_Group_from_session_pset(s, "mpi://nodes", &g);
    CHECK(rc == MPI_ERR_ARG && g == MPI_GROUP_NULL, "unknown pset: %d", rc);
    int len = 0;
    rc = MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 2, &len, NULL);
    CHECK(rc == MPI_ERR_ARG, "pset 2 of 2: %d", rc);
    MPI_Errhandler e, got;
    OK(MPI_Session_create_errhandler(on_error, &e));
    OK(MPI_Session_set_errhandler(s, e));
    OK(MPI_Session_get_errhandler(s, &got));
    CHECK(got == e, "get_errhandler");
    rc = MPI_Group_from_session_pset(s, "", &g);
    CHECK(rc == MPI_ERR_ARG && handler_calls == 1 && handler_session == s &&
              handler_code == MPI_ERR_ARG,
          "handler: rc %d calls %d", rc, handler_calls);
    OK(MPI_Session_call_errhandler(s, MPI_ERR_OTHER));
    CHECK(handler_calls == 2 && handler_code == MPI_ERR_OTHER, "call_errhandler");
    OK(MPI_Errhandler_free(&e));
    OK(MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN));
}

int main(int argc, char **argv)
{
    bool world = argc > 1 && !strcmp(argv[1], "world");
    t_rank = world_rank();
    int flag = -1;
    if (world) {
        OK(MPI_Init(&argc, &argv));
        OK(MPI_Comm_size(MPI_COMM_WORLD, &t_size));
    }
    OK(MPI_Initialized(&flag));
    CHECK(flag == world, "MPI_Initialized says %d", flag);

    MPI_Info ask;
    MPI_Session s;
    OK(MPI_Info_create(&ask));
    OK(MPI_Info_set(ask, "thread_level", "MPI_THREAD_MULTIPLE"));
    OK(MPI_Session_init(ask, MPI_ERRORS_RETURN, &s));
    OK(MPI_Info_free(&ask));
    OK(MPI_Initialized(&flag));
    CHECK(flag == world, "after MPI_Session_init MPI_Initialized says %d", flag);
    MPI_Info got;
    OK(MPI_Session_get_info(s, &got));
    char v[64];
    OK(MPI_Info_get(got, "thread_level", sizeof v - 1, v, &flag));
    CHECK(flag && !strcmp(v, "MPI_THREAD_MULTIPLE"), "thread_level %s", v);
    OK(MPI_Info_free(&got));

    psets(s);
    MPI_Comm a = world_comm(s, "org.tern.test.a"), b = world_comm(s, "org.tern.test.b");
    use(a, 1);
    use(b, 2);
    apart(a, b);
    evens(s);
    self(s);
    errors(s);
    OK(MPI_Comm_free(&b));

    /* A datatype made in one session serves the next. */
    MPI_Datatype pair;
    OK(MPI_Type_contiguous(2, MPI_INT, &pair));
    OK(MPI_Type_commit(&pair));
    OK(MPI_Comm_free(&a));
    OK(MPI_Session_finalize(&s));
    CHECK(s == MPI_SESSION_NULL, "the handle is not MPI_SESSION_NULL");

    MPI_Session s2;
    OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2));
    MPI_Comm c = world_comm(s2, "org.tern.test.again");
    if (world)
        OK(MPI_Finalize()); /* the open session keeps the library */
    int r, n, p[2] = {0, 0};
    OK(MPI_Comm_rank(c, &r));
    OK(MPI_Comm_size(c, &n));
    if (r == 0)
        p[0] = 41, p[1] = 42;
    OK(MPI_Bcast(p, 1, pair, 0, c));
    CHECK(p[0] == 41 && p[1] == 42, "bcast of the first session's type: %d %d", p[0], p[1]);
    use(c, 4);
    OK(MPI_Type_free(&pair));
    OK(MPI_Comm_free(&c));
    OK(MPI_Session_finalize(&s2));
    OK(MPI_Finalized(&flag));
    CHECK(flag == world, "MPI_Finalized says %d", flag);
    if (r == 0)
        printf("session ok on %d ranks%s\n", n, world ? " (world model too)" : "");
    return 0;
}
