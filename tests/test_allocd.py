"""The allocator daemon over Portals: nodes register, launchers allocate and
release with MUNGE credentials from the fabric's own munged, silent nodes go
down, state survives a restart.  Hosts are veth ends on a bridge inside a namespace of the test's
own; the "nodes" here are Linux processes registering the way a booting
node does."""
import os
import re
import signal
import sys
import subprocess
import time
import uuid

import pytest

from nodes import ROOT

sys.path.insert(0, os.path.join(ROOT, "qemu"))
from ternlib import munge  # noqa: E402

BIN = os.path.join(ROOT, "build", "bin")
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (netns, AF_PACKET)")


class Fabric:
    def __init__(self, tmp_path, hosts=4):
        self.ns = "tern-a" + uuid.uuid4().hex[:8]
        self.tmp = tmp_path
        self.procs = []
        self.sh("ip", "netns", "add", self.ns, netns=False)
        self.sh("ip", "link", "set", "lo", "up")
        self.sh("ip", "link", "add", "br0", "type", "bridge")
        self.sh("ip", "link", "set", "br0", "up")
        for i in range(hosts):
            self.sh("ip", "link", "add", f"n{i}", "type", "veth", "peer", "name", f"n{i}p")
            self.sh("ip", "link", "set", f"n{i}", "address", f"02:00:00:00:00:{i:02x}")
            self.sh("ip", "link", "set", f"n{i}p", "master", "br0", "up")
            self.sh("ip", "link", "set", f"n{i}", "up")
        self.procs.append(munge.start(str(tmp_path), private=True))
        self.munge_socket = munge.paths(str(tmp_path))["socket"]
        self.db = tmp_path / "nodes"

    def sh(self, *cmd, netns=True):
        pre = ["ip", "netns", "exec", self.ns] if netns else []
        subprocess.run(pre + list(cmd), check=True, capture_output=True)

    def env(self, host, munge_socket=None):
        return dict(os.environ, TERN_IFACE=f"n{host}",
                    TERN_MUNGE_SOCKET=munge_socket or self.munge_socket)

    def start_allocd(self, *args):
        log = open(self.tmp / "allocd.log", "a")
        p = subprocess.Popen(["ip", "netns", "exec", self.ns, f"{BIN}/allocd", "--db",
                              str(self.db), "--ping-period", "1", *args], env=self.env(0),
                             stderr=log, stdout=log)
        self.procs.append(p)
        time.sleep(0.5)
        return p

    def svc(self, host, *args, munge_socket=None, timeout=30):
        return subprocess.run(["ip", "netns", "exec", self.ns, f"{BIN}/tern-svc", *args],
                              env=self.env(host, munge_socket), capture_output=True, text=True,
                              timeout=timeout)

    def status(self, host=1):
        r = self.svc(host, "status")
        assert r.returncode == 0, r.stderr
        return {int(l.split()[0]): l.split()[2:] for l in r.stdout.splitlines()[1:]}

    def close(self):
        for p in self.procs:
            if isinstance(p, int):          # munged, in a session of its own
                try:
                    os.kill(p, signal.SIGTERM)
                except ProcessLookupError:
                    pass
                continue
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        subprocess.run(["ip", "netns", "delete", self.ns], capture_output=True)


@pytest.fixture
def fabric(tmp_path):
    f = Fabric(tmp_path)
    yield f
    f.close()
    assert f.ns not in subprocess.run(["ip", "netns", "list"], capture_output=True,
                                      text=True).stdout


def test_register_allocate_release(fabric):
    fabric.start_allocd()
    for i in (1, 2, 3):
        r = fabric.svc(i, "register", f"02:00:00:00:00:{i:02x}", str(i))
        assert r.stdout == f"registered as nid {i}\n", r.stderr
    r = fabric.svc(1, "alloc", "7", "2")
    assert r.returncode == 0 and r.stdout.split() == ["1", "2"], r.stderr
    r = fabric.svc(1, "alloc", "8", "2")
    assert r.returncode == 1
    assert "2 nodes requested, 1 free" in r.stderr
    r = fabric.svc(2, "alloc", "8", "-list", "3")
    assert r.stdout.split() == ["3"]
    assert fabric.svc(1, "release", "7").stdout == "2 nodes freed\n"
    assert fabric.status()[1] == ["free", "-", "-"]   # state, job, cores (not reported)


def test_requests_without_a_good_credential_are_refused(fabric):
    """No munged: no request.  A credential of another cluster's munged
    (another key) is refused by the allocator."""
    fabric.start_allocd()
    r = fabric.svc(1, "status", munge_socket=str(fabric.tmp / "no-such-socket"))
    assert r.returncode == 2 and "no MUNGE credential" in r.stderr, r.stderr
    other = fabric.tmp / "other"
    other.mkdir()
    fabric.procs.append(munge.start(str(other), private=True))
    r = fabric.svc(1, "alloc", "1", "1", munge_socket=munge.paths(str(other))["socket"])
    assert r.returncode == 1 and "not authorised: MUNGE credential refused" in r.stderr, r.stderr


def test_a_node_registers_only_the_mac_its_frames_come_from(fabric):
    fabric.start_allocd()
    r = fabric.svc(2, "register", "02:00:00:00:00:05", "2")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "registers MAC 02:00:00:00:00:05 but its frames come from 02:00:00:00:00:02" in r.stderr
    assert fabric.status() == {}


def test_a_node_that_claims_another_nid_is_refused(fabric):
    fabric.start_allocd()
    r = fabric.svc(2, "register", "02:00:00:00:00:02", "3")
    assert r.returncode == 1 and "claims nid 3 but sends from nid 2" in r.stderr


def test_silent_node_goes_down_and_comes_back(fabric):
    fabric.start_allocd()
    # node 1 stays up answering pings; node 2 registers and goes away
    stay = subprocess.Popen(["ip", "netns", "exec", fabric.ns, f"{BIN}/tern-svc", "register",
                             "02:00:00:00:00:01", "1", "--stay", "14"], env=fabric.env(1),
                            stdout=subprocess.PIPE, text=True)
    fabric.procs.append(stay)
    assert fabric.svc(2, "register", "02:00:00:00:00:02", "2").returncode == 0
    deadline = time.monotonic() + 12
    while time.monotonic() < deadline and fabric.status(3)[2][0] != "down":
        time.sleep(0.5)
    st = fabric.status(3)
    assert st[2][0] == "down", st
    assert st[1][0] == "free", st          # answering: not marked down
    assert fabric.svc(2, "register", "02:00:00:00:00:02", "2").returncode == 0
    assert fabric.status(3)[2][0] == "free"


def test_a_node_that_never_gets_clean_goes_down_until_it_is(fabric):
    """A node that still says it holds a job after it was given back, or that
    it is cleaning up after one (a clean-up that never ends: the node would
    take every job it is given and run none), goes down after --clean-limit,
    and comes back once it holds nothing.  A node that says it holds nothing
    stays free."""
    fabric.start_allocd("--clean-limit", "2")

    def node(nid, *say):
        p = subprocess.Popen(["ip", "netns", "exec", fabric.ns, f"{BIN}/tern-svc", "register",
                              f"02:00:00:00:00:{nid:02x}", str(nid), "--stay", "16", *say],
                             env=fabric.env(nid), stdout=subprocess.PIPE, text=True)
        fabric.procs.append(p)
        assert p.stdout.readline() == f"registered as nid {nid}\n"
    node(1, "--holds", "9", "8")
    node(2, "--ending", "11", "8")
    node(3)
    t0 = time.monotonic()
    states = lambda: [fabric.status(0)[n][0] for n in (1, 2, 3)]  # noqa: E731
    while time.monotonic() < t0 + 7 and states()[:2] != ["down", "down"]:
        time.sleep(0.3)
    assert states() == ["down", "down", "free"], fabric.status(0)
    log = (fabric.tmp / "allocd.log").read_text()
    for nid, job in ((1, 9), (2, 11)):
        assert re.search(rf"node {nid} has held job {job} for \d+ s since it was given back: "
                         r"down until it is clean", log), log
    r = fabric.svc(0, "alloc", "5", "2")        # the stuck nodes are not handed out
    assert r.returncode == 1 and "2 nodes requested, 1 free" in r.stderr, r.stdout + r.stderr
    while time.monotonic() < t0 + 14 and states() != ["free"] * 3:
        time.sleep(0.3)
    assert states() == ["free"] * 3, fabric.status(0)
    log = (fabric.tmp / "allocd.log").read_text()
    assert "node 1 answers again: free" in log and "node 2 answers again: free" in log, log


def test_bad_periods_are_refused(fabric):
    for opt, val in (("--clean-limit", "abc"), ("--clean-limit", "0"), ("--ping-period", "-1"),
                     ("--ping-period", "1s")):
        r = subprocess.run(["ip", "netns", "exec", fabric.ns, f"{BIN}/allocd", "--db",
                            str(fabric.db), opt, val], env=fabric.env(0), capture_output=True,
                           text=True, timeout=10)
        assert r.returncode == 2, (opt, val, r.stderr)
        assert f"allocd: {opt} {val}: a number of seconds above 0 is needed" in r.stderr


def test_state_survives_an_allocator_restart(fabric):
    p = fabric.start_allocd()
    for i in (1, 2):
        fabric.svc(i, "register", f"02:00:00:00:00:{i:02x}", str(i))
    assert fabric.svc(1, "alloc", "5", "1").stdout.split() == ["1"]
    p.send_signal(signal.SIGTERM)
    p.wait(5)
    fabric.start_allocd()
    st = fabric.status(3)
    assert st[1][:2] == ["allocated", "5"]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_stops_the_allocator_at_once_with_its_state_saved(fabric, sig):
    """allocd waits for requests in PtlEQPoll up to its next ping (here a
    minute away).  It used to see SIGTERM only when that wait ended: every
    `qemu/cluster down` waited ~2 s for it, and with a long --ping-period
    the allocator ignored the signal for as long.  Now it stops at once and
    saves its state first."""
    p = fabric.start_allocd("--ping-period", "60")
    for i in (1, 2):
        assert fabric.svc(i, "register", f"02:00:00:00:00:{i:02x}", str(i)).returncode == 0
    time.sleep(0.5)                    # in its wait, a minute from its next ping
    p.send_signal(sig)
    try:
        p.wait(20)
    except subprocess.TimeoutExpired:
        pytest.fail(f"allocd still running 20 s after signal {sig}")
    assert p.returncode == 0
    assert "stopped" in (fabric.tmp / "allocd.log").read_text()
    fabric.start_allocd()
    assert sorted(fabric.status(3)) == [1, 2]


def test_unreachable_allocator_is_reported(fabric):
    r = fabric.svc(1, "alloc", "5", "1", timeout=60)
    assert r.returncode == 2
    assert "allocator (nid 0) is unreachable" in r.stderr
