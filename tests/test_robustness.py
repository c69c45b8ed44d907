"""Robustness of a cluster against what the network and its users do (issue
19): a flood of frames from made-up sources, an allocator restarted while
jobs end, a launcher killed with SIGKILL, a slow or stopped reader of yod's
output.  Nothing of it may cost a later job, a line of output, or a node."""
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest

from clusters import (CLUSTER, allocd_kill, allocd_start, cluster, down, node_states, start, up,
                      yod, yod_bg)
from nodes import ROOT
from test_yod_output import numbered_lines

pytestmark = [pytest.mark.cluster,
              pytest.mark.skipif(os.geteuid() != 0, reason="needs root (netns, taps)")]

PROG = os.path.join(ROOT, "build", "programs")
RANKS = os.path.join(PROG, "ranks-musl")
LINES = os.path.join(PROG, "lines-musl")
FLOOD = os.path.join(ROOT, "tests", "portals", "linux", "flood.py")
YOD_NODE_PID, ALLOC_PID = 1, 2


@pytest.fixture(scope="module")
def c3():
    with up("r", "-n", "3", "--boot", "direct") as name:
        yield name


def wait_states(name, want, secs):
    deadline = time.monotonic() + secs
    while True:
        got = node_states(name)
        if all(got.get(n) == s for n, s in want.items()) or time.monotonic() > deadline:
            return got
        time.sleep(0.5)


def yod_with_pid(name, *args):
    """yod ARGS in the background: (the Popen, yod's own pid)."""
    p = yod_bg(name, *args, pre=("sh", "-c", 'echo "yod pid $$"; exec "$@"', "sh"))
    first = p.stdout.readline()
    assert first.startswith("yod pid "), first + p.stderr.read()
    return p, int(first.split()[2])


def test_spoofed_sources_do_not_stop_the_next_job(c3):
    """10,000 puts from made-up sources (half asking for an ACK that can
    never be delivered; each from its made-up nid's MAC, or the allocator's
    host would drop them as spoofed before its peer table saw them) at a
    node's kernel and 10,000 at the allocator: the
    next job still gets the nodes and runs on the flooded node.  Before the
    peer table was bounded the node's kernel heap filled with peers (it never
    took another job) and the allocator stopped hearing new launchers."""
    for nid, pid in ((1, YOD_NODE_PID), (0, ALLOC_PID)):
        r = cluster(c3, "exec", sys.executable, FLOOD, "svc0", str(nid), str(pid), "10000",
                    str(nid + 7), timeout=300)
        assert r.stdout.strip() == "10000", r.stdout + r.stderr
    r = yod(c3, "-list", "1,2", "-label", RANKS, "hello", timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "[0] " in r.stdout and "[1] " in r.stdout, r.stdout
    r = yod(c3, "-sz", "3", RANKS, "hello", timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr


def test_after_kill_9_of_yod_the_next_job_never_sees_node_busy(c3):
    """yod killed with SIGKILL: its nodes run the orphan until they know yod
    is gone.  The allocator used to free them as soon as yod stopped
    answering its pings, and a job started in between failed with "node
    busy"; now they are free only when they say the job is over, and the
    next job on them simply runs.  The allocator tells them when yod stops
    answering its pings (TERN_REVOKE), so they do not wait out yod's
    15-second silence (they did before: 17-30 s from the kill to free)."""
    p, pid = yod_with_pid(c3, "-list", "1,2", RANKS, "spin")
    assert "spinning" in p.stdout.readline()
    os.kill(pid, signal.SIGKILL)
    p.communicate(timeout=30)
    tries, deadline = [], time.monotonic() + 120
    while time.monotonic() < deadline:
        r = yod(c3, "-list", "1,2", RANKS, "hello", timeout=120)
        tries.append(r)
        assert "busy" not in r.stderr, r.stderr
        if r.returncode == 0:
            break
        # Meanwhile the allocator says the nodes are taken (or, on a loaded
        # host, that a spinning node missed its pings for a while).
        assert r.returncode == 2 and re.search(r"allocated to job|is down", r.stderr), r.stderr
        time.sleep(1)
    assert tries[-1].returncode == 0, tries[-1].stderr
    assert len(tries) > 1, "the nodes were free at once: the orphans were not waited for"
    for i in (1, 2):
        con = cluster(c3, "console", str(i)).stdout
        assert "is gone (the allocator says so" in con, con[-1500:]   # either way it ends
    log = open(f"/tmp/tern-clusters/{c3}/allocd.log").read()
    assert re.search(r"stopped answering: told its 2 nodes to end it", log), log[-1500:]


def test_a_job_right_after_a_failed_load_runs_on_the_same_nodes(c3, tmp_path):
    """A load that fails on one node (its program does not fit in 64 MiB)
    after another node took its part: yod gives that node back unsure, and
    the allocator frees it when the node says it has dropped the job.  The
    next yod, started at once, was refused ("node 1 is allocated to job N")
    until the allocator's next periodic ping; now the allocator answers it
    EBUSY and pings the node at once, and yod waits for it."""
    big = tmp_path / "big"
    shutil.copyfile(RANKS, big)
    with open(big, "ab") as f:            # trailing bytes: still a valid ELF
        f.truncate(os.path.getsize(RANKS) + (80 << 20))
    os.chmod(big, 0o755)
    load = tmp_path / "load"
    load.write_text(f"-sz 1 -list 1 {RANKS} hello\n-sz 1 -list 2 {big} hello\n")
    for round_ in range(2):
        r = yod(c3, "-F", str(load), timeout=180)
        assert r.returncode == 2, r.stdout + r.stderr
        assert re.search(r"yod: rank 1 \(nid 2\): .*do not fit", r.stderr), r.stderr
        r = yod(c3, "-list", "1,2", RANKS, "hello", timeout=180)
        assert r.returncode == 0, (round_, r.stderr)
    log = open(f"/tmp/tern-clusters/{c3}/allocd.log").read()
    assert "1 when they say the job is over" in log, log[-1500:]


def test_nodes_of_jobs_that_end_while_allocd_is_down_come_free():
    """The allocator is killed while a job runs, the job ends (its yod cannot
    give the nodes back), the allocator is started again: the nodes come
    free, from the launchers it kept and from what the nodes say of
    themselves.  They used to stay allocated for ever.

    yod learns that the allocator is gone from its request's ACK, which the
    Portals library gives up on after 5 s of silence.  It used to wait 15 s
    for an answer, after the job's at most 6 s: 21 s in all."""
    name = start("r", "-n", "2", "--boot", "direct")
    mine = None
    try:
        p = yod_bg(name, "-sz", "2", RANKS, "spin", "6")
        assert "spinning" in p.stdout.readline()
        how = allocd_kill(name)
        killed = time.monotonic()
        out, err = p.communicate(timeout=120)
        took = time.monotonic() - killed
        assert p.returncode == 0, err
        assert "could not give the nodes back" in err and "does not answer" in err, err
        assert took < 16, f"yod ended {took:.1f} s after the allocator was killed"
        mine = allocd_start(name, how)
        time.sleep(1)
        got = wait_states(name, {1: "free", 2: "free"}, 60)
        assert got == {1: "free", 2: "free"}, (got, yod(name, "-show").stdout,
                                               open(f"/tmp/tern-clusters/{name}/allocd.log").read())
        r = yod(name, "-sz", "2", RANKS, "hello", timeout=120)
        assert r.returncode == 0, r.stderr
    finally:
        if mine:
            mine.kill()
            mine.wait()
        down(name)


def all_lines(out, err, ranks):
    """Every line each rank says it wrote arrived, whole and in order."""
    got, bad = numbered_lines(out)
    assert bad == [], bad[:5]
    for r in range(ranks):
        m = re.search(rf"rank {r} wrote (\d+) lines", err)
        assert m, err[-2000:]
        assert got.get(r) == list(range(int(m.group(1)))), \
            f"rank {r}: {len(got.get(r, []))} of {m.group(1)} lines"


def test_a_slow_reader_gets_every_line_and_yod_exits_0(c3):
    """`yod ... | (sleep 10; cat)`: yod's reader takes nothing for 10 s.  The
    rank's writes wait (yod goes on answering the nodes meanwhile); every
    line arrives and yod exits 0.  The nodes used to kill the ranks ("yod
    does not take output any more") and yod never ended."""
    cmd = (f'{{ yod -sz 1 {LINES} flood 0 3072 0; echo "yod exit $?" >&2; }} '
           f'| (sleep 10; cat)')
    r = cluster(c3, "exec", "sh", "-c", cmd, check=False, timeout=400)
    assert "yod exit 0" in r.stderr, r.stderr[-3000:]
    all_lines(r.stdout, r.stderr, 1)


def test_yod_stopped_for_20_s_loses_nothing():
    """yod stopped with SIGTSTP (^Z) for 20 s while a rank writes, then
    continued: the rank waits for it; every line arrives and yod exits 0.
    A yod stopped without notice used to be taken for dead after 15 s."""
    name = None
    p = None
    try:
        name = start("r", "-n", "2", "--boot", "direct")
        # A process group of its own under this process (not orphaned), as
        # a shell's job is: SIGTSTP stops it.  Unbuffered: the pid line is
        # read alone, everything after it by communicate().
        p = subprocess.Popen([CLUSTER, "--name", name, "exec", "sh", "-c",
                              'echo "yod pid $$"; exec "$@"', "sh", "yod", "-sz", "1", LINES,
                              "flood", "0", "3072", "0"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0,
                             process_group=0)
        pid = int(p.stdout.readline().split()[2])
        console = f"/tmp/tern-clusters/{name}/node1.log"
        deadline = time.monotonic() + 120
        while "starting lines-musl" not in open(console).read():
            assert time.monotonic() < deadline and p.poll() is None, "the job did not start"
            time.sleep(0.2)
        time.sleep(2)                           # its output is under way
        os.kill(pid, signal.SIGTSTP)
        deadline = time.monotonic() + 10
        while open(f"/proc/{pid}/stat").read().split(")")[1].split()[0] != "T":
            assert time.monotonic() < deadline, "yod did not stop"
            time.sleep(0.1)
        time.sleep(20)
        os.kill(pid, signal.SIGCONT)
        out, err = (b.decode() for b in p.communicate(timeout=400))
        assert p.returncode == 0, err[-3000:]
        all_lines(out, err, 1)
    finally:
        if p and p.poll() is None:
            p.kill()
            p.communicate()
        if name:
            down(name)
