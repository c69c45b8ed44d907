"""The message-path trace (issue 18; kernel/include/msgtrace.h, points in
portals/include/ptl_trace.h) as bench/msgpath.py reads it: two kernel nodes
play 0-byte ping-pong with the trace on; what each prints must be
well-formed, every message's points in path order, nothing recorded while
the trace is off.  Behaviour only: no figure is checked."""
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import msgpath  # noqa: E402
from test_portals_kernel import _net_usable  # noqa: E402


@pytest.mark.skipif(_net_usable() is not None, reason=str(_net_usable()))
@pytest.mark.parametrize("mode,kind", [("wait", "puts"), ("poll", "puts"), ("wait", "ack"),
                                       ("wait", "nx")])
def test_trace_of_a_ping_pong_is_well_formed_and_ordered(mode, kind):
    """kind: bare 0-byte puts; puts asking for ACKs (--ack); NX's csend and
    crecv between two ranks (--nx, bench/msgpath/nxping.c)."""
    n = 50
    cout, sout = msgpath.run_pair(n, mode, "tcg", timeout=300, ack=kind == "ack",
                                  nx=kind == "nx")
    ping, pong = msgpath.parse(cout), msgpath.parse(sout)
    assert (ping["side"], pong["side"]) == ("ping", "pong")
    assert ping["mode"] == pong["mode"] == mode
    assert ping["off_records"] == 0, "points recorded while the trace was off"
    assert ping["lost"] == pong["lost"] == 0
    assert ping["lat"]["n"] == n and ping["lat"]["traced_us"] > 0
    for tr in (ping, pong):
        sends, recvs = msgpath.check(tr)       # raises if any point is out of order
        # Every traced round trip is one send and one receive on each side
        # (the pong side also answers the start message, nxping's the stop).
        assert n <= len(sends) <= n + 2, (tr["side"], len(sends))
        assert n <= len(recvs) <= n + 2, (tr["side"], len(recvs))
        # With ACKs, each side's ACK rides in its answer's header (a busy
        # host may send a few alone, after ack_hold_ns), and is taken in
        # off the answer's path: no event between the answer's checks and
        # its delivery (portals/lib/initiator.c, ptl_op_acked_later).
        rode = tr["stats"]["tx_carried"]
        if kind == "puts":
            assert rode == 0, (tr["side"], rode)
        else:
            assert rode >= n // 2, (tr["side"], rode, len(recvs))
        assert not any(m["carried"] for m in recvs), tr["side"]
        for m in sends:
            assert all(v >= 0 for v in msgpath.intervals(m, msgpath.SEND + msgpath.SEND_AFTER,
                                                         tr["hz"]).values())
        for m in recvs:
            assert all(v >= 0 for v in msgpath.intervals(m, msgpath.RECV, tr["hz"]).values())
            assert m["how"] in ("irq", "wake", "poll")
        # A node's 0-byte put shows no completion, so it does not ask for an
        # immediate ack: the answer carries it (portals/lib/reliable.c,
        # ack_now_wanted).  Before, every message cost a standalone ack
        # frame (acks_sent >= 2n + 100 on each side).  Some may still go out
        # when an answer is later than the 200 us ack delay (a busy host).
        assert tr["stats"]["acks_sent"] < n, (tr["side"], tr["stats"])
    rows, counts = msgpath.breakdown([ping, pong])
    labels = [lab for _, lab, _ in rows]
    assert "send side: call -> doorbell" in labels
    assert "receive side: noticed -> program" in labels
    assert "program has it -> its next send's call" in labels
    assert all(v >= 0 for _, _, v in rows)


@pytest.mark.skipif(_net_usable() is not None, reason=str(_net_usable()))
def test_out_may_name_a_path(tmp_path):
    """--out with a folder in it writes there (the folder made).  It was
    joined onto bench/results/<date>/ and the run died at its end, after
    the measurement, with nothing written."""
    import csv
    import subprocess
    out = tmp_path / "sub" / "m.csv"
    r = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "msgpath.py"), "--no-floor",
                        "--n", "50", "--out", "sub/m.csv"], capture_output=True, text=True,
                       timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = {row[3]: row[4] for row in csv.reader(out.open())}
    assert float(rows["send side: call -> doorbell"]) > 0, rows


def test_out_of_order_points_are_refused():
    """The checker itself: a receive whose match is stamped before its frame
    reached the library is reported, not averaged in."""
    tp = msgpath.TP
    seq = [("SYS_WAIT", 0), ("HALT", 10), ("NET_IRQ", 100), ("NET_WAKE", 110),
           ("RX_FRAME", 120), ("RX_CHECKED", 130), ("RX_DELIVER", 130), ("MATCH", 125),
           ("COPY", 140),
           ("EVENT", 150), ("SYS_WAIT_EXIT", 160), ("APP", 170)]
    lines = ["MSGPATH side=pong mode=wait hz=1000000000 cpus=1", "TRACE cpu=0 total=12 kept=12"]
    prev = 0
    for name, t in seq:
        lines.append(f"P {tp[name]} {t - prev}")
        prev = t
    lines.append("END")
    tr = msgpath.parse("\n".join(lines))
    with pytest.raises(msgpath.TraceError):
        msgpath.check(tr)
    good = "\n".join(lines).replace(f"P {tp['MATCH']} -5", f"P {tp['MATCH']} 5").replace(
        f"P {tp['COPY']} 15", f"P {tp['COPY']} 5")
    sends, recvs = msgpath.check(msgpath.parse(good))
    assert len(recvs) == 1 and recvs[0]["how"] == "irq"
    assert msgpath.intervals(recvs[0], msgpath.RECV, 1e9)["frame noticed -> frame to library"] == 20


def test_malformed_output_is_refused():
    with pytest.raises(msgpath.TraceError):
        msgpath.parse("MSGPATH side=ping mode=wait hz=100 cpus=1\nP 99 5\nEND\n")
    with pytest.raises(msgpath.TraceError):
        msgpath.parse("MSGPATH side=ping mode=wait hz=100 cpus=1\nP 1 5\n")   # no END


@pytest.mark.skipif(_net_usable() is not None, reason=str(_net_usable()))
def test_sigterm_stops_the_nodes_and_removes_the_namespace():
    """A benchmark stopped with SIGTERM (kill, timeout(1)) stops the QEMU
    nodes it started and deletes its namespace (bench/ternbench/unwind.py).
    Before, it died at once and left both behind."""
    import signal
    import subprocess
    import time
    p = subprocess.Popen([sys.executable, os.path.join(ROOT, "bench", "msgpath.py"), "--no-floor",
                          "--n", "4000", "--out", os.devnull],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ns = f"tern-ptl-{p.pid % 100000}"     # bridged_namespace's name for it
    import msgcpu
    pids = []
    try:
        deadline = time.monotonic() + 120
        while len(msgcpu.qemu_pids(ns)) < 2 and time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.2)
        assert len(msgcpu.qemu_pids(ns)) >= 2, "the two nodes' QEMUs never started"
        r = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True)
        pids = [int(x) for x in r.stdout.split()]       # the QEMUs and their run-nodes
        p.send_signal(signal.SIGTERM)
        p.wait(60)
        time.sleep(0.5)
        alive = [x for x in pids if os.path.exists(f"/proc/{x}")]
        left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        assert not alive, f"processes left running in {ns}: {alive}"
        assert ns not in left.split(), f"namespace {ns} left behind"
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        for x in pids:
            try:
                os.kill(x, signal.SIGKILL)
            except ProcessLookupError:
                pass
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def test_msgcpu_counts_a_process_cpu_and_switches():
    """bench/msgcpu.py's reader of /proc: the CPU time and context switches
    of every thread of a process, here one that computes, then sleeps."""
    import subprocess
    import time
    import msgcpu
    p = subprocess.Popen([sys.executable, "-c",
                          "import time\nt=time.time()\nwhile time.time()-t<0.6: pass\n"
                          "for _ in range(50): time.sleep(0.002)\ntime.sleep(30)"])
    try:
        c0, s0 = msgcpu.cpu_and_switches([p.pid])
        time.sleep(1.2)
        c1, s1 = msgcpu.cpu_and_switches([p.pid])
        assert 0.3 <= c1 - c0 <= 1.3, (c0, c1)
        assert s1 - s0 >= 50, (s0, s1)
    finally:
        p.kill()
        p.wait()


def test_ringcpu_takes_the_bandwidth_from_nxbench_and_refuses_a_short_job():
    import ringcpu
    out = "R nx-ring4 8388608 MBps 200.0\nR nx-ring4 8388608 MBps 300.0\nE done\n"
    assert ringcpu.ring_mbps(out, 2) == 250.0
    with pytest.raises(RuntimeError, match="printed 2 results, not 3"):
        ringcpu.ring_mbps(out, 3)


@pytest.mark.skipif(_net_usable() is not None, reason=str(_net_usable()))
def test_the_floor_of_the_same_run_is_measured(tmp_path):
    """bench/msgpath.py prints the fabric floor beside its table (an echo
    node, bench/ternbench/node_exps.floor).  Before, that step died with an
    AttributeError once floor() began to look at the run's node counts, and
    msgpath.py without --no-floor printed nothing."""
    v = msgpath.floor_us("tcg", str(tmp_path), 1)
    assert v is not None and 1 < v < 100000, v


def test_the_trace_starts_on_a_four_cpu_node_with_its_rings_set_aside():
    """The trace keeps a 256 KiB ring per CPU (up to 4).  Taken from the
    kernel's small page pool, only two CPUs' rings fitted: on a 4-CPU node a
    trace could not start (PTL_NO_SPACE), and a kernel image 20 KiB larger
    left too little for one beside msgpath's program.  msgtrace=K (run-node
    --msgtrace K) sets the rings aside at boot, off the program's region, and
    the kernel says so; a count above 4 is refused with a clear message."""
    from nodes import run_node
    prog = os.path.join(ROOT, "build", "portals", "kernel", "tracestart-musl")
    r = run_node(prog, mem="160M", timeout=180, extra=["--tcg", "--smp", "4", "--msgtrace", "4",
                                                       "-v"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "trace start rc=0" in r.stdout, r.stdout + r.stderr
    assert "msgtrace: rings of 4 CPUs set aside (1024 KiB" in r.stderr, r.stderr
    r = run_node(prog, mem="160M", timeout=120, extra=["--tcg", "--msgtrace", "5"])
    assert r.returncode != 0
    assert "bad value '5' for msgtrace= (0 .. 4 CPUs)" in r.stdout + r.stderr, r.stdout + r.stderr
