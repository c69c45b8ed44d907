/* Sorted lists of disjoint address ranges (ranges.h). */
#include "errno.h"
#include "kernel.h"
#include "ranges.h"

static bool overlaps(const struct mapping *m, uint64_t s, uint64_t e) { return m->start < e && s < m->end; }

long ranges_remove(struct range_list l, uint64_t s, uint64_t e)
{
    for (int i = 0; i < *l.n; i++) {
        struct mapping *m = &l.v[i];
        if (!overlaps(m, s, e))
            continue;
        if (s > m->start && e < m->end) {          /* split in two */
            if (*l.n == l.max)
                return -ENOMEM;
            memmove(&l.v[i + 2], &l.v[i + 1], (size_t)(*l.n - i - 1) * sizeof *m);
            l.v[i + 1] = (struct mapping){e, m->end};
            m->end = s;
            (*l.n)++;
            return 0;
        }
        if (s <= m->start && e >= m->end) {        /* the whole range */
            memmove(m, m + 1, (size_t)(*l.n - i - 1) * sizeof *m);
            (*l.n)--;
            i--;
        } else if (s <= m->start) {
            m->start = e;
        } else {
            m->end = s;
        }
    }
    return 0;
}

long ranges_insert(struct range_list l, uint64_t s, uint64_t e)
{
    int i = 0, n = *l.n;
    while (i < n && l.v[i].start < s)
        i++;
    bool join_prev = i > 0 && l.v[i - 1].end == s;
    bool join_next = i < n && l.v[i].start == e;
    if (join_prev && join_next) {
        l.v[i - 1].end = l.v[i].end;
        memmove(&l.v[i], &l.v[i + 1], (size_t)(n - i - 1) * sizeof l.v[0]);
        (*l.n)--;
    } else if (join_prev) {
        l.v[i - 1].end = e;
    } else if (join_next) {
        l.v[i].start = s;
    } else {
        if (n == l.max)
            return -ENOMEM;
        memmove(&l.v[i + 1], &l.v[i], (size_t)(n - i) * sizeof l.v[0]);
        l.v[i] = (struct mapping){s, e};
        (*l.n)++;
    }
    return 0;
}

bool ranges_free(struct range_list l, uint64_t s, uint64_t e)
{
    for (int i = 0; i < *l.n; i++)
        if (overlaps(&l.v[i], s, e))
            return false;
    return true;
}

bool ranges_cover(struct range_list l, uint64_t s, uint64_t e)
{
    for (int i = 0; i < *l.n && s < e; i++)
        if (l.v[i].start <= s && s < l.v[i].end)
            s = l.v[i].end;
    return s >= e;
}

/* Top-down first fit: the caller's two ends then grow toward each other. */
uint64_t ranges_find_gap(struct range_list l, uint64_t low, uint64_t high, uint64_t len,
                         uint64_t align, uint64_t phase)
{
    uint64_t top = high;
    for (int i = *l.n - 1; i >= -1; i--) {
        uint64_t gap_lo = i >= 0 && l.v[i].end > low ? l.v[i].end : low;
        if (i >= 0 && l.v[i].start >= high)
            continue;                          /* above the window searched */
        if (top > gap_lo && top - gap_lo >= len) {
            uint64_t s = top - len;
            s -= (s - phase) & (align - 1);    /* down to the wanted phase */
            if (s >= gap_lo && s <= top - len && s)
                return s;
        }
        if (i >= 0 && l.v[i].start < top)
            top = l.v[i].start;
        if (top <= low)
            break;
    }
    return 0;
}

uint64_t ranges_largest_gap(struct range_list l, uint64_t low, uint64_t high, uint64_t *at)
{
    uint64_t best = 0, lo = low;
    for (int i = 0; i <= *l.n; i++) {
        uint64_t hi = i < *l.n && l.v[i].start < high ? l.v[i].start : high;
        if (hi > lo && hi - lo > best) {
            best = hi - lo;
            *at = lo;
        }
        if (i == *l.n || l.v[i].start >= high)
            break;
        if (l.v[i].end > lo)
            lo = l.v[i].end;
    }
    return best;
}

uint64_t ranges_bytes(struct range_list l)
{
    uint64_t n = 0;
    for (int i = 0; i < *l.n; i++)
        n += l.v[i].end - l.v[i].start;
    return n;
}
