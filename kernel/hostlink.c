#include "hostlink.h"
#include "rlock.h"
#include "serial.h"

bool hostlink_enabled;
static struct rlock link_lock = RLOCK_INIT;   /* a frame goes out whole */

void hostlink_init(void)
{
    serial_init(COM2);
    hostlink_enabled = true;
}

void hostlink_send(enum hostlink_type type, const void *payload, uint32_t len)
{
    if (!hostlink_enabled)
        return;
    unsigned char hdr[5] = {(unsigned char)type, (unsigned char)len, (unsigned char)(len >> 8),
                            (unsigned char)(len >> 16), (unsigned char)(len >> 24)};
    uint64_t f = rlock_take(&link_lock);
    serial_write(COM2, hdr, sizeof hdr, 0);
    serial_write(COM2, payload, len, 0);
    rlock_give(&link_lock, f);
}
