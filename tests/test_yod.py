"""yod on the virtual cluster: loading, output, exit statuses, signals, lost
nodes, concurrent jobs, node reuse."""
import hashlib
import os
import re
import signal
import time

import pytest

from clusters import cluster, down, node_pid, start, up, yod, yod_bg
from nodes import ROOT

pytestmark = [pytest.mark.cluster,
              pytest.mark.skipif(os.geteuid() != 0, reason="needs root (netns, taps)")]

PROG = os.path.join(ROOT, "build", "programs")
RANKS = os.path.join(PROG, "ranks-musl")


def free_nodes(name):
    out = yod(name, "-show").stdout
    return sorted(int(l.split()[0]) for l in out.splitlines()
                  if l.split() and l.split()[0].isdigit() and l.split()[2] == "free")


def wait_free(name, want, secs=40):
    deadline = time.monotonic() + secs
    while time.monotonic() < deadline:
        got = free_nodes(name)
        if got == want:
            return got
        time.sleep(0.5)
    return free_nodes(name)


@pytest.fixture(scope="module")
def c4():
    with up("y", "-n", "4", "--boot", "direct") as name:
        yield name


def by_rank(out):
    """Lines of -label output grouped by rank."""
    ranks = {}
    for line in out.splitlines():
        m = re.match(r"\[(\d+)\] (.*)", line)
        assert m, f"unlabelled line {line!r}"
        ranks.setdefault(int(m.group(1)), []).append(m.group(2))
    return ranks


def test_hello_argv_env_per_rank(c4):
    env_word = "YOD_TEST_VALUE=with spaces = and symbols $&"
    r = yod(c4, "-label", "-sz", "4", os.path.join(PROG, "hello-musl"), "one", "two words", "",
            pre=["env", env_word])
    assert r.returncode == 0, r.stderr
    ranks = by_rank(r.stdout)
    assert sorted(ranks) == [0, 1, 2, 3]
    nids = None
    for rank, lines in ranks.items():
        assert lines[:4] == ["argc=4", f"argv[0]={PROG}/hello-musl", "argv[1]=one",
                             "argv[2]=two words"], lines
        env = dict(l.split("=", 2)[1:] for l in lines if l.startswith("envp["))
        assert env["TERN_RANK"] == str(rank) and env["TERN_SIZE"] == "4"
        assert env["YOD_TEST_VALUE"] == "with spaces = and symbols $&"
        assert env["TERN_PID"] == "16"
        nids = nids or env["TERN_MAP"]
        assert env["TERN_MAP"] == nids           # one map for the whole job
    assert sorted(nids.split(",")) == ["1", "2", "3", "4"]


def test_every_rank_knows_its_nid(c4):
    r = yod(c4, "-sz", "4", RANKS, "hello")
    assert r.returncode == 0, r.stderr
    lines = sorted(r.stdout.splitlines())
    assert lines == [f"rank {i} of 4 on nid {i + 1}" for i in range(4)], lines


def test_glibc_program_and_list(c4):
    r = yod(c4, "-list", "2..3", "-label", os.path.join(PROG, "ranks-glibc"), "hello")
    assert r.returncode == 0, r.stderr
    assert sorted(r.stdout.splitlines()) == ["[0] rank 0 of 2 on nid 2", "[1] rank 1 of 2 on nid 3"]


def test_rank_exit_status_fails_job(c4):
    r = yod(c4, "-sz", "3", RANKS, "exit", "1", "3")
    assert r.returncode == 1
    assert "rank 1 (nid 2): exited with status 3" in r.stderr


def test_rank_fault_fails_job(c4):
    r = yod(c4, "-sz", "2", RANKS, "fault", "1")
    assert r.returncode == 1
    assert "rank 1 (nid 2): killed by SIGSEGV" in r.stderr
    assert "NULL pointer" in r.stderr        # the fault report reached yod's stderr


def test_load_errors_exit_2(c4, tmp_path):
    notelf = tmp_path / "notelf"
    notelf.write_text("#!/bin/sh\necho hi\n")
    r = yod(c4, "-sz", "5", RANKS, "hello")
    assert r.returncode == 2 and "5 nodes requested, 4 free" in r.stderr, r.stderr
    r = yod(c4, str(notelf))
    assert r.returncode == 2 and "not an ELF file" in r.stderr, r.stderr
    r = yod(c4, "/bin/true")
    assert r.returncode == 2 and "dynamically linked" in r.stderr, r.stderr
    elf32 = tmp_path / "elf32"
    elf32.write_bytes(b"\x7fELF\x01\x01\x01" + bytes(45))
    r = yod(c4, str(elf32))
    assert r.returncode == 2 and "32-bit" in r.stderr, r.stderr
    r = yod(c4, str(tmp_path / "missing"))
    assert r.returncode == 2 and "No such file or directory" in r.stderr, r.stderr
    trunc = tmp_path / "truncated"
    trunc.write_bytes(open(RANKS, "rb").read()[:3000])
    r = yod(c4, str(trunc))
    assert r.returncode == 2 and "truncated" in r.stderr, r.stderr
    assert free_nodes(c4) == [1, 2, 3, 4]


def test_option_errors_name_the_option(c4):
    # An option of no meaning to yod, as the last word, was "-bogus wants a
    # value"; one that wants a value and has none says so.
    for args, want in ((["-bogus"], "unknown option -bogus"),
                       (["-bogus", RANKS], "unknown option -bogus"),
                       *(([o], f"{o} wants a value")
                         for o in ("-sz", "-ppn", "-list", "-heap", "-stack", "-timeout",
                                   "-fanout", "-F", "-kill")),
                       (["-sz", "0", RANKS], "-sz wants a number of nodes")):
        r = yod(c4, *args)
        assert r.returncode == 2 and want in r.stderr, (args, r.stderr)


def test_loadfile_two_programs(c4, tmp_path):
    lf = tmp_path / "job.load"
    lf.write_text(f"# two programs, one job\n-sz 1 {PROG}/hello-musl first\n"
                  f"-sz 3 {RANKS} hello\n")
    r = yod(c4, "-label", "-F", str(lf))
    assert r.returncode == 0, r.stderr
    ranks = by_rank(r.stdout)
    assert ranks[0][:2] == ["argc=2", f"argv[0]={PROG}/hello-musl"]
    for i in (1, 2, 3):
        assert ranks[i] == [f"rank {i} of 4 on nid {i + 1}"]


def bigout(name, n, sz):
    p = yod(name, "-sz", str(sz), os.path.join(PROG, "bigout-musl"), str(n), timeout=300,
            text=False)
    assert p.returncode == 0, p.stderr
    assert p.stderr.decode().count(f"wrote {n} bytes") == sz
    return p.stdout


def test_big_output_arrives_whole(c4):
    n = 10 * 1000 * 1000
    want = (bytes(range(ord("a"), ord("z") + 1)) * (n // 26 + 1))[:n]
    # one line without a newline: the bytes as written, none added (docs/yod.md, Output)
    got = bigout(c4, n, 1)
    assert len(got) == n and hashlib.sha256(got).digest() == hashlib.sha256(want).digest()
    # two ranks at once: every byte of both arrives (the pieces of their long
    # lines each ended by a newline where the other rank's go between)
    got = bigout(c4, n, 2).replace(b"\n", b"")
    assert len(got) == 2 * n
    assert all(got.count(bytes([c])) == 2 * want.count(bytes([c])) for c in b"amz")


def test_stdin_goes_to_rank_0(c4):
    data = "".join(f"line {i}\n" for i in range(3000))
    r = yod(c4, "-sz", "2", RANKS, "stdin", input=data)
    assert r.returncode == 0, r.stderr
    assert r.stdout == data + f"stdin: {len(data)} bytes\n"


def test_sigint_kills_job_and_frees_nodes(c4):
    p = yod_bg(c4, "-sz", "4", RANKS, "spin")
    first = p.stdout.readline()
    assert "spinning" in first
    time.sleep(1)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 1, err
    assert "interrupted" in err
    assert wait_free(c4, [1, 2, 3, 4]) == [1, 2, 3, 4]


def test_sigint_ends_a_job_whose_ranks_only_wait_for_each_other(c4):
    """Ranks in an endless NX ping-pong: every wake of their waits is their
    own message, and the kernel skips yod's turn on those (nothing came for
    it: kernel/job/control.c).  yod's ^C still comes through and ends the
    job at once."""
    nxbench = os.path.join(ROOT, "build", "nx-tern", "nxbench")
    p = yod_bg(c4, "-sz", "2", nxbench, "lat", "1", "100000000", "0", "0")
    time.sleep(3)
    assert p.poll() is None, p.communicate()
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 1, err
    assert "interrupted" in err, err
    assert time.monotonic() - t0 < 10, err
    assert wait_free(c4, [1, 2, 3, 4]) == [1, 2, 3, 4]


def test_sigint_escalates_when_ignored(c4):
    p = yod_bg(c4, "-sz", "2", RANKS, "ignore-int")
    # both ranks have set SIG_IGN once both say they spin; a ^C before that
    # rightly kills the rank that has not (CI once saw "killed by SIGINT")
    assert "spinning" in p.stdout.readline()
    assert "spinning" in p.stdout.readline()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 1
    assert "ignored SIGINT" in err and "killed by yod because it ignored SIGINT" in err, err
    assert wait_free(c4, [1, 2, 3, 4]) == [1, 2, 3, 4]


def test_sigusr1_forwarded(c4):
    p = yod_bg(c4, "-sz", "2", "-label", RANKS, "spin", "8")
    p.stdout.readline()
    p.stdout.readline()
    p.send_signal(signal.SIGUSR1)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert "[0] rank 0 got SIGUSR1" in out and "[1] rank 1 got SIGUSR1" in out


def test_timeout_kills_job(c4):
    r = yod(c4, "-sz", "2", "-timeout", "3", RANKS, "spin")
    assert r.returncode == 1
    assert "ran past -timeout 3 s" in r.stderr


def test_two_jobs_at_once_and_kill(c4):
    a = yod_bg(c4, "-sz", "2", RANKS, "spin")
    assert "spinning" in a.stdout.readline()
    b = yod(c4, "-sz", "2", "-label", RANKS, "hello")
    assert b.returncode == 0, b.stderr
    assert len(b.stdout.splitlines()) == 2
    show = yod(c4, "-show").stdout
    job = re.search(r"job (\d+): 2 nodes", show)
    assert job, show
    k = yod(c4, "-kill", job.group(1))
    assert k.returncode == 0, k.stderr
    out, err = a.communicate(timeout=60)
    assert a.returncode == 1 and "killed by yod -kill" in err, err
    assert wait_free(c4, [1, 2, 3, 4]) == [1, 2, 3, 4]


def test_memory_is_clean_for_the_next_job(c4):
    r = yod(c4, "-sz", "4", RANKS, "dirty", "40")
    assert r.returncode == 0, r.stderr
    r = yod(c4, "-sz", "4", RANKS, "clean", "40")
    assert r.returncode == 0, r.stdout + r.stderr
    assert sorted(r.stdout.splitlines()) == [f"rank {i} clean" for i in range(4)]


def test_vector_registers_are_clean_for_the_next_job(c4):
    """x87 (fninit alone left the old values in the registers), XMM and YMM."""
    r = yod(c4, "-sz", "4", RANKS, "vdirty")
    assert r.returncode == 0, r.stdout + r.stderr
    # The default CPU (-cpu max) offers AVX, so the YMM halves are checked too.
    assert r.stdout.count("dirtied vector registers (AVX too)") == 4, r.stdout
    r = yod(c4, "-sz", "4", RANKS, "vclean")
    assert r.returncode == 0, r.stdout + r.stderr
    assert sorted(r.stdout.splitlines()) == [f"rank {i} vector registers clean" for i in range(4)]


@pytest.mark.parametrize("how", ["heap", "stack", "reserve", "split", "stdin", "file"])
def test_nothing_a_job_wrote_anywhere_reaches_the_next(c4, how):
    """A node clears only what a job may have written (the page tables'
    dirty bits, and what the kernel itself wrote there), not the whole
    region: a job that writes where it never allocated, through memory it
    released, or by having the kernel deliver into it, and a program's own
    file, leave nothing that the next job finds in any word it can read."""
    if how == "file":
        # the node stages a program's file at the top of the heap area
        r = yod(c4, "-sz", "4", os.path.join(PROG, "fat-musl"))
        assert r.returncode == 0, r.stdout + r.stderr
    else:
        r = yod(c4, "-sz", "4", RANKS, "scribble", how,
                input="TERNDIRT" * 8192 if how == "stdin" else None)
        assert r.returncode == 0, r.stdout + r.stderr
    scribbled = sum(f"scribbled on its {how}" in l for l in r.stdout.splitlines())
    assert scribbled == {"file": 0, "stdin": 1}.get(how, 4), r.stdout
    if how == "stdin":
        assert "rank 0 read 65536 bytes" in r.stdout, r.stdout
    r = yod(c4, "-sz", "4", RANKS, "scan")
    assert r.returncode == 0, r.stdout + r.stderr
    lines = sorted(r.stdout.splitlines())
    assert [re.sub(r" in \d+ KiB", "", l) for l in lines] == \
        [f"rank {i} found no pattern" for i in range(4)], r.stdout
    # the scan covered (nearly) the whole 64 MiB node, not a corner of it
    assert all(int(re.search(r"in (\d+) KiB", l).group(1)) > 40 * 1024 for l in lines), lines


@pytest.mark.parametrize("how", ["eq", "ct"])
def test_a_rank_spinning_on_portals_gets_its_message(c4, how):
    """A program that polls PtlEQGet / PtlCTGet in a loop, as a library for a
    user-space NIC does, is halted by the kernel between its looks once it
    has spun a while (kernel/sys/portals_spin.c): it still gets the message
    the moment it comes, and looks far fewer times than a free spin would
    (hundreds in 1.5 s, not tens of thousands; its host CPU is measured by
    bench/wait_cpu.py)."""
    r = yod(c4, "-sz", "2", os.path.join(ROOT, "build", "portals", "kernel", "spinwait-musl"),
            how, "1500")
    assert r.returncode == 0, r.stdout + r.stderr
    m = re.search(r'rank 0 got "arrived" by Pt(lEQ|lCT)Get after (\d+) ms; (\w+) empty looks',
                  r.stdout)
    assert m, r.stdout + r.stderr
    assert m[1] == ("lEQ" if how == "eq" else "lCT"), r.stdout
    print(r.stderr)
    assert m[3] == "few", r.stdout + r.stderr


def test_an_ack_does_not_wait_for_a_target_that_computes(c4):
    """A node holds its Portals ACK for its program's next message to the
    initiator, to send both in one link frame (portals/lib/reliable.c).  A
    program that takes a put in and then computes for 3 s without a Portals
    call must not hold its initiator's ACK for those 3 s: the frames that
    reach the node meanwhile (the initiator resending the unacknowledged
    put) send it."""
    r = yod(c4, "-sz", "2", os.path.join(ROOT, "build", "portals", "kernel", "ackhold-musl"),
            "3000")
    assert r.returncode == 0, r.stdout + r.stderr
    m = re.search(r'rank 0: ACK after (\d+) ms, rank 1 done after (\d+) ms \("done"\)', r.stdout)
    assert m, r.stdout + r.stderr
    ack, done = int(m[1]), int(m[2])
    print(r.stdout)
    assert done >= 2900, r.stdout
    assert ack < 1000, r.stdout


def test_a_put_to_a_rank_that_starts_late_arrives_the_first_time(c4):
    """A job's ranks start apart.  A put that reached a node before its
    program had made an NI was dropped, and arrived only by a retransmission
    after the program was ready: the sender's timer backs off (10, 30, 70,
    150, 310 ms after the put), so that could be up to twice the gap late
    (the start-up barrier of a job began 10 ms late and sent a frame twice).
    Now the node keeps it and hands it to the NI at the program's first wait
    (portals/lib/park.c).  latestart: rank 1 sleeps 400 ms before PtlInit;
    rank 0 puts once at once.  Its node hands the kept frame over; before, it
    handed over none and the ACK came after 334 ms for a 200 ms sleep (now
    200-206 ms).  A resend that reaches the NI first (a host stall between
    its creation and its first wait) leaves nothing to hand over: up to three
    jobs."""
    prog = os.path.join(ROOT, "build", "portals", "kernel", "latestart-musl")
    for _ in range(3):
        r = yod(c4, "-sz", "2", prog, "400")
        assert r.returncode == 0, r.stdout + r.stderr
        assert re.search(r"rank 0: ACK after \d+ ms, fail 0\b", r.stdout), r.stdout + r.stderr
        m = re.search(r'rank 1: put "late" arrived, kept frames handed over (\d+)', r.stdout)
        assert m, r.stdout + r.stderr
        print(r.stdout)
        if int(m[1]) >= 1:
            break
    assert int(m[1]) >= 1, r.stdout


@pytest.mark.slow
def test_lost_node_ends_job():
    name = start("y", "-n", "2", "--boot", "direct")
    try:
        p = yod_bg(name, "-sz", "2", RANKS, "spin")
        assert "spinning" in p.stdout.readline()
        pid = node_pid(name, 2)
        t = time.monotonic()
        os.kill(pid, signal.SIGKILL)
        out, err = p.communicate(timeout=60)
        took = time.monotonic() - t
        assert p.returncode == 1
        assert "rank 1 (nid 2): lost: node nid 2 stopped answering" in err, err
        assert took < 30, took
        assert wait_free(name, [1]) == [1]
    finally:
        down(name)


def test_verbose_names_the_job_before_it_loads(c4):
    """yod -v says the job id as soon as the nodes are allocated (a Linux
    process joining the job needs it for its frames: tests/ptlref.py), the
    same id as in its closing timings."""
    r = yod(c4, "-v", "-sz", "1", RANKS)
    assert r.returncode == 0, r.stderr
    first = re.search(r"yod: job (\d+): 1 nodes allocated", r.stderr)
    last = re.search(r"yod: job (\d+): 1 ranks loaded in", r.stderr)
    assert first and last, r.stderr
    assert first.group(1) == last.group(1)
    assert r.stderr.index(first.group(0)) < r.stderr.index(last.group(0))


@pytest.mark.slow
def test_sigterm_while_loading_ends_yod_at_once():
    """A node that takes the job but never reports it loaded (here: its
    QEMU stopped, so the descriptor is never acknowledged and yod would
    wait for the library to give up on it) must not hold yod: SIGTERM ends
    the load at once, as ^C does.  Before the fix yod went on waiting."""
    with up("y", "-n", "1", "--boot", "direct") as name:
        pid = node_pid(name, 1)
        os.kill(pid, signal.SIGSTOP)
        try:
            p = yod_bg(name, "-sz", "1", RANKS)
            time.sleep(1.5)
            p.send_signal(signal.SIGTERM)
            out, err = p.communicate(timeout=60)
            assert p.returncode == 1, err
            assert "yod: terminated while loading" in err, err
        finally:
            os.kill(pid, signal.SIGCONT)
        # The node got the job late, hears no yod, drops it: free again.
        assert wait_free(name, [1], secs=90) == [1]
        r = yod(name, "-sz", "1", RANKS)
        assert r.returncode == 0, r.stderr


@pytest.mark.slow
def test_dead_yod_frees_nodes():
    name = start("y", "-n", "2", "--boot", "direct")
    try:
        p = yod_bg(name, "-sz", "2", RANKS, "spin")
        assert "spinning" in p.stdout.readline()
        p.send_signal(signal.SIGKILL)
        p.communicate(timeout=10)
        # the nodes notice their yod is gone, the allocator frees them
        assert wait_free(name, [1, 2], secs=60) == [1, 2]
        deadline = time.monotonic() + 60
        while True:
            r = yod(name, "-sz", "2", RANKS, "hello")
            if r.returncode == 0 or time.monotonic() > deadline:
                break
            time.sleep(2)
        assert r.returncode == 0, r.stderr
        for i in (1, 2):
            con = cluster(name, "console", str(i)).stdout
            # by the allocator's notice and a shorter silence, or the silence alone
            assert re.search(r"job 1: ((its )?yod .*is gone|nothing from yod)", con), con[-1500:]
    finally:
        down(name)


def test_jobs_leave_no_kernel_memory_behind(c4):
    """Every job's kernel state (descriptor, map, the launcher's Portals peer)
    goes with it: a node can run jobs forever."""
    def heap_after_jobs(count):
        # the node logs it after cleaning, just after yod has its report
        deadline = time.monotonic() + 20
        while True:
            con = cluster(c4, "console", "1").stdout
            got = [int(m) for m in re.findall(r"kernel heap (\d+) of \d+ KiB in use", con)]
            if len(got) >= count or time.monotonic() > deadline:
                return got
            time.sleep(0.2)
    assert yod(c4, "-sz", "4", RANKS, "hello").returncode == 0
    first = heap_after_jobs(1)
    for _ in range(5):
        assert yod(c4, "-sz", "4", RANKS, "hello").returncode == 0
    after = heap_after_jobs(len(first) + 5)
    assert len(after) == len(first) + 5, after
    # A few KiB come and go with timing (a peer forgotten a little later);
    # what a job used to leave behind (about 10 KiB each) would add up.
    assert max(after[-5:]) <= first[-1] + 12, after
