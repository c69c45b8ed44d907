"""The node database and allocation rules, through tern-nodedb: state on
disk survives restarts; requests that cannot be met say why."""
import os
import subprocess

from nodes import ROOT

TOOL = os.path.join(ROOT, "build", "bin", "tern-nodedb")


def db(path, *args, ok=True):
    r = subprocess.run([TOOL, "-f", str(path), *args], capture_output=True, text=True)
    if ok:
        assert r.returncode == 0, r.stderr
    return r


def states(path):
    rows = db(path, "list").stdout.splitlines()[1:-1]
    return {int(r.split()[0]): (r.split()[2], r.split()[3]) for r in rows}


def boot(path, n):
    for nid in range(1, n + 1):
        assert db(path, "register", f"02:00:00:00:00:{nid:02x}", str(nid)).stdout == f"nid {nid}\n"


def test_allocate_release_and_persist(tmp_path):
    f = tmp_path / "nodes"
    boot(f, 6)
    assert db(f, "alloc", "7", "3").stdout.split() == ["1", "2", "3"]
    assert db(f, "alloc", "8", "-list", "5..6").stdout.split() == ["5", "6"]
    # every invocation is a fresh process: the state came back from disk
    s = states(f)
    assert s[1] == ("allocated", "7") and s[4] == ("free", "-") and s[6] == ("allocated", "8")
    r = db(f, "alloc", "9", "2", ok=False)
    assert r.returncode == 1
    assert "2 nodes requested, 1 free (6 in all, 5 allocated, 0 down, 0 booting)" in r.stderr
    r = db(f, "alloc", "9", "-list", "3..4", ok=False)
    assert "node 3 is allocated to job 7" in r.stderr
    assert states(f)[4] == ("free", "-")          # all or nothing
    assert db(f, "release", "7").stdout == "3 nodes freed\n"
    assert db(f, "alloc", "9", "4").stdout.split() == ["1", "2", "3", "4"]


def test_down_nodes_are_not_allocated_and_reregistration_frees(tmp_path):
    f = tmp_path / "nodes"
    boot(f, 3)
    db(f, "alloc", "5", "2")
    db(f, "down", "2")
    assert states(f)[2] == ("down", "-")
    r = db(f, "alloc", "6", "-list", "2", ok=False)
    assert "node 2 is down" in r.stderr
    # the node boots again: known MAC, same nid, free
    assert db(f, "register", "02:00:00:00:00:02").stdout == "nid 2\n"
    assert states(f)[2] == ("free", "-")


def test_new_mac_gets_a_free_nid_and_conflicts_are_refused(tmp_path):
    f = tmp_path / "nodes"
    boot(f, 2)
    assert db(f, "register", "52:54:00:aa:bb:cc", "2").stdout == "nid 3\n"
    r = db(f, "register", "02:00:00:00:00:01", "5", ok=False)
    assert "MAC is nid 1 in the database, node claims nid 5" in r.stderr


def test_bad_input(tmp_path):
    f = tmp_path / "nodes"
    boot(f, 2)
    for args, msg in [(["alloc", "5", "-list", "3..1"], "bad node list '3..1'"),
                      (["alloc", "5", "-list", "1,1"], "node 1 listed twice"),
                      (["alloc", "5", "-list", "9"], "node 9 is not in the node database"),
                      (["register", "zz:00:00:00:00:01"], "bad MAC address"),
                      (["alloc", "0", "1"], "job id 0 is reserved")]:
        r = db(f, *args, ok=False)
        assert r.returncode == 1 and msg in r.stderr, (args, r.stderr)
    before = f.read_text()
    (tmp_path / "broken").write_text("1 02:00:00:00:00:01 free 0 0\ngarbage here\n")
    r = db(tmp_path / "broken", "list", ok=False)
    assert "broken:2: malformed line" in r.stderr
    assert (tmp_path / "broken").read_text().endswith("garbage here\n")  # left untouched
    assert f.read_text() == before
