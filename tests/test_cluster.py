"""The virtual cluster: nodes PXE-boot from the service node's dnsmasq inside
a namespace of the cluster's own; teardown leaves nothing behind."""
import os
import re
import subprocess
import sys
import time

import pytest

from clusters import NOTHING, cluster, leftovers, named, node_pid
from nodes import ROOT

sys.path.insert(0, os.path.join(ROOT, "qemu"))
from ternlib.monitor import monitor  # noqa: E402


pytestmark = [pytest.mark.cluster,
              pytest.mark.skipif(os.geteuid() != 0, reason="needs root (netns, taps)")]




@pytest.fixture
def name():
    with named("t") as n:
        yield n


def status_rows(name):
    out = cluster(name, "status").stdout.splitlines()
    return [line.split() for line in out[2:] if line.strip() and line.split()[0].isdigit()]


@pytest.mark.slow
@pytest.mark.parametrize("nic", ["virtio", "e1000"])
def test_pxe_boot_four_nodes(name, nic):
    cluster(name, "up", "-n", "4", "--nic", nic)
    rows = status_rows(name)
    assert [r[0] for r in rows] == ["1", "2", "3", "4"]
    assert all(r[2] == "free" for r in rows), rows
    assert [r[1] for r in rows] == [f"02:00:00:00:00:0{i}" for i in range(1, 5)]
    con = cluster(name, "console", "3").stdout
    assert "MAC 02:00:00:00:00:03" in con and "node ready" in con
    # The fabric's large frames: stated by virtio-net, told to an e1000.
    assert {"virtio": "MTU 32736 (from the device)",
            "e1000": "MTU 16110 (mtu= on the command line)"}[nic] in con, con
    log = open(f"/tmp/tern-clusters/{name}/dnsmasq.log").read()
    assert log.count("DHCPACK") >= 4 and "sent" in log  # DHCP and TFTP really served them
    # iPXE configures IPv6 too and boots only once a router has advertised
    # itself or it gives up, 13 s later: the service node advertises one
    # (the boot's time: bench/run_all.py --only pxe), where the host lets
    # the cluster's namespace have IPv6.
    v6 = cluster(name, "exec", "cat", "/proc/sys/net/ipv6/conf/svc0/disable_ipv6",
                 check=False).stdout.strip() == "0"
    if v6:
        assert "RTR-ADVERT(svc0) fd74:6572:6e::" in log, log[-3000:]
    # The kernel came by HTTP, once to each node (TFTP brought the scripts).
    http = open(f"/tmp/tern-clusters/{name}/httpd.out").read()
    assert sorted(re.findall(r"^(10\.77\.0\.\d+) .*\"GET /tern\.elf HTTP", http, re.M)) == \
        [f"10.77.0.{100 + i}" for i in range(1, 5)], http
    out = cluster(name, "exec", "ip", "-br", "addr", "show", "svc0").stdout
    assert "10.77.0.1/24" in out
    # every node registered with the allocator over Portals, and is free
    assert allocator_states(name) == {i: "free" for i in range(1, 5)}
    assert "registered with the allocator (nid 0): registered as nid 3" in con
    cluster(name, "down")
    assert leftovers(name) == NOTHING


def allocator_states(name):
    out = cluster(name, "exec", "tern-svc", "status").stdout.splitlines()[1:]
    return {int(l.split()[0]): l.split()[2] for l in out}


def test_killed_node_shows_down(name):
    cluster(name, "up", "-n", "2", "--boot", "direct")
    pid = node_pid(name, 2)
    os.kill(pid, 9)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        rows = status_rows(name)
        if rows[1][2] == "down":
            break
        time.sleep(0.2)
    assert rows[0][2] == "free" and rows[1][2] == "down", rows
    # the allocator's health pings notice it too, within a bounded time
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and allocator_states(name)[2] != "down":
        time.sleep(0.5)
    assert allocator_states(name) == {1: "free", 2: "down"}
    assert cluster(name, "exec", "tern-svc", "alloc", "9", "1").stdout.split() == ["1"]


def node_rss_mib(name, nid):
    pid = node_pid(name, nid)
    with open(f"/proc/{pid}/status") as f:
        kib = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    return kib / 1024


def test_boot_leaves_unwritten_node_memory_unallocated(name):
    """A node clears its application region at boot (RAM may hold an earlier
    boot's jobs), but writes only pages that are not zero already.  Writing
    all of it made QEMU allocate every node's whole memory on the host at
    boot: 294 MiB each for 256 MiB nodes (4.7 GiB for 16), where now the
    region is read, which maps the host's zero page."""
    cluster(name, "up", "-n", "1", "--boot", "direct", "--mem", "256M")
    rss = node_rss_mib(name, 1)
    assert rss < 128, f"node 1's QEMU holds {rss:.0f} MiB of host memory after boot"
    con = cluster(name, "console", "1").stdout
    m = re.search(r"application region cleared \((\d+) MiB looked at, (\d+) KiB not zero\)", con)
    assert m and int(m.group(1)) > 200, con[-2000:]
    assert allocator_states(name) == {1: "free"}


def test_failed_up_leaves_nothing(name):
    r = cluster(name, "up", "-n", "2", "--timeout", "0.5", check=False)
    assert r.returncode != 0
    assert "not ready after" in r.stderr and "nid 1" in r.stderr
    assert leftovers(name) == NOTHING


def test_up_cleans_a_stale_run(name):
    subprocess.run(["ip", "netns", "add", f"tern-{name}"], check=True)
    os.makedirs(f"/tmp/tern-clusters/{name}")
    with open(f"/tmp/tern-clusters/{name}/state.json", "w") as f:
        f.write('{"pids": [999999], "nodes": []}')
    r = cluster(name, "up", "-n", "1", "--boot", "direct")
    assert "cleaning up a previous run" in r.stdout
    assert status_rows(name)[0][2] == "free"


def test_cpu_model_without_avx_and_monitor_socket(name):
    """`up --cpu noavx` (benchmarks of floating-point codes under TCG,
    qemu/ternlib/accel.py): a program on such a node finds no usable AVX
    (the default model offers it: test_yod's vector-register test); --cpu
    with --kvm is refused before anything starts."""
    ranks = os.path.join(os.path.dirname(__file__), "..", "build", "programs", "ranks-musl")
    cluster(name, "up", "-n", "1", "--boot", "direct", "--cpu", "noavx")
    assert ", CPU noavx" in cluster(name, "status").stdout.splitlines()[0]
    r = cluster(name, "exec", "yod", "-sz", "1", ranks, "vdirty")
    assert "rank 0 dirtied vector registers" in r.stdout and "AVX" not in r.stdout, r.stdout
    # The same cluster also shows each node's QEMU monitor on a socket beside
    # its log (README), one boot for both.
    assert "VM status: running" in monitor(f"/tmp/tern-clusters/{name}/node1.log.monitor",
                                           "info status")
    cluster(name, "down")
    r = cluster(name, "up", "-n", "1", "--kvm", "--cpu", "noavx", check=False)
    assert r.returncode != 0 and "--cpu is for TCG nodes" in r.stderr, r.stderr
    assert leftovers(name) == NOTHING
