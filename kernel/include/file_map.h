/* A process's shared mappings of forwarded files (kernel/sys/file_map.c).
 *
 * A node has no page cache: a file's mapping is a copy of its bytes, read
 * in at mmap.  A MAP_SHARED mapping must still be the file: what the
 * program stores in it reaches the file (msync, munmap, fsync, a read of
 * the file, the program's end), and what it writes to the file with
 * write() shows in it.  A writable shared mapping keeps a twin, a second
 * copy of what the file held when last synchronised; a page that differs
 * from its twin is written back, clamped to the file's end, as a dirty
 * page is on Linux.  Only the process's own writes are seen: a rank on
 * another node reads and writes the file through its server, as two
 * clients of a network file system do (close-to-open, msync-to-read). */
#ifndef TERN_FILE_MAP_H
#define TERN_FILE_MAP_H
#include <stdbool.h>
#include <stdint.h>
#include "fd.h"

#define FILE_MAPS 64                 /* shared file mappings per process */

struct file_map {
    uint64_t start, end;             /* the mapping, page aligned */
    uint64_t off;                    /* file offset of start */
    uint64_t twin;                   /* where its twin lies; 0: read-only */
    struct ofile *of;                /* one reference held */
    bool may_write;                  /* its descriptor was open for writing too */
};

/* mmap: [start, start + len), just read from f at off, is a MAP_SHARED
 * mapping (writable: with a twin).  0, or -errno (-ENOMEM: no room for
 * the twin, or, for a writable one, in the table; a read-only one that
 * finds the table full stays an untracked copy). */
long file_map_add(struct fd *f, uint64_t start, uint64_t len, uint64_t off, bool writable);
/* mprotect adds PROT_WRITE to [s, e): a read-only shared mapping there
 * becomes a writable one (its twin made now); -EACCES when its descriptor
 * was open for reading only, as on Linux; -ENOMEM. */
long file_map_protect(uint64_t s, uint64_t e);
/* [s, e) is about to stop being what it is (munmap, MAP_FIXED over it,
 * mremap's shrink): the shared mappings there are written back first and
 * trimmed.  0, or -ENOMEM (a split found the table full: nothing changed). */
long file_map_cut(uint64_t s, uint64_t e);
/* msync: the shared mappings that touch [s, e) are written back. */
long file_map_sync(uint64_t s, uint64_t e);
/* madvise(MADV_DONTNEED): [s, e) reads as zeros again, except the
 * shared file mappings in it, written back and left as the file's bytes. */
void file_map_zero_rest(uint64_t s, uint64_t e);
/* mremap of [old, old + old_len) to new_len bytes.  begin: 0 when no
 * shared file mapping is involved or it only shrank (done: the caller
 * shrinks it as any), 1 when one grows (then end(the caller's result)
 * makes what grew the file's next bytes), or -errno (EINVAL: a part of
 * one, which is not supported; EFAULT: memory the program was never given). */
long file_map_remap_begin(uint64_t old, uint64_t old_len, uint64_t new_len);
void file_map_remap_end(long result);
/* file.c, around every transfer of a file's bytes: before a read of len
 * bytes at off (-1: at the file position; an fsync: -1, 0), the changes
 * its mappings hold there reach it; after `written` bytes from src went to
 * it at off (-1: at the file position, now past them), they show in its
 * mappings. */
void file_map_before_read(struct ofile *of, int64_t off, uint64_t len);
void file_map_after_write(struct ofile *of, int64_t off, uint64_t written, const void *src);
/* The program ends by itself (exit, a fault, a fatal signal): every shared
 * mapping of the calling CPU's process is written back, for the last time. */
void file_map_flush_all(void);
#endif
