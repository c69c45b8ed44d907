/* SQLite (Debian's libsqlite3, linked static), as a program nobody here
 * wrote uses files: `sqlite_ranks DB ROWS [wal] [mmap]`.  Every rank of the
 * job inserts ROWS rows into the same database, one transaction each,
 * waiting for the others' locks (SQLite's busy handler over fcntl record
 * locks).  What the file holds after is checked by the test.
 *
 * wal: the write-ahead log, whose index SQLite keeps in a shared writable
 * mapping of DB-shm (one process: WAL needs its processes on one machine);
 * mmap: SQLite reads the database's pages through a shared mapping of it
 * (PRAGMA mmap_size) while it writes them with pwrite.  With either, a
 * second connection of the process counts the rows before it ends. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int print_mode(void *arg, int n, char **values, char **names)
{
    (void)arg;
    (void)names;
    printf("journal_mode: %s\n", n > 0 && values[0] ? values[0] : "?");
    return 0;
}

static int fail(sqlite3 *db, const char *what)
{
    printf("rank %s: %s: %s\n", getenv("TERN_RANK"), what, sqlite3_errmsg(db));
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    int rank = getenv("TERN_RANK") ? atoi(getenv("TERN_RANK")) : 0, rows = atoi(argv[2]);
    sqlite3 *db;
    if (sqlite3_open(argv[1], &db) != SQLITE_OK)
        return fail(db, "open");
    sqlite3_busy_timeout(db, 120000);
    int wal = 0, mm = 0;
    for (int i = 3; i < argc; i++) {
        wal |= strcmp(argv[i], "wal") == 0;
        mm |= strcmp(argv[i], "mmap") == 0;
    }
    if (mm && sqlite3_exec(db, "PRAGMA mmap_size=67108864", NULL, NULL, NULL) != SQLITE_OK)
        return fail(db, "mmap_size");
    if (wal && sqlite3_exec(db, "PRAGMA journal_mode=WAL", print_mode, NULL, NULL) != SQLITE_OK)
        return fail(db, "journal_mode");
    if (sqlite3_exec(db, "CREATE TABLE IF NOT EXISTS t(rank INTEGER, i INTEGER)", NULL, NULL,
                     NULL) != SQLITE_OK)
        return fail(db, "create");
    /* The second connection reads once before the rows go in: its view of
     * the file (its mapping, with mmap) is made now and must follow. */
    sqlite3 *other = NULL;
    if ((wal || mm) &&
        (sqlite3_open(argv[1], &other) != SQLITE_OK ||
         (mm && sqlite3_exec(other, "PRAGMA mmap_size=67108864", NULL, NULL, NULL) != SQLITE_OK) ||
         sqlite3_exec(other, "SELECT count(*) FROM t", NULL, NULL, NULL) != SQLITE_OK))
        return fail(other, "second connection");
    for (int i = 0; i < rows; i++) {
        char sql[128];
        snprintf(sql, sizeof sql, "BEGIN IMMEDIATE; INSERT INTO t VALUES(%d, %d); COMMIT;",
                 rank, i);
        if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
            return fail(db, "insert");
    }
    if (wal || mm) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(other, "SELECT count(*), sum(i) FROM t", -1, &st, NULL) !=
                SQLITE_OK ||
            sqlite3_step(st) != SQLITE_ROW)
            return fail(other, "count");
        printf("rank %d: another connection counts %d rows, sum %lld\n", rank,
               sqlite3_column_int(st, 0), (long long)sqlite3_column_int64(st, 1));
        sqlite3_finalize(st);
        sqlite3_close(other);
    }
    if (sqlite3_close(db) != SQLITE_OK)
        return fail(db, "close");
    printf("rank %d: %d rows in\n", rank, rows);
    return 0;
}
