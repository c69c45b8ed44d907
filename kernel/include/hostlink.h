/* The host link: a second serial port (COM2) that carries a program's output
 * and its end to the host tool that launched the node (qemu/run-node), framed
 * so stdout, stderr and the exit record stay apart from the kernel's log on
 * COM1.  Enabled by `hostlink=com2` on the kernel command line.
 *
 * Frame: type (1 byte), payload length (4 bytes, little endian), payload.
 * qemu/ternlib/hostlink.py decodes it; keep the two in step. */
#ifndef TERN_HOSTLINK_H
#define TERN_HOSTLINK_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum hostlink_type {
    HL_STDOUT = 1,
    HL_STDERR = 2,
    HL_EXIT = 0x10,        /* payload: int32 exit status */
    HL_SIGNAL = 0x11,      /* payload: int32 signal number (fault or kill) */
    HL_PANIC = 0x12,       /* payload: message */
    HL_LOAD_ERROR = 0x13,  /* payload: message */
    HL_REPORT = 0x14,      /* payload: a fault report, for the user's stderr */
};

extern bool hostlink_enabled;
void hostlink_init(void);
void hostlink_send(enum hostlink_type type, const void *payload, uint32_t len);
#endif
