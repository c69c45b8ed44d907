"""Unmodified static Linux programs on the Tern kernel: output, arguments,
environment, exit status, libc behaviour."""
import os
import signal
import subprocess
import time

import pytest

from nodes import RUN_NODE, program, run_node

HELLOS = ["hello-musl", "hello-glibc", "hello-musl-pie", "hello-glibc-pie"]


@pytest.mark.parametrize("name", HELLOS)
def test_argv_and_envp_arrive_intact(name):
    args = ["plain", "with space", 'quote"inside', "comma,separated", "", "back\\slash"]
    env = ["FOO=bar", "EMPTY=", "SPACES=a b  c"]
    r = run_node(program(name), *args, env=env)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == f"argc={len(args) + 1}"
    assert lines[1] == f"argv[0]={program(name)}"
    for i, a in enumerate(args, start=1):
        assert lines[1 + i] == f"argv[{i}]={a}"
    assert lines[2 + len(args):] == [f"envp[{i}]={e}" for i, e in enumerate(env)]


@pytest.mark.parametrize("libc", ["glibc", "musl"])
def test_stdlib_output_matches_native_linux(libc):
    """printf, malloc/free of many sizes, math (x87/SSE/AVX2): the
    deterministic part of the output equals the same binary's on Linux."""
    prog = program(f"stdlib-{libc}")
    native = subprocess.run([prog], capture_output=True, text=True, check=True).stdout
    r = run_node(prog)
    assert r.returncode == 0, r.stderr
    det = lambda out: out.split("--- time")[0]  # noqa: E731
    assert det(r.stdout) == det(native)
    assert "avx2 path agrees" in r.stdout or "avx2" not in native


@pytest.mark.parametrize("libc", ["glibc", "musl"])
def test_time_and_sleep(libc):
    r = run_node(program(f"stdlib-{libc}"))
    assert r.returncode == 0, r.stderr
    fields = dict(l.split(" ", 1) for l in r.stdout.split("--- time\n")[1].splitlines())
    slept = float(fields["slept"].split()[0])
    assert 20.0 <= slept < 2000.0
    native = subprocess.run(["date", "+%s"], capture_output=True, text=True).stdout
    assert abs(int(fields["realtime"]) - int(native)) < 120
    assert abs(int(fields["time()"]) - int(fields["realtime"])) <= 1


@pytest.mark.parametrize("status", [0, 3, 255])
@pytest.mark.parametrize("libc", ["glibc", "musl"])
def test_exit_status_propagates(status, libc):
    r = run_node(program(f"exitcode-{libc}"), str(status))
    assert r.returncode == status, r.stderr


@pytest.mark.parametrize("libc", ["glibc", "musl"])
def test_signal_handlers_and_default_actions(libc):
    r = run_node(program(f"signals-{libc}"))
    assert r.stdout.splitlines() == [
        "handler ran 1 time(s) for signal 10; x = 5.00",
        "while blocked: 1",
        "after unblock: 2",
        "ignored SIGUSR2 survived",
        "stack limit 2048 KiB",
    ]
    assert r.returncode == 128 + 15
    assert "killed by signal 15 SIGTERM" in r.stderr


def test_stack_and_heap_sizes_from_the_command_line():
    r = run_node(program("signals-musl"), extra=["--stack", "8M"])
    assert "stack limit 8192 KiB" in r.stdout
    r = run_node(program("memory-musl"), "touch", "90", extra=["--heap", "8M"])
    assert r.returncode == 0, r.stderr
    free_kib = int(r.stdout.split("free ")[1].split()[0])
    assert 7 * 1024 < free_kib <= 8 * 1024
    r = run_node(program("memory-musl"), "over", extra=["--heap", "8M"])
    assert "malloc(free + 8 MiB) = NULL" in r.stdout


def test_cpu_model_from_the_command_line():
    """run-node --cpu noavx (as qemu/cluster up --cpu): no usable AVX on the node;
    the default model offers it."""
    r = run_node(program("ranks-musl"), "vdirty", extra=["--cpu", "noavx"])
    assert r.returncode == 0 and "dirtied vector registers" in r.stdout, r.stdout + r.stderr
    assert "AVX" not in r.stdout, r.stdout
    r = run_node(program("ranks-musl"), "vdirty")
    assert "dirtied vector registers (AVX too)" in r.stdout, r.stdout + r.stderr


def test_unknown_system_call_reported_once(tmp_path):
    console = tmp_path / "console.log"
    r = run_node(program("badptr-musl"), extra=["--console", str(console)])
    assert r.returncode == 0
    log = console.read_text()
    assert log.count("system call 400 is not implemented") == 1
    assert log.count("system call 100000 does not exist") == 1


def test_all_output_arrives_when_a_program_writes_and_exits_at_once():
    """3 MB in uneven writes, then _exit: nothing may be lost on the way out
    (the node drains its serial ports before the VM ends)."""
    r = subprocess.run([program("bigout-musl"), "3000000"], capture_output=True)
    native = r.stdout
    r = run_node(program("bigout-musl"), "3000000")
    assert r.returncode == 0, r.stderr
    assert r.stdout.encode() == native
    assert r.stderr == "wrote 3000000 bytes\n"


def test_tsc_frequency_agrees_across_boots():
    """Every boot measures the same TSC frequency (under TCG the guest's TSC
    is the host's): the kernel's clocks, sleeps and time-outs all rest on it.
    Nine boots, three at a time (a busy host is where it went wrong): before
    the bracketed PIT windows of kernel/time.c, boots on a host with a load
    of 16-26 found 9 MHz to 8.8 GHz for a 2.3 GHz TSC."""
    import re
    from concurrent.futures import ThreadPoolExecutor

    def boot(_):
        r = run_node(program("hello-musl"), extra=["-v", "--tcg"])
        assert r.returncode == 0, r.stderr
        m = re.search(r"TSC (\d+) MHz", r.stdout + r.stderr)
        assert m, r.stdout + r.stderr
        return int(m[1])
    with ThreadPoolExecutor(3) as ex:
        mhz = list(ex.map(boot, range(9)))
    assert max(mhz) <= min(mhz) * 1.03, mhz


def test_a_node_stopped_as_it_starts_leaves_nothing(tmp_path):
    """qemu/run-node is stopped with SIGTERM (tests and cluster scripts do)
    the moment its run folder appears, the moment its socket does, and at
    moments through QEMU's boot.  Each time the folder (console log, socket)
    goes and no QEMU is left.  A SIGTERM between the folder's making and
    QEMU's start, before run-node had set its handler, left the folder
    behind."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp))

    def folder():
        return next(iter(tmp.iterdir()), None)

    def socket_there():
        f = folder()
        return f is not None and (f / "hostlink.sock").exists()

    def after(seconds):
        t = time.monotonic() + seconds
        return lambda: time.monotonic() >= t

    cases = [("its folder appears", lambda: folder)] * 3 + \
        [("its socket appears", lambda: socket_there)] * 3 + \
        [(f"{ms} ms", lambda ms=ms: after(ms / 1000)) for ms in (300, 600, 1000)]
    for what, predicate in cases:
        ready = predicate()
        # A program that computes until stopped (it gives up after seconds).
        p = subprocess.Popen([RUN_NODE, "--mem", "64M", "--timeout", "30",
                              program("sigcompute-musl"), "yod", "1"], env=env,
                             stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
        try:
            give_up = time.monotonic() + 20
            while not ready() and p.poll() is None and time.monotonic() < give_up:
                time.sleep(0.0002)
            p.send_signal(signal.SIGTERM)
            p.wait(20)
        finally:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        # QEMU runs in run-node's session: none of it may be left.
        left = subprocess.run(["pgrep", "-s", str(p.pid)], capture_output=True, text=True)
        assert left.stdout.strip() == "", f"SIGTERM when {what}: left {left.stdout}"
        assert list(tmp.iterdir()) == [], f"SIGTERM when {what}: left {list(tmp.iterdir())}"
