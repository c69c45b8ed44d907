/* What the ranks write reaches yod's stdout and stderr a line at a time, in
 * order per rank and stream, with "[rank] " in front under -label.  A
 * line of yod's output never holds bytes of two ranks: a line that grows
 * past 64 KiB without a newline goes out in pieces as it comes, and if
 * another rank's bytes must go out on that stream meanwhile, the piece is
 * ended with a newline first (-label marks where the line goes on).  A
 * rank's last line without a newline gets one when the rank ends. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "yod.h"

#define LONG_LINE 65536

static void write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return;        /* yod's own output is gone (closed pipe): nothing to do */
        p += k;
        n -= (size_t)k;
    }
}

/* The rank whose unfinished line yod's fd 1 or 2 is in the middle of, or -1. */
static int open_rank[3] = {-1, -1, -1};

void output_end_line(int fd)
{
    if (open_rank[fd] >= 0)
        write_all(fd, "\n", 1);
    open_rank[fd] = -1;
}

static void emit(int rank, int fd, const char *p, size_t n)
{
    if (n == 0)
        return;
    bool goes_on = open_rank[fd] == rank;
    if (!goes_on)
        output_end_line(fd);
    open_rank[fd] = p[n - 1] == '\n' ? -1 : rank;
    if (!Y.opt.label) {
        write_all(fd, p, n);
        return;
    }
    static char *scratch;
    static size_t cap;
    char prefix[24];
    int pl = snprintf(prefix, sizeof prefix, "[%d] ", rank);
    size_t need = n + (n + 1) * (size_t)pl + 1, o = 0;
    if (need > cap) {
        free(scratch);
        cap = need * 2;
        scratch = malloc(cap);
        if (!scratch) {
            cap = 0;
            write_all(fd, p, n);
            return;
        }
    }
    bool at_start = !goes_on;
    for (size_t i = 0; i < n; i++) {
        if (at_start) {
            memcpy(scratch + o, prefix, (size_t)pl);
            o += (size_t)pl;
        }
        scratch[o++] = p[i];
        at_start = p[i] == '\n';
    }
    write_all(fd, scratch, o);
}

void output_append(int rank, int fd, const char *data, size_t len)
{
    /* A zero-byte put (a node may send one) adds nothing, and before the
     * rank's first bytes there is no buffer to add it to. */
    if ((fd != 1 && fd != 2) || len == 0)
        return;
    struct line_buf *lb = &Y.ranks[rank].out[fd];
    if (lb->len + len > lb->cap) {
        size_t cap = (lb->len + len) * 2;
        char *nb = realloc(lb->buf, cap);
        if (!nb) {                 /* out of memory: as it comes, not line by line */
            emit(rank, fd, lb->buf, lb->len);
            lb->len = 0;
            emit(rank, fd, data, len);
            return;
        }
        lb->buf = nb;
        lb->cap = cap;
    }
    memcpy(lb->buf + lb->len, data, len);
    lb->len += len;
    size_t end = lb->len;
    while (end && lb->buf[end - 1] != '\n')
        end--;
    if (end == 0 && lb->len >= LONG_LINE)
        end = lb->len;
    if (end) {
        emit(rank, fd, lb->buf, end);
        memmove(lb->buf, lb->buf + end, lb->len - end);
        lb->len -= end;
    }
}

/* A rank has ended: what it wrote without a final newline goes out too,
 * with one. */
void output_flush(int rank)
{
    for (int fd = 1; fd <= 2; fd++) {
        struct line_buf *lb = &Y.ranks[rank].out[fd];
        if (lb->len)
            emit(rank, fd, lb->buf, lb->len);
        lb->len = 0;
        if (open_rank[fd] == rank)
            output_end_line(fd);
    }
}
