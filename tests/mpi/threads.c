/* MPI_THREAD_MULTIPLE: several threads of each rank call MPI at once.
 *   - each thread rings messages (eager and rendezvous) and reduces on a
 *     communicator of its own, and rings on MPI_COMM_WORLD with a tag of
 *     its own, while the others do the same;
 *   - a thread blocked in MPI_Recv is matched by a send another thread of
 *     the same rank makes later (to itself, and to the next rank), so a
 *     blocked thread must not keep the others out;
 *   - a thread polls MPI_Test while the others block;
 *   - the threads make communicators at once (Comm_dup, Comm_split,
 *     Comm_create_group, Intercomm_create, each thread from its own
 *     parent), starting in opposite orders on even and odd ranks: each
 *     new communicator must be apart from the others (its own context id),
 *     which a ring on all of them with one tag checks;
 *   - the threads duplicate with MPI_Comm_dup, then with MPI_Comm_idup,
 *     where some ranks start a duplicate only after others' have ended
 *     (even threads of even ranks wait for their rank's odd threads'
 *     duplicates; MPICH's threads/comm/idup_deadlock), and where a thread's idup of
 *     MPI_COMM_SELF comes while another thread's idup waits for a rank
 *     that has not called it yet (MPICH's threads/comm/comm_idup): an idup
 *     that cannot end yet must not hold up one that can;
 *   - MPI_Is_thread_main is false in the threads.
 * Usage: threads [T] (default 4).  Prints "threads ok on N ranks: T
 * threads" (rank 0). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <unistd.h>

#include "mpitest.h"

#define ROUNDS 50
#define BIG (256 * 1024) /* bytes: past the eager limit */

static int nthreads = 4;
static MPI_Comm comms[64];
static pthread_barrier_t phase;

static void ring(MPI_Comm c, int tag, int t, int round, int bytes)
{
    int r, n;
    OK(MPI_Comm_rank(c, &r));
    OK(MPI_Comm_size(c, &n));
    int to = (r + 1) % n, from = (r + n - 1) % n;
    unsigned char *out = malloc((size_t)bytes), *in = malloc((size_t)bytes);
    CHECK(out && in, "no memory");
    for (int i = 0; i < bytes; i++)
        out[i] = (unsigned char)(r * 31 + t * 7 + round + i);
    MPI_Status st;
    OK(MPI_Sendrecv(out, bytes, MPI_BYTE, to, tag, in, bytes, MPI_BYTE, from, tag, c, &st));
    CHECK(st.MPI_SOURCE == from && st.MPI_TAG == tag, "thread %d: status %d/%d", t,
          st.MPI_SOURCE, st.MPI_TAG);
    for (int i = 0; i < bytes; i++)
        CHECK(in[i] == (unsigned char)(from * 31 + t * 7 + round + i),
              "thread %d round %d: byte %d is %d", t, round, i, in[i]);
    free(out);
    free(in);
}

/* Thread 0 blocks in a receive that thread 1 satisfies 20 ms later:
 * from itself, then from the next rank's thread 1. */
static void crossed(int t)
{
    int x = -1, mine = 1000 + t_rank;
    int prev = (t_rank + t_size - 1) % t_size, next = (t_rank + 1) % t_size;
    if (t == 0) {
        OK(MPI_Recv(&x, 1, MPI_INT, t_rank, 900, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(x == mine, "from itself: %d", x);
        OK(MPI_Recv(&x, 1, MPI_INT, next, 901, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(x == 1000 + next, "from rank %d: %d", next, x);
    } else if (t == 1) {
        usleep(20000);
        OK(MPI_Send(&mine, 1, MPI_INT, t_rank, 900, MPI_COMM_WORLD));
        usleep(20000);
        OK(MPI_Send(&mine, 1, MPI_INT, prev, 901, MPI_COMM_WORLD));
    }
}

/* The last thread polls a receive with MPI_Test while the others block. */
static void polled(int t)
{
    if (t != nthreads - 1)
        return;
    int x = -1, mine = 2000 + t_rank, flag = 0;
    int prev = (t_rank + t_size - 1) % t_size, next = (t_rank + 1) % t_size;
    MPI_Request q;
    OK(MPI_Irecv(&x, 1, MPI_INT, prev, 902, MPI_COMM_WORLD, &q));
    OK(MPI_Send(&mine, 1, MPI_INT, next, 902, MPI_COMM_WORLD));
    long polls = 0;
    while (!flag) {
        OK(MPI_Test(&q, &flag, MPI_STATUS_IGNORE));
        polls++;
    }
    CHECK(x == 2000 + prev, "polled: %d after %ld tests", x, polls);
}

/* Communicators made by all threads at once; ring on them. */
static void made_at_once(int t)
{
    int delay = t_rank % 2 ? nthreads - 1 - t : t;
    usleep((useconds_t)(delay * 3000));
    MPI_Comm d, sp, cg, half, inter;
    OK(MPI_Comm_dup(comms[t], &d));
    OK(MPI_Comm_split(comms[t], 0, -t_rank, &sp)); /* reversed */
    MPI_Group g;
    OK(MPI_Comm_group(comms[t], &g));
    OK(MPI_Comm_create_group(comms[t], g, t, &cg));
    OK(MPI_Group_free(&g));
    for (int round = 0; round < 3; round++) {
        ring(d, 77, t, round, 32);
        ring(sp, 77, t, round, 32);
        ring(cg, 77, t, round, 32);
    }
    int r;
    OK(MPI_Comm_rank(sp, &r));
    CHECK(r == t_size - 1 - t_rank, "thread %d: split rank %d", t, r);
    if (t_size >= 2) {
        /* Two halves of this thread's communicator, joined again. */
        int low = t_rank < t_size / 2;
        OK(MPI_Comm_split(comms[t], low, 0, &half));
        OK(MPI_Intercomm_create(half, 0, comms[t], low ? t_size / 2 : 0, 300 + t, &inter));
        int rs = -1, x = t_rank, y = -1;
        OK(MPI_Comm_remote_size(inter, &rs));
        CHECK(rs == (low ? t_size - t_size / 2 : t_size / 2), "thread %d: remote size %d", t,
              rs);
        /* Rank 0 of each side swaps its world rank with the other's. */
        OK(MPI_Comm_rank(half, &r));
        if (r == 0) {
            OK(MPI_Sendrecv(&x, 1, MPI_INT, 0, 9, &y, 1, MPI_INT, 0, 9, inter,
                            MPI_STATUS_IGNORE));
            CHECK(y == (low ? t_size / 2 : 0), "thread %d: intercomm gave %d", t, y);
        }
        OK(MPI_Comm_free(&inter));
        OK(MPI_Comm_free(&half));
    }
    OK(MPI_Comm_free(&d));
    OK(MPI_Comm_free(&sp));
    OK(MPI_Comm_free(&cg));
}

/* Duplicates some ranks start only after others' have ended (above). */
static atomic_int odd_left[2]; /* this rank's odd threads whose dup, idup has not ended */

static void dup_after_others(int t, int nonblocking)
{
    MPI_Comm d;
    MPI_Request rq;
    if (t % 2 == 0 && t_rank % 2 == 0)
        while (atomic_load(&odd_left[nonblocking]) > 0)
            usleep(1000);
    if (nonblocking) {
        OK(MPI_Comm_idup(comms[t], &d, &rq));
        OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    } else {
        OK(MPI_Comm_dup(comms[t], &d));
    }
    if (t % 2)
        atomic_fetch_sub(&odd_left[nonblocking], 1);
    ring(d, 78, t, nonblocking, 32);
    OK(MPI_Comm_free(&d));
}

static void dups_after_others(int t)
{
    MPI_Comm d;
    MPI_Request rq;
    dup_after_others(t, 0);
    pthread_barrier_wait(&phase);
    dup_after_others(t, 1);
    pthread_barrier_wait(&phase);
    /* One thread of each rank starts late, so the others' idups of their
     * own communicators wait for it while it still has MPI_COMM_SELF's
     * to make. */
    if (t == t_rank % nthreads)
        usleep(200000);
    MPI_Comm self;
    OK(MPI_Comm_idup(MPI_COMM_SELF, &self, &rq));
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    OK(MPI_Comm_free(&self));
    OK(MPI_Comm_idup(comms[t], &d, &rq));
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    ring(d, 79, t, 0, 32);
    OK(MPI_Comm_free(&d));
}

static void *work(void *arg)
{
    int t = (int)(long)arg, flag = 1;
    OK(MPI_Is_thread_main(&flag));
    CHECK(!flag, "thread %d: MPI_Is_thread_main says it is", t);
    for (int round = 0; round < ROUNDS; round++) {
        ring(comms[t], 5, t, round, round % 10 == 0 ? BIG : 64);
        ring(MPI_COMM_WORLD, 100 + t, t, round, 16);
        int sum = -1, one = t + 1;
        OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comms[t]));
        CHECK(sum == (t + 1) * t_size, "thread %d: allreduce %d", t, sum);
    }
    pthread_barrier_wait(&phase);
    crossed(t);
    polled(t);
    made_at_once(t);
    pthread_barrier_wait(&phase);
    dups_after_others(t);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        nthreads = atoi(argv[1]);
    CHECK(nthreads >= 2 && nthreads <= 64, "2 to 64 threads");
    int provided = -1;
    OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &t_rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &t_size));
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    OK(MPI_Query_thread(&provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "Query_thread %d", provided);
    for (int t = 0; t < nthreads; t++)
        OK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]));
    pthread_barrier_init(&phase, NULL, (unsigned)nthreads);
    atomic_init(&odd_left[0], nthreads / 2);
    atomic_init(&odd_left[1], nthreads / 2);
    pthread_t th[64];
    for (int t = 0; t < nthreads; t++)
        CHECK(pthread_create(&th[t], NULL, work, (void *)(long)t) == 0, "pthread_create");
    for (int t = 0; t < nthreads; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < nthreads; t++)
        OK(MPI_Comm_free(&comms[t]));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (t_rank == 0)
        printf("threads ok on %d ranks: %d threads\n", t_size, nthreads);
    OK(MPI_Finalize());
    return 0;
}
