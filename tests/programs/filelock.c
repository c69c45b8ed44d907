/* File locks between two ranks (on two nodes): `filelock DIR`.  For fcntl's
 * record locks, then flock: rank 0 takes a write lock on DIR/lock.JOB and
 * says so with a marker file; rank 1 then finds the lock taken (a try
 * fails, F_GETLK names a write lock), says so with another marker, and
 * waits for the lock; rank 0 writes a byte and lets go; rank 1, holding
 * the lock, reads that byte.  Then rank 0 ends holding a flock lock: the
 * job's end must let it go (the test locks the file after).  Every line says
 * yes or no; markers are polled for at most 60 s. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

static const char *yes(int ok) { return ok ? "yes" : "NO"; }
static char dir[512], job[32];

static void path(char *out, size_t n, const char *what)
{
    snprintf(out, n, "%s/lock.%s%s", dir, job, what);
}

static void mark(const char *what)
{
    char p[600];
    path(p, sizeof p, what);
    int fd = open(p, O_WRONLY | O_CREAT, 0644);
    if (fd >= 0)
        close(fd);
}

static int wait_mark(const char *what)
{
    char p[600];
    path(p, sizeof p, what);
    for (int i = 0; i < 6000; i++) {
        if (access(p, F_OK) == 0)
            return 1;
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

/* kind 0: fcntl F_SETLK(W) on the whole file; 1: flock. */
static int lock(int fd, int kind, int wait)
{
    if (kind == 1)
        return flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB));
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    return fcntl(fd, wait ? F_SETLKW : F_SETLK, &fl);
}

static int unlock(int fd, int kind)
{
    if (kind == 1)
        return flock(fd, LOCK_UN);
    struct flock fl = {.l_type = F_UNLCK, .l_whence = SEEK_SET};
    return fcntl(fd, F_SETLK, &fl);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    snprintf(dir, sizeof dir, "%s", argv[1]);
    snprintf(job, sizeof job, "%s", getenv("TERN_JOB") ? getenv("TERN_JOB") : "0");
    int rank = getenv("TERN_RANK") ? atoi(getenv("TERN_RANK")) : 0;
    char file[600];
    path(file, sizeof file, "");
    static const char *const kinds[] = {"fcntl", "flock"};
    static const char mine[] = "AB";
    for (int k = 0; k < 2; k++) {
        char held[16], tried[16], done[16];
        snprintf(held, sizeof held, ".held%d", k);
        snprintf(tried, sizeof tried, ".tried%d", k);
        snprintf(done, sizeof done, ".done%d", k);
        if (rank == 0) {
            int fd = open(file, O_RDWR | O_CREAT, 0644);
            int got = fd >= 0 && lock(fd, k, 1) == 0;
            printf("rank 0: %s lock taken: %s\n", kinds[k], yes(got));
            fflush(stdout);
            mark(held);
            int seen = wait_mark(tried);
            int wrote = pwrite(fd, &mine[k], 1, 0) == 1 && fsync(fd) == 0;
            unlock(fd, k);
            printf("rank 0: %s: rank 1 tried %s, wrote %s\n", kinds[k], yes(seen), yes(wrote));
            fflush(stdout);
            close(fd);
            wait_mark(done);
        } else if (rank == 1) {
            int ready = wait_mark(held);
            int fd = open(file, O_RDWR);
            int e = lock(fd, k, 0) ? errno : 0;
            int busy = e == EAGAIN || e == EACCES;
            int sees = 1;
            if (k == 0) {
                struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
                sees = fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type == F_WRLCK;
            }
            printf("rank 1: %s: busy while rank 0 holds it %s%s\n", kinds[k], yes(ready && busy),
                   k == 0 ? (sees ? ", F_GETLK names a write lock yes" :
                             ", F_GETLK names a write lock NO") : "");
            fflush(stdout);
            mark(tried);
            char c = 0;
            int got = lock(fd, k, 1) == 0 && pread(fd, &c, 1, 0) == 1 && c == mine[k];
            printf("rank 1: %s: has it after rank 0's write %s\n", kinds[k], yes(got));
            fflush(stdout);
            unlock(fd, k);
            close(fd);
            mark(done);
        }
    }
    if (rank == 0) {                   /* ends holding one: the job's end lets it go */
        int fd = open(file, O_RDWR);
        printf("rank 0: ends holding a flock lock %s\n", yes(fd >= 0 && lock(fd, 1, 0) == 0));
    }
    return 0;
}
