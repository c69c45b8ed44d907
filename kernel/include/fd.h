/* The application's file descriptors.  For now every descriptor is the
 * console (0, 1, 2 at start); file forwarding adds remote files later. */
#ifndef TERN_FD_H
#define TERN_FD_H
#include <stdbool.h>
#include <stdint.h>

#define MAX_FDS 256

enum fd_kind { FD_NONE, FD_CONSOLE_IN, FD_CONSOLE_OUT, FD_CONSOLE_ERR };

struct fd {
    enum fd_kind kind;
    bool cloexec;
    uint32_t flags;                /* O_* status flags (F_GETFL) */
};

void fd_init(void);
struct fd *fd_get(uint64_t fd);    /* NULL if not open */
#endif
