"""The Linux comparison cluster (issue 8): Debian kernel + MPICH nodes on the
same virtual hardware as Tern nodes, MPI jobs started by mpiexec over ssh from
the service node, a service-node directory mounted by NFS (`up --nfs`),
teardown that leaves nothing behind."""
import os
import re
import shutil
import subprocess
import tempfile
import time
import zlib

import pytest

from clusters import CLUSTER, NOTHING, cluster, leftovers, named
from nodes import ROOT, make


pytestmark = [pytest.mark.cluster, pytest.mark.slow,
              pytest.mark.skipif(os.geteuid() != 0, reason="needs root (netns, taps)")]


@pytest.fixture(scope="module", autouse=True)
def linux_node():
    make("linux-node")




@pytest.fixture
def name():
    with named("l") as n:
        yield n


def up(name, *args):
    t0 = time.monotonic()
    r = cluster(name, "up", "--os", "linux", "-n", "2", *args)
    wall = time.monotonic() - t0
    assert "2 nodes ready" in r.stdout and "linux" in r.stdout, r.stdout
    for nid in (1, 2):
        con = cluster(name, "console", str(nid)).stdout
        m = re.search(r"linux node ready: nid (\d+) \S+ (\S+) link (\S+) \(kernel uptime ([\d.]+)s\)",
                      con)
        assert m, con[-2000:]
        # Ready means the interface is running: MPICH's UCX opens no TCP
        # transport on one that is not (MPI_Init: "Destination is unreachable").
        assert m.group(3) == "up", con[-2000:]
        assert m.group(1) == str(nid) and m.group(2) == f"10.77.0.{100 + nid}/24"
        print(f"\nlinux nid {nid}: ready, kernel uptime {m.group(4)} s")
    print(f"up --os linux -n 2 {' '.join(args)}: {wall:.1f} s wall")
    rows = cluster(name, "status").stdout.splitlines()
    assert "linux" in rows[0]
    assert [line.split()[2] for line in rows[2:4]] == ["free", "free"], rows


def mpiexec(name, *args, timeout=240):
    r = cluster(name, "mpiexec", *args, check=False, timeout=timeout)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_direct_boot_mpi_across_two_nodes(name):
    up(name, "--boot", "direct")
    out = mpiexec(name, "-n", "4", os.path.join(ROOT, "build", "linux-node", "bin", "mpi-hello"))
    ranks = dict(re.findall(r"hello from rank (\d) of 4 on (\S+)", out))
    assert sorted(ranks) == ["0", "1", "2", "3"], out
    assert set(ranks.values()) == {"nid1", "nid2"}, out  # really on both nodes
    assert mpiexec(name, "-n", "2", os.path.join(ROOT, "build", "nx-mpi", "pingpong")) \
        .count("pingpong ok") == 1
    out = mpiexec(name, "-n", "2", os.path.join(ROOT, "build", "linux-node", "bin", "nx-latency"),
                  "100")
    lat = re.findall(r"nx-latency: +(\d+) B +one-way +([\d.]+) us", out)
    assert [s for s, _ in lat] == ["0", "8", "1024", "65536"], out
    print(out)
    # An NX error on a node ends the whole job with the message, as on one machine.
    r = cluster(name, "mpiexec", "-n", "2", os.path.join(ROOT, "build", "nx-mpi", "errors"),
                "badnode", check=False, timeout=120)
    assert r.returncode != 0
    assert "EQNODE: node 2 is not in 0..1" in r.stderr, r.stdout + r.stderr
    # Without --nfs no NFS client is loaded (the node boots as it did before NFS).
    mods = mpiexec(name, "-n", "1", "/bin/cat", "/proc/modules")
    assert "virtio_net" in mods and not re.search(r"^(nfs|sunrpc) ", mods, re.M), mods
    cluster(name, "down")
    assert leftovers(name) == NOTHING


FILEIO = os.path.join(ROOT, "build", "programs", "fileio-musl")


def test_nfs_files_reach_the_service_node(name):
    """`up --nfs DIR`: NFS-Ganesha in the cluster's namespace exports DIR, both
    nodes mount it at the same path; what ranks write there is on the service
    node byte for byte, what the service node puts there the ranks read; down
    stops the server (and its rpcbind) with the rest."""
    export = tempfile.mkdtemp(prefix="nfs-test-", dir="/tmp")
    sock_before = os.path.exists("/run/rpcbind.sock")
    try:
        r = cluster(name, "up", "--os", "linux", "-n", "2", "--boot", "direct", "--nfs", export)
        assert f"NFS 10.77.0.1:{export}" in r.stdout, r.stdout
        for nid in (1, 2):
            assert f"NFS 10.77.0.1:{export}" in cluster(name, "console", str(nid)).stdout
        server = subprocess.run(["ip", "netns", "pids", f"tern-{name}"], capture_output=True,
                                text=True).stdout.split()
        names = {open(f"/proc/{p}/comm").read().strip() for p in server
                 if os.path.exists(f"/proc/{p}/comm")}
        assert {"ganesha.nfsd", "rpcbind"} <= names, names
        # Its rpcbind's socket is in a /run of its own, not the host's.
        assert os.path.exists("/run/rpcbind.sock") == sock_before

        # Node -> service node: each rank its own 2 MiB file, 64 KiB writes, read back cold.
        out = mpiexec(name, "-n", "2", FILEIO, "big", export + "/f.%r", "2", "65536", "cold")
        lines = re.findall(r"big bytes=(\d+) got=(\d+) write_s=\S+ read_s=\S+ "
                           r"crc_w=(\w+) crc_r=(\w+)", out)
        assert len(lines) == 2, out
        for b, got, cw, cr in lines:
            assert b == got == str(2 << 20) and cw == cr, out
        for rank in (0, 1):
            data = open(os.path.join(export, f"f.{rank}"), "rb").read()
            assert len(data) == 2 << 20
            assert f"{zlib.crc32(data):08x}" == lines[0][2], "bytes on the server differ"
        # Service node -> node.
        with open(os.path.join(export, "from-service-node.txt"), "w") as f:
            f.write("written on the service node\n")
        out = mpiexec(name, "-n", "2", FILEIO, "open", export + "/from-service-node.txt", "r")
        assert out.count("OK written on the service node") == 2, out

        cluster(name, "down")
        gone = [p for p in server if os.path.exists(f"/proc/{p}") and
                open(f"/proc/{p}/stat").read().split(")")[-1].split()[0] != "Z"]
        assert gone == [], gone
        assert leftovers(name) == NOTHING
        assert os.path.exists("/run/rpcbind.sock") == sock_before
    finally:
        subprocess.run([CLUSTER, "--name", name, "down"], capture_output=True)
        shutil.rmtree(export, ignore_errors=True)


def test_nfs_is_for_linux_nodes(name):
    r = cluster(name, "up", "-n", "1", "--boot", "direct", "--nfs", "/tmp", check=False)
    assert r.returncode != 0 and "--nfs is for --os linux" in r.stderr, r.stderr
    assert leftovers(name) == NOTHING


def test_pxe_boot_e1000(name):
    up(name, "--boot", "pxe", "--nic", "e1000")
    log = open(f"/tmp/tern-clusters/{name}/dnsmasq.log").read()
    assert log.count("DHCPACK") >= 4  # iPXE and the node's own udhcpc, on both nodes
    # The kernel and initramfs by HTTP (by TFTP, 1432-byte blocks one round
    # trip each, the 20 MB initramfs was most of a minute).
    http = open(f"/tmp/tern-clusters/{name}/httpd.out").read()
    for f in ("vmlinuz", "initramfs.cpio.gz"):
        assert sorted(re.findall(rf"^(10\.77\.0\.\d+) .*\"GET /{re.escape(f)} HTTP", http,
                                 re.M)) == ["10.77.0.101", "10.77.0.102"], http
    out = mpiexec(name, "-n", "2", os.path.join(ROOT, "build", "linux-node", "bin", "mpi-hello"))
    assert sorted(re.findall(r"on (nid\d)", out)) == ["nid1", "nid2"], out
    cluster(name, "down")
    assert leftovers(name) == NOTHING


def test_failed_up_leaves_nothing(name):
    r = cluster(name, "up", "--os", "linux", "-n", "2", "--boot", "direct", "--timeout", "1",
                check=False)
    assert r.returncode != 0 and "not ready after" in r.stderr and "nid 2" in r.stderr
    assert leftovers(name) == NOTHING


def test_mpiexec_needs_a_linux_cluster(name):
    r = subprocess.run([CLUSTER, "--name", name, "mpiexec", "-n", "1", "true"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode != 0 and "not up" in r.stderr
    cluster(name, "up", "-n", "1", "--boot", "direct")  # a Tern cluster
    r = subprocess.run([CLUSTER, "--name", name, "mpiexec", "-n", "1", "true"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode != 0 and "only for clusters booted with --os linux" in r.stderr
