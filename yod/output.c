/* What the ranks write reaches yod's stdout and stderr a line at a time, in
 * order per rank and stream, with "[rank] " in front under -label.  A
 * line of yod's output never holds bytes of two ranks: a line that grows
 * past 64 KiB without a newline goes out in pieces as it comes, and if
 * another rank's bytes must go out on that stream meanwhile, the piece is
 * ended with a newline first (-label marks where the line goes on).  A
 * rank's last line without a newline gets one when the rank ends.
 *
 * yod's own fds 1 and 2 are written by a thread of their own, from a queue
 * in the order things were said: a slow or stopped reader of yod's output
 * never stops yod from serving the nodes (heartbeats, acknowledgements).
 * While the queue holds more than OUTPUT_QUEUE_HIGH bytes, yod takes no
 * more output from the ranks (monitor.c), so their writes wait. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "yod.h"

#define LONG_LINE 65536

struct chunk {
    struct chunk *next;
    int fd;
    size_t n;
    char data[];
};
static struct {
    pthread_mutex_t mu;
    pthread_cond_t more, less;
    struct chunk *head, *tail;
    size_t bytes;
    bool on, failed;
} Q = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER,
       NULL, NULL, 0, false, false};

static void write_fd(int fd, const char *p, size_t n)
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

static void *writer(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&Q.mu);
    for (;;) {
        while (!Q.head)
            pthread_cond_wait(&Q.more, &Q.mu);
        struct chunk *c = Q.head;        /* stays queued until written: drain waits */
        pthread_mutex_unlock(&Q.mu);
        write_fd(c->fd, c->data, c->n);
        pthread_mutex_lock(&Q.mu);
        Q.head = c->next;
        if (!Q.head)
            Q.tail = NULL;
        Q.bytes -= c->n;
        free(c);
        pthread_cond_broadcast(&Q.less);
    }
    return NULL;
}

static bool start_writer(void)
{
    if (Q.on || Q.failed)
        return Q.on;
    sigset_t all, old;
    sigfillset(&all);              /* signals are yod's main thread's */
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t t;
    Q.on = pthread_create(&t, NULL, writer, NULL) == 0;
    Q.failed = !Q.on;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (Q.on)
        pthread_detach(t);
    return Q.on;
}

static void write_all(int fd, const char *p, size_t n)
{
    struct chunk *c = n && start_writer() ? malloc(sizeof *c + n) : NULL;
    if (!c) {                       /* in order, then straight out */
        output_drain();
        write_fd(fd, p, n);
        return;
    }
    c->next = NULL;
    c->fd = fd;
    c->n = n;
    memcpy(c->data, p, n);
    pthread_mutex_lock(&Q.mu);
    if (Q.tail)
        Q.tail->next = c;
    else
        Q.head = c;
    Q.tail = c;
    Q.bytes += n;
    pthread_cond_signal(&Q.more);
    pthread_mutex_unlock(&Q.mu);
}

size_t output_queued(void)
{
    pthread_mutex_lock(&Q.mu);
    size_t n = Q.bytes;
    pthread_mutex_unlock(&Q.mu);
    return n;
}

void output_drain(void)
{
    pthread_mutex_lock(&Q.mu);
    while (Q.head)
        pthread_cond_wait(&Q.less, &Q.mu);
    pthread_mutex_unlock(&Q.mu);
}

/* yod's own words on stderr, in their place among the ranks' output. */
void output_say(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    output_end_line(2);
    write_all(2, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
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
 * as it is.  Another rank's line that follows starts on a line of its own
 * (emit ends the open one); the job's last bytes stay its own, so a
 * one-rank job's output (a compressed file, a tar archive) arrives byte
 * for byte (yod added a newline to it). */
void output_flush(int rank)
{
    for (int fd = 1; fd <= 2; fd++) {
        struct line_buf *lb = &Y.ranks[rank].out[fd];
        if (lb->len)
            emit(rank, fd, lb->buf, lb->len);
        lb->len = 0;
    }
}
