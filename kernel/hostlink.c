#include "hostlink.h"
#include "kernel.h"
#include "rlock.h"
#include "serial.h"

bool hostlink_enabled;
static bool hostlink_enabled_input = true;   /* until the link is found out of step */
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

/* ---- standard input ---------------------------------------------------------- */

static uint8_t in_buf[HL_STDIN_MAX];
static uint32_t in_len, in_pos;
static bool in_eof, asked;
/* The frame being received: its header, then its payload into in_buf. */
static uint8_t rx_hdr[5];
static uint32_t rx_got, rx_len;

void hostlink_stdin_request(void)
{
    if (!hostlink_enabled || !hostlink_enabled_input || asked || in_pos < in_len || in_eof)
        return;
    uint32_t want = HL_STDIN_MAX;
    hostlink_send(HL_STDIN_WANT, &want, sizeof want);
    asked = true;
}

/* Takes what COM2 holds (16 bytes of FIFO at most: the host's further
 * bytes wait in QEMU until these are read). */
static void receive(bool *progress)
{
    int c;
    while (asked && (c = serial_getc(COM2)) >= 0) {
        *progress = true;
        if (rx_got < sizeof rx_hdr) {
            rx_hdr[rx_got++] = (uint8_t)c;
            if (rx_got < sizeof rx_hdr)
                continue;
            rx_len = rx_hdr[1] | rx_hdr[2] << 8 | rx_hdr[3] << 16 | (uint32_t)rx_hdr[4] << 24;
            if (rx_hdr[0] != HL_STDIN || rx_len > HL_STDIN_MAX) {
                /* Not what was asked for: the link is out of step, and
                 * guessing could hand the program garbage. */
                kprintf("hostlink: bad input frame (type %u, %u bytes): standard input ends\n",
                        rx_hdr[0], rx_len);
                in_eof = true;
                asked = false;
                hostlink_enabled_input = false;
                return;
            }
        } else {
            in_buf[rx_got++ - sizeof rx_hdr] = (uint8_t)c;
        }
        if (rx_got == sizeof rx_hdr + rx_len) {
            in_len = rx_len;
            in_pos = 0;
            in_eof = rx_len == 0;
            asked = false;
            rx_got = 0;
        }
    }
}

bool hostlink_stdin_ready(bool *progress)
{
    *progress = false;
    receive(progress);
    return in_pos < in_len || in_eof || !hostlink_enabled_input;
}

uint32_t hostlink_stdin_take(void *dst, uint32_t n)
{
    if (in_pos == in_len) {
        in_eof = false;         /* one read sees the end; a terminal may go on */
        return 0;
    }
    if (n > in_len - in_pos)
        n = in_len - in_pos;
    memcpy(dst, in_buf + in_pos, n);
    in_pos += n;
    return n;
}
