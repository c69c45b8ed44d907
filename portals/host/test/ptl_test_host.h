/*
 * TEST HARNESS ONLY: an implementation of ptl_host.h that runs several
 * simulated nodes inside one Linux process, joined by an in-memory "wire"
 * that can drop, duplicate, reorder and corrupt frames using a seeded PRNG.
 * Time is simulated: it advances only when every node is idle, jumping to
 * the next frame arrival or library timer, so protocol timeouts of seconds
 * cost no wall-clock time and runs are reproducible.
 *
 * Interface i is node nid PTL_TEST_NID(i) with default pid PTL_TEST_PID.
 */
#ifndef PTL_TEST_HOST_H
#define PTL_TEST_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PTL_TEST_NID(i) (0x100u + (unsigned)(i))
#define PTL_TEST_PID 77u
#define PTL_TEST_UID 1000u
#define PTL_TEST_JID 42u

struct ptl_test_wire {
    uint64_t seed;
    unsigned loss_pct;    /* frame silently lost */
    unsigned dup_pct;     /* frame delivered twice */
    unsigned reorder_pct; /* frame delayed by a random extra latency */
    unsigned corrupt_pct; /* one random byte flipped */
    uint64_t latency_ns;  /* base one-way latency */
};

struct ptl_test_wire_stats {
    uint64_t sent, delivered, lost, duplicated, reordered, corrupted;
    uint64_t dead_dropped;
    uint64_t overrun;     /* dropped: the slow receiver's queue was full */
};

/* Set up n interfaces (nodes) with the given frame size (e.g. 1500). */
void ptl_test_host_init(unsigned n_ifaces, uint32_t frame_max);
void ptl_test_wire_config(const struct ptl_test_wire *w);
/* Allocations above `bytes` fail (0: no limit), as on a node whose kernel
 * heap is a few MiB. */
void ptl_test_alloc_max(size_t bytes);
/* A slow receiver: node `iface` takes ns_per_frame to take in each frame,
 * one after the other in arrival order (a frame the library drops as a
 * known copy before its checksum: a 32nd of that), and at most `queue`
 * frames wait for it (more are dropped, as a full NIC ring and host queue
 * drop them).  A kernel whose instructions are emulated is such a node.
 * 0: off. */
void ptl_test_set_rx_cost(unsigned iface, uint64_t ns_per_frame, unsigned queue);
/* A node that stops for a while (its emulator thread descheduled on a busy
 * host): frames that would reach `iface` in [from_ns, until_ns) wait, in
 * order, until until_ns.  Nothing is lost.  from_ns == until_ns: off. */
void ptl_test_set_stall(unsigned iface, uint64_t from_ns, uint64_t until_ns);
/* A dead node neither receives nor sends frames. */
void ptl_test_set_dead(unsigned iface, bool dead);
/* The job id interface iface's NIs take from now on (another job's node). */
void ptl_test_set_jid(unsigned iface, uint32_t jid);
/* Frames sent by NIs initialised from now on checksum their payloads too
 * (link_checks_payload 0), as on a wire with corrupt_pct > 0. */
void ptl_test_set_payload_crc(bool on);
uint64_t ptl_test_now(void);
void ptl_test_wire_stats(struct ptl_test_wire_stats *s);
/* Called with every frame put on the wire (before loss/corruption). */
typedef void (*ptl_test_tap_fn)(unsigned src_iface, unsigned dst_iface,
                                const uint8_t *frame, size_t len);
void ptl_test_set_tap(ptl_test_tap_fn fn);
/* Frames for which fn returns true are lost (after the tap sees them). */
typedef bool (*ptl_test_drop_fn)(unsigned src_iface, unsigned dst_iface,
                                 const uint8_t *frame, size_t len);
void ptl_test_set_drop(ptl_test_drop_fn fn);
/* Called with the scatter-gather list of every frame the library sends
 * (sg[0] is the header), before the harness copies it onto the wire. */
struct ptl_sg;
typedef void (*ptl_test_sg_fn)(unsigned src_iface, const struct ptl_sg *sg,
                               int n_sg);
void ptl_test_set_sg_tap(ptl_test_sg_fn fn);
/* Deliver all frames now in flight, without advancing time beyond them. */
void ptl_test_drain(void);
/* Number of FPU bracket pairs seen (atomic_fp must be wrapped). */
unsigned long ptl_test_fpu_sections(void);
/* Random numbers from the harness PRNG (for tests). */
uint64_t ptl_test_rand(void);

#endif
