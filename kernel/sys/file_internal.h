/* What the forwarded-file calls of kernel/sys share (file.c defines them;
 * file_meta.c uses them too). */
#ifndef TERN_SYS_FILE_INTERNAL_H
#define TERN_SYS_FILE_INTERNAL_H
#include <stdbool.h>
#include <stdint.h>

#define AT_FDCWD (-100)
#define AT_SYMLINK_NOFOLLOW 0x100
#define AT_REMOVEDIR 0x200
#define AT_SYMLINK_FOLLOW 0x400
#define AT_EMPTY_PATH 0x1000

/* Without a job a node has no file system: path_va is read (EFAULT,
 * ENAMETOOLONG) and not found. */
long file_no_fs_lookup(uint64_t path_va);
/* The absolute, normalised path of a user path relative to dirfd, in out
 * (FILES_PATH_MAX).  *empty (when the caller allows it): the path was "". */
long file_resolve(int64_t dirfd, uint64_t uptr, char *out, bool *empty);
#endif
