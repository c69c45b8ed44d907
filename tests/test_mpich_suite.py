"""MPICH's own test suite (test/mpi of Debian's mpich 4.0.2 source package,
fetched and built by tests/mpich_suite.py) against Tern's MPI: a selection
of its programs, each passing when it exits 0 and prints " No Errors".

The selection is what Tern's MPI got from running the whole suite
(`python3 tests/mpich_suite.py --host`, docs/mpi.md): intercommunicators
and their collectives (blocking and nonblocking), nonblocking and
persistent collectives and MPI_Alltoallw, MPI_Comm_create_group, datatype
contents, a type freed while a receive uses it, attribute copies and freed
keyvals, graph topologies and neighborhood collectives, error classes a
program adds and error handlers given back, MPI_Info_get_string,
MPI_Comm_idup, the shared file pointer, views that go backwards or overlap,
nonblocking collective file I/O, the profiling names (mprobe calls
PMPI_Message_c2f), MPI-1's MPI_Errhandler_create, the cancel of sends,
shared-memory windows, plus a sample of the rest.  They run on the Linux host's Portals; a few also on
Tern nodes through yod.  Skipped when deb.debian.org cannot be reached."""
import os

import pytest

import clusters
import mpich_suite
from nxlaunch import launch, netns

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (netns, taps)")

# dir/name and rank count, as the suite's testlists give them.
HOST = [
    ("coll/icbarrier", 5), ("coll/icallreduce", 5), ("coll/icgather", 5),
    ("coll/icalltoall", 5), ("coll/icgatherv", 5), ("coll/icalltoallw", 5),
    ("comm/iccreate", 8), ("comm/icsplit", 8), ("comm/icm", 8),
    ("comm/comm_create_group", 4), ("pt2pt/icsend", 4),
    ("datatype/contents", 1), ("datatype/tfree", 2), ("attr/attrerr", 1),
    ("attr/fkeyval", 1), ("attr/baseattrcomm", 1),
    ("coll/alltoallv", 10), ("pt2pt/anyall", 2), ("topo/cartshift1", 4),
    ("coll/nonblocking", 4), ("coll/nonblocking2", 5), ("coll/nbcoll2", 5),
    ("coll/nbredscat", 4), ("coll/alltoallw1", 10),
    ("coll/nbicbcast", 8), ("coll/nbicalltoall", 8), ("coll/p_order", 2),
    ("topo/distgraph1", 4), ("topo/graphcr", 4), ("coll/ring_neighbor_alltoall", 2),
    ("errhan/adderr", 1), ("info/infogetstring", 1), ("errhan/commcall", 2),
    ("comm/comm_idup", 4), ("comm/comm_idup_overlap", 2), ("io/rdwrord", 4),
    ("io/tst_fileview", 1), ("io/i_noncontig_coll2", 4), ("pt2pt/mprobe", 2),
    ("errhan/commcall_oldapi", 2), ("pt2pt/scancel", 2), ("pt2pt/pscancel", 2),
    ("pt2pt/cancelrecv", 2), ("pt2pt/scancel_unmatch", 2),
    ("rma/win_shared", 4), ("rma/win_shared_noncontig", 4), ("rma/win_shared_zerobyte", 4),
    ("rma/win_shared_query_null", 4), ("rma/win_shared_put_flush_load", 3),
    ("comm/cmsplit_type", 4),
]
TERN = [("coll/icallreduce", 4), ("comm/icm", 4), ("datatype/tfree", 2),
        ("coll/nonblocking2", 4), ("pt2pt/scancel", 2), ("pt2pt/pscancel", 2),
        ("pt2pt/cancelrecv", 2), ("pt2pt/scancel_unmatch", 2), ("rma/win_shared", 4),
        ("rma/win_shared_put_flush_load", 3)]


def built(kind, cases):
    try:
        mpich_suite.fetch()
    except OSError as e:    # urllib's errors are OSErrors
        pytest.skip(f"MPICH's source package could not be fetched: {e}")
    progs = [p for p, _ in cases]
    dirs = sorted({p.split("/")[0] for p in progs})
    return mpich_suite.build(kind, dirs, programs=progs)


@pytest.fixture(scope="module")
def host_build():
    return built("host", HOST)


@pytest.fixture(scope="module")
def ns():
    with netns() as n:
        yield n


@pytest.mark.parametrize("prog,n", HOST, ids=[f"{p}:{n}" for p, n in HOST])
def test_mpich_program_passes_on_the_host(host_build, ns, prog, n, monkeypatch):
    path = os.path.join(host_build, prog)
    assert os.path.exists(path), f"{prog} did not build: " + " ".join(
        mpich_suite.missing_calls(host_build, mpich_suite.Case(*prog.split("/"), n, [], {})))
    monkeypatch.chdir(os.path.dirname(path))
    r = launch(ns, n, [path], timeout=60)
    assert mpich_suite.passed(r.status, r.out), r  # no selected line has a resultTest


@pytest.mark.cluster
@pytest.mark.slow
@pytest.mark.run_slow
def test_mpich_programs_pass_on_tern_nodes():
    bdir = built("tern", TERN)
    with clusters.up("mp", "-n", "4", "--boot", "direct") as name:
        for prog, n in TERN:
            r = clusters.yod(name, "-sz", str(n), os.path.join(bdir, prog), timeout=300,
                             cwd=os.path.dirname(os.path.join(bdir, prog)))
            out = r.stdout + r.stderr
            assert mpich_suite.passed(r.returncode, out), (prog, out)
