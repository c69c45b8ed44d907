"""NIC drivers (kernel/net/): a node booted with nettest=echo sends back every
frame of EtherType 0x88B5 addressed to it.  Each test runs QEMU inside a
network namespace of its own, on a tap device there, and talks to the node
through an AF_PACKET socket on that tap: no traffic leaves the namespace.

Needs root (namespaces, taps, packet sockets); skipped otherwise."""
import contextlib
import ctypes
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNEL = os.path.join(ROOT, "build", "tern.elf")
HELLO = os.path.join(ROOT, "build", "programs", "hello-musl")
ETHERTYPE = 0x88B5
PACKET_OUTGOING = 4
SOL_PACKET = 263
PACKET_IGNORE_OUTGOING = 23
SO_RCVBUFFORCE = 33
CLONE_NEWNET = 0x40000000
ETH_HLEN = 14
# QEMU device -> the driver's name for it in the log, and how its interrupt
# reaches the node.
MODELS = {
    "virtio-net-pci": ("virtio-net", "MSI-X"),                  # transitional: modern used
    "virtio-net-pci,vectors=0": ("virtio-net", "IOAPIC pin"),   # modern without MSI-X
    "virtio-net-pci,disable-modern=on": ("virtio-net (legacy)", "IOAPIC pin"),
    "virtio-net-pci,disable-legacy=on": ("virtio-net", "MSI-X"),
    # Transmit without indirect descriptors: each slot owns a run of the ring.
    "virtio-net-pci,disable-modern=on,indirect_desc=off": ("virtio-net (legacy)", "IOAPIC pin"),
    "e1000": ("Intel 82540EM", "IOAPIC pin"),
    "e1000e": ("Intel 82574L", "MSI"),
}

_libc = ctypes.CDLL(None, use_errno=True)
_seq = iter(range(1000))


def _usable():
    if os.geteuid() != 0:
        return "needs root"
    for tool in ("ip", "qemu-system-x86_64"):
        if not shutil.which(tool):
            return f"needs {tool}"
    if not os.path.exists("/dev/net/tun"):
        return "needs /dev/net/tun"
    return None


pytestmark = pytest.mark.skipif(_usable() is not None, reason=str(_usable()))


def ip(*args):
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=20)


@contextlib.contextmanager
def in_netns(name):
    """Runs the body with this thread in namespace `name`: sockets made there
    stay in it after the thread returns to its own namespace."""
    home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    target = os.open(f"/run/netns/{name}", os.O_RDONLY)
    try:
        if _libc.setns(target, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "setns into " + name)
        try:
            yield
        finally:
            if _libc.setns(home, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns back home")
    finally:
        os.close(target)
        os.close(home)


def wait_for_log(path, pattern, timeout, proc=None, until=None):
    """Waits until the console log matches `pattern` (and, with `until`, its
    last match m satisfies until(m)); returns the last match: nettest's
    counters are logged again as they change, and the first line can come
    before any interrupt (a slow host's boot).  At the time-out the last
    match is returned as it is, for the caller's assertion to show."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        with open(path, errors="replace") as f:
            found = list(re.finditer(pattern, f.read()))
        last = found[-1] if found else None
        if last and (until is None or until(last)):
            return last
        if proc is not None and proc.poll() is not None:
            break
        time.sleep(0.05)
    if last:
        return last
    with open(path, errors="replace") as f:
        log = f.read()
    raise AssertionError(f"no /{pattern}/ in the console log after {timeout} s:\n{log}")


def test_wait_for_log_gives_the_last_line_that_matches(tmp_path):
    """nettest logs its counters again as they change: the first line (before
    any interrupt, on a slow host) is not the node's state.  The first match
    failed test_echo under two test workers."""
    log = tmp_path / "log"
    log.write_text("nettest: echoed 63, interrupts 0\nnettest: echoed 582, interrupts 24\n")
    m = wait_for_log(log, r"nettest: echoed (\d+), interrupts (\d+)", 1)
    assert m.groups() == ("582", "24")
    m = wait_for_log(log, r"echoed (\d+)", 0.3, until=lambda m: int(m.group(1)) > 600)
    assert m.group(1) == "582"     # not there in time: the last, for the caller's assert


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Node:
    """One QEMU node with nettest=echo on a tap in a fresh namespace."""

    def __init__(self, model, qemu_args=(), tap_mtu=9000, append=""):
        self.model = model
        self.append = append
        self.qemu_args = list(qemu_args)
        self.tap_mtu = tap_mtu
        n = next(_seq)
        self.ns = f"tern-t-{os.getpid()}-{n}"
        self.tap = f"tt{os.getpid() % 100000}x{n}"[:15]
        self.mac = bytes([0x52, 0x54, 0x00]) + random.randbytes(3)
        self.dir = tempfile.mkdtemp(prefix="tern-netdev-")
        self.log = os.path.join(self.dir, "console.log")
        self.qemu = None
        self.sock = None

    def start(self):
        ip("netns", "add", self.ns)
        ip("-n", self.ns, "link", "set", "lo", "up")
        ip("-n", self.ns, "tuntap", "add", "dev", self.tap, "mode", "tap")
        # The host's IPv6 autoconfiguration would add its own frames.
        subprocess.run(["ip", "netns", "exec", self.ns, "sysctl", "-qw",
                        f"net.ipv6.conf.{self.tap}.disable_ipv6=1"], capture_output=True)
        # Room to send frames longer than the node's MTU.
        ip("-n", self.ns, "link", "set", self.tap, "mtu", str(self.tap_mtu), "up")
        open(self.log, "w").close()
        mac = ":".join(f"{b:02x}" for b in self.mac)
        cmd = ["ip", "netns", "exec", self.ns, "qemu-system-x86_64",
               "-nodefaults", "-display", "none", "-no-reboot", "-accel", "tcg", "-cpu", "max",
               "-m", "64M", "-kernel", KERNEL, "-append", f"nettest=echo {self.append}".strip(),
               "-serial", f"file:{self.log}",
               "-netdev", f"tap,id=n0,ifname={self.tap},script=no,downscript=no",
               "-device", f"{self.model},netdev=n0,mac={mac}", *self.qemu_args]
        self.qemu = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, start_new_session=True)
        with in_netns(self.ns):
            self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETHERTYPE))
            self.sock.bind((self.tap, ETHERTYPE))
        # Our own frames would crowd the echoes out of the receive buffer.
        self.sock.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
        self.sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 8 << 20)
        self.tap_mac = self.sock.getsockname()[4]
        try:
            wait_for_log(self.log, r"nettest: echoing", 60, self.qemu)
        except AssertionError as e:
            err = ""
            if self.qemu.poll() is not None:
                err = self.qemu.stderr.read().decode(errors="replace")
            raise AssertionError(f"{e}\nQEMU: {err}") from None

    def stop(self):
        """Leaves nothing behind, whatever state start() reached."""
        if self.sock is not None:
            self.sock.close()
        if self.qemu is not None and self.qemu.poll() is None:
            self.qemu.terminate()
            try:
                self.qemu.wait(5)
            except subprocess.TimeoutExpired:
                self.qemu.kill()
                self.qemu.wait(5)
        if self.qemu is not None and self.qemu.stderr:
            self.qemu.stderr.close()
        subprocess.run(["ip", "-n", self.ns, "link", "del", self.tap], capture_output=True)
        subprocess.run(["ip", "netns", "del", self.ns], capture_output=True)
        shutil.rmtree(self.dir, ignore_errors=True)

    def console(self):
        with open(self.log, errors="replace") as f:
            return f.read()

    def frame(self, size, dst=None, ethertype=ETHERTYPE, seq=0):
        payload = seq.to_bytes(4, "big") + random.randbytes(max(0, size - ETH_HLEN - 4))
        return ((dst or self.mac) + self.tap_mac + ethertype.to_bytes(2, "big") +
                payload)[:size]

    def send(self, frame):
        self.sock.send(frame)

    def receive(self, timeout):
        """The next frame the node sent (ours looped back are skipped), or None."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self.sock.settimeout(left)
            try:
                data, addr = self.sock.recvfrom(65536)
            except socket.timeout:
                return None
            if addr[2] != PACKET_OUTGOING:
                return data

    def drain(self, quiet=0.3):
        while self.receive(quiet) is not None:
            pass

    def echo_check(self, frame, timeout=10):
        """Sends `frame`, waits for its echo, checks it byte for byte.
        Returns the round-trip time in seconds."""
        key = frame[ETH_HLEN:ETH_HLEN + 4]
        t0 = time.perf_counter()
        self.send(frame)
        while True:
            got = self.receive(max(0.0, timeout - (time.perf_counter() - t0)))
            assert got is not None, f"no echo of a {len(frame)}-byte frame ({self.model})"
            if got[ETH_HLEN:ETH_HLEN + len(key)] == key:
                break      # anything else is a late echo of an earlier frame
        rtt = time.perf_counter() - t0
        assert got[0:6] == self.tap_mac and got[6:12] == self.mac, "addresses not swapped"
        assert got[12:14] == frame[12:14]
        # A NIC may pad a short frame to the Ethernet minimum on its way in.
        n = len(frame)
        assert len(got) == n or (n < 60 and len(got) == 60), (len(got), n)
        assert got[ETH_HLEN:n] == frame[ETH_HLEN:], f"payload differs ({n} bytes)"
        return rtt


@pytest.fixture
def node(request):
    nodes = []

    def make(model, qemu_args=(), tap_mtu=9000, append=""):
        nd = Node(model, qemu_args, tap_mtu, append)
        nodes.append(nd)
        nd.start()
        return nd
    try:
        yield make
    finally:
        for nd in nodes:
            nd.stop()
        for nd in nodes:
            assert nd.qemu is None or nd.qemu.poll() is not None, "QEMU still running"
            listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
            assert nd.ns not in listed.split(), f"namespace {nd.ns} left behind"
            assert not os.path.exists(f"/sys/class/net/{nd.tap}"), f"tap {nd.tap} left behind"


def exchange(nd, count, rtts=None):
    sizes = [60, 61, 64, 128, 1513, 1514] + [random.randint(60, 1514) for _ in range(count - 6)]
    for i, size in enumerate(sizes):
        rtt = nd.echo_check(nd.frame(size, seq=1000000 + i + random.randint(0, 1 << 30)))
        if rtts is not None:
            rtts.setdefault(size, []).append(rtt)


def report_rtts(model, rtts):
    buckets = [(60, 128), (129, 512), (513, 1024), (1025, 1514)]
    parts = []
    for lo, hi in buckets:
        v = sorted(t for s, ts in rtts.items() if lo <= s <= hi for t in ts)
        if v:
            parts.append(f"{lo}-{hi} B: median {v[len(v) // 2] * 1e6:.0f} us (n={len(v)})")
    print(f"\n[{model}] echo round trip: " + "; ".join(parts))


@pytest.mark.parametrize("model", MODELS)
def test_echo(node, model):
    nd = node(model)
    mac = ":".join(f"{b:02x}" for b in nd.mac)
    m = wait_for_log(nd.log, r"net: (.*) at .*MAC ([0-9a-f:]+), link (\w+), MTU (\d+) "
                             r"\([^)]*\), interrupt ([^,]+),", 1)
    name, irq = MODELS[model]
    assert m.group(1) == name and m.group(5).startswith(irq), m.group(0)
    assert m.group(2) == mac and m.group(3) == "up" and m.group(4) == "1500", m.group(0)

    rtts = {}
    exchange(nd, 200, rtts)
    report_rtts(model, rtts)

    # Bad input: runts (the socket cannot send below the 14-byte header),
    # frames longer than the MTU, other EtherTypes, other destinations.
    bad = []
    for size in (14, 15, 20, 59):
        bad.append(("runt", nd.frame(size), True))
    for size in (1515, 1518, 1522, 1600, 2048, 4000, 9014):
        bad.append(("long", nd.frame(size), False))
    for et in (0x0800, 0x86DD, 0x88B6, 0x0000, 0xFFFF):
        bad.append(("ethertype", nd.frame(300, ethertype=et), False))
    for dst in (b"\xff" * 6, b"\x01\x00\x5e\x00\x00\x01", b"\x02\x00\x00\x00\x00\x01"):
        bad.append(("dst", nd.frame(300, dst=dst), False))
    bad.append(("garbage", random.randbytes(700), False))
    for _ in range(3):
        for kind, frame, echoed in bad:
            if kind == "runt":
                nd.echo_check(frame)
            else:
                nd.send(frame)
    # None of the others may come back, and the node must carry on.
    got = nd.receive(1.0)
    assert got is None, f"a frame that should have been dropped came back: {got[:20].hex()}"
    exchange(nd, 50)

    # A burst larger than the receive ring, then the stream again.
    burst = [nd.frame(random.randint(60, 1514), seq=i) for i in range(300)]
    for f in burst:
        nd.send(f)
    echoed = 0
    for _ in range(len(burst) + 1):
        if nd.receive(1.0) is None:
            break
        echoed += 1
    # Nothing is lost on the way: the tap queues what the node cannot take yet.
    assert echoed == len(burst)
    print(f"[{model}] burst of {len(burst)} frames: {echoed} echoed")
    exchange(nd, 20)

    # Idle: the node halts between frames.
    time.sleep(0.5)
    c0, t0 = cpu_seconds(nd.qemu.pid), time.monotonic()
    time.sleep(2.0)
    idle = (cpu_seconds(nd.qemu.pid) - c0) / (time.monotonic() - t0)
    print(f"[{model}] idle node: QEMU uses {idle * 100:.1f}% of a CPU")

    m = wait_for_log(nd.log, r"nettest: echoed (\d+), ignored (\d+), failed (\d+).* "
                             r"interrupts (\d+)", 5, until=lambda m: int(m.group(4)) > 0)
    assert int(m.group(3)) == 0, m.group(0)
    # Woken by the NIC's interrupt, not by a poll that gave up on it.
    assert int(m.group(4)) > 0 and "polling" not in nd.console(), nd.console()
    assert "panic" not in nd.console()


# Issue 18: a virtio device stating an MTU (QEMU host_mtu=), or an e1000 told
# the fabric's on the kernel command line (it cannot state one; the 82574L
# takes at most 9000), with the tap one byte above it (its own maximum,
# 65521) so that a frame too long can be sent.
LARGE = {"virtio-net-pci,host_mtu=65520": ("virtio-net", 65520, "", "from the device"),
         "virtio-net-pci,disable-modern=on,host_mtu=9000":
             ("virtio-net (legacy)", 9000, "", "from the device"),
         "e1000": ("Intel 82540EM", 16110, "mtu=16110", "mtu= on the command line"),
         "e1000e": ("Intel 82574L", 9000, "mtu=16000", "mtu= on the command line")}


@pytest.mark.parametrize("model", LARGE)
def test_echo_in_large_frames(node, model):
    """The node takes the MTU the device states or the command line gives
    (boot log), and frames up to it come back whole, also in a burst larger
    than the receive ring; longer ones are not echoed."""
    name, mtu, append, source = LARGE[model]
    nd = node(model, tap_mtu=mtu + 1 if append == "" else 16200, append=append)
    m = wait_for_log(nd.log, r"net: (.*) at .*, MTU (\d+) \(([^)]*)\)", 1)
    assert (m.group(1), m.group(2), m.group(3)) == (name, str(mtu), source), m.group(0)
    top = ETH_HLEN + mtu
    sizes = [60, 1514, 1515, 9014, top - 1, top] + [random.randint(60, top) for _ in range(30)]
    for i, size in enumerate(sizes):
        nd.echo_check(nd.frame(size, seq=2000000 + i))
    nd.send(nd.frame(top + 1))
    assert nd.receive(1.0) is None, "a frame longer than the MTU came back"
    burst = [nd.frame(top, seq=i) for i in range(64)]
    for f in burst:
        nd.send(f)
    echoed = 0
    for _ in range(len(burst) + 1):
        got = nd.receive(2.0)
        if got is None:
            break
        assert len(got) == top and got[ETH_HLEN:] == burst[echoed][ETH_HLEN:], echoed
        echoed += 1
    assert echoed == len(burst)
    m = wait_for_log(nd.log, r"nettest: echoed (\d+), ignored (\d+), failed (\d+)", 5)
    assert int(m.group(3)) == 0, m.group(0)


def test_no_nic_nettest_reports(tmp_path):
    """nettest=echo on a node without a NIC ends with a load error, not a hang."""
    log = tmp_path / "console.log"
    r = subprocess.run(["qemu-system-x86_64", "-nodefaults", "-display", "none", "-no-reboot",
                        "-accel", "tcg", "-m", "64M", "-kernel", KERNEL,
                        "-append", "nettest=echo exit=qemu", "-serial", f"file:{log}",
                        "-device", "isa-debug-exit,iobase=0xf4,iosize=4"],
                       capture_output=True, timeout=60)
    assert "nettest: no network device" in log.read_text(), log.read_text()
    assert r.returncode == (3 << 1) | 1


@pytest.mark.parametrize("model", ["virtio-net-pci", "e1000"])
def test_program_runs_with_nic(tmp_path, model):
    """A NIC present does not disturb an ordinary program run."""
    log = tmp_path / "console.log"
    r = subprocess.run(["qemu-system-x86_64", "-nodefaults", "-display", "none", "-no-reboot",
                        "-accel", "tcg", "-cpu", "max", "-m", "64M", "-kernel", KERNEL,
                        "-append", "exit=qemu", "-initrd", f"{HELLO} hi",
                        "-serial", f"file:{log}",
                        "-device", "isa-debug-exit,iobase=0xf4,iosize=4",
                        "-netdev", "hubport,id=n0,hubid=0", "-device", f"{model},netdev=n0"],
                       capture_output=True, timeout=60)
    text = log.read_text()
    assert "net: " in text and "MAC" in text, text
    assert "program exited with status 0" in text, text
    assert r.returncode == 1, text


@pytest.mark.parametrize("model", ["virtio-net-pci", "e1000", "e1000e"])
def test_echo_q35(node, model):
    """The same drivers on the Q35 machine (PCIe root, ICH9 interrupt routing)."""
    nd = node(model, ["-M", "q35"])
    wait_for_log(nd.log, r"net: .* MAC", 1)
    exchange(nd, 60)
    time.sleep(1.2)
    m = wait_for_log(nd.log, r"nettest: echoed (\d+), .* interrupts (\d+)", 5,
                     until=lambda m: int(m.group(2)) > 0)
    assert int(m.group(2)) > 0 and "polling" not in nd.console(), nd.console()
