"""Choosing QEMU's accelerator.

Where the host's KVM runs guest kernel mode by emulation (the paravirtual
nested `kvm_pvm` module on our development machines), every kernel
instruction costs about a microsecond and TCG is the sound default; where
KVM is ordinary hardware virtualisation, KVM is.  TERN_ACCEL=kvm|tcg
overrides the choice."""
import functools
import os
import subprocess

# What QEMU prints when KVM could not run the guest's next instruction (an
# instruction emulator that lacks it): the VM is then paused, not ended.
VM_FAILURE_MARKERS = ("KVM internal error", "emulation failure")


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


def vm_failure(text):
    """From QEMU output `text`: a line saying KVM stopped the guest, with the
    instruction it stopped at when QEMU dumped it (RIP, the bytes from RIP),
    or None when KVM did not stop it."""
    lines = text.splitlines()
    said = [l.strip() for l in lines if any(m in l for m in VM_FAILURE_MARKERS)]
    if not said:
        return None
    where = []
    for l in lines:
        if l.startswith("RIP="):
            where.append(l.split()[0])
        elif l.startswith("Code=") and "<" in l:
            where.append("code at RIP: " + l[l.index("<"):][:30].strip())
    return "; ".join(said + where[:2])


def _cpu_starts(model):
    """Whether QEMU creates and resets a KVM vCPU of `model` (paused, no guest
    code runs); QEMU's message if not."""
    try:
        r = subprocess.run(["qemu-system-x86_64", "-accel", "kvm", "-cpu", model, "-m", "16M",
                            "-nodefaults", "-display", "none", "-S", "-monitor", "stdio"],
                           input="quit\n", capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        return False, "QEMU did not answer `quit` within 30 s"
    if r.returncode == 0:
        return True, ""
    err = [l for l in (r.stdout + r.stderr).splitlines() if "qemu-system" in l]
    return False, "\n".join(err) or f"QEMU exited with status {r.returncode}"


@functools.lru_cache(maxsize=None)
def kvm_cpu_model():
    """-cpu for KVM: the host's CPU.  Some KVMs (kvm_pvm on a 6.18 host
    kernel, 2026-11-23) list IA32_ARCH_CAPABILITIES among the MSRs a guest
    may have but refuse QEMU's write of it, and QEMU then aborts before the
    guest's first instruction ("failed to set MSR 0x10a").  The guest does
    not need that MSR, so there the feature is left out.  Asked once per
    process: QEMU starts a paused vCPU and quits."""
    ok, err = _cpu_starts("host")
    if ok:
        return "host"
    if _cpu_starts("host,-arch-capabilities")[0]:
        return "host,-arch-capabilities"
    raise SystemExit("--kvm: QEMU cannot start a KVM guest here:\n" + err)


# TCG's CPU without the VEX-encoded vector extensions (`qemu/cluster up --cpu
# noavx`).  With Debian 12's QEMU (7.2), a guest that has run 256-bit AVX
# code (glibc's memcpy picks it wherever AVX2 is usable) leaves its vCPU's
# host thread slow at the scalar SSE arithmetic of floating-point code until
# the guest next enters its kernel by a system call: NPB FT on one Tern node
# ran 6x longer (docs/performance.md, "Why FT was slower on Tern").  A
# computing Tern rank never enters its kernel, a Linux process does more
# often, so the artefact is not even the same for both systems; without AVX
# it is absent for both.
TCG_CPU_MODELS = {"max": "max",
                  "noavx": "max,-avx,-avx2,-fma,-f16c,-vaes,-vpclmulqdq"}


def tcg_cpu_model(accel, cpu):
    """QEMU's -cpu for a TCG node: cpu is a key of TCG_CPU_MODELS or a QEMU
    -cpu string, default max.  A model is refused under KVM."""
    if accel == "kvm" and cpu:
        raise SystemExit("--cpu is for TCG nodes; under --kvm the host's CPU is used")
    return TCG_CPU_MODELS.get(cpu or "max", cpu)


def qemu_accel_args(accel, cpu=None):
    """QEMU's -accel and -cpu options (cpu: tcg_cpu_model)."""
    model = tcg_cpu_model(accel, cpu)
    if accel == "kvm":
        if not kvm_usable():
            raise SystemExit("--kvm: /dev/kvm is missing or not accessible")
        return ["-accel", "kvm", "-cpu", kvm_cpu_model()]
    # -cpu max gives TCG's full feature set (SSE4, AVX, AVX2 on QEMU >= 7.2);
    # thread=multi runs each vCPU of an -smp node in a host thread of its own.
    return ["-accel", "tcg,thread=multi", "-cpu", model]


def smp_args(cpus):
    """QEMU's options for a node with `cpus` CPUs (one socket, one thread each)."""
    if cpus < 1:
        raise SystemExit(f"--smp {cpus}: a node has at least one CPU")
    return ["-smp", f"{cpus},sockets=1,cores={cpus},threads=1"]
