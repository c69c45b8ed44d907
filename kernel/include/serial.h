#ifndef TERN_SERIAL_H
#define TERN_SERIAL_H
#include <stddef.h>
#include <stdint.h>

#define COM1 0x3F8
#define COM2 0x2F8

void serial_init(uint16_t port);
/* Sends len bytes; with crlf, each '\n' goes out as "\r\n" (what a terminal
 * on the other end of a real serial line expects). */
void serial_write(uint16_t port, const void *buf, size_t len, int crlf);
void serial_drain(uint16_t port);
/* Non-blocking read of one byte: -1 when nothing is waiting. */
int serial_getc(uint16_t port);
#endif
