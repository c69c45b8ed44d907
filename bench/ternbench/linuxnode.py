"""Running one static program on a Linux QEMU node with the same virtual
hardware as a Tern node: the Debian kernel, an initramfs holding only the
program as /init, output on the serial console.  The fair single-node
baseline for memory and noise experiments."""
import glob
import os
import stat
import subprocess
import sys
import tempfile


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "qemu"))
from ternlib import accel  # noqa: E402  (the CPU topology qemu/run-node gives a Tern node)


def debian_kernel():
    """The Debian kernel: `make linux-node`'s uncompressed copy when there is
    one (booted through PVH, without the XZ decompression that takes about
    10 s under TCG), else the bzImage in /boot."""
    vmlinux = os.path.join(ROOT, "build", "linux-node", "vmlinux")
    if os.path.exists(vmlinux):
        return vmlinux
    kernels = sorted(glob.glob("/boot/vmlinuz-*"))
    return kernels[-1] if kernels else None


def cpio_newc(files):
    """files: list of (name, mode, data) -> bytes of a newc cpio archive."""
    out = bytearray()
    ino = 1
    for name, mode, data in files + [("TRAILER!!!", 0, b"")]:
        nb = name.encode() + b"\0"
        hdr = "070701" + "".join("%08X" % v for v in (
            ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(nb), 0))
        out += hdr.encode() + nb
        out += b"\0" * ((4 - len(out) % 4) % 4)
        out += data
        out += b"\0" * ((4 - len(out) % 4) % 4)
        ino += 1
    return bytes(out)


def run_on_linux(program, args, mem="64M", accel_args=("-accel", "tcg", "-cpu", "max"),
                 timeout=600, smp=1, env=()):
    """Boots Linux with `program` as init; returns the program's output lines.
    smp: the node's CPUs, with the topology qemu/run-node --smp gives a Tern
    node.  env: "VAR=VALUE" strings for the program; the kernel hands
    command-line words with "=" that it does not know to init as its
    environment (not those with a "." in the name: module parameters)."""
    for e in env:
        if "=" not in e or "." in e.split("=", 1)[0] or " " in e:
            raise ValueError(f"env {e!r}: VAR=VALUE, no dot in VAR, no spaces")
    kernel = debian_kernel()
    if not kernel:
        raise FileNotFoundError("no Debian kernel in /boot (apt-get install linux-image-amd64)")
    with tempfile.TemporaryDirectory(prefix="tern-linux-") as d:
        data = open(program, "rb").read()
        initrd = os.path.join(d, "initrd.cpio")
        with open(initrd, "wb") as f:
            f.write(cpio_newc([("dev", stat.S_IFDIR | 0o755, b""),
                               ("init", stat.S_IFREG | 0o755, data)]))
        log = os.path.join(d, "console.log")
        cmdline = " ".join(["console=ttyS0 quiet loglevel=1 panic=-1 rdinit=/init", *env,
                            "--", *args])
        cmd = ["qemu-system-x86_64", "-nodefaults", "-display", "none", "-no-reboot",
               "-m", mem, *accel_args, *accel.smp_args(smp), "-kernel", kernel, "-initrd", initrd,
               "-append", cmdline, "-serial", f"file:{log}"]
        subprocess.run(cmd, timeout=timeout, capture_output=True)
        text = open(log, "rb").read().decode(errors="replace").replace("\r\n", "\n")
    # The program's lines; the kernel's last words (init exiting) follow them.
    return [l for l in text.splitlines() if l and not l.startswith("[") and "Kernel panic" not in l
            and "Kernel Offset" not in l and "end Kernel" not in l]
