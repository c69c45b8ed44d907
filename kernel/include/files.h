/* Forwarded file I/O, the compute node's side (docs/fileio.md): the job's
 * mount table (prefix -> fyod) and working directory from yod's load
 * descriptor, path resolution and routing, and the request/reply exchange
 * with a server over the kernel's own Portals NI (include/tern/fio_proto.h). */
#ifndef TERN_FILES_H
#define TERN_FILES_H
#include <stdbool.h>
#include <stdint.h>
#include "fd.h"
#include <tern/fio_proto.h>

#define FILES_PATH_MAX 4096

extern uint32_t files_umask;

/* loader.c: the descriptor's file section (len bytes at sec, any
 * alignment); NULL, or why it is refused. */
const char *files_job_setup(const void *sec, uint64_t len, uint32_t rank, uint32_t yod_nid,
                            uint32_t yod_pid);
/* end.c: tells every server the job used that its files are to be closed
 * (bounded wait); then files_reset forgets everything. */
void files_job_end(void);
/* sync: each server the job used (and is alive) flushes its file system. */
void files_sync_all(void);
void files_reset(void);

const char *files_cwd(void);
void files_set_cwd(const char *abs);
/* The program's absolute path (loader.c, from its argv[0] as yod was
 * given it, against the working directory then); "" without a job. */
void files_set_exe(const char *path);
const char *files_exe(void);
/* Joins path to base (an absolute directory) and normalises: "." and ".."
 * and repeated '/' removed.  0, or -ENAMETOOLONG. */
long files_normalise(const char *base, const char *path, char *out);
/* Which server serves abs, and the path to send it (relative to its root).
 * FILES_SRV_NODE: the node itself (nodefiles.c), with abs as it is. */
#define FILES_SRV_NODE (-2)
#define FILES_NODE_PREFIX "/sys/devices/system/cpu"
int files_route(const char *abs, const char **spath);

/* One request: req's op, handle, offset, len, flags, mode are the caller's;
 * paths may be NULL.  ubuf: the buffer of req->len bytes the server Puts
 * into (into = true) or Gets from, or 0; the caller has checked it (a
 * program's range, user_ok) or it is the kernel's (sendfile).  The reply lands in
 * *rep.  Returns the server's result (>= 0 or -errno), -EIO when the server
 * does not answer (then it is marked dead: later calls fail at once). */
long fio_call(int srv, struct fio_req *req, const char *path, const char *path2, uint64_t ubuf,
              bool into, struct fio_reply *rep);
/* nodefiles.c: the paths the node answers itself (FILES_NODE_PREFIX and
 * everything under it, /proc/cpuinfo, /proc/meminfo, /dev/null, /dev/zero);
 * a request to FILES_SRV_NODE, answered as a server would; nodefiles_reset
 * closes every file (the job has ended). */
bool nodefiles_owns(const char *abs);
long nodefiles_call(const struct fio_req *req, const char *spath, uint64_t ubuf,
                    struct fio_reply *rep);
void nodefiles_reset(void);
/* The server's file goes away (the last descriptor was closed). */
void fio_release(struct ofile *of);
#endif
