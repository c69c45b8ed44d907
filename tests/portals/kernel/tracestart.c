/* Starts the kernel's message-path trace (TPO_TRACE, include/tern/ptl_syscall.h)
 * and stops it again: prints "trace start rc=N" (PTL_OK 0, PTL_NO_SPACE when
 * the kernel has no room for the rings of the node's CPUs). */
#include <stdint.h>
#include <stdio.h>
#include <portals4.h>
#include <tern/ptl_syscall.h>
#include "ptl_tern.h"

int main(void)
{
    int rc = ptl_tern_trace(TERN_TRACE_START, 0, 0, 0, NULL);
    printf("trace start rc=%d\n", rc);
    ptl_tern_trace(TERN_TRACE_STOP, 0, 0, 0, NULL);
    return 0;
}
