/* Message-path trace points (issue 18): where the time of one message goes,
 * stamped with the TSC on the node that runs the code.  Shared by the Tern
 * kernel, the Portals library built into it, the programs that read the
 * trace back (TPO_TRACE, ptl_syscall.h) and bench/msgpath.py, which reads
 * the names and numbers below from this file: keep one `TP_NAME = N,` per
 * line.
 *
 * In the library a point is PTL_TRACE(TP_x).  Only the kernel build of the
 * library (-DPTL_TRACE_HOOK, kernel/Makefile.inc) compiles it to a call of
 * the host's recorder, behind a test of one flag that is false until a
 * program turns tracing on; the Linux libportals and the test builds compile
 * it to nothing. */
#ifndef PTL_TRACE_H
#define PTL_TRACE_H

enum ptl_trace_point {
    TP_NONE = 0,
    /* send side, in the order a put passes them */
    TP_SYS_PUT = 1,        /* Portals system call entered for PtlPut */
    TP_PUT_ISSUE = 2,      /* library: operation issued (after copy-in, checks, rx poll) */
    TP_TX_HDR = 3,         /* library: wire header built and checksummed, handed to the host */
    TP_TX_QUEUE = 4,       /* netdev: Ethernet header built, frame checked, slots reclaimed */
    TP_TX_NOTIFY = 5,      /* driver: descriptors posted, doorbell about to be rung */
    TP_TX_DONE = 6,        /* netdev: driver returned (doorbell's VM exit over) */
    TP_SYS_PUT_EXIT = 7,   /* PtlPut system call about to return */
    /* receive side */
    TP_SYS_WAIT = 10,      /* Portals system call entered for an EQ wait/poll/get */
    TP_HALT = 11,          /* netdev_wait: nothing pending, CPU about to halt */
    TP_NET_IRQ = 12,       /* the NIC's interrupt handler (an interrupt of ours) */
    TP_NET_WAKE = 13,      /* netdev_wait: a frame is pending, the wait ends */
    TP_RX_FRAME = 14,      /* a Portals frame handed to the library */
    TP_RX_CHECKED = 15,    /* library: header and CRC checked, to the reliability layer */
    TP_MATCH = 16,         /* library: a list entry matched the request */
    TP_COPY = 17,          /* library: the payload is in the matched buffer */
    TP_EVENT = 18,         /* library: the event is in the EQ */
    TP_SYS_WAIT_EXIT = 19, /* EQ wait/poll/get system call returning an event */
    TP_APP = 20,           /* the program's own stamp, taken when it has the event */
    TP_RX_DELIVER = 21,    /* library: in order, the ACK it carries noted, to be delivered */
    TP_LAST = 22,
};

#ifdef PTL_TRACE_HOOK
extern volatile unsigned char ptl_trace_on;   /* the host's: tracing is wanted */
void ptl_host_trace(unsigned point);          /* records (point, TSC) on this CPU */
#define PTL_TRACE(p)                                                                               \
    do {                                                                                           \
        if (__builtin_expect(ptl_trace_on, 0))                                                     \
            ptl_host_trace(p);                                                                     \
    } while (0)
#else
#define PTL_TRACE(p) ((void)0)
#endif
#endif
