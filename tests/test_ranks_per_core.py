"""Ranks per core on one node (issue 17): `qemu/run-node --ranks K` (kernel
ranks=K) runs the program K times, each rank a process of its own (its own
part of the memory, its own page tables) on a core of its own.  What a user
sees: each rank's output with its rank, pid and core; a rank that writes
past its own memory faults alone while the others' data stays intact; more
ranks than cores refused; each rank's own Portals, the other's handles and
memory out of its reach.  Jobs (yod -ppn): tests/test_yod_ppn.py."""
import os
import re

import pytest

from nodes import ROOT, program, run_node


@pytest.mark.parametrize("libc,cpus", [("musl", 2), ("glibc", 4)])
def test_each_rank_runs_on_a_core_of_its_own(libc, cpus):
    r = run_node(program(f"percore-{libc}"), "hello", extra=["--smp", str(cpus), "--ranks",
                                                              str(cpus), "-v"])
    assert r.returncode == 0, r.stderr
    lines = sorted(r.stdout.splitlines())
    assert len(lines) == cpus, r.stdout
    addrs = set()
    for rank, line in enumerate(lines):
        m = re.fullmatch(rf"rank {rank} of {cpus}: pid (\d+), cpu (\d+), affinity 1 cpu, "
                         r"&data (0x[0-9a-f]+)", line)
        assert m, r.stdout
        assert int(m.group(1)) == rank + 1 and int(m.group(2)) == rank, line
        addrs.add(m.group(3))
    assert len(addrs) == 1            # the same address in every rank: each its own memory
    assert f"as {cpus} ranks, one per core" in r.stderr
    assert "program exited with status 0" in r.stderr


@pytest.mark.parametrize("attacker,ranks", [(0, 2), (1, 3)])
def test_a_rank_writing_past_its_memory_faults_alone(attacker, ranks):
    r = run_node(program("percore-musl"), "isolate", str(attacker),
                 extra=["--smp", str(ranks), "--ranks", str(ranks), "-v"])
    assert r.returncode == 128 + 11, r.stdout + r.stderr      # the node ends with the fault
    out = r.stdout
    assert f"rank {attacker}: writing past its memory at" in out
    assert "still running" not in out
    for rank in range(ranks):
        if rank == attacker:
            continue
        before = re.search(rf"^rank {rank}: text (\w+) data (\w+)$", out, re.M)
        after = re.search(rf"^rank {rank}: text (\w+) data (\w+): intact$", out, re.M)
        assert before and after and before.groups() == after.groups(), out
        assert f"rank {rank} (CPU {rank}) exited with status 0" in r.stderr
    assert re.search(rf"application fault in \S+ \(rank {attacker}, on CPU {attacker}\): page "
                     r"fault: write to unmapped address", r.stderr), r.stderr
    assert f"rank {attacker} (CPU {attacker}) killed by signal 11 (SIGSEGV)" in r.stderr


def test_a_rank_killed_by_a_signal_leaves_the_others_running():
    # abort()'s SIGABRT is delivered holding the kernel's serial lock: the
    # rank used to leave its core with it, and the others' next call waited
    # for ever.
    r = run_node(program("percore-glibc"), "abort", "0",
                 extra=["--smp", "3", "--ranks", "3", "-v"], timeout=60)
    assert r.returncode == 128 + 6, r.stdout + r.stderr
    assert sorted(r.stdout.splitlines()) == ["rank 1: after", "rank 1: before", "rank 2: after",
                                             "rank 2: before"], r.stdout
    assert "rank 0 (CPU 0) killed by signal 6 (SIGABRT)" in r.stderr


def test_more_ranks_than_cores_is_refused():
    r = run_node(program("percore-musl"), "hello", extra=["--smp", "2", "--ranks", "3"])
    assert r.returncode == 126, r.stdout + r.stderr
    assert r.stdout == ""
    assert ("load failed: ranks=3: this node has 2 CPUs, and a rank needs a core of its own"
            in r.stderr)


@pytest.mark.parametrize("libc,cpus,ranks,threads,want", [
    # The node's cores shared out: 2 ranks of 2 cores each, a thread on each.
    ("musl", 4, 2, 2, ["0,1", "2,3"]),
    # A rank's threads past its cores take turns on its last one.
    ("glibc", 5, 2, 3, ["0,1", "2,3"]),
    # One core a rank: its threads share it.
    ("glibc", 2, 2, 3, ["0", "1"]),
])
def test_a_ranks_threads_run_on_its_own_cores(libc, cpus, ranks, threads, want):
    """A rank's threads (pthreads, OpenMP) run on the rank's share of the
    node's cores (C/K each; what a division leaves over stays idle) and never
    on another rank's, and the affinity mask says which.  Before, a rank's
    pthread_create failed with EAGAIN."""
    r = run_node(program(f"percore-{libc}"), "team", str(threads),
                 extra=["--smp", str(cpus), "--ranks", str(ranks), "-v"])
    assert r.returncode == 0, r.stdout + r.stderr
    per = cpus // ranks
    assert sorted(r.stdout.splitlines()) == [
        f"rank {i}: {threads} threads on cpus {want[i]}, affinity {per}, sum ok"
        for i in range(ranks)], r.stdout
    assert f"as {ranks} ranks, " + ("one per core" if per == 1 else f"{per} cores each") \
        in r.stderr


def ticks_after(out, line):
    lines = out.splitlines()
    assert line in lines, out
    return lines[lines.index(line):]


def test_a_ranks_end_ends_its_threads_and_no_other_rank():
    """exit() in a rank ends its other threads too (a thread ticking on the
    rank's second core stops), while the other rank runs to its end; the
    node's status is the failed rank's."""
    r = run_node(program("percore-musl"), "teamend", "1", "exit",
                 extra=["--smp", "4", "--ranks", "2", "-v"], timeout=60)
    assert r.returncode == 3, r.stdout + r.stderr
    after = ticks_after(r.stdout, "rank 1: exiting with 3")
    # One tick may be on its way as exit begins; a ticking thread left
    # running would print 40 more before rank 0 is done.
    assert after.count("rank 1: tick") <= 1 and "rank 0: done" in after, r.stdout
    assert "rank 1 (CPU 2) exited with status 3; 1 rank still running" in r.stderr, r.stderr


def test_a_fault_in_a_ranks_thread_ends_the_rank_and_its_other_thread():
    """A thread of rank 0 faults while the rank's first thread ticks on
    another core: the fault ends rank 0, the ticking thread with it, and
    rank 1 runs on to its end."""
    r = run_node(program("percore-glibc"), "teamend", "0", "fault",
                 extra=["--smp", "4", "--ranks", "2", "-v"], timeout=60)
    assert r.returncode == 128 + 11, r.stdout + r.stderr
    after = ticks_after(r.stdout, "rank 0: faulting")
    assert after.count("rank 0: tick") <= 1 and "rank 1: done" in after, r.stdout
    assert "application fault in" in r.stderr and "(rank 0, on CPU 1)" in r.stderr, r.stderr
    assert "rank 0 (CPU 1) killed by signal 11 (SIGSEGV); 1 rank still running" in r.stderr, \
        r.stderr


def test_a_ranks_thread_storm_leaves_the_other_ranks_their_threads():
    """The node's 64 threads are shared out as its cores are: a rank that
    makes threads until it can make no more stops at its share (32 with 2
    ranks of 2 cores: its first and 31 more), and the other rank can still
    make its own.  One rank could take the whole table."""
    r = run_node(program("percore-glibc"), "storm",
                 extra=["--smp", "4", "--ranks", "2", "-v"], timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert sorted(r.stdout.splitlines()) == [
        "rank 0: made 31 threads, then: Resource temporarily unavailable",
        "rank 1: made 1 thread"], r.stdout


def test_a_ranks_thread_cannot_move_to_another_ranks_core():
    """sched_setaffinity moves a rank's thread among its own cores only: to
    the next rank's first core it says EINVAL and the thread stays."""
    r = run_node(program("percore-glibc"), "pin", extra=["--smp", "6", "--ranks", "2"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert sorted(r.stdout.splitlines()) == [
        "rank 0: cpu 3: Invalid argument, on cpu 1; cpu 2: moved, on cpu 2",
        "rank 1: cpu 0: Invalid argument, on cpu 4; cpu 5: moved, on cpu 5"], r.stdout


def test_signals_stay_in_their_rank():
    r = run_node(program("percore-musl"), "signals", extra=["--smp", "2", "--ranks", "2", "-v"])
    assert r.returncode == 0, r.stdout + r.stderr
    # A rank's own signal reaches its handler; another rank's pid is no
    # process of its own and its tid no thread of its own (ESRCH: tkill
    # used to find the other rank's thread and kill it); each rank has an
    # alarm of its own.
    assert sorted(r.stdout.splitlines()) == [
        f"rank {i}: SIGUSR1 taken; kill({(i + 1) % 2 + 1}, SIGTERM): No such process; "
        "tkill: No such process; alarm: set" for i in range(2)], r.stdout


def test_a_futex_wake_reaches_only_its_own_ranks_waiters():
    """The futex queue was keyed by address alone, the same in every rank:
    rank 0's wake of its own word woke rank 1's wait on its word at the
    same address (and counted it)."""
    r = run_node(program("percore-glibc"), "futex", extra=["--smp", "2", "--ranks", "2", "-v"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert sorted(r.stdout.splitlines()) == [
        "rank 0: futex wake woke 0",
        "rank 1: futex wait Connection timed out after more than 1.5 s"], r.stdout


def test_a_rank_that_would_wait_for_ever_is_ended_alone():
    """A single thread's wait that nothing can end is a deadlock the kernel
    ends with a report (never a hang).  It counted the node's threads, the
    other ranks' too, which cannot wake it: the rank waited for ever."""
    r = run_node(program("percore-musl"), "deadlock", "1",
                 extra=["--smp", "2", "--ranks", "2", "-v"], timeout=60)
    assert r.returncode == 128 + 9, r.stdout + r.stderr
    assert sorted(r.stdout.splitlines()) == ["rank 0: after", "rank 0: before"], r.stdout
    assert "would wait for ever in a futex wait: no other thread, no timer and nothing else " \
        "can end it (deadlock); ended" in r.stderr, r.stderr
    assert "rank 1 (CPU 1) killed by signal 9 (SIGKILL); 1 rank still running" in r.stderr


def alarm_counts(out, ranks, secs=1.5):
    """percore timers: each rank's SIGALRMs, checked against its own period
    ((rank + 1) * 50 ms): at most one more than its period allows (another
    rank's signals on top would be more), at least a third of that (TCG on
    a loaded host can be late; periods missed while one is pending are
    one signal)."""
    got = {}
    for line in out.splitlines():
        m = re.fullmatch(r"rank (\d+): every (\d+) ms, (computing|waiting): (\d+) alarms; "
                         r"getitimer interval (\d+) ms", line)
        assert m, out
        rank, every, alarms, interval = (int(m.group(i)) for i in (1, 2, 4, 5))
        assert every == interval == (rank + 1) * 50, line
        assert m.group(3) == ("waiting" if rank % 2 else "computing"), line
        most = int(secs * 1000 / every) + 1
        assert most // 3 <= alarms <= most, line
        got[rank] = alarms
    assert sorted(got) == list(ranks), out
    return got


@pytest.mark.parametrize("cpus,ranks", [(3, 3), (4, 2)])
def test_each_rank_has_interval_timers_of_its_own(cpus, ranks):
    """Each rank's periodic timer rings for it alone, on its first core,
    while it computes and while it waits in sigsuspend (with 2 cores a rank,
    rank 1's first is CPU 2).  The timers were the node's: setitimer said
    ENOSYS to a rank."""
    r = run_node(program("percore-musl"), "timers",
                 extra=["--smp", str(cpus), "--ranks", str(ranks), "-v"])
    assert r.returncode == 0, r.stdout + r.stderr
    alarm_counts(r.stdout, range(ranks))


def test_an_alarm_with_no_handler_ends_its_rank_alone():
    r = run_node(program("percore-glibc"), "alarmkill", "1",
                 extra=["--smp", "3", "--ranks", "3", "-v"])
    assert r.returncode == 128 + 14, r.stdout + r.stderr
    assert sorted(r.stdout.splitlines()) == ["rank 0: after", "rank 0: before", "rank 2: after",
                                             "rank 2: before"], r.stdout
    assert "rank 1 (CPU 1) killed by signal 14 (SIGALRM); 2 ranks still running" in r.stderr


def test_each_rank_has_portals_of_its_own_and_nothing_more():
    """Each rank its own interface and pid (16 + rank); a message between two
    ranks of the node lands in the receiver's memory, its event naming the
    receiver's own address; one rank handed the other's handles, or buffers
    that are not its own memory (the kernel's direct map, past its region,
    the whole address space), gets PTL_ARG_INVALID (1), and the other's
    data and handles stay as they were.  A NIC on a hub of its own."""
    prog = os.path.join(ROOT, "build", "portals", "kernel", "rankiso-musl")
    r = run_node(prog, extra=["--smp", "2", "--ranks", "2", "--nic", "virtio", "--nid", "7",
                              "-v"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "UNEXPECTED" not in r.stdout, r.stdout
    assert "rank 0: rankiso ok" in r.stdout and "rank 1: rankiso ok" in r.stdout, r.stdout
    for what in ("rank 0's NI: PtlMDBind", "rank 0's secret MD: PtlPut from it",
                 "rank 0's EQ: PtlEQGet", "rank 0's ME: PtlMEUnlink", "MD on the direct map",
                 "ME iovec with a direct-map piece", "NIInit as rank 0's pid"):
        assert re.search(rf"^rank 1: {re.escape(what)} +1$", r.stdout, re.M), r.stdout
    assert re.search(r"^rank 0: secret intact +1$", r.stdout, re.M), r.stdout
    assert re.search(r"^rank 0: greeting's event start is my &inbox +1$", r.stdout, re.M)

def test_nine_ranks_with_portals_on_one_node():
    """Every rank of a 9-CPU node has an interface of its own (the library had
    8, the kernel's included: ranks 7 and 8 got PTL_FAIL and the ring hung).
    Each rank puts 100000 bytes to the next and checks what the previous sent."""
    prog = os.path.join(ROOT, "build", "portals", "kernel", "rankring-musl")
    r = run_node(prog, mem="128M", timeout=90,
                 extra=["--smp", "9", "--ranks", "9", "--nic", "virtio", "--nid", "7"])
    assert r.returncode == 0, r.stdout + r.stderr
    for rank in range(9):
        assert f"rank {rank}: from rank {(rank - 1) % 9} ok" in r.stdout, r.stdout + r.stderr


def test_ranks_take_messages_into_memory_mapped_prot_none_then_opened():
    """A rank's buffer in memory committed in a reservation (mmap PROT_NONE,
    then mprotect: what pthread_create does for a thread's stack) is the
    rank's own: Portals takes it, the data lands there and the event's start
    is the buffer's own address (it was PTL_ARG_INVALID with ranks)."""
    prog = os.path.join(ROOT, "build", "portals", "kernel", "rankring-musl")
    r = run_node(prog, "piece", mem="128M", timeout=90,
                 extra=["--smp", "2", "--ranks", "2", "--nic", "virtio", "--nid", "7"])
    assert r.returncode == 0, r.stdout + r.stderr
    for rank in range(2):
        assert f"rank {rank}: from rank {(rank - 1) % 2} ok" in r.stdout, r.stdout + r.stderr
