/* Paths as node kernels and file servers both walk them: '/'-separated
 * components, empty ones (repeated slashes) skipped. */
#ifndef TERN_PATH_H
#define TERN_PATH_H
#include <stddef.h>

/* The next component at or after *s: its start, its length in *len, and
 * *s moved past it; NULL when none is left. */
static inline const char *path_component(const char **s, size_t *len)
{
    const char *p = *s;
    while (*p == '/')
        p++;
    const char *e = p;
    while (*e && *e != '/')
        e++;
    *s = e;
    *len = (size_t)(e - p);
    return *len ? p : NULL;
}
#endif
