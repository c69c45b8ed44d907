"""Tern kernel nodes on a hostile wire: two kernel nodes through the
userspace impairer (loss, duplication, reordering, corruption; tc netem is
missing on our kernels), and malformed frames from a raw socket at a running
kernel node.  The programs are ptlnode (tests/portals/linux/ptlnode.c) built
for Tern and for Linux, so the checks (order, length, placement, content of
every message) are the same as between Linux processes.

Everything runs in a network namespace the test creates; every QEMU and
process it starts is stopped, and the namespace deleted, also on failure.
Needs root."""
import contextlib
import json
import os
import select
import subprocess
import sys
import time

import pytest

from nodes import ROOT, RUN_NODE, stop_group
from test_portals_kernel import _net_usable, bridged_namespace, ip

TERN_NODE = os.path.join(ROOT, "build", "portals", "kernel", "ptlnode-tern")
LINUX_NODE = os.path.join(ROOT, "build", "portals", "linux", "ptlnode")
IMPAIR = os.path.join(ROOT, "build", "portals", "linux", "impair")
INJECT = os.path.join(ROOT, "tests", "portals", "linux", "inject.py")

pytestmark = pytest.mark.skipif(_net_usable() is not None, reason=str(_net_usable()))


@contextlib.contextmanager
def tap_namespace(ntaps):
    """A namespace with ntaps taps that are up and on no bridge (the impairer
    joins them); yields (ns, taps).  Deleted on the way out."""
    tag = f"{os.getpid() % 100000}"
    ns = f"tern-kw-{tag}"
    taps = [f"tk{tag}x{i}"[:15] for i in range(ntaps)]
    try:
        ip("netns", "add", ns)
        ip("-n", ns, "link", "set", "lo", "up")
        for t in taps:
            ip("-n", ns, "tuntap", "add", "dev", t, "mode", "tap")
            subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-qw",
                            f"net.ipv6.conf.{t}.disable_ipv6=1"], capture_output=True)
            ip("-n", ns, "link", "set", t, "up")
        yield ns, taps
    finally:
        for t in taps:
            subprocess.run(["ip", "-n", ns, "link", "del", t], capture_output=True)
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


class Procs:
    """Processes started for one test (QEMU nodes, Linux programs); all of
    them are stopped by close(), whatever state they are in."""

    def __init__(self):
        self.procs = []

    def start(self, cmd, stdin=False):
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                             start_new_session=True, bufsize=1)
        self.procs.append(p)
        return p

    def node(self, ns, tap, nid, nic, args, timeout, accel="tcg", program=TERN_NODE,
             payload_crc=False, mtu=None):
        """ptlnode (or `program`) on a kernel node (QEMU, TCG by default) on
        `tap`; payload_crc: for a wire that damages frames (no FCS check
        drops them), the node checksums payloads too; mtu: the fabric's
        (run-node --mtu), else the node frames at 1500 bytes."""
        return self.start(["ip", "netns", "exec", ns, sys.executable, RUN_NODE, f"--{accel}",
                           "--mem", "160M", "--timeout", str(timeout), "--nic", nic, "--tap", tap,
                           "--nid", str(nid), "--kmem", "4M",
                           *(["--mtu", str(mtu)] if mtu else []),
                           *(["--payload-crc"] if payload_crc else []), program, *args])

    def close(self):
        for p in self.procs:
            stop_group(p)
            for f in (p.stdout, p.stderr, p.stdin):
                if f:
                    f.close()


@pytest.fixture
def procs():
    ps = Procs()
    try:
        yield ps
    finally:
        ps.close()


def read_line(p, prefix, timeout, seen):
    """Reads p's stdout until a line starting with `prefix` (returned);
    every line read is appended to `seen`.  Fails after `timeout` s."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        r, _, _ = select.select([p.stdout], [], [], max(0.0, min(1.0, end - time.monotonic())))
        if not r:
            continue
        line = p.stdout.readline()
        if not line:
            break
        seen.append(line)
        if line.startswith(prefix):
            return line
    raise AssertionError(f"no {prefix!r} line after {timeout} s (or the program ended):\n"
                         + "".join(seen))


def kv(line):
    return {k: int(v) for k, v in (w.split("=") for w in line.split()[1:])}


def test_two_kernel_nodes_over_a_lossy_wire(procs):
    """10 % loss, 5 % duplication, 25 % reordering, 2 % corruption both ways
    between a kernel node on legacy virtio-net (the stream's sender) and one
    on an e1000e (the target, which checks order, length, placement and
    content of every message): the stream arrives whole, and the wire really
    was hostile (retransmissions, duplicates or CRC failures seen)."""
    n, max_size = 20, 1 << 20
    with tap_namespace(2) as (ns, taps):
        impair = procs.start(["ip", "netns", "exec", ns, IMPAIR, taps[0], taps[1],
                              "10", "5", "25", "2", "100", "5"])
        out = []
        read_line(impair, "IMPAIR READY", 10, out)
        target = procs.node(ns, taps[1], 2, "e1000e", ["target", str(n), str(max_size), "150"],
                            170, payload_crc=True)
        tout = []
        pid = kv(read_line(target, "READY", 60, tout))["pid"]
        client = procs.node(ns, taps[0], 1, "virtio-legacy",
                            ["stream", "2", str(pid), str(n), str(max_size), "8"], 160,
                            payload_crc=True)
        cout, cerr = client.communicate(timeout=190)
        tail, terr = target.communicate(timeout=60)
        tout.append(tail)
        impair.terminate()
        iout, _ = impair.communicate(timeout=10)
    tout = "".join(tout)
    print(cout, tout, iout, sep="\n")
    assert client.returncode == 0 and "OK stream" in cout, cout + cerr
    assert target.returncode == 0, tout + terr
    done = next(l for l in tout.splitlines() if l.startswith("STREAM_DONE"))
    assert f"msgs={n}" in done, tout
    client_stats = kv(next(l for l in cout.splitlines() if l.startswith("STATS")))
    target_stats = kv(next(l for l in tout.splitlines() if l.startswith("STATS")))
    wire = kv(next(l for l in iout.splitlines() if l.startswith("IMPAIR fwd")))
    assert wire["lost"] > 0 and wire["dup"] > 0 and wire["corrupt"] > 0, iout
    assert client_stats["tx_retransmits"] > 0
    assert target_stats["rx_dup"] + target_stats["rx_bad_crc"] > 0
    assert client_stats["host_tx_err"] == 0 and target_stats["host_tx_err"] == 0


LINUX_NID = 3


def add_linux_port(ns, dev="lnx0", nid=LINUX_NID, mtu=1500):
    """A veth `dev` (MAC by the nid rule, both ends this MTU: br0's)
    plugged into br0, for Portals programs on Linux; it goes with the
    namespace."""
    ip("-n", ns, "link", "add", dev, "type", "veth", "peer", "name", dev + "p")
    for d in (dev, dev + "p"):
        ip("-n", ns, "link", "set", d, "mtu", str(mtu))
    ip("-n", ns, "link", "set", dev, "address",
       "02:00:00:" + ":".join(f"{(nid >> s) & 0xff:02x}" for s in (16, 8, 0)))
    ip("-n", ns, "link", "set", dev + "p", "master", "br0", "up")
    ip("-n", ns, "link", "set", dev, "up")


def linux_peer(ns, pid, args, timeout=60):
    """Runs ptlnode on Linux (pid `pid`) from lnx0; returns its stdout."""
    env = dict(os.environ, TERN_IFACE="lnx0", TERN_PID=str(pid))
    r = subprocess.run(["ip", "netns", "exec", ns, LINUX_NODE, *args], capture_output=True,
                       text=True, env=env, timeout=timeout)
    assert r.returncode == 0, f"ptlnode {args}: {r.stdout}\n{r.stderr}"
    return r.stdout


DROPS = ("rx_short", "rx_bad_version", "rx_bad_crc", "rx_bad_op", "rx_bad_field",
         "rx_not_for_us")


def test_malformed_frames_at_a_kernel_node(procs):
    """Short frames, bad versions, bad CRCs, lengths and offsets out of
    range, portals beyond the table, unknown ops and random garbage sent
    from a raw socket at a kernel node (tests/portals/linux/inject.py): each
    is dropped and counted (the node has no pid filter, so every one reaches
    the library), and the node keeps working: round trips with data checked
    before and after."""
    nid = 2
    with bridged_namespace(1) as (ns, taps):
        add_linux_port(ns)
        node = procs.node(ns, taps[0], nid, "virtio", ["target", "0", "0", "150"], 170)
        out = []
        pid = kv(read_line(node, "READY", 60, out))["pid"]
        assert "OK rt" in linux_peer(ns, 20, ["rt", str(nid), str(pid)])
        linux_peer(ns, 21, ["ctl", str(nid), str(pid), "stats"])
        before = kv(read_line(node, "STATS", 30, out))
        r = subprocess.run(["ip", "netns", "exec", ns, sys.executable, INJECT, "br0", str(nid),
                            str(pid), "11"], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        inj = json.loads(r.stdout)
        # A round trip after the flood also shows the node got through it.
        assert "OK rt" in linux_peer(ns, 22, ["rt", str(nid), str(pid)])
        linux_peer(ns, 23, ["ctl", str(nid), str(pid), "stats"])
        after = kv(read_line(node, "STATS", 30, out))
        linux_peer(ns, 24, ["ctl", str(nid), str(pid), "quit"])
        tail, err = node.communicate(timeout=60)
    print(inj, "".join(out), tail, sep="\n")
    assert node.returncode == 0, "".join(out) + tail + err
    d = {k: after[k] - before[k] for k in after}
    sent = sum(inj["sent"].values())
    unalloc = inj["sent"]["pt_unallocated"]
    # Every injected frame but the well-formed ones to an unallocated portal
    # lands in exactly one drop counter; those are dropped by the target.
    assert sum(d[k] for k in DROPS) == sent - unalloc, d
    assert d["sr_drop"] == unalloc, d
    assert d["rx_bad_version"] >= inj["sent"]["bad_version"]
    assert d["rx_bad_crc"] >= inj["sent"]["bad_crc"]
    assert d["rx_bad_field"] >= inj["sent"]["pt_beyond_table"] + \
        inj["sent"]["frag_beyond_msg"] + inj["sent"]["msg_too_big"]
    assert d["rx_short"] >= inj["sent"]["short_runt"] + inj["sent"]["short_hdr"] + \
        inj["sent"]["frag_len_mismatch"]
    assert d["host_ring_drops"] == 0, d
