/* Error cases.  argv[1] picks one:
 *   rank      MPI_Send to a rank outside the communicator (fatal by default)
 *   truncate  a message longer than the receive buffer (fatal)
 *   abort     rank 1 calls MPI_Abort(MPI_COMM_WORLD, 7) while the others wait
 *   noinit    MPI_Send before MPI_Init
 *   pset      a session (no MPI_Init) with MPI_ERRORS_ARE_FATAL: rank 0 asks
 *             for a process set that does not exist
 *   requests  receives posted and never waited for, until the bounded
 *             request table (TERN_MPI_REQUESTS) is full (fatal)
 *   gatherv   rank 1 of 4 sends 2 ints to MPI_Gatherv where the root's
 *             recvcounts say 3 (the root names rank 1)
 *   scatterv  rank 2 of 4 expects 5 ints from MPI_Scatterv where the root's
 *             sendcounts say 3 (rank 2 says so)
 *   added     rank 1 raises an error code the program added (fatal)
 *   return    MPI_ERRORS_RETURN: the calls return error codes, the job goes on;
 *             a user error handler is called
 * "not reached" printed means the job did not end where it should have. */
#include "mpitest.h"

static int handler_calls, handler_code;
static void handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    handler_calls++;
    handler_code = *code;
}

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "";
    if (!strcmp(c, "noinit")) {
        int x = 0;
        MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
        printf("not reached\n");
        return 0;
    }
    if (!strcmp(c, "pset")) {
        MPI_Session s;
        MPI_Group g;
        OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &s));
        /* Rank 0 alone errs (the first report ends the job); the others
         * wait for what never comes and end with it. */
        if (atoi(getenv("TERN_RANK") ? getenv("TERN_RANK") : "0") == 0)
            MPI_Group_from_session_pset(s, "mpi://nodes", &g);
        else
            MPI_Recv(NULL, 0, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("not reached\n");
        return 0;
    }
    t_init(&argc, &argv);
    int x[4] = {1, 2, 3, 4};
    if (!strcmp(c, "added")) {
        /* An error class the program added, raised on MPI_COMM_WORLD. */
        int cls, code;
        OK(MPI_Add_error_class(&cls));
        OK(MPI_Add_error_code(cls, &code));
        OK(MPI_Add_error_string(code, "the solver diverged"));
        if (t_rank == 1)
            MPI_Comm_call_errhandler(MPI_COMM_WORLD, code);
        MPI_Barrier(MPI_COMM_WORLD);
        printf("not reached\n");
    }
    if (!strcmp(c, "rank")) {
        if (t_rank == 0)
            MPI_Send(x, 1, MPI_INT, t_size + 3, 0, MPI_COMM_WORLD);
        else
            MPI_Recv(x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("not reached\n");
    } else if (!strcmp(c, "truncate")) {
        if (t_rank == 0)
            MPI_Send(x, 4, MPI_INT, 1, 0, MPI_COMM_WORLD);
        else if (t_rank == 1)
            MPI_Recv(x, 2, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Barrier(MPI_COMM_WORLD);
        printf("not reached\n");
    } else if (!strcmp(c, "gatherv") || !strcmp(c, "scatterv")) {
        int counts[4] = {3, 3, 3, 3}, displs[4] = {0, 3, 6, 9}, all[12] = {0}, mine[5] = {0};
        if (c[0] == 'g')
            MPI_Gatherv(mine, t_rank == 1 ? 2 : 3, MPI_INT, all, counts, displs, MPI_INT, 0,
                        MPI_COMM_WORLD);
        else
            MPI_Scatterv(all, counts, displs, MPI_INT, mine, t_rank == 2 ? 5 : 3, MPI_INT, 0,
                         MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        printf("not reached\n");
    } else if (!strcmp(c, "requests")) {
        MPI_Request r;
        for (long i = 0; i < 1000000; i++)
            MPI_Irecv(x, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &r);
        printf("not reached\n");
    } else if (!strcmp(c, "abort")) {
        if (t_rank == 1)
            MPI_Abort(MPI_COMM_WORLD, 7);
        MPI_Recv(x, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("not reached\n");
    } else if (!strcmp(c, "return")) {
        OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        MPI_Errhandler e;
        OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &e));
        CHECK(e == MPI_ERRORS_RETURN, "get_errhandler");
        int rc = MPI_Send(x, 1, MPI_INT, t_size, 0, MPI_COMM_WORLD);
        CHECK(rc == MPI_ERR_RANK, "bad rank gave %d", rc);
        rc = MPI_Send(x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD);
        CHECK(rc == MPI_ERR_COUNT, "bad count gave %d", rc);
        rc = MPI_Send(x, 1, MPI_INT, 0, -5, MPI_COMM_WORLD);
        CHECK(rc == MPI_ERR_TAG, "bad tag gave %d", rc);
        rc = MPI_Send(x, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD);
        CHECK(rc == MPI_ERR_TYPE, "bad type gave %d", rc);
        rc = MPI_Send(x, 1, MPI_INT, 0, 0, MPI_COMM_NULL);
        CHECK(rc == MPI_ERR_COMM, "MPI_COMM_NULL gave %d", rc);
        rc = MPI_Bcast(x, 1, MPI_INT, t_size, MPI_COMM_WORLD);
        CHECK(rc == MPI_ERR_ROOT, "bad root gave %d", rc);
        MPI_Datatype v;
        OK(MPI_Type_vector(2, 1, 2, MPI_INT, &v));
        rc = MPI_Send(x, 1, v, 0, 0, MPI_COMM_WORLD);
        CHECK(rc == MPI_ERR_TYPE, "uncommitted type gave %d", rc);
        MPI_Request bad = 12345;
        rc = MPI_Wait(&bad, MPI_STATUS_IGNORE);
        CHECK(rc == MPI_ERR_REQUEST, "bad request gave %d", rc);
        /* Truncation is returned, and the status says what came. */
        int peer = t_rank ^ 1;
        if (peer < t_size) {
            MPI_Status st;
            MPI_Request rq;
            OK(MPI_Isend(x, 4, MPI_INT, peer, 9, MPI_COMM_WORLD, &rq));
            int y[2];
            /* A single completion leaves MPI_ERROR alone (MPI-3.1 3.2.5). */
            st.MPI_ERROR = 4242;
            rc = MPI_Recv(y, 2, MPI_INT, peer, 9, MPI_COMM_WORLD, &st);
            CHECK(rc == MPI_ERR_TRUNCATE && st.MPI_ERROR == 4242 && y[0] == 1 && y[1] == 2 &&
                      st.MPI_SOURCE == peer && st.MPI_TAG == 9,
                  "truncate gave %d, status error %d", rc, st.MPI_ERROR);
            OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            /* MPI_Waitall with one failing: MPI_ERR_IN_STATUS, and every
             * status says how its request went. */
            MPI_Request two[2];
            MPI_Status sts[2];
            int z[4];
            OK(MPI_Irecv(y, 2, MPI_INT, peer, 12, MPI_COMM_WORLD, &two[0]));
            OK(MPI_Irecv(z, 4, MPI_INT, peer, 13, MPI_COMM_WORLD, &two[1]));
            OK(MPI_Send(x, 4, MPI_INT, peer, 12, MPI_COMM_WORLD));
            OK(MPI_Send(x, 4, MPI_INT, peer, 13, MPI_COMM_WORLD));
            rc = MPI_Waitall(2, two, sts);
            CHECK(rc == MPI_ERR_IN_STATUS && sts[0].MPI_ERROR == MPI_ERR_TRUNCATE &&
                      sts[1].MPI_ERROR == MPI_SUCCESS && z[3] == 4,
                  "Waitall with a truncated receive: %d, errors %d %d", rc, sts[0].MPI_ERROR,
                  sts[1].MPI_ERROR);
            /* Above the eager limit, the receive posted first (a zero-byte
             * exchange says so): the sender pushes the message with its
             * announcement (libmsg/msg_send.c), the receive keeps its first
             * 100000 bytes, and the send still completes. */
            unsigned char *big = malloc(300000), *in = malloc(100016);
            CHECK(big && in, "no memory");
            fill(big, 300000, t_rank + 7);
            memset(in, 0xEE, 100016);
            OK(MPI_Irecv(in, 100000, MPI_BYTE, peer, 10, MPI_COMM_WORLD, &rq));
            OK(MPI_Sendrecv(NULL, 0, MPI_BYTE, peer, 11, NULL, 0, MPI_BYTE, peer, 11,
                            MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            OK(MPI_Send(big, 300000, MPI_BYTE, peer, 10, MPI_COMM_WORLD));
            rc = MPI_Wait(&rq, &st);
            CHECK(rc == MPI_ERR_TRUNCATE && first_bad(in, 100000, peer + 7) < 0 &&
                      in[100000] == 0xEE, "truncated rendezvous gave %d, bad at %ld", rc,
                  first_bad(in, 100000, peer + 7));
            free(big);
            free(in);
        }
        char s[MPI_MAX_ERROR_STRING];
        int len;
        OK(MPI_Error_string(MPI_ERR_RANK, s, &len));
        CHECK(strstr(s, "MPI_ERR_RANK") && len == (int)strlen(s), "error string %s", s);
        /* A user handler on a duplicate. */
        MPI_Comm d;
        MPI_Errhandler mine;
        OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        OK(MPI_Comm_create_errhandler(handler, &mine));
        OK(MPI_Comm_set_errhandler(d, mine));
        rc = MPI_Send(x, 1, MPI_INT, -7, 0, d);
        CHECK(rc == MPI_ERR_RANK && handler_calls == 1 && handler_code == MPI_ERR_RANK,
              "user handler: rc %d calls %d", rc, handler_calls);
        /* Classes and codes the program adds: their class, their string,
         * MPI_LASTUSEDCODE, a handler called with one. */
        int cls, code, code2, *last, flag;
        OK(MPI_Add_error_class(&cls));
        OK(MPI_Add_error_code(cls, &code));
        OK(MPI_Add_error_code(MPI_ERR_ARG, &code2));
        OK(MPI_Add_error_string(code, "the program's own error"));
        int c1 = -1, c2 = -1, c3 = -1;
        OK(MPI_Error_class(code, &c1));
        OK(MPI_Error_class(code2, &c2));
        OK(MPI_Error_class(cls, &c3));
        CHECK(cls > MPI_ERR_LASTCODE && c1 == cls && c2 == MPI_ERR_ARG && c3 == cls,
              "added class %d: classes %d %d %d", cls, c1, c2, c3);
        OK(MPI_Error_string(code, s, &len));
        CHECK(!strcmp(s, "the program's own error"), "added code's string: %s", s);
        OK(MPI_Error_string(cls, s, &len));
        CHECK(len == 0 && s[0] == 0, "a class with no string: %s", s);
        OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
        CHECK(flag && *last >= code2, "MPI_LASTUSEDCODE %d, codes up to %d", *last, code2);
        CHECK(MPI_Add_error_code(MPI_ERR_LASTCODE + 999, &c1) == MPI_ERR_ARG &&
                  MPI_Add_error_string(MPI_ERR_RANK, "x") == MPI_ERR_ARG,
              "added codes to a class that is not, or a string to a predefined code");
        OK(MPI_Comm_call_errhandler(d, code));
        CHECK(handler_calls == 2 && handler_code == code, "handler: calls %d, code %d",
              handler_calls, handler_code);
        OK(MPI_Errhandler_free(&mine));
        /* Handlers freed by the program keep working on the communicators
         * that have them, and their slots come back after: 1000 made. */
        for (int i = 0; i < 1000; i++) {
            MPI_Comm d2;
            MPI_Errhandler h;
            OK(MPI_Comm_dup(d, &d2));
            OK(MPI_Comm_create_errhandler(handler, &h));
            OK(MPI_Comm_set_errhandler(d2, h));
            OK(MPI_Errhandler_free(&h));
            handler_calls = 0;
            OK(MPI_Comm_call_errhandler(d2, MPI_ERR_OTHER));
            CHECK(handler_calls == 1 && handler_code == MPI_ERR_OTHER,
                  "handler %d, freed but set: %d calls", i, handler_calls);
            OK(MPI_Comm_free(&d2));
        }
        OK(MPI_Comm_free(&d));
        OK(MPI_Barrier(MPI_COMM_WORLD));
        if (t_rank == 0)
            printf("errors return ok\n");
    }
    MPI_Finalize();
    return 0;
}
