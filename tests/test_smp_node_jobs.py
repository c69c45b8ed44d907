"""Jobs on a 2-CPU cluster node (issue "Many-core nodes"): what a program
under yod learns of its node from /proc/cpuinfo and /proc/meminfo, which the
node answers itself (they were forwarded to yod and described the service
node), and a signal from yod reaching a worker that computes on the node's
second core while main blocks it."""
import os
import re
import signal
import subprocess

import pytest

from clusters import CLUSTER, up, yod, yod_bg
from nodes import program

pytestmark = [pytest.mark.cluster,
              pytest.mark.skipif(os.geteuid() != 0, reason="needs root (netns, taps)")]


@pytest.fixture(scope="module")
def c2():
    with up("smp", "-n", "1", "--smp", "2", "--boot", "direct") as name:
        yield name


def node_banner(name):
    """What the node's kernel said at boot: the application region (KiB), the
    TSC's MHz, the CPU vendor, the running CPUs' APIC ids."""
    log = subprocess.run([CLUSTER, "--name", name, "console", "1"], capture_output=True,
                         text=True, check=True).stdout
    m = re.search(r"(\d+) KiB for the application \([\d.]+%\), TSC (\d+) MHz, (\w+)", log)
    ids = re.search(r"smp: 2 of 2 CPUs running \(APIC ids ([\d ]+)\)", log)
    assert m and ids, log
    return int(m.group(1)), m.group(2), m.group(3), ids.group(1)


@pytest.mark.parametrize("libc", ["glibc", "musl"])
def test_proc_cpuinfo_and_meminfo_describe_the_node(c2, libc):
    region_kib, mhz, vendor, apic_ids = node_banner(c2)
    with open("/proc/meminfo") as f:
        assert f.readline().split()[1] != str(region_kib)   # the test means something here
    r = yod(c2, program(f"nodeinfo-{libc}"))
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "cpuinfo processors 2: 0 1", r.stdout
    assert lines[1] == f"cpuinfo vendor_id {vendor}", r.stdout
    assert lines[2].startswith(f"cpuinfo cpu MHz {mhz}."), r.stdout
    assert lines[3:] == [
        f"cpuinfo siblings 2 cpu cores 2 apicids {apic_ids}",
        "cpuinfo every stanza complete: yes",
        "cpuinfo flags include fpu sse2 lm: yes",
        f"meminfo MemTotal {region_kib} kB",
        "meminfo MemFree <= MemAvailable <= MemTotal: yes",
        "meminfo SwapTotal 0 kB",
        "meminfo 20 or more lines, all 'Name: value kB': yes",
        "sysconf nprocessors 2",
        f"sysinfo totalram {region_kib} kB",
        f"sysconf phys pages {region_kib} kB"], r.stdout


PROC_SELF = [
    "status Pid is getpid(): yes",
    "status Name is the program's: yes",
    "status VmRSS and VmHWM: yes",
    "/proc/PID/status is the same process: yes",
    "statm resident is status VmRSS: yes",
    "status Threads 1, with a second 2",
    "maps 3 or more lines ascending, none overlapping: yes",
    "maps a local variable is in [stack]",
    "maps main is in the program's line: yes",
    "maps the break is in [heap]",
    "/proc/self/exe is argv[0]: yes, /proc/PID/exe too: yes",
    "cmdline is argv: yes",
    "environ is envp: yes",
    "pthread_getattr_np: the first thread's stack holds a local: yes"]


@pytest.mark.parametrize("libc", ["glibc", "musl"])
def test_proc_self_describes_the_rank_not_yod(c2, libc):
    """/proc/self/status and maps (and /proc/PID/) are the rank's, answered
    by its node: forwarded, they were yod's on the service node, and glibc's
    pthread_getattr_np found no line holding the first thread's stack.  And
    /proc/self/exe is the program's path (it was the working directory and
    the program's base name)."""
    assert os.path.dirname(program("procself-glibc")) != os.getcwd()
    r = yod(c2, program(f"procself-{libc}"), "an argument", "")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines() == PROC_SELF, r.stdout
    # Two ranks on the node: each reads its own process.
    r = yod(c2, "-sz", "2", "-ppn", "2", program(f"procself-{libc}"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert sorted(r.stdout.splitlines()) == sorted(PROC_SELF * 2), r.stdout


@pytest.mark.parametrize("libc", ["glibc", "musl"])
def test_a_signal_from_yod_reaches_a_worker_computing_on_the_second_core(c2, libc):
    """yod forwards its SIGUSR1; main blocks it and computes on CPU 0, the
    worker computes on CPU 1 and makes no system call: the worker runs the
    handler (before, it took it only when it gave up after 20 s)."""
    p = yod_bg(c2, program(f"sigcompute-{libc}"), "yod", "1")
    try:
        assert p.stdout.readline() == "computing\n"
        p.send_signal(signal.SIGUSR1)
        out, err = p.communicate(timeout=90)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == 0, out + err
    assert out.splitlines() == [
        "yod: every computing thread saw the handler's flag: yes",
        "handler ran 1 time(s), in a worker",
        "registers and flags kept: yes"], out + err


def test_openmp_places_read_the_nodes_topology(c2):
    """OMP_PLACES=cores (or sockets) has libgomp read each CPU's
    /sys/devices/system/cpu/cpuN/topology, which the node now answers: a
    team of 2 bound to the node's 2 cores, without libgomp's "Error reading
    core/socket topology" on stderr."""
    triad = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build",
                         "bench", "stream_triad")
    for places in ("cores", "sockets"):
        r = yod(c2, triad, "65536", "2", env={"OMP_PLACES": places, "OMP_PROC_BIND": "close"})
        assert r.returncode == 0, r.stdout + r.stderr
        assert "triad check ok: 65536 elements, 2 threads" in r.stdout, r.stdout
        assert "libgomp" not in r.stderr, r.stderr
