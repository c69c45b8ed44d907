/* The file server (include/tern/fio_proto.h), written once and used by yod (in its
 * event loop, for everything outside the fyod prefixes) and by the fyod
 * daemon.  It runs on the caller's Portals NI and EQ: the caller hands it
 * every event and it takes those that are its own. */
#ifndef FILESERVER_H
#define FILESERVER_H
#include <stdbool.h>
#include <stdint.h>
#include "portals4.h"
#include <tern/fio_proto.h>

struct fs_config {
    const char *root;          /* served directory ("/" for yod) */
    bool confine;              /* paths may not leave root (.., symlinks) */
    ptl_handle_ni_t ni;
    ptl_handle_eq_t eq;
    /* May this node (nid) send requests for (job, rank)?  NULL: any node
     * kernel may. */
    bool (*allow)(uint32_t nid, uint32_t job, uint32_t rank);
    /* Is the request's uid and gid the one the allocator granted its job
     * on this node (fyod: the request's token)?  NULL: yod, which serves
     * as its own user only. */
    bool (*authorised)(uint32_t nid, const struct fio_req *r);
    const char *name;          /* for messages: "yod", "fyod" */
    uint32_t max_files;        /* open files at once, all jobs (0: FS_MAX_FILES) */
    uint32_t job_share;        /* of them one job may hold (0 or more than max_files:
                                * three quarters, room left for the others) */
};
#define FS_MAX_FILES 4096

/* Opens the root, allocates FIO_PT_REQ on the NI and posts the request
 * buffers: 0, or -1 with a message. */
int fs_init(const struct fs_config *cfg, char *err, int errlen);
/* Handles ev if it belongs to the file server: true if it did. */
bool fs_event(const ptl_event_t *ev);
/* Closes every file of a job (all its ranks); returns how many. */
int fs_close_job(uint32_t job);
/* Closes every file opened before generation gen whose (nid, job) alive()
 * says is over. */
int fs_reap(bool (*alive)(uint32_t nid, uint32_t job), uint32_t gen);
/* The generation the next opened file gets. */
uint32_t fs_generation(void);
/* Files open now. */
int fs_open_files(void);
#endif
