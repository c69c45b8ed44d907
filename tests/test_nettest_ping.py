"""nettest=ping (kernel/net/nettest.c), the node side of the fabric floor
(bench experiment 9): a node bounces frames off a node booted with
nettest=echo, prints floorping's result lines on its console and ends the
run; or sends them round a ring of nodes booted with `nettest=echo -- NEXT`
(the ring's floor).  The QEMUs are joined by UDP on loopback (QEMU's socket
netdev: each sends to one port and takes what comes to its own, so a ring
needs no bridge), so no namespace or root is needed.  The figures are not judged, only that
every repetition and size gives one, and that bad input ends with a clear
error, not a hang."""
import contextlib
import os
import re
import socket
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNEL = os.path.join(ROOT, "build", "tern.elf")
ECHO_MAC = "52:54:00:12:34:01"
PING_MAC = "52:54:00:12:34:02"


def free_udp_ports(n):
    socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def qemu(log, append, mac, here=None, there=None, netdev=None):
    """A bare node's QEMU command: on UDP ports here (its own) and there, or
    on the -netdev given (a tap: test_nettest_barrier.py)."""
    netdev = netdev or f"socket,id=n0,udp=127.0.0.1:{there},localaddr=127.0.0.1:{here}"
    return ["qemu-system-x86_64", "-nodefaults", "-display", "none", "-no-reboot",
            "-accel", "tcg", "-cpu", "max", "-m", "64M", "-kernel", KERNEL, "-append", append,
            "-serial", f"file:{log}", "-device", "isa-debug-exit,iobase=0xf4,iosize=4",
            "-netdev", netdev, "-device", f"virtio-net-pci,netdev=n0,mac={mac}"]


@contextlib.contextmanager
def echo_node(tmp_path):
    """An echo node on a UDP port; yields (its port, the port it sends to)."""
    echo_port, ping_port = free_udp_ports(2)
    log = tmp_path / "echo.log"
    log.write_text("")
    q = subprocess.Popen(qemu(log, "nettest=echo", ECHO_MAC, echo_port, ping_port),
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        from test_netdev import wait_for_log
        wait_for_log(str(log), r"nettest: echoing", 60, q)
        yield echo_port, ping_port
    finally:
        q.kill()
        q.wait(10)


def ping(tmp_path, ports, words, timeout=120):
    """Boots the ping node with nettest=ping -- WORDS; -> (QEMU's exit, console)."""
    echo_port, ping_port = ports
    log = tmp_path / "ping.log"
    log.write_text("")
    try:
        r = subprocess.run(qemu(log, "nettest=ping exit=qemu -- " + words, PING_MAC, ping_port,
                                echo_port), stdin=subprocess.DEVNULL, capture_output=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"nettest=ping {words} did not end:\n{log.read_text()}")
    return r.returncode, log.read_text()


def results(console):
    return [(m[0], int(m[1]), m[2], float(m[3])) for m in
            re.findall(r"^tern: R (floor-\w+) (\d+) (\w+) (\d+\.\d\d)$", console, re.M)]


def test_ping_measures_round_trips_and_echo_bandwidth(tmp_path):
    with echo_node(tmp_path) as ports:
        rc, out = ping(tmp_path, ports, f"{ECHO_MAC} lat 200 2 0,8,1000")
        assert rc == 1 and "program exited with status 0" in out, (rc, out)
        got = results(out)
        assert [(k, s, u) for k, s, u, _ in got] == \
            [("floor-rtt", s, "us") for s in (0, 0, 8, 8, 1000, 1000)], out
        assert all(v > 0 for *_, v in got), got
        rc, out = ping(tmp_path, ports, f"{ECHO_MAC} bw 500 2 1500,46")
        assert rc == 1, out
        got = results(out)
        assert [(k, s, u) for k, s, u, _ in got] == \
            [("floor-bw", s, "MBps") for s in (1500, 1500, 46, 46)], out
        assert all(v > 0 for *_, v in got), got


RING_MACS = ["52:54:00:12:35:00", "52:54:00:12:35:01", "52:54:00:12:35:02"]


@contextlib.contextmanager
def forwarders(tmp_path, ports, words=None):
    """Nodes 1 and 2 of a 3-node ring on UDP ports[1], ports[2], each
    booted with `nettest=echo -- NEXT` (node 2's next is node 0, whose port
    is ports[0]), or with `nettest=echo -- WORDS[i]` where given."""
    qs = []
    try:
        for i in (1, 2):
            log = tmp_path / f"fwd{i}.log"
            log.write_text("")
            w = words[i - 1] if words else RING_MACS[(i + 1) % 3]
            qs.append((subprocess.Popen(qemu(log, f"nettest=echo exit=qemu -- {w}", RING_MACS[i],
                                             ports[i], ports[(i + 1) % 3]),
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, start_new_session=True), log))
        yield qs
    finally:
        for q, _ in qs:
            q.kill()
            q.wait(10)


def test_frames_go_round_a_ring_of_forwarding_nodes(tmp_path):
    """The ring's floor: node 0 keeps 8 frames going round nodes 1 and 2,
    which forward each to the next, and counts those that come back from
    node 2.  Counting echoes from node 1 (the default) finds none: a
    forwarder does not send back."""
    from test_netdev import wait_for_log
    ports = free_udp_ports(3)
    with forwarders(tmp_path, ports) as qs:
        for q, log in qs:
            wait_for_log(str(log), r"nettest: forwarding EtherType 0x88b5 frames to 52:54:00:12:35:0",
                         60, q)
        log = tmp_path / "ring0.log"

        def node0(words):
            log.write_text("")
            r = subprocess.run(qemu(log, "nettest=ping exit=qemu -- " + words, RING_MACS[0],
                                    ports[0], ports[1]), stdin=subprocess.DEVNULL,
                               capture_output=True, timeout=120)
            return r.returncode, log.read_text()
        rc, out = node0(f"{RING_MACS[1]} bw 300 2 1500 8 {RING_MACS[2]}")
        assert rc == 1 and "program exited with status 0" in out, (rc, out)
        got = results(out)
        assert [(k, s, u) for k, s, u, _ in got] == [("floor-bw", 1500, "MBps")] * 2, out
        assert all(v > 0 for *_, v in got), got
        rc, out = node0(f"{RING_MACS[1]} bw 300 1 1500 8")
        assert rc == (3 << 1) | 1, out
        assert "nettest=ping: 8 of 300 echoes of 1500 bytes lost" in out, out


def test_a_forwarder_refuses_a_bad_next_hop(tmp_path):
    with forwarders(tmp_path, free_udp_ports(3), ["52:54:00:12:35", "a b"]) as qs:
        for q, log in qs:
            q.wait(60)
            assert q.returncode == (3 << 1) | 1, log.read_text()
            assert "usage: nettest=echo [-- NEXT_MAC]" in log.read_text(), log.read_text()


def test_ping_without_an_echo_reports_the_loss(tmp_path):
    """Nobody answers at that MAC: the node says how many echoes it lost."""
    with echo_node(tmp_path) as ports:
        rc, out = ping(tmp_path, ports, "52:54:00:aa:bb:cc lat 10 1 0")
    assert rc == (3 << 1) | 1, out
    assert "nettest=ping: 1 of 10 echoes of 0 bytes lost" in out, out


@pytest.mark.parametrize("words, said", [
    ("", "usage: nettest=ping"),
    ("52:54:00:12:34 lat 10 1 0", "usage: nettest=ping"),
    ("52:54:00:12:34:01 echo 10 1 0", "usage: nettest=ping"),
    ("52:54:00:12:34:01 lat 0 1 0", "usage: nettest=ping"),
    ("52:54:00:12:34:01 lat 10 1", "usage: nettest=ping"),
    ("52:54:00:12:34:01 lat 10 1 0,x", "nettest=ping: bad size 'x'"),
    ("52:54:00:12:34:01 lat 10 1 99999", "nettest=ping: payload 99999 outside 0..1500"),
    ("52:54:00:12:34:01 bw 10 1 20", "nettest=ping: payload 20 outside 46..1500"),
    ("52:54:00:12:34:01 bw 10 1 1500 0", "usage: nettest=ping"),
    ("52:54:00:12:34:01 bw 10 1 1500 65", "usage: nettest=ping"),
    ("52:54:00:12:34:01 bw 10 1 1500 8 52:54:00", "usage: nettest=ping"),
    ("52:54:00:12:34:01 bw 10 1 1500 8 52:54:00:12:34:02 x", "usage: nettest=ping"),
    ("52:54:00:12:34:01 lat 10 1 0 8", "usage: nettest=ping"),
])
def test_ping_refuses_bad_words(tmp_path, words, said):
    # No echo node needed: the words are checked before anything is sent
    # (a lost echo would say so instead).
    rc, out = ping(tmp_path, free_udp_ports(2), words, timeout=60)
    assert rc == (3 << 1) | 1, out
    assert said in out, out
