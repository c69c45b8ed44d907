"""What ranks write reaches yod whole, line by line and in order per rank, however
the job ends (a rank failing, ^C, a node dying), and yod reports each rank's
real end (issue 12).  The program is tests/programs/lines.c."""
import os
import re
import signal
import subprocess
import tempfile
import time

import pytest

from clusters import CLUSTER, cluster, down, node_pid, start, yod, yod_bg
from test_yod import PROG

pytestmark = [pytest.mark.cluster,
              pytest.mark.skipif(os.geteuid() != 0, reason="needs root (netns, taps)")]


def new_cluster(n):
    return start("y", "-n", str(n), "--boot", "direct")

LINES = os.path.join(PROG, "lines-musl")     # musl: printf's line goes out as a writev
BATCH = [1, 7, 50, 1500, 3, 200, 1]          # lines per write(), as lines.c


@pytest.fixture(scope="module")
def clusters():
    """This module's clusters by node count, each booted when first wanted
    and shared by the tests that want that many nodes."""
    names = {}

    def get(n):
        if n not in names:
            names[n] = new_cluster(n)
        return names[n]
    yield get
    for name in names.values():
        down(name)


@pytest.fixture
def c4(clusters):
    return clusters(4)


ALPHABETS = "abcdefghijklmnopqrstuvwxyz" * 5


def pad(n):
    """Line n's letters as lines.c writes them: n * 37 % 91 of the alphabet
    over and over, from letter n % 26 (sliced: a flood test checks millions)."""
    return ALPHABETS[n % 26:n % 26 + n * 37 % 91]


def numbered_lines(out):
    """The lines of `lines flood` by rank: {rank: [n, ...]}, and the lines that
    are not whole numbered lines (a cut line, two ranks' bytes in one line)."""
    assert out.endswith("\n") or not out, out[-200:]
    ranks, bad = {}, []
    for line in out.split("\n")[:-1]:
        # "RANK NNNNNNNN LETTERS", taken apart without a regex (millions of lines)
        rank, _, rest = line.partition(" ")
        num, sep, letters = rest.partition(" ")
        if not (rank.isdigit() and len(num) == 8 and num.isdigit() and sep) or \
                letters != pad(int(num)):
            bad.append(line[:200])
            continue
        ranks.setdefault(int(rank), []).append(int(num))
    return ranks, bad


def in_order(ns):
    return ns == list(range(len(ns)))


def statuses(err):
    """yod's summary: {rank: how it ended}."""
    return {int(m.group(1)): m.group(2)
            for m in re.finditer(r"^yod: rank (\d+) \(nid \d+\): (.*)$", err, re.M)}


@pytest.mark.parametrize("size", [4, 16])
def test_failing_job_keeps_every_line_and_real_status(size, clusters):
    """Every rank prints one line and exits 42: every line arrives whole, every
    time, and each rank's own exit status is reported (not a SIGKILL of yod's)."""
    name = clusters(size)
    want = sorted(f"rank {r} of {size} says goodbye with 42" for r in range(size))
    for i in range(30):
        r = yod(name, "-sz", str(size), LINES, "say", "42")
        assert r.returncode == 1, (i, r.stderr)
        assert sorted(r.stdout.split("\n")[:-1]) == want and r.stdout.endswith("\n"), \
            (i, r.stdout, r.stderr)
        assert statuses(r.stderr) == {k: "exited with status 42" for k in range(size)}, \
            (i, r.stderr)


def test_last_lines_without_newlines_stay_apart_and_the_last_as_written(c4):
    """Each rank's unended line is a line of its own when another follows;
    the job's last bytes are the program's (no newline added)."""
    r = yod(c4, "-sz", "4", LINES, "unended")
    assert r.returncode == 0, r.stderr
    assert not r.stdout.endswith("\n"), r.stdout
    assert sorted(r.stdout.split("\n")) == [f"rank {k} has no newline" for k in range(4)], \
        r.stdout


def run_to_file(name, *args):
    """yod with its stdout in a file (the test reads it only at the end, and yod
    must never wait for its reader)."""
    out = tempfile.TemporaryFile()
    p = subprocess.Popen([CLUSTER, "--name", name, "exec", "yod", *args], stdout=out,
                         stderr=subprocess.PIPE, text=True)
    return p, out


def file_text(out):
    out.seek(0)
    return out.read().decode()


def test_rank_writes_1mb_and_exits_3_while_others_print(c4):
    p, out = run_to_file(c4, "-sz", "4", LINES, "flood", "0", "1024", "3")
    err = p.communicate(timeout=120)[1]
    assert p.returncode == 1, err
    ranks, bad = numbered_lines(file_text(out))
    assert bad == [], bad[:5]
    m = re.search(r"rank 0 wrote (\d+) lines, (\d+) bytes", err)
    assert m and int(m.group(2)) >= 1 << 20, err
    assert ranks[0] == list(range(int(m.group(1)))), "rank 0's lines are not all there in order"
    assert sorted(ranks) == [0, 1, 2, 3], sorted(ranks)
    assert all(in_order(ranks[k]) for k in (1, 2, 3))
    assert statuses(err) == {0: "exited with status 3",
                             **{k: "killed by yod because rank 0 failed" for k in (1, 2, 3)}}, err


def wait_for_bytes(out, n, secs=60):
    deadline = time.monotonic() + secs
    while os.fstat(out.fileno()).st_size < n and time.monotonic() < deadline:
        time.sleep(0.1)


def test_interrupt_during_heavy_output(c4):
    p, out = run_to_file(c4, "-sz", "4", LINES, "flood", "-1", "0", "0")
    wait_for_bytes(out, 4 << 20)
    p.send_signal(signal.SIGINT)
    err = p.communicate(timeout=60)[1]
    assert p.returncode == 1, err
    ranks, bad = numbered_lines(file_text(out))
    assert bad == [], bad[:5]
    assert sorted(ranks) == [0, 1, 2, 3] and all(in_order(ns) for ns in ranks.values())
    ended = statuses(err)
    assert sorted(ended) == [0, 1, 2, 3] and all(e.startswith("killed by SIGINT")
                                                 for e in ended.values()), err


def write_ends(lines_seen, per=0):
    """Where each write() of a flooding rank ends in its stream (bytes), up to
    the write that holds line lines_seen - 1."""
    ends, n, at, b = [], 0, 0, 0
    while n < lines_seen:
        for _ in range(per or BATCH[b % len(BATCH)]):
            at += len(f"0 {n:08d} {pad(n)}\n")
            n += 1
        ends.append(at)
        b += 1
    return ends


def test_dead_node_loses_only_what_it_never_sent():
    """A node dies while its rank writes: what arrived is printed in whole lines
    (the last one cut where the node stopped, ended by yod), and yod says how
    much of the write in progress never arrived."""
    name = new_cluster(2)
    try:
        # writes of 4000 lines (about 220 KB, 4 puts): the node most likely
        # dies in the middle of one
        p, out = run_to_file(name, "-sz", "2", LINES, "flood", "-1", "0", "0", "4000")
        wait_for_bytes(out, 2 << 20)
        pid = node_pid(name, 2)
        os.kill(pid, signal.SIGKILL)
        err = p.communicate(timeout=90)[1]
        assert p.returncode == 1, err
        text = file_text(out)
        ranks, bad = numbered_lines(text)
        assert in_order(ranks[0]) and in_order(ranks[1])
        # at most one line is not whole: rank 1's last, a prefix of its line
        n = len(ranks[1])
        assert len(bad) <= 1 and all(b == f"1 {n:08d} {pad(n)}"[:len(b)] for b in bad), bad
        got = sum(len(f"1 {k:08d} {pad(k)}\n") for k in range(n)) + (len(bad[0]) if bad else 0)
        # A cut just before a line's newline looks whole: yod ends the cut
        # line with the newline that never arrived.  Either count is exact.
        lost = set()
        for g in [got] + ([got - 1] if not bad and n else []):
            end = next(e for e in write_ends(n + 1, 4000) if e >= g)
            lost.add("lost: node nid 2 stopped answering" + (
                f"; {end - g} bytes of its last write to stdout never reached yod" if end > g
                else ""))
        ended = statuses(err)
        assert ended[1] in lost, err
        assert ended[0] == "killed by yod because rank 1 failed", err
    finally:
        down(name)


def test_cluster_status_and_yod_show_say_the_same(c4):
    def states(lines):
        return {int(w[0]): w[2] for w in map(str.split, lines)
                if len(w) >= 3 and re.fullmatch(r"[0-9a-f:]{17}", w[1])}
    a = yod_bg(c4, "-sz", "2", os.path.join(PROG, "ranks-musl"), "spin")
    try:
        assert "spinning" in a.stdout.readline()
        status = states(cluster(c4, "status").stdout.splitlines())
        show = states(yod(c4, "-show").stdout.splitlines())
        assert status == show, (status, show)
        assert sorted(show.values()) == ["allocated", "allocated", "free", "free"], show
    finally:
        a.send_signal(signal.SIGTERM)
        a.communicate(timeout=60)
