/* Not part of Portals: what libportals-tern (portals/host/tern) adds for a
 * program on a Tern node.  The structures are include/tern/ptl_syscall.h's
 * and ptl_lib.h's; only pointers to them pass here. */
#ifndef PTL_TERN_H
#define PTL_TERN_H

#include <stddef.h>
#include <stdint.h>

struct ptl_lib_stats;
struct tern_ptl_node_stats;
struct tern_trace_info;

/* The bare cost of the system call (bench, tests). */
int ptl_tern_nop(void);
/* The library's counters and the node's (NIC, kernel heap); either pointer
 * may be NULL. */
int ptl_tern_stats(struct ptl_lib_stats *lib, struct tern_ptl_node_stats *node);
/* The message-path trace (TPO_TRACE; points in ptl_trace.h).  cmd
 * TERN_TRACE_START / STOP / MARK (a, b: point, TSC) / READ (a: cpu, b:
 * uint64_t buf[max], info).  READ returns the records copied; every other
 * cmd PTL_OK, or PTL_FAIL on a kernel made without trace points. */
int ptl_tern_trace(int cmd, uint64_t a, uint64_t b, size_t max, struct tern_trace_info *info);

#endif
