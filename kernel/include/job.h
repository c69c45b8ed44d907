/* The job a node runs for yod (kernel/job/): loading, control while it
 * runs, its standard streams, and the end that returns the node to the
 * pool.  The protocol is include/tern/yod_proto.h. */
#ifndef TERN_JOB_H
#define TERN_JOB_H
#include <stdbool.h>
#include <stdint.h>
#include "kernel.h"
#include "portals4.h"
#include "ptl_kernel.h"

struct job_state {
    bool active;                 /* a job is loading or running here */
    bool running;                /* ... and its program has started */
    bool go;                     /* yod has said GO */
    uint32_t id, rank, size, uid, gid;
    uint32_t yod_nid, yod_pid;
    uint8_t key[32];             /* the job's key, from the allocator's grant */
    uint8_t fio_token[32];       /* the grant's proof for file servers */
    uint64_t last_heard_ns;      /* last message from yod */
    uint64_t yod_paused_until;   /* yod said PAUSE (it is stopped): send it nothing */
    uint64_t start_ns;
    bool stdin_eof;
    uint64_t stdin_seq;
    bool yod_gone;               /* no report can reach it */
    bool ending;                 /* the rank is ending (job_end under way, or a fault being
                                  * reported): yod's signals no longer matter, new
                                  * descriptors wait */
    int yod_signal;              /* the last signal from yod acted on */
};
extern struct job_state job;

/* The kernel's own endpoint: one NI and one EQ on TERN_KERNEL_IFACE. */
struct knode {
    ptl_handle_ni_t ni;
    ptl_handle_eq_t eq;
    bool open;
};
extern struct knode knode;
extern unsigned knode_waiting;

/* An operation the kernel waits for: filled in by the event dispatcher. */
struct kop {
    volatile bool done;
    ptl_ni_fail_t fail;
    uint64_t mlength;
};

/* knode.c */
int knode_open(void);
/* Handles every event queued now; true if there was one. */
bool knode_dispatch_pending(void);
/* Waits (dispatching every event) until op is done or the deadline;
 * false on timeout.  op NULL: until the next event. */
bool knode_wait(struct kop *op, uint64_t deadline_ns);
/* Lets ns pass, dispatching events meanwhile. */
void knode_pause(uint64_t ns);
/* Takes in what the network has brought and lets Portals retransmit,
 * without waiting: between pieces of long work (clearing the region), so
 * that the node does not look dead meanwhile. */
void knode_answer(void);
/* The same, returning the frames taken in. */
int knode_take(void);
/* Long kernel work (hashing a program, ...) calls this every few
 * microseconds' worth of native work: at most every 20 ms of real time it
 * hands arrived frames to Portals (acks, health pings, yod's messages), so
 * how long the work takes (an instruction emulator runs kernel code 1000x
 * slower) never makes the node look dead. */
void knode_keepalive(void);
/* Puts len bytes from buf (any mapped address) to (nid, pid) and waits for
 * the acknowledgement; returns its ni_fail_type, or -1 on timeout. */
int knode_put(const void *buf, uint64_t len, uint32_t nid, uint32_t pid, ptl_pt_index_t pt,
              uint64_t bits, uint64_t deadline_ns);
/* The same for the len bytes of niov pieces (the list must stay valid until
 * the put ends), with header data. */
int knode_putv(const ptl_iovec_t *iov, unsigned niov, uint64_t len, uint32_t nid, uint32_t pid,
               ptl_pt_index_t pt, uint64_t bits, uint64_t hdr_data, uint64_t deadline_ns);
/* Portals events for job messages (loader.c, control.c). */
bool job_is_load_slot(const void *user_ptr);
void job_on_load_put(const ptl_event_t *ev);
void job_on_ctl_put(const ptl_event_t *ev);
void job_refuse_busy(void);            /* a second yod's descriptor */
void job_go(void);                     /* yod said GO */
void job_unserve_image(void);
void job_loader_reset(void);           /* frees the ended job's descriptor and map */

/* grant.c: the allocator's grants (include/tern/tern_proto.h TERN_GRANT):
 * a node runs only a job it holds one for. */
struct job_grant {
    bool valid;
    uint32_t job, uid, gid, launcher_nid, launcher_pid;
    uint8_t key[32], fio_token[32];
};
int job_grants_open(void);             /* posts the grant buffers (knode_open) */
bool job_is_grant_buf(const void *user_ptr);
void job_on_grant_put(const ptl_event_t *ev);
/* The grant of job, waiting up to wait_ns for it to arrive; NULL if none. */
const struct job_grant *job_grant_find(uint32_t job, uint64_t wait_ns);
void job_grant_drop(uint32_t job);     /* used up: the job has begun */
/* control.c: the allocator says job's launcher is gone (TERN_REVOKE): the
 * job ends at the next chance, as when yod falls silent. */
void job_revoked(uint32_t job);
/* A message refused as not from the allocator's authorised launcher:
 * counted and said on the console with the count. */
void job_refused(const char *what, uint32_t nid, uint32_t pid, const char *why);
void job_refusals_report(void);

/* register.c: a node without a program registers with the allocator, then
 * serves jobs (and the allocator's health pings); does not return unless
 * Portals cannot be opened. */
void node_register_and_serve(void);
/* What the node tells the allocator it holds (tern_proto.h
 * tern_node_state): the job from its load until it starts to end; 0 then. */
void job_state_publish(uint32_t job);
/* ... and the job whose clean-up it is in (0: none). */
void job_state_ending(uint32_t job);
/* register.c: what a cluster node booted without a program does. */
__attribute__((noreturn)) void node_wait_for_work(void);

/* loader.c: serve jobs forever; entered on a fresh kernel stack. */
__attribute__((noreturn)) void job_loop(void);

/* control.c */
void job_service_from_wait(void);      /* in kernel waits: control messages */
/* Around a write to yod: control messages that arrive meanwhile are acted
 * on when the outermost hold is released (that may end the job there), so
 * a write is never cut short by a signal in the middle of a put. */
void job_control_hold(void);
void job_control_release(void);
bool job_end_pending(void);            /* a message from yod that ends the job waits */
bool job_yod_silent(void);             /* yod is gone: silent too long (a pause counted) */
const char *job_yod_gone_why(void);    /* how job_yod_silent knew: for the console */
void job_wait_yod_awake(void);         /* waits while yod is paused (not once it is gone) */
void job_tick_start(void);
void job_tick_stop(void);
void job_control_reset(void);
/* While a job is active it owns the node's waits (wait.h), a program's end
 * and its fault reports (kernel.h: node_set_owner) and the application
 * interface's job id. */
void job_attach(void);
void job_detach(void);

/* stdio.c: a rank's standard streams.  One call is one write (write or
 * writev): it reaches yod whole unless the job is killed with more than
 * YOD_FINISH_MAX of it still to send. */
long job_output(unsigned fd, const void *buf, uint64_t len);
long job_output_v(unsigned fd, const ptl_iovec_t *iov, unsigned niov);
long job_read_stdin(uint64_t ubuf, uint64_t len);

/* end.c: reports how the job ended to yod (unless yod is gone), resets the
 * node and goes back to job_loop.  why: a message for yod, or NULL. */
__attribute__((noreturn)) void job_end(enum end_kind kind, int code, const char *why);
/* The node's owner's end (node.c): the program ended by itself, or could
 * not load.  What it stored in shared file mappings reaches the files
 * first, as a Linux process's dirty pages do when it exits or dies. */
__attribute__((noreturn)) void job_program_end(enum end_kind kind, int code, const char *why);
/* A fault report (trap.c) goes to the rank's stderr, its first line to yod
 * with the end. */
void job_fault_report(const char *text, uint64_t len);
/* ranks.c's end hook: one of the node's ranks (yod -ppn) ended by itself. */
void job_rank_ended(unsigned local, enum end_kind kind, int code);
void job_stdio_reset(void);
/* sys/portals.c: forget the program's Portals state (its NIs are gone). */
void portals_syscall_reset(void);
#endif
