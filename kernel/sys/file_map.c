/* Shared mappings of forwarded files (file_map.h says what they promise).
 *
 * Why twins and not the page tables' dirty bits: the program's region is
 * mapped in 2 MiB pages, and clearing a dirty bit after a write-back would
 * need every CPU running the program to forget its cached translation; a
 * twin costs memory only for the files a program maps writable and shared,
 * and the comparison finds exactly the pages it changed.
 *
 * A page is written back from the twin, after the mapping's bytes are
 * copied there: another thread storing into the page meanwhile leaves it
 * different from its twin, so it goes out next time, never lost. */
#include "file_map.h"
#include "errno.h"
#include "files.h"
#include "job.h"
#include "kernel.h"
#include "mem.h"
#include "process.h"
#include "reserve.h"
#include "file_internal.h"

#define SEEK_CUR 1
#define O_ACCMODE 3
#define O_RDWR 2

static uint64_t min64(uint64_t a, uint64_t b) { return a < b ? a : b; }
static uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* Memory in the heap area for a twin, or 0.  The program was never given
 * it, as Linux's page cache is not the program's either. */
static uint64_t twin_alloc(uint64_t len)
{
    uint64_t at = ranges_find_gap(heap_list(), heap_low(), proc.heap_end, len, PAGE_SIZE, 0);
    if (!at || ranges_insert(heap_list(), at, at + len))
        return 0;
    return at;
}

static void twin_free(uint64_t at, uint64_t len)
{
    ranges_remove(heap_list(), at, at + len);   /* a full list leaves it the program's */
}

/* The bytes [off, off + len) of the file to or from user memory at ubuf,
 * straight to the server (no mapping is kept in step: the callers do). */
static long transfer(struct ofile *of, uint64_t ubuf, uint64_t len, uint64_t off, bool writing)
{
    uint64_t done = 0;
    while (done < len) {
        long n = file_of_op(of, writing ? FIO_WRITE : FIO_READ, (int64_t)(off + done),
                            len - done, 0, ubuf + done, !writing);
        if (n < 0)
            return n;
        if (n == 0)
            break;
        done += (uint64_t)n;
    }
    return (long)done;
}

static bool identify(struct ofile *of)
{
    if (of->id_known)
        return true;
    if (file_of_op(of, FIO_FSTAT, 0, 0, 0, 0, false) < 0)
        return false;
    of->dev = file_rep.st.dev;
    of->ino = file_rep.st.ino;
    of->id_known = true;
    return true;
}

/* Two opens of one file (a program may map one descriptor and write
 * another: LMDB does). */
static bool same_file(struct ofile *a, struct ofile *b)
{
    return a == b || (a->srv == b->srv && !a->dir && identify(a) && identify(b) &&
                      a->dev == b->dev && a->ino == b->ino);
}

static bool page_differs(uint64_t a, uint64_t b)
{
    const uint64_t *x = (const uint64_t *)a, *y = (const uint64_t *)b;
    for (unsigned i = 0; i < PAGE_SIZE / 8; i++)
        if (x[i] != y[i])
            return true;
    return false;
}

/* The file's bytes [fp, fp + n), now src (they were just written there),
 * into the other mappings of the file.  write_wins (a write() through a
 * descriptor, later than any store): they replace what the mapping holds.
 * Otherwise (another mapping's write-back) a byte the mapping has changed
 * since its own last write-back stays, to go out with its next. */
static void spread(const struct file_map *from, struct ofile *of, uint64_t fp, const uint8_t *src,
                   uint64_t n, bool write_wins)
{
    for (int i = 0; i < proc.nfmaps; i++) {
        struct file_map *m = &proc.fmaps[i];
        uint64_t a = max64(fp, m->off), b = min64(fp + n, m->off + (m->end - m->start));
        if (m == from || a >= b || !same_file(of, m->of))
            continue;
        uint8_t *map = (uint8_t *)(m->start + (a - m->off));
        uint8_t *twin = m->twin ? (uint8_t *)(m->twin + (a - m->off)) : NULL;
        const uint8_t *s = src + (a - fp);
        if (write_wins || !twin) {
            memmove(map, s, b - a);     /* s may lie in the mapping: write(fd, map, n) */
            if (twin)
                memcpy(twin, map, b - a);
            continue;
        }
        for (uint64_t k = 0; k < b - a; k++) {
            if (map[k] == twin[k])
                map[k] = s[k];
            twin[k] = s[k];
        }
    }
}

/* Writes back the pages of m that differ from its twin and hold bytes of
 * the file's [fp, fq), up to the file's end (a mapping never makes a file
 * longer). */
static long flush_part(struct file_map *m, uint64_t fp, uint64_t fq)
{
    if (!m->twin || fq <= m->off || fp >= m->off + (m->end - m->start))
        return 0;
    uint64_t len = m->end - m->start, limit = 0;
    if (fq - m->off < len)
        len = ALIGN_UP(fq - m->off, PAGE_SIZE);
    bool sized = false;
    for (uint64_t p = fp > m->off ? ALIGN_DOWN(fp - m->off, PAGE_SIZE) : 0; p < len;) {
        if (!page_differs(m->start + p, m->twin + p)) {
            p += PAGE_SIZE;
            continue;
        }
        uint64_t q = p + PAGE_SIZE;
        while (q < len && page_differs(m->start + q, m->twin + q))
            q += PAGE_SIZE;
        if (!sized) {
            long r = file_of_op(m->of, FIO_FSTAT, 0, 0, 0, 0, false);
            if (r < 0)
                return r;
            uint64_t size = (uint64_t)file_rep.st.size;
            limit = size > m->off ? size - m->off : 0;
            sized = true;
        }
        memcpy((void *)(m->twin + p), (const void *)(m->start + p), q - p);
        uint64_t b = min64(q, limit);
        if (p < b) {
            long n = transfer(m->of, m->twin + p, b - p, m->off + p, true);
            if (n < 0) {
                /* Still to go: each page made to differ from its twin again. */
                for (uint64_t k = p; k < q; k += PAGE_SIZE)
                    *(uint8_t *)(m->twin + k) = (uint8_t)~*(uint8_t *)(m->start + k);
                return n;
            }
            spread(m, m->of, m->off + p, (const uint8_t *)(m->twin + p), b - p, false);
        }
        p = q;
    }
    return 0;
}

static long flush(struct file_map *m) { return flush_part(m, 0, UINT64_MAX); }

long file_map_add(struct fd *f, uint64_t start, uint64_t len, uint64_t off, bool writable)
{
    struct ofile *of = f->of;
    if (of->srv == FILES_SRV_NODE)
        return 0;              /* /dev/zero and the node's own files: nothing to keep */
    if (proc.nfmaps == FILE_MAPS || !identify(of))
        return writable ? (proc.nfmaps == FILE_MAPS ? -ENOMEM : -EIO) : 0;
    uint64_t twin = 0;
    if (writable) {
        if (!(twin = twin_alloc(len)))
            return -ENOMEM;
        memcpy((void *)twin, (const void *)start, len);
    }
    proc.fmaps[proc.nfmaps++] =
        (struct file_map){start, start + len, off, twin, of, (f->flags & O_ACCMODE) == O_RDWR};
    of->refs++;
    return 0;
}

long file_map_protect(uint64_t s, uint64_t e)
{
    for (int i = 0; i < proc.nfmaps; i++) {
        struct file_map *m = &proc.fmaps[i];
        if (m->twin || !(m->start < e && s < m->end))
            continue;
        if (!m->may_write)
            return -EACCES;
        uint64_t len = m->end - m->start;
        if (!(m->twin = twin_alloc(len)))
            return -ENOMEM;
        memcpy((void *)m->twin, (const void *)m->start, len);
    }
    return 0;
}

static void drop(int i)
{
    ofile_put(proc.fmaps[i].of);
    proc.fmaps[i] = proc.fmaps[--proc.nfmaps];
}

long file_map_cut(uint64_t s, uint64_t e)
{
    int splits = 0;
    for (int i = 0; i < proc.nfmaps; i++)
        splits += proc.fmaps[i].start < s && e < proc.fmaps[i].end;
    if (proc.nfmaps + splits > FILE_MAPS)
        return -ENOMEM;
    for (int i = 0; i < proc.nfmaps;) {
        struct file_map *m = &proc.fmaps[i];
        uint64_t len = m->end - m->start;
        if (m->twin && m->twin < e && s < m->twin + len) {
            /* The program unmapped memory it was never given: the twin. */
            flush(m);
            kprintf("job %u: a shared mapping of %s is no longer written back (its twin at "
                    "0x%lx was unmapped)\n", job.id, m->of->path ? m->of->path : "a file", m->twin);
            twin_free(m->twin, len);
            m->twin = 0;
        }
        if (!(m->start < e && s < m->end)) {
            i++;
            continue;
        }
        flush(m);           /* an error here is the file's; the mapping goes anyway */
        uint64_t cs = max64(s, m->start), ce = min64(e, m->end);
        if (m->twin)
            twin_free(m->twin + (cs - m->start), ce - cs);
        bool left = m->start < s, right = e < m->end;
        if (!left && !right) {
            drop(i);
            continue;
        }
        if (left && right) {
            uint64_t k = e - m->start;
            proc.fmaps[proc.nfmaps++] = (struct file_map){
                e, m->end, m->off + k, m->twin ? m->twin + k : 0, m->of, m->may_write};
            m->of->refs++;
        }
        if (left) {
            m->end = s;
        } else {
            uint64_t k = e - m->start;
            m->off += k;
            if (m->twin)
                m->twin += k;
            m->start = e;
        }
        i++;
    }
    return 0;
}

long file_map_sync(uint64_t s, uint64_t e)
{
    long rc = 0;
    for (int i = 0; i < proc.nfmaps; i++) {
        struct file_map *m = &proc.fmaps[i];
        if (m->start < e && s < m->end) {
            long r = flush(m);
            if (r && !rc)
                rc = r;
        }
    }
    return rc;
}

void file_map_zero_rest(uint64_t s, uint64_t e)
{
    file_map_sync(s, e);
    /* The shared mappings' bytes are the file's again (Linux reads them
     * anew from its page cache); the rest starts over as zeros. */
    while (s < e) {
        uint64_t next = e;
        const struct file_map *in = NULL;
        for (int i = 0; i < proc.nfmaps; i++) {
            const struct file_map *m = &proc.fmaps[i];
            if (m->start <= s && s < m->end)
                in = m;
            else if (m->start > s && m->start < next)
                next = m->start;
        }
        if (in) {
            s = min64(in->end, e);
            continue;
        }
        memset((void *)s, 0, next - s);
        s = next;
    }
}

/* A growing mremap of a shared file mapping, between begin and end. */
static struct {
    int index;
    uint64_t old_len, new_len, twin;
} remap;

long file_map_remap_begin(uint64_t old, uint64_t old_len, uint64_t new_len)
{
    for (int i = 0; i < proc.nfmaps; i++) {
        struct file_map *m = &proc.fmaps[i];
        if (m->twin && m->twin < old + old_len && old < m->twin + (m->end - m->start))
            return -EFAULT;                /* memory the program was never given */
        if (!(m->start < old + old_len && old < m->end))
            continue;
        if (m->start != old || m->end != old + old_len)
            return -EINVAL;                /* a part of one, or more than one: not here */
        if (new_len <= old_len) {
            long r = file_map_cut(old + new_len, old + old_len);
            return r ? r : 0;
        }
        flush(m);
        uint64_t twin = 0;
        if (m->twin && !(twin = twin_alloc(new_len)))
            return -ENOMEM;
        remap.index = i;
        remap.old_len = old_len;
        remap.new_len = new_len;
        remap.twin = twin;
        return 1;
    }
    return 0;
}

void file_map_remap_end(long result)
{
    struct file_map *m = &proc.fmaps[remap.index];
    if (result < 0) {
        if (remap.twin)
            twin_free(remap.twin, remap.new_len);
        return;
    }
    uint64_t at = (uint64_t)result, old_twin = m->twin;
    m->start = at;
    m->end = at + remap.new_len;
    m->twin = 0;           /* written back at begin: the others' changes first */
    /* What grew is the file's next bytes, as a new mapping would read
     * them (past its end, the zeros mremap gave). */
    file_map_before_read(m->of, (int64_t)(m->off + remap.old_len), remap.new_len - remap.old_len);
    transfer(m->of, at + remap.old_len, remap.new_len - remap.old_len, m->off + remap.old_len,
             false);
    if (old_twin) {
        twin_free(old_twin, remap.old_len);
        m->twin = remap.twin;
        memcpy((void *)m->twin, (const void *)at, remap.new_len);
    }
}

void file_map_before_read(struct ofile *of, int64_t off, uint64_t len)
{
    uint64_t fp = off < 0 ? 0 : (uint64_t)off, fq = off < 0 ? UINT64_MAX : fp + len;
    for (int i = 0; i < proc.nfmaps; i++)
        if (proc.fmaps[i].twin && same_file(of, proc.fmaps[i].of))
            flush_part(&proc.fmaps[i], fp, fq);
}

void file_map_after_write(struct ofile *of, int64_t off, uint64_t written, const void *src)
{
    /* Most writes are to other files: they cost no question to the server
     * (the file's identity is asked once an open). */
    bool mapped = false;
    for (int i = 0; i < proc.nfmaps && !mapped; i++)
        mapped = same_file(of, proc.fmaps[i].of);
    if (!mapped)
        return;
    if (off < 0) {
        long end = file_of_op(of, FIO_LSEEK, 0, 0, SEEK_CUR, 0, false);
        if (end < (long)written)
            return;
        off = end - (long)written;
    }
    spread(NULL, of, (uint64_t)off, src, written, true);
}

void file_map_flush_all(void)
{
    /* The program has ended: nothing it stores later goes out, and the
     * node's end, after a rank's, finds nothing more to compare. */
    for (int i = 0; i < proc.nfmaps; i++) {
        flush(&proc.fmaps[i]);
        proc.fmaps[i].twin = 0;
    }
}
