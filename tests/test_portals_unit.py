"""Portals 4 unit and conformance tests.

Builds the Portals library, its in-process test host (simulated nodes on a
lossy in-memory wire, simulated time) and the C test programs in
tests/portals/, then runs each program: it must exit 0 and print PASS.
No network, no QEMU.
"""
import pathlib
import subprocess

import pytest

from nodes import make

ROOT = pathlib.Path(__file__).resolve().parent.parent
BUILD = ROOT / "build" / "portals"
TESTS = sorted(p.stem for p in (ROOT / "tests" / "portals").glob("test_*.c"))


LIB_SRCS = sorted((ROOT / "portals" / "lib").glob("*.c"))


@pytest.fixture(scope="session", autouse=True)
def built():
    # Exactly the library, its freestanding build, the test host and these
    # tests (not the other Portals hosts, which have their own tests).
    targets = ["build/portals/libportals.a", "build/portals/libportals-test.a",
               "build/portals/libportals-test-san.a"]
    targets += [f"build/portals/kcheck/{s.stem}.o" for s in LIB_SRCS]
    targets += [f"build/portals/tests/{t}" for t in TESTS]
    targets += [f"build/portals/tests/san/{t}" for t in TESTS]
    make(*targets, timeout=600)


@pytest.mark.parametrize("variant", ["plain", "sanitized"])
@pytest.mark.parametrize("name", TESTS)
def test_program(name, variant):
    """Each program also runs built with AddressSanitizer and UBSan, so a
    write outside any buffer (e.g. from a hostile frame) fails the test."""
    exe = BUILD / "tests" / name if variant == "plain" else \
        BUILD / "tests" / "san" / name
    r = subprocess.run([str(exe)], cwd=ROOT, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, f"{name} failed:\n{r.stdout}\n{r.stderr}"
    assert f"{name}: PASS" in r.stdout


def test_library_needs_only_host_interface():
    """The library objects may only call the host interface and the five
    string functions the kernel provides (no malloc, printf, errno...)."""
    allowed = {"memcpy", "memset", "memmove", "memcmp", "strlen"}
    objs = sorted((BUILD / "lib").glob("*.o"))
    assert objs
    undefined = set()
    for o in objs:
        out = subprocess.run(["nm", "-u", str(o)], capture_output=True,
                             text=True, check=True).stdout
        undefined |= {line.split()[-1] for line in out.splitlines() if line}
    defined = set()
    for o in objs:
        out = subprocess.run(["nm", "--defined-only", str(o)],
                             capture_output=True, text=True, check=True).stdout
        defined |= {line.split()[-1] for line in out.splitlines() if line}
    external = undefined - defined
    bad = {s for s in external if s not in allowed
           and not s.startswith("ptl_host_")}
    assert not bad, f"library uses non-host symbols: {sorted(bad)}"


def test_library_builds_freestanding():
    """Every library file compiled with the kernel's freestanding flags."""
    for s in LIB_SRCS:
        assert (BUILD / "kcheck" / (s.stem + ".o")).exists(), s.name


def test_only_atomic_fp_uses_floating_point():
    """Only atomic_fp.o may contain SSE floating-point arithmetic."""
    for o in sorted((BUILD / "lib").glob("*.o")):
        dis = subprocess.run(["objdump", "-d", str(o)], capture_output=True,
                             text=True, check=True).stdout
        fp = any(ins in dis for ins in ("addss", "addsd", "mulss", "mulsd",
                                        "ucomiss", "ucomisd", "comiss",
                                        "comisd"))
        if o.stem == "atomic_fp":
            assert fp
        else:
            assert not fp, f"{o.name} contains floating-point code"
