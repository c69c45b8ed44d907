"""Issue 19, identities and isolation: a job's program, or an unprivileged
user on the service node, attacks other users' jobs and the cluster, and is
refused (docs/security.md).  The hostile program is
tests/portals/kernel/intruder.c; "nobody" (uid 65534) runs yod with the raw
socket capability Portals needs, as an installed yod would have it, and
gets its identity from the cluster's munged like any user."""
import os
import re
import time

import pytest

from clusters import allocd_kill, allocd_start, cluster, stopped, up, yod, yod_bg
from nodes import ROOT

INTRUDER = os.path.join(ROOT, "build", "portals", "kernel", "intruder-musl")
HELLO = os.path.join(ROOT, "build", "examples", "hello-musl")
NOBODY = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
          "--inh-caps=+net_raw", "--ambient-caps=+net_raw")
REFUSED = 4          # PTL_NI_PERM_VIOLATION, as intruder prints fail=N

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (virtual cluster)")


@pytest.fixture(scope="module")
def c3():
    with up("sec", "-n", "3", "--boot", "direct") as name:
        yield name


def console(name, nid):
    return cluster(name, "console", str(nid)).stdout


def show(name):
    r = yod(name, "-show")
    assert r.returncode == 0, r.stdout + r.stderr
    # node lines (nid, MAC, ...), not the "N nodes, ..." summary
    return {int(l.split()[0]): l.split()[2:4] for l in r.stdout.splitlines()
            if len(l.split()) > 3 and l.split()[0].isdigit() and ":" in l.split()[1]}


def wait_for(p, text, secs=60):
    """Reads p's stdout until a line holds text; the lines read."""
    lines, end = [], time.monotonic() + secs
    while time.monotonic() < end:
        line = p.stdout.readline()
        if not line:
            break
        lines.append(line)
        if text in line:
            return lines
    raise AssertionError(f"no '{text}' from {p.args}: {lines}")


def test_a_forged_load_descriptor_is_refused(c3):
    """Row 1: a job's program puts a node a descriptor naming itself as yod
    and uid 0.  The node never loads it, says so, and still runs real jobs."""
    r = yod(c3, "-list", "2", INTRUDER, "forge-load", "1", HELLO, pre=NOBODY)
    assert f"forge-load: put fail={REFUSED}" in r.stdout, r.stdout + r.stderr
    assert "LOADED" not in r.stdout, r.stdout
    end = time.monotonic() + 10       # said from the node's idle loop, within a second
    while not re.search(r"refused \d+ Portals requests from jobs' programs", console(c3, 1)) \
            and time.monotonic() < end:
        time.sleep(0.5)
    con = console(c3, 1)
    assert "job 4242" not in con, con
    assert re.search(r"refused \d+ Portals requests from jobs' programs", con), con[-2000:]
    assert show(c3)[1] == ["free", "-"]
    r = yod(c3, "-list", "1", HELLO)
    assert r.returncode == 0 and "hello from rank 0 of 1 on nid 1" in r.stdout, r.stdout + r.stderr


def test_puts_and_gets_into_another_users_job_are_refused(c3):
    """Row 2, and a Get aimed at another job's memory: nobody's job puts a
    message to root's running job as its "rank 0" and reads its memory."""
    with stopped(yod_bg(c3, "-list", "1", INTRUDER, "victim", "15", "2")) as victim:
        wait_for(victim, "victim ready")
        r = yod(c3, "-list", "2", INTRUDER, "inject", "1", pre=NOBODY)
        out, err = victim.communicate(timeout=60)
    assert f"inject: put fail={REFUSED}" in r.stdout, r.stdout + r.stderr
    assert f"get: fail={REFUSED} got ''" in r.stdout, r.stdout + r.stderr
    assert "INJECTED" not in out and "read the secret" not in out, out
    assert "victim: 0 arrived, 2 refused" in out, out + err
    assert victim.returncode == 0, err


def test_a_flood_of_refused_puts_leaves_both_nodes_working(c3):
    """nobody's job puts 1 MiB messages into root's job, each right after the
    last one's ACK.  Each is refused at its first frame, while its other
    frames are still on their way.  The ACK of the refusal ended the put
    at once, and the next put reused its slot with the message still in the
    send queue: the queue became a loop and the intruder's node spun in it
    for ever (tests/portals/test_refused_put.c).  Now every put is answered,
    the victim's job gets nothing, and the intruder's node takes the next
    job."""
    with stopped(yod_bg(c3, "-list", "1", INTRUDER, "victim", "20", "20")) as victim:
        wait_for(victim, "victim ready")
        r = yod(c3, "-list", "2", INTRUDER, "flood", "1", "20", pre=NOBODY, timeout=180)
        out, err = victim.communicate(timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "flood: 20 puts, 20 refused, 0 otherwise, 0 no answer" in r.stdout, r.stdout + r.stderr
    assert "victim: 0 arrived, 20 refused" in out, out + err
    r = yod(c3, "-list", "2", INTRUDER, "wait", "0", pre=NOBODY)
    assert r.returncode == 0 and "waiting" in r.stdout, r.stdout + r.stderr


def test_a_put_sent_before_a_job_starts_never_reaches_it(c3):
    """A node keeps the frames that come before their NI is made and hands
    them to it when its program first uses it (portals/lib/park.c).  nobody's
    job puts into node 1 while node 1 has no job: the frame is kept there.
    Then root's job starts on node 1 with the pid the frame names.  The kept
    frame is not delivered into it, nor are the intruder's resends and get:
    all refused."""
    with stopped(yod_bg(c3, "-list", "2", INTRUDER, "inject", "1", pre=NOBODY)) as intruder:
        time.sleep(1.5)               # its put is out, resent with backoff
        assert intruder.poll() is None, intruder.communicate()
        r = yod(c3, "-list", "1", INTRUDER, "victim", "15", "2")
        out, err = intruder.communicate(timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "INJECTED" not in r.stdout and "read the secret" not in r.stdout, r.stdout
    assert "victim: 0 arrived, 2 refused" in r.stdout, r.stdout + r.stderr
    assert f"inject: put fail={REFUSED}" in out, out + err
    assert f"get: fail={REFUSED} got ''" in out, out + err


def test_a_forged_end_notice_is_refused(c3):
    """A job's program sends another user's node the allocator's notice that
    its job's yod is gone (TERN_REVOKE): refused, and the job runs to its end."""
    with stopped(yod_bg(c3, "-list", "1", INTRUDER, "wait", "8")) as victim:
        wait_for(victim, "waiting")
        job = show(c3)[1][1]
        r = yod(c3, "-list", "2", INTRUDER, "forge-revoke", "1", job, pre=NOBODY)
        out, err = victim.communicate(timeout=60)
    assert f"forge-revoke: put fail={REFUSED}" in r.stdout, r.stdout + r.stderr
    assert victim.returncode == 0, out + err
    assert "is gone" not in console(c3, 1), console(c3, 1)[-1500:]


def test_register_from_a_job_is_refused(c3):
    """Row 5: a job's program registers a made-up MAC with the allocator;
    no phantom node appears."""
    before = show(c3)
    r = yod(c3, "-list", "3", INTRUDER, "forge-register", pre=NOBODY)
    assert f"forge-register: put fail={REFUSED}" in r.stdout, r.stdout + r.stderr
    assert "registered as" not in r.stdout, r.stdout
    assert sorted(show(c3)) == sorted(before) == [1, 2, 3]


def test_only_the_owner_or_root_ends_a_job(c3):
    """Row 8: nobody cannot kill or release root's job (nor name a job id
    itself); it can kill its own; root can kill anyone's."""
    jobs = (yod_bg(c3, "-list", "1", INTRUDER, "wait", "120"),
            yod_bg(c3, "-list", "2", INTRUDER, "wait", "120", pre=NOBODY))
    with stopped(*jobs) as (root_job, own_job):
        wait_for(root_job, "waiting")
        wait_for(own_job, "waiting")
        jobs = show(c3)
        rj, oj = jobs[1][1], jobs[2][1]
        r = yod(c3, "-kill", rj, pre=NOBODY)
        assert r.returncode == 1 and f"job {rj} is not yours (uid 65534)" in r.stderr, r.stderr
        r = cluster(c3, "exec", *NOBODY, "tern-svc", "release", rj, check=False)
        assert r.returncode == 1 and "not yours" in r.stderr, r.stderr
        r = cluster(c3, "exec", *NOBODY, "tern-svc", "alloc", "999", "1", check=False)
        assert r.returncode == 1 and "only root names the job id" in r.stderr, r.stderr
        assert show(c3)[1] == ["allocated", rj]
        r = yod(c3, "-kill", oj, pre=NOBODY)
        assert r.returncode == 0, r.stderr
        out, err = own_job.communicate(timeout=60)
        assert own_job.returncode == 1 and "killed by yod -kill" in err, err
        r = yod(c3, "-kill", rj)
        assert r.returncode == 0, r.stderr
        out, err = root_job.communicate(timeout=60)
        assert root_job.returncode == 1 and "killed by yod -kill" in err, err


def test_a_restarted_allocator_still_knows_whose_job_it_is():
    """The allocator keeps each running job's owner beside its launcher
    (nodes.db.launchers): killed and started again while nobody's job runs,
    it still refuses another user's kill of that job and takes nobody's own.
    Before the owners were kept there, the restarted allocator took every
    job for root's and refused its owner."""
    other = ("setpriv", "--reuid=65533", "--regid=65533", "--clear-groups",
             "--inh-caps=+net_raw", "--ambient-caps=+net_raw")
    with up("secr", "-n", "1", "--boot", "direct") as name:
        job, mine = yod_bg(name, "-list", "1", INTRUDER, "wait", "120", pre=NOBODY), None
        try:
            wait_for(job, "waiting")
            j = show(name)[1][1]
            mine = allocd_start(name, allocd_kill(name))
            end = time.monotonic() + 60
            while yod(name, "-show").returncode != 0 and time.monotonic() < end:
                time.sleep(0.5)
            r = yod(name, "-kill", j, pre=other)
            assert r.returncode == 1 and f"job {j} is not yours (uid 65533)" in r.stderr, r.stderr
            r = yod(name, "-kill", j, pre=NOBODY)
            assert r.returncode == 0, r.stderr
            out, err = job.communicate(timeout=60)
            assert job.returncode == 1 and "killed by yod -kill" in err, err
        finally:
            if job.poll() is None:
                job.kill()
                job.communicate()
            if mine:
                mine.kill()
                mine.wait()
