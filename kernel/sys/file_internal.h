/* What the forwarded-file calls of kernel/sys share (file.c defines them;
 * file_meta.c uses them too). */
#ifndef TERN_SYS_FILE_INTERNAL_H
#define TERN_SYS_FILE_INTERNAL_H
#include <stdbool.h>
#include <stdint.h>
#include "files.h"

#define AT_FDCWD (-100)
#define AT_SYMLINK_NOFOLLOW 0x100
#define AT_REMOVEDIR 0x200
#define AT_SYMLINK_FOLLOW 0x400
#define AT_EMPTY_PATH 0x1000

/* file.c's scratch: two absolute paths (or a symlink's contents) and the
 * last reply.  One system call uses them at a time (the serial lock). */
extern char file_abs1[FILES_PATH_MAX], file_abs2[FILES_PATH_MAX];
extern struct fio_reply file_rep;

/* Without a job a node has no file system: path_va is read (EFAULT,
 * ENAMETOOLONG) and not found. */
long file_no_fs_lookup(uint64_t path_va);
/* The absolute, normalised path of a user path relative to dirfd, in out
 * (FILES_PATH_MAX).  *empty (when the caller allows it): the path was "". */
long file_resolve(int64_t dirfd, uint64_t uptr, char *out, bool *empty);
/* r (its op and fields the caller's) to the server of abs, with path2 (a
 * symlink's contents, or NULL); the reply in file_rep.  abs (a
 * FILES_PATH_MAX buffer) is rewritten as the symbolic links a server
 * leaves to the node lead (FIO_FOLLOW_LINK): it names where the call was made. */
long file_path_call(char *abs, struct fio_req *r, const char *path2);
/* op on the open file of (its handle, off, len, flags; ubuf the program's
 * bytes to send, or, into, to fill); the reply in file_rep.  No mapping of
 * the file is kept in step: file_xfer does that. */
long file_of_op(struct ofile *of, int op, int64_t off, uint64_t len, uint32_t flags,
                uint64_t ubuf, bool into);
/* rename and link: op (with flags) on two user paths, which must be on one
 * server (EXDEV otherwise, as between file systems), links followed as in
 * file_path_call. */
long file_two_names(int op, uint32_t flags, int64_t olddir, uint64_t oldp, int64_t newdir,
                    uint64_t newp);
#endif
