"""Helpers for tests that run programs on Tern nodes, and the build lock."""
import fcntl
import os
import signal
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN_NODE = os.path.join(ROOT, "qemu", "run-node")
KERNEL = os.path.join(ROOT, "build", "tern.elf")


def make(*args, timeout=900):
    """Runs `make ARGS` in the repository under the suite's build lock and
    fails the test if make does: tests of several workers
    (tests/run_suite.py) may build the same target (linux-node, portals) at
    once, and two makes writing one file break it."""
    os.makedirs(os.path.join(ROOT, "build"), exist_ok=True)
    with open(os.path.join(ROOT, "build", ".make-lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        r = subprocess.run(["make", "-s", "-C", ROOT, *args], capture_output=True, text=True,
                           timeout=timeout)
    assert r.returncode == 0, f"make {' '.join(args)}: {r.returncode}\n{r.stdout[-3000:]}{r.stderr[-3000:]}"
    return r


def stop_group(p, grace=10):
    """Stops the process group a test started p in (start_new_session):
    SIGTERM first, so that run-node stops QEMU and removes its run folder,
    then SIGKILL after grace seconds.  Returns once p is reaped."""
    if p.poll() is not None:
        return
    os.killpg(p.pid, signal.SIGTERM)
    try:
        p.wait(grace)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()


def program(name):
    return os.path.join(ROOT, "build", "programs", name)


def run_node(prog, *args, env=(), mem="64M", timeout=120, extra=(), input=None):
    """Runs a program on one node; returns the CompletedProcess (text).
    input: the program's stdin (a str); none: end of file at once."""
    cmd = [RUN_NODE, "--mem", mem, "--timeout", str(timeout - 10), *extra]
    for e in env:
        cmd += ["-e", e]
    cmd += [prog, *args]
    stdin = {"input": input} if input is not None else {"stdin": subprocess.DEVNULL}
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **stdin)
