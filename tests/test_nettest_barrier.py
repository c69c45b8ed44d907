"""nettest=barrier (kernel/net/nettest_barrier.c), the barrier's floor of
bench experiment 9: N nodes on one bridge, each booted with its rank and
every node's MAC, run gsync's dissemination barrier with raw frames; node 0
prints one result line a repetition and every node ends the run cleanly.
A node that stops sending is named by the ones waiting for it, and bad
words are refused before anything is sent.  The figures are not judged."""
import os
import re
import subprocess

import pytest

from test_nettest_ping import free_udp_ports, qemu

MACS = [f"52:54:00:12:36:{i:02x}" for i in range(4)]


def bridged_nodes(tmp_path, words):
    """One node a word list, each booted with `nettest=barrier exit=qemu --
    WORDS[i]` and MAC i on a tap of a bridge of its own namespace; waits
    for all; -> [(QEMU's exit, console)].  Every QEMU is stopped, and the
    namespace deleted, on the way out."""
    from test_portals_kernel import bridged_namespace
    with bridged_namespace(len(words)) as (ns, taps):
        qs, logs = [], []
        try:
            for i, w in enumerate(words):
                log = tmp_path / f"bar{i}.log"
                log.write_text("")
                logs.append(log)
                tap = f"tap,id=n0,ifname={taps[i]},script=no,downscript=no"
                qs.append(subprocess.Popen(
                    ["ip", "netns", "exec", ns,
                     *qemu(log, f"nettest=barrier exit=qemu -- {w}", MACS[i], netdev=tap)],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL, start_new_session=True))
            for q, log in zip(qs, logs):
                try:
                    q.wait(180)
                except subprocess.TimeoutExpired:
                    pytest.fail(f"nettest=barrier did not end:\n{log.read_text()}")
            return [(q.returncode, log.read_text()) for q, log in zip(qs, logs)]
        finally:
            for q in qs:
                if q.poll() is None:
                    q.kill()
                    q.wait(10)


def results(console, kind="barrier-floor"):
    return [(int(m[0]), float(m[1])) for m in
            re.findall(rf"^tern: R {kind} (\d+) us (\d+\.\d\d)$", console, re.M)]


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (netns, taps)")


@needs_root
@pytest.mark.parametrize("n,ack", [(3, ""), (4, ""), (4, "ack ")])
def test_nodes_run_the_barrier_and_node_0_reports_each_repetition(tmp_path, n, ack):
    """3 nodes: rounds to the next and the one after (not a power of two);
    4: the same two rounds, every node's partners paired; and with every
    round's frame answered by one back (ack)."""
    macs = " ".join(MACS[:n])
    got = bridged_nodes(tmp_path, [f"{ack}{i} 50 2 {macs}" for i in range(n)])
    for i, (rc, out) in enumerate(got):
        assert rc == 1 and "program exited with status 0" in out, (i, rc, out)
        assert f"nettest: barrier, node {i} of {n}, 2 rounds" in out, out
        m = re.search(r"nettest: barrier done, 150 barriers, (\d+) acknowledgements taken", out)
        assert m, out
        # Each of its 300 round frames answered; the last few may come after its end.
        assert (290 <= int(m[1]) <= 300) if ack else int(m[1]) == 0, out
    r = results(got[0][1], "barrier-floor-acked" if ack else "barrier-floor")
    assert [x for x, _ in r] == [n, n] and all(v > 0 for _, v in r), got[0][1]
    assert not any(results(out) for _, out in got[1:])


@needs_root
def test_a_node_that_stops_is_named_by_those_that_wait_for_it(tmp_path):
    """Node 2 runs 10 barriers a repetition, the others 50: after node 2's
    last, nodes 0 and 1 wait for its frame and say whose it was."""
    macs = " ".join(MACS[:3])
    got = bridged_nodes(tmp_path, [f"0 50 1 {macs}", f"1 50 1 {macs}", f"2 10 1 {macs}"])
    assert got[2][0] == 1 and "nettest: barrier done, 20 barriers, 0 ack" in got[2][1], got[2]
    # Round 0's partner of node 0 is node 2, round 1's of node 1.
    for i, rnd in ((0, 0), (1, 1)):
        rc, out = got[i]
        assert rc == (3 << 1) | 1, (i, out)
        assert re.search(rf"nettest=barrier: barrier 20, round {rnd}: nothing from node 2 "
                         r"in 5 s", out), (i, out)


@pytest.mark.parametrize("words, said", [
    ("", "usage: nettest=barrier"),
    (f"0 10 1 {MACS[0]}", "usage: nettest=barrier"),                    # one node
    (f"ack ack 0 10 1 {MACS[0]} {MACS[1]}", "usage: nettest=barrier"),
    (f"2 10 1 {MACS[0]} {MACS[1]}", "usage: nettest=barrier"),          # no rank 2
    (f"0 0 1 {MACS[0]} {MACS[1]}", "usage: nettest=barrier"),           # no barriers
    (f"0 10 x {MACS[0]} {MACS[1]}", "usage: nettest=barrier"),
    (f"0 10 1 {MACS[0]} 52:54:00:12", "nettest=barrier: bad MAC '52:54:00:12'"),
    (f"1 10 1 {MACS[0]} {MACS[1]}", f"nettest=barrier: MAC1 is {MACS[1]}, not this node's"),
])
def test_barrier_refuses_bad_words(tmp_path, words, said):
    # Checked before anything is sent: no other node needed.
    here, there = free_udp_ports(2)
    log = tmp_path / "bad.log"
    log.write_text("")
    r = subprocess.run(qemu(log, "nettest=barrier exit=qemu -- " + words, MACS[0], here, there),
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    out = log.read_text()
    assert r.returncode == (3 << 1) | 1, out
    assert said in out, out
