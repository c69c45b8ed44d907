/* ptlnode built for a Tern node (the same source as the Linux test program):
 * the library's counters come from the kernel through ptl_tern_stats; the
 * Linux host's own counters do not exist there; the tunables belong to the
 * kernel's library and are not changed from a program. */
#include <string.h>
#include "ptl_lib.h"
#include "ptl_linux.h"
#include "../../../kernel/include/ptl_syscall.h"

int ptl_tern_stats(struct ptl_lib_stats *lib, struct tern_ptl_node_stats *node);

int ptl_lib_get_stats(unsigned iface, struct ptl_lib_stats *out)
{
    (void)iface;
    return ptl_tern_stats(out, NULL) == 0 ? 0 : -1;
}

int ptl_linux_get_stats(struct ptl_linux_stats *out)
{
    memset(out, 0, sizeof *out);
    return 0;
}

void ptl_lib_get_tunables(struct ptl_lib_tunables *t) { memset(t, 0, sizeof *t); }
void ptl_lib_set_tunables(const struct ptl_lib_tunables *t) { (void)t; }
