"""Decoder for the kernel's host link (kernel/include/hostlink.h).

Frames: type (1 byte), payload length (4 bytes little endian), payload."""
import struct

STDOUT = 1
STDERR = 2
EXIT = 0x10
SIGNAL = 0x11
PANIC = 0x12
LOAD_ERROR = 0x13
REPORT = 0x14
STDIN_WANT = 0x15   # node asks for up to N (uint32) bytes of standard input
STDIN = 0x20        # host to node: the bytes, none at end of file


class Decoder:
    """Feed bytes in; get (type, payload) frames out."""

    def __init__(self):
        self.buf = bytearray()

    def feed(self, data):
        self.buf += data
        frames = []
        while len(self.buf) >= 5:
            kind, length = struct.unpack_from("<BI", self.buf, 0)
            if len(self.buf) < 5 + length:
                break
            frames.append((kind, bytes(self.buf[5:5 + length])))
            del self.buf[:5 + length]
        return frames


def frame(kind, payload):
    """One frame, as the node reads it."""
    return struct.pack("<BI", kind, len(payload)) + payload
