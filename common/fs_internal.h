/* The file server's parts, behind <tern/fileserver.h>: requests, open
 * files and Portals (fileserver.c), the calls on the file system
 * (fs_ops.c), bulk transfers (fs_xfer.c). */
#ifndef FS_INTERNAL_H
#define FS_INTERNAL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <tern/fileserver.h>
#include <tern/fio_proto.h>

#define FS_DEPTH 2                  /* bulk pieces in flight per transfer */

extern struct fs_config fs_cfg;
void fs_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A file a rank has open. */
struct file {
    bool used;
    uint32_t gen, nid, job, rank;
    int fd;
};
long fs_file_new(int fd, uint32_t nid, const struct fio_req *r, uint64_t *handle);
void fs_file_close(struct file *f);
/* A node that starts a new job has forgotten the old one's files. */
void fs_drop_stale(uint32_t nid, uint32_t job);

/* A put or get of the server's, until its event. */
struct xfer;
enum op_kind { OP_FREE, OP_REPLY, OP_PIECE };
struct op {
    enum op_kind kind;
    ptl_handle_md_t md;
    struct xfer *x;
    int slot;
    struct fio_reply *rep;
};
struct op *fs_op_new(enum op_kind k);
/* The node kernel's Portals process on nid. */
ptl_process_t fs_node(uint32_t nid);
void fs_reply_result(uint32_t nid, const struct fio_req *r, int64_t result);

/* A request that passed the checks (fileserver.c), for its handler. */
struct fs_call {
    const struct fio_req *r;
    uint32_t nid;
    const char *path, *path2;       /* as long as path_len, path2_len say */
    struct file *f;                 /* the calls on an open file */
};

/* fs_ops.c: how each request is carried out. */
struct fs_op {
    bool on_path;                   /* names a path (else an open file) */
    bool xfer;                      /* moves bulk data: fs_xfer_start */
    long (*fn)(const struct fs_call *c, struct fio_reply *rep);  /* the result */
};
const struct fs_op *fs_op_of(uint16_t op);
int fs_root_open(const char *root, bool confine, char *err, int errlen);
/* Takes on the file-system identity of the job's owner: 0 or -errno. */
int fs_become(uint32_t uid, uint32_t gid);

/* fs_ops.c: the file p names beneath the served root (openat2 flags and
 * mode), and the directory holding its last component with that component
 * in name (-EBUSY: p is the root itself).  A file descriptor or -errno. */
int fs_open_path(const char *p, int flags, unsigned mode);
int fs_open_parent(const char *p, char *name, size_t namelen);
/* When either returned FIO_FOLLOW_LINK: the path it was given (p) and what that
 * path becomes with the link replaced by its target (fio_proto.h). */
struct fs_follow {
    const char *of;
    char path[FIO_PATH_MAX];
};
extern struct fs_follow fs_follow;

/* fs_meta.c: modes, owners, times (FIO_CHMOD to FIO_FUTIMENS) and links. */
long fs_op_attr(const struct fs_call *c, struct fio_reply *rep);
long fs_op_symlink(const struct fs_call *c, struct fio_reply *rep);
long fs_op_link(const struct fs_call *c, struct fio_reply *rep);

/* fs_xfer.c */
void fs_xfer_start(uint32_t nid, const struct fio_req *r, struct file *f, bool writing,
                   bool getdents);
void fs_xfer_piece_done(struct op *op, const ptl_event_t *ev);
#endif
