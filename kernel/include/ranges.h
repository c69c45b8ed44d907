/* Sorted lists of disjoint [start, end) address ranges: the heap area's
 * mappings and the reserved address space (kernel/mem/ranges.c).  Adjacent
 * ranges are merged, so a list stays as short as the holes in it. */
#ifndef TERN_RANGES_H
#define TERN_RANGES_H
#include <stdbool.h>
#include <stdint.h>

struct mapping { uint64_t start, end; };

struct range_list {
    struct mapping *v;
    int *n;
    int max;
};

/* Adds [s, e), which must not overlap the list: 0, or -ENOMEM when the
 * list is full. */
long ranges_insert(struct range_list l, uint64_t s, uint64_t e);
/* Removes [s, e) wherever it overlaps, splitting a range in two if need
 * be: 0, or -ENOMEM when that split finds the list full. */
long ranges_remove(struct range_list l, uint64_t s, uint64_t e);
bool ranges_free(struct range_list l, uint64_t s, uint64_t e);      /* nothing in [s, e) */
bool ranges_cover(struct range_list l, uint64_t s, uint64_t e);     /* all of [s, e) listed */
/* The highest s with [s, s+len) free inside [low, high) and
 * s % align == phase (align a power of two); 0 if there is none. */
uint64_t ranges_find_gap(struct range_list l, uint64_t low, uint64_t high, uint64_t len,
                         uint64_t align, uint64_t phase);
/* The largest free stretch inside [low, high): its length, start in *at. */
uint64_t ranges_largest_gap(struct range_list l, uint64_t low, uint64_t high, uint64_t *at);
uint64_t ranges_bytes(struct range_list l);
#endif
