/*
 * Split collective file accesses (MPI-3.1 13.4.5): MPI_File_xxx_begin
 * starts a collective access, MPI_File_xxx_end finishes it and gives its
 * status.  The begin call does the whole collective access (its blocking
 * form in mpi_file.c or mpi_file_shared.c): nothing here runs beside the
 * program to do it later, and every rank begins in the same order, so the
 * access is the one the blocking call would have made.  The end call hands
 * back what the begin saw.
 *
 * At most one split collective may be active on a file (13.4.5): a second
 * begin, or an end with no begin (or of another kind), is an MPI_ERR_IO
 * raised through the file's handler, and leaves the active one as it was.
 */
#include "mpi_impl.h"

enum split_kind { NONE, READ_AT_ALL, WRITE_AT_ALL, READ_ALL, WRITE_ALL, READ_ORDERED,
                  WRITE_ORDERED };

static const char *const kind_name[] = {
    [READ_AT_ALL] = "MPI_File_read_at_all_begin",
    [WRITE_AT_ALL] = "MPI_File_write_at_all_begin",
    [READ_ALL] = "MPI_File_read_all_begin",
    [WRITE_ALL] = "MPI_File_write_all_begin",
    [READ_ORDERED] = "MPI_File_read_ordered_begin",
    [WRITE_ORDERED] = "MPI_File_write_ordered_begin",
};

static struct {
    enum split_kind kind;
    MPI_Status status;
    const void *buf; /* the begin call's, which the end call names again */
} active[MPI_FILE_SLOTS];

static int slot_of(const char *call, MPI_File fh, MPI_Errhandler *errh)
{
    MPI_Comm comm;
    long es;
    int rc = mpi_file_parts(call, fh, &comm, errh, &es);
    return rc ? -rc : H_IDX(fh);
}

static int begin(const char *call, enum split_kind kind, MPI_File fh, MPI_Offset offset,
                 void *buf, int count, MPI_Datatype datatype)
{
    MPI_Errhandler errh;
    int i = slot_of(call, fh, &errh);
    if (i < 0)
        return -i;
    if (active[i].kind != NONE)
        return mpi_error_handled(errh, fh, MPI_ERR_IO, call,
                                 "%s's access on this file has not ended: one split "
                                 "collective at a time on a file",
                                 kind_name[active[i].kind]);
    MPI_Status st;
    int rc;
    switch (kind) {
    case READ_AT_ALL: rc = MPI_File_read_at_all(fh, offset, buf, count, datatype, &st); break;
    case WRITE_AT_ALL: rc = MPI_File_write_at_all(fh, offset, buf, count, datatype, &st); break;
    case READ_ALL: rc = MPI_File_read_all(fh, buf, count, datatype, &st); break;
    case WRITE_ALL: rc = MPI_File_write_all(fh, buf, count, datatype, &st); break;
    case READ_ORDERED: rc = MPI_File_read_ordered(fh, buf, count, datatype, &st); break;
    case WRITE_ORDERED: rc = MPI_File_write_ordered(fh, buf, count, datatype, &st); break;
    default: rc = MPI_ERR_INTERN;
    }
    if (rc)
        return rc; /* raised by the access itself; nothing is active */
    active[i].kind = kind;
    active[i].buf = buf;
    active[i].status = st;
    return MPI_SUCCESS;
}

static int end(const char *call, enum split_kind kind, MPI_File fh, const void *buf,
               MPI_Status *status)
{
    MPI_Errhandler errh;
    int i = slot_of(call, fh, &errh);
    if (i < 0)
        return -i;
    if (active[i].kind != kind)
        return mpi_error_handled(errh, fh, MPI_ERR_IO, call, "%s",
                                 active[i].kind == NONE
                                     ? "no split collective access is active on this file"
                                     : "the access active on this file began with another call");
    if (buf != active[i].buf)
        return mpi_error_handled(errh, fh, MPI_ERR_BUFFER, call,
                                 "not the buffer its begin call named");
    mpi_status_out(status, &active[i].status); /* MPI_ERROR left as it was */
    active[i].kind = NONE;
    return MPI_SUCCESS;
}

void mpi_file_split_close(MPI_File fh)
{
    int i = H_IDX(fh);
    if (i > 0 && i < MPI_FILE_SLOTS)
        active[i].kind = NONE;
}

int MPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void *buf, int count,
                               MPI_Datatype datatype)
{
    return begin(kind_name[READ_AT_ALL], READ_AT_ALL, fh, offset, buf, count, datatype);
}

int MPI_File_read_at_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
    return end("MPI_File_read_at_all_end", READ_AT_ALL, fh, buf, status);
}

int MPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                                MPI_Datatype datatype)
{
    return begin(kind_name[WRITE_AT_ALL], WRITE_AT_ALL, fh, offset, (void *)buf, count,
                 datatype);
}

int MPI_File_write_at_all_end(MPI_File fh, const void *buf, MPI_Status *status)
{
    return end("MPI_File_write_at_all_end", WRITE_AT_ALL, fh, buf, status);
}

int MPI_File_read_all_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype)
{
    return begin(kind_name[READ_ALL], READ_ALL, fh, 0, buf, count, datatype);
}

int MPI_File_read_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
    return end("MPI_File_read_all_end", READ_ALL, fh, buf, status);
}

int MPI_File_write_all_begin(MPI_File fh, const void *buf, int count, MPI_Datatype datatype)
{
    return begin(kind_name[WRITE_ALL], WRITE_ALL, fh, 0, (void *)buf, count, datatype);
}

int MPI_File_write_all_end(MPI_File fh, const void *buf, MPI_Status *status)
{
    return end("MPI_File_write_all_end", WRITE_ALL, fh, buf, status);
}

int MPI_File_read_ordered_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype)
{
    return begin(kind_name[READ_ORDERED], READ_ORDERED, fh, 0, buf, count, datatype);
}

int MPI_File_read_ordered_end(MPI_File fh, void *buf, MPI_Status *status)
{
    return end("MPI_File_read_ordered_end", READ_ORDERED, fh, buf, status);
}

int MPI_File_write_ordered_begin(MPI_File fh, const void *buf, int count,
                                 MPI_Datatype datatype)
{
    return begin(kind_name[WRITE_ORDERED], WRITE_ORDERED, fh, 0, (void *)buf, count, datatype);
}

int MPI_File_write_ordered_end(MPI_File fh, const void *buf, MPI_Status *status)
{
    return end("MPI_File_write_ordered_end", WRITE_ORDERED, fh, buf, status);
}
