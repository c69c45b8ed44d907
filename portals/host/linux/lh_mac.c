/* MAC addresses in text, as TERN_NIDMAP lines and the node database write
 * them.  A file of its own, so that a program that only parses addresses
 * (tern-nodedb) takes nothing else from libportals.a. */
#include <stdio.h>
#include "ptl_linux.h"

int ptl_linux_parse_mac(const char *s, uint8_t mac[6])
{
    unsigned b[6];
    char tail;
    if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &b[0], &b[1], &b[2], &b[3], &b[4],
               &b[5], &tail) != 6)
        return -1;
    for (int i = 0; i < 6; i++) {
        if (b[i] > 255)
            return -1;
        mac[i] = (uint8_t)b[i];
    }
    return 0;
}
