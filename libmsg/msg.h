/*
 * The message engine on Portals 4: what NX (libnx) and MPI (libmpi) are thin
 * layers over.  One copy of the protocol (docs/libnx.md "The Portals
 * protocol", docs/mpi.md):
 *
 *   - matching on Portals match bits and the sender's rank (a layer packs
 *     its own selectors into the 64 bits: NX the message type, MPI the
 *     communicator's context id and the tag) and Portals' match_id (the
 *     source rank, or any);
 *   - eager delivery up to the eager limit, into the posted buffer or into
 *     the library's unexpected space; rendezvous above it (or for a
 *     synchronous send), the receiver pulling the data with PtlGet straight
 *     into the posted buffer;
 *   - flow control that never drops a message (drain, PAUSE, re-enable,
 *     resend) and pair-wise ordering;
 *   - requests: a send or receive in progress, tested or waited for.
 *
 * Progress happens only inside engine calls.  Ranks are the job's ranks
 * (TERN_RANK / TERN_SIZE / TERN_MAP, docs/job-interface.md).
 */
#ifndef TERN_MSG_H
#define TERN_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <portals4.h>

/* Match bits the engine itself searches for (the end marker of a drain):
 * no layer may send a message with exactly these bits. */
#define MSG_BITS_RESERVED ((1ULL << 63) | (1ULL << 62))
/* The engine's own match bit, set on a rendezvous message that carries its
 * data (msg_send.c): a layer's bits never have it, and receives ignore it. */
#define MSG_BIT_PUSHED (1ULL << 61)

#define MSG_ANY_SOURCE (-1L)
/* Largest message: the rendezvous header carries 40 bits of length. */
#define MSG_MAX_LEN ((1ULL << 40) - 1)

enum msg_error {
    MSG_OK = 0,
    MSG_ERR_TRUNCATE = 1, /* the message was longer than the buffer */
};

/* isend flags */
#define MSG_SYNC 1u /* complete only once a receive has taken it (rendezvous) */

/* How a layer starts the engine. */
struct msg_config {
    const char *who;        /* in messages: "libnx", "MPI" */
    const char *env_prefix; /* tunables: PREFIX_EAGER, _UNEXPECTED, _UH, _WINDOW, _STATS,
                               _DEBUG, _REQUESTS, _SAVED_MAX, _EXIT_WAIT */
    /* A rank told that another aborted waits this long (answering Portals)
     * before it exits too, so a launcher sees the aborting rank end first
     * and can name it (yod ends the others itself).  0: at once. */
    unsigned abort_linger_ms;
};

/* A send or receive in progress.  The layer reads the public part; the
 * rest is the engine's. */
struct msg_req {
    int kind;             /* the engine's object tag (user_ptr dispatch) */
    bool in_use, is_recv, done, ignored, internal;
    int error;            /* enum msg_error, once done */
    /* Once a receive is done: the message's sender, match bits, full
     * length (beyond count if truncated; count bytes were delivered). */
    long src;
    uint64_t mbits;
    uint64_t len;
    void *owner;          /* the layer's */
    /* receive arguments */
    void *buf;
    uint64_t count;
    uint64_t bits, ignore;
    long srcsel;
    /* engine state */
    bool posted;          /* an ME is on the priority list */
    bool held, searched, found; /* waiting for room in Portals (msg_held.c) */
    struct msg_req *held_next;   /* held order; also the link of the pull queue and of
                                  * receives waiting to expose for a late send (msg_recv.c) */
    struct msg_req *held_prev;   /* held order, backwards */
    struct msg_req *held_bnext;  /* next in its held bucket (msg_held.c) */
    uint64_t post_seq;    /* the order the program posted receives in: messages to
                           * oneself, and held receives across buckets */
    ptl_handle_me_t me;
    struct msg_saved *wait_saved; /* drained message still arriving */
    ptl_handle_md_t get_md;       /* rendezvous pull */
    uint64_t get_len, get_got;
    uint64_t pull_id, pull_landed; /* a pull waiting for room (msg_recv.c) */
    bool pull_posted;
    /* sends: where it went and what identifies it there (a cancel) */
    long dest;
    uint64_t send_bits, send_id, send_seq;
    bool send_rdv;
    struct msg_out *out;  /* a rendezvous send's, until the receiver has it all */
    /* A cancel asked for (msg_cancel_send): not done until the receiver
     * answers; done_before / sent_meanwhile say whether the send was or
     * got complete meanwhile, cancelled what the answer said. */
    bool cancel_asked, cancel_unsent, done_before, sent_meanwhile, cancelled;
    struct msg_req *cancel_next;
};

/* Start (once; later calls do nothing) and stop (once: every message sent
 * is accepted, the exit handshake is done; also run at exit). */
void msg_start(const struct msg_config *cfg);
void msg_finish(void);
bool msg_started(void);
bool msg_finished(void);
long msg_rank(void);
long msg_size(void);
double msg_now(void); /* seconds, CLOCK_MONOTONIC */

/* Requests: NULL when all are in use (the table is the engine's bounded
 * memory; internal ones are for the layers' own collective traffic). */
struct msg_req *msg_req_new(bool internal);
void msg_req_free(struct msg_req *r);
long msg_req_index(const struct msg_req *r);
struct msg_req *msg_req_at(long i); /* NULL if not a request in use */
long msg_req_capacity(void);        /* how many requests the table holds */

/* Start a send / a receive on a fresh request.  A send returns once the
 * buffer may be reused for an eager message (the request is then done) or
 * at once for rendezvous (done when the receiver has pulled it).  srcsel:
 * a rank or MSG_ANY_SOURCE; a message matches when its bits agree with
 * bits outside ignore. */
void msg_isend(struct msg_req *r, long dest, uint64_t bits, const void *buf, uint64_t len,
               unsigned flags);
void msg_irecv(struct msg_req *r, long srcsel, uint64_t bits, uint64_t ignore, void *buf,
               uint64_t count);
void msg_wait(struct msg_req *r);
bool msg_test(struct msg_req *r); /* one step of progress, then done? */
/* Take back a receive nothing has matched yet: true if it was taken back
 * (then the request is free), false if it is completing (wait for it). */
bool msg_cancel_recv(struct msg_req *r);
/* Cancel a send (MPI_Cancel): ask its receiver to take the message out of
 * matching if no receive has it yet.  The request is done once the answer
 * came (and, if not cancelled, the send completed as it would have);
 * r->cancelled says which.  It needs the receiver's engine to make
 * progress (any engine call there answers).  A send to oneself is
 * answered at once. */
void msg_cancel_send(struct msg_req *r);
/* Ignore a request: it frees itself when done (NX msgignore). */
void msg_ignore(struct msg_req *r);

/* Is a message there that a receive (srcsel, bits, ignore) would take?
 * If so, true and its sender, bits and length. */
struct msg_probe_info {
    long src;
    uint64_t bits, len;
};
bool msg_probe(long srcsel, uint64_t bits, uint64_t ignore, bool block,
               struct msg_probe_info *out);

/* Matched probe: take the message a receive (srcsel, bits, ignore) would
 * take now out of matching, so no later receive or probe sees it; its
 * sender, bits and length in out.  NULL when there is none (block: wait
 * for one).  msg_mrecv then receives exactly it on a fresh request, as
 * msg_irecv would (truncation, rendezvous pull), and lets it go; a taken
 * message is held (its first bytes on the heap, a rendezvous sender's
 * buffer exposed) until then. */
struct msg_saved;
struct msg_saved *msg_mprobe(long srcsel, uint64_t bits, uint64_t ignore, bool block,
                             struct msg_probe_info *out);
void msg_mrecv(struct msg_req *r, struct msg_saved *m, void *buf, uint64_t count);

void msg_progress(bool block);
/* A layer's own progress (MPI's nonblocking collectives step their
 * schedules): called after each round of the engine's progress, never
 * from inside itself; NULL: none. */
void msg_set_progress_hook(void (*hook)(void));
/* Around a blocking wait in Portals, for a layer whose threads share the
 * engine under a lock of their own (MPI_THREAD_MULTIPLE): begin returns 1
 * if it let its lock go (end is then called right after the wait), -1 if
 * it waited some other way and the engine should only poll, 0 to block as
 * usual; it may shorten the wait (*ms).  may_poll says whether this
 * thread may take events now (not while another thread waits in Portals:
 * an event it took is handled first). */
void msg_set_wait_hooks(int (*begin)(unsigned *ms), void (*end)(void), bool (*may_poll)(void));

/* A barrier among n ranks whose rounds Portals forwards itself (triggered
 * puts on counters, msg_barrier.c): after the call has posted its
 * operations the program is not woken between rounds.  world[i] is the job
 * rank of member i (NULL: member i is rank i); me is this rank's member
 * number; id tells objects apart on the wire (below 2^56, distinct among
 * the objects alive in the job; a layer's own space).  Every member makes
 * it and may use it only once every member has made it (a layer agrees on
 * that with a collective of its own, which also tells whether every member
 * got one: NULL when Portals' resources ran out or the ids are wrong).
 * msg_barrier_wait is the barrier, called by every member in turn;
 * msg_barrier_free after the object's last barrier. */
struct msg_barrier;
struct msg_barrier *msg_barrier_new(uint64_t id, long n, long me, const int *world);
void msg_barrier_wait(struct msg_barrier *b);
void msg_barrier_free(struct msg_barrier *b);
int msg_barrier_rounds(const struct msg_barrier *b);
/* Tell every rank to exit with status, and exit. */
_Noreturn void msg_abort(int status);
/* "WHO (node N): ..." on stderr, then msg_abort(1). */
_Noreturn void msg_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
long msg_env_long(const char *suffix, long dflt); /* PREFIX_SUFFIX from the environment */
#endif
