/* Portals in the kernel: the host layer (portals/host.c) under the shared
 * library, and the system call that applications reach it by. */
#ifndef TERN_PTL_KERNEL_H
#define TERN_PTL_KERNEL_H
#include <stdbool.h>
#include <stdint.h>

#define TERN_KERNEL_IFACE 1      /* the kernel's own Portals interface */
#define TERN_PTL_IFACES 32       /* the library's PTL_MAX_IFACES */

/* A rank's interface (ranks per core): rank 0 has 0, rank r > 0 has r + 1
 * (1 is the kernel's); TERN_PTL_IFACES when the library has none for it
 * (ranks past 30). Its pid is TERN_APP_PID + r. */
unsigned ptl_kernel_rank_iface(unsigned index);

/* Logs the node id; call after netdev_init and kmem_init. */
void ptl_kernel_init(void);
/* True when there is a NIC for Portals to use. */
bool ptl_kernel_available(void);
uint32_t ptl_kernel_nid(void);
/* The job id the application's interface (0) stamps on its frames, from
 * its next PtlNIInit on (0: none). */
void ptl_kernel_set_app_jid(uint32_t jid);
/* Hands frames that have arrived to the library (every Portals call);
 * returns how many. */
int ptl_kernel_poll(void);
/* Frames handed to the library for the kernel's own interface
 * (TERN_KERNEL_IFACE) since boot, looped ones included: what the job's
 * turn in a wait looks at first (kernel/job/control.c). */
uint64_t ptl_kernel_iface_frames(void);
/* Drops the frames the node sent itself that are not yet delivered (the
 * program's interface is being reset). */
void ptl_kernel_loop_discard(void);
/* Frames the node has sent itself; of the attempts, those refused because
 * the loop ring was full; of the frames, those whose payload stayed in the
 * sender's buffer until delivered (one copy). */
void ptl_kernel_loop_stats(uint64_t *frames, uint64_t *full, uint64_t *by_ref);
#endif
