"""Ranks per core on one node (issue 17): `qemu/run-node --ranks K` (kernel
ranks=K) runs the program K times, each rank a process of its own (its own
part of the memory, its own page tables) on a core of its own.  What a user
sees: each rank's output with its rank, pid and core; a rank that writes
past its own memory faults alone while the others' data stays intact; more
ranks than cores refused.  Jobs (yod -ppn) are not built on this yet
(docs/kernel.md, "Ranks per core")."""
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


def test_a_rank_cannot_make_threads():
    r = run_node(program("percore-glibc"), "thread", extra=["--smp", "2", "--ranks", "2", "-v"])
    assert r.returncode == 0, r.stderr
    assert sorted(r.stdout.splitlines()) == [
        f"rank {i}: pthread_create: Resource temporarily unavailable" for i in range(2)]
    assert "ranks per core have one thread each (EAGAIN)" in r.stderr


def test_signals_stay_in_their_rank():
    r = run_node(program("percore-musl"), "signals", extra=["--smp", "2", "--ranks", "2", "-v"])
    assert r.returncode == 0, r.stdout + r.stderr
    # A rank's own signal reaches its handler; another rank's pid is no
    # process of its own and its tid no thread of its own (ESRCH: tkill
    # used to find the other rank's thread and kill it); the node's interval
    # timers are refused (they rang on CPU 0, for rank 0).
    assert sorted(r.stdout.splitlines()) == [
        f"rank {i}: SIGUSR1 taken; kill({(i + 1) % 2 + 1}, SIGTERM): No such process; "
        "tkill: No such process; alarm: Function not implemented" for i in range(2)], r.stdout
    assert "not with ranks per core (ENOSYS)" in r.stderr


def test_portals_is_refused_to_ranks():
    """The application's Portals interface is one pid whose buffers the
    library reaches through the calling CPU's page tables: ranks get no
    Portals (as a node without a NIC gives none) rather than reaching each
    other's memory through it.  A NIC on a hub of its own."""
    nonic = os.path.join(ROOT, "build", "portals", "kernel", "nonic-musl")
    r = run_node(nonic, extra=["--smp", "2", "--ranks", "2", "--nic", "virtio", "--nid", "7",
                               "-v"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("PtlInit = 5\n") == 2              # PTL_FAIL, in both ranks
    assert r.stdout.count("nonic: ok") == 2
    assert "called Portals: Portals for ranks per core is not built (PTL_FAIL)" in r.stderr
