/* What a program changes about a file rather than in it: modes, owners,
 * times, symbolic and hard links, through the C library's calls.
 *   filemeta DIR [THEIRS] [ELSEWHERE]
 * DIR: a directory the program's user may write (emptied of its names
 * first); THEIRS: a file of another user's, readable, not writable;
 * ELSEWHERE: a directory on another file system (another file server).
 * Every line is what Linux gives for the same user and files.
 *   filemeta --symlink TARGET LINK
 * makes the link and opens the file through it. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>
#include <utime.h>

static const char *ename(int e)
{
    switch (e) {
    case 0: return "OK";
    case ENOENT: return "ENOENT";
    case EACCES: return "EACCES";
    case EPERM: return "EPERM";
    case EINVAL: return "EINVAL";
    case EXDEV: return "EXDEV";
    case EEXIST: return "EEXIST";
    case EBADF: return "EBADF";
    case EFAULT: return "EFAULT";
    case EOPNOTSUPP: return "EOPNOTSUPP";
    default: return "OTHER";
    }
}

/* The errno of a call that returns -1 on failure, "OK" otherwise. */
#define E(call) ename((call) ? errno : 0)

static char p[3][512];

static const char *in(int i, const char *dir, const char *name)
{
    snprintf(p[i], sizeof p[i], "%s/%s", dir, name);
    return p[i];
}

static unsigned mode_of(const char *path)
{
    struct stat st;
    return stat(path, &st) ? 0xffffffffu : st.st_mode & 07777;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "--symlink")) {
        const char *e = E(symlink(argv[2], argv[3]));
        int fd = open(argv[3], O_RDONLY);
        printf("symlink %s: %s, open through it: %s\n", argv[3], e, ename(fd < 0 ? errno : 0));
        return 0;
    }
    if (argc < 2) {
        fprintf(stderr, "usage: filemeta DIR [THEIRS] [ELSEWHERE] | --symlink TARGET LINK\n");
        return 2;
    }
    const char *d = argv[1];
    const char *names[] = {"data", "link", "hard", "other"};
    for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++)
        unlink(in(0, d, names[i]));

    const char *f = in(2, d, "data");
    int fd = open(f, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write(fd, "twelve bytes", 12) != 12) {
        printf("create %s: %s\n", f, ename(errno));
        return 1;
    }

    const char *e = E(chmod(f, 0640));
    printf("chmod 0640: %s, mode %04o\n", e, mode_of(f));
    e = E(fchmod(fd, 0604));
    printf("fchmod 0604: %s, mode %04o\n", e, mode_of(f));
    e = E(fchmodat(AT_FDCWD, f, 02755, 0));
    printf("fchmodat 02755: %s, mode %04o\n", e, mode_of(f));

    e = E(chown(f, getuid(), getgid()));
    printf("chown to its own ids: %s; fchown -1 -1: %s\n", e, E(fchown(fd, (uid_t)-1, (gid_t)-1)));
    printf("chown to another user: %s\n", E(chown(f, getuid() + 1, (gid_t)-1)));

    struct timespec ts[2] = {{1000000000, 5}, {0, UTIME_OMIT}};
    struct stat before, st;
    fstat(fd, &before);
    e = E(utimensat(AT_FDCWD, f, ts, 0));
    stat(f, &st);
    printf("utimensat atime 1000000000.000000005, mtime omitted: %s, atime %ld.%09ld, "
           "mtime unchanged %s\n", e, (long)st.st_atim.tv_sec, st.st_atim.tv_nsec,
           st.st_mtim.tv_sec == before.st_mtim.tv_sec &&
           st.st_mtim.tv_nsec == before.st_mtim.tv_nsec ? "yes" : "NO");
    struct timeval tv[2] = {{1200000000, 250000}, {1300000000, 750000}};
    e = E(utimes(f, tv));
    stat(f, &st);
    printf("utimes: %s, atime %ld.%09ld, mtime %ld.%09ld\n", e, (long)st.st_atim.tv_sec,
           st.st_atim.tv_nsec, (long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
    tv[0].tv_usec = 1000000;
    printf("utimes with 1000000 us: %s\n", E(utimes(f, tv)));
    struct utimbuf ub = {1400000000, 1500000000};
    e = E(utime(f, &ub));
    stat(f, &st);
    printf("utime: %s, atime %ld, mtime %ld\n", e, (long)st.st_atime, (long)st.st_mtime);
    e = E(futimens(fd, NULL));
    fstat(fd, &st);
    printf("futimens now: %s, mtime later than utime's %s\n", e,
           st.st_mtime > 1500000000 ? "yes" : "NO");

    const char *l = in(0, d, "link");
    char buf[64] = "";
    e = E(symlink("data", l));
    ssize_t n = readlink(l, buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = 0;
    struct stat lst;
    int lok = lstat(l, &lst) == 0 && S_ISLNK(lst.st_mode);
    char size[32];
    if (stat(l, &st))
        snprintf(size, sizeof size, "%s", ename(errno));
    else
        snprintf(size, sizeof size, "%ld bytes", (long)st.st_size);
    printf("symlink: %s, readlink %s, lstat a link %s, stat through it %s\n", e, buf,
           lok ? "yes" : "NO", size);
    printf("symlink again: %s; lchown -1 -1 on it: %s\n", E(symlink("data", l)),
           E(lchown(l, (uid_t)-1, (gid_t)-1)));
    ts[0] = (struct timespec){1100000000, 0};
    ts[1] = (struct timespec){1100000000, 0};
    e = E(utimensat(AT_FDCWD, l, ts, AT_SYMLINK_NOFOLLOW));
    lstat(l, &lst);
    stat(l, &st);
    printf("utimensat on the link itself: %s, its mtime %ld, the file's not %s\n", e,
           (long)lst.st_mtime, st.st_mtime != 1100000000 ? "yes" : "NO");

    int pf = open(f, O_PATH), lf = open(l, O_PATH | O_NOFOLLOW);
    char c;
    printf("O_PATH: a file %s, read %s; of the link itself: a link %s\n",
           pf >= 0 && fstat(pf, &st) == 0 && S_ISREG(st.st_mode) ? "yes" : "NO",
           read(pf, &c, 1) < 0 ? ename(errno) : "read",
           lf >= 0 && fstat(lf, &lst) == 0 && S_ISLNK(lst.st_mode) ? "yes" : "NO");
    close(pf);
    close(lf);

    const char *h = in(1, d, "hard");
    e = E(link(f, h));
    stat(f, &st);
    printf("link: %s, nlink %ld; link again: %s\n", e, (long)st.st_nlink, E(link(f, h)));
    unlink(h);
    e = E(linkat(AT_FDCWD, l, AT_FDCWD, h, AT_SYMLINK_FOLLOW));
    lok = lstat(h, &lst) == 0 && S_ISREG(lst.st_mode);
    printf("linkat AT_SYMLINK_FOLLOW of the link: %s, a file %s\n", e, lok ? "yes" : "NO");
    printf("link of a name that is not there: %s\n", E(link(in(1, d, "none"), in(0, d, "other"))));

    if (argc >= 3 && argv[2][0]) {
        const char *t = argv[2];
        ts[0] = (struct timespec){0, UTIME_NOW};
        ts[1] = (struct timespec){0, UTIME_NOW};
        printf("another's file: chmod %s, chown %s, utimensat a time %s, utimensat now %s\n",
               E(chmod(t, 0666)), E(chown(t, getuid(), (gid_t)-1)),
               E(utimes(t, (struct timeval[2]){{1, 0}, {1, 0}})), E(utimensat(AT_FDCWD, t, ts, 0)));
    }
    if (argc >= 4 && argv[3][0]) {
        printf("link to another file system: %s\n", E(link(f, in(0, argv[3], "other"))));
        unlink(p[0]);
    }
    printf("the node's /dev/null: chmod %s\n", E(chmod("/dev/null", 0666)));

    close(fd);
    unlink(in(0, d, "data"));
    unlink(in(0, d, "link"));
    unlink(in(0, d, "hard"));
    return 0;
}
