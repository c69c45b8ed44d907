/* The application's file descriptors: the console (0, 1, 2 at start; yod's
 * streams under a job), under a job files forwarded to a file server
 * (kernel/job/files.c, kernel/sys/file.c, docs/fileio.md), and the
 * process's own pipes, eventfds and epoll instances (kernel/sys/evobj.c). */
#ifndef TERN_FD_H
#define TERN_FD_H
#include <stdbool.h>
#include <stdint.h>

#define MAX_FDS 256

enum fd_kind { FD_NONE, FD_CONSOLE_IN, FD_CONSOLE_OUT, FD_CONSOLE_ERR, FD_FILE,
               FD_PIPE_R, FD_PIPE_W, FD_EVENT, FD_EPOLL, FD_TIMER };   /* the last five: evobj.h */

/* An open file on a server: shared by the descriptors dup() made of it. */
struct ofile {
    uint32_t refs;
    int srv;                       /* files.c server index */
    bool dir;
    uint64_t handle;               /* the server's */
    char *path;                    /* absolute, normalised: for *at() and fchdir */
    /* The file's identity on its server, asked for (fstat) only when the
     * process has shared mappings (sys/file_map.c) to keep in step. */
    bool id_known;
    uint64_t dev, ino;
};

struct fd {
    enum fd_kind kind;
    bool cloexec;
    uint32_t flags;                /* O_* status flags (F_GETFL) */
    union {
        struct ofile *of;          /* FD_FILE */
        struct kobj *obj;          /* pipes, eventfds, epoll (evobj.h) */
    };
};

/* Every process of the node (each rank: ranks.c) gets the three console
 * descriptors, and nothing else. */
void fd_init(void);
struct fd *fd_get(uint64_t fd);    /* NULL if not open */
/* One reference to an open file less: the server closes it with the last
 * (a descriptor's, or a shared mapping's: sys/file_map.c). */
void ofile_put(struct ofile *of);
/* Installs f at the lowest free descriptor: the descriptor, or -EMFILE
 * (what f names is not released; the caller counts its references). */
long fd_install(struct fd f);
/* How many descriptors are free. */
unsigned fd_free_count(void);
/* Forgets every descriptor of every process (the job is over: no server is
 * told). */
void fd_reset(void);
#endif
