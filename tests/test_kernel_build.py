"""The kernel's build follows its own flags: kernel/Makefile.inc sets how every
kernel object is compiled (since 2026-11-29 with link-time optimization), so
a change there must rebuild them all.  Before, only the link depended on it:
a tree built earlier kept its old objects after a change of flags, and a
kernel measured as "after" could be the old code.  `make -n -W FILE` says what
make would do were FILE new, without touching anything."""
import os
import subprocess

from nodes import ROOT

OBJECTS = ["kernel/lib/string.c", "kernel/net/netdev.c", "portals/lib/rx.c", "common/sha256.c",
           "kernel/arch/entry.S"]


def _dry_run(*extra):
    r = subprocess.run(["make", "-n", *extra, "build/tern.elf"], cwd=ROOT, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_a_change_of_kernel_flags_rebuilds_every_kernel_object():
    out = _dry_run("-W", "kernel/Makefile.inc")
    for src in OBJECTS:
        assert f"-c {src} " in out, f"{src} would not be rebuilt:\n{out[-2000:]}"
    assert "-o build/tern.elf" in out, out[-2000:]


def test_the_kernel_links_whole():
    """The link runs the code generation of the whole kernel (-flto) with the
    kernel's own flags: without them the compiler's defaults (red zone, SSE)
    would apply to kernel code at that step."""
    out = _dry_run("-W", "kernel/Makefile.inc")
    link = [line for line in out.splitlines() if "-o build/tern.elf" in line]
    assert link, out[-2000:]
    for flag in ("-flto", "-mno-red-zone", "-mgeneral-regs-only", "-mcmodel=kernel"):
        assert flag in link[0], link[0]
