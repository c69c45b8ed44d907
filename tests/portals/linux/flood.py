"""Send well-formed Portals puts from COUNT made-up sources (nids that no
node has, random pids) at DST_NID/DST_PID, as a hostile host on the wire
would: every frame opens a new stream, every other one asks for an ACK
that can never be delivered.  Usage: flood.py IFACE DST_NID DST_PID COUNT
SEED.  Prints how many frames it sent."""
import os
import random
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from inject import ETH_P, header, seal  # noqa: E402

PT_NO_ENTRY = 30      # a portal no one posts to: only the sender's state is kept


def main():
    iface, nid, pid, count, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
        int(sys.argv[4]), int(sys.argv[5])
    rnd = random.Random(seed)
    dst_mac = bytes([2, 0, 0, (nid >> 16) & 255, (nid >> 8) & 255, nid & 255])
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P))
    s.bind((iface, ETH_P))
    eth = dst_mac + s.getsockname()[4][:6] + struct.pack("!H", ETH_P)
    for i in range(count):
        h = header(nid, pid, src_nid=0x100000 + rnd.randrange(1 << 20),
                   src_pid=rnd.randrange(3, 1 << 16), session=rnd.randrange(1, 1 << 32),
                   pt=PT_NO_ENTRY, msg_len=8, frag_len=8)
        h[101] = i % 2                                      # PTL_ACK_REQ
        s.send(eth + seal(h, bytes(8)))
        if i % 100 == 99:
            time.sleep(0.01)      # a pace the node's receive ring takes in
    print(count)


if __name__ == "__main__":
    main()
