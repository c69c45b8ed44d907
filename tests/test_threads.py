"""Threads on many-core nodes (issue 17): clone/clone3 as pthread_create,
std::thread, libgomp and the Go runtime use them; one thread per core, the
node's last core shared by threads beyond that; futex waits and wakes
across cores; a fault in any thread ends the rank and names the thread.
The programs are ordinary static Linux programs; what they print is what
they print on Linux (the core numbers aside, which follow Tern's policy,
docs/kernel.md "Threads")."""
import os
import re

import pytest

from nodes import program, run_node
from test_kernel_abi import SOURCES, build, compiler, go_program


def cores(out):
    line = [l for l in out.splitlines() if l.startswith("cores:")]
    assert line, out
    return [int(c) for c in line[0].split()[1:]]


@pytest.mark.parametrize("libc", ["glibc", "musl"])
def test_pthreads_sum_an_array_each_on_its_own_core(libc):
    r = run_node(program(f"threads-{libc}"), "sum", "4", extra=["--smp", "4"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == "4 threads: sum equals the serial sum"
    assert cores(r.stdout) == [0, 1, 2, 3]


@pytest.mark.parametrize("libc", ["glibc", "musl"])
def test_a_call_without_the_lock_checks_its_pointer_while_another_thread_maps(libc):
    """One thread reserves, commits and releases memory in a loop while
    another calls clock_gettime with a pointer into committed reserved memory
    (where glibc puts thread stacks).  The calls a thread makes without the
    serial lock checked such a pointer against a list the other thread was
    moving about: about 10,000 of 1.1 million calls failed with EFAULT (and
    sched_getcpu gave -1 in test_pthreads_sum_an_array_each_on_its_own_core
    now and then).  kernel/mem/reserve.c now lets them see it only whole."""
    r = run_node(program(f"threads-{libc}"), "maps", "3000", extra=["--smp", "2"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"maps: [1-9]\d* calls, 0 failed", r.stdout), r.stdout


def test_more_threads_than_cores_share_the_last_core():
    r = run_node(program("threads-glibc"), "sum", "8", extra=["--smp", "4"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == "8 threads: sum equals the serial sum"
    assert cores(r.stdout) == [0, 1, 2, 3, 3, 3, 3, 3]


def test_threads_on_a_one_cpu_node_take_turns():
    r = run_node(program("threads-musl"), "sum", "4")
    assert r.returncode == 0, r.stderr
    assert cores(r.stdout) == [0, 0, 0, 0]


@pytest.mark.parametrize("smp", ["1", "2"])
def test_a_timed_futex_wait_in_a_thread_times_out(smp):
    r = run_node(program("threads-glibc"), "timed", extra=["--smp", smp])
    assert r.returncode == 0, r.stderr
    assert r.stdout == "timed wait in a thread: ETIMEDOUT after at least 200 ms: yes\n"


@pytest.mark.parametrize("smp", ["1", "2"])
def test_condition_variable_ping_pong_across_cores(smp):
    """Each round trip is two futex wakes from one thread to the other."""
    r = run_node(program("threads-glibc"), "pingpong", "500", extra=["--smp", smp])
    assert r.returncode == 0, r.stderr
    assert r.stdout == "500 round trips between two threads\n"


def test_a_fault_in_a_thread_ends_the_program_and_names_the_thread():
    r = run_node(program("threads-glibc"), "fault", extra=["--smp", "4"])
    assert r.returncode == 128 + 11, r.stderr
    assert ("*** application fault in %s (thread 2, on CPU 1): page fault: write to NULL "
            "pointer, address 0x10" % program("threads-glibc")) in r.stderr
    assert "not reached" not in r.stdout


@pytest.mark.parametrize("libc", ["glibc", "musl"])
def test_each_thread_has_its_own_signal_mask(libc):
    """A worker blocks SIGUSR1 and SIGTERM: main still takes SIGUSR1 sent to the
    process and dies of SIGTERM; pthread_kill's SIGUSR2 reaches the worker.  (One
    process-wide mask blocked both for main, and SIGUSR2 was taken by main.)"""
    r = run_node(program(f"threads-{libc}"), "sigmask", extra=["--smp", "2"])
    assert r.stdout.splitlines() == [
        "main blocks SIGUSR1: no", "SIGUSR1 to the process taken by main",
        "SIGUSR2 to the worker taken by the worker", "SIGTERM to the process"], \
        r.stdout + r.stderr
    assert r.returncode == 128 + 15, r.stdout + r.stderr


def test_an_alarm_set_by_a_thread_on_another_core_rings():
    r = run_node(program("threads-glibc"), "alarm", extra=["--smp", "2"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout == "alarm set on another core rang: yes\n", r.stdout + r.stderr


def test_thread_table_full_is_eagain_and_sleepers_do_not_block_the_rest():
    """63 threads asleep in pause() (the table holds 64), then EAGAIN as
    Linux gives at its limit; exit_group ends them all."""
    r = run_node(program("threads-glibc"), "many", extra=["--smp", "4"])
    assert r.returncode == 0, r.stderr
    assert r.stdout == "created 63 threads, then: Resource temporarily unavailable\n"


@pytest.mark.parametrize("libc", ["glibc", "musl"])
def test_a_thread_is_placed_by_another_threads_setaffinity(libc):
    """pthread_create with an affinity attribute (glibc: sched_setaffinity of
    the new thread's id; libgomp does it for OMP_PROC_BIND and OMP_PLACES)
    and pthread_setaffinity_np of a thread computing on another core.  It
    said EINVAL (a thread could place only itself; libgomp: "Thread
    creation failed"), and a thread moved by an interrupt could be left
    unrun: its new core had looked while its registers were still live and
    gone back to halt.  Three runs each."""
    for _ in range(3):
        r = run_node(program(f"threads-{libc}"), "attrpin", extra=["--smp", "4"], timeout=60)
        assert r.returncode == 0, r.stdout + r.stderr
        assert r.stdout == "made on cpu 3: ran on 3; moved to cpu 2 (ok): ran on 2\n", r.stdout


@pytest.mark.parametrize("smp", ["1", "2"])
def test_the_first_thread_may_exit_before_the_others(smp):
    r = run_node(program("threads-glibc"), "mainexit", extra=["--smp", smp])
    assert r.returncode == 0, r.stderr
    assert r.stdout == "main thread leaves first\nthread two ends the program\n"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("threads")
    progs = {}
    gxx, gcc = compiler("g++"), compiler("gcc")
    if gxx:
        progs["cxx"] = str(out / "threads-cxx")
        build([gxx, "-static", "-O2", "-pthread", "-o", progs["cxx"],
               os.path.join(SOURCES, "threads.cc")])
    if gcc:
        progs["omp"] = str(out / "omp")
        build([gcc, "-static", "-O2", "-fopenmp", "-o", progs["omp"],
               os.path.join(SOURCES, "omp.c")])
    return progs


def test_std_thread_with_iostream(built):
    if "cxx" not in built:
        pytest.skip("no g++")
    r = run_node(built["cxx"], extra=["--smp", "4"])
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert sorted(lines[:4]) == [f"worker {t} done" for t in range(4)]
    assert lines[4:] == ["total matches the serial sum", "hardware_concurrency 4"]


@pytest.mark.parametrize("threads,expect", [("4", 4), (None, 4), ("8", 8)])
def test_openmp_gives_the_serial_answer(built, threads, expect):
    """Without OMP_NUM_THREADS libgomp starts one thread per core the
    affinity mask lists; 8 on 4 cores share the last."""
    if "omp" not in built:
        pytest.skip("no gcc")
    env = [f"OMP_NUM_THREADS={threads}"] if threads else []
    r = run_node(built["omp"], env=env, extra=["--smp", "4"])
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"threads {expect}, ran {expect}, sum == serial\n"


def test_go_goroutines_and_channels_on_two_cores(tmp_path):
    r = run_node(go_program(tmp_path, "goroutines"), extra=["--smp", "2"])
    assert r.returncode == 0, r.stderr
    assert r.stdout == "GOMAXPROCS 2 NumCPU 2 total 23999997\n"
