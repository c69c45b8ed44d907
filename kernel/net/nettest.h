/* What the nettest boot modes (nettest.c, nettest_barrier.c) share: their
 * EtherType, MAC and size words, and the result lines bench/ parses. */
#ifndef TERN_NETTEST_H
#define TERN_NETTEST_H
#include <stdbool.h>
#include <stdint.h>
#include "netdev.h"

#define ECHO_ETHERTYPE 0x88B5    /* IEEE local experimental */

/* "02:00:00:00:00:09" -> mac; false at anything else. */
bool nettest_parse_mac(const char *s, uint8_t mac[ETH_ALEN]);
/* "R WHAT SIZE UNIT V.VV", the line bench/floor/floorping.c prints too;
 * hundredths: the value in hundredths of UNIT. */
void nettest_result(const char *what, uint64_t size, const char *unit, uint64_t hundredths);
#endif
