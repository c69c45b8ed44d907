/* Pipes, eventfds, timerfds and epoll instances (kernel/sys/evobj.c): a
 * process's own objects, named by its descriptors of kinds FD_PIPE_R,
 * FD_PIPE_W, FD_EVENT, FD_TIMER and FD_EPOLL. */
#ifndef TERN_EVOBJ_H
#define TERN_EVOBJ_H
#include <stdbool.h>
#include <stdint.h>
#include "fd.h"

/* Readiness bits: poll's and epoll's values. */
#define EV_IN 0x1
#define EV_OUT 0x4
#define EV_ERR 0x8
#define EV_HUP 0x10

static inline bool evobj_kind(enum fd_kind k)
{
    return k == FD_PIPE_R || k == FD_PIPE_W || k == FD_EVENT || k == FD_EPOLL || k == FD_TIMER;
}
/* Another descriptor names f's object (dup), one stops naming it (close). */
void evobj_ref(struct fd *f);
void evobj_close(struct fd *f);
/* Every object goes (the job ended, or a new one starts). */
void evobj_reset(void);
/* EV_ bits f's object could give now. */
uint32_t evobj_ready(const struct fd *f);
/* A number that names f's object alone (fstat's st_ino). */
uint64_t evobj_id(const struct fd *f);
/* read and write of a pipe or an eventfd (buf checked by the caller). */
long evobj_read(struct fd *f, uint64_t buf, uint64_t len);
long evobj_write(struct fd *f, uint64_t buf, uint64_t len);
/* Waits until an object changes (0), the deadline (-ETIMEDOUT) or a signal
 * (-EINTR): poll and select wait here too. */
long evobj_wait(uint64_t deadline, const char *what);
/* poll.c: EV_ bits of a descriptor that is not an object (the console). */
uint32_t evobj_console_ready(const struct fd *f);
#endif
