/* Thousands of receives posted at once, more than Portals has match
 * entries for (2048 by default; the library posts at most TERN_MPI_POSTED
 * and holds the rest in order, libmsg/msg_held.c).  Rank 0 receives, the
 * others send; every message carries its sender and its number among the
 * sender's messages, and each receive must get the one MPI's order gives it:
 *   posted   receives first, then the messages (eager, every 50th rendezvous);
 *   early    the messages first (many unexpected, flow control drains some);
 *   any      MPI_ANY_SOURCE receives, every third also MPI_ANY_TAG: each
 *            sender's messages in order;
 *   sync     synchronous sends (every match pulls: more pulls at once than
 *            Portals has MDs, the job ended at the first one it refused);
 *   probe    the messages first, then each found by MPI_Probe(MPI_ANY_SOURCE),
 *            looked at again with MPI_Iprobe and received (a probe among
 *            thousands of unexpected messages: Portals answered its search
 *            once for each, into a probe long returned, and a few probes
 *            overflowed the event queue);
 *   cancel   receives nobody sends to, then one that gets its message, then
 *            the others cancelled;
 *   expose   Portals' entries nearly all taken (250 communicators with
 *            barriers of their own, receives posted to the library's cap),
 *            then 512 synchronous sends at once, each exposing its buffer
 *            through an entry of its own (the job ended with "cannot expose
 *            a 4-byte buffer" when none was left);
 *   late     more rendezvous sends started at once than the engine exposes
 *            buffers for (512), before their receiver posts anything, then
 *            with the last one received first, then 3000 whose receives are
 *            all posted while their sender computes.
 * Usage: manyrecv [RECEIVES]   (default 4000).
 * Prints "manyrecv ok on N ranks: R receives". */
#include <time.h>

#include "mpitest.h"

#define BIG 100000
#define SMALL 16

static int nrecv = 4000;

/* Receive i of the posted/early phases: from sender 1 + i % (n-1), its
 * message number i / (n-1), with tag (number % 3), every 50th big. */
static int sender_of(int i) { return 1 + i % (t_size - 1); }
static int number_of(int i) { return i / (t_size - 1); }
static int tag_of(int j) { return j % 3; }
static int is_big(int i) { return i % 50 == 0; }

static void fill_msg(int *buf, int len, int s, int j)
{
    for (int k = 0; k < len / (int)sizeof(int); k++)
        buf[k] = k == 0 ? s : k == 1 ? j : s * 7919 + j * 31 + k;
}

static int check_msg(const int *buf, int len, int s, int j)
{
    for (int k = 0; k < len / (int)sizeof(int); k++) {
        int want = k == 0 ? s : k == 1 ? j : s * 7919 + j * 31 + k;
        if (buf[k] != want)
            return k;
    }
    return -1;
}

static void by_number(int early)
{
    int me = t_rank;
    if (me == 0) {
        MPI_Request *rq = malloc(sizeof *rq * (size_t)nrecv);
        int **buf = malloc(sizeof *buf * (size_t)nrecv);
        if (early)
            OK(MPI_Barrier(MPI_COMM_WORLD)); /* every message sent (or announced) */
        for (int i = 0; i < nrecv; i++) {
            int len = is_big(i) ? BIG : SMALL;
            buf[i] = calloc(1, (size_t)len);
            OK(MPI_Irecv(buf[i], len, MPI_BYTE, sender_of(i), tag_of(number_of(i)),
                         MPI_COMM_WORLD, &rq[i]));
        }
        if (!early)
            OK(MPI_Barrier(MPI_COMM_WORLD)); /* every receive posted */
        for (int i = 0; i < nrecv; i++) {
            MPI_Status st;
            OK(MPI_Wait(&rq[i], &st));
            int len = is_big(i) ? BIG : SMALL;
            CHECK(st.MPI_SOURCE == sender_of(i) && t_count(&st, MPI_BYTE) == len,
                  "%s receive %d: from %d, %d bytes", early ? "early" : "posted", i,
                  st.MPI_SOURCE, t_count(&st, MPI_BYTE));
            int bad = check_msg(buf[i], len, sender_of(i), number_of(i));
            CHECK(bad < 0, "%s receive %d (sender %d's message %d): word %d is %d",
                  early ? "early" : "posted", i, sender_of(i), number_of(i), bad, buf[i][bad]);
            free(buf[i]);
        }
        free(rq);
        free(buf);
    } else {
        int mine = 0;
        for (int i = 0; i < nrecv; i++)
            mine += sender_of(i) == me;
        MPI_Request *rq = malloc(sizeof *rq * (size_t)mine);
        int **buf = malloc(sizeof *buf * (size_t)mine);
        if (!early)
            OK(MPI_Barrier(MPI_COMM_WORLD));
        int j = 0;
        for (int i = 0; i < nrecv; i++) {
            if (sender_of(i) != me)
                continue;
            int len = is_big(i) ? BIG : SMALL;
            buf[j] = malloc((size_t)len);
            fill_msg(buf[j], len, me, j);
            OK(MPI_Isend(buf[j], len, MPI_BYTE, 0, tag_of(j), MPI_COMM_WORLD, &rq[j]));
            j++;
        }
        if (early)
            OK(MPI_Barrier(MPI_COMM_WORLD));
        OK(MPI_Waitall(mine, rq, MPI_STATUSES_IGNORE));
        for (int k = 0; k < mine; k++)
            free(buf[k]);
        free(rq);
        free(buf);
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Every sender's messages synchronous, all receives posted first: each
 * match is a pull (a zero-byte get for a 4-byte message that came whole). */
static void sync_sends(void)
{
    if (t_rank == 0) {
        MPI_Request *rq = malloc(sizeof *rq * (size_t)nrecv);
        int *buf = calloc((size_t)nrecv, sizeof(int));
        for (int i = 0; i < nrecv; i++)
            OK(MPI_Irecv(&buf[i], 1, MPI_INT, sender_of(i), 5, MPI_COMM_WORLD, &rq[i]));
        OK(MPI_Barrier(MPI_COMM_WORLD));
        OK(MPI_Waitall(nrecv, rq, MPI_STATUSES_IGNORE));
        for (int i = 0; i < nrecv; i++)
            CHECK(buf[i] == sender_of(i) * 100000 + number_of(i), "sync receive %d got %d", i,
                  buf[i]);
        free(rq);
        free(buf);
    } else {
        int mine = 0;
        for (int i = 0; i < nrecv; i++)
            mine += sender_of(i) == t_rank;
        MPI_Request *rq = malloc(sizeof *rq * (size_t)mine);
        int *v = malloc(sizeof(int) * (size_t)mine);
        OK(MPI_Barrier(MPI_COMM_WORLD));
        for (int j = 0; j < mine; j++) {
            v[j] = t_rank * 100000 + j;
            OK(MPI_Issend(&v[j], 1, MPI_INT, 0, 5, MPI_COMM_WORLD, &rq[j]));
        }
        OK(MPI_Waitall(mine, rq, MPI_STATUSES_IGNORE));
        free(rq);
        free(v);
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void any_source(void)
{
    int senders = t_size - 1, n = nrecv - nrecv % senders;
    if (t_rank == 0) {
        MPI_Request *rq = malloc(sizeof *rq * (size_t)n);
        int(*buf)[SMALL / sizeof(int)] = calloc((size_t)n, SMALL);
        int *next = calloc((size_t)t_size, sizeof(int));
        for (int i = 0; i < n; i++)
            OK(MPI_Irecv(buf[i], SMALL, MPI_BYTE, MPI_ANY_SOURCE, i % 3 ? 7 : MPI_ANY_TAG,
                         MPI_COMM_WORLD, &rq[i]));
        OK(MPI_Barrier(MPI_COMM_WORLD));
        for (int i = 0; i < n; i++) {
            MPI_Status st;
            OK(MPI_Wait(&rq[i], &st));
            int s = st.MPI_SOURCE;
            CHECK(s >= 1 && s < t_size && buf[i][0] == s, "any receive %d: from %d, word 0 %d",
                  i, s, buf[i][0]);
            /* Each sender's messages in the order it sent them. */
            int bad = check_msg(buf[i], SMALL, s, next[s]);
            CHECK(bad < 0, "any receive %d from %d: message %d where %d was next", i, s,
                  buf[i][1], next[s]);
            next[s]++;
        }
        for (int s = 1; s < t_size; s++)
            CHECK(next[s] == n / senders, "%d messages from %d", next[s], s);
        free(rq);
        free(buf);
        free(next);
    } else {
        OK(MPI_Barrier(MPI_COMM_WORLD));
        int msg[SMALL / sizeof(int)];
        for (int j = 0; j < n / senders; j++) {
            fill_msg(msg, SMALL, t_rank, j);
            OK(MPI_Send(msg, SMALL, MPI_BYTE, 0, 7, MPI_COMM_WORLD));
        }
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void probe_each(void)
{
    int senders = t_size - 1, n = (nrecv < 2000 ? nrecv : 2000) / senders * senders;
    if (t_rank == 0) {
        int *next = calloc((size_t)t_size, sizeof(int));
        OK(MPI_Barrier(MPI_COMM_WORLD)); /* every message sent */
        for (int i = 0; i < n; i++) {
            MPI_Status st;
            int msg[SMALL / sizeof(int)], len = -1;
            OK(MPI_Probe(MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &st));
            OK(MPI_Get_count(&st, MPI_BYTE, &len));
            int s = st.MPI_SOURCE;
            CHECK(s >= 1 && s < t_size && len == SMALL, "probe %d: from %d, %d bytes", i, s, len);
            /* Looked at again, as a program polling for work does: the
             * same message, the oldest there. */
            for (int again = 0; again < 3; again++) {
                int flag = 0;
                OK(MPI_Iprobe(MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &flag, &st));
                CHECK(flag && st.MPI_SOURCE == s, "iprobe %d after probe %d: flag %d from %d",
                      again, i, flag, st.MPI_SOURCE);
            }
            OK(MPI_Recv(msg, SMALL, MPI_BYTE, s, 9, MPI_COMM_WORLD, &st));
            int bad = check_msg(msg, SMALL, s, next[s]);
            CHECK(bad < 0, "probed message %d from %d: number %d where %d was next", i, s, msg[1],
                  next[s]);
            next[s]++;
        }
        free(next);
    } else {
        int msg[SMALL / sizeof(int)];
        for (int j = 0; j < n / senders; j++) {
            fill_msg(msg, SMALL, t_rank, j);
            OK(MPI_Send(msg, SMALL, MPI_BYTE, 0, 9, MPI_COMM_WORLD));
        }
        OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void cancel_many(void)
{
    int n = nrecv - 1;
    if (t_rank == 0) {
        MPI_Request *rq = malloc(sizeof *rq * (size_t)n), last;
        int *buf = calloc((size_t)n, sizeof(int)), got = 0;
        for (int i = 0; i < n; i++)
            OK(MPI_Irecv(&buf[i], 1, MPI_INT, 1, 99, MPI_COMM_WORLD, &rq[i]));
        OK(MPI_Irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 100, MPI_COMM_WORLD, &last));
        OK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_Status st;
        OK(MPI_Wait(&last, &st)); /* behind 3999 receives nobody sends to */
        CHECK(got == 4242 && st.MPI_SOURCE == 1, "the last receive got %d from %d", got,
              st.MPI_SOURCE);
        for (int i = 0; i < n; i++) {
            OK(MPI_Cancel(&rq[i]));
            OK(MPI_Wait(&rq[i], &st));
            int c = 0;
            OK(MPI_Test_cancelled(&st, &c));
            CHECK(c, "receive %d of tag 99 was not cancelled", i);
        }
        int flag = 1;
        OK(MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, &st));
        CHECK(!flag, "a message of tag 99 came");
        free(rq);
        free(buf);
    } else {
        OK(MPI_Barrier(MPI_COMM_WORLD));
        if (t_rank == 1) {
            int v = 4242;
            OK(MPI_Send(&v, 1, MPI_INT, 0, 100, MPI_COMM_WORLD));
        }
    }
    /* Messages still flow both ways after it. */
    int v = t_rank, sum = 0;
    OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == t_size * (t_size - 1) / 2, "sum %d", sum);
}

static void expose_many(void)
{
    enum { NCOMM = 250, NSEND = 512 };
    int n = nrecv < 2000 ? nrecv : 2000; /* with the sends, in the request table */
    MPI_Comm *c = malloc(sizeof *c * NCOMM);
    for (int i = 0; i < NCOMM; i++) {
        OK(MPI_Comm_dup(MPI_COMM_WORLD, &c[i]));
        OK(MPI_Barrier(c[i]));
    }
    if (t_rank == 0) {
        MPI_Request *rq = malloc(sizeof *rq * (size_t)n), *sq = malloc(sizeof *sq * NSEND);
        int *buf = calloc((size_t)n, sizeof(int)), *v = malloc(sizeof(int) * NSEND), go = 1;
        for (int i = 0; i < n; i++)
            OK(MPI_Irecv(&buf[i], 1, MPI_INT, 1, 13, MPI_COMM_WORLD, &rq[i]));
        for (int j = 0; j < NSEND; j++) {
            v[j] = 3 * j + 1;
            OK(MPI_Issend(&v[j], 1, MPI_INT, 1, 12, MPI_COMM_WORLD, &sq[j]));
        }
        OK(MPI_Send(&go, 1, MPI_INT, 1, 14, MPI_COMM_WORLD)); /* all of them are out */
        OK(MPI_Waitall(NSEND, sq, MPI_STATUSES_IGNORE));
        OK(MPI_Waitall(n, rq, MPI_STATUSES_IGNORE));
        for (int i = 0; i < n; i++)
            CHECK(buf[i] == 5 * i + 2, "receive %d behind the exposed sends got %d", i, buf[i]);
        free(rq);
        free(sq);
        free(buf);
        free(v);
    } else if (t_rank == 1) {
        int go = 0, x = 0;
        OK(MPI_Recv(&go, 1, MPI_INT, 0, 14, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int j = 0; j < NSEND; j++) {
            OK(MPI_Recv(&x, 1, MPI_INT, 0, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(x == 3 * j + 1, "exposed send %d came as %d", j, x);
        }
        for (int i = 0; i < n; i++) {
            x = 5 * i + 2;
            OK(MPI_Send(&x, 1, MPI_INT, 0, 13, MPI_COMM_WORLD));
        }
    }
    for (int i = 0; i < NCOMM; i++) {
        OK(MPI_Barrier(c[i]));
        OK(MPI_Comm_free(&c[i]));
    }
    free(c);
}

/* MPI_Issend and MPI_Isend are local (MPI-3.1 3.7): rank 0 starts 700
 * synchronous sends and 100 long ones to rank 1, more than the 512 buffers
 * the engine exposes at once, and then the message rank 1 waits for before
 * it posts any receive.  The 513th send waited for rank 1 to pull one,
 * while rank 1 waited for that last message: the job hung.  The long ones
 * come from overlapping pieces of one buffer (MPI-3 allows that), each its
 * own bytes. */
static void late_exposures(void)
{
    enum { NSYNC = 700, NLONG = 100, LONG = 70000 };
    if (t_rank == 0) {
        MPI_Request *sq = malloc(sizeof *sq * (NSYNC + NLONG));
        int *v = malloc(sizeof(int) * NSYNC), go = 1, k = 0;
        unsigned char *big = malloc(LONG + NLONG);
        for (int i = 0; i < LONG + NLONG; i++)
            big[i] = (unsigned char)(i * 7 + 3);
        for (int j = 0; j < NSYNC; j++) {
            v[j] = 11 * j + 4;
            OK(MPI_Issend(&v[j], 1, MPI_INT, 1, 17, MPI_COMM_WORLD, &sq[k++]));
            if (j % 7 == 0)
                OK(MPI_Isend(big + j / 7, LONG, MPI_BYTE, 1, 18, MPI_COMM_WORLD, &sq[k++]));
        }
        OK(MPI_Send(&go, 1, MPI_INT, 1, 19, MPI_COMM_WORLD));
        OK(MPI_Waitall(k, sq, MPI_STATUSES_IGNORE));
        free(sq);
        free(v);
        free(big);
    } else if (t_rank == 1) {
        unsigned char *buf = malloc(LONG);
        int go = 0, x = 0;
        OK(MPI_Recv(&go, 1, MPI_INT, 0, 19, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int j = 0; j < NSYNC; j++) {
            OK(MPI_Recv(&x, 1, MPI_INT, 0, 17, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(x == 11 * j + 4, "late synchronous send %d came as %d", j, x);
            if (j % 7)
                continue;
            OK(MPI_Recv(buf, LONG, MPI_BYTE, 0, 18, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (int i = 0; i < LONG; i++)
                if (buf[i] != (unsigned char)((i + j / 7) * 7 + 3)) {
                    CHECK(0, "late long send %d: byte %d is %d", j / 7, i, buf[i]);
                    break;
                }
        }
        free(buf);
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    /* Past the 512 and waited on out of order (3 ranks): rank 0 starts 600
     * synchronous sends to rank 1, then one to rank 2; rank 1 receives only
     * once rank 2, having received its one, tells it to.  A late send
     * exposed only as earlier exposures are pulled never came to rank 2. */
    enum { NFIRST = 600 };
    if (t_size < 3)
        return;
    if (t_rank == 0) {
        MPI_Request *sq = malloc(sizeof *sq * (NFIRST + 1));
        int *v = malloc(sizeof(int) * (NFIRST + 1));
        for (int j = 0; j <= NFIRST; j++) {
            v[j] = 13 * j + 6;
            OK(MPI_Issend(&v[j], 1, MPI_INT, j < NFIRST ? 1 : 2, 20, MPI_COMM_WORLD, &sq[j]));
        }
        OK(MPI_Waitall(NFIRST + 1, sq, MPI_STATUSES_IGNORE));
        free(sq);
        free(v);
    } else if (t_rank == 1) {
        int go = 0, x = 0;
        OK(MPI_Recv(&go, 1, MPI_INT, 2, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int j = 0; j < NFIRST; j++) {
            OK(MPI_Recv(&x, 1, MPI_INT, 0, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(x == 13 * j + 6, "send %d of those waited on out of order came as %d", j, x);
        }
    } else if (t_rank == 2) {
        int x = 0;
        OK(MPI_Recv(&x, 1, MPI_INT, 0, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(x == 13 * NFIRST + 6, "the late send to rank 2 came as %d", x);
        OK(MPI_Send(&x, 1, MPI_INT, 1, 21, MPI_COMM_WORLD));
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    /* 3000 announced, then their sender computes (no MPI call) while their
     * receives are posted: each match asked the sender for its message at
     * once, and 2488 requests overflowed its event queue ("events were
     * lost") before it looked again. */
    enum { NCOMP = 3000 };
    if (t_rank == 0) {
        MPI_Request *sq = malloc(sizeof *sq * NCOMP);
        int *v = malloc(sizeof(int) * NCOMP), go = 1;
        for (int j = 0; j < NCOMP; j++) {
            v[j] = 17 * j + 8;
            OK(MPI_Issend(&v[j], 1, MPI_INT, 1, 22, MPI_COMM_WORLD, &sq[j]));
        }
        /* Synchronous, behind them all: they are announced when it returns. */
        OK(MPI_Ssend(&go, 1, MPI_INT, 1, 23, MPI_COMM_WORLD));
        struct timespec t = {2, 0};
        while (nanosleep(&t, &t))
            ;
        OK(MPI_Waitall(NCOMP, sq, MPI_STATUSES_IGNORE));
        free(sq);
        free(v);
    } else if (t_rank == 1) {
        MPI_Request *rq = malloc(sizeof *rq * NCOMP);
        int *x = calloc(NCOMP, sizeof(int)), go = 0;
        OK(MPI_Recv(&go, 1, MPI_INT, 0, 23, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int j = 0; j < NCOMP; j++)
            OK(MPI_Irecv(&x[j], 1, MPI_INT, 0, 22, MPI_COMM_WORLD, &rq[j]));
        OK(MPI_Waitall(NCOMP, rq, MPI_STATUSES_IGNORE));
        for (int j = 0; j < NCOMP; j++)
            CHECK(x[j] == 17 * j + 8, "send %d of a computing sender came as %d", j, x[j]);
        free(rq);
        free(x);
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    if (argc > 1)
        nrecv = atoi(argv[1]);
    CHECK(t_size >= 2 && nrecv >= t_size, "needs 2 ranks or more and RECEIVES >= ranks");
    by_number(0);
    by_number(1);
    any_source();
    sync_sends();
    probe_each();
    cancel_many();
    expose_many();
    late_exposures();
    if (t_rank == 0)
        printf("manyrecv ok on %d ranks: %d receives\n", t_size, nrecv);
    MPI_Finalize();
    return 0;
}
