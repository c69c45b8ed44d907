/* Private state of the Linux host (see ptl_linux.h for the design). */
#ifndef LH_INTERNAL_H
#define LH_INTERNAL_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ptl_linux.h"

struct lh_map_ent {
    uint32_t nid;
    uint8_t mac[6];
};

struct lh_conf {
    char ifname[IF_NAMESIZE];
    int ifindex;
    uint8_t mac[6];
    uint32_t mtu, frame_max;
    uint32_t nid, pid, uid, jid;
    unsigned ring_kb;
    bool payload_crc;       /* TERN_PAYLOAD_CRC=1 */
    struct lh_map_ent *map; /* NULL: the 02:00:00:NN:NN:NN rule */
    size_t n_map;
};

#define LH_RX_BATCH 8    /* frames per drain: bounds one call's detour */

/* lh_config.c: environment, interface facts, nid <-> MAC. */
int lh_config_load(struct lh_conf *c);
int lh_nid_to_mac(const struct lh_conf *c, uint32_t nid, uint8_t mac[6]);

/* lh_packet.c: the AF_PACKET socket, receive ring, transmit, pid filter. */
int lh_packet_open(const struct lh_conf *c);
int lh_packet_fd(void);
bool lh_packet_rx_ready(void);
/* Hand up to max ring frames to ptl_lib_rx; returns how many were seen.
 * Must be called without the library lock.  `wait_turn`: block while
 * another thread drains instead of returning 0 at once. */
int lh_packet_drain(int max, bool wait_turn);
struct iovec;
/* iov[0] is the Ethernet header; src_pid (from the wire header) teaches the
 * pid filter which pid this process uses. */
int lh_packet_send(uint32_t src_pid, const struct iovec *iov, int n_iov);
/* A new NI may use another pid: admit every frame until the next send. */
void lh_packet_reset_filter(void);
/* lh_loop.c: frames to this very process. */
struct ptl_sg;
int lh_loop_send(const struct ptl_sg *sg, int n_sg);
bool lh_loop_ready(void);
int lh_loop_drain(int max);

void lh_packet_stats(struct ptl_linux_stats *out);

/* lh_progress.c: the progress thread (TERN_PTL_PROGRESS). */
void lh_progress_start(void);
bool lh_progress_running(void);
void lh_progress_note(void);           /* with the library lock just taken */
void lh_progress_wait(uint64_t deadline_ns);
void lh_progress_signal(void);
void lh_progress_kick(void);           /* a frame to this process was queued */
/* lh_host.c: the calling thread delivers frames itself and must not be
 * made to drain again when the library locks (the progress thread). */
void lh_host_enter(void);
void lh_packet_count_no_route(void);

#endif
