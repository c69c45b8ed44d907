/* Buffers that are either contiguous or an iovec list, addressed as one
 * byte range (spec: an iovec MD "behaves exactly as" a contiguous one).
 * Start NULL and length PTL_SIZE_MAX is the whole address space: offsets
 * are addresses (pointer arithmetic goes through uintptr_t, as C allows no
 * offset from a null pointer). */
#include "ptl_internal.h"

int ptl_region_init(struct ptl_region *r, void *start, ptl_size_t length,
                    bool iovec, int max_iovecs)
{
    memset(r, 0, sizeof(*r));
    if (!iovec) {
        if (!start && length && length != PTL_SIZE_MAX)
            return PTL_ARG_INVALID;
        r->start = start;
        r->length = length;
        return PTL_OK;
    }
    if (length > (ptl_size_t)max_iovecs || (!start && length))
        return PTL_ARG_INVALID;
    r->iov = start;
    r->niov = (uint32_t)length;
    ptl_size_t total = 0;
    for (uint32_t i = 0; i < r->niov; i++) {
        if (!r->iov[i].iov_base && r->iov[i].iov_len)
            return PTL_ARG_INVALID;
        if (total + r->iov[i].iov_len < total)
            return PTL_ARG_INVALID;
        total += r->iov[i].iov_len;
    }
    r->length = total;
    return PTL_OK;
}

/* Walk [off, off+n) calling back per contiguous piece. */
#define REGION_WALK(r, off, n, BODY)                                        \
    do {                                                                     \
        if (!(n))                                                            \
            break;                                                           \
        if (!(r)->iov) {                                                     \
            uint8_t *piece = (uint8_t *)((uintptr_t)(r)->start + (off));     \
            ptl_size_t plen = (n), done = 0;                                 \
            BODY;                                                            \
            (void)done;                                                      \
            break;                                                           \
        }                                                                    \
        ptl_size_t o_ = (off), left_ = (n), done = 0;                        \
        for (uint32_t i_ = 0; i_ < (r)->niov && left_; i_++) {               \
            ptl_size_t l_ = (r)->iov[i_].iov_len;                            \
            if (o_ >= l_) {                                                  \
                o_ -= l_;                                                    \
                continue;                                                    \
            }                                                                \
            uint8_t *piece = (uint8_t *)(r)->iov[i_].iov_base + o_;          \
            ptl_size_t plen = l_ - o_ < left_ ? l_ - o_ : left_;             \
            BODY;                                                            \
            done += plen;                                                    \
            left_ -= plen;                                                   \
            o_ = 0;                                                          \
        }                                                                    \
        (void)done;                                                          \
    } while (0)

void ptl_region_write(const struct ptl_region *r, ptl_size_t off,
                      const void *src, ptl_size_t n)
{
    const uint8_t *s = src;
    REGION_WALK(r, off, n, memcpy(piece, s + done, plen));
}

void ptl_region_read(const struct ptl_region *r, ptl_size_t off, void *dst,
                     ptl_size_t n)
{
    uint8_t *d = dst;
    REGION_WALK(r, off, n, memcpy(d + done, piece, plen));
}

/* NULL for offsets past the end: never form an out-of-object pointer. */
void *ptl_region_addr(const struct ptl_region *r, ptl_size_t off)
{
    if (off > r->length)
        return NULL;
    if (!r->iov)
        return r->start || r->length == PTL_SIZE_MAX
                   ? (void *)((uintptr_t)r->start + off) : NULL;
    for (uint32_t i = 0; i < r->niov; i++) {
        if (off < r->iov[i].iov_len)
            return (uint8_t *)r->iov[i].iov_base + off;
        off -= r->iov[i].iov_len;
    }
    return NULL;
}

int ptl_region_sg(const struct ptl_region *r, ptl_size_t off, ptl_size_t n,
                  struct ptl_sg *sg, int max)
{
    int k = 0;
    if (!n)
        return 0;
    REGION_WALK(r, off, n, {
        if (k < max) {
            sg[k].base = piece;
            sg[k].len = (size_t)plen;
        }
        k++;
    });
    return k <= max ? k : -1;
}
