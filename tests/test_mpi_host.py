"""Tern's MPI (libmpi over the message engine, docs/mpi.md) on the Linux-host
Portals: the tests/mpi programs as N processes on one veth end inside a
network namespace (tests/nxlaunch.py), the same programs test_mpi_tern.py
runs on Tern nodes.  Also the compiler wrappers: static binaries, -show,
Fortran through mpif.h in fixed and free form, calls Tern's MPI does not have
failing at link time.  Needs root (namespaces, CAP_NET_RAW)."""
import os
import re
import subprocess
import sys

import pytest

from nodes import ROOT

sys.path.insert(0, os.path.join(ROOT, "tests"))
import mpi_cases  # noqa: E402
from nxlaunch import launch, netns  # noqa: E402

BIN = os.path.join(ROOT, "build", "mpi-portals")
MPICC = os.path.join(ROOT, "build", "bin", "tern-mpicc")
MPIF90 = os.path.join(ROOT, "build", "bin", "tern-mpif90")

pytestmark = pytest.mark.skipif(os.geteuid() != 0,
                                reason="needs root for network namespaces")


@pytest.fixture(scope="module")
def ns():
    with netns() as n:
        yield n


def run(ns, n, prog, *args, timeout=120, env=None):
    return launch(ns, n, [os.path.join(BIN, prog), *args], timeout=timeout, env=env)


@pytest.mark.parametrize("prog,n,expect", [
    ("p2p", 2, "p2p ok on 2 ranks"),
    ("p2p", 3, "p2p ok on 3 ranks"),
    ("p2p", 5, "p2p ok on 5 ranks"),
    ("comm", 1, "comm ok on 1 ranks"),
    ("comm", 4, "comm ok on 4 ranks"),
    ("comm", 16, "comm ok on 16 ranks"),
    ("types", 2, "types ok on 2 ranks"),
    ("types", 5, "types ok on 5 ranks"),
    ("typextra", 1, "typextra ok on 1 ranks"),
    ("typextra", 4, "typextra ok on 4 ranks"),
    ("ops", 1, "ops ok on 1 ranks: 326 combinations"),
    ("ops", 3, "ops ok on 3 ranks: 326 combinations"),
    ("ops", 16, "ops ok on 16 ranks: 326 combinations"),
    ("unexpected", 8, "unexpected ok: 14000 messages"),
    ("mprobe", 2, "mprobe ok on 2 ranks"),
    ("mprobe", 5, "mprobe ok on 5 ranks"),
    ("bigmsg", 3, "bigmsg ok"),
    ("ftest", 1, "fortran ok on 1 ranks"),
    ("ftest", 4, "fortran ok on 4 ranks"),
    ("fbind", 1, "fortran bindings ok on 1 ranks"),
    ("fbind", 4, "fortran bindings ok on 4 ranks"),
    ("topo", 1, "topo ok on 1 ranks"),
    ("topo", 4, "topo ok on 4 ranks"),
    ("topo", 7, "topo ok on 7 ranks"),
    ("rma", 1, "rma ok on 1 ranks"),
    ("rma", 2, "rma ok on 2 ranks"),
    ("rma", 4, "rma ok on 4 ranks"),
    ("rma", 7, "rma ok on 7 ranks"),
    ("profile", 1, "profile ok on 1 ranks"),
    ("profile", 4, "profile ok on 4 ranks"),
    ("cancel", 2, "cancel ok on 2 ranks"),
    ("cancel", 3, "cancel ok on 3 ranks"),
    ("cancelgone", 2, "cancelgone ok"),
    ("shmwin", 1, "shmwin ok: 1 ranks, node groups of 1"),
    ("shmwin", 3, "shmwin ok: 3 ranks, node groups of 3"),
    ("shmwin", 6, "shmwin ok: 6 ranks, node groups of 6"),
    ("shmwin world", 4, "shmwin ok: 4 ranks, node groups of 4"),
])
def test_semantics(ns, prog, n, expect):
    r = run(ns, n, *prog.split())  # the program, then its arguments
    assert r.status == 0 and all(s == 0 for s in r.statuses), r
    assert expect in r.out, r


@pytest.mark.parametrize("n,threads", [(1, 2), (2, 4), (5, 4), (3, 16)])
def test_threads_call_mpi_at_once_under_thread_multiple(ns, n, threads):
    """tests/mpi/threads.c: MPI_THREAD_MULTIPLE; every thread rings eager
    and rendezvous messages and reduces on a communicator of its own and
    rings on MPI_COMM_WORLD with its own tag, all at once; a thread blocked
    in MPI_Recv is matched by another thread's later send (to itself and to
    the next rank); a thread polls MPI_Test while others block.  Without
    the library's lock the bytes cross between threads.  Then MPI_Comm_dup
    and MPI_Comm_idup where some ranks start a duplicate only after others'
    have ended, and an idup of MPI_COMM_SELF while another thread's idup
    waits for a late rank: before context-id agreements counted only those
    every member had joined, these hung."""
    r = run(ns, n, "threads", str(threads), timeout=180)
    assert r.status == 0 and all(s == 0 for s in r.statuses), r
    assert f"threads ok on {n} ranks: {threads} threads" in r.out, r


@pytest.mark.parametrize("n,mode", [(1, None), (5, None), (1, "world"), (4, "world")])
def test_sessions_without_and_with_mpi_init(ns, n, mode):
    """tests/mpi/session.c: MPI-4 sessions, process sets, communicators made
    from groups with string tags (apart from each other, of a subgroup, of
    oneself), the session's error handler; without MPI_Init the library
    still says goodbye when the process exits (TERN_MPI_STATS=1 shows each
    rank's exit handshake), and inside MPI_Init .. MPI_Finalize an open
    session keeps the library working past MPI_Finalize."""
    r = run(ns, n, "session", *([mode] if mode else []), env={"TERN_MPI_STATS": "1"})
    assert r.status == 0 and all(s == 0 for s in r.statuses), r
    assert f"session ok on {n} ranks" + (" (world model too)" if mode else "") in r.out, r
    assert len(re.findall(r"MPI exit node \d+: sends settled", r.err)) == n, r


@pytest.mark.parametrize("n", [1, 2, 3, 8, 16])
def test_every_collective_against_the_serial_answer(ns, n):
    r = run(ns, n, "coll", timeout=180)
    assert r.status == 0, r
    assert f"coll ok on {n} ranks" in r.out, r


@pytest.mark.parametrize("n", [1, 2, 5, 8])
def test_nonblocking_collectives_progress_while_the_rank_does_other_things(ns, n):
    """tests/mpi/nbc.c: NBX (an Ibarrier entered while messages are still to
    be received; it hung when the barrier finished in its call) and eight
    nonblocking collectives open at once beside point-to-point traffic,
    against the blocking calls' results."""
    r = run(ns, n, "nbc", timeout=180)
    assert r.status == 0, r
    assert re.search(rf"nbc ok on {n} ranks: \d+ messages", r.out), r


# TERN_MPI_VTREE_MAX: blocks up to this many bytes go along Gatherv's and
# Scatterv's tree (default 512); 0 sends every non-empty block straight
# between the root and its rank, 1e9 sends every block along the tree.
@pytest.mark.parametrize("n,vtree", [(1, None), (2, None), (3, None), (8, None), (16, None),
                                     (3, "0"), (16, "0"), (3, "1000000000"),
                                     (16, "1000000000")])
def test_gatherv_scatterv_against_the_serial_answer(ns, n, vtree):
    """tests/mpi/collv.c: uneven, empty, large (eager and rendezvous) blocks,
    gaps and falling displacements, MPI_IN_PLACE, derived types on both
    sides, world and a reversed split; every byte of the root's buffer (or
    the rank's) compared with the serial answer, holes included."""
    r = run(ns, n, "collv", timeout=180, env={"TERN_MPI_VTREE_MAX": vtree} if vtree else None)
    assert r.status == 0 and all(s == 0 for s in r.statuses), r
    assert re.search(rf"collv ok on {n} ranks: \d+ calls", r.out), r


@pytest.mark.parametrize("vtree,root_sends,rank8_sends", [(None, 4, 3), ("0", 4 + 15, 3)])
def test_scatterv_of_small_blocks_takes_log2_n_messages_from_the_root(ns, vtree, root_sends,
                                                                     rank8_sends):
    """100 Scatterv of 4-byte blocks on 16 ranks: the root sends 4 messages
    per call (its children in the binomial tree), rank 8 forwards 3;
    the linear way (TERN_MPI_VTREE_MAX=0) sends 15 of its own beside the
    tree's 4 of lengths only (rank 8 still forwards 3 of those)."""
    env = dict(TERN_MPI_STATS="1", **({"TERN_MPI_VTREE_MAX": vtree} if vtree else {}))
    r = run(ns, 16, "collv", "count", "100", env=env)
    assert r.status == 0 and "collv count ok on 16 ranks: 100 calls" in r.out, r
    sends = {k: stats(r, k)["eager"] + stats(r, k)["rendezvous"] for k in (0, 8)}
    assert sends == {0: 100 * root_sends, 8: 100 * rank8_sends}, (sends, r)


@pytest.mark.parametrize("vtree,root_takes,rank8_takes,rank8_sends",
                         [(None, 4, 3, 1), ("0", 4 + 15, 3, 2)])
def test_gatherv_of_small_blocks_takes_log2_n_messages_to_the_root(ns, vtree, root_takes,
                                                                  rank8_takes, rank8_sends):
    """100 Gatherv of 4-byte blocks to rank 0 of 16: the root takes 4
    messages per call (its children in the binomial tree), rank 8 takes 3
    (its children's) and sends 1, its subtree's blocks together; the linear
    way (TERN_MPI_VTREE_MAX=0) brings the root 15 blocks of its own beside
    the tree's 4 of lengths, and rank 8 sends its block beside its tree
    message.  No rank sends more than one tree message per call."""
    env = dict(TERN_MPI_STATS="1", **({"TERN_MPI_VTREE_MAX": vtree} if vtree else {}))
    r = run(ns, 16, "collv", "count", "100", "gatherv", env=env)
    assert r.status == 0 and "collv count ok on 16 ranks: 100 calls of MPI_Gatherv" in r.out, r
    st = {k: stats(r, k) for k in range(16)}
    sends = {k: s["eager"] + s["rendezvous"] for k, s in st.items()}
    assert (st[0]["received"], st[8]["received"]) == (100 * root_takes, 100 * rank8_takes), st
    assert sends[0] == 0 and sends[8] == 100 * rank8_sends, sends
    assert sum(s["received"] for s in st.values()) == sum(sends.values()), st


def stats(r, rank):
    m = re.search(rf"MPI stats node {rank}: (.*)", r.err)
    assert m, r
    return {k: int(v) for k, v in (w.split("=") for w in m.group(1).split())}


@pytest.mark.parametrize("n", [1, 2, 3, 8])
@pytest.mark.parametrize("way", ["portals", "messages"])
def test_thousands_of_barriers_each_really_waits(ns, n, way):
    """tests/mpi/barrier.c: 2000 barriers back to back, 2000 more checked
    (a rank that has not entered barrier s must not hold a message another
    rank sends after leaving it), and the same on dup and split
    communicators and on one taking a freed context id; a rank in a barrier
    still serves a rendezvous send its partner must finish before it can
    enter the barrier (MPI's progress rule).  Portals forwards
    them (libmsg/msg_barrier.c); TERN_MPI_TRIGGERED=0 keeps to messages.
    Every barrier after a communicator's first (which agrees on the way)
    went the way asked."""
    r = run(ns, n, "barrier", timeout=300,
            env=dict(TERN_MPI_STATS="1", TERN_MPI_TRIGGERED="1" if way == "portals" else "0"))
    assert r.status == 0 and all(s == 0 for s in r.statuses), r
    assert f"barrier ok on {n} ranks: 8010 barriers" in r.out, r
    # Each rank's barriers per communicator (barrier.c): world 4510, half,
    # dup and third 1000 each, again 500.  A communicator of one member
    # needs none; the first of the others agrees on the way (an allreduce).
    for k in range(n):
        sizes = {"world": n, "dup": n, "again": n,
                 "half": sum(1 for j in range(n) if j % 2 == k % 2),
                 "third": sum(1 for j in range(n) if j % 3 == k % 3)}
        calls = {"world": 4510, "dup": 1000, "again": 500, "half": 1000, "third": 1000}
        want = sum(calls[c] - 1 for c in calls if sizes[c] > 1) if way == "portals" else 0
        assert stats(r, k)["portals_barriers"] == want, (k, r)


def test_barriers_keep_working_when_portals_counters_run_out(ns):
    """800 communicators alive at once on 8 ranks need more counters than
    Portals has (512 per process): the later ones agree to keep to
    messages (ranks of a 5-member split run out before those of a 3-member
    one), barriers stay correct (the checked phases), and once they are
    freed a new communicator's 99 checked barriers are forwarded again."""
    r = run(ns, 8, "barrier", "exhaust", timeout=300, env=dict(TERN_MPI_STATS="1"))
    assert r.status == 0 and all(s == 0 for s in r.statuses), r
    m = re.search(r"exhaust ok on 8 ranks: (\d+) barriers", r.out)
    assert m, r
    for k in range(8):
        assert 99 <= stats(r, k)["portals_barriers"] < int(m.group(1)) // 2, (k, r)


def test_unexpected_space_runs_out_nothing_lost(ns):
    """32 KiB of unexpected space and 64 Portals headers for 14000 messages:
    the engine's flow control (drain, PAUSE, re-enable, resend) runs again
    and again under MPI; every message arrives in order (the program
    checks).  TERN_MPI_* are the engine's tunables under MPI."""
    r = run(ns, 8, "unexpected", env=dict(TERN_MPI_UNEXPECTED="32768", TERN_MPI_UH="64",
                                          TERN_MPI_STATS="1"))
    assert r.status == 0, r
    assert "unexpected ok: 14000 messages" in r.out
    s0 = stats(r, 0)
    assert s0["recoveries"] >= 3 and s0["drained"] > 1000, s0
    assert sum(stats(r, k)["resent"] for k in range(1, 8)) > 0


@pytest.mark.parametrize("posted", [None, "7"])
def test_thousands_of_receives_posted_at_once(ns, posted):
    """tests/mpi/manyrecv.c: 4000 receives posted at once on rank 0 of 3
    (more than Portals' 2048 match entries: the job ended at the first
    receive Portals refused), posted before their messages, after them
    (flow control may drain some), as MPI_ANY_SOURCE, from synchronous sends
    (each match a pull: more at once than Portals has MDs ended the job too),
    each found by MPI_Probe and MPI_Iprobe among 2000 waiting (the event
    queue overflowed: a probe was answered once per matching message), and
    3999 cancelled behind one that completes, and 2000 posted while 250
    communicators' barriers hold Portals entries and 512 synchronous sends
    expose their buffers at once (the 500th send found no entry and ended
    the job), and 800 rendezvous sends started before their receiver posts
    anything (MPI_Isend is local: the 513th waited for a pull that never
    came, and the job hung; now 288 go late, put into their receives once
    matched), then 600 to one rank and a 601st to another, which the first
    waits on (a late send exposed only as earlier ones were pulled hung it),
    then 3000 whose receives are posted while their sender computes (each
    match asked it for its message at once: its event queue overflowed);
    each gets the message MPI's order gives it.  With
    TERN_MPI_POSTED=7 nearly all wait in the library (libmsg/msg_held.c)
    and most take their message as it comes."""
    env = dict(TERN_MPI_STATS="1")
    if posted:
        env["TERN_MPI_POSTED"] = posted
    r = run(ns, 3, "manyrecv", "4000", env=env)
    assert r.status == 0 and "manyrecv ok on 3 ranks: 4000 receives" in r.out, r
    s0 = stats(r, 0)
    assert s0["held"] > (15000 if posted else 2000), s0
    assert s0["late"] >= 288 + 89 + 2488, s0
    if posted:
        assert s0["held_taken"] > 1000, s0


def test_matched_probes_take_messages_flow_control_drained(ns):
    """tests/mpi/mprobe.c with 32 KiB of unexpected space and 64 Portals
    headers: its flood of 1200 messages is drained into the library's queue
    in recoveries, and matched probes take them from there in order."""
    r = run(ns, 5, "mprobe", env=dict(TERN_MPI_UNEXPECTED="32768", TERN_MPI_UH="64",
                                      TERN_MPI_STATS="1"))
    assert r.status == 0 and "mprobe ok on 5 ranks" in r.out, r
    drained = re.search(r"stats node 0: .*recoveries=(\d+) .*drained=(\d+)", r.err)
    assert drained and int(drained.group(1)) > 0 and int(drained.group(2)) > 0, r.err


def test_unexpected_memory_is_bounded_with_a_clear_message(ns):
    """Held unexpected messages past TERN_MPI_SAVED_MAX end the job with a
    message naming the variable, not with the node out of memory."""
    r = run(ns, 8, "unexpected", env=dict(TERN_MPI_UNEXPECTED="32768", TERN_MPI_UH="64",
                                          TERN_MPI_SAVED_MAX="4096"), timeout=60)
    assert r.status == 1, r
    assert "TERN_MPI_SAVED_MAX" in r.err and "unexpected ok" not in r.out, r


@pytest.mark.parametrize("case,n,message", mpi_cases.FATAL)
def test_fatal_errors_end_the_job_with_a_message(ns, case, n, message):
    r = run(ns, n, "errors", case, timeout=30)
    assert all(s == 1 for s in r.statuses), r
    assert message in r.err, r
    assert "not reached" not in r.out


def test_request_table_is_bounded_with_a_clear_message(ns):
    """Requests never waited for fill the table TERN_MPI_REQUESTS sizes; the
    job ends with a message naming the variable, not out of memory."""
    r = run(ns, 2, "errors", "requests", timeout=30, env=mpi_cases.REQUESTS_ENV)
    assert all(s == 1 for s in r.statuses), r
    assert mpi_cases.REQUESTS_MESSAGE in r.err, r
    assert "not reached" not in r.out


def test_abort_ends_every_rank_with_its_code(ns):
    r = run(ns, 3, "errors", "abort", timeout=30)
    assert r.statuses == [7, 7, 7], r
    assert "MPI_Abort(MPI_COMM_WORLD, 7) called on rank 1" in r.err, r
    assert "not reached" not in r.out


def test_errors_return_codes_under_errors_return(ns):
    r = run(ns, 2, "errors", "return")
    assert r.status == 0 and "errors return ok" in r.out, r


def test_mpicc_and_mpif90_make_static_tern_binaries(tmp_path):
    src = tmp_path / "hello.c"
    src.write_text('#include <mpi.h>\n#include <stdio.h>\n'
                   'int main(int c, char **v) { int r; MPI_Init(&c, &v);\n'
                   '  MPI_Comm_rank(MPI_COMM_WORLD, &r); printf("%d\\n", r);\n'
                   '  return MPI_Finalize(); }\n')
    # Fixed form, as old codes are: mpif.h must read in both forms.
    fsrc = tmp_path / "hello.f"
    fsrc.write_text("      program hello\n      include 'mpif.h'\n      integer ierr, r\n"
                    "      call mpi_init(ierr)\n"
                    "      call mpi_comm_rank(MPI_COMM_WORLD, r, ierr)\n"
                    "      print *, r, MPI_STATUS_SIZE\n      call mpi_finalize(ierr)\n"
                    "      end\n")
    for cc, s, flags in ((MPICC, src, []), (MPICC, src, ["--glibc"]), (MPIF90, fsrc, [])):
        exe = tmp_path / ("a" + "".join(flags) + s.suffix)
        r = subprocess.run([cc, *flags, "-o", str(exe), str(s)], capture_output=True,
                           text=True)
        assert r.returncode == 0, r.stderr
        f = subprocess.run(["file", str(exe)], capture_output=True, text=True).stdout
        assert "statically linked" in f and "x86-64" in f, f
    r = subprocess.run([MPICC, "-show", "x.c"], capture_output=True, text=True)
    assert r.returncode == 0 and "libmpi-tern.a" in r.stdout and "-static" in r.stdout
    # The wrapper's own options anywhere, as MPICH's (a Makefile's
    # `$(MPICC) $(CFLAGS) -show`), and an argument with a space kept whole.
    r = subprocess.run([MPICC, "-O2", "-DMSG=a b", "-show", "--glibc", "x.c"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "libmpi.a" in r.stdout and "libmpi-tern.a" not in r.stdout, r.stdout
    assert "-show" not in r.stdout and "--glibc" not in r.stdout, r.stdout
    assert "-O2 -DMSG=a b x.c" in r.stdout, r.stdout


@pytest.mark.parametrize("n", [1, 3, 4])
def test_mpi_io_through_subarray_views(ns, n, tmp_path):
    """tests/mpi/fileio.c: MPI_File_* with C- and Fortran-order subarray
    views, collective and independent, the file pointer, sizes, info
    objects, EXCL, DELETE_ON_CLOSE and a missing file's error class (MPICH
    passes the same program).  Tern's MPI had no MPI_File_* at all."""
    os.chmod(tmp_path, 0o777)
    r = run(ns, n, "fileio", str(tmp_path))
    assert r.status == 0 and all(s == 0 for s in r.statuses), r
    assert f"fileio ok on {n} ranks" in r.out, r


def test_calls_tern_mpi_lacks_fail_at_link_time(tmp_path):
    src = tmp_path / "spawn.c"
    src.write_text('#include <mpi.h>\nint MPI_Comm_spawn();\n'
                   'int main(int c, char **v) { MPI_Init(&c, &v); MPI_Comm_spawn();\n'
                   '  return MPI_Finalize(); }\n')
    r = subprocess.run([MPICC, "-o", str(tmp_path / "spawn"), str(src)], capture_output=True,
                       text=True)
    assert r.returncode != 0 and "undefined reference to `MPI_Comm_spawn'" in r.stderr, r.stderr
    fsrc = tmp_path / "accept.f90"
    fsrc.write_text("program w\ninclude 'mpif.h'\ninteger :: ierr, c\n"
                    "call mpi_init(ierr)\n"
                    "call mpi_comm_accept('port', MPI_INFO_NULL, 0, MPI_COMM_WORLD, c, ierr)\n"
                    "call mpi_finalize(ierr)\nend program w\n")
    r = subprocess.run([MPIF90, "-o", str(tmp_path / "accept"), str(fsrc)], capture_output=True,
                       text=True)
    assert r.returncode != 0 and "undefined reference to `mpi_comm_accept_'" in r.stderr, r.stderr
