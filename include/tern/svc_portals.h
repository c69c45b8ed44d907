/* Portals plumbing shared by the service-node programs (allocator, tools). */
#ifndef TERN_SVC_PORTALS_H
#define TERN_SVC_PORTALS_H
#include <stdbool.h>
#include <stdint.h>
#include "portals4.h"

struct svc {
    ptl_handle_ni_t ni;
    ptl_handle_eq_t eq;
    ptl_process_t me;
};

/* Opens the interface (TERN_IFACE etc., see portals/host/linux/ptl_linux.h)
 * with the given pid and allocates portal `pt`; 0, or -1 with a message. */
int svc_open(struct svc *s, ptl_pid_t pid, ptl_pt_index_t pt, char *err, int errlen);
/* Posts a use-once buffer on pt for puts with these match bits. */
int svc_post(struct svc *s, ptl_pt_index_t pt, void *buf, uint64_t len, uint64_t bits,
             uint64_t ignore);
/* Puts len bytes to (nid, pid) on pt and waits (at most secs) until the
 * target has acknowledged them: 0, or the ni_fail_type / -1 on timeout. */
int svc_put(struct svc *s, const void *buf, uint64_t len, uint32_t nid, uint32_t pid,
            ptl_pt_index_t pt, uint64_t bits, double secs);
/* Next event of kind `kind` within secs: 0, or -1 on timeout. */
int svc_wait(struct svc *s, ptl_event_kind_t kind, ptl_event_t *ev, double secs);
double svc_now(void);

/* A daemon's stop on SIGTERM or SIGINT that cuts its Portals wait short
 * (common/svc_stop.c).  svc_stop_start before the first Portals call: 0,
 * or -1.  The daemon's loop runs while !svc_stopping() and then calls
 * svc_stop_loop_left(), after which its waits are no longer aborted. */
int svc_stop_start(void);
bool svc_stopping(void);
void svc_stop_loop_left(void);
#endif
