/*
 * MPI-IO's shared file pointer (MPI-3.1 13.4.4): one position per open
 * file that every rank's read_shared/write_shared moves.
 *
 * Rank 0 of the file's private communicator keeps it.  Another rank asks
 * it to add n etypes and answer the position before (a message on that
 * communicator, which no program traffic meets); rank 0 answers whenever
 * it makes progress in any MPI call (mpi_progress.c), so the accesses are
 * served in the order they reach it.  A lock file, as ROMIO uses, would not
 * do on a Tern node: every rank's file calls go through the same file
 * server process, whose locks never exclude each other.  What this asks of
 * a program: rank 0 answers only from inside MPI calls.
 *
 * The collective forms (read_ordered, write_ordered, seek_shared) agree in
 * one allgather: each rank's count and rank 0's position, so rank r's data
 * goes after ranks 0..r-1's, then the bytes move collectively.
 */
#include <stdlib.h>

#include "mpi_impl.h"

#define MAX_SHARED MPI_FILE_SLOTS
/* Tags on the file's private communicator (the program has none there). */
#define ASK 0x7FFFFF01
#define ANSWER 0x7FFFFF02

static struct shared {
    bool open;
    MPI_Comm comm;
    int rank;
    MPI_Offset pos;          /* rank 0's: the shared file pointer, in etypes */
    struct msg_req *ask;     /* rank 0's receive of the next question */
    long long question;      /* etypes to add */
} sh[MAX_SHARED];

static uint64_t bits(const struct shared *s, int tag)
{
    return mpi_bits(2 * mpi_comm_get(s->comm)->ctx, tag);
}

static void post_ask(struct shared *s)
{
    s->ask = msg_req_new(true);
    if (!s->ask)
        mpi_fatal("MPI-IO", "no engine request for the shared file pointer");
    msg_irecv(s->ask, MSG_ANY_SOURCE, bits(s, ASK), 0, &s->question, sizeof s->question);
}

/* Rank 0's part: answer what has come, post for the next.  Its sends
 * make progress, which runs it again: the inner run does nothing. */
static void serve(void)
{
    static bool serving;
    if (serving)
        return;
    serving = true;
    for (int i = 0; i < MAX_SHARED; i++) {
        struct shared *s = &sh[i];
        while (s->open && s->rank == 0 && s->ask && s->ask->done) {
            long src = s->ask->src;
            bool ok = !s->ask->error && s->ask->len == sizeof s->question;
            msg_req_free(s->ask);
            s->ask = NULL;
            /* The answer goes from a buffer of its own: an eager send
             * copies it at once, and the request frees itself. */
            static long long answer;
            answer = ok ? s->pos : -1;
            if (ok)
                s->pos += s->question;
            struct msg_req *r = msg_req_new(true);
            if (!r)
                mpi_fatal("MPI-IO", "no engine request for the shared file pointer");
            msg_isend(r, src, bits(s, ANSWER), &answer, sizeof answer, 0);
            msg_ignore(r);
            post_ask(s);
        }
    }
    serving = false;
}

void mpi_file_shared_open(MPI_File fh, MPI_Comm comm)
{
    struct shared *s = &sh[H_IDX(fh) % MAX_SHARED];
    *s = (struct shared){.open = true, .comm = comm};
    MPI_Comm_rank(comm, &s->rank);
    if (s->rank == 0) {
        post_ask(s);
        mpi_progress_add(serve);
    }
}

/* Collective (MPI_File_set_view): every earlier access answered, the
 * pointer 0, then nobody's next access before that. */
int mpi_file_shared_reset(MPI_File fh)
{
    struct shared *s = &sh[H_IDX(fh) % MAX_SHARED];
    TRY(MPI_Barrier(s->comm));
    s->pos = 0;
    return MPI_Barrier(s->comm);
}

void mpi_file_shared_close(MPI_File fh)
{
    struct shared *s = &sh[H_IDX(fh) % MAX_SHARED];
    /* Called after every rank is done with the file (a barrier). */
    if (s->ask && !msg_cancel_recv(s->ask)) {
        msg_wait(s->ask);
        msg_req_free(s->ask);
    }
    *s = (struct shared){0};
}

/* The position before adding n etypes to it. */
static int fetch_add(const char *call, MPI_File fh, long long n, MPI_Offset *before)
{
    MPI_Comm comm;
    MPI_Errhandler errh;
    long es;
    TRY(mpi_file_parts(call, fh, &comm, &errh, &es));
    struct shared *s = &sh[H_IDX(fh) % MAX_SHARED];
    if (s->rank == 0) {
        serve(); /* what others asked first comes first */
        *before = s->pos;
        s->pos += n;
        return MPI_SUCCESS;
    }
    struct mcomm *c = mpi_comm_get(comm);
    long long answer = -1;
    struct msg_req *in = msg_req_new(true), *out = msg_req_new(true);
    if (!in || !out)
        mpi_fatal(call, "no engine request for the shared file pointer");
    msg_irecv(in, mpi_world_of(c, 0), bits(s, ANSWER), 0, &answer, sizeof answer);
    msg_isend(out, mpi_world_of(c, 0), bits(s, ASK), &n, sizeof n, 0);
    msg_wait(out);
    msg_wait(in);
    msg_req_free(out);
    msg_req_free(in);
    if (answer < 0)
        return mpi_error_handled(errh, fh, MPI_ERR_INTERN, call, "the shared file pointer's keeper "
                                 "could not read the question");
    *before = answer;
    return MPI_SUCCESS;
}

/* Independent: the position taken for count elements, then the access. */
static int shared_access(const char *call, MPI_File fh, void *buf, int count,
                         MPI_Datatype datatype, MPI_Status *status, bool writing)
{
    MPI_Comm comm;
    MPI_Errhandler errh;
    long es;
    struct mtype *t;
    TRY(mpi_file_parts(call, fh, &comm, &errh, &es));
    if (mpi_check_type(call, comm, datatype, &t) || count < 0)
        return mpi_error_handled(errh, fh, count < 0 ? MPI_ERR_COUNT : MPI_ERR_TYPE, call,
                                 "count %d or its datatype", count);
    if (((long long)count * t->size) % es)
        return mpi_error_handled(errh, fh, MPI_ERR_ARG, call,
                                 "%lld bytes are not whole etypes of %ld",
                                 (long long)count * t->size, es);
    MPI_Offset at;
    TRY(fetch_add(call, fh, (long long)count * t->size / es, &at));
    return mpi_file_at(call, fh, at, buf, count, datatype, status, writing, false);
}

int MPI_File_read_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                         MPI_Status *status)
{
    return shared_access("MPI_File_read_shared", fh, buf, count, datatype, status, false);
}

int MPI_File_write_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                          MPI_Status *status)
{
    return shared_access("MPI_File_write_shared", fh, (void *)buf, count, datatype, status,
                         true);
}

/* Done in the call, as mpi_file.c's other independent nonblocking ones. */
static int shared_at_once(const char *call, MPI_File fh, void *buf, int count,
                          MPI_Datatype datatype, MPI_Request *request, bool writing)
{
    MPI_Status st;
    MPI_Comm comm;
    MPI_Errhandler errh;
    long es;
    TRY(mpi_file_parts(call, fh, &comm, &errh, &es));
    TRY(shared_access(call, fh, buf, count, datatype, &st, writing));
    return mpi_req_done(call, comm, &st, writing, request);
}

int MPI_File_iread_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                          MPI_Request *request)
{
    return shared_at_once("MPI_File_iread_shared", fh, buf, count, datatype, request, false);
}

int MPI_File_iwrite_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                           MPI_Request *request)
{
    return shared_at_once("MPI_File_iwrite_shared", fh, (void *)buf, count, datatype, request,
                          true);
}

/* Collective: rank r's data after ranks 0..r-1's, from the shared
 * pointer on; it ends past them all.  Every rank learns every count and
 * rank 0's position in one allgather. */
static int ordered(const char *call, MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                   MPI_Status *status, bool writing)
{
    MPI_Comm comm;
    MPI_Errhandler errh;
    long es;
    TRY(mpi_file_parts(call, fh, &comm, &errh, &es));
    struct shared *s = &sh[H_IDX(fh) % MAX_SHARED];
    struct mtype *t = mpi_type_get(datatype);
    /* Every rank's accesses before this call are answered once it has
     * entered (each waits for its answer): only then is rank 0's position
     * the one this call goes on from. */
    TRY(MPI_Barrier(comm));
    long long mine[2] = {t && t->committed && count >= 0 ? (long long)count * t->size / es : -1,
                         s->rank == 0 ? s->pos : 0};
    int n;
    MPI_Comm_size(comm, &n);
    long long *all = malloc(sizeof(long long) * 2 * (size_t)n);
    if (!all)
        return mpi_error_handled(errh, fh, MPI_ERR_NO_MEM, call, "no memory");
    int rc = MPI_Allgather(mine, 2, MPI_LONG_LONG, all, 2, MPI_LONG_LONG, comm);
    MPI_Offset at = all[1], end = all[1];
    bool bad = false;
    for (int r = 0; r < n; r++) {
        bad |= all[2 * r] < 0;
        if (r < s->rank)
            at += all[2 * r];
        end += all[2 * r] > 0 ? all[2 * r] : 0;
    }
    free(all);
    TRY(rc);
    if (s->rank == 0)
        s->pos = end;
    if (bad && mine[0] >= 0)
        return mpi_error_handled(errh, fh, MPI_ERR_ARG, call, "another rank's count or datatype");
    /* Bad arguments here: the access reports them, collectively still. */
    return mpi_file_at(call, fh, at, buf, count, datatype, status, writing, true);
}

int MPI_File_read_ordered(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                          MPI_Status *status)
{
    return ordered("MPI_File_read_ordered", fh, buf, count, datatype, status, false);
}

int MPI_File_write_ordered(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                           MPI_Status *status)
{
    return ordered("MPI_File_write_ordered", fh, (void *)buf, count, datatype, status, true);
}

/* Collective, with the same arguments everywhere; rank 0 moves it. */
int MPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
    const char *call = "MPI_File_seek_shared";
    MPI_Comm comm;
    MPI_Errhandler errh;
    long es;
    TRY(mpi_file_parts(call, fh, &comm, &errh, &es));
    struct shared *s = &sh[H_IDX(fh) % MAX_SHARED];
    int rc = MPI_SUCCESS;
    if (whence != MPI_SEEK_SET && whence != MPI_SEEK_CUR && whence != MPI_SEEK_END)
        rc = mpi_error_handled(errh, fh, MPI_ERR_ARG, call, "whence %d", whence);
    TRY(MPI_Barrier(comm)); /* as in ordered(): earlier accesses first */
    if (!rc && s->rank == 0) {
        MPI_Offset to = offset, end = 0;
        if (whence == MPI_SEEK_CUR)
            to += s->pos;
        else if (whence == MPI_SEEK_END && !(rc = mpi_file_end(call, fh, &end)))
            to += end;
        if (!rc && to < 0)
            rc = mpi_error_handled(errh, fh, MPI_ERR_ARG, call, "a position before the view");
        if (!rc)
            s->pos = to;
    }
    /* Nobody's next access comes before the move (and rank 0's verdict
     * is everyone's). */
    int verdict = rc;
    MPI_Bcast(&verdict, 1, MPI_INT, 0, comm);
    return rc ? rc : verdict;
}

int MPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset)
{
    return fetch_add("MPI_File_get_position_shared", fh, 0, offset);
}

int mpi_file_shared_bytes(MPI_File fh, MPI_Offset *bytes)
{
    const char *call = "MPI_File_set_view";
    MPI_Comm comm;
    MPI_Errhandler errh;
    long es;
    TRY(mpi_file_parts(call, fh, &comm, &errh, &es));
    struct shared *s = &sh[H_IDX(fh) % MAX_SHARED];
    long long b = -1;
    TRY(MPI_Barrier(comm)); /* as in ordered(): earlier accesses first */
    if (s->rank == 0) {
        MPI_Offset at;
        if (MPI_File_get_byte_offset(fh, s->pos, &at) == MPI_SUCCESS)
            b = at;
    }
    TRY(MPI_Bcast(&b, 1, MPI_LONG_LONG, 0, comm));
    if (b < 0)
        return mpi_error_handled(errh, fh, MPI_ERR_IO, call, "the shared file pointer's offset");
    *bytes = b;
    return MPI_SUCCESS;
}
