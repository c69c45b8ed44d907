/* Symbolic links with absolute targets, and relative ones that climb out,
 * as Linux follows them: `links DIR ELSEWHERE` makes its tree in DIR (and a
 * file in ELSEWHERE, which may be on another file system or server) and
 * prints what it sees.  The lines name no directory: run on Linux and on a
 * node, they are the same. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[2048], away[2048];

static const char *ename(int e)
{
    switch (e) {
    case 0: return "OK";
    case ENOENT: return "ENOENT";
    case ELOOP: return "ELOOP";
    case EACCES: return "EACCES";
    case EXDEV: return "EXDEV";
    case ENOTDIR: return "ENOTDIR";
    default: return strerror(e);
    }
}

/* DIR/rel or ELSEWHERE/rel (path begins "@"). */
static const char *at(const char *rel)
{
    static char buf[4][4096];
    static int k;
    char *b = buf[k++ % 4];
    if (rel[0] == '@')
        snprintf(b, sizeof buf[0], "%s/%s", away, rel + 1);
    else
        snprintf(b, sizeof buf[0], "%s/%s", dir, rel);
    return b;
}

static void put(const char *rel, const char *text)
{
    int fd = open(at(rel), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text) || close(fd)) {
        printf("make %s: %s\n", rel, ename(errno));
        exit(1);
    }
}

/* What reading the file at rel gives: its text, or the error. */
static const char *get(const char *rel)
{
    static char buf[256];
    int fd = open(at(rel), O_RDONLY);
    if (fd < 0)
        return ename(errno);
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n < 0)
        return ename(errno);
    buf[n] = 0;
    return buf;
}

static void link_abs(const char *target_rel, const char *link_rel)
{
    if (symlink(at(target_rel), at(link_rel))) {
        printf("symlink %s: %s\n", link_rel, ename(errno));
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    snprintf(dir, sizeof dir, "%s", argv[1]);
    snprintf(away, sizeof away, "%s", argv[2]);
    mkdir(dir, 0755);
    mkdir(away, 0755);
    mkdir(at("real"), 0755);
    mkdir(at("real/sub"), 0755);
    put("data", "data's text");
    put("real/inside", "inside's text");
    put("@there", "elsewhere's text");

    link_abs("data", "abs");
    link_abs("real", "absdir");
    link_abs("abs", "chain");
    link_abs("@there", "cross");
    link_abs("loop2", "loop1");
    link_abs("loop1", "loop2");
    symlink("../../data", at("real/sub/up"));
    symlink("../absdir/inside", at("real/viaabs"));

    printf("through an absolute link: %s\n", get("abs"));
    printf("a directory's absolute link on the way: %s\n", get("absdir/inside"));
    printf("a chain of two: %s\n", get("chain"));
    printf("a relative link up two levels: %s\n", get("real/sub/up"));
    printf("a relative link into an absolute one: %s\n", get("real/viaabs"));
    printf("to another file system: %s\n", get("cross"));
    printf("a loop: %s\n", get("loop1"));

    struct stat st, lst;
    int e1 = stat(at("abs"), &st) ? errno : 0, e2 = lstat(at("abs"), &lst) ? errno : 0;
    printf("stat follows it: %s %s, lstat does not: %s %s\n", ename(e1),
           !e1 && S_ISREG(st.st_mode) && st.st_size == 11 ? "a file of 11 bytes" : "NO", ename(e2),
           !e2 && S_ISLNK(lst.st_mode) ? "a link" : "NO");
    char target[4096];
    ssize_t n = readlink(at("abs"), target, sizeof target - 1);
    target[n > 0 ? n : 0] = 0;
    printf("readlink: %s\n", n > 0 && !strcmp(target, at("data")) ? "the absolute path" : "NO");
    int fd = open(at("abs"), O_RDONLY | O_NOFOLLOW);
    printf("O_NOFOLLOW: %s", ename(fd < 0 ? errno : 0));
    fd = open(at("abs"), O_PATH | O_NOFOLLOW);
    printf("; O_PATH|O_NOFOLLOW: %s\n", ename(fd < 0 ? errno : 0));
    if (fd >= 0)
        close(fd);

    /* Names made, changed and removed through a directory's link. */
    put("absdir/made", "made through the link");
    printf("created through it: %s\n", get("real/made"));
    int r = rename(at("absdir/made"), at("absdir/renamed"));
    printf("rename through it: %s, %s\n", ename(r ? errno : 0), get("real/renamed"));
    r = link(at("absdir/renamed"), at("hard"));
    printf("link from it: %s, %s\n", ename(r ? errno : 0), get("hard"));
    r = chmod(at("absdir/renamed"), 0600);
    printf("chmod through it: %s, mode %o\n", ename(r ? errno : 0),
           stat(at("real/renamed"), &st) ? 0 : (unsigned)(st.st_mode & 07777));
    r = unlink(at("absdir/renamed"));
    printf("unlink through it: %s, then %s\n", ename(r ? errno : 0), get("real/renamed"));
    r = mkdir(at("absdir/newdir"), 0755);
    printf("mkdir through it: %s, a directory there %s\n", ename(r ? errno : 0),
           stat(at("real/newdir"), &st) == 0 && S_ISDIR(st.st_mode) ? "yes" : "NO");

    /* chdir through it: the working directory is where it led. */
    char cwd[4096];
    r = chdir(at("absdir"));
    const char *c = getcwd(cwd, sizeof cwd);
    size_t dl = strlen(at("real"));
    fd = open("inside", O_RDONLY);
    printf("chdir through it: %s, getcwd DIR/%s, a relative open %s\n", ename(r ? errno : 0),
           c && !strncmp(c, at("real"), dl) && c[dl] == 0 ? "real" : c ? c : "NO",
           ename(fd < 0 ? errno : 0));
    return 0;
}
