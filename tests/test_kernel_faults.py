"""Faults, bad pointers and bad programs: a clear report and a non-zero
status, never a dead kernel."""
import os
import shutil
import subprocess

import pytest

from nodes import ROOT, program, run_node

FAULTS = [
    ("null-read", 11, "read from NULL pointer, address 0x0"),
    ("null-write", 11, "write to NULL pointer, address 0x8"),
    ("kernel-write", 11, "write to kernel memory at 0xffffffff80100000"),
    ("kernel-read", 11, "read from kernel memory at 0xffff800000001000"),
    ("stack-overflow", 11, "stack guard page (stack overflow"),
    ("divide", 8, "divide error"),
    ("illegal", 4, "invalid opcode"),
    ("privileged", 11, "general protection fault"),
]


@pytest.mark.parametrize("what,sig,text", FAULTS)
def test_fault_is_reported_and_fatal(what, sig, text):
    r = run_node(program("fault-glibc"), what)
    assert r.returncode == 128 + sig, r.stderr
    assert r.stdout == f"committing {what}\n"
    assert text in r.stderr
    for reg in ("rip", "rax", "rsp", "r15", "fault address"):
        assert reg in r.stderr
    assert "in the program image" in r.stderr


def test_abort_kills_with_sigabrt():
    r = run_node(program("fault-musl"), "abort")
    assert r.returncode == 134
    assert "SIGABRT" in r.stderr


@pytest.mark.parametrize("libc", ["glibc", "musl"])
def test_bad_pointers_get_efault(libc):
    r = run_node(program(f"badptr-{libc}"))
    assert "FAIL" not in r.stdout, r.stdout
    assert r.stdout.endswith("write still works\nall ok\n")
    assert r.returncode == 0


@pytest.mark.parametrize("libc", ["glibc", "musl"])
def test_ninety_percent_of_free_memory(libc):
    r = run_node(program(f"memory-{libc}"), "touch", "90")
    assert r.returncode == 0, r.stderr
    assert "pages: ok" in r.stdout


@pytest.mark.parametrize("libc", ["glibc", "musl"])
def test_too_much_memory_gives_null_not_a_crash(libc):
    r = run_node(program(f"memory-{libc}"), "over")
    assert r.stdout.splitlines() == [
        "malloc(2 x total) = NULL", "malloc(free + 8 MiB) = NULL",
        "malloc(1 MiB) afterwards = non-NULL"]
    assert r.returncode == 0


@pytest.mark.parametrize("libc", ["glibc", "musl"])
def test_malloc_churn(libc):
    r = run_node(program(f"memory-{libc}"), "churn")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout == "churn: ok\n"


def make_bad(tmp_path, name, data):
    p = tmp_path / name
    p.write_bytes(data)
    return str(p)


def test_load_errors(tmp_path):
    hello = open(program("hello-musl"), "rb").read()
    elf32 = bytearray(hello)
    elf32[4] = 1
    # the first two program headers swapped: segments no longer ascend
    swapped = bytearray(hello)
    phoff = int.from_bytes(hello[32:40], "little")
    swapped[phoff:phoff + 112] = hello[phoff + 56:phoff + 112] + hello[phoff:phoff + 56]
    dynamic = str(tmp_path / "dynamic")
    src = os.path.join(ROOT, "tests", "programs", "exitcode.c")
    subprocess.run(["gcc", "-o", dynamic, src], check=True)
    cases = [
        (make_bad(tmp_path, "text", b"#!/bin/sh\necho hi\n" * 10), "not an ELF file"),
        (make_bad(tmp_path, "empty", b""), "not an ELF file (only 0 bytes)"),
        (make_bad(tmp_path, "truncated", hello[:3000]), "truncated"),
        (make_bad(tmp_path, "headers-only", hello[:64]), "truncated or corrupt program headers"),
        (make_bad(tmp_path, "elf32", bytes(elf32)), "32-bit"),
        (make_bad(tmp_path, "swapped", bytes(swapped)), "PT_LOAD segments must ascend"),
        (dynamic, "dynamically linked"),
    ]
    for path, text in cases:
        r = run_node(path)
        assert r.returncode == 126, (path, r.stderr)
        assert text in r.stderr, (path, r.stderr)
    r = run_node(str(tmp_path / "missing"))
    assert r.returncode == 126 and "no such readable file" in r.stderr
