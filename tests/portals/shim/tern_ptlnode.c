/* ptlnode built for a Tern node (the same source as the Linux test program):
 * the library's counters come from the kernel through ptl_tern_stats; in
 * place of the Linux host's counters it reports the node's NIC counters
 * (host_rx = frames received, host_ring_drops = frames the driver dropped,
 * host_tx, host_tx_err); the tunables belong to the kernel's library and
 * are not changed from a program. */
#include <string.h>
#include "ptl_lib.h"
#include "ptl_linux.h"
#include "ptl_tern.h"
#include "../../../include/tern/ptl_syscall.h"

int ptl_lib_get_stats(unsigned iface, struct ptl_lib_stats *out)
{
    (void)iface;
    return ptl_tern_stats(out, NULL) == 0 ? 0 : -1;
}

int ptl_linux_get_stats(struct ptl_linux_stats *out)
{
    struct ptl_lib_stats lib;
    struct tern_ptl_node_stats node;
    memset(out, 0, sizeof *out);
    if (ptl_tern_stats(&lib, &node) != 0)
        return -1;
    out->rx_frames = node.nic_rx_frames;
    out->rx_ring_drops = node.nic_rx_dropped;
    out->tx_frames = node.nic_tx_frames;
    out->tx_errors = node.nic_tx_errors;
    return 0;
}

void ptl_lib_get_tunables(struct ptl_lib_tunables *t) { memset(t, 0, sizeof *t); }
void ptl_lib_set_tunables(const struct ptl_lib_tunables *t) { (void)t; }
