"""A Tern kernel node and a Linux process exchange Portals messages: the
same test program (tests/portals/linux/ptlnode.c) runs on the kernel node
(build/portals/kernel/ptlnode-tern) and on Linux (the AF_PACKET host), on a
bridge inside a namespace the test creates and removes."""
import contextlib
import os
import select
import subprocess
import sys
import time

import pytest

from nodes import ROOT, RUN_NODE, stop_group
from test_portals_kernel import _net_usable, bridged_namespace, ip

sys.path.insert(0, os.path.join(ROOT, "qemu"))
from ternlib.fabric import LARGE_MTU  # noqa: E402

LINUX_NODE = os.path.join(ROOT, "build", "portals", "linux", "ptlnode")
IMPAIR = os.path.join(ROOT, "build", "portals", "linux", "impair")
TERN_NODE = os.path.join(ROOT, "build", "portals", "kernel", "ptlnode-tern")
SERVER_NID, SERVER_PID, TERN_NID = 3, 10, 1

pytestmark = pytest.mark.skipif(_net_usable() is not None, reason=str(_net_usable()))


def linux_server(ns, n, max_size, lossy=False, mtu=1500):
    """ptlnode serve on a veth end (MAC by the nid rule), plugged into br0,
    or with lossy=True reached through the userspace lossy forwarder
    (tests/portals/linux/impair.c: tc netem is missing on our kernels):
    br0 - a1|a0 - impair - b0|lnx0."""
    ip("-n", ns, "link", "add", "lnx0", "type", "veth", "peer", "name", "lnx0p")
    ip("-n", ns, "link", "set", "lnx0", "address", f"02:00:00:00:00:{SERVER_NID:02x}")
    for dev in ("lnx0", "lnx0p"):
        ip("-n", ns, "link", "set", dev, "mtu", str(mtu))
    if lossy:
        ip("-n", ns, "link", "add", "a1", "type", "veth", "peer", "name", "a0")
        ip("-n", ns, "link", "set", "a1", "master", "br0", "up")
        for dev in ("a0", "lnx0p"):
            ip("-n", ns, "link", "set", dev, "up")
    else:
        ip("-n", ns, "link", "set", "lnx0p", "master", "br0", "up")
    ip("-n", ns, "link", "set", "lnx0", "up")
    env = dict(os.environ, TERN_IFACE="lnx0", TERN_PID=str(SERVER_PID))
    if lossy:     # the impairer damages frames and no FCS check drops them
        env["TERN_PAYLOAD_CRC"] = "1"
    p = subprocess.Popen(["ip", "netns", "exec", ns, LINUX_NODE, "serve", str(n), str(max_size)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=env)
    line = p.stdout.readline()
    assert line.startswith("READY"), line + p.stderr.read()
    return p


def on_tern(ns, tap, args, timeout, mtu=None, payload_crc=False):
    """ptlnode-tern on a node of its own; with mtu, its NIC states that MTU
    and the kernel log comes on stderr; payload_crc: the node checksums
    payloads too."""
    cmd = ["ip", "netns", "exec", ns, sys.executable, RUN_NODE, "--tcg", "--mem", "160M",
           "--timeout", str(timeout), "--nic", "virtio", "--tap", tap, "--nid", str(TERN_NID),
           *(["--payload-crc"] if payload_crc else []),
           *(["--mtu", str(mtu), "-v"] if mtu else []), TERN_NODE, *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout + 30)


def finish(server):
    """Asks the server for its counters and to quit; returns its output."""
    try:
        out, err = server.communicate("stats\nquit\n", timeout=20)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    return out, err


def test_kernel_node_and_linux_process():
    n, max_size = 24, 1 << 20
    with bridged_namespace(1) as (ns, taps):
        server = linux_server(ns, n, max_size)
        try:
            rt = on_tern(ns, taps[0], ["rt", str(SERVER_NID), str(SERVER_PID)], 120)
            stream = on_tern(ns, taps[0], ["stream", str(SERVER_NID), str(SERVER_PID), str(n),
                                           str(max_size), "8"], 180)
        finally:
            out, err = finish(server)
    print(rt.stdout, stream.stdout, out, sep="\n")
    # put/get 0 B..1 MiB compared byte for byte, atomics, fetch-atomic, swap
    assert rt.returncode == 0 and "OK rt" in rt.stdout, rt.stdout + rt.stderr
    # 24 messages up to 1 MiB checked by the Linux side for order, length,
    # placement and content
    assert stream.returncode == 0 and "OK stream" in stream.stdout, stream.stdout + stream.stderr
    done = next(l for l in out.splitlines() if l.startswith("STREAM_DONE"))
    assert f"msgs={n}" in done, out + err


def frames_on(ns, dev):
    """(frames, bytes) that crossed `dev` both ways."""
    r = subprocess.run(["ip", "netns", "exec", ns, "sh", "-c",
                        f"cat /sys/class/net/{dev}/statistics/[rt]x_packets "
                        f"/sys/class/net/{dev}/statistics/[rt]x_bytes"],
                       capture_output=True, text=True, check=True)
    v = [int(x) for x in r.stdout.split()]
    return v[0] + v[1], v[2] + v[3]


def test_kernel_node_and_linux_process_in_large_frames():
    """Issue 18: on a fabric of 65520-byte frames the node learns the MTU
    from its virtio NIC (boot log), the kernel and the Linux host both
    fragment at it, and puts/gets of up to 1 MiB, compared byte for byte,
    and a stream of 24 messages up to 1 MiB arrive intact; the frames on
    the wire really were larger than the 9000 bytes allowed before."""
    n, max_size = 24, 1 << 20
    with bridged_namespace(1, LARGE_MTU) as (ns, taps):
        server = linux_server(ns, n, max_size, mtu=LARGE_MTU)
        try:
            rt = on_tern(ns, taps[0], ["rt", str(SERVER_NID), str(SERVER_PID)], 120,
                         mtu=LARGE_MTU)
            stream = on_tern(ns, taps[0], ["stream", str(SERVER_NID), str(SERVER_PID), str(n),
                                           str(max_size), "8"], 180, mtu=LARGE_MTU)
            frames, nbytes = frames_on(ns, taps[0])
        finally:
            out, err = finish(server)
    print(rt.stdout, stream.stdout, out, f"{frames} frames, {nbytes} bytes", sep="\n")
    assert f"MTU {LARGE_MTU} (from the device)" in rt.stderr, rt.stderr[-3000:]
    assert rt.returncode == 0 and "OK rt" in rt.stdout, rt.stdout + rt.stderr[-3000:]
    assert stream.returncode == 0 and "OK stream" in stream.stdout, \
        stream.stdout + stream.stderr[-3000:]
    done = next(l for l in out.splitlines() if l.startswith("STREAM_DONE"))
    assert f"msgs={n}" in done, out + err
    # No frame is above 14 + 9000 bytes on a fabric of 9000-byte frames.
    assert nbytes / frames > 14 + 9000, (frames, nbytes)


def test_kernel_node_to_linux_over_a_lossy_wire():
    """10 % loss, 5 % duplication, 25 % reordering, 2 % corruption both
    ways between a kernel node and a Linux process: the stream still
    arrives complete and in order, and the wire really was hostile."""
    n, max_size = 16, 1 << 20
    with bridged_namespace(1) as (ns, taps):
        server = linux_server(ns, n, max_size, lossy=True)
        impair = subprocess.Popen(["ip", "netns", "exec", ns, IMPAIR, "a0", "lnx0p", "10", "5",
                                   "25", "2", "100", "3"], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        try:
            assert impair.stdout.readline().startswith("IMPAIR READY")
            stream = on_tern(ns, taps[0], ["stream", str(SERVER_NID), str(SERVER_PID), str(n),
                                           str(max_size), "8"], 240, payload_crc=True)
        finally:
            out, err = finish(server)
            impair.terminate()
            impair.wait(10)
    print(stream.stdout, out, sep="\n")
    assert stream.returncode == 0 and "OK stream" in stream.stdout, stream.stdout + stream.stderr
    done = next(l for l in out.splitlines() if l.startswith("STREAM_DONE"))
    assert f"msgs={n}" in done, out + err
    client = dict(kv.split("=") for kv in stream.stdout.splitlines()[-1].split()[1:])
    server_stats = dict(kv.split("=") for kv in out.splitlines()[-1].split()[1:])
    assert int(client["tx_retransmits"]) > 0
    assert int(server_stats["rx_dup"]) + int(server_stats["rx_bad_crc"]) > 0


@contextlib.contextmanager
def computing_tern_node(secs):
    """A Tern node running `ptlnode compute SECS` (busy, no system call)
    beside a Linux veth end lnx0 at SERVER_NID; yields (run, node): run()
    does one `ptlnode rt` client against the node (CompletedProcess), node
    is the node's Popen, past READY.  Killed on the way out, whatever
    happened (also used by bench/portals_reference.py --tern)."""
    with bridged_namespace(1) as (ns, taps):
        ip("-n", ns, "link", "add", "lnx0", "type", "veth", "peer", "name", "lnx0p")
        ip("-n", ns, "link", "set", "lnx0", "address", f"02:00:00:00:00:{SERVER_NID:02x}")
        ip("-n", ns, "link", "set", "lnx0p", "master", "br0", "up")
        ip("-n", ns, "link", "set", "lnx0", "up")
        cmd = ["ip", "netns", "exec", ns, sys.executable, RUN_NODE, "--tcg", "--mem", "160M",
               "--timeout", str(int(secs) + 60), "--nic", "virtio", "--tap", taps[0],
               "--nid", str(TERN_NID), TERN_NODE, "compute", str(secs)]
        node = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        try:
            end, line = time.monotonic() + 120, ""
            while "READY" not in line and time.monotonic() < end and node.poll() is None:
                if select.select([node.stdout], [], [], 1)[0]:
                    line = node.stdout.readline()
            assert "READY" in line, line + (node.stderr.read() if node.poll() is not None else "")
            env = dict(os.environ, TERN_IFACE="lnx0", TERN_PID=str(SERVER_PID))

            def run():
                return subprocess.run(["ip", "netns", "exec", ns, LINUX_NODE, "rt",
                                       str(TERN_NID), "16"], capture_output=True, text=True,
                                      env=env, timeout=200)
            yield run, node
        finally:
            stop_group(node, grace=15)
            node.communicate()


def test_computing_kernel_node_answers_at_once():
    """A program on a Tern node computes for 150 s without calling Portals
    (ptlnode compute: no system call either); a Linux process does
    put/get/atomic round trips with it, all checked, and they must finish
    while the program still computes: the kernel handles the frames when they
    arrive (the NIC's interrupt), not when the program next calls in."""
    with computing_tern_node(150) as (run, node):
        rt = run()
        assert rt.returncode == 0 and "OK rt" in rt.stdout, rt.stdout + rt.stderr
        # Answered by the kernel, not at the program's end: it still computes.
        assert node.poll() is None, "the round trips ended only when the program did"
        assert not select.select([node.stdout], [], [], 0)[0] or \
            "DONE" not in node.stdout.readline(), "the program ended first"
