/*
 * Service protocol between compute nodes, launchers and the allocator,
 * carried in Portals puts.  One header for every side (the kernel includes it
 * too): fixed-size little-endian structs, nothing but <stdint.h>.
 *
 * A request is a put to (TERN_ALLOC_NID, TERN_ALLOC_PID) on portal
 * TERN_PT_SERVICE; the answer is a put back to (the requester's nid,
 * reply_pid) on portal reply_pt with match bits = request_id.
 */
#ifndef TERN_PROTO_H
#define TERN_PROTO_H
#include <stdint.h>

#define TERN_MAGIC 0x4E524554u           /* "TERN" */
#define TERN_PROTO_VERSION 3            /* 2: CPU counts (cores); 3: MUNGE
                                         * credentials, job grants, RELEASE's
                                         * unsure nodes, node state Get */
#define TERN_ALLOC_PID 2
#define TERN_PT_SERVICE 8
#define TERN_PT_REPLY 9
#define TERN_CRED_MAX 512               /* a MUNGE credential, with its NUL */
#define TERN_KEY_BYTES 32
#define TERN_MAX_LIST 1024
#define TERN_MSG_MAX 20480
#define TERN_MB_GRANT 1                  /* match bits of a grant on a node's TERN_PT_SERVICE */

enum tern_msg_type {
    TERN_REGISTER = 1,   /* a node has booted */
    TERN_ALLOC = 2,      /* a launcher wants nodes */
    TERN_RELEASE = 3,    /* a job has ended */
    TERN_STATUS = 4,     /* nodes and jobs, for -show */
    TERN_KILL = 5,       /* yod -kill: ask the job's launcher to end it */
    TERN_FYOD_REGISTER = 6, /* an fyod serves a prefix (again now and then; leaving: gone) */
    TERN_FYODS = 7,      /* the fyods and their prefixes: reply u.fyods */
    TERN_GRANT = 8,      /* allocator -> node kernel: a job it may run */
    TERN_REVOKE = 9,     /* allocator -> node kernel: that job's launcher is gone */
    TERN_REPLY = 0x80,
};

/* Who asks: every request but REGISTER carries a MUNGE credential (the
 * credential service Slurm uses; docs/security.md) whose payload is the
 * SHA-256 of the whole request with this field zeroed.  The allocator takes
 * the requester's uid and gid from the credential, never from the request;
 * munged refuses a credential decoded twice, so a copied one is worthless. */
struct tern_hdr {
    uint32_t magic;
    uint16_t version, type;
    uint64_t request_id;
    uint32_t reply_pid, reply_pt;
    char cred[TERN_CRED_MAX];            /* "" in REGISTER, GRANT and replies */
};

/* Accepted only from a node kernel (pid YOD_NODE_PID, job id 0 on the
 * wire) and only for the MAC its frames come from. */
struct tern_register {
    struct tern_hdr h;
    uint32_t nid;                        /* must equal the sender's nid */
    uint8_t mac[6];
    uint16_t cores;                      /* CPUs running; 0: not reported */
    uint64_t mem_bytes;
};

/* The sender (its nid, h.reply_pid) becomes the job's launcher: the
 * allocator frees the job's nodes when the launcher stops answering.  The
 * job belongs to the credential's uid; only root names a job id itself. */
struct tern_alloc {
    struct tern_hdr h;
    uint32_t job;                        /* 0: the allocator picks one */
    int32_t count;                       /* nodes wanted, or ... */
    uint32_t nlist;                      /* ... an explicit list */
    uint32_t list[TERN_MAX_LIST];
};

/* RELEASE from the job's launcher names the nodes whose end it did not see
 * (a rank lost, a load never answered): the allocator frees those only when
 * the node itself says it holds the job no more (struct tern_node_state).
 * A RELEASE without the list (n_unsure absent: tern-svc) frees every node of
 * the job at once. */
struct tern_release {                    /* also TERN_KILL: the owner's, or root's */
    struct tern_hdr h;
    uint32_t job;
    uint32_t n_unsure;
    uint32_t unsure[TERN_MAX_LIST];
};
/* What a node says of itself: the allocator's ping is a Get of this struct
 * from (node, its registered pid) on TERN_PT_SERVICE, match bits
 * TERN_STATE_BITS.  job: the job the node still holds (loaded or running);
 * 0 once it holds none (a job that is ending counts as none: a new job's
 * descriptor waits until the node is clean).  ending: the job whose
 * clean-up the node is in (0: none), so that the allocator sees a node
 * that never finishes one (allocd --clean-limit). */
#define TERN_STATE_BITS 0x5354415445ull  /* "STATE" */
struct tern_node_state {
    uint32_t magic;                      /* TERN_MAGIC */
    uint32_t job;
    uint32_t ending;
};

/* The allocator's authorisation of a job, put to each of its nodes (their
 * kernel, TERN_PT_SERVICE, bits TERN_MB_GRANT) before the launcher hears
 * of the nodes.  A node runs only a job it holds a grant for, loaded by the
 * launcher named here, in descriptors and control messages that carry
 * HMAC-SHA256 with key (include/tern/yod_proto.h), and as uid/gid from here.
 * fio_token goes into the node's file requests: HMAC-SHA256 under the file
 * servers' key of tern_fio_auth(), which an fyod checks. */
struct tern_grant {
    struct tern_hdr h;
    uint32_t job, uid, gid;
    uint32_t launcher_nid, launcher_pid, pad;
    uint8_t key[TERN_KEY_BYTES];
    uint8_t fio_token[TERN_KEY_BYTES];
};

/* TERN_REVOKE is a struct tern_grant with only h and job set, on the same
 * portal and bits: the job's launcher stopped answering the allocator, so
 * the node ends the job now (its output has nowhere to go) instead of after
 * YOD_SILENCE_S of silence, and its grant is void.  A node that does not
 * know the type ignores it and ends the job on the silence alone. */

/* What fio_token authenticates: the job, its owner and the node. */
struct tern_fio_auth {
    uint32_t magic, job, uid, gid, nid;
};
#define TERN_FIO_AUTH_MAGIC 0x41495446u  /* "FTIA" */

struct tern_node_status {
    uint32_t nid, job;
    uint8_t mac[6];
    uint8_t state;                       /* enum node_state */
    uint8_t pad;
    uint16_t cores, pad2;                /* as registered; 0: not reported */
};

#define TERN_PREFIX_MAX 120               /* with the NUL */

struct tern_fyod {
    uint32_t nid, pid;
    char prefix[TERN_PREFIX_MAX];        /* absolute, not "/", no trailing '/' */
};

/* The sender (its nid, h.reply_pid) serves prefix; the allocator pings it
 * and forgets it when it stops answering. */
struct tern_fyod_register {
    struct tern_hdr h;
    uint32_t leaving, pad;
    char prefix[TERN_PREFIX_MAX];
};

/* status 0: done; otherwise an errno-style code and a message for the user.
 * ALLOC's TERN_STATUS_NODES_ENDING (EBUSY): not enough nodes now, but enough
 * once those finishing an ended job are clean; ask again (yod does). */
#define TERN_STATUS_NODES_ENDING 16
struct tern_reply {
    struct tern_hdr h;
    int32_t status;
    uint32_t n;                          /* nids[] (ALLOC) or nodes[] (STATUS) */
    uint32_t job, pad;                   /* ALLOC: the job id */
    uint32_t uid, gid;                   /* the requester, as MUNGE proved it */
    uint8_t key[TERN_KEY_BYTES];         /* ALLOC: the job's key (the launcher
                                          * signs what it sends the nodes);
                                          * FYOD_REGISTER: the file servers' key */
    char message[200];
    union {
        uint32_t nids[TERN_MAX_LIST];
        struct tern_node_status nodes[(TERN_MSG_MAX - 1024) / sizeof(struct tern_node_status)];
        struct tern_fyod fyods[(TERN_MSG_MAX - 1024) / sizeof(struct tern_fyod)];
    } u;
};

/* TERN_KILL reaches the launcher as this put on its report portal
 * (include/tern/yod_proto.h YOD_PT_REPORT, match bits = job), from the allocator. */
#define TERN_KILL_NOTICE 0x4B494C4Cu     /* "KILL", first word */

_Static_assert(sizeof(struct tern_alloc) <= TERN_MSG_MAX, "alloc request too big");
_Static_assert(sizeof(struct tern_release) <= TERN_MSG_MAX, "release request too big");
_Static_assert(sizeof(struct tern_reply) <= TERN_MSG_MAX, "reply too big");
#endif
