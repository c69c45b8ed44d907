/*
 * The job protocol between yod (service node) and the compute-node kernels,
 * carried in Portals messages.  One header for both sides: fixed-size
 * little-endian structs, nothing but <stdint.h>.
 *
 *   yod                                  node kernel (nid, YOD_NODE_PID)
 *   put LOAD descriptor  -------------> PT_JOB, bits YOD_MB_LOAD
 *                        <------------- get image from its parent (yod or a
 *                                       lower rank) on PT_IMAGE, verify,
 *                                       load, then serve its own children
 *                        <------------- put report LOADED / LOAD_FAILED on
 *                                       yod's PT_REPORT, bits = job
 *   put ctl GO (all ranks at once) ---> PT_JOB, bits YOD_MB_CTL
 *                        <------------- stdout/stderr: puts straight from the
 *                                       program's buffer on PT_OUTPUT,
 *                                       bits = job << 32 | rank << 2 | fd,
 *                                       hdr_data = the stream's byte count
 *                                       at the end of the write the put is
 *                                       part of (so yod knows what a write
 *                                       in progress still owes it)
 *                        <------------- STDIN_WANT (rank 0); yod puts the
 *                                       bytes on the node's PT_STDIN,
 *                                       bits = job << 32 | request number,
 *                                       straight into the program's buffer
 *   ctl HEARTBEAT every second, SIGNAL, ABORT, PAUSE (^Z: yod stops)
 *                        <------------- report EXITED (after all output)
 *
 * A node runs only a job the allocator has granted it (include/tern/tern_proto.h
 * TERN_GRANT), loaded by the launcher (nid/pid) the grant names; the
 * descriptor and every control message carry HMAC-SHA256 under the job's
 * key from the grant (yod has it from the allocator's answer).  Anything
 * else is refused and counted (docs/security.md).  A node that hears nothing from its yod for YOD_SILENCE_S seconds
 * ends the job itself.  yod notices a dead node when a heartbeat put is not
 * acknowledged (Portals reports PTL_NI_UNDELIVERABLE after its give-up
 * time).
 */
#ifndef YOD_PROTO_H
#define YOD_PROTO_H
#include <stdint.h>

#define YOD_MAGIC 0x21444F59u            /* "YOD!" */
#define YOD_PROTO_VERSION 5            /* 4: HMACs of the job key, PAUSE; 5: nlocal */
#define YOD_NODE_PID 1                   /* the node kernel's own Portals pid */
#define TERN_APP_PID 16                  /* the application's Portals pid */
/* Ranks of one node that can have a Portals interface of their own (the
 * node's library has 32 interfaces, one of them the kernel's): yod's
 * default ranks per node stays within it. */
#define TERN_PORTALS_RANKS_PER_NODE 31

#define YOD_PT_JOB 10                    /* node: descriptors, control */
#define YOD_PT_IMAGE 11                  /* node and yod: executables, by Get */
#define YOD_PT_REPORT 12                 /* yod: node reports */
#define YOD_PT_OUTPUT 13                 /* yod: stdout and stderr bytes */
#define YOD_PT_STDIN 14                  /* node: stdin bytes for rank 0 */

#define YOD_MB_LOAD 1                    /* match bits on PT_JOB */
#define YOD_MB_CTL 2

#define YOD_LOAD_MAX 65536               /* descriptor with map and strings */
#define YOD_OUTPUT_CHUNK 65536           /* largest output put */
#define YOD_FINISH_MAX (1u << 20)        /* a write in progress when the job is
                                          * killed is finished, up to this much
                                          * more of it */
#define YOD_HEARTBEAT_S 1
#define YOD_SILENCE_S 15
#define YOD_REVOKED_SILENCE_S 5          /* ... or this long, once the allocator
                                          * says yod stopped answering it too
                                          * (tern_proto.h TERN_REVOKE) */
#define YOD_PAUSE_MAX_S 600              /* a stopped yod keeps its job this long */

static inline uint64_t yod_output_bits(uint32_t job, uint32_t rank, uint32_t fd)
{
    return (uint64_t)job << 32 | (uint64_t)rank << 2 | (fd & 3);
}

/* yod -> node: one per node.  The node runs ranks rank .. rank+nlocal-1
 * (yod -ppn: one per core, pids TERN_APP_PID + 0 .. nlocal-1 in that
 * order; nlocal 0 or 1: the one rank `rank`, pid TERN_APP_PID).  Followed
 * by nids[size] (uint32_t, rank order), then strings_len bytes: argc
 * NUL-terminated arguments, then envc NUL-terminated "NAME=value" words,
 * then files_len bytes: the job's file section (struct yod_files), 0 for
 * none. */
struct yod_load {
    uint32_t magic, version;
    uint32_t job, rank, size;
    uint32_t yod_nid, yod_pid;
    uint32_t uid, gid;
    uint32_t parent_nid, parent_pid;     /* where to Get the image */
    uint32_t argc, envc, strings_len;
    uint64_t image_bits;                 /* its match bits on PT_IMAGE there */
    uint64_t image_len;
    uint8_t image_sha256[32];
    uint64_t heap, stack;                /* bytes; 0: the node's defaults */
    char name[64];                       /* program name for messages */
    uint32_t files_len, nlocal;
    uint8_t mac[32];                     /* HMAC-SHA256 under the job's key of the
                                          * whole descriptor, this field zero; uid and
                                          * gid must be those of the grant */
};

/* Forwarded file I/O (include/tern/fio_proto.h): where a job's paths go.  A path
 * under a mount's prefix goes to one of that prefix's fyods (rank % count,
 * in table order), every other path to yod (yod_nid, yod_pid).  Followed
 * by nmounts struct yod_mount and cwd_len bytes: the working directory,
 * absolute, NUL-terminated. */
#define YOD_FILES_MAGIC 0x53454C46u      /* "FLES" */
#define YOD_FILES_VERSION 1
#define YOD_MOUNTS_MAX 32
#define YOD_PREFIX_MAX 120               /* with the NUL */

struct yod_files {
    uint32_t magic, version;
    uint32_t len;                        /* this header, the mounts and the cwd */
    uint32_t nmounts;
    uint32_t umask, cwd_len;
};

struct yod_mount {
    char prefix[YOD_PREFIX_MAX];         /* absolute, normalised, not "/" */
    uint32_t nid, pid;                   /* one fyod serving it */
};

enum yod_ctl_type {
    YOD_GO = 1,              /* every rank has loaded: start */
    YOD_SIGNAL = 2,          /* arg: signal number (SIGKILL ends it at once) */
    YOD_ABORT = 3,           /* the load failed elsewhere: drop the job */
    YOD_HEARTBEAT = 4,       /* yod is alive */
    YOD_PAUSE = 5,           /* yod is being stopped (^Z): send it nothing until
                              * its next message, which may take up to
                              * YOD_PAUSE_MAX_S */
};

struct yod_ctl {
    uint32_t magic, type, job, arg;
    uint8_t mac[32];         /* HMAC-SHA256 under the job's key of the 16 bytes above */
};

enum yod_report_type {
    YOD_LOADED = 1,
    YOD_LOAD_FAILED = 2,     /* message says why */
    YOD_EXITED = 3,          /* status, or signal with message (fault);
                              * arg: YOD_ENDED_BY_YOD when yod's signal ended it */
    YOD_STDIN_WANT = 4,      /* arg: bytes wanted, seq: request number */
};

#define YOD_ENDED_BY_YOD 1

struct yod_report {
    uint32_t magic, type, job, rank;
    int32_t status;          /* EXITED: exit status when signal == 0 */
    int32_t signal;          /* EXITED: the signal that ended it, or 0 */
    uint64_t arg, seq;
    uint64_t usec;           /* EXITED: run time on the node */
    char message[224];
};

_Static_assert(sizeof(struct yod_report) == 272, "report layout");
_Static_assert(sizeof(struct yod_mount) == 128, "mount layout");
_Static_assert(sizeof(struct yod_files) == 24, "files layout");
#endif
