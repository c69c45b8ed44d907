"""The kernel's memcpy (kernel/lib/string.c), built for the host under other
names with the kernel's flags: each way it copies (64-byte blocks under a
binary translator, `rep movsq` elsewhere; cpu_init chooses) gives exactly
the source's bytes for every length to 300 and every alignment, and writes
nothing outside the destination (tests/kernel/string_check.c)."""
import os
import subprocess

from nodes import ROOT

NAMES = ["memcpy", "memmove", "memset", "memcmp", "strlen", "strnlen", "strcmp", "strncmp",
         "strchr", "strlcpy"]


def test_kernel_memcpy_both_ways(tmp_path):
    obj = tmp_path / "string.o"
    flags = ["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror"]
    subprocess.run(["gcc", *flags, "-ffreestanding", "-fno-builtin", "-mgeneral-regs-only",
                    "-I", os.path.join(ROOT, "kernel", "include"),
                    *(f"-D{n}=k_{n}" for n in NAMES),
                    "-c", os.path.join(ROOT, "kernel", "lib", "string.c"), "-o", str(obj)],
                   check=True, capture_output=True, text=True, timeout=120)
    exe = tmp_path / "string_check"
    subprocess.run(["gcc", *flags, os.path.join(ROOT, "tests", "kernel", "string_check.c"),
                    str(obj), "-o", str(exe)], check=True, capture_output=True, text=True,
                   timeout=120)
    r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "memcpy ok: 38528 copies" in r.stdout, r.stdout + r.stderr
