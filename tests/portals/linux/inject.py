"""Send malformed Portals frames from a raw AF_PACKET socket (run inside the
test's own namespace).  Usage: inject.py IFACE DST_NID DST_PID SEED.
Prints one line: how many frames of each class were sent and how many of
them the receiver's pid filter lets through to the library."""
import json
import random
import socket
import struct
import sys

ETH_P = 0x88B5
HDR = 144


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xFFFFFFFF


def header(dst_nid, dst_pid, **f):
    h = bytearray(HDR)
    h[0] = f.get("version", 1)
    h[1] = f.get("op", 1)                                   # PUT
    struct.pack_into("<H", h, 2, f.get("flags", 0x1 | 0x8 | 0x10))
    struct.pack_into("<IIIIIIII", h, 8, 0, 0, f.get("src_nid", 1),
                     f.get("src_pid", 999), dst_nid, dst_pid,
                     0xFFFFFFFF, f.get("pt", 5))
    struct.pack_into("<IIII", h, 40, f.get("session", 0x1234), f.get("seq", 0),
                     0, 0)
    struct.pack_into("<QQQQI", h, 64, 1, f.get("roff", 0),
                     f.get("msg_len", 0), f.get("frag_off", 0),
                     f.get("frag_len", 0))
    h[100] = 1                                              # matching NI
    h[101] = 0                                              # no ack
    return h


def seal(h, payload=b"", bad_crc=False):
    frame = bytes(h) + payload
    c = crc32c(frame)
    if bad_crc:
        c ^= 0x5A5A
    return frame[:4] + struct.pack("<I", c) + frame[8:]


def main():
    iface, nid, pid, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
        int(sys.argv[4])
    rnd = random.Random(seed)
    dst_mac = bytes([2, 0, 0, (nid >> 16) & 255, (nid >> 8) & 255, nid & 255])
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P))
    s.bind((iface, ETH_P))
    eth = dst_mac + s.getsockname()[4][:6] + struct.pack("!H", ETH_P)
    sent, passing = {}, 0

    def send(cls, body, passes=True):
        nonlocal passing
        s.send(eth + body)
        sent[cls] = sent.get(cls, 0) + 1
        passing += passes

    for i in range(10):
        send("short_runt", bytes(rnd.randrange(0, 31)))          # < pid field
        send("short_hdr", bytes(seal(header(nid, pid)))[:40 + i * 10])
        send("bad_version", seal(header(nid, pid, version=2 + i)))
        send("bad_crc", seal(header(nid, pid, msg_len=8, frag_len=8),
                             bytes(8), bad_crc=True))
        send("frag_len_mismatch", seal(header(nid, pid, msg_len=100,
                                              frag_len=100), bytes(50)))
        send("frag_beyond_msg", seal(header(nid, pid, msg_len=10,
                                            frag_off=8, frag_len=8),
                                     bytes(8)))
        send("msg_too_big", seal(header(nid, pid, msg_len=1 << 40,
                                        frag_len=16, flags=0x9), bytes(16)))
        send("pt_beyond_table", seal(header(nid, pid, pt=200 + i)))
        send("bad_op", seal(header(nid, pid, op=9 + i)))
        body = bytearray(rnd.randbytes(rnd.randrange(60, 1400)))
        send("garbage_other_pid", bytes(body),
             passes=struct.unpack_from("<I", body, 28)[0] == pid)
        struct.pack_into("<I", body, 28, pid)
        send("garbage", bytes(body))
    # Well-formed puts from a fake peer to a portal nobody allocated: they
    # pass validation and are dropped by the target (PTL_SR_DROP_COUNT).
    for i in range(5):
        send("pt_unallocated", seal(header(nid, pid, pt=40, seq=i)))
    print(json.dumps({"sent": sent, "passing": passing}))


if __name__ == "__main__":
    main()
