/* The job a node runs for yod (kernel/job/): loading, control while it
 * runs, its standard streams, and the end that returns the node to the
 * pool.  The protocol is yod/yod_proto.h. */
#ifndef TERN_JOB_H
#define TERN_JOB_H
#include <stdbool.h>
#include <stdint.h>
#include "kernel.h"
#include "portals4.h"

#define TERN_KERNEL_IFACE 1      /* the kernel's own Portals interface */

struct job_state {
    bool active;                 /* a job is loading or running here */
    bool running;                /* ... and its program has started */
    bool go;                     /* yod has said GO */
    uint32_t id, rank, size, uid, gid;
    uint32_t yod_nid, yod_pid;
    uint64_t last_heard_ns;      /* last message from yod */
    uint64_t start_ns;
    bool stdin_eof;
    uint64_t stdin_seq;
    bool yod_gone;               /* no report can reach it */
    bool ending;                 /* job_end under way: new descriptors wait */
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
/* Portals events for job messages (loader.c, control.c). */
bool job_is_load_slot(const void *user_ptr);
void job_on_load_put(const ptl_event_t *ev);
void job_on_ctl_put(const ptl_event_t *ev);
void job_refuse_busy(void);            /* a second yod's descriptor */
void job_go(void);                     /* yod said GO */
void job_unserve_image(void);
void job_loader_reset(void);           /* frees the ended job's descriptor and map */

/* loader.c: serve jobs forever; entered on a fresh kernel stack. */
__attribute__((noreturn)) void job_loop(void);

/* control.c */
void job_service_from_wait(void);      /* in kernel waits: control messages */
void job_tick_start(void);
void job_tick_stop(void);
void job_control_reset(void);
extern bool kernel_frames_arrived;     /* portals/host.c: frames for the kernel NI */

/* stdio.c: a rank's standard streams */
long job_output(unsigned fd, const void *buf, uint64_t len);
long job_read_stdin(uint64_t ubuf, uint64_t len);

/* end.c: reports how the job ended to yod (unless yod is gone), resets the
 * node and goes back to job_loop.  why: a message for yod, or NULL. */
__attribute__((noreturn)) void job_end(enum end_kind kind, int code, const char *why);
/* A fault report (trap.c) goes to the rank's stderr, its first line to yod
 * with the end. */
void job_fault_report(const char *text, uint64_t len);
void job_stdio_reset(void);
/* sys/portals.c: forget the program's Portals state (its NIs are gone). */
void portals_syscall_reset(void);
#endif
