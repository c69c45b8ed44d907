/* Matched probes and MPI_Isendrecv on any number of ranks (2 or more).
 *
 * Every rank but 0 sends rank 0 messages from 0 bytes to 3 MiB (eager,
 * rendezvous whose announcement carries all or part of the data, and one
 * synchronous), some before and some after a pause so that rank 0 finds
 * some unexpected and waits for others.  Rank 0 takes each with
 * MPI_Mprobe or MPI_Improbe (ANY_SOURCE, ANY_TAG), checks that no probe
 * sees it again, receives it with MPI_Mrecv or MPI_Imrecv into a buffer
 * sized from MPI_Get_count and checks every byte.  Then: a message taken
 * is not the one a receive with the same selectors gets next; derived
 * receive types; truncation; MPI_PROC_NULL (MPI_MESSAGE_NO_PROC); messages
 * to oneself; a flood that flow control drains; MPI_Isendrecv and
 * MPI_Isendrecv_replace around a ring.  The library offers at most
 * MPI_THREAD_FUNNELED, so no threads.  Prints
 * "mprobe ok on N ranks". */
#include "mpitest.h"

static const int sizes[] = {0, 1, 100, 8192, 65536, 65537, 200000, 262144, 300001,
                            3 * 1048576 + 7};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))
#define SSEND_AT 6 /* sizes[SSEND_AT] goes by MPI_Ssend */

static void pause_ms(double ms)
{
    double end = MPI_Wtime() + ms / 1000;
    while (MPI_Wtime() < end)
        ;
}

static long seed_of(int src, int tag) { return src * 1000 + tag; }

/* Rank 0 has the message of (src, tag) in hand: nothing else may see it. */
static void unseen(int src, int tag)
{
    int flag;
    MPI_Status st;
    MPI_Message m = MPI_MESSAGE_NULL;
    OK(MPI_Iprobe(src, tag, MPI_COMM_WORLD, &flag, &st));
    CHECK(!flag, "Iprobe saw the message from %d tag %d a matched probe took", src, tag);
    OK(MPI_Improbe(src, tag, MPI_COMM_WORLD, &flag, &m, &st));
    CHECK(!flag, "Improbe saw the message from %d tag %d a matched probe took", src, tag);
}

static void every_size(void)
{
    int total = (t_size - 1) * NSIZES;
    if (t_rank) {
        unsigned char *b[NSIZES];
        MPI_Request rq[NSIZES];
        for (int i = 0; i < NSIZES; i++) {
            b[i] = malloc(sizes[i] ? (size_t)sizes[i] : 1);
            fill(b[i], sizes[i], seed_of(t_rank, i));
            rq[i] = MPI_REQUEST_NULL;
            if (i == NSIZES / 2)
                pause_ms(100); /* the rest come while rank 0 waits in a probe */
            if (i == SSEND_AT)
                OK(MPI_Ssend(b[i], sizes[i], MPI_BYTE, 0, i, MPI_COMM_WORLD));
            else
                OK(MPI_Isend(b[i], sizes[i], MPI_BYTE, 0, i, MPI_COMM_WORLD, &rq[i]));
        }
        OK(MPI_Waitall(NSIZES, rq, MPI_STATUSES_IGNORE));
        for (int i = 0; i < NSIZES; i++)
            free(b[i]);
        return;
    }
    int got[64][NSIZES];
    memset(got, 0, sizeof got);
    for (int k = 0; k < total; k++) {
        MPI_Message m = MPI_MESSAGE_NULL;
        MPI_Status st;
        if (k % 2) {
            OK(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &m, &st));
        } else {
            int flag = 0;
            while (!flag)
                OK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, &st));
        }
        CHECK(m != MPI_MESSAGE_NULL && m != MPI_MESSAGE_NO_PROC, "no message handle");
        int src = st.MPI_SOURCE, tag = st.MPI_TAG;
        CHECK(src > 0 && src < t_size && src < 64 && tag >= 0 && tag < NSIZES,
              "probe status %d/%d", src, tag);
        CHECK(!got[src][tag], "message %d/%d twice", src, tag);
        got[src][tag] = 1;
        int n = t_count(&st, MPI_BYTE);
        CHECK(n == sizes[tag], "probe count %d of message %d/%d (%d bytes)", n, src, tag,
              sizes[tag]);
        unseen(src, tag);
        unsigned char *r = malloc((size_t)n + 16);
        memset(r, 0xEE, (size_t)n + 16);
        MPI_Status rs;
        if (k % 3 == 0) {
            OK(MPI_Mrecv(r, n, MPI_BYTE, &m, &rs));
        } else {
            MPI_Request rq;
            OK(MPI_Imrecv(r, n, MPI_BYTE, &m, &rq));
            CHECK(m == MPI_MESSAGE_NULL, "Imrecv left the message handle");
            int done = 0;
            while (!done)
                OK(MPI_Test(&rq, &done, &rs));
        }
        CHECK(m == MPI_MESSAGE_NULL, "message handle not MPI_MESSAGE_NULL after the receive");
        CHECK(rs.MPI_SOURCE == src && rs.MPI_TAG == tag && t_count(&rs, MPI_BYTE) == n,
              "receive status %d/%d count %d of %d/%d", rs.MPI_SOURCE, rs.MPI_TAG,
              t_count(&rs, MPI_BYTE), src, tag);
        long bad = first_bad(r, n, seed_of(src, tag));
        CHECK(bad < 0, "byte %ld of the %d of message %d/%d wrong", bad, n, src, tag);
        CHECK(r[n] == 0xEE, "wrote past message %d/%d", src, tag);
        free(r);
    }
}

/* Many messages at once while rank 0 is away: more than its unexpected
 * space holds with a small TERN_MPI_UNEXPECTED (test_mpi_host.py), so
 * flow control drains some into the library's queue, maybe while still
 * arriving; matched probes take them from there too.  Per sender they
 * come in order (MPI's non-overtaking rule holds for matched probes). */
#define FLOOD 300
static int flood_size(int i) { return i % 50 == 49 ? 100000 + i : (i * 37) % 3000; }

static void flood(void)
{
    if (t_rank) {
        unsigned char *b[FLOOD];
        MPI_Request rq[FLOOD];
        for (int i = 0; i < FLOOD; i++) {
            b[i] = malloc((size_t)flood_size(i) + 1);
            fill(b[i], flood_size(i), seed_of(t_rank, 1000 + i));
            OK(MPI_Isend(b[i], flood_size(i), MPI_BYTE, 0, 1000 + i, MPI_COMM_WORLD, &rq[i]));
        }
        OK(MPI_Waitall(FLOOD, rq, MPI_STATUSES_IGNORE));
        for (int i = 0; i < FLOOD; i++)
            free(b[i]);
        return;
    }
    pause_ms(300);
    int next[64] = {0};
    unsigned char *r = malloc(200000);
    for (int k = 0; k < (t_size - 1) * FLOOD; k++) {
        MPI_Message m;
        MPI_Status st;
        OK(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &m, &st));
        int src = st.MPI_SOURCE, i = st.MPI_TAG - 1000, n = t_count(&st, MPI_BYTE);
        CHECK(src > 0 && src < t_size && i == next[src], "flood: from %d tag %d, want tag %d",
              src, st.MPI_TAG, 1000 + next[src]);
        CHECK(n == flood_size(i), "flood: %d bytes, sent %d", n, flood_size(i));
        next[src]++;
        OK(MPI_Mrecv(r, n, MPI_BYTE, &m, &st));
        CHECK(first_bad(r, n, seed_of(src, 1000 + i)) < 0, "flood: message %d/%d wrong", src, i);
    }
    free(r);
}

/* Two messages with the same envelope from each sender, A then B, for
 * sizes small and large: rank 0 takes A with a matched probe, and a
 * receive (or probe) with the same selectors then gets B, not A. */
static void next_one_is_matched(void)
{
    static const int pairs[][2] = {{10, 20}, {300001, 50}, {60, 1048576}, {500000, 700000}};
    const int np = (int)(sizeof pairs / sizeof pairs[0]);
    for (int p = 0; p < np; p++) {
        int tag = 500 + p;
        if (t_rank) {
            /* Nonblocking: A, taken but not received yet, may be a
             * rendezvous message its send waits for. */
            unsigned char *b[2];
            MPI_Request rq[2];
            for (int ab = 0; ab < 2; ab++) {
                int n = pairs[p][ab];
                b[ab] = malloc((size_t)n);
                fill(b[ab], n, seed_of(t_rank, tag) + ab);
                OK(MPI_Isend(b[ab], n, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &rq[ab]));
            }
            OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
            free(b[0]);
            free(b[1]);
            continue;
        }
        for (int src = 1; src < t_size; src++) {
            MPI_Message m;
            MPI_Status st;
            OK(MPI_Mprobe(src, tag, MPI_COMM_WORLD, &m, &st));
            CHECK(t_count(&st, MPI_BYTE) == pairs[p][0], "A's count %d",
                  t_count(&st, MPI_BYTE));
            /* B: the probe and the receive see it, not A. */
            int flag = 0;
            while (!flag)
                OK(MPI_Iprobe(src, tag, MPI_COMM_WORLD, &flag, &st));
            CHECK(t_count(&st, MPI_BYTE) == pairs[p][1], "Iprobe after Mprobe saw %d bytes",
                  t_count(&st, MPI_BYTE));
            int nb = pairs[p][1], na = pairs[p][0];
            unsigned char *b = malloc((size_t)nb), *a = malloc((size_t)na);
            OK(MPI_Recv(b, nb, MPI_BYTE, src, tag, MPI_COMM_WORLD, &st));
            CHECK(t_count(&st, MPI_BYTE) == nb, "Recv after Mprobe got %d bytes",
                  t_count(&st, MPI_BYTE));
            CHECK(first_bad(b, nb, seed_of(src, tag) + 1) < 0, "Recv after Mprobe: B wrong");
            OK(MPI_Mrecv(a, na, MPI_BYTE, &m, &st));
            CHECK(t_count(&st, MPI_BYTE) == na && first_bad(a, na, seed_of(src, tag)) < 0,
                  "Mrecv of A wrong");
            free(a);
            free(b);
        }
    }
}

/* Derived receive types, truncation, MPI_PROC_NULL, oneself. */
static void types_truncation_procnull_self(void)
{
    const int nint = 40000; /* 160000 bytes: rendezvous */
    int tag = 600;
    if (t_rank == 1) {
        int *v = malloc(sizeof(int) * (size_t)nint);
        for (int i = 0; i < nint; i++)
            v[i] = i * 3 + 1;
        OK(MPI_Send(v, nint, MPI_INT, 0, tag, MPI_COMM_WORLD));
        OK(MPI_Send(v, 100, MPI_INT, 0, tag + 1, MPI_COMM_WORLD));
        OK(MPI_Send(v, nint, MPI_INT, 0, tag + 2, MPI_COMM_WORLD));
        free(v);
    }
    if (t_rank == 0) {
        MPI_Message m;
        MPI_Status st;
        /* Into every other int of a buffer twice as long. */
        OK(MPI_Mprobe(1, tag, MPI_COMM_WORLD, &m, &st));
        int n = t_count(&st, MPI_INT);
        CHECK(n == nint, "count %d ints", n);
        MPI_Datatype every2;
        OK(MPI_Type_vector(n, 1, 2, MPI_INT, &every2));
        OK(MPI_Type_commit(&every2));
        int *w = malloc(sizeof(int) * 2 * (size_t)n);
        for (int i = 0; i < 2 * n; i++)
            w[i] = -5;
        MPI_Request rq;
        OK(MPI_Imrecv(w, 1, every2, &m, &rq));
        OK(MPI_Type_free(&every2)); /* the receive holds it */
        OK(MPI_Wait(&rq, &st));
        CHECK(t_count(&st, MPI_INT) == n && st.MPI_SOURCE == 1 && st.MPI_TAG == tag,
              "vector receive status");
        for (int i = 0; i < n; i++)
            CHECK(w[2 * i] == i * 3 + 1 && w[2 * i + 1] == -5, "vector receive int %d", i);
        free(w);
        /* Truncation, eager and rendezvous: an error, what fits delivered. */
        OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        for (int k = 1; k <= 2; k++) {
            int t[60];
            memset(t, 0, sizeof t);
            OK(MPI_Mprobe(1, tag + k, MPI_COMM_WORLD, &m, &st));
            st.MPI_ERROR = 4242; /* a single completion leaves it (MPI-3.1 3.2.5) */
            int rc = MPI_Mrecv(t, 50, MPI_INT, &m, &st);
            int cls;
            MPI_Error_class(rc, &cls);
            CHECK(cls == MPI_ERR_TRUNCATE && st.MPI_ERROR == 4242,
                  "truncated Mrecv gave %d, status error %d", rc, st.MPI_ERROR);
            CHECK(m == MPI_MESSAGE_NULL, "truncated Mrecv left the handle");
            for (int i = 0; i < 60; i++)
                CHECK(t[i] == (i < 50 ? i * 3 + 1 : 0), "truncated int %d = %d", i, t[i]);
        }
        /* A bad handle is an error, not a crash. */
        MPI_Message bad = MPI_MESSAGE_NULL;
        CHECK(MPI_Mrecv(NULL, 0, MPI_INT, &bad, MPI_STATUS_IGNORE) != MPI_SUCCESS,
              "Mrecv of MPI_MESSAGE_NULL succeeded");
        bad = (MPI_Message)0x12345;
        CHECK(MPI_Mrecv(NULL, 0, MPI_INT, &bad, MPI_STATUS_IGNORE) != MPI_SUCCESS,
              "Mrecv of a bad handle succeeded");
        OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    }
    /* MPI_PROC_NULL: MPI_MESSAGE_NO_PROC, whose receive completes at once. */
    MPI_Message m;
    MPI_Status st;
    int flag = 0, x = 77;
    OK(MPI_Mprobe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &m, &st));
    CHECK(m == MPI_MESSAGE_NO_PROC && st.MPI_SOURCE == MPI_PROC_NULL &&
              st.MPI_TAG == MPI_ANY_TAG && t_count(&st, MPI_INT) == 0,
          "Mprobe of MPI_PROC_NULL");
    OK(MPI_Mrecv(&x, 1, MPI_INT, &m, &st));
    CHECK(m == MPI_MESSAGE_NULL && st.MPI_SOURCE == MPI_PROC_NULL && x == 77 &&
              t_count(&st, MPI_INT) == 0, "Mrecv of MPI_MESSAGE_NO_PROC");
    OK(MPI_Improbe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, &st));
    CHECK(flag && m == MPI_MESSAGE_NO_PROC, "Improbe of MPI_PROC_NULL");
    MPI_Request rq;
    OK(MPI_Imrecv(&x, 1, MPI_INT, &m, &rq));
    OK(MPI_Wait(&rq, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && x == 77, "Imrecv of MPI_MESSAGE_NO_PROC");
    /* To oneself, small and large, through a duplicate communicator. */
    MPI_Comm dup;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    static const int self_sizes[] = {5, 2000000};
    for (int i = 0; i < 2; i++) {
        int n = self_sizes[i];
        unsigned char *s = malloc((size_t)n), *r = malloc((size_t)n);
        fill(s, n, 77 + i);
        OK(MPI_Isend(s, n, MPI_BYTE, t_rank, 9, dup, &rq));
        OK(MPI_Iprobe(MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &flag, &st));
        CHECK(!flag, "a message on another communicator matched");
        OK(MPI_Mprobe(MPI_ANY_SOURCE, 9, dup, &m, &st));
        CHECK(st.MPI_SOURCE == t_rank && t_count(&st, MPI_BYTE) == n, "self Mprobe");
        OK(MPI_Iprobe(t_rank, 9, dup, &flag, &st));
        CHECK(!flag, "the message to oneself a matched probe took was seen again");
        OK(MPI_Mrecv(r, n, MPI_BYTE, &m, &st));
        OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        CHECK(first_bad(r, n, 77 + i) < 0, "self Mrecv data");
        free(s);
        free(r);
    }
    OK(MPI_Comm_free(&dup));
}

static void isendrecv_ring(void)
{
    int right = (t_rank + 1) % t_size, left = (t_rank - 1 + t_size) % t_size;
    static const int ring[] = {0, 3, 65536, 200001, 2 * 1048576 + 3};
    for (int i = 0; i < 5; i++) {
        int n = ring[i];
        unsigned char *s = malloc((size_t)n + 1), *r = malloc((size_t)n + 16);
        fill(s, n, t_rank * 10 + i);
        memset(r, 0xEE, (size_t)n + 16);
        MPI_Request rq;
        MPI_Status st;
        OK(MPI_Isendrecv(s, n, MPI_BYTE, right, 700 + i, r, n + 16, MPI_BYTE, left, 700 + i,
                         MPI_COMM_WORLD, &rq));
        if (i % 2) {
            OK(MPI_Wait(&rq, &st));
        } else {
            int done = 0;
            while (!done)
                OK(MPI_Test(&rq, &done, &st));
        }
        CHECK(rq == MPI_REQUEST_NULL, "Isendrecv request not freed");
        CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 700 + i && t_count(&st, MPI_BYTE) == n,
              "Isendrecv status %d/%d count %d", st.MPI_SOURCE, st.MPI_TAG,
              t_count(&st, MPI_BYTE));
        CHECK(first_bad(r, n, left * 10 + i) < 0 && r[n] == 0xEE, "Isendrecv data, %d bytes",
              n);
        free(s);
        free(r);
    }
    /* Replace, through a vector type (every other double), two at once
     * (tags apart) completed by Waitall. */
    const int nd = 100000;
    MPI_Datatype every2;
    OK(MPI_Type_vector(nd, 1, 2, MPI_DOUBLE, &every2));
    OK(MPI_Type_commit(&every2));
    double *a = malloc(sizeof(double) * 2 * nd), *b = malloc(sizeof(double) * 2 * nd);
    for (int i = 0; i < 2 * nd; i++) {
        a[i] = i % 2 ? -1 : t_rank * 1e6 + i;
        b[i] = i % 2 ? -2 : t_rank * 1e6 - i;
    }
    MPI_Request rq[2];
    MPI_Status st[2];
    OK(MPI_Isendrecv_replace(a, 1, every2, right, 800, left, 800, MPI_COMM_WORLD, &rq[0]));
    OK(MPI_Isendrecv_replace(b, nd, MPI_DOUBLE, left, 801, right, 801, MPI_COMM_WORLD, &rq[1]));
    OK(MPI_Type_free(&every2));
    OK(MPI_Waitall(2, rq, st));
    CHECK(st[0].MPI_SOURCE == left && st[1].MPI_SOURCE == right &&
              t_count(&st[0], MPI_DOUBLE) == nd && t_count(&st[1], MPI_DOUBLE) == nd,
          "Isendrecv_replace statuses");
    for (int i = 0; i < 2 * nd; i++) {
        CHECK(a[i] == (i % 2 ? -1 : left * 1e6 + i), "replace (vector) double %d", i);
        /* b's first nd doubles came from the right's first nd. */
        int from = i < nd ? right : t_rank;
        double want = i % 2 ? -2 : from * 1e6 - i;
        CHECK(b[i] == want, "replace (contiguous) double %d = %g, want %g", i, b[i], want);
    }
    free(a);
    free(b);
    /* MPI_PROC_NULL halves complete. */
    int x = 5, y = 6;
    MPI_Request r1;
    MPI_Status s1;
    OK(MPI_Isendrecv(&x, 1, MPI_INT, MPI_PROC_NULL, 1, &y, 1, MPI_INT, MPI_PROC_NULL, 1,
                     MPI_COMM_WORLD, &r1));
    OK(MPI_Wait(&r1, &s1));
    CHECK(s1.MPI_SOURCE == MPI_PROC_NULL && y == 6 && t_count(&s1, MPI_INT) == 0,
          "Isendrecv with MPI_PROC_NULL");
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    CHECK(t_size >= 2 && t_size <= 64, "needs 2..64 ranks");
    every_size();
    OK(MPI_Barrier(MPI_COMM_WORLD));
    flood();
    OK(MPI_Barrier(MPI_COMM_WORLD));
    next_one_is_matched();
    OK(MPI_Barrier(MPI_COMM_WORLD));
    types_truncation_procnull_self();
    OK(MPI_Barrier(MPI_COMM_WORLD));
    isendrecv_ring();
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (t_rank == 0)
        printf("mprobe ok on %d ranks\n", t_size);
    OK(MPI_Finalize());
    return 0;
}
