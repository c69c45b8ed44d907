"""libnx on Tern compute nodes: the tests/nx programs built with lwkcc
(build/nx-tern/), started by yod on the virtual cluster, one rank per node.
The same programs run under libnx-mpi (test_libnx_mpi.py) and on the
Linux-host Portals (test_libnx_portals.py): the three must agree."""
import os
import subprocess
import uuid

import pytest

from clusters import CLUSTER, NOTHING, cluster, leftovers  # noqa: F401
from nodes import ROOT

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (netns, taps)")

BIN = os.path.join(ROOT, "build", "nx-tern")
NODES = 16


@pytest.fixture(scope="module")
def nx():
    name = "x" + uuid.uuid4().hex[:7]
    # 128 MiB nodes: bigmsg holds a 64 MiB buffer on each.
    cluster(name, "up", "-n", str(NODES), "--boot", "direct", "--mem", "128M")
    yield name
    subprocess.run([CLUSTER, "--name", name, "down"], capture_output=True)
    assert leftovers(name) == NOTHING


def yod(name, n, prog, *args, timeout=300):
    return subprocess.run([CLUSTER, "--name", name, "exec", "yod", "-timeout", "240", "-sz",
                           str(n), os.path.join(BIN, prog), *args],
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("prog,n,args,expect", [
    ("pingpong", 2, [], "pingpong ok"),
    ("ring", 4, [], "ring ok on 4 nodes"),          # seed 003, section 4.3.1
    ("types", 3, [], "types ok"),
    ("order", 5, [], "order ok on 5 nodes"),
    ("bigmsg", 2, [], "bigmsg ok"),
    ("unexpected", 16, [], "unexpected ok"),
    ("barrier", 8, ["noclock"], "barrier ok on 8 nodes"),
])
def test_point_to_point_and_sync(nx, prog, n, args, expect):
    r = yod(nx, n, prog, *args)
    assert r.returncode == 0, r.stdout + r.stderr
    assert expect in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize("n", [1, 2, 3, 8, 16])
def test_every_reduction_against_the_serial_answer(nx, n):
    r = yod(nx, n, "reduce")
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"reduce ok on {n} nodes" in r.stdout


@pytest.mark.parametrize("case,message", [
    ("msglong", "NX error in crecv on node 1: EQMSGLONG: message of 8 bytes"),
    ("badnode", "NX error in csend on node 0: EQNODE: node 2 is not in 0..1"),
    ("badmid", "NX error in msgwait on node 0: EQMID: message id 12345"),
])
def test_errors_end_the_job_with_a_message(nx, case, message):
    r = yod(nx, 2, "errors", case, timeout=120)
    assert r.returncode == 1, r.stdout + r.stderr
    assert message in r.stderr
    assert "not reached" not in r.stdout


def test_underscore_variants_return_errors(nx):
    r = yod(nx, 2, "errors", "soft")
    assert r.returncode == 0 and "soft errors ok" in r.stdout, r.stdout + r.stderr
