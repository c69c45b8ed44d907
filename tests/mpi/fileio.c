/* MPI-IO: `fileio DIR`.  The ranks write one global 2-D array of ints to
 * DIR/array through subarray views (each its block of columns in C order,
 * then its block of rows in Fortran order) four ways: collectively,
 * independently, with a nonblocking collective and with a split
 * collective; rank 0 reads the file back whole after each and each rank
 * its own part again through its view (blocking, nonblocking and split
 * collective reads), all checked against the element's global index.
 * Then the individual file pointer, the shared one, sizes, MPI_SEEK_END,
 * byte offsets, an "external32" view, the errors a split collective
 * misused and views that go backwards or overlap give, file error handlers (the program's own, called with the
 * file's handle; the one MPI_FILE_NULL holds inherited by a new file),
 * info objects, MPI_MODE_EXCL, DELETE_ON_CLOSE and the errors a missing
 * file gives.  Self-checking: it passes with any correct MPI-IO (MPICH's
 * too). */
#include <stdbool.h>
#include <unistd.h>

#include "mpitest.h"

enum { ROWS = 6, COLS_PER = 5 };

static char path[1024];

static int value(int r, int c) { return r * 1000 + c; }

/* Writes the array through a C-order subarray view: this rank's COLS_PER
 * columns of every row. */
enum how { INDEPENDENT, COLLECTIVE, NONBLOCKING, SPLIT };

static void write_columns(MPI_File fh, int cols, enum how how)
{
    int sizes[2] = {ROWS, cols}, subs[2] = {ROWS, COLS_PER}, starts[2] = {0, t_rank * COLS_PER};
    MPI_Datatype block;
    OK(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &block));
    OK(MPI_Type_commit(&block));
    int mine[ROWS * COLS_PER];
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < COLS_PER; c++)
            mine[r * COLS_PER + c] = value(r, t_rank * COLS_PER + c);
    OK(MPI_File_set_view(fh, 0, MPI_INT, block, "native", MPI_INFO_NULL));
    OK(MPI_Type_free(&block));      /* the view keeps its own */
    MPI_Status st;
    MPI_Request req;
    switch (how) {
    case INDEPENDENT: OK(MPI_File_write_at(fh, 0, mine, ROWS * COLS_PER, MPI_INT, &st)); break;
    case COLLECTIVE: OK(MPI_File_write_at_all(fh, 0, mine, ROWS * COLS_PER, MPI_INT, &st)); break;
    case NONBLOCKING:
        OK(MPI_File_iwrite_at_all(fh, 0, mine, ROWS * COLS_PER, MPI_INT, &req));
        OK(MPI_Wait(&req, &st));
        CHECK(req == MPI_REQUEST_NULL, "MPI_Wait left the request");
        break;
    case SPLIT:
        OK(MPI_File_write_at_all_begin(fh, 0, mine, ROWS * COLS_PER, MPI_INT));
        st.MPI_ERROR = 12345; /* a single completion leaves it (MPI-3.1 3.2.5) */
        OK(MPI_File_write_at_all_end(fh, mine, &st));
        CHECK(st.MPI_ERROR == 12345, "write_at_all_end set MPI_ERROR to %d", st.MPI_ERROR);
        break;
    }
    CHECK(t_count(&st, MPI_INT) == ROWS * COLS_PER, "wrote %d ints", t_count(&st, MPI_INT));
}

static void check_whole(MPI_File fh, int cols, const char *how)
{
    OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    if (t_rank != 0)
        return;
    int *all = malloc(sizeof(int) * ROWS * cols);
    MPI_Status st;
    OK(MPI_File_read_at(fh, 0, all, ROWS * cols, MPI_INT, &st));
    CHECK(t_count(&st, MPI_INT) == ROWS * cols, "%s: read %d ints", how, t_count(&st, MPI_INT));
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < cols; c++)
            CHECK(all[r * cols + c] == value(r, c), "%s: [%d][%d] is %d", how, r, c,
                  all[r * cols + c]);
    free(all);
}

/* The shared file pointer on DIR/shared: every rank appends K records
 * of its own with write_shared (each lands whole, none overlaps, none is
 * lost), then write_ordered puts one record per rank after them in rank
 * order, read_ordered reads those back, seek_shared and
 * get_position_shared agree. */
static void shared_pointer(const char *dir)
{
    enum { K = 20, W = 4 };
    char file[1100];
    snprintf(file, sizeof file, "%s/shared", dir);
    MPI_File fh;
    MPI_Status st;
    OK(MPI_File_open(MPI_COMM_WORLD, file, MPI_MODE_CREATE | MPI_MODE_RDWR |
                                               MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    for (int k = 0; k < K; k++) {
        int rec[W] = {t_rank, k, t_rank * 100 + k, -7};
        OK(MPI_File_write_shared(fh, rec, W, MPI_INT, &st));
        CHECK(t_count(&st, MPI_INT) == W, "write_shared wrote %d ints", t_count(&st, MPI_INT));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Offset pos = -1;
    OK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == (MPI_Offset)K * W * t_size, "shared position %lld after %d records",
          (long long)pos, K * t_size);
    int rec[W] = {t_rank, -1, -2, -3};
    OK(MPI_File_write_ordered(fh, rec, W, MPI_INT, &st));
    if (t_rank == 0) {
        int n = K * t_size + t_size;
        int *all = malloc(sizeof(int) * W * (size_t)n), *seen = calloc((size_t)n, sizeof(int));
        CHECK(all && seen, "no memory");
        OK(MPI_File_read_at(fh, 0, all, W * n, MPI_INT, &st));
        CHECK(t_count(&st, MPI_INT) == W * n, "the file holds %d ints", t_count(&st, MPI_INT));
        for (int i = 0; i < K * t_size; i++) {
            int *r = all + W * i, who = r[0], k = r[1];
            CHECK(who >= 0 && who < t_size && k >= 0 && k < K && r[2] == who * 100 + k &&
                      r[3] == -7 && !seen[who * K + k]++,
                  "record %d: %d %d %d %d", i, r[0], r[1], r[2], r[3]);
        }
        for (int r = 0; r < t_size; r++)
            CHECK(all[W * (K * t_size + r)] == r && all[W * (K * t_size + r) + 1] == -1,
                  "write_ordered record %d is rank %d's", r, all[W * (K * t_size + r)]);
        free(all);
        free(seen);
    }
    OK(MPI_File_seek_shared(fh, (MPI_Offset)K * W * t_size, MPI_SEEK_SET));
    int back[W];
    OK(MPI_File_read_ordered(fh, back, W, MPI_INT, &st));
    CHECK(back[0] == t_rank && back[1] == -1, "read_ordered gave rank %d's record", back[0]);
    OK(MPI_File_seek_shared(fh, (MPI_Offset)K * W * t_size, MPI_SEEK_SET));
    memset(back, 0, sizeof back);
    OK(MPI_File_read_ordered_begin(fh, back, W, MPI_INT));
    OK(MPI_File_read_ordered_end(fh, back, &st));
    CHECK(back[0] == t_rank && back[1] == -1 && t_count(&st, MPI_INT) == W,
          "read_ordered_begin/end gave rank %d's record", back[0]);
    OK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == (MPI_Offset)(K + 1) * W * t_size, "shared position %lld at the end",
          (long long)pos);
    OK(MPI_File_seek_shared(fh, -W, MPI_SEEK_END));
    OK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == (MPI_Offset)(K + 1) * W * t_size - W, "SEEK_END: %lld", (long long)pos);
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_close(&fh));
}

static int errclass(int rc)
{
    int cls;
    MPI_Error_class(rc, &cls);
    return cls;
}

/* A split collective misused: a second begin while one is active, an end
 * with none active, an end of another kind.  Each is MPI_ERR_IO (MPI-3.1
 * 13.4.5) and leaves the active access as it was.  MPI_ERRORS_RETURN is
 * the files' default handler. */
static void split_errors(MPI_File fh)
{
    int a[2] = {1, 2}, b[2];
    MPI_Status st;
    OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    CHECK(errclass(MPI_File_read_at_all_end(fh, b, &st)) == MPI_ERR_IO,
          "an end with no begin");
    OK(MPI_File_read_at_all_begin(fh, 0, b, 2, MPI_INT));
    CHECK(errclass(MPI_File_write_at_all_begin(fh, 0, a, 2, MPI_INT)) == MPI_ERR_IO,
          "a second begin while one is active");
    CHECK(errclass(MPI_File_write_at_all_end(fh, a, &st)) == MPI_ERR_IO,
          "the end of another kind");
    OK(MPI_File_read_at_all_end(fh, b, &st));
    CHECK(t_count(&st, MPI_INT) == 2, "the active read, after the errors: %d ints",
          t_count(&st, MPI_INT));
}

/* Views whose type maps go backwards or overlap (MPI-3.1 13.3): refused
 * with MPI_ERR_IO on a file open for writing; an overlapping filetype is
 * fine on a read-only one (checked there, in main). */
static MPI_Datatype two_ints(int d0, int b0, int d1, int b1)
{
    int disp[2] = {d0, d1}, blen[2] = {b0, b1};
    MPI_Datatype t;
    OK(MPI_Type_indexed(2, blen, disp, MPI_INT, &t));
    OK(MPI_Type_commit(&t));
    return t;
}

static void view_faults(MPI_File fh)
{
    static const struct { int d0, b0, d1, b1; bool as_etype; const char *what; } bad[] = {
        {-2, 1, 2, 1, true, "an etype with a negative displacement"},
        {3, 1, 0, 1, true, "an etype whose displacements decrease"},
        {-2, 1, 2, 1, false, "a filetype with a negative displacement"},
        {3, 1, 0, 1, false, "a filetype whose displacements decrease"},
        {0, 3, 1, 1, false, "an overlapping filetype on a file open for writing"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        MPI_Datatype t = two_ints(bad[i].d0, bad[i].b0, bad[i].d1, bad[i].b1);
        int rc = MPI_File_set_view(fh, 0, bad[i].as_etype ? t : MPI_INT, t, "native",
                                   MPI_INFO_NULL);
        CHECK(errclass(rc) == MPI_ERR_IO, "%s: class %d", bad[i].what, errclass(rc));
        OK(MPI_Type_free(&t));
    }
}

/* The program's own file error handler. */
static int handler_calls, handler_code;
static MPI_File handler_file;

static void count_errors(MPI_File *fh, int *code, ...)
{
    handler_calls++;
    handler_file = *fh;
    handler_code = *code;
}

static void file_handlers(const char *dir)
{
    char file[1100];
    snprintf(file, sizeof file, "%s/handlers", dir);
    MPI_Errhandler mine, got, was;
    OK(MPI_File_create_errhandler(count_errors, &mine));
    /* A new file takes the handler MPI_FILE_NULL holds. */
    OK(MPI_File_get_errhandler(MPI_FILE_NULL, &was));
    OK(MPI_File_set_errhandler(MPI_FILE_NULL, mine));
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, file, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                     &fh));
    OK(MPI_File_close(&fh));
    OK(MPI_File_open(MPI_COMM_WORLD, file, MPI_MODE_RDONLY | MPI_MODE_DELETE_ON_CLOSE,
                     MPI_INFO_NULL, &fh));
    OK(MPI_File_set_errhandler(MPI_FILE_NULL, was));
    OK(MPI_File_get_errhandler(fh, &got));
    CHECK(got == mine, "a new file's handler is %#x, not the one MPI_FILE_NULL held",
          (unsigned)got);
    /* A write to a read-only file: the handler sees this file and the
     * code the call returns. */
    int one = 1, rc = MPI_File_write_at(fh, 0, &one, 1, MPI_INT, MPI_STATUS_IGNORE);
    CHECK(rc != MPI_SUCCESS && handler_calls == 1 && handler_file == fh && handler_code == rc,
          "the handler: %d calls, file %s, code %d for %d", handler_calls,
          handler_file == fh ? "this one" : "another", handler_code, rc);
    CHECK(errclass(rc) == MPI_ERR_READ_ONLY || errclass(rc) == MPI_ERR_ACCESS,
          "a write to a read-only file: class %d", errclass(rc));
    /* A bad whence, then MPI_File_call_errhandler with a code of its own. */
    rc = MPI_File_seek(fh, 0, 12345);
    CHECK(rc != MPI_SUCCESS && handler_calls == 2 && handler_code == rc,
          "a bad whence: %d calls", handler_calls);
    CHECK(MPI_File_call_errhandler(fh, MPI_ERR_OTHER) == MPI_SUCCESS && handler_calls == 3 &&
              handler_code == MPI_ERR_OTHER && handler_file == fh,
          "MPI_File_call_errhandler: %d calls, code %d", handler_calls, handler_code);
    /* Set another on the open file: the program's is no longer called. */
    OK(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
    rc = MPI_File_seek(fh, 0, 12345);
    CHECK(rc != MPI_SUCCESS && handler_calls == 3, "MPI_ERRORS_RETURN set: %d calls",
          handler_calls);
    OK(MPI_Errhandler_free(&mine)); /* the file is no longer holding it either */
    OK(MPI_File_close(&fh));
    /* Opening a missing file raises on MPI_FILE_NULL's handler. */
    OK(MPI_File_create_errhandler(count_errors, &mine));
    OK(MPI_File_set_errhandler(MPI_FILE_NULL, mine));
    rc = MPI_File_open(MPI_COMM_WORLD, file, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK(errclass(rc) == MPI_ERR_NO_SUCH_FILE && handler_calls == 4 &&
              handler_file == MPI_FILE_NULL,
          "opening a missing file: class %d, %d calls", errclass(rc), handler_calls);
    OK(MPI_File_set_errhandler(MPI_FILE_NULL, was));
    OK(MPI_Errhandler_free(&mine));
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    CHECK(argc > 1, "usage: fileio DIR");
    snprintf(path, sizeof path, "%s/array", argv[1]);
    int cols = COLS_PER * t_size;
    MPI_File fh;
    if (t_rank == 0)
        unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);

    /* Columns, collectively, then independently over the same file. */
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    write_columns(fh, cols, COLLECTIVE);
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    check_whole(fh, cols, "columns, write_at_all");
    MPI_Offset size;
    OK(MPI_File_get_size(fh, &size));
    CHECK(size == (MPI_Offset)sizeof(int) * ROWS * cols, "size %lld", (long long)size);
    MPI_Barrier(MPI_COMM_WORLD);
    static const struct { enum how how; const char *name; } ways[] = {
        {INDEPENDENT, "columns, write_at"},
        {NONBLOCKING, "columns, iwrite_at_all"},
        {SPLIT, "columns, write_at_all_begin/end"},
    };
    for (size_t w = 0; w < sizeof ways / sizeof ways[0]; w++) {
        OK(MPI_File_set_size(fh, 0));
        write_columns(fh, cols, ways[w].how);
        MPI_Barrier(MPI_COMM_WORLD);
        check_whole(fh, cols, ways[w].name);
        MPI_Barrier(MPI_COMM_WORLD);
    }

    /* Each rank's part again, through a Fortran-order view (dimension 0
     * fastest): sizes {cols, ROWS}, its columns as the first dimension. */
    int fsizes[2] = {cols, ROWS}, fsubs[2] = {COLS_PER, ROWS}, fstarts[2] = {t_rank * COLS_PER, 0};
    MPI_Datatype fblock;
    OK(MPI_Type_create_subarray(2, fsizes, fsubs, fstarts, MPI_ORDER_FORTRAN, MPI_INT, &fblock));
    OK(MPI_Type_commit(&fblock));
    MPI_Aint lb, ext;
    OK(MPI_Type_get_extent(fblock, &lb, &ext));
    CHECK(lb == 0 && ext == (MPI_Aint)sizeof(int) * ROWS * cols, "extent %ld", (long)ext);
    OK(MPI_File_set_view(fh, 0, MPI_INT, fblock, "native", MPI_INFO_NULL));
    int back[ROWS * COLS_PER];
    MPI_Status st;
    MPI_Offset pos, byte;
    /* Read three ways, each from the start of the view: read_all,
     * iread_all, read_all_begin/end; each moves the individual pointer. */
    for (int way = 0; way < 3; way++) {
        memset(back, 0, sizeof back);
        OK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
        if (way == 0) {
            OK(MPI_File_read_all(fh, back, ROWS * COLS_PER, MPI_INT, &st));
        } else if (way == 1) {
            MPI_Request req;
            OK(MPI_File_iread_all(fh, back, ROWS * COLS_PER, MPI_INT, &req));
            OK(MPI_Wait(&req, &st));
        } else {
            OK(MPI_File_read_all_begin(fh, back, ROWS * COLS_PER, MPI_INT));
            OK(MPI_File_read_all_end(fh, back, &st));
        }
        CHECK(t_count(&st, MPI_INT) == ROWS * COLS_PER, "read way %d: %d ints", way,
              t_count(&st, MPI_INT));
        for (int r = 0; r < ROWS; r++)
            for (int c = 0; c < COLS_PER; c++)
                CHECK(back[r * COLS_PER + c] == value(r, t_rank * COLS_PER + c),
                      "own part, read way %d: [%d][%d] is %d", way, r, c,
                      back[r * COLS_PER + c]);
        OK(MPI_File_get_position(fh, &pos));
        CHECK(pos == ROWS * COLS_PER, "position %lld after read way %d", (long long)pos, way);
    }
    /* The view's element 7: row 1, this rank's column 2. */
    OK(MPI_File_get_byte_offset(fh, 7, &byte));
    CHECK(byte == (MPI_Offset)sizeof(int) * (1 * cols + t_rank * COLS_PER + 2), "byte offset %lld",
          (long long)byte);
    OK(MPI_File_seek(fh, -2, MPI_SEEK_END));
    OK(MPI_File_read(fh, back, 2, MPI_INT, &st));
    CHECK(back[0] == value(ROWS - 1, t_rank * COLS_PER + COLS_PER - 2) &&
          back[1] == value(ROWS - 1, t_rank * COLS_PER + COLS_PER - 1),
          "the last two through SEEK_END: %d %d", back[0], back[1]);
    OK(MPI_Type_free(&fblock));

    /* Collective calls where some ranks move nothing, and a collective
     * read that runs past the end of the file. */
    OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_Offset base = (MPI_Offset)sizeof(int) * ROWS * cols;
    char mark[3] = {'a' + t_rank % 26, 'b', 'c'};
    OK(MPI_File_write_at_all(fh, base + 10 * t_rank, mark, t_rank % 2 ? 0 : 3, MPI_BYTE, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    char got[3];
    OK(MPI_File_read_at(fh, base + 10 * (t_rank & ~1), got, 3, MPI_BYTE, &st));
    CHECK(t_count(&st, MPI_BYTE) == 3 && got[0] == 'a' + (t_rank & ~1) % 26 && got[2] == 'c',
          "a rank's 3 bytes among ranks that wrote none: %.3s", got);
    /* Nonblocking: the request gives the status. */
    MPI_Request req;
    int four[4] = {7, 8, 9, 10}, back4[4] = {0};
    OK(MPI_File_iwrite_at(fh, base + 100 + 16 * t_rank, four, 4, MPI_INT, &req));
    OK(MPI_Wait(&req, &st));
    CHECK(req == MPI_REQUEST_NULL && t_count(&st, MPI_INT) == 4, "iwrite_at: %d ints",
          t_count(&st, MPI_INT));
    OK(MPI_File_iread_at(fh, base + 100 + 16 * t_rank, back4, 4, MPI_INT, &req));
    OK(MPI_Wait(&req, &st));
    CHECK(t_count(&st, MPI_INT) == 4 && !memcmp(four, back4, sizeof four), "iread_at");
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_get_size(fh, &size));
    int tail[8], want[4];
    OK(MPI_File_read_at(fh, size - (MPI_Offset)sizeof want, want, 4, MPI_INT, &st));
    OK(MPI_File_read_at_all(fh, size - (MPI_Offset)sizeof want, tail, 8, MPI_INT, &st));
    /* MPI: the count is what was there (4); ROMIO says what was asked. */
    CHECK((t_count(&st, MPI_INT) == 4 || t_count(&st, MPI_INT) == 8) &&
          !memcmp(tail, want, sizeof want), "a collective read past the end: %d ints",
          t_count(&st, MPI_INT));

    /* An "external32" view: ints go to the file big-endian and come back
     * as they were; an etype whose values change size there is refused.
     * (Past the end every rank has read: after the barrier.) */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Offset x32 = size + 16 * t_rank, xd;
    int xv[2] = {0x01020304, -2}, xback[2] = {0}, xcls;
    unsigned char raw[8];
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_Datatype xe, xf;
    OK(MPI_File_set_view(fh, x32, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
    OK(MPI_File_get_view(fh, &xd, &xe, &xf, rep));
    CHECK(!strcmp(rep, "external32") && xd == x32, "get_view: %s at %lld", rep, (long long)xd);
    OK(MPI_File_write_at(fh, 0, xv, 2, MPI_INT, &st));
    OK(MPI_File_read_at(fh, 0, xback, 2, MPI_INT, &st));
    CHECK(xback[0] == xv[0] && xback[1] == xv[1], "external32 back: %#x %d", xback[0], xback[1]);
    MPI_Error_class(MPI_File_set_view(fh, x32, MPI_LONG, MPI_LONG, "external32", MPI_INFO_NULL),
                    &xcls);
    CHECK(xcls == MPI_ERR_UNSUPPORTED_DATAREP, "an external32 view of MPI_LONG: class %d", xcls);
    OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    OK(MPI_File_read_at(fh, x32, raw, 8, MPI_BYTE, &st));
    CHECK(raw[0] == 1 && raw[1] == 2 && raw[2] == 3 && raw[3] == 4 && raw[4] == 0xff &&
          raw[7] == 0xfe, "external32 bytes %02x %02x %02x %02x", raw[0], raw[1], raw[2], raw[3]);
    split_errors(fh);
    view_faults(fh);
    OK(MPI_File_close(&fh));
    CHECK(fh == MPI_FILE_NULL, "MPI_File_close left the handle");

    shared_pointer(argv[1]);
    file_handlers(argv[1]);

    /* Info objects. */
    MPI_Info info;
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "cb_nodes", "2"));
    OK(MPI_Info_set(info, "striping_unit", "65536"));
    char v[MPI_MAX_INFO_VAL + 1];
    int flag, nkeys;
    OK(MPI_Info_get(info, "striping_unit", MPI_MAX_INFO_VAL, v, &flag));
    OK(MPI_Info_get_nkeys(info, &nkeys));
    CHECK(flag && !strcmp(v, "65536") && nkeys == 2, "info: %d %s %d", flag, v, nkeys);

    /* The file exists: MPI_MODE_EXCL fails everywhere; DELETE_ON_CLOSE. */
    int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY,
                           info, &fh);
    int cls;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_FILE_EXISTS, "EXCL on an existing file: class %d", cls);
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_DELETE_ON_CLOSE, info, &fh));
    OK(MPI_Info_free(&info));
    int amode;
    OK(MPI_File_get_amode(fh, &amode));
    CHECK(amode == (MPI_MODE_RDONLY | MPI_MODE_DELETE_ON_CLOSE), "amode %#x", amode);
    rc = MPI_File_write_at(fh, 0, back, 1, MPI_INT, &st);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_READ_ONLY || cls == MPI_ERR_ACCESS, "a write to a read-only file: %d",
          cls);
    /* Read-only, a filetype may overlap: ints 0, 1, 2 and 1 again. */
    MPI_Datatype lap = two_ints(0, 3, 1, 1);
    OK(MPI_File_set_view(fh, 0, MPI_INT, lap, "native", MPI_INFO_NULL));
    OK(MPI_Type_free(&lap));
    OK(MPI_File_read_at(fh, 0, back, 4, MPI_INT, &st));
    CHECK(back[0] == value(0, 0) && back[1] == value(0, 1) && back[2] == value(0, 2) &&
              back[3] == value(0, 1),
          "an overlapping view read %d %d %d %d", back[0], back[1], back[2], back[3]);
    OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(access(path, F_OK) != 0, "DELETE_ON_CLOSE left the file");
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_NO_SUCH_FILE, "a missing file: class %d", cls);
    if (t_rank == 0) {
        rc = MPI_File_delete(path, MPI_INFO_NULL);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_NO_SUCH_FILE, "deleting a missing file: class %d", cls);
        printf("fileio ok on %d ranks\n", t_size);
    }
    MPI_Finalize();
    return 0;
}
