/* SQLite (Debian's libsqlite3, linked static), as a program nobody here
 * wrote uses files: `sqlite_ranks DB ROWS`.  Every rank of the job inserts
 * ROWS rows into the same database, one transaction each, waiting for the
 * others' locks (SQLite's busy handler over fcntl record locks).  What the
 * file holds after is checked by the test. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

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
    if (sqlite3_exec(db, "CREATE TABLE IF NOT EXISTS t(rank INTEGER, i INTEGER)", NULL, NULL,
                     NULL) != SQLITE_OK)
        return fail(db, "create");
    for (int i = 0; i < rows; i++) {
        char sql[128];
        snprintf(sql, sizeof sql, "BEGIN IMMEDIATE; INSERT INTO t VALUES(%d, %d); COMMIT;",
                 rank, i);
        if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
            return fail(db, "insert");
    }
    sqlite3_close(db);
    printf("rank %d: %d rows in\n", rank, rows);
    return 0;
}
