"""Signals reach threads that compute in user mode on cores of their own
(docs/kernel.md, "Threads"): the sender's core interrupts the chosen
thread's core, and the interrupt's return to user mode delivers.  Before,
such a thread saw its signal only at its next system call.

tests/programs/sigcompute.c: every thread (main and N workers) spins
without system calls, holding known values in all general registers, the
flags and xmm0-15, until the handler sets a flag; a thread that sees no
signal gives up after 20 s and says so.  What these check is what the
program prints and how it ends, as on Linux."""
import pytest

from nodes import program, run_node

CASES = [("2", "1"), ("4", "3")]           # CPUs of the node, workers beside main


@pytest.mark.parametrize("libc", ["glibc", "musl"])
@pytest.mark.parametrize("smp,workers", CASES)
def test_pthread_kill_reaches_a_worker_computing_on_another_core(libc, smp, workers):
    r = run_node(program(f"sigcompute-{libc}"), "thread", workers, extra=["--smp", smp])
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines() == [
        "thread: every computing thread saw the handler's flag: yes",
        "handler ran 1 time(s), in the worker it was sent to",
        "registers and flags kept: yes"], r.stdout + r.stderr


@pytest.mark.parametrize("libc", ["glibc", "musl"])
@pytest.mark.parametrize("smp,workers", CASES)
@pytest.mark.parametrize("kind", ["process", "alarm"])
def test_a_process_signal_blocked_by_main_is_taken_once_by_a_computing_worker(
        libc, smp, workers, kind):
    """kill(getpid()) and an interval timer's SIGALRM, main blocking them:
    one of the computing workers runs the handler, once."""
    r = run_node(program(f"sigcompute-{libc}"), kind, workers, extra=["--smp", smp])
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines() == [
        f"{kind}: every computing thread saw the handler's flag: yes",
        "handler ran 1 time(s), in a worker",
        "registers and flags kept: yes"], r.stdout + r.stderr


@pytest.mark.parametrize("libc", ["glibc", "musl"])
@pytest.mark.parametrize("smp,workers", CASES)
def test_a_fatal_signal_ends_a_program_whose_threads_all_compute(libc, smp, workers):
    """SIGTERM to the process, main blocking it, every thread computing: the
    program ends by SIGTERM while they compute (no thread gives up)."""
    r = run_node(program(f"sigcompute-{libc}"), "fatal", workers, extra=["--smp", smp])
    assert r.returncode == 128 + 15, r.stdout + r.stderr
    assert "killed by signal 15 SIGTERM" in r.stderr
    assert r.stdout == "", r.stdout


@pytest.mark.parametrize("libc", ["glibc", "musl"])
@pytest.mark.parametrize("smp,workers", CASES)
def test_computing_workers_take_a_storm_of_timer_signals_intact(libc, smp, workers):
    """A 2 ms interval timer, main blocking SIGALRM: the workers take at
    least 200 signals while they compute, every one resuming the loop with
    its registers, flags and xmm registers as they were."""
    r = run_node(program(f"sigcompute-{libc}"), "storm", workers, extra=["--smp", smp])
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines() == [
        "storm: every computing thread saw the handler's flag: yes",
        "handler ran at least 200 times, the last in a worker",
        "registers and flags kept: yes"], r.stdout + r.stderr
