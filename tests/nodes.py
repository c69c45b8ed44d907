"""Helpers for tests that run programs on Tern nodes."""
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN_NODE = os.path.join(ROOT, "qemu", "run-node")
KERNEL = os.path.join(ROOT, "build", "tern.elf")


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
