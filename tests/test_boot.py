"""The same kernel image boots from `qemu -kernel`, from the GRUB ISO and
through QEMU's iPXE network-boot ROM (user-mode network with its own TFTP
server; nothing leaves the QEMU process)."""
import os
import subprocess

import pytest

from nodes import KERNEL, ROOT, program, run_node

BUILD = os.path.join(ROOT, "build")


def boot(tmp_path, *qemu_args, timeout=240):
    log = tmp_path / "console.log"
    cmd = ["qemu-system-x86_64", "-nodefaults", "-display", "none", "-no-reboot",
           "-m", "64M", "-accel", "tcg", "-cpu", "max",
           "-serial", f"file:{log}", "-device", "isa-debug-exit,iobase=0xf4,iosize=4",
           *qemu_args]
    r = subprocess.run(cmd, capture_output=True, timeout=timeout)
    text = log.read_text(errors="replace").replace("\r\n", "\n")
    # isa-debug-exit: QEMU exits with (code << 1) | 1; the kernel writes 0 on exit.
    assert r.returncode == 1, (r.returncode, r.stderr, text[-2000:])
    return text


def test_boots_with_qemu_kernel():
    r = run_node(program("hello-musl"), "direct")
    assert r.returncode == 0 and "argv[1]=direct" in r.stdout


def test_boots_from_grub_iso(tmp_path):
    text = boot(tmp_path, "-cdrom", os.path.join(BUILD, "tern.iso"))
    assert "tern: Tern kernel:" in text
    assert "hello from Linux" in text
    assert "arg 1: booted from the GRUB ISO" in text
    assert "tern: program exited with status 0" in text


@pytest.mark.parametrize("nic", ["virtio-net-pci", "e1000"])
def test_boots_through_ipxe(tmp_path, nic):
    tftp = os.path.join(BUILD, "tftp")
    text = boot(tmp_path, "-netdev",
                f"user,id=n0,restrict=on,tftp={tftp},bootfile=boot.ipxe",
                "-device", f"{nic},netdev=n0", "-boot", "n")
    assert "hello from Linux" in text
    assert "arg 1: booted by iPXE" in text
    assert "tern: program exited with status 0" in text


def test_images_are_the_same_kernel():
    ref = open(KERNEL, "rb").read()
    assert open(os.path.join(BUILD, "iso", "boot", "tern.elf"), "rb").read() == ref
    assert open(os.path.join(BUILD, "tftp", "tern.elf"), "rb").read() == ref
