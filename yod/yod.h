/* yod: the job launcher.  Pieces: main.c (command line, the whole run),
 * program.c (reading and checking executables), alloc_client.c (talking to
 * the allocator), launch.c (loading a job on its nodes), monitor.c (the
 * running job: output, input, signals, heartbeats, ends), output.c (line
 * assembly per rank).  Protocol: <tern/yod_proto.h>. */
#ifndef YOD_H
#define YOD_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "portals4.h"
#include <tern/yod_proto.h>

#define YOD_MAX_RANKS 1024
#define YOD_MAX_GROUPS 64
/* How long yod waits for nodes that are finishing an ended job (the
 * allocator's EBUSY): a node ends one whose yod is gone after YOD_SILENCE_S. */
#define YOD_ALLOC_WAIT_S (2 * YOD_SILENCE_S)

struct program {
    char *path;
    uint8_t *data;
    size_t len;
    uint8_t sha256[32];
};

/* One line of a load file (or the whole command line): a program and the
 * ranks that run it. */
struct group {
    struct program prog;
    int argc;
    char **argv;
    int count;                      /* ranks asked for (-sz) */
    uint32_t list[YOD_MAX_RANKS];   /* or explicit nodes (-list) */
    int nlist;
    int first_rank;
    ptl_handle_me_t image_me;
};

enum rank_state { R_LOADING, R_LOADED, R_RUNNING, R_EXITED, R_LOST, R_FAILED_LOAD };

struct line_buf {
    char *buf;
    size_t len, cap;
};

struct rank {
    uint32_t nid;
    int group;
    /* Where it runs (place_ranks): the job's node index (the allocator's
     * nids in order), its place among that node's ranks and how many the
     * node runs.  A node runs one group's ranks, -ppn of them at most. */
    int node, local, nlocal;
    enum rank_state state;
    int status, signal;
    char message[224];
    bool hb_outstanding;
    uint64_t usec;
    struct line_buf out[3];        /* [1] stdout, [2] stderr */
    uint64_t got[3];               /* bytes that arrived, per stream */
    uint64_t owed[3];              /* where the latest write ends in the stream */
    bool by_yod;                   /* EXITED: yod's signal ended it */
    uint8_t *desc;                 /* its load descriptor, until acknowledged */
    size_t desc_len;
    ptl_handle_md_t desc_md;
};

struct options {
    int sz;
    char *list;
    uint64_t heap, stack;
    double timeout;
    bool label, quiet, verbose;
    int fanout;
    int ppn;                        /* ranks per node (-ppn), one per core; 0: not
                                     * given (allocate() chooses, choose_ppn) */
    char *loadfile;
};

struct yod {
    struct options opt;
    struct group groups[YOD_MAX_GROUPS];
    int ngroups;
    int size;
    struct rank ranks[YOD_MAX_RANKS];
    uint32_t job;
    ptl_handle_ni_t ni;
    ptl_handle_eq_t eq;
    ptl_process_t me;
    uint32_t alloc_nid;
    uint8_t job_key[32];         /* the allocator's key for this job (docs/security.md) */
    double t_start, t_loaded, t_end;
    struct yod_mount mounts[YOD_MOUNTS_MAX];   /* fyods, from the allocator */
    int nmounts;
    char cwd[4096];
    uint32_t umask;
};
extern struct yod Y;

/* program.c: reads path, checks it is a static x86-64 executable; 0 or -1
 * with a message in err. */
int program_read(struct program *p, const char *path, char *err, size_t errlen);
/* Whether the program may start threads: its symbol table names a function
 * that starts them (*why: that name), or it has none (*why says so).  No:
 * *why NULL.  yod's default ranks per node rests on it. */
bool program_may_start_threads(const struct program *p, const char **why);

/* alloc_client.c */
int yod_portals_open(char *err, size_t errlen);
/* Sends a request of type (with len bytes in req, header filled in here) and
 * waits for the answer; 0, or -1 with err (allocator unreachable). */
struct tern_reply;
int alloc_request(void *req, size_t len, uint16_t type, struct tern_reply *rep, char *err,
                  size_t errlen);

/* files.c: the fyods the allocator knows (mount table), yod's own file
 * server for the other paths. */
int files_setup(char *err, size_t errlen);
void files_mounts(void);
void files_end(void);

/* launch.c: loads every rank; 0 when all have loaded, else -1 (reported). */
int launch(void);
void send_ctl_all(uint32_t type, uint32_t arg);
void send_ctl(int rank, uint32_t type, uint32_t arg);
extern int ctl_unacked;            /* control messages not yet acknowledged */
int count_state(enum rank_state s);
enum { OP_DESC = 1, OP_CTL = 2, OP_HEARTBEAT = 3, OP_STDIN = 4, OP_PAUSE = 5, OP_ALLOC = 6 };
void *op_tag(int kind, int rank);

/* monitor.c: runs the job to its end; returns yod's exit status. */
int monitor(void);
/* Handles one event during loading or running. */
void handle_event(const ptl_event_t *ev);
void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* output.c */
void output_append(int rank, int fd, const char *data, size_t len);
void output_flush(int rank);
void output_end_line(int fd);      /* before yod's own words on fd */
void output_say(const char *fmt, ...) __attribute__((format(printf, 1, 2))); /* on stderr */
/* signals.c: the handlers set these flags, the monitor acts on them. */
extern volatile int yod_interrupted, yod_terminated, yod_usr1, yod_usr2, yod_tstp;
void yod_install_signals(void);
void yod_catch_tstp(void);          /* ^Z is taken by the monitor (again after a stop) */
size_t output_queued(void);        /* bytes not yet written to yod's fds 1 and 2 */
void output_drain(void);           /* waits until they are */
#define OUTPUT_QUEUE_HIGH (16u << 20) /* above: no more output is taken from the ranks */

double now_s(void);
#endif
