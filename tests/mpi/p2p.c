/* Point-to-point semantics on any number of ranks (2 or more): data and
 * statuses for eager and rendezvous sizes in every send mode, wildcards,
 * MPI_PROC_NULL, pair-wise order, the wait and test families, persistent
 * requests (also each mode started alone), probes, cancel, Request_free,
 * Sendrecv(_replace), messages to oneself, synchronous sends that wait for
 * their match, MPI_Init_thread's FUNNELED level, generalized requests (one
 * completed by another thread).  Prints "p2p ok on N ranks". */
#include <pthread.h>
#include <time.h>

#include "mpitest.h"

static const int sizes[] = {0, 1, 7, 256, 8191, 8192, 8193, 65536, 300001};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

static void modes_and_sizes(void)
{
    /* Ring: each rank sends to the right, receives from the left. */
    int right = (t_rank + 1) % t_size, left = (t_rank - 1 + t_size) % t_size;
    unsigned char *s = malloc(300001), *r = malloc(300001 + 16);
    char bsbuf[400000];
    OK(MPI_Buffer_attach(bsbuf, sizeof bsbuf));
    for (int mode = 0; mode < 4; mode++)
        for (int i = 0; i < NSIZES; i++) {
            int n = sizes[i], tag = 100 * mode + i;
            fill(s, n, t_rank * 1000 + tag);
            memset(r, 0xEE, (size_t)n + 16);
            MPI_Request rq;
            OK(MPI_Irecv(r, n + 16, MPI_BYTE, left, tag, MPI_COMM_WORLD, &rq));
            OK(MPI_Barrier(MPI_COMM_WORLD)); /* so Rsend finds the receive posted */
            if (mode == 0)
                OK(MPI_Send(s, n, MPI_BYTE, right, tag, MPI_COMM_WORLD));
            else if (mode == 1)
                OK(MPI_Ssend(s, n, MPI_BYTE, right, tag, MPI_COMM_WORLD));
            else if (mode == 2)
                OK(MPI_Rsend(s, n, MPI_BYTE, right, tag, MPI_COMM_WORLD));
            else
                OK(MPI_Bsend(s, n, MPI_BYTE, right, tag, MPI_COMM_WORLD));
            MPI_Status st;
            OK(MPI_Wait(&rq, &st));
            CHECK(rq == MPI_REQUEST_NULL, "request not freed by Wait");
            CHECK(st.MPI_SOURCE == left && st.MPI_TAG == tag, "status %d/%d", st.MPI_SOURCE,
                  st.MPI_TAG);
            CHECK(t_count(&st, MPI_BYTE) == n, "count %d, sent %d (mode %d)",
                  t_count(&st, MPI_BYTE), n, mode);
            long bad = first_bad(r, n, left * 1000 + tag);
            CHECK(bad < 0, "byte %ld of %d wrong (mode %d)", bad, n, mode);
            CHECK(r[n] == 0xEE, "wrote past the message");
        }
    void *p;
    int sz;
    OK(MPI_Buffer_detach(&p, &sz));
    CHECK(p == bsbuf && sz == (int)sizeof bsbuf, "detach gave %p %d", p, sz);
    free(s);
    free(r);
}

static void wildcards_and_order(void)
{
    /* Every rank but 0 sends 50 messages with tags 0..49 to rank 0;
     * rank 0 takes them with ANY_SOURCE / ANY_TAG and checks each
     * sender's messages come in order. */
    const int per = 50;
    if (t_rank) {
        for (int k = 0; k < per; k++) {
            int v[2] = {t_rank, k};
            OK(MPI_Send(v, 2, MPI_INT, 0, k, MPI_COMM_WORLD));
        }
    } else {
        int *next = calloc((size_t)t_size, sizeof(int));
        for (int k = 0; k < per * (t_size - 1); k++) {
            int v[2];
            MPI_Status st;
            OK(MPI_Recv(v, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            CHECK(st.MPI_SOURCE == v[0] && st.MPI_TAG == v[1], "status %d %d for %d %d",
                  st.MPI_SOURCE, st.MPI_TAG, v[0], v[1]);
            CHECK(v[1] == next[v[0]], "from %d: message %d came before %d", v[0], v[1],
                  next[v[0]]);
            next[v[0]]++;
            CHECK(t_count(&st, MPI_INT) == 2, "count");
        }
        free(next);
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    /* A specific tag skips older messages with other tags. */
    if (t_rank == 1) {
        int a = 1, b = 2;
        OK(MPI_Send(&a, 1, MPI_INT, 0, 7, MPI_COMM_WORLD));
        OK(MPI_Send(&b, 1, MPI_INT, 0, 8, MPI_COMM_WORLD));
    } else if (t_rank == 0) {
        int x;
        MPI_Status st;
        OK(MPI_Recv(&x, 1, MPI_INT, 1, 8, MPI_COMM_WORLD, &st));
        CHECK(x == 2 && st.MPI_TAG == 8, "tag 8 got %d", x);
        OK(MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &st));
        CHECK(x == 1 && st.MPI_SOURCE == 1, "tag 7 got %d", x);
    }
    /* MPI_PROC_NULL: complete at once, status says so. */
    MPI_Status st;
    int x = 5;
    OK(MPI_Send(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    OK(MPI_Recv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG &&
              t_count(&st, MPI_INT) == 0 && x == 5, "PROC_NULL status");
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void families(void)
{
    /* Everyone exchanges with everyone: Irecv from all, Isend to all. */
    int n = t_size;
    MPI_Request *rq = malloc(sizeof *rq * 2 * (size_t)n);
    int *in = malloc(sizeof(int) * (size_t)n), *out = malloc(sizeof(int) * (size_t)n);
    MPI_Status *st = malloc(sizeof *st * 2 * (size_t)n);
    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < n; i++) {
            in[i] = -1;
            out[i] = t_rank * 100 + i + round;
            OK(MPI_Irecv(&in[i], 1, MPI_INT, i, 5, MPI_COMM_WORLD, &rq[i]));
        }
        for (int i = 0; i < n; i++)
            OK(MPI_Isend(&out[i], 1, MPI_INT, i, 5, MPI_COMM_WORLD, &rq[n + i]));
        if (round == 0) {
            OK(MPI_Waitall(2 * n, rq, st));
        } else if (round == 1) {
            for (int k = 0; k < 2 * n; k++) {
                int idx;
                OK(MPI_Waitany(2 * n, rq, &idx, &st[0]));
                CHECK(idx >= 0 && idx < 2 * n && rq[idx] == MPI_REQUEST_NULL, "waitany %d",
                      idx);
                if (idx < n)
                    CHECK(st[0].MPI_SOURCE == idx, "waitany source");
            }
            int idx;
            OK(MPI_Waitany(2 * n, rq, &idx, &st[0]));
            CHECK(idx == MPI_UNDEFINED, "waitany with nothing active gave %d", idx);
        } else if (round == 2) {
            int done = 0, outc, idx[2 * n];
            while (done < 2 * n) {
                OK(MPI_Waitsome(2 * n, rq, &outc, idx, st));
                CHECK(outc >= 1, "waitsome gave %d", outc);
                done += outc;
            }
            OK(MPI_Waitsome(2 * n, rq, &outc, idx, st));
            CHECK(outc == MPI_UNDEFINED, "waitsome with nothing active");
        } else {
            int flag = 0;
            while (!flag)
                OK(MPI_Testall(2 * n, rq, &flag, MPI_STATUSES_IGNORE));
            for (int k = 0; k < 2 * n; k++)
                CHECK(rq[k] == MPI_REQUEST_NULL, "testall left a request");
        }
        for (int i = 0; i < n; i++)
            CHECK(in[i] == i * 100 + t_rank + round, "round %d from %d: %d", round, i, in[i]);
    }
    /* Test on one request until done; Testany. */
    int a = t_rank, b = -1, flag = 0, idx;
    MPI_Request r2[2];
    int right = (t_rank + 1) % n, left = (t_rank - 1 + n) % n;
    OK(MPI_Irecv(&b, 1, MPI_INT, left, 9, MPI_COMM_WORLD, &r2[0]));
    OK(MPI_Isend(&a, 1, MPI_INT, right, 9, MPI_COMM_WORLD, &r2[1]));
    while (!flag)
        OK(MPI_Test(&r2[0], &flag, &st[0]));
    CHECK(b == left && st[0].MPI_SOURCE == left, "test got %d", b);
    flag = 0;
    while (!flag)
        OK(MPI_Testany(2, r2, &idx, &flag, MPI_STATUS_IGNORE));
    CHECK(idx == 1 || idx == MPI_UNDEFINED, "testany %d", idx);
    OK(MPI_Wait(&r2[1], MPI_STATUS_IGNORE));
    free(rq);
    free(in);
    free(out);
    free(st);
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void persistent(void)
{
    int right = (t_rank + 1) % t_size, left = (t_rank - 1 + t_size) % t_size;
    double sv[100], rv[100];
    MPI_Request rq[2];
    OK(MPI_Recv_init(rv, 100, MPI_DOUBLE, left, 11, MPI_COMM_WORLD, &rq[0]));
    OK(MPI_Send_init(sv, 100, MPI_DOUBLE, right, 11, MPI_COMM_WORLD, &rq[1]));
    for (int it = 0; it < 10; it++) {
        for (int i = 0; i < 100; i++)
            sv[i] = t_rank + it * 0.5 + i;
        OK(MPI_Startall(2, rq));
        MPI_Status st[2];
        OK(MPI_Waitall(2, rq, st));
        CHECK(rq[0] != MPI_REQUEST_NULL, "a persistent request was freed by Waitall");
        for (int i = 0; i < 100; i++)
            CHECK(rv[i] == left + it * 0.5 + i, "persistent iteration %d", it);
    }
    /* An inactive persistent request completes at once with an empty status. */
    MPI_Status st;
    OK(MPI_Wait(&rq[0], &st));
    CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG, "empty status");
    OK(MPI_Request_free(&rq[0]));
    OK(MPI_Request_free(&rq[1]));
    CHECK(rq[0] == MPI_REQUEST_NULL, "Request_free");
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void probes_cancel_self(void)
{
    /* Probe tells source, tag and size before the receive. */
    if (t_rank == 1) {
        double d[37];
        for (int i = 0; i < 37; i++)
            d[i] = i;
        char *big = calloc(1, 70000);
        OK(MPI_Send(d, 37, MPI_DOUBLE, 0, 21, MPI_COMM_WORLD));
        OK(MPI_Send(big, 70000, MPI_BYTE, 0, 22, MPI_COMM_WORLD)); /* rendezvous size */
        free(big);
    } else if (t_rank == 0) {
        MPI_Status st;
        int flag = 0;
        while (!flag)
            OK(MPI_Iprobe(MPI_ANY_SOURCE, 21, MPI_COMM_WORLD, &flag, &st));
        CHECK(st.MPI_SOURCE == 1 && st.MPI_TAG == 21 && t_count(&st, MPI_DOUBLE) == 37,
              "iprobe status");
        OK(MPI_Probe(1, 22, MPI_COMM_WORLD, &st));
        CHECK(t_count(&st, MPI_BYTE) == 70000 && t_count(&st, MPI_DOUBLE) == 8750,
              "probe count %d", t_count(&st, MPI_BYTE));
        char *buf = malloc(70000);
        double d[37];
        OK(MPI_Recv(d, 37, MPI_DOUBLE, 1, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Recv(buf, 70000, MPI_BYTE, 1, 22, MPI_COMM_WORLD, &st));
        CHECK(d[36] == 36.0 && t_count(&st, MPI_BYTE) == 70000, "probed messages");
        free(buf);
        OK(MPI_Iprobe(MPI_ANY_SOURCE, 23, MPI_COMM_WORLD, &flag, &st));
        CHECK(!flag, "iprobe found a message nobody sent");
    }
    /* Cancel a receive nothing matches; then the same buffer works. */
    int x = -1, flag;
    MPI_Request rq;
    MPI_Status st;
    OK(MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &rq));
    OK(MPI_Cancel(&rq));
    OK(MPI_Wait(&rq, &st));
    OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag && x == -1, "cancelled receive: flag %d x %d", flag, x);
    /* Request_free on a send: it still arrives. */
    int right = (t_rank + 1) % t_size, left = (t_rank - 1 + t_size) % t_size, v = t_rank;
    OK(MPI_Isend(&v, 1, MPI_INT, right, 31, MPI_COMM_WORLD, &rq));
    OK(MPI_Request_free(&rq));
    OK(MPI_Recv(&x, 1, MPI_INT, left, 31, MPI_COMM_WORLD, &st));
    CHECK(x == left, "freed send's message %d", x);
    /* Sendrecv and Sendrecv_replace around the ring. */
    int y;
    OK(MPI_Sendrecv(&v, 1, MPI_INT, right, 32, &y, 1, MPI_INT, left, 32, MPI_COMM_WORLD, &st));
    CHECK(y == left && st.MPI_SOURCE == left, "sendrecv %d", y);
    long big[3000];
    for (int i = 0; i < 3000; i++)
        big[i] = t_rank * 10000L + i;
    OK(MPI_Sendrecv_replace(big, 3000, MPI_LONG, right, 33, left, 33, MPI_COMM_WORLD, &st));
    CHECK(big[0] == left * 10000L && big[2999] == left * 10000L + 2999, "sendrecv_replace");
    /* To oneself: blocking send first (buffered by the library), also big. */
    char *me = malloc(100000), *back = malloc(100000);
    fill((unsigned char *)me, 100000, 77);
    OK(MPI_Send(me, 100000, MPI_CHAR, t_rank, 40, MPI_COMM_WORLD));
    OK(MPI_Send(me, 10, MPI_CHAR, t_rank, 41, MPI_COMM_WORLD));
    OK(MPI_Recv(back, 10, MPI_CHAR, t_rank, 41, MPI_COMM_WORLD, &st));
    OK(MPI_Recv(back, 100000, MPI_CHAR, MPI_ANY_SOURCE, 40, MPI_COMM_WORLD, &st));
    CHECK(first_bad((unsigned char *)back, 100000, 77) < 0 && st.MPI_SOURCE == t_rank,
          "self message");
    /* MPI_COMM_SELF */
    OK(MPI_Sendrecv(&v, 1, MPI_INT, 0, 1, &y, 1, MPI_INT, 0, 1, MPI_COMM_SELF, &st));
    CHECK(y == t_rank && st.MPI_SOURCE == 0, "COMM_SELF");
    free(me);
    free(back);
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* A synchronous send completes only once the receive has matched it, for
 * an eager size as for a rendezvous one: rank 1 posts its receive only
 * after rank 0 has seen its MPI_Issend incomplete for 20 ms and told it
 * to.  Then persistent requests of every send mode, each started alone
 * with MPI_Start, three times over. */
static void synchronous(void)
{
    static const int ssizes[] = {8, 65536};
    for (int k = 0; k < 2; k++) {
        int sz = ssizes[k];
        unsigned char *b = malloc((size_t)sz);
        if (t_rank == 0) {
            fill(b, sz, 500 + k);
            MPI_Request rq;
            int flag = 0, go = 1;
            OK(MPI_Issend(b, sz, MPI_BYTE, 1, 50 + k, MPI_COMM_WORLD, &rq));
            double t0 = MPI_Wtime();
            while (MPI_Wtime() - t0 < 0.02) {
                OK(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
                CHECK(!flag, "Issend of %d bytes completed before its receive was posted", sz);
            }
            OK(MPI_Send(&go, 1, MPI_INT, 1, 60 + k, MPI_COMM_WORLD));
            OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        } else if (t_rank == 1) {
            int go;
            MPI_Status st;
            OK(MPI_Recv(&go, 1, MPI_INT, 0, 60 + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            OK(MPI_Recv(b, sz, MPI_BYTE, 0, 50 + k, MPI_COMM_WORLD, &st));
            CHECK(t_count(&st, MPI_BYTE) == sz && first_bad(b, sz, 500 + k) < 0,
                  "Issend's %d bytes", sz);
        }
        free(b);
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));

    int right = (t_rank + 1) % t_size, left = (t_rank - 1 + t_size) % t_size;
    char bsbuf[MPI_BSEND_OVERHEAD + 64];
    OK(MPI_Buffer_attach(bsbuf, sizeof bsbuf));
    double sv = 0, rv;
    MPI_Request sr[3], rr;
    OK(MPI_Ssend_init(&sv, 1, MPI_DOUBLE, right, 70, MPI_COMM_WORLD, &sr[0]));
    OK(MPI_Bsend_init(&sv, 1, MPI_DOUBLE, right, 71, MPI_COMM_WORLD, &sr[1]));
    OK(MPI_Rsend_init(&sv, 1, MPI_DOUBLE, right, 72, MPI_COMM_WORLD, &sr[2]));
    for (int m = 0; m < 3; m++)
        for (int it = 0; it < 3; it++) {
            OK(MPI_Irecv(&rv, 1, MPI_DOUBLE, left, 70 + m, MPI_COMM_WORLD, &rr));
            OK(MPI_Barrier(MPI_COMM_WORLD)); /* Rsend needs the receive posted */
            sv = t_rank * 10 + m + it * 0.25;
            OK(MPI_Start(&sr[m]));
            OK(MPI_Wait(&sr[m], MPI_STATUS_IGNORE));
            CHECK(sr[m] != MPI_REQUEST_NULL, "Wait freed a persistent request");
            MPI_Status st;
            OK(MPI_Wait(&rr, &st));
            CHECK(rv == left * 10 + m + it * 0.25 && st.MPI_TAG == 70 + m,
                  "persistent mode %d round %d: %g", m, it, rv);
        }
    for (int m = 0; m < 3; m++)
        OK(MPI_Request_free(&sr[m]));
    void *p;
    int sz;
    OK(MPI_Buffer_detach(&p, &sz));
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* MPI_THREAD_FUNNELED: what was asked is what is provided (comm.c checks
 * which thread is the main one: a rank of `yod -ppn` may have no second
 * thread, and this program also runs there). */
static void thread_level(void)
{
    int provided = -1, flag = -1;
    OK(MPI_Query_thread(&provided));
    CHECK(provided == MPI_THREAD_FUNNELED, "Query_thread gave %d", provided);
    OK(MPI_Is_thread_main(&flag));
    CHECK(flag == 1, "Is_thread_main in the main thread gave %d", flag);
    int version = 0, subversion = -1;
    OK(MPI_Get_version(&version, &subversion));
    CHECK(version == 3 && subversion == 1 && version == MPI_VERSION &&
              subversion == MPI_SUBVERSION, "Get_version gave %d.%d", version, subversion);
}

/* Generalized requests: one completed at once, one by another thread
 * while this one waits in MPI_Wait; the query function fills the status
 * (source, tag, 3 doubles), the free function runs once each, the cancel
 * function is told whether the operation had completed. */
struct greq_state {
    int queried, freed, cancelled_complete;
    volatile int value;
    MPI_Request req;
};

static int greq_query(void *extra, MPI_Status *st)
{
    struct greq_state *g = extra;
    g->queried++;
    st->MPI_SOURCE = 42;
    st->MPI_TAG = 7;
    MPI_Status_set_cancelled(st, 0);
    MPI_Status_set_elements(st, MPI_DOUBLE, 3);
    return MPI_SUCCESS;
}

static int greq_free(void *extra)
{
    ((struct greq_state *)extra)->freed++;
    return MPI_SUCCESS;
}

static int greq_cancel(void *extra, int complete)
{
    ((struct greq_state *)extra)->cancelled_complete = complete ? 1 : 2;
    return MPI_SUCCESS;
}

static void *greq_worker(void *arg)
{
    struct greq_state *g = arg;
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
    g->value = 1234;
    MPI_Grequest_complete(g->req);
    return NULL;
}

static void generalized(void)
{
    struct greq_state a = {0}, b = {0};
    MPI_Status st;
    int flag = 1, n = -1;
    OK(MPI_Grequest_start(greq_query, greq_free, greq_cancel, &a, &a.req));
    OK(MPI_Test(&a.req, &flag, &st));
    CHECK(!flag && a.queried == 0, "a generalized request was complete before its end");
    OK(MPI_Cancel(&a.req));
    CHECK(a.cancelled_complete == 2, "cancel function told %d", a.cancelled_complete);
    OK(MPI_Grequest_complete(a.req));
    OK(MPI_Wait(&a.req, &st));
    OK(MPI_Get_count(&st, MPI_DOUBLE, &n));
    CHECK(a.req == MPI_REQUEST_NULL && a.queried == 1 && a.freed == 1 && st.MPI_SOURCE == 42 &&
              st.MPI_TAG == 7 && n == 3,
          "generalized request: queried %d freed %d source %d count %d", a.queried, a.freed,
          st.MPI_SOURCE, n);
    pthread_t th;
    OK(MPI_Grequest_start(greq_query, greq_free, greq_cancel, &b, &b.req));
    CHECK(pthread_create(&th, NULL, greq_worker, &b) == 0, "pthread_create");
    MPI_Request r = b.req;
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(b.value == 1234 && b.queried == 1 && b.freed == 1,
          "completed by a thread: value %d queried %d freed %d", b.value, b.queried, b.freed);
    pthread_join(th, NULL);
}

int main(int argc, char **argv)
{
    int provided = -1;
    OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided));
    CHECK(provided == MPI_THREAD_FUNNELED, "Init_thread FUNNELED provided %d", provided);
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &t_rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &t_size));
    CHECK(t_size >= 2, "needs 2 ranks or more");
    int flag;
    OK(MPI_Initialized(&flag));
    CHECK(flag, "Initialized");
    thread_level();
    modes_and_sizes();
    wildcards_and_order();
    families();
    persistent();
    probes_cancel_self();
    synchronous();
    generalized();
    double t0 = MPI_Wtime();
    CHECK(MPI_Wtick() > 0 && MPI_Wtick() < 0.01 && MPI_Wtime() >= t0, "Wtime/Wtick");
    char name[MPI_MAX_PROCESSOR_NAME];
    int len;
    OK(MPI_Get_processor_name(name, &len));
    CHECK(len > 0 && (int)strlen(name) == len, "processor name");
    if (t_rank == 0)
        printf("p2p ok on %d ranks (rank 0 on %s)\n", t_size, name);
    OK(MPI_Finalize());
    OK(MPI_Finalized(&flag));
    CHECK(flag, "Finalized");
    return 0;
}
