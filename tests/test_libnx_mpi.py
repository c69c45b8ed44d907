"""The NX test programs under libnx-mpi (MPICH on this Linux machine): the
reference the Tern build of libnx must agree with."""
import os
import subprocess

import pytest

from nodes import ROOT

BIN = os.path.join(ROOT, "build", "nx-mpi")


def mpirun(n, prog, *args, timeout=120):
    return subprocess.run(["mpiexec", "-n", str(n), os.path.join(BIN, prog), *args],
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("prog,n,expect", [
    ("pingpong", 2, "pingpong ok"),
    ("ring", 4, "ring ok on 4 nodes"),
    ("types", 3, "types ok"),
    ("unexpected", 4, "unexpected ok: 6000 messages"),
    ("bigmsg", 2, "bigmsg ok"),
    ("pushed", 2, "pushed ok"),
    ("order", 3, "order ok on 3 nodes"),
    ("barrier", 8, "barrier ok on 8 nodes"),
    ("selfsend", 3, "selfsend ok on 3 nodes"),
    ("self", 2, "self ok on 2 nodes"),
])
def test_point_to_point(prog, n, expect):
    r = mpirun(n, prog)
    assert r.returncode == 0, r.stdout + r.stderr
    assert expect in r.stdout


@pytest.mark.parametrize("n", [1, 2, 3, 8, 16])
def test_every_reduction_against_the_serial_answer(n):
    r = mpirun(n, "reduce")
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"reduce ok on {n} nodes" in r.stdout


@pytest.mark.parametrize("case,message", [
    ("msglong", "NX error in crecv on node 1: EQMSGLONG: message of 8 bytes"),
    ("badnode", "NX error in csend on node 0: EQNODE: node 2 is not in 0..1"),
    ("badmid", "NX error in msgwait on node 0: EQMID: message id 12345"),
])
def test_errors_end_the_job_with_a_message(case, message):
    r = mpirun(2, "errors", case)
    assert r.returncode == 1
    assert message in r.stderr
    assert "not reached" not in r.stdout


def test_underscore_variants_return_errors():
    r = mpirun(2, "errors", "soft")
    assert r.returncode == 0 and "soft errors ok" in r.stdout
