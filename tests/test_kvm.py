"""The virtual cluster under --kvm, where /dev/kvm works.  On our build
machines KVM is kvm_pvm, which emulates guest kernel mode (~1 us an
instruction): there this takes a minute or two, on ordinary KVM seconds.
Before issue 18 it failed three ways on such a host: QEMU aborted at start
(the host refused IA32_ARCH_CAPABILITIES), the node stopped for good right
after "node ready" (its instruction emulator has no crc32, the checksum of
the first Portals frame), and at the end of every job (no ldmxcsr); and
with AVX turned off in the guest's XCR0 a job's YMM upper halves were
still there for the next job (kvm_pvm runs user mode with the host's
XCR0): vclean failed until programs started through arch/user_start.S."""
import os
import sys

import pytest

from clusters import cluster, named, yod
from nodes import ROOT

sys.path.insert(0, os.path.join(ROOT, "qemu"))
from ternlib import accel  # noqa: E402

RANKS = os.path.join(ROOT, "build", "programs", "ranks-musl")


def skip_reason():
    if os.geteuid() != 0:
        return "needs root (netns, taps)"
    if not accel.kvm_usable():
        return "no usable /dev/kvm"
    try:
        accel.kvm_cpu_model()
    except SystemExit as e:
        return str(e)
    return None


pytestmark = [pytest.mark.cluster, pytest.mark.slow,
              pytest.mark.skipif(skip_reason() is not None, reason=str(skip_reason()))]


def test_kvm_nodes_register_and_run_jobs_back_to_back():
    with named("k") as name:
        cluster(name, "up", "-n", "2", "--boot", "direct", "--kvm", timeout=900)
        out = cluster(name, "exec", "tern-svc", "status").stdout.splitlines()[1:]
        assert [line.split()[:3] for line in out] == [["1", "02:00:00:00:00:01", "free"],
                                                      ["2", "02:00:00:00:00:02", "free"]], out
        for nid in (1, 2):
            assert "registered with the allocator" in cluster(name, "console", str(nid)).stdout
        # The second job runs after the nodes cleared the first one's memory
        # and registers, in kernel mode, under the emulator where there is one.
        r = yod(name, "-sz", "2", RANKS, "vdirty", timeout=600)
        assert r.returncode == 0, r.stdout + r.stderr
        assert r.stdout.count("dirtied vector registers") == 2, r.stdout
        r = yod(name, "-sz", "2", RANKS, "vclean", timeout=600)
        assert r.returncode == 0, r.stdout + r.stderr
        assert sorted(r.stdout.splitlines()) == [f"rank {i} vector registers clean"
                                                 for i in range(2)]
