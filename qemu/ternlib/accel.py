"""Choosing QEMU's accelerator.

Where the host's KVM runs guest kernel mode by emulation (the paravirtual
nested `kvm_pvm` module on our development machines), every kernel
instruction costs about a microsecond and TCG is the sound default; where
KVM is ordinary hardware virtualisation, KVM is.  TERN_ACCEL=kvm|tcg
overrides the choice."""
import os


def kvm_usable():
    return os.access("/dev/kvm", os.R_OK | os.W_OK)


def kvm_emulates_kernel_mode():
    return os.path.isdir("/sys/module/kvm_pvm")


def default_accel():
    env = os.environ.get("TERN_ACCEL")
    if env in ("kvm", "tcg"):
        return env
    if kvm_usable() and not kvm_emulates_kernel_mode():
        return "kvm"
    return "tcg"


def qemu_accel_args(accel):
    if accel == "kvm":
        if not kvm_usable():
            raise SystemExit("--kvm: /dev/kvm is missing or not accessible")
        return ["-accel", "kvm", "-cpu", "host"]
    # -cpu max gives TCG's full feature set (SSE4, AVX, AVX2 on QEMU >= 7.2);
    # thread=multi runs each vCPU of an -smp node in a host thread of its own.
    return ["-accel", "tcg,thread=multi", "-cpu", "max"]


def smp_args(cpus):
    """QEMU's options for a node with `cpus` CPUs (one socket, one thread each)."""
    if cpus < 1:
        raise SystemExit(f"--smp {cpus}: a node has at least one CPU")
    return ["-smp", f"{cpus},sockets=1,cores={cpus},threads=1"]
