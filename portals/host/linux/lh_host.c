/* ptl_host.h for Linux: memory, clock, the library mutex, interface
 * description, frame transmission and the blocking wait.  See ptl_linux.h
 * for configuration, privileges and how pids share an interface. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include "lh_internal.h"
#include "ptl_host.h"
#include "ptl_lib.h"
#include "ptl_wire.h"

#define LH_MAX_SG 256     /* the library sends at most 33 pieces */
/* Longest single sleep.  A thread asleep with no timer pending does not see
 * timers that another thread's Ptl* call arms afterwards; waking at this
 * rate bounds the delay of such a retransmission without spinning. */
#define LH_WAIT_CAP_NS 50000000ull

static pthread_mutex_t lib_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t init_m = PTHREAD_MUTEX_INITIALIZER;
static struct lh_conf conf;
static bool ready;
/* >0 while this thread is inside the host delivering frames: the library
 * locks again in ptl_lib_rx and must not recurse into a drain. */
static _Thread_local int in_host;

void *ptl_host_alloc(size_t size) { return malloc(size ? size : 1); }
void ptl_host_free(void *p) { free(p); }
void ptl_host_fpu_begin(void) {}
void ptl_host_fpu_end(void) {}

uint64_t ptl_host_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool is_ready(void) { return __atomic_load_n(&ready, __ATOMIC_ACQUIRE); }

/* Every library entry point takes this lock first.  The library has no
 * "poll the NIC" hook in its non-blocking calls (PtlEQGet, PtlCTGet, ...),
 * so frames already waiting in the ring are delivered here, before the
 * lock: a program that polls instead of waiting still makes progress. */
void ptl_host_lock(void)
{
    if (!in_host && is_ready() && (lh_packet_rx_ready() || lh_loop_ready())) {
        in_host++;
        lh_loop_drain(LH_RX_BATCH);
        lh_packet_drain(LH_RX_BATCH, false);
        in_host--;
    }
    pthread_mutex_lock(&lib_m);
    lh_progress_note();
}

void lh_host_enter(void) { in_host++; }

void ptl_host_unlock(void) { pthread_mutex_unlock(&lib_m); }

static int host_init(void)
{
    pthread_mutex_lock(&init_m);
    int rc = 0;
    if (!is_ready()) {
        rc = lh_config_load(&conf);
        if (!rc)
            rc = lh_packet_open(&conf);
        if (!rc) {
            __atomic_store_n(&ready, true, __ATOMIC_RELEASE);
            lh_progress_start();
        }
    }
    pthread_mutex_unlock(&init_m);
    return rc;
}

int ptl_host_iface_info(unsigned iface, struct ptl_host_iface_info *info)
{
    if (iface != 0 || host_init())
        return -1;
    /* Called by PtlNIInit, which may pick a different pid. */
    lh_packet_reset_filter();
    info->nid = conf.nid;
    info->pid = conf.pid;
    info->uid = conf.uid;
    info->jid = conf.jid;
    info->frame_max = conf.frame_max;
    info->link_checks_payload = !conf.payload_crc;
    return 0;
}

void ptl_host_tx_batch(bool on) { (void)on; }  /* each sendmsg leaves at once */

int ptl_host_send(unsigned iface, uint32_t dst_nid, const struct ptl_sg *sg,
                  int n_sg)
{
    if (iface != 0 || !is_ready() || n_sg < 1 || n_sg >= LH_MAX_SG ||
        sg[0].len < PTL_WIRE_HDR_LEN)
        return -1;
    uint32_t src_pid = ptl_wire_src_pid(sg[0].base);
    uint32_t dst_pid = ptl_wire_dst_pid(sg[0].base);
    if (dst_nid == conf.nid && dst_pid == src_pid)
        return lh_loop_send(sg, n_sg);
    uint8_t eth[PTL_ETH_HLEN];
    if (lh_nid_to_mac(&conf, dst_nid, eth)) {
        lh_packet_count_no_route();
        return -1;
    }
    memcpy(eth + 6, conf.mac, 6);
    eth[12] = PTL_ETHERTYPE >> 8;
    eth[13] = PTL_ETHERTYPE & 0xff;
    struct iovec iov[LH_MAX_SG];
    iov[0].iov_base = eth;
    iov[0].iov_len = sizeof(eth);
    size_t total = 0;
    for (int i = 0; i < n_sg; i++) {
        iov[i + 1].iov_base = (void *)sg[i].base;
        iov[i + 1].iov_len = sg[i].len;
        total += sg[i].len;
    }
    if (total > conf.frame_max)
        return -1;
    return lh_packet_send(src_pid, iov, n_sg + 1);
}

void ptl_host_wait(uint64_t deadline_ns)
{
    if (!is_ready())
        return;
    if (lh_progress_running()) {
        /* The progress thread polls; it wakes us after each batch. */
        lh_progress_wait(deadline_ns);
        return;
    }
    in_host++;
    if (lh_loop_drain(LH_RX_BATCH) + lh_packet_drain(LH_RX_BATCH, true) > 0)
        goto out;
    uint64_t now = ptl_host_now_ns();
    if (deadline_ns <= now)
        goto out;
    uint64_t ns = deadline_ns - now;
    if (ns > LH_WAIT_CAP_NS)
        ns = LH_WAIT_CAP_NS;
    struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ull),
                           .tv_nsec = (long)(ns % 1000000000ull) };
    struct pollfd pfd = { .fd = lh_packet_fd(), .events = POLLIN };
    if (ppoll(&pfd, 1, &ts, NULL) > 0)
        lh_packet_drain(LH_RX_BATCH, true);
out:
    in_host--;
}

int ptl_linux_get_stats(struct ptl_linux_stats *out)
{
    if (!is_ready() || !out)
        return -1;
    lh_packet_stats(out);
    return 0;
}

int ptl_linux_nid_to_mac(uint32_t nid, uint8_t mac[6])
{
    if (!is_ready())
        return -1;
    if (nid == conf.nid) {
        memcpy(mac, conf.mac, 6);
        return 0;
    }
    return lh_nid_to_mac(&conf, nid, mac);
}

/* With the progress thread, waiters sleep on its condition variable;
 * without it they sleep in poll() at most LH_WAIT_CAP_NS and then look
 * again: that bounds how late they see PtlAbort. */
void ptl_host_wake(void)
{
    if (lh_progress_running())
        lh_progress_signal();
}
