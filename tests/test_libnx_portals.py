"""libnx on Portals 4 (the Tern build), run on the Linux-host Portals: the
tests/nx programs as N processes on one veth end inside a network namespace
each test creates and deletes (tests/nxlaunch.py), one nid, one Portals pid
per rank.  The same programs run under libnx-mpi in test_libnx_mpi.py, so
the two libraries are held to the same answers.  Also checks that lwkcc
makes static Tern binaries.  Needs root (namespaces, CAP_NET_RAW)."""
import os
import re
import subprocess
import sys

import pytest

from nodes import ROOT

sys.path.insert(0, os.path.join(ROOT, "tests"))
from nxlaunch import launch, netns  # noqa: E402

BIN = os.path.join(ROOT, "build", "nx-portals")
LWKCC = os.path.join(ROOT, "build", "bin", "lwkcc")

pytestmark = pytest.mark.skipif(os.geteuid() != 0,
                                reason="needs root for network namespaces")


@pytest.fixture
def ns():
    with netns() as n:
        yield n


def run(ns, n, prog, *args, timeout=90, env=None):
    return launch(ns, n, [os.path.join(BIN, prog), *args], timeout=timeout,
                  env=env)


@pytest.mark.parametrize("prog,n,expect", [
    ("pingpong", 2, "pingpong ok"),
    ("ring", 4, "ring ok on 4 nodes"),
    ("types", 3, "types ok"),
    ("order", 3, "order ok on 3 nodes"),
    ("order", 5, "order ok on 5 nodes"),
    ("bigmsg", 2, "bigmsg ok"),
    ("unexpected", 16, "unexpected ok: 30000 messages"),
    ("barrier", 8, "barrier ok on 8 nodes"),
    ("selfsend", 3, "selfsend ok on 3 nodes"),
    ("self", 2, "self ok on 2 nodes"),
    ("sendcancel", 3, "sendcancel ok on 3 nodes"),
])
def test_point_to_point_and_sync(ns, prog, n, expect):
    r = run(ns, n, prog)
    assert r.status == 0, r
    assert expect in r.out, r
    assert all(s == 0 for s in r.statuses), r


def stats(r, node):
    m = re.search(rf"libnx stats node {node}: (.*)", r.err)
    assert m, r
    return {k: int(v) for k, v in (w.split("=") for w in m.group(1).split())}


@pytest.mark.parametrize("n", [1, 2, 3, 8])
@pytest.mark.parametrize("way", ["portals", "messages"])
def test_thousands_of_gsyncs_each_really_waits(ns, n, way):
    """tests/nx/gsyncs.c: 2000 gsyncs back to back and 2000 checked ones
    (a node that has not entered gsync s must not hold a message another
    sends after leaving it).  Portals forwards them (libmsg/msg_barrier.c)
    but the first (which agrees on the way); TERN_NX_TRIGGERED=0 keeps to
    messages."""
    r = run(ns, n, "gsyncs", env=dict(TERN_NX_STATS="1",
                                     TERN_NX_TRIGGERED="1" if way == "portals" else "0"))
    assert r.status == 0 and all(s == 0 for s in r.statuses), r
    assert f"gsyncs ok on {n} nodes: 4000 gsyncs" in r.out, r
    want = 3999 if way == "portals" and n > 1 else 0
    assert all(stats(r, k)["portals_barriers"] == want for k in range(n)), r


@pytest.mark.parametrize("eager,rendezvous", [(None, 6), ("8192", 12)])
def test_messages_up_to_64_KiB_go_eager(ns, eager, rendezvous):
    """tests/nx/pingpong.c sends 12 sizes, 0 B to 1 MiB, three times each
    way.  A rendezvous costs two one-way trips more than an eager message,
    so by default everything up to 64 KiB goes eager: only 256 KiB and
    1 MiB are pulled (6 sends a node).  TERN_NX_EAGER still sets the limit:
    at 8192, 16 and 64 KiB go by rendezvous too (12)."""
    env = dict(TERN_NX_STATS="1")
    if eager:
        env["TERN_NX_EAGER"] = eager
    r = run(ns, 2, "pingpong", env=env)
    assert r.status == 0 and "pingpong ok" in r.out, r
    assert [stats(r, k)["rendezvous"] for k in (0, 1)] == [rendezvous] * 2, r.err


@pytest.mark.parametrize("push_max,pushed,missed", [(None, 5, 0), ("0", 0, 0)])
def test_a_receive_takes_the_data_with_the_announcement(ns, push_max, pushed, missed):
    """tests/nx/pushed.c: five messages above the eager limit, all pulled
    by a get once.  Now the announcement carries a message's first 256 KiB
    (TERN_NX_PUSH_MAX), which a receive posted first takes (1, 3, 4, and the
    first 256 KiB of 5's 3 MiB): their rest, if any, is pulled.  Sent before
    its receive (2), it waits in a landing buffer and the receive copies it
    (before landing buffers: missed, pulled whole, and 3 only announced).
    With TERN_NX_PUSH_MAX=0 every one is pulled.  The program checks every
    byte."""
    env = dict(TERN_NX_STATS="1")
    if push_max:
        env["TERN_NX_PUSH_MAX"] = push_max
    r = run(ns, 2, "pushed", env=env)
    assert r.status == 0 and "pushed ok" in r.out, r
    s = stats(r, 0)
    assert (s["rendezvous"], s["pushed"], s["push_missed"]) == (5, pushed, missed), r.err


def test_pushes_beyond_the_landing_room_are_pulled_whole(ns):
    """tests/nx/pushed.c flood: twelve 200 KB messages sent before any
    receive.  Some land (before landing buffers none did: "pushed" stayed
    at the five-message part's 3), those past the room are missed and
    pulled whole, and all arrive right and in order."""
    r = run(ns, 2, "pushed", "flood", env=dict(TERN_NX_STATS="1"))
    assert r.status == 0 and "pushed ok" in r.out, r
    s = stats(r, 0)
    assert s["rendezvous"] == 17 and s["pushed"] >= 6 and s["push_missed"] >= 1, r.err
    assert s["pushed"] + s["push_missed"] <= 17, r.err
    # A second flood, after the first was received: the landing buffers it
    # filled were handed back (AUTO_FREE) and linked again ahead of the
    # catch, so some of the second land too.
    r2 = run(ns, 2, "pushed", "flood2", env=dict(TERN_NX_STATS="1"))
    assert r2.status == 0 and "pushed ok" in r2.out, r2
    s2 = stats(r2, 0)
    assert s2["rendezvous"] == 30 and s2["pushed"] >= s["pushed"] + 1, (s, r2.err)


def test_landed_messages_keep_their_data_through_a_drain(ns):
    """tests/nx/pushed.c drain: with 16 KiB pushes, a 4 KiB eager limit and
    256 KiB of unexpected space (64 KiB of it landing room), two messages
    land (one whole: its sender is done with its buffer at the ACK), then
    300 eager messages of 3000 bytes overflow node 1's unexpected space.
    It drains what Portals holds, the landed two with their data, pauses
    node 0, and takes everything in order; the program checks every byte."""
    env = dict(TERN_NX_STATS="1", TERN_NX_EAGER="4096", TERN_NX_PUSH_MAX="16384",
               TERN_NX_UNEXPECTED="262144")
    r = run(ns, 2, "pushed", "drain", env=env)
    assert r.status == 0 and "pushed ok" in r.out, r
    s0, s1 = stats(r, 0), stats(r, 1)
    assert s1["recoveries"] >= 1 and s1["drained"] >= 2, r.err
    assert s0["push_missed"] == 0 and s0["pushed"] == s0["rendezvous"], r.err


@pytest.mark.parametrize("var,value,message", [
    ("TERN_NX_PUSH_MAX", "-5", "libnx: TERN_NX_PUSH_MAX is negative"),
    ("TERN_NX_EAGER", "2000000", "libnx: TERN_NX_EAGER above 1 MiB"),
    ("TERN_NX_PUSH_MAX", "lots", "libnx: TERN_NX_PUSH_MAX=lots is not a number"),
])
def test_a_bad_setting_ends_the_job_with_a_message(ns, var, value, message):
    r = run(ns, 2, "pushed", env={var: value}, timeout=30)
    assert r.status != 0 and message in r.err, r


def test_unexpected_space_runs_out_nothing_lost(ns):
    """32 KiB of unexpected space and 64 unexpected headers for 14000
    messages: Portals disables the PT again and again; the library drains,
    pauses the senders, re-enables and they resend.  Every message arrives,
    in order per sender (the program checks), and the fallback really
    ran."""
    r = run(ns, 8, "unexpected", env=dict(TERN_NX_UNEXPECTED="32768",
                                          TERN_NX_UH="64", TERN_NX_STATS="1"))
    assert r.status == 0, r
    assert "unexpected ok: 14000 messages" in r.out
    s0 = stats(r, 0)
    assert s0["recoveries"] >= 3 and s0["drained"] > 1000, s0
    assert sum(stats(r, k)["resent"] for k in range(1, 8)) > 0


def test_order_holds_through_flow_control_and_all_rendezvous(ns):
    r = run(ns, 3, "order", env=dict(TERN_NX_UNEXPECTED="32768",
                                     TERN_NX_UH="64", TERN_NX_EAGER="64"))
    assert r.status == 0 and "order ok on 3 nodes" in r.out, r


@pytest.mark.parametrize("n", [1, 2, 3, 8, 16])
def test_every_reduction_against_the_serial_answer(ns, n):
    r = run(ns, n, "reduce")
    assert r.status == 0, r
    assert f"reduce ok on {n} nodes" in r.out


@pytest.mark.parametrize("case,message", [
    ("msglong", "NX error in crecv on node 1: EQMSGLONG: message of 8 bytes"),
    ("badnode", "NX error in csend on node 0: EQNODE: node 2 is not in 0..1"),
    ("badmid", "NX error in msgwait on node 0: EQMID: message id 12345"),
])
def test_errors_end_the_job_with_a_message(ns, case, message):
    r = run(ns, 2, "errors", case, timeout=30)
    # Every rank ends with status 1 by itself (the failing one broadcasts
    # its abort), well before the launcher's grace period.
    assert r.statuses == [1, 1], r
    assert message in r.err
    assert "not reached" not in r.out
    assert r.secs < 3, r


def test_underscore_variants_return_errors(ns):
    r = run(ns, 2, "errors", "soft")
    assert r.status == 0 and "soft errors ok" in r.out, r


def test_lwkcc_makes_static_tern_binaries(tmp_path):
    src = tmp_path / "hello.c"
    src.write_text('#include <nx.h>\n#include <stdio.h>\n'
                   'int main(void) { double x = mynode() + 1.0, w;\n'
                   '  gdsum(&x, 1, &w); printf("%g\\n", x); return 0; }\n')
    for flags in ([], ["--glibc"]):
        exe = tmp_path / ("hello" + "".join(flags))
        subprocess.run([LWKCC, *flags, "-O2", "-Wall", "-Werror", str(src),
                        "-o", str(exe)], check=True, timeout=60)
        # Static (no program interpreter), linked with the Tern system-call
        # Portals, not the AF_PACKET host.
        hdr = subprocess.run(["readelf", "-lh", str(exe)], capture_output=True,
                             text=True, check=True).stdout
        assert "EXEC" in hdr and "INTERP" not in hdr
        syms = subprocess.run(["nm", str(exe)], capture_output=True, text=True,
                              check=True).stdout
        assert "ptl_tern_nop" in syms and "lh_packet_send" not in syms
        assert " T gdsum" in syms and " T PtlNIInit" in syms
    # -c compiles only.
    subprocess.run([LWKCC, "-c", str(src), "-o", str(tmp_path / "h.o")],
                   check=True, timeout=60)
