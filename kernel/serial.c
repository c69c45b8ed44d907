/* 16550 UART.  Every port access is a VM exit (expensive under KVM here), so
 * we poll the line status once per 16-byte FIFO load, not once per byte. */
#include "serial.h"
#include "x86.h"

enum { THR = 0, IER = 1, FCR = 2, LCR = 3, MCR = 4, LSR = 5 };

void serial_init(uint16_t port)
{
    outb(port + IER, 0x00);
    outb(port + LCR, 0x80);     /* DLAB: divisor 1 = 115200 baud */
    outb(port + 0, 0x01);
    outb(port + 1, 0x00);
    outb(port + LCR, 0x03);     /* 8N1 */
    outb(port + FCR, 0xC7);     /* enable and clear FIFOs */
    outb(port + MCR, 0x03);     /* DTR, RTS; no interrupts (OUT2 off) */
}

void serial_write(uint16_t port, const void *buf, size_t len, int crlf)
{
    const unsigned char *p = buf;
    int room = 0;
    int pending_lf = 0;
    while (len || pending_lf) {
        if (!room) {
            while (!(inb(port + LSR) & 0x20))
                __asm__ volatile("pause");
            room = 16;
        }
        if (pending_lf) {
            outb(port + THR, '\n');
            pending_lf = 0;
        } else if (crlf && *p == '\n') {
            outb(port + THR, '\r');
            pending_lf = 1;
            p++, len--;
        } else {
            outb(port + THR, *p++);
            len--;
        }
        room--;
    }
}

int serial_getc(uint16_t port)
{
    if (inb(port + LSR) & 0x01)
        return inb(port + THR);
    return -1;
}

/* Waits until the UART has handed every byte on (transmitter empty), so a
 * VM that ends right after loses nothing still queued in the device: QEMU's
 * 16550 keeps bytes its chardev could not take yet.  Bounded: a dead port
 * must not hang the end of a run. */
void serial_drain(uint16_t port)
{
    for (long i = 0; i < 2000000 && !(inb(port + LSR) & 0x40); i++)
        __asm__ volatile("pause");
}
