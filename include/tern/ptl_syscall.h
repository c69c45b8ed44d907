/* The Portals system call: the ABI shared by the kernel (sys/portals.c) and
 * the user-side library (portals/host/tern/libportals-tern.c).  Plain C with
 * fixed-size fields only, so user programs include it as it is.
 *
 *     long tern_portals(long op, const uint64_t args[])    number 1024
 *
 * args holds the Ptl* function's arguments in order, each widened to 64
 * bits (pointers as addresses; a ptl_process_t as its 8 bytes; a
 * ptl_ct_event_t as two words, success then failure).  The result is the
 * Portals return code; a negative value is -errno: -EFAULT when args itself
 * is unreadable, -EINVAL for an unknown op, -ENOSYS on a kernel without
 * Portals. */
#ifndef TERN_PTL_SYSCALL_H
#define TERN_PTL_SYSCALL_H

#define TERN_SYS_PORTALS 1024      /* above every Linux x86-64 number */
#define TERN_PTL_MAX_ARGS 16

enum tern_ptl_op {
    TPO_INIT = 1, TPO_FINI, TPO_NI_INIT, TPO_NI_FINI, TPO_NI_STATUS, TPO_NI_HANDLE,
    TPO_SET_MAP, TPO_GET_MAP, TPO_PT_ALLOC, TPO_PT_FREE, TPO_PT_DISABLE, TPO_PT_ENABLE,
    TPO_GET_UID, TPO_GET_ID, TPO_GET_PHYS_ID, TPO_MD_BIND, TPO_MD_RELEASE,
    TPO_LE_APPEND, TPO_LE_UNLINK, TPO_LE_SEARCH, TPO_ME_APPEND, TPO_ME_UNLINK, TPO_ME_SEARCH,
    TPO_CT_ALLOC, TPO_CT_FREE, TPO_CT_CANCEL, TPO_CT_GET, TPO_CT_WAIT, TPO_CT_POLL,
    TPO_CT_SET, TPO_CT_INC, TPO_PUT, TPO_GET, TPO_ATOMIC, TPO_FETCH_ATOMIC, TPO_SWAP,
    TPO_ATOMIC_SYNC, TPO_EQ_ALLOC, TPO_EQ_FREE, TPO_EQ_GET, TPO_EQ_WAIT, TPO_EQ_POLL,
    TPO_TRIG_PUT, TPO_TRIG_GET, TPO_TRIG_ATOMIC, TPO_TRIG_FETCH_ATOMIC, TPO_TRIG_SWAP,
    TPO_TRIG_CT_INC, TPO_TRIG_CT_SET, TPO_START_BUNDLE, TPO_END_BUNDLE,
    TPO_HANDLE_IS_EQUAL,
    TPO_NOP,                       /* does nothing: measures the call itself */
    TPO_STATS,                     /* (struct ptl_lib_stats *, struct tern_ptl_node_stats *,
                                    *  its size: 0 = up to loop_full, as before it grew,
                                    *  the ptl_lib_stats' size: 0 = up to tx_carried) */
    TPO_TRIG_ME_APPEND, TPO_TRIG_ME_UNLINK, TPO_TRIG_LE_APPEND, TPO_TRIG_LE_UNLINK, TPO_ABORT,
    TPO_TRACE,                     /* (cmd, ...): the message-path trace, below */
    TPO_LAST
};

/* TPO_STATS: the node's side of the counters (the library's are struct
 * ptl_lib_stats of ptl_lib.h, interface 0). */
struct tern_ptl_node_stats {
    uint64_t nic_tx_frames, nic_tx_errors, nic_rx_frames, nic_rx_dropped, nic_interrupts;
    uint64_t kmem_size, kmem_used, kmem_peak, kmem_fails;
    uint64_t loop_frames, loop_full; /* frames to the node itself; refused, ring full */
    uint64_t loop_by_ref;            /* of loop_frames: payload read from the sender's
                                      * buffer on delivery (one copy) */
    uint64_t calls;                  /* Portals system calls made on the node since boot */
    uint64_t nic_tx_doorbells;       /* transmit doorbells rung: one per frame, or one or
                                      * two per burst of frames (netdev_tx_batch) */
};

/* TPO_TRACE (not Portals; portals/include/ptl_trace.h for the points):
 *   (TERN_TRACE_START)                 empty the rings, record from now on
 *   (TERN_TRACE_STOP)                  stop recording
 *   (TERN_TRACE_MARK, point, tsc)      a record stamped by the program
 *   (TERN_TRACE_READ, cpu, buf, max, info)  copy CPU cpu's records, oldest
 *                                      first, to uint64_t buf[max]; returns
 *                                      how many, and fills *info
 * A record is point << 56 | TSC (low 56 bits, CPU 0's clock).  PTL_FAIL:
 * a kernel made without trace points (MSGTRACE=0). */
enum { TERN_TRACE_STOP, TERN_TRACE_START, TERN_TRACE_MARK, TERN_TRACE_READ };
struct tern_trace_info {
    uint64_t tsc_hz;               /* the kernel's calibrated TSC frequency */
    uint64_t total;                /* records made on that CPU (> max: oldest lost) */
    uint64_t cpus;                 /* CPUs with a ring */
};
#endif
