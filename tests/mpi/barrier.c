/* MPI_Barrier really synchronises, thousands of times in a row, on
 * MPI_COMM_WORLD and on communicators made by dup and split (and one made
 * after those were freed, taking a context id again).
 *
 * The check needs no clock: in barrier s one rank, `late` = s mod n, looks
 * (MPI_Iprobe, for up to 2 ms on every 8th barrier) for a message that the
 * others send it only after they have left barrier s.  Seeing one before it
 * has itself entered barrier s proves that a rank left too early; then
 * `late` takes the n-1 messages and checks they are from barrier s.  A
 * barrier whose rounds are miscounted either lets ranks out early (caught
 * here) or never ends (the launcher's time limit).
 *
 * Also the progress rule: a rank waiting in a barrier still serves a
 * large (rendezvous) send to a receive it posted before, whose sender
 * enters the barrier only once that send is done (a barrier that only
 * slept on its counters would hang there).
 *
 *   barrier [ITERS]   ITERS barriers in each phase (2000)
 *   barrier exhaust   COMMS communicators alive at once, each with its
 *                     barriers: past what Portals' counters hold, new ones
 *                     keep to messages (ranks of a 5-member split run out
 *                     before those of a 3-member one: they must agree) */
#include "mpitest.h"

#define TAG_LEFT 77

static long barriers;

static void barrier(MPI_Comm comm)
{
    OK(MPI_Barrier(comm));
    barriers++;
}

static void checked(MPI_Comm comm, int iters, const char *what)
{
    int me, n;
    OK(MPI_Comm_rank(comm, &me));
    OK(MPI_Comm_size(comm, &n));
    for (int s = 0; s < iters; s++) {
        int late = s % n;
        if (me == late) {
            double until = MPI_Wtime() + (s % 8 == 0 ? 0.002 : 0);
            do {
                int flag;
                MPI_Status st;
                OK(MPI_Iprobe(MPI_ANY_SOURCE, TAG_LEFT, comm, &flag, &st));
                CHECK(!flag, "%s barrier %d: rank %d left it before rank %d entered it", what, s,
                      st.MPI_SOURCE, me);
            } while (MPI_Wtime() < until);
        }
        barrier(comm);
        if (me != late) {
            OK(MPI_Send(&s, 1, MPI_INT, late, TAG_LEFT, comm));
            continue;
        }
        for (int i = 0; i < n - 1; i++) {
            int v = -1;
            MPI_Status st;
            OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, TAG_LEFT, comm, &st));
            CHECK(v == s, "%s barrier %d: rank %d's word is from barrier %d", what, s,
                  st.MPI_SOURCE, v);
        }
    }
}

/* Comms alive at once, more than the counters of the Linux-host Portals
 * (512) cover, then all freed: the barrier works throughout. */
static void exhaust(void)
{
    enum { COMMS = 400 };
    static MPI_Comm c[COMMS], part[COMMS];
    for (int i = 0; i < COMMS; i++) {
        OK(MPI_Comm_split(MPI_COMM_WORLD, t_rank < 5, t_rank, &part[i]));
        barrier(part[i]);
        OK(MPI_Comm_dup(MPI_COMM_WORLD, &c[i]));
        barrier(c[i]);
        if (i % 50 == 49) {
            checked(c[i], 16, "exhausting");
            checked(part[i], 16, "exhausting part");
        }
    }
    for (int i = 0; i < COMMS; i++) {
        OK(MPI_Comm_free(&c[i]));
        OK(MPI_Comm_free(&part[i]));
    }
    MPI_Comm again;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &again));
    checked(again, 100, "after exhaustion");
    OK(MPI_Comm_free(&again));
    if (t_rank == 0)
        printf("exhaust ok on %d ranks: %ld barriers\n", t_size, barriers);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    if (argc > 1 && !strcmp(argv[1], "exhaust")) {
        exhaust();
        return MPI_Finalize();
    }
    int iters = argc > 1 ? atoi(argv[1]) : 2000;
    /* Back to back, nothing in between: a fast rank's next barrier
     * arrives while a slow one is still in the current one. */
    for (int s = 0; s < iters; s++)
        barrier(MPI_COMM_WORLD);
    checked(MPI_COMM_WORLD, iters, "world");
    enum { BIG = 1 << 17 };   /* above the eager limit (64 KiB) */
    static char big[BIG];
    for (int s = 0; s < 10; s++) {
        MPI_Request rq = MPI_REQUEST_NULL;
        if (t_rank == 0 && t_size > 1)
            OK(MPI_Irecv(big, BIG, MPI_CHAR, t_size - 1, s, MPI_COMM_WORLD, &rq));
        if (t_rank == t_size - 1 && t_size > 1) {
            memset(big, s + 1, BIG);
            OK(MPI_Send(big, BIG, MPI_CHAR, 0, s, MPI_COMM_WORLD));
        }
        barrier(MPI_COMM_WORLD);
        OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        CHECK(t_rank || t_size == 1 || (big[0] == s + 1 && big[BIG - 1] == s + 1),
              "the rendezvous message %d", s);
    }
    /* Communicators of their own, used in turn: each has its own entries. */
    MPI_Comm dup, half, third;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    OK(MPI_Comm_split(MPI_COMM_WORLD, t_rank % 2, t_size - t_rank, &half));
    OK(MPI_Comm_split(MPI_COMM_WORLD, t_rank % 3, t_rank, &third));
    for (int s = 0; s < iters / 4; s++) {
        barrier(half);
        barrier(MPI_COMM_WORLD);
        barrier(dup);
        barrier(third);
    }
    checked(half, iters / 4, "half");
    checked(dup, iters / 4, "dup");
    checked(third, iters / 4, "third");
    OK(MPI_Comm_free(&half));
    OK(MPI_Comm_free(&dup));
    /* A new communicator takes a freed context id: no stale count there. */
    MPI_Comm again;
    OK(MPI_Comm_split(MPI_COMM_WORLD, 0, t_rank, &again));
    checked(again, iters / 4, "again");
    OK(MPI_Comm_free(&again));
    OK(MPI_Comm_free(&third));
    if (t_rank == 0)
        printf("barrier ok on %d ranks: %ld barriers\n", t_size, barriers);
    return MPI_Finalize();
}
