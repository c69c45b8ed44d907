"""Tern's MPI on Tern compute nodes: the tests/mpi programs built with
tern-mpicc / tern-mpif90 (build/mpi-tern/, static musl and static glibc
gfortran), started by yod on one shared 16-node cluster.  The same programs
run on the Linux-host Portals in test_mpi_host.py."""
import os
import re

import pytest

import clusters
import mpi_cases
from nodes import ROOT

pytestmark = [pytest.mark.cluster, pytest.mark.slow,
              pytest.mark.skipif(os.geteuid() != 0, reason="needs root (netns, taps)")]

BIN = os.path.join(ROOT, "build", "mpi-tern")
# TERN_TEST_NODES: a smaller cluster for a -k selection that fits in it
# (the full module needs 16).
NODES = int(os.environ.get("TERN_TEST_NODES", "16"))


@pytest.fixture(scope="module")
def tc():
    # 256 MiB nodes: bigmsg holds two 64 MiB buffers on each.
    with clusters.up("m", "-n", str(NODES), "--boot", "direct", "--mem", "256M") as name:
        yield name


def yod(name, n, prog, *args, timeout=300, env=None, size_opt="-sz", limit=240):
    """tests/mpi program `prog` on n ranks (clusters.yod)."""
    return clusters.yod(name, "-timeout", str(limit), size_opt, str(n),
                        os.path.join(BIN, prog), *args, timeout=timeout, env=env)


@pytest.mark.parametrize("prog,n,expect", [
    ("p2p", 4, "p2p ok on 4 ranks"),
    ("comm", 4, "comm ok on 4 ranks"),
    ("comm", 16, "comm ok on 16 ranks"),
    ("types", 4, "types ok on 4 ranks"),
    ("typextra", 4, "typextra ok on 4 ranks"),
    ("ops", 4, "ops ok on 4 ranks: 326 combinations"),
    ("unexpected", 16, "unexpected ok: 30000 messages"),
    ("mprobe", 3, "mprobe ok on 3 ranks"),
    ("bigmsg", 4, "bigmsg ok"),
    ("ftest", 4, "fortran ok on 4 ranks"),
    ("topo", 4, "topo ok on 4 ranks"),
    ("fbind", 4, "fortran bindings ok on 4 ranks"),
    ("rma", 4, "rma ok on 4 ranks"),
    ("profile", 3, "profile ok on 3 ranks"),
    ("session", 3, "session ok on 3 ranks"),
    ("threads", 3, "threads ok on 3 ranks: 4 threads"),
    ("cancel", 3, "cancel ok on 3 ranks"),
    ("cancelgone", 2, "cancelgone ok"),
    ("shmwin", 3, "shmwin ok: 3 ranks, node groups of 1"),
])
def test_semantics(tc, prog, n, expect):
    r = yod(tc, n, prog)
    assert r.returncode == 0, r.stdout + r.stderr
    assert expect in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize("n", [1, 4])
def test_mpi_io_through_subarray_views(tc, n, tmp_path):
    """tests/mpi/fileio.c on Tern nodes: every rank reads and writes the
    file in yod's tree through its node's file calls (test_mpi_host.py has
    the same on Linux)."""
    os.chmod(tmp_path, 0o777)
    r = yod(tc, n, "fileio", str(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"fileio ok on {n} ranks" in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize("n", [1, 2, 3, 8, 16])
def test_every_collective_against_the_serial_answer(tc, n):
    r = yod(tc, n, "coll")
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"coll ok on {n} ranks" in r.stdout


@pytest.mark.parametrize("n", [2, 5])
def test_nonblocking_collectives_progress_while_the_rank_does_other_things(tc, n):
    r = yod(tc, n, "nbc")
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(rf"nbc ok on {n} ranks: \d+ messages", r.stdout), r.stdout + r.stderr


@pytest.mark.parametrize("n", [1, 2, 3, 8, 16])
def test_gatherv_scatterv_against_the_serial_answer(tc, n):
    """tests/mpi/collv.c on Tern nodes: small blocks along the binomial tree,
    large ones (eager and rendezvous) straight to their rank, in the same
    calls (libmpi/src/mpi_gatherv.c)."""
    r = yod(tc, n, "collv")
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(rf"collv ok on {n} ranks: \d+ calls", r.stdout), r.stdout + r.stderr


@pytest.mark.parametrize("n", [2, 3, 8])
def test_thousands_of_barriers_each_really_waits(tc, n):
    """tests/mpi/barrier.c (2010 barriers of 500 per phase) on Tern nodes,
    where Portals forwards every round in the kernel as the frame arrives:
    no rank leaves a barrier before all entered it, on world, dup, split
    and reused-context communicators; every rank's world barriers but the
    first went through Portals."""
    r = yod(tc, n, "barrier", "500", env={"TERN_MPI_STATS": "1"})
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"barrier ok on {n} ranks: 2010 barriers" in r.stdout, r.stdout + r.stderr
    got = [int(x) for x in re.findall(r"portals_barriers=(\d+)", r.stderr)]
    assert len(got) == n and min(got) >= 2 * 500 + 500 // 4 + 10 - 1, r.stderr


def test_flow_control_under_mpi(tc):
    """Tiny unexpected space on 4 nodes: drain / PAUSE / resend rounds on
    Tern's kernel Portals, nothing lost, order kept."""
    r = yod(tc, 4, "unexpected", env={"TERN_MPI_STATS": "1", "TERN_MPI_UH": "64",
                                      "TERN_MPI_UNEXPECTED": "32768"})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "unexpected ok: 6000 messages" in r.stdout
    m = re.search(r"MPI stats node 0: .*recoveries=(\d+)", r.stderr)
    assert m and int(m.group(1)) >= 1, r.stderr


def test_thousands_of_receives_posted_at_once(tc):
    """tests/mpi/manyrecv.c on Tern nodes (test_mpi_host.py has it with
    4000): 2500 receives posted at once on rank 0, more than the library
    gives Portals, and each gets the message MPI's order gives it; 512
    synchronous sends exposed at once beside 2000 of them and 250
    communicators' barriers, and 800 rendezvous sends started before their
    receiver posts anything (the 513th hung the job), then 601 with the
    last waited on first, then 3000 received while their sender computes."""
    r = yod(tc, 3, "manyrecv", "2500", env={"TERN_MPI_STATS": "1"})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "manyrecv ok on 3 ranks: 2500 receives" in r.stdout, r.stdout + r.stderr
    m = re.search(r"MPI stats node 0: .*held=(\d+).* late=(\d+)", r.stderr)
    assert m and int(m.group(1)) > 0 and int(m.group(2)) >= 288 + 89 + 2488, r.stderr


@pytest.mark.parametrize("opt", ["-n", "-np"])
def test_yod_takes_n_and_np_as_sz(tc, opt):
    r = yod(tc, 3, "p2p", size_opt=opt)
    assert r.returncode == 0 and "p2p ok on 3 ranks" in r.stdout, r.stdout + r.stderr


def test_a_fatal_error_ends_the_job_and_yod_names_the_rank(tc):
    r = yod(tc, 4, "errors", "rank", limit=60, timeout=120)
    assert r.returncode == 1, r.stdout + r.stderr
    assert ("MPI error on rank 0 in MPI_Send: MPI_ERR_RANK (code 6): rank 7 is not in 0..3"
            in r.stderr), r.stderr
    # The failing rank's end is the one yod reports as its own; the others
    # wait for yod to end them.
    assert re.search(r"rank 0 \(nid \d+\): exited with status 1", r.stderr), r.stderr
    assert "not reached" not in r.stdout


def test_abort_ends_the_job_yod_reports_rank_call_and_code(tc):
    r = yod(tc, 4, "errors", "abort", limit=60, timeout=120)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "MPI_Abort(MPI_COMM_WORLD, 7) called on rank 1" in r.stderr, r.stderr
    assert re.search(r"rank 1 \(nid \d+\): exited with status 7", r.stderr), r.stderr
    assert "not reached" not in r.stdout


def test_errors_return_on_tern(tc):
    r = yod(tc, 2, "errors", "return")
    assert r.returncode == 0 and "errors return ok" in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize("case,n,message", mpi_cases.FATAL)
def test_fatal_errors_end_the_job_with_a_message(tc, case, n, message):
    """The cases test_mpi_host.py runs on the Linux host, on Tern nodes: the
    library's message reaches the user through yod, which exits 1."""
    r = yod(tc, n, "errors", case, limit=60, timeout=120)
    assert r.returncode == 1, r.stdout + r.stderr
    assert message in r.stderr, r.stderr
    assert "not reached" not in r.stdout


def test_request_table_is_bounded_with_a_clear_message(tc):
    r = yod(tc, 2, "errors", "requests", limit=60, timeout=120, env=mpi_cases.REQUESTS_ENV)
    assert r.returncode == 1, r.stdout + r.stderr
    assert mpi_cases.REQUESTS_MESSAGE in r.stderr, r.stderr
    assert "not reached" not in r.stdout


def test_unexpected_memory_is_bounded_with_a_clear_message(tc):
    """Held unexpected messages past TERN_MPI_SAVED_MAX end the job with a
    message naming the variable, not with the node out of memory."""
    r = yod(tc, 8, "unexpected", limit=60, timeout=120,
            env={"TERN_MPI_UNEXPECTED": "32768", "TERN_MPI_UH": "64",
                 "TERN_MPI_SAVED_MAX": "4096"})
    assert r.returncode == 1, r.stdout + r.stderr
    assert "TERN_MPI_SAVED_MAX" in r.stderr and "unexpected ok" not in r.stdout, r.stderr
