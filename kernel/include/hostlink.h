/* The host link: a second serial port (COM2) that carries a program's output
 * and its end to the host tool that launched the node (qemu/run-node), framed
 * so stdout, stderr and the exit record stay apart from the kernel's log on
 * COM1.  Enabled by `hostlink=com2` on the kernel command line.  With
 * `stdin=pipe` or `stdin=tty` it carries the program's standard input the
 * other way, on request: the node asks for up to N bytes (HL_STDIN_WANT),
 * the host answers with one HL_STDIN frame of at most N (empty: end of
 * file), so the host reads its own stdin only as far as the program does.
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
    HL_STDIN_WANT = 0x15,  /* payload: uint32 bytes wanted at most */
    HL_STDIN = 0x20,       /* host to node: input bytes, none at end of file */
};

#define HL_STDIN_MAX 4096

extern bool hostlink_enabled;
void hostlink_init(void);
void hostlink_send(enum hostlink_type type, const void *payload, uint32_t len);
/* Standard input (never blocking; sys/console_in.c waits): */
void hostlink_stdin_request(void);   /* asks for more unless asked or some is here */
/* Bytes or an end of file are here to take; *progress: some arrived. */
bool hostlink_stdin_ready(bool *progress);
/* Takes up to n bytes into dst: how many (0: end of file, taken). */
uint32_t hostlink_stdin_take(void *dst, uint32_t n);
#endif
