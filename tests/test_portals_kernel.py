"""Portals in the Tern kernel, reached by programs through the tern_portals
system call (docs/portals.md).  Without a NIC the calls fail cleanly; bad
pointers get error codes; two nodes in QEMU on a bridge inside a network
namespace of the test's own exchange data (ping-pong, 16 MiB put, gets,
atomics), one on virtio-net and one on e1000.

The two-node test needs root (namespace, bridge, taps); skipped otherwise."""
import contextlib
import os
import re
import shutil
import subprocess
import sys

import pytest

from nodes import ROOT, RUN_NODE, run_node, stop_group

PROGS = os.path.join(ROOT, "build", "portals", "kernel")


def prog(name):
    return os.path.join(PROGS, name)


@pytest.mark.parametrize("libc", ["musl", "glibc"])
def test_no_nic_clean_failure(libc):
    r = run_node(prog(f"nonic-{libc}"), timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "PtlInit = 5\n" in r.stdout          # PTL_FAIL
    assert "PtlNIInit = 10\n" in r.stdout        # PTL_NO_INIT
    assert "nonic: ok" in r.stdout


@pytest.mark.parametrize("libc", ["musl", "glibc"])
def test_bad_pointers(libc):
    """A NIC on a hub of its own (no traffic leaves QEMU)."""
    r = run_node(prog(f"badptr-{libc}"), timeout=90, extra=["--nic", "virtio", "--nid", "7"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "badptr: ok" in r.stdout
    assert "nid 7 pid 1" in r.stdout
    print([l for l in r.stdout.splitlines() if l.startswith("cost:")])


def test_waits_halt():
    """4 s of blocking Portals waits cost QEMU far less than 4 s of CPU."""
    before = os.times()
    r = run_node(prog("idlewait-musl"), timeout=60, extra=["--tcg", "--nic", "virtio"])
    after = os.times()
    cpu = (after.children_user - before.children_user) + \
        (after.children_system - before.children_system)
    assert r.returncode == 0, r.stdout + r.stderr
    m = re.search(r"EQPoll 4 after ([\d.]+) s, CTPoll 2 after ([\d.]+) s", r.stdout)
    assert m, r.stdout
    assert 1.99 <= float(m[1]) < 3 and 1.99 <= float(m[2]) < 3, r.stdout
    print(f"QEMU CPU {cpu:.2f} s for the whole run")
    assert cpu < 2.5, f"QEMU used {cpu:.2f} s of CPU over 4 s of waiting"


def _net_usable():
    if os.geteuid() != 0:
        return "needs root"
    for tool in ("ip", "qemu-system-x86_64"):
        if not shutil.which(tool):
            return f"needs {tool}"
    if not os.path.exists("/dev/net/tun"):
        return "needs /dev/net/tun"
    return None


def ip(*args):
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=20)


@contextlib.contextmanager
def bridged_namespace(ntaps, mtu=1500):
    """A namespace holding a bridge and ntaps taps on it, all with this MTU
    (a node on such a tap gets it with run-node --mtu); yields (ns, taps).
    Everything is deleted on the way out, whatever happened."""
    tag = f"{os.getpid() % 100000}"
    ns = f"tern-ptl-{tag}"
    taps = [f"tp{tag}x{i}"[:15] for i in range(ntaps)]
    try:
        ip("netns", "add", ns)
        ip("-n", ns, "link", "set", "lo", "up")
        ip("-n", ns, "link", "add", "br0", "type", "bridge")
        ip("-n", ns, "link", "set", "br0", "mtu", str(mtu))
        for t in ["br0"] + taps:
            subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-qw",
                            f"net.ipv6.conf.{t}.disable_ipv6=1"], capture_output=True)
        for t in taps:
            ip("-n", ns, "tuntap", "add", "dev", t, "mode", "tap")
            ip("-n", ns, "link", "set", t, "mtu", str(mtu))
            subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-qw",
                            f"net.ipv6.conf.{t}.disable_ipv6=1"], capture_output=True)
            ip("-n", ns, "link", "set", t, "master", "br0", "up")
        ip("-n", ns, "link", "set", "br0", "up")
        yield ns, taps
    finally:
        for t in taps:
            subprocess.run(["ip", "-n", ns, "link", "del", t], capture_output=True)
        subprocess.run(["ip", "-n", ns, "link", "del", "br0"], capture_output=True)
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def run_pair(ns, taps, server_args, client_args, timeout, nics=("virtio", "e1000"),
             client_prog="pingpong-musl", server_prog="pingpong-glibc", accel="tcg"):
    """Node 1 (client) and node 2 (server) at once; returns both results."""
    def start(nid, nic, tap, program, args):
        cmd = ["ip", "netns", "exec", ns, sys.executable, RUN_NODE, f"--{accel}", "--mem", "160M",
               "--timeout", str(timeout), "--nic", nic, "--tap", tap, "--nid", str(nid),
               "--kmem", "4M", prog(program), *args]
        return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
    procs = []
    try:
        procs.append(start(2, nics[1], taps[1], server_prog, server_args))
        procs.append(start(1, nics[0], taps[0], client_prog, client_args))
        out = [p.communicate(timeout=timeout + 30) for p in procs]
        return [(p.returncode, o, e) for p, (o, e) in zip(procs, out)]
    finally:
        for p in procs:
            stop_group(p)


@pytest.mark.skipif(_net_usable() is not None, reason=str(_net_usable()))
def test_two_nodes_data_movement():
    with bridged_namespace(2) as (ns, taps):
        (src, sout, serr), (crc, cout, cerr) = run_pair(
            ns, taps, ["server", "1"], ["client", "2", "test"], timeout=120)
    print(cout)
    print(sout)
    assert crc == 0, f"client {crc}:\n{cout}\n{cerr}\nserver {src}:\n{sout}\n{serr}"
    assert src == 0, f"server {src}:\n{sout}\n{serr}"
    assert "ping-pong 0 B .. 1 MiB: ok" in cout
    assert "put 16 MiB: checksum" in cout and "ok (" in cout
    assert cout.count("get ") == 3 and "WRONG" not in cout
    assert "iovec put of 12 pieces: ok" in cout
    assert "atomic SUM: uint64 55 (want 55), double 3.000 (want 3.000): ok" in cout
    assert "vector registers changed in 0 waits" in sout
