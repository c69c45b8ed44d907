"""libnx on Tern compute nodes: the tests/nx programs built with lwkcc
(build/nx-tern/), started by yod on the virtual cluster, one rank per node.
The same programs run under libnx-mpi (test_libnx_mpi.py) and on the
Linux-host Portals (test_libnx_portals.py): the three must agree."""
import os
import re

import pytest

from clusters import up, yod
from nodes import ROOT

pytestmark = [pytest.mark.cluster, pytest.mark.slow,
              pytest.mark.skipif(os.geteuid() != 0, reason="needs root (netns, taps)")]

BIN = os.path.join(ROOT, "build", "nx-tern")
# TERN_TEST_NODES: a smaller cluster for a -k selection that fits in it
# (the full module needs 16).
NODES = int(os.environ.get("TERN_TEST_NODES", "16"))


@pytest.fixture(scope="module")
def nx():
    # 128 MiB nodes: bigmsg holds a 64 MiB buffer on each.
    with up("x", "-n", str(NODES), "--boot", "direct", "--mem", "128M") as name:
        yield name


def nx_job(name, n, prog, *args, timeout=300, env=None, limit=240, opts=()):
    """An NX program of build/nx-tern on n nodes, ended by yod after limit
    seconds; env goes to the ranks, opts are more yod options."""
    return yod(name, "-timeout", str(limit), "-sz", str(n), *opts, os.path.join(BIN, prog),
               *args, timeout=timeout, env=env)


def stats(r, node):
    m = re.search(rf"libnx stats node {node}: (.*)", r.stderr)
    assert m, r.stdout + r.stderr
    return {k: int(v) for k, v in (w.split("=") for w in m.group(1).split())}


@pytest.mark.parametrize("prog,n,args,expect", [
    ("pingpong", 2, [], "pingpong ok"),
    ("ring", 4, [], "ring ok on 4 nodes"),          # seed 003, section 4.3.1
    ("types", 3, [], "types ok"),
    ("order", 5, [], "order ok on 5 nodes"),
    ("bigmsg", 2, [], "bigmsg ok"),
    ("unexpected", 16, [], "unexpected ok"),
    ("selfsend", 3, [], "selfsend ok on 3 nodes"),
    ("self", 2, [], "self ok on 2 nodes"),
    ("barrier", 8, ["noclock"], "barrier ok on 8 nodes"),
    ("sendcancel", 2, [], "sendcancel ok on 2 nodes"),
])
def test_point_to_point_and_sync(nx, prog, n, args, expect):
    r = nx_job(nx, n, prog, *args)
    assert r.returncode == 0, r.stdout + r.stderr
    assert expect in r.stdout, r.stdout + r.stderr


def test_a_receive_takes_the_data_with_the_announcement(nx):
    """tests/nx/pushed.c on Tern nodes (test_libnx_portals.py says what it
    checks): all five rendezvous messages go with their announcement, the
    one sent before its receive through a landing buffer; then a flood of
    twelve, sent before any receive, of which those past the landing room
    are pulled whole.  Every byte is right."""
    r = nx_job(nx, 2, "pushed", "flood", env={"TERN_NX_STATS": "1"})
    assert r.returncode == 0 and "pushed ok" in r.stdout, r.stdout + r.stderr
    s = stats(r, 0)
    assert s["rendezvous"] == 17 and s["pushed"] >= 6 and s["push_missed"] >= 1, r.stderr
    assert s["pushed"] + s["push_missed"] <= 17, r.stderr


def test_landed_messages_keep_their_data_through_a_drain(nx):
    """tests/nx/pushed.c drain on Tern nodes (test_libnx_portals.py says
    what it checks): landed messages, one of them whole, survive a drain of
    node 1's unexpected space, with every byte right."""
    env = {"TERN_NX_STATS": "1", "TERN_NX_EAGER": "4096", "TERN_NX_PUSH_MAX": "16384",
           "TERN_NX_UNEXPECTED": "262144"}
    r = nx_job(nx, 2, "pushed", "drain", env=env)
    assert r.returncode == 0 and "pushed ok" in r.stdout, r.stdout + r.stderr
    s0, s1 = stats(r, 0), stats(r, 1)
    assert s1["recoveries"] >= 1 and s1["drained"] >= 2, r.stderr
    assert s0["push_missed"] == 0 and s0["pushed"] == s0["rendezvous"], r.stderr


@pytest.mark.parametrize("n", [2, 4])
def test_a_late_rank_does_not_wait_for_one_already_gone(nx, n):
    """tests/nx/exitlate.c: rank 0 leaves at once, the others compute for
    0.5 s without calling the library, then leave.  Rank 0's EXITING waits
    unseen in their event queues; they used to tell rank 0 of their own exit
    anyway, after its node had ended the job, and wait for an
    acknowledgement that never came until Portals gave up on it (5 s: seen
    at 32 nodes in one job in three).  The handshake is measured by the
    library itself; half the give-up time is far above a real handshake
    (10-60 ms here) and far below the failure (5.0-5.4 s)."""
    r = nx_job(nx, n, "exitlate", "0.5", env={"TERN_NX_STATS": "1"})
    assert r.returncode == 0, r.stdout + r.stderr
    assert sorted(r.stdout.splitlines()) == ["exitlate: rank 0 leaving"] + [
        f"exitlate: rank {k} leaving after 0.5 s" for k in range(1, n)], r.stdout
    shakes = [float(x) for x in re.findall(r"exit handshake ([\d.]+) s", r.stderr)]
    assert len(shakes) == n and max(shakes) < 2.5, r.stderr


@pytest.mark.parametrize("n", [2, 3, 8])
def test_thousands_of_gsyncs_each_really_waits(nx, n):
    """tests/nx/gsyncs.c (1000 gsyncs) on Tern nodes: Portals forwards the
    rounds in the kernel; no node leaves a gsync before all entered it."""
    r = nx_job(nx, n, "gsyncs", "500", env={"TERN_NX_STATS": "1"})
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"gsyncs ok on {n} nodes: 1000 gsyncs" in r.stdout, r.stdout + r.stderr
    assert all(stats(r, k)["portals_barriers"] == 999 for k in range(n)), r.stderr


@pytest.mark.parametrize("n", [3, 4])
def test_unexpected_on_a_few_nodes_runs_flow_control(nx, n):
    """More unexpected messages than Portals has headers for (2048) only
    from 3 ranks up: rank 0's PT is disabled, it drains and PAUSEs every
    rank - itself included, a put to its own node.  That put never came
    back from the wire on a Tern node, so rank 0 waited forever for its own
    PAUSE_ACK (the job hung on 3+ nodes and passed on 2)."""
    r = nx_job(nx, n, "unexpected", env={"TERN_NX_STATS": "1"}, limit=60, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"unexpected ok: {2000 * (n - 1)} messages" in r.stdout
    assert stats(r, 0)["recoveries"] >= 1


def test_flow_control_again_and_again_on_two_nodes(nx):
    """32 KiB of unexpected space and 64 headers: dozens of drain / PAUSE /
    re-enable / resend rounds, each with a PAUSE to the receiver itself;
    nothing lost, order kept (the program checks)."""
    r = nx_job(nx, 2, "unexpected", env={"TERN_NX_STATS": "1", "TERN_NX_UH": "64",
                                      "TERN_NX_UNEXPECTED": "32768"}, limit=90, timeout=150)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "unexpected ok: 2000 messages" in r.stdout
    s0 = stats(r, 0)
    assert s0["recoveries"] >= 3 and s0["drained"] > 500, s0
    assert stats(r, 1)["resent"] > 0


def test_jobs_leave_no_kernel_heap_behind(nx):
    """Each job on a node used to leave 6 KiB of its 4 MiB kernel heap behind
    (its descriptor and TERN_MAP string, and the kernel NI's peer state for
    that job's yod, a new Portals process every time).  With ~100 KiB free
    once libnx is up, a node failed after a few dozen jobs: PtlEQAlloc gave
    PTL_NO_SPACE, or a 16-rank reduce hung.  The heap in use while the same
    program runs must not grow from job to job."""
    used = []
    for _ in range(4):
        r = nx_job(nx, 2, "pingpong", env={"TERN_NX_STATS": "2"}, limit=60, timeout=120,
                opts=("-list", f"{NODES - 1}..{NODES}"))
        assert r.returncode == 0, r.stdout + r.stderr
        m = re.search(r"tern node stats node 0: kmem_used=(\d+) .* kmem_fails=(\d+)", r.stderr)
        assert m, r.stderr
        used.append(int(m.group(1)))
        assert int(m.group(2)) == 0, r.stderr
        # The NIC's counters of the same line: a 2-node ping-pong sent and
        # took frames and was interrupted for some of them, none dropped.
        nic = re.search(r"tern node stats node 0: .* tx=(\d+) rx=(\d+) rx_dropped=(\d+) "
                        r"interrupts=(\d+)", r.stderr)
        assert nic, r.stderr
        tx, rx, dropped, irqs = map(int, nic.groups())
        assert tx > 0 and rx > 0 and irqs > 0 and dropped == 0, r.stderr
    # Not growth but the moment of the reading can differ by an allocation
    # in flight (16 bytes seen: 3036688 and 3036704, alternating); the leak
    # this guards against was 6 KiB a job, 12 KiB over these three.
    assert max(used[1:]) - min(used[1:]) < 1024 and used[-1] - used[1] < 1024, used


@pytest.fixture(scope="module")
def pingpong_costs(nx):
    """What one message of a 0-byte NX ping-pong costs node 0, from the
    counters it prints (TERN_NX_STATS=2): NIC frames sent and Portals
    system calls made.  Both count from boot, so a job of 4000 round trips
    is measured as its difference from a job of 10.  Also the library's
    counters of that job (its "portals stats" lines): ACKs that rode in
    another frame's header, the eager messages node 0 received, each of
    which it acknowledged, why its ACKs that waited for an answer went alone
    instead, and the frames node 1 sent that were neither message nor ACK."""
    def job(iters):
        r = yod(nx, "-sz", "2", "-list", f"{NODES - 1}..{NODES}", os.path.join(BIN, "nxbench"), "lat", "1",
                str(iters), "0", "10", env={"TERN_NX_STATS": "2"}, timeout=180)
        assert r.returncode == 0, r.stdout + r.stderr
        m = re.search(r"tern node stats node 0: .* tx=(\d+) rx=(\d+) .* calls=(\d+)", r.stderr)
        assert m, r.stderr
        lib = {int(node): {k: int(v) for k, v in (w.split("=") for w in words.split())}
               for node, words in re.findall(r"portals stats node (\d+): (.*)", r.stderr)}
        assert sorted(lib) == [0, 1], r.stderr
        s = stats(r, 0)
        return int(m.group(1)), int(m.group(2)), int(m.group(3)), s["eager"], s["received"], lib
    tx0, rx0, calls0, _, _, _ = job(10)
    tx1, rx1, calls1, sent, received, lib = job(4000)
    assert sent >= 4000 and received >= 4000, (sent, received)
    mine, peer = lib[0], lib[1]
    # Frames node 0 took in that node 1's library did not send: yod's and
    # the allocator's, the job's start and end (more of them on a slow host).
    others = max(0, (rx1 - rx0) - peer["tx"])
    text = (f"{tx1 - tx0} frames and {calls1 - calls0} Portals calls for {sent} messages; "
            f"{mine['carried']} ACKs of {received} messages received rode in an answer, "
            f"alone: {mine['alone_time']} as their hold ran out, {mine['alone_wait']} for a "
            f"wait, {mine['alone_frame']} for a frame that came in; node 1 sent "
            f"{peer['retransmits']} frames again and {peer['acks_sent']} acks alone; "
            f"{others} frames came from elsewhere")
    print(text)
    return {"frames": (tx1 - tx0) / sent, "calls": (calls1 - calls0) / sent, "text": text,
            "received": received, "mine": mine, "peer": peer, "others": others}


def test_a_ping_pong_message_costs_one_link_frame(pingpong_costs):
    """An eager NX message is a put that asks for an ACK (libmsg frees its
    bounce copy on it).  The ACK rides in the header of the target's answer
    (PTL_WF_ACKIN; before, ahead of it in one link frame, a Portals frame of
    its own), and its acknowledgement is the answer's.  Once each was a
    frame of its own: three link frames a message, then two, each waking the
    other node once more.  Not
    exactly one: an ACK held longer than its hold (the target's program did
    not answer within 200 us: a slow or busy host) goes alone, as does a
    frame sent again; 1.05 on a quiet host, 1.25 seen on a slow one.  Two
    would be the old way."""
    assert pingpong_costs["frames"] < 1.5, pingpong_costs["text"]


def test_an_ack_rides_in_the_answer_though_an_interrupt_comes_first(pingpong_costs):
    """The ACK a node owes for a message is held for its program's answer,
    to ride in its header.  A receive interrupt that came while the program
    ran sent it alone before the answer: most often the late interrupt of
    the very frame the program's wait had taken in by polling, which brought
    nothing new.  That was 1-5 % of the ACKs of an idle 2-node ping-pong
    under TCG (15 % on a busy host), each a frame of its own ahead of the
    answer.  Now only an interrupt that brings a frame releases it
    (kernel/job/control.c, tick).

    How many ACKs go alone depends on the host's speed, so that is not what
    is checked: on an idle host 0.1-0.6 %, on a busy CI host 3.5 %, as its
    hold ran out (the program answered later than 200 us) or node 1 sent a
    frame again for the same delay.  What must hold on any host: an ACK
    released by a frame that came in had such a frame to come.  While node 0
    holds an ACK, between its receive and its next send, node 1 waits for
    that send; what it sends then is a frame again or an ack alone.  And the
    frames that came from elsewhere (yod's, the allocator's pings, the job's
    start and end: node 0's count of frames taken in, less node 1's library's
    frames).  A fixed allowance of 10 for those was once 1 short on a busy
    host.

    On the 2-vCPU AMD EPYC host of 2026-12-01 the kernel of 2026-11-30 (and
    the next) released 62-97 such ACKs of 8000 with 44-60 frames to explain
    them, in 4 of 6 runs of this test alone.  Not proven, but the likely
    rest: node 1's next message itself, when it comes while node 0 is still
    between its send and its next receive, in user mode.  The tick takes it
    in and, as for any frame that comes while the program computes, sends
    its ACK at once; it is one of node 1's messages, not among the frames
    counted here.  So beside those the bound allows 1 % of the messages: the
    fault this guards against, every late interrupt releasing the ACK, cost
    1-5 % on an idle host and 15 % on a busy one."""
    mine, peer = pingpong_costs["mine"], pingpong_costs["peer"]
    assert pingpong_costs["received"] - mine["carried"] <= (
        mine["alone_time"] + mine["alone_wait"] + mine["alone_frame"] + 10), pingpong_costs["text"]
    assert mine["alone_frame"] <= (peer["retransmits"] + peer["acks_sent"] +
                                   pingpong_costs["others"] + 2 +
                                   pingpong_costs["received"] // 100), pingpong_costs["text"]


def test_a_ping_pong_message_costs_four_portals_calls(pingpong_costs):
    """A node sends one message and receives one per round trip: PtlPut,
    PtlMEAppend for the receive, a look that wakes with the answer, and one
    that takes the ACK of its own put.  libmsg used to look once more after
    each event, to find the queue empty: five calls a message."""
    assert pingpong_costs["calls"] < 4.5, pingpong_costs["text"]


def test_a_sleeping_sender_and_a_computing_receiver_send_nothing_twice(nx):
    """tests/nx/sleepsend.c: node 0 sends a message and sleeps 0.3 s in
    nanosleep; node 1 takes it in crecv and computes 0.2 s without calling
    the library.  Each side owes the other an acknowledgement while its
    program is away: node 1 the ACK it holds for an answer that does not
    come, node 0 the acknowledgement of the frame that ACK comes in.
    - Node 0's was due 200 us after the frame, but a wait that was not the
      library's (the sleep) halted until its end, so node 1's timer sent
      its frame again, in every job.  Now every kernel wait
      halts no longer than the library's next deadline.
    - With that alone, node 0's own timer ran in its sleep and sent its
      message again while node 1's ACK waited for its next call.  Now the
      job's tick comes back for the held ACK, on the library's 4 ms timer
      grain; node 0's timer is sometimes sooner.
    Jobs run until one sends nothing twice, 24 at most."""
    jobs = []
    # Before, every job sent a frame again (node 1 each time; with the
    # waits' fix alone, node 0).  Now most send none.  Not all: a job's
    # start and end resend a frame now and then on a busy host (about one
    # job in four with no message at all, on the old kernel too: frames
    # whose ack a peer the host descheduled sent 1-7 ms late, past their
    # 1-4 ms RTO; docs/performance.md, "Frames that come before their NI"),
    # and node 1's tick, on its 4 ms grain, sometimes loses to node 0's
    # timer.  On an
    # idle host about 6 jobs in 10 are clean; a fresh clone's suite once saw
    # 8 resend in a row (2026-11-30).  So up to 24 jobs, until one is clean.
    while len(jobs) < 24 and not any(j[0] == 0 and j[1] == 0 for j in jobs):
        r = nx_job(nx, 2, "sleepsend", "2", "0.2", "0.3", env={"TERN_NX_STATS": "2"},
                   opts=("-list", f"{NODES - 1}..{NODES}"))
        assert r.returncode == 0 and "sleepsend ok: 2 messages" in r.stdout, r.stdout + r.stderr
        counts = re.findall(r"portals stats node (\d+): tx=\d+ retransmits=(\d+)", r.stderr)
        assert len(counts) == 2, r.stderr
        jobs.append({int(node): int(n) for node, n in counts})
    assert any(j[0] == 0 and j[1] == 0 for j in jobs), jobs


def test_a_burst_of_frames_rings_the_doorbell_once_or_twice(nx):
    """A 1 MiB message leaves a node as a burst of 64 KiB frames (its
    announcement's first 256 KiB, then the reply to the receiver's get).
    Each frame rang the NIC's doorbell, an exit of the emulated CPU of about
    11 us under TCG, because the device was idle again by the next one.  Now
    the burst's first frame rings it and the last ring covers the rest
    (netdev_tx_batch): node 0 of a 2-node stream of 1 MiB messages rings it
    for a small part of its frames.  Counted as the difference between a
    long stream and a short one on the same nodes (the counters run from
    boot)."""
    def job(bytes_):
        r = yod(nx, "-sz", "2", "-list", f"{NODES - 1}..{NODES}", os.path.join(BIN, "nxbench"),
                "stream", "1", str(bytes_), "1048576", env={"TERN_NX_STATS": "2"}, timeout=180)
        assert r.returncode == 0, r.stdout + r.stderr
        m = re.search(r"tern node stats node 0: .* tx=(\d+) .* doorbells=(\d+)", r.stderr)
        assert m, r.stderr
        return int(m.group(1)), int(m.group(2))
    tx0, bells0 = job(1 << 20)
    tx1, bells1 = job(64 << 20)
    frames, bells = tx1 - tx0, bells1 - bells0
    assert frames > 63 * 16, (frames, bells)
    # At least one a message: a kernel that rang none, or reported none, fails too.
    assert 64 <= bells < frames / 2, f"{bells} doorbells for {frames} frames"


@pytest.mark.parametrize("n", [1, 2, 3, 8, 16])
def test_every_reduction_against_the_serial_answer(nx, n):
    r = nx_job(nx, n, "reduce")
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"reduce ok on {n} nodes" in r.stdout


@pytest.mark.parametrize("case,message", [
    ("msglong", "NX error in crecv on node 1: EQMSGLONG: message of 8 bytes"),
    ("badnode", "NX error in csend on node 0: EQNODE: node 2 is not in 0..1"),
    ("badmid", "NX error in msgwait on node 0: EQMID: message id 12345"),
])
def test_errors_end_the_job_with_a_message(nx, case, message):
    r = nx_job(nx, 2, "errors", case, timeout=120)
    assert r.returncode == 1, r.stdout + r.stderr
    assert message in r.stderr
    assert "not reached" not in r.stdout


def test_underscore_variants_return_errors(nx):
    r = nx_job(nx, 2, "errors", "soft")
    assert r.returncode == 0 and "soft errors ok" in r.stdout, r.stdout + r.stderr
