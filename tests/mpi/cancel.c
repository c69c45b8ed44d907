/* The cancel of a send (MPI-3.1 3.8.4): a message no receive has matched
 * yet is taken back at its receiver, whatever the send mode and size
 * (eager, rendezvous with its first bytes pushed, rendezvous announced
 * only, late, buffered, persistent, to oneself); the Wait after the cancel
 * returns even when nobody ever receives it (an Issend's Wait hung); a
 * message a receive has matched is not cancelled and arrives; what the
 * sender sent before and after a cancelled message still arrives in order.
 * Rank 0 sends, the last rank receives, the others only join the barriers. */
#include "mpitest.h"

#define GO 1000 /* tags of the handshakes; messages use tags below */
#define LATE 520 /* more rendezvous sends than the 512 exposed at once */

static int dest;

static void fill_bytes(char *b, int n, int seed)
{
    for (int i = 0; i < n; i++)
        b[i] = (char)(seed * 31 + i * 7);
}

static int cancelled(MPI_Request *rq)
{
    MPI_Status st;
    int flag = -1;
    OK(MPI_Cancel(rq));
    OK(MPI_Wait(rq, &st));
    OK(MPI_Test_cancelled(&st, &flag));
    return flag;
}

/* The receiver's half of one case: wait for the sender's word, then a
 * marker sent after the cancelled message; anything with the cancelled
 * message's tag would have come first (pair-wise order). */
static void receiver_checks_gone(int tag)
{
    int flag, v;
    MPI_Status st;
    OK(MPI_Recv(&v, 1, MPI_INT, 0, GO, MPI_COMM_WORLD, &st));
    OK(MPI_Recv(&v, 1, MPI_INT, 0, GO + 1, MPI_COMM_WORLD, &st));
    OK(MPI_Iprobe(0, tag, MPI_COMM_WORLD, &flag, &st));
    CHECK(!flag, "the cancelled message with tag %d arrived (%d bytes)", tag,
          t_count(&st, MPI_BYTE));
}

static void sender_says_done(void)
{
    int v = 0;
    OK(MPI_Send(&v, 1, MPI_INT, dest, GO, MPI_COMM_WORLD));
    OK(MPI_Send(&v, 1, MPI_INT, dest, GO + 1, MPI_COMM_WORLD));
}

/* Every mode and size, its receive never posted: each is cancelled. */
static void unmatched(void)
{
    static const int sizes[] = {0, 8, 4000, 100000, 3 << 20};
    const char *modes = "nsbp";
    int tag = 0;
    for (unsigned k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        for (const char *m = modes; *m; m++, tag++) {
            int n = sizes[k];
            if (t_rank == 0) {
                char *buf = malloc((size_t)n + 1), *att = NULL;
                MPI_Request rq;
                fill_bytes(buf, n, tag);
                if (*m == 'n')
                    OK(MPI_Isend(buf, n, MPI_CHAR, dest, tag, MPI_COMM_WORLD, &rq));
                else if (*m == 's')
                    OK(MPI_Issend(buf, n, MPI_CHAR, dest, tag, MPI_COMM_WORLD, &rq));
                else if (*m == 'b') {
                    att = malloc((size_t)n + MPI_BSEND_OVERHEAD);
                    OK(MPI_Buffer_attach(att, n + MPI_BSEND_OVERHEAD));
                    OK(MPI_Ibsend(buf, n, MPI_CHAR, dest, tag, MPI_COMM_WORLD, &rq));
                } else {
                    OK(MPI_Send_init(buf, n, MPI_CHAR, dest, tag, MPI_COMM_WORLD, &rq));
                    OK(MPI_Start(&rq));
                }
                MPI_Request keep = rq;
                int flag = cancelled(&rq);
                CHECK(flag == 1, "mode %c, %d bytes: the send was not cancelled", *m, n);
                if (*m == 'p') {
                    CHECK(rq == keep, "a persistent request went");
                    OK(MPI_Request_free(&rq));
                }
                if (att) {
                    void *a;
                    int sz;
                    OK(MPI_Buffer_detach(&a, &sz)); /* returns: nothing left to send */
                    free(att);
                }
                free(buf);
                sender_says_done();
            } else if (t_rank == dest) {
                receiver_checks_gone(tag);
            }
            OK(MPI_Barrier(MPI_COMM_WORLD));
        }
}

/* A receive posted first matches the message on arrival: the cancel
 * fails, the send completes, the data arrive. */
static void matched(void)
{
    static const int sizes[] = {8, 3 << 20};
    for (int k = 0; k < 2; k++) {
        int n = sizes[k], tag = 200 + k;
        char *buf = malloc((size_t)n), *want = malloc((size_t)n);
        fill_bytes(want, n, tag);
        MPI_Request rq;
        if (t_rank == dest)
            OK(MPI_Irecv(buf, n, MPI_CHAR, 0, tag, MPI_COMM_WORLD, &rq));
        OK(MPI_Barrier(MPI_COMM_WORLD));
        if (t_rank == 0) {
            OK(MPI_Issend(want, n, MPI_CHAR, dest, tag, MPI_COMM_WORLD, &rq));
            /* The receiver's receive is posted: give the message time to
             * be matched there before the question comes. */
            int v;
            OK(MPI_Recv(&v, 1, MPI_INT, dest, GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(cancelled(&rq) == 0, "%d bytes: a matched send was cancelled", n);
        } else if (t_rank == dest) {
            MPI_Status st;
            OK(MPI_Wait(&rq, &st));
            CHECK(t_count(&st, MPI_CHAR) == n && !memcmp(buf, want, (size_t)n),
                  "%d bytes: the matched message arrived wrong", n);
            int v = 0;
            OK(MPI_Send(&v, 1, MPI_INT, 0, GO, MPI_COMM_WORLD));
        }
        free(buf);
        free(want);
        OK(MPI_Barrier(MPI_COMM_WORLD));
    }
}

/* Two messages of one envelope, the second cancelled while the receiver
 * waits for something else (MPICH's scancel_unmatch); the messages of
 * other tags sent before it (drained with it into the library's queue)
 * and the one sent after it (still in Portals) arrive in send order to
 * receives of any tag. */
static void order(void)
{
    if (t_rank == 0) {
        int a = 10, b = 20, x1 = 1, x2 = 2, x3 = 3, v = 0;
        MPI_Request r[4];
        OK(MPI_Isend(&x1, 1, MPI_INT, dest, 301, MPI_COMM_WORLD, &r[0]));
        OK(MPI_Isend(&a, 1, MPI_INT, dest, 300, MPI_COMM_WORLD, &r[1]));
        OK(MPI_Isend(&x2, 1, MPI_INT, dest, 302, MPI_COMM_WORLD, &r[2]));
        OK(MPI_Isend(&b, 1, MPI_INT, dest, 300, MPI_COMM_WORLD, &r[3]));
        CHECK(cancelled(&r[3]) == 1, "the second of two like messages was not cancelled");
        OK(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
        OK(MPI_Send(&v, 1, MPI_INT, dest, GO, MPI_COMM_WORLD));
        OK(MPI_Send(&x3, 1, MPI_INT, dest, 303, MPI_COMM_WORLD));
    } else if (t_rank == dest) {
        int want[4][2] = {{301, 1}, {300, 10}, {302, 2}, {303, 3}}, v, flag;
        MPI_Status st;
        OK(MPI_Recv(&v, 1, MPI_INT, 0, GO, MPI_COMM_WORLD, &st));
        for (int i = 0; i < 4; i++) {
            OK(MPI_Recv(&v, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            CHECK(st.MPI_TAG == want[i][0] && v == want[i][1],
                  "message %d: tag %d value %d, not tag %d value %d", i, st.MPI_TAG, v,
                  want[i][0], want[i][1]);
        }
        OK(MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
        CHECK(!flag, "a message with tag %d after the last", st.MPI_TAG);
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* More synchronous sends than are exposed at once: the last ones are late
 * (announced only); one of those and one exposed are cancelled, the rest
 * received. */
static void late(void)
{
    if (t_rank == 0) {
        static MPI_Request r[LATE];
        static int v[LATE];
        for (int i = 0; i < LATE; i++) {
            v[i] = i;
            OK(MPI_Issend(&v[i], 1, MPI_INT, dest, 400 + (i == 5 || i == LATE - 2), MPI_COMM_WORLD,
                          &r[i]));
        }
        CHECK(cancelled(&r[LATE - 2]) == 1, "a late send was not cancelled");
        CHECK(cancelled(&r[5]) == 1, "an exposed send was not cancelled");
        sender_says_done();
        OK(MPI_Waitall(LATE, r, MPI_STATUSES_IGNORE));
    } else if (t_rank == dest) {
        receiver_checks_gone(401);
        for (int i = 0; i < LATE; i++) {
            if (i == 5 || i == LATE - 2)
                continue;
            int x;
            OK(MPI_Recv(&x, 1, MPI_INT, 0, 400, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(x == i, "late phase: got %d, not %d", x, i);
        }
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* To oneself: out of the queue at once; a received one is not. */
static void self(void)
{
    int a = 7, b = 8, x, flag;
    MPI_Request r;
    MPI_Status st;
    OK(MPI_Isend(&a, 1, MPI_INT, t_rank, 500, MPI_COMM_WORLD, &r));
    CHECK(cancelled(&r) == 1, "a send to oneself was not cancelled");
    OK(MPI_Iprobe(t_rank, 500, MPI_COMM_WORLD, &flag, &st));
    CHECK(!flag, "the cancelled message to oneself is there");
    OK(MPI_Isend(&b, 1, MPI_INT, t_rank, 501, MPI_COMM_WORLD, &r));
    OK(MPI_Recv(&x, 1, MPI_INT, t_rank, 501, MPI_COMM_WORLD, &st));
    CHECK(x == 8 && cancelled(&r) == 0, "a received message to oneself: %d", x);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    CHECK(t_size >= 2, "needs 2 ranks");
    dest = t_size - 1;
    unmatched();
    matched();
    order();
    late();
    self();
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (t_rank == 0)
        printf("cancel ok on %d ranks\n", t_size);
    OK(MPI_Finalize());
    return 0;
}
