"""Forwarded file I/O on the virtual cluster (docs/fileio.md): programs on
compute nodes use ordinary libc file calls; yod serves paths outside the fyod
prefixes, fyods serve theirs."""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zlib

import pytest

from clusters import CLUSTER, cluster, named, yod, yod_bg
from nodes import ROOT

sys.path.insert(0, os.path.join(ROOT, "bench"))
from ternbench.cluster_exps import tap_counters  # noqa: E402

pytestmark = [pytest.mark.cluster,
              pytest.mark.skipif(os.geteuid() != 0, reason="needs root (netns, taps, mounts)")]

PROG = os.path.join(ROOT, "build", "programs")
FILEIO = os.path.join(PROG, "fileio-musl")
FILEIO_GLIBC = os.path.join(PROG, "fileio-glibc")
INTRUDER_LINUX = os.path.join(ROOT, "build", "portals", "kernel", "intruder-linux")


def public_dir(prefix):
    d = tempfile.mkdtemp(prefix=prefix, dir="/tmp")
    os.chmod(d, 0o755)
    return d


class Fyod:
    def __init__(self, name, root, prefix, *extra):
        self.log = tempfile.NamedTemporaryFile(prefix="fyod-log-", delete=False)
        self.p = subprocess.Popen([CLUSTER, "--name", name, "exec", "fyod", "--root", root,
                                   "--prefix", prefix, *extra], stdout=self.log,
                                  stderr=self.log)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if "registered with the allocator" in self.text():
                return
            assert self.p.poll() is None, self.text()
            time.sleep(0.1)
        raise AssertionError("fyod did not register: " + self.text())

    def text(self):
        with open(self.log.name) as f:
            return f.read()

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(10)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        os.unlink(self.log.name)


@pytest.fixture(scope="module")
def fc():
    """A 4-node cluster with fyods: /scratch (one), /spread (two), /tiny (1 MiB tmpfs)."""
    dirs = {k: public_dir("fyod-" + k + "-") for k in ("scratch", "spreada", "spreadb", "tiny",
                                                       "yod")}
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=755", "tmpfs", dirs["tiny"]],
                   check=True)
    try:
        with named("fy") as name:
            fyods = []
            try:
                cluster(name, "up", "-n", "4", "--boot", "direct")
                fyods.append(Fyod(name, dirs["scratch"], "/scratch"))
                fyods.append(Fyod(name, dirs["spreada"], "/spread"))
                fyods.append(Fyod(name, dirs["spreadb"], "/spread"))
                fyods.append(Fyod(name, dirs["tiny"], "/tiny"))
                yield name, dirs, fyods
            finally:
                for f in fyods:
                    f.stop()
    finally:
        subprocess.run(["umount", dirs["tiny"]])
        for d in dirs.values():
            shutil.rmtree(d, ignore_errors=True)


def crc(path):
    with open(path, "rb") as f:
        return "%08x" % zlib.crc32(f.read())


@pytest.mark.parametrize("prog", [FILEIO, FILEIO_GLIBC], ids=["musl", "glibc"])
def test_basic_through_yod_and_fyod(fc, prog):
    name, dirs, _ = fc
    r = yod(name, "-sz", "2", prog, "basic", dirs["yod"])           # yod serves it
    assert r.returncode == 0, r.stdout + r.stderr
    assert sorted(r.stdout.splitlines()) == [f"basic {dirs['yod']}/basic.{i}: ok" for i in (0, 1)]
    r = yod(name, "-sz", "2", prog, "basic", "/scratch")          # an fyod serves it
    assert r.returncode == 0, r.stdout + r.stderr
    assert sorted(r.stdout.splitlines()) == [f"basic /scratch/basic.{i}: ok" for i in (0, 1)]
    assert os.listdir(dirs["scratch"]) == []


def test_every_rank_its_own_file(fc):
    name, dirs, _ = fc
    r = yod(name, "-sz", "4", FILEIO, "rankfile", "/scratch", "2")
    assert r.returncode == 0, r.stdout + r.stderr
    lines = sorted(r.stdout.splitlines())
    assert len(lines) == 4
    for line in lines:
        _, rank, _, c, _, back = line.split()
        assert c == back == crc(os.path.join(dirs["scratch"], f"rank.{rank}")), line


def test_ranks_spread_over_two_fyods(fc):
    name, dirs, _ = fc
    r = yod(name, "-sz", "4", FILEIO, "rankfile", "/spread", "1")
    assert r.returncode == 0, r.stdout + r.stderr
    a, b = sorted(os.listdir(dirs["spreada"])), sorted(os.listdir(dirs["spreadb"]))
    assert len(a) == 2 and len(b) == 2 and sorted(a + b) == [f"rank.{i}" for i in range(4)]
    for line in r.stdout.splitlines():
        _, rank, _, c, _, back = line.split()
        where = dirs["spreada"] if f"rank.{rank}" in a else dirs["spreadb"]
        assert c == back == crc(os.path.join(where, f"rank.{rank}"))


def test_64_mib_file(fc):
    name, dirs, _ = fc
    r = yod(name, FILEIO, "big", "/scratch/big", "64", str(4 << 20), timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr
    f = dict(w.split("=") for w in r.stdout.split()[1:])
    path = os.path.join(dirs["scratch"], "big")
    assert f["got"] == f["bytes"] == str(64 << 20) == str(os.path.getsize(path))
    assert f["crc_w"] == f["crc_r"] == crc(path)
    os.unlink(path)


def test_errors(fc):
    name, dirs, _ = fc
    for d in ("/scratch", dirs["yod"]):
        r = yod(name, FILEIO, "errors", d)
        assert r.returncode == 0, r.stdout + r.stderr
        assert r.stdout.splitlines() == [
            "missing: ENOENT", "dir for writing: EISDIR", "read a directory: EISDIR",
            "read a closed fd: EBADF", "write a read-only fd: EBADF", "rmdir missing: ENOENT",
            "stat bad pointer: EFAULT"], (d, r.stdout)
    r = yod(name, FILEIO, "fill", "/tiny/fill")
    assert r.returncode == 0 and r.stdout.startswith("fill: ENOSPC after "), r.stdout + r.stderr


@pytest.mark.parametrize("prog", [FILEIO, FILEIO_GLIBC], ids=["musl", "glibc"])
def test_cpu_count_is_the_nodes_not_the_service_nodes(fc, prog):
    """glibc's get_nprocs reads /sys/devices/system/cpu/online: the node answers it
    (1-CPU nodes here), where forwarding it gave the service node's count.  Its
    cpuN/topology is there too (OpenMP's OMP_PLACES=cores reads it); it was
    not, and libgomp said "Error reading core/socket topology".  A node is
    one memory node: no /sys/devices/system/node, as on a Linux without NUMA
    (it was the service node's, which hwloc and libnuma read)."""
    name, _, _ = fc
    r = yod(name, prog, "cpus")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines() == [
        "nprocs 1 conf 1", "online 0", "entries cpu0 online possible present",
        "write online: EACCES", "cpu0: directory", "NUMA nodes: ENOENT",
        "cpu0 topology: thread_siblings_list 0 core_siblings_list 0",
        "cpu0/topology entries core_cpus_list core_id core_siblings_list package_cpus_list "
        "physical_package_id thread_siblings_list",
        "cpu1: ENOENT"], r.stdout + r.stderr


@pytest.mark.parametrize("prog", [FILEIO, FILEIO_GLIBC], ids=["musl", "glibc"])
def test_dev_null_and_zero_are_the_nodes_own(fc, prog):
    """/dev/null and /dev/zero behave as Linux's (what fileio-glibc printed on
    the host), and output sent to /dev/null stays on the node: 4000 writes
    used to be 4000 round trips to yod, each a frame or more on the wire."""
    name, _, _ = fc
    before = tap_counters(name)[0]      # frames the nodes have sent, all told
    r = yod(name, prog, "devnull", "4000")
    sent = tap_counters(name)[0] - before
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines() == [
        "devnull: 4000 writes, 0 failed", "read /dev/null: 0",
        "read /dev/zero: 4096 bytes, 0 not zero; write: 100",
        "fstat: null OK chr 1 1:3, zero OK chr 1 1:5",
        "lseek: 0; O_EXCL: EEXIST; O_DIRECTORY: ENOTDIR; W_OK: OK",
        "sendfile /dev/zero to /dev/null: 100000 OK; /proc/cpuinfo: some bytes"], \
        r.stdout + r.stderr
    assert sent < 400, f"{sent} frames from the nodes during the job"


def test_links_out_of_the_root_lead_where_the_job_could_go_itself(fc, tmp_path):
    """The fyod never leaves its root: a link out of it (absolute, or
    climbing with '..') goes back to the node, which follows it in the
    job's view of paths, here to yod's tree, served as the job's owner.  So
    a link reaches what the job could name itself and nothing more: a
    root-only file outside the root is EACCES to nobody through a link as
    directly.  (Before links were handed back, both links were EACCES.)"""
    name, dirs, _ = fc
    with open("/etc/hostname") as fh:
        first = fh.read().split()[0][:16]
    secret = tmp_path / "root-only"
    secret.write_text("root's secret\n")
    os.chmod(secret, 0o600)
    os.chmod(tmp_path, 0o755)
    os.symlink("/etc/hostname", os.path.join(dirs["scratch"], "out"))
    os.symlink("../../../../../../etc", os.path.join(dirs["scratch"], "up"))
    os.symlink(str(secret), os.path.join(dirs["scratch"], "secret"))
    try:
        r = yod(name, FILEIO, "open", "/scratch/out", "r")
        assert r.stdout.strip() == f"open /scratch/out: OK {first}", r.stdout + r.stderr
        r = yod(name, FILEIO, "open", "/scratch/up/hostname", "r")
        assert r.stdout.strip() == f"open /scratch/up/hostname: OK {first}", r.stdout + r.stderr
        # '..' is resolved by the node first: /scratch/../etc is yod's /etc.
        r = yod(name, FILEIO, "open", "/scratch/../etc/hostname", "r")
        assert r.stdout.startswith("open /scratch/../etc/hostname: OK"), r.stdout + r.stderr
        for path in ("/scratch/secret", str(secret)):
            r = yod(name, FILEIO, "open", path, "r", pre=NOBODY)
            assert r.stdout.strip() == f"open {path}: EACCES", r.stdout + r.stderr
        r = yod(name, FILEIO, "open", "/scratch/secret", "r")
        assert r.stdout.strip() == "open /scratch/secret: OK root's secret", r.stdout + r.stderr
    finally:
        for link in ("out", "up", "secret"):
            os.unlink(os.path.join(dirs["scratch"], link))


def test_owner_identity(fc, tmp_path):
    """yod run by an unprivileged user: neither yod nor fyod reads root's file for it.
    The user's identity comes from the cluster's munged, through the allocator's grant."""
    name, dirs, _ = fc
    for d in (dirs["yod"], dirs["scratch"]):
        for f, mode in (("root-only", 0o600), ("public", 0o644)):
            with open(os.path.join(d, f), "w") as fh:
                fh.write(f + "\n")
            os.chmod(os.path.join(d, f), mode)
    nobody = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
              "--inh-caps=+net_raw", "--ambient-caps=+net_raw")
    try:
        for d in (dirs["yod"], "/scratch"):
            r = yod(name, FILEIO, "open", f"{d}/root-only", "r", pre=nobody)
            assert r.stdout.strip() == f"open {d}/root-only: EACCES", r.stdout + r.stderr
            r = yod(name, FILEIO, "open", f"{d}/public", "r", pre=nobody)
            assert r.stdout.strip() == f"open {d}/public: OK public", r.stdout + r.stderr
            r = yod(name, FILEIO, "open", f"{d}/new", "w", pre=nobody)
            assert r.stdout.strip() == f"open {d}/new: EACCES", r.stdout + r.stderr
            r = yod(name, FILEIO, "open", f"{d}/root-only", "r")       # root may
            assert r.stdout.strip() == f"open {d}/root-only: OK root-only", r.stdout + r.stderr
    finally:
        for d in (dirs["yod"], dirs["scratch"]):
            for f in ("root-only", "public"):
                os.unlink(os.path.join(d, f))


def test_fyod_serves_only_the_uid_the_allocator_granted(fc):
    """Issue 19 row 1's second half: a user who speaks the file protocol
    itself, as a node kernel would (pid 1, uid 0 claimed), is refused: a
    uid counts only with the token of the allocator's grant."""
    name, dirs, fyods = fc
    path = os.path.join(dirs["scratch"], "root-only")
    with open(path, "w") as fh:
        fh.write("root's\n")
    os.chmod(path, 0o600)
    try:
        pid = re.search(r"fyod: nid 0 pid (\d+) serves", fyods[0].text()).group(1)
        r = cluster(name, "exec", "env", "TERN_PID=1", "setpriv", "--reuid=65534",
                    "--regid=65534", "--clear-groups", "--inh-caps=+net_raw",
                    "--ambient-caps=+net_raw", INTRUDER_LINUX, "forge-fio", "0", pid,
                    "root-only", check=False)
        assert "forge-fio: result -13" in r.stdout, r.stdout + r.stderr     # EACCES
        assert "refused a request of job 4242 from nid 0: uid 0 is not what the allocator " \
               "granted" in fyods[0].text()
    finally:
        os.unlink(path)


def test_fyod_killed_mid_job(fc):
    name, _, _ = fc
    d = public_dir("fyod-victim-")
    victim = Fyod(name, d, "/victim")
    try:
        p = yod_bg(name, FILEIO, "slow", "/victim/slow", "120")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not os.path.exists(os.path.join(d, "slow")):
            time.sleep(0.2)
        time.sleep(1)
        victim.p.kill()
        t0 = time.monotonic()
        out, err = p.communicate(timeout=60)
        took = time.monotonic() - t0
        assert "EIO after" in err and "again: EIO in 0.0 s" in err, err
        assert p.returncode == 1 and took < 30, (took, err)
    finally:
        victim.stop()
        shutil.rmtree(d, ignore_errors=True)


def open_fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def test_files_closed_when_the_job_ends(fc):
    """A rank that exits with files open, or is killed in the middle of
    writing, leaves none open in the fyod that served them."""
    name, _, _ = fc
    d = public_dir("fyod-close-")
    f = Fyod(name, d, "/close")
    try:
        with open(f"/proc/{f.p.pid}/comm") as c:
            assert c.read().strip() == "fyod"
        before = open_fds(f.p.pid)
        for i in range(3):      # the program opens and exits without close()
            r = yod(name, "-sz", "2", FILEIO, "open", f"/close/left-open.{i}", "w")
            assert r.returncode == 0, r.stdout + r.stderr
            assert r.stdout.count(f"open /close/left-open.{i}: OK") == 2, r.stdout + r.stderr
        assert open_fds(f.p.pid) == before, os.listdir(f"/proc/{f.p.pid}/fd")
        p = yod_bg(name, "-sz", "2", FILEIO, "slow", "/close/slow", "120")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not os.path.exists(os.path.join(d, "slow")):
            time.sleep(0.2)
        time.sleep(1)
        assert open_fds(f.p.pid) > before
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
        assert p.returncode == 1, out + err
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and open_fds(f.p.pid) != before:
            time.sleep(0.2)
        assert open_fds(f.p.pid) == before, os.listdir(f"/proc/{f.p.pid}/fd")
    finally:
        f.stop()
        shutil.rmtree(d, ignore_errors=True)


def test_sendfile_from_a_forwarded_file(fc):
    """sendfile (issue 13): a file's bytes to the job's stdout and, from an
    offset, into another file; the console as a source is refused."""
    name, dirs, _ = fc
    data = bytes((i * 7 + i // 251) & 0xFF for i in range(150000))
    with open(os.path.join(dirs["scratch"], "src"), "wb") as f:
        f.write(data)
    try:
        r = yod(name, FILEIO, "sendfile", "/scratch/src", "/scratch/dst", text=False)
        assert r.returncode == 0, r.stderr
        # the bytes as they are: yod adds no newline to a job's last line (docs/yod.md)
        assert r.stdout == data
        with open(os.path.join(dirs["scratch"], "dst"), "rb") as f:
            assert f.read() == data[100:]
        assert r.stderr.decode().splitlines()[-1] == (
            f"to stdout {len(data)}, to file {len(data) - 100}, offset now {len(data)}, "
            f"position {len(data)}, from stdin EINVAL")
    finally:
        for n in ("src", "dst"):
            if os.path.exists(os.path.join(dirs["scratch"], n)):
                os.unlink(os.path.join(dirs["scratch"], n))


FILELOCK = [
    "rank 0: ends holding a flock lock yes",
    "rank 0: fcntl lock taken: yes",
    "rank 0: fcntl: rank 1 tried yes, wrote yes",
    "rank 0: flock lock taken: yes",
    "rank 0: flock: rank 1 tried yes, wrote yes",
    "rank 1: fcntl: busy while rank 0 holds it yes, F_GETLK names a write lock yes",
    "rank 1: fcntl: has it after rank 0's write yes",
    "rank 1: flock: busy while rank 0 holds it yes",
    "rank 1: flock: has it after rank 0's write yes"]


@pytest.mark.parametrize("where,libc", [("yod", "musl"), ("scratch", "glibc")])
def test_file_locks_exclude_ranks_on_two_nodes(fc, where, libc):
    """fcntl record locks and flock on a served file (they were EINVAL and
    ENOSYS): rank 1's try fails while rank 0 holds the lock, its wait ends
    when rank 0 lets go, after rank 0's write; a lock a rank still holds
    when the job ends is gone after (the service node takes it)."""
    import fcntl
    name, dirs, _ = fc
    served = dirs["yod"] if where == "yod" else "/scratch"
    r = yod(name, "-sz", "2", os.path.join(PROG, f"filelock-{libc}"), served)
    assert r.returncode == 0, r.stdout + r.stderr
    assert sorted(r.stdout.splitlines()) == FILELOCK, r.stdout
    lock = [p for p in os.listdir(dirs[where]) if re.fullmatch(r"lock\.\d+", p)]
    assert len(lock) == 1, os.listdir(dirs[where])
    with open(os.path.join(dirs[where], lock[0]), "r+") as f:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)     # raises if still held
    for p in os.listdir(dirs[where]):
        if p.startswith("lock."):
            os.unlink(os.path.join(dirs[where], p))


def sqlite_program(tmp_path):
    """sqlite_ranks.c linked static with Debian's libsqlite3 (or a skip)."""
    return toolchain_program(tmp_path, "sqlite_ranks.c", "/usr/lib/x86_64-linux-gnu/libsqlite3.a",
                             "libsqlite3-dev", ["-lsqlite3", "-lm"])


def toolchain_program(tmp_path, src, lib, package, flags):
    """tests/programs/toolchains/SRC linked static with a Debian library
    (lib, from package; a skip without it): the program's path."""
    if not os.path.exists(lib):
        pytest.skip(f"no {os.path.basename(lib)} (Debian's {package})")
    exe = str(tmp_path / os.path.splitext(src)[0])
    b = subprocess.run(["gcc", "-static", "-O2", *[f for f in flags if f.startswith("-I")], "-o",
                        exe, os.path.join(ROOT, "tests", "programs", "toolchains", src),
                        *[f for f in flags if not f.startswith("-I")]],
                       capture_output=True, text=True, timeout=300)
    assert b.returncode == 0, b.stderr
    return exe


def test_sqlite_ranks_on_two_nodes_write_one_database(fc, tmp_path):
    """SQLite, linked static from Debian's libsqlite3: two ranks on two nodes
    insert into one database on an fyod, each waiting for the other's
    locks.  Before file locks were served, its first write failed ("disk
    I/O error")."""
    import sqlite3
    exe = sqlite_program(tmp_path)
    name, dirs, _ = fc
    r = yod(name, "-sz", "2", exe, "/scratch/ranks.sqlite", "40")
    assert r.returncode == 0, r.stdout + r.stderr
    assert sorted(r.stdout.splitlines()) == ["rank 0: 40 rows in", "rank 1: 40 rows in"]
    db = os.path.join(dirs["scratch"], "ranks.sqlite")
    c = sqlite3.connect(db)
    try:
        assert c.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert c.execute("SELECT rank, count(*), count(DISTINCT i) FROM t GROUP BY rank "
                         "ORDER BY rank").fetchall() == [(0, 40, 40), (1, 40, 40)]
    finally:
        c.close()
        os.unlink(db)


@pytest.mark.parametrize("modes", [["wal"], ["mmap"], ["wal", "mmap"]])
def test_sqlite_in_wal_mode_and_reading_through_mmap(fc, tmp_path, modes):
    """SQLite's write-ahead log keeps its index in a shared writable mapping
    of DB-shm (it was ENODEV: "disk I/O error"); with mmap_size it reads
    the database through a shared mapping while writing it with pwrite (a
    mapping that kept the bytes of the moment it was made showed it stale
    pages).  One rank inserts 300 rows, a second connection counts them,
    and the database is whole and holds them on the service node."""
    import sqlite3
    exe = sqlite_program(tmp_path)
    name, dirs, _ = fc
    r = yod(name, exe, "/scratch/wal.sqlite", "300", *modes)
    db = os.path.join(dirs["scratch"], "wal.sqlite")
    try:
        assert r.returncode == 0, r.stdout + r.stderr
        want = ["rank 0: another connection counts 300 rows, sum 44850", "rank 0: 300 rows in"]
        if "wal" in modes:
            want.insert(0, "journal_mode: wal")
        assert r.stdout.splitlines() == want
        c = sqlite3.connect(db)
        try:
            assert c.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
            assert c.execute("SELECT count(*), sum(i) FROM t").fetchall() == [(300, 44850)]
            assert c.execute("PRAGMA journal_mode").fetchall() == \
                [("wal" if "wal" in modes else "delete",)]
        finally:
            c.close()
    finally:
        for suffix in ("", "-wal", "-shm", "-journal"):
            if os.path.exists(db + suffix):
                os.unlink(db + suffix)


@pytest.mark.parametrize("where,prog", [("yod", FILEIO), ("/scratch", FILEIO_GLIBC)])
def test_mmap_of_a_file_is_a_copy_of_its_bytes(fc, where, prog):
    """mmap of a served file (it was ENODEV): private and shared read-only
    mappings hold the file's bytes, from any page; a shared writable one's
    stores reach the file (it was refused, ENODEV)."""
    name, dirs, _ = fc
    d = dirs["yod"] if where == "yod" else where
    r = yod(name, prog, "mmap", d + "/mapped")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines() == [
        "private: the file's bytes yes, zeros past its end yes",
        "shared read-only: yes; from a page in: yes",
        "a private mapping's writes stay out of the file: yes",
        "shared writable: mapped, the store in the file after munmap: yes"], r.stdout


@pytest.mark.parametrize("libc", ["glibc", "musl"])
@pytest.mark.parametrize("where", ["yod", "/scratch"])
def test_shared_mappings_of_a_file_are_the_file_as_on_linux(fc, tmp_path, where, libc):
    """MAP_SHARED mappings of a served file behave as Linux's within the
    process: stores reach the file (msync, a read, munmap of a part,
    MADV_DONTNEED), write() and pwrite() through any descriptor show in
    them, two mappings agree after msync, mremap grows with the file's
    bytes, a store past the end stays out.  The same program prints the
    same lines on Linux here.  Before, a shared writable mapping was
    ENODEV, and a shared read-only one kept the bytes of the moment it was
    made (a pwrite after it did not show)."""
    name, dirs, _ = fc
    prog = os.path.join(PROG, f"sharedmap-{libc}")
    linux = subprocess.run([prog, str(tmp_path / "linux")], capture_output=True, text=True,
                           timeout=60)
    assert linux.returncode == 0, linux.stdout + linux.stderr
    assert "read-only mapping, pwrite elsewhere: yes" in linux.stdout.splitlines()
    d = (dirs["yod"] if where == "yod" else where) + "/sharedmap-" + libc
    r = yod(name, prog, d)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout == linux.stdout


@pytest.mark.parametrize("how,status", [("exit", 0), ("fault", 1)])
def test_a_shared_mappings_stores_reach_the_file_when_the_program_ends(fc, how, status):
    """A program that stores into a shared mapping and exits, or dies of
    SIGSEGV, without msync or munmap: its store is in the file when yod
    returns, as Linux writes a dead process's dirty pages."""
    name, dirs, _ = fc
    r = yod(name, os.path.join(PROG, "sharedmap-glibc"), "/scratch", how)
    assert r.returncode == status, r.stdout + r.stderr
    assert ("killed by SIGSEGV" in r.stderr) == (how == "fault"), r.stderr
    path = os.path.join(dirs["scratch"], "ended")
    try:
        with open(path, "rb") as fh:
            data = fh.read()
        assert len(data) == 3 * 4096 + 100
        assert data[4096 + 7:4096 + 28] == b"stored before the end"
    finally:
        os.unlink(path)


@pytest.mark.parametrize("where", ["yod", "/scratch", "/tiny"])
def test_fallocate_and_statfs_reach_the_serving_file_system(fc, where):
    """posix_fallocate, fstatvfs and statvfs on served files (they were
    ENOSYS): the sizes are those of the file system that serves the path
    (a 1 MiB tmpfs for /tiny)."""
    name, dirs, _ = fc
    host = dirs["yod"] if where == "yod" else dirs[where.strip("/")]
    d = dirs["yod"] if where == "yod" else where
    size = 65536 if where == "/tiny" else 1 << 20
    r = yod(name, FILEIO, "space", d + "/space", str(size))
    assert r.returncode == 0, r.stdout + r.stderr
    s = os.statvfs(host)
    assert r.stdout.splitlines() == [
        f"posix_fallocate: OK, size {size}",
        f"fstatvfs: frsize {s.f_frsize} blocks {s.f_blocks}; "
        f"statvfs: frsize {s.f_frsize} blocks {s.f_blocks}"], r.stdout


NOBODY = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
          "--inh-caps=+net_raw", "--ambient-caps=+net_raw")


@pytest.fixture
def nobodys_dirs(fc):
    """A directory of nobody's and a file of root's (0644) in yod's and in
    /scratch's served trees: {where: (host dir, node dir, node path of root's file)}."""
    name, dirs, _ = fc
    made = {}
    for where, top in (("yod", dirs["yod"]), ("/scratch", dirs["scratch"])):
        host = os.path.join(top, "nobodys")
        os.mkdir(host)
        os.chown(host, 65534, 65534)
        with open(os.path.join(top, "roots"), "w") as fh:
            fh.write("root's\n")
        os.chmod(os.path.join(top, "roots"), 0o644)
        node_top = top if where == "yod" else "/scratch"
        made[where] = (host, node_top + "/nobodys", node_top + "/roots")
    try:
        yield made
    finally:
        for where, top in (("yod", dirs["yod"]), ("/scratch", dirs["scratch"])):
            shutil.rmtree(os.path.join(top, "nobodys"), ignore_errors=True)
            os.unlink(os.path.join(top, "roots"))


@pytest.mark.parametrize("libc", ["glibc", "musl"])
@pytest.mark.parametrize("where", ["yod", "/scratch"])
def test_modes_owners_times_and_links_as_on_linux(fc, nobodys_dirs, where, libc):
    """chmod, chown, utimensat, utimes, utime, symlink, link and their
    relatives (ENOSYS or EPERM before) on a node give what the same
    program gives on Linux as the same user (nobody), run here beside it
    on the same files; a link to another server's file is EXDEV."""
    name, dirs, _ = fc
    prog = os.path.join(PROG, f"filemeta-{libc}")
    host, node_dir, roots = nobodys_dirs[where]
    host_roots = os.path.join(os.path.dirname(host), "roots")
    linux = subprocess.run([*NOBODY[:4], prog, host, host_roots], capture_output=True,
                           text=True, timeout=60)
    assert linux.returncode == 0, linux.stdout + linux.stderr
    other = "/spread" if where == "yod" else dirs["yod"]
    r = yod(name, prog, node_dir, roots, other, pre=NOBODY)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert "link to another file system: EXDEV" in lines, r.stdout
    lines.remove("link to another file system: EXDEV")
    assert lines == linux.stdout.splitlines()
    # What Linux gives, in case both went wrong the same way.
    assert "chown to another user: EPERM" in lines
    assert ("another's file: chmod EPERM, chown EPERM, utimensat a time EPERM, "
            "utimensat now EACCES") in lines
    assert "link: OK, nlink 2; link again: EEXIST" in lines


def test_a_link_a_program_makes_out_of_the_root_is_followed_by_the_node(fc):
    """A job may make a symbolic link to anywhere (it holds what it was
    given).  The fyod never leaves its root: it hands the link back, and
    the node follows it in the job's view of paths (here to yod's tree).
    It was EACCES."""
    name, dirs, _ = fc
    r = yod(name, os.path.join(PROG, "filemeta-musl"), "--symlink", "/etc/hostname",
            "/scratch/away")
    try:
        assert r.stdout.splitlines() == ["symlink /scratch/away: OK, open through it: OK"], \
            r.stdout + r.stderr
        assert os.readlink(os.path.join(dirs["scratch"], "away")) == "/etc/hostname"
    finally:
        os.unlink(os.path.join(dirs["scratch"], "away"))


@pytest.mark.parametrize("libc", ["glibc", "musl"])
def test_absolute_and_climbing_links_as_on_linux(fc, tmp_path, libc):
    """Absolute symbolic links (to a file, to a directory on the way, in a
    chain, to another server's tree, in a loop) and relative ones that climb
    out of their directory, under an fyod: opened, stat'ed, created in,
    renamed, hard-linked, chmod'ed, unlinked and chdir'ed through, as Linux
    does with the same program on the same kind of tree here.  The fyod
    hands each such link back (FIO_FOLLOW_LINK) and the node follows it;
    before, all of these were EACCES."""
    name, dirs, _ = fc
    prog = os.path.join(PROG, f"links-{libc}")
    linux = subprocess.run([prog, str(tmp_path / "linux"), str(tmp_path / "away")],
                           capture_output=True, text=True, timeout=60)
    assert linux.returncode == 0, linux.stdout + linux.stderr
    assert "to another file system: elsewhere's text" in linux.stdout.splitlines()
    r = yod(name, prog, "/scratch/links-" + libc, dirs["yod"] + "/links-away-" + libc)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout == linux.stdout


def as_on_linux(fc, exe, tmp_path, sub, expect):
    """Runs exe DIR on Linux here, then under yod through yod's tree and an
    fyod's: the same output each time (it must hold the line expect)."""
    name, dirs, _ = fc
    linux = subprocess.run([exe, str(tmp_path / "linux")], capture_output=True, text=True,
                           timeout=120)
    assert linux.returncode == 0, linux.stdout + linux.stderr
    assert expect in linux.stdout, linux.stdout
    for d in (dirs["yod"] + "/" + sub, "/scratch/" + sub):
        r = yod(name, exe, d, timeout=180)
        assert r.returncode == 0, r.stdout + r.stderr
        assert r.stdout == linux.stdout, d


def test_hdf5_as_on_linux(fc, tmp_path):
    """HDF5 1.10 (Debian's serial libhdf5, static): a file with a group, a
    chunked, deflated dataset and an attribute, written, closed and read
    back (HDF5 locks the file with flock, grows it, seeks, and rewrites its
    superblock), through yod's tree and an fyod, as on Linux."""
    base = "/usr/lib/x86_64-linux-gnu/hdf5/serial"
    exe = toolchain_program(tmp_path, "h5probe.c", base + "/libhdf5.a", "libhdf5-dev",
                            ["-I/usr/include/hdf5/serial", "-L" + base, "-lhdf5", "-lsz",
                             "-laec", "-lz", "-lm", "-ldl"])
    as_on_linux(fc, exe, tmp_path, "hdf5",
                "read: ok, the same: yes, attribute step 42, filters 1, compressed yes")


def test_mpi_io_through_an_fyod(fc):
    """tests/mpi/fileio.c (MPI-IO: subarray views, collective calls in two
    phases, the file pointer, EXCL, DELETE_ON_CLOSE) on 4 nodes whose file
    is on an fyod: each rank's pread/pwrite goes to it."""
    name, dirs, _ = fc
    d = os.path.join(dirs["scratch"], "mpiio")
    os.mkdir(d)
    try:
        r = yod(name, "-sz", "4", os.path.join(ROOT, "build", "mpi-tern", "fileio"),
                "/scratch/mpiio", timeout=180)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "fileio ok on 4 ranks" in r.stdout, r.stdout + r.stderr
    finally:
        shutil.rmtree(d)


@pytest.mark.parametrize("modes", [[], ["writemap"], ["nolock"], ["writemap", "nolock"]])
def test_lmdb_as_on_linux(fc, tmp_path, modes):
    """LMDB (Debian's liblmdb, static): 2000 keys in 20 transactions, read
    back, and read again after the environment is opened anew.  LMDB reads
    its pages through a shared mapping of its data file while it writes
    them with pwrite (writemap: stores into the shared mapping and msyncs),
    and keeps its lock table in a shared writable mapping.  Before shared
    mappings were kept in step with their files, every mode but nolock was
    ENODEV, and nolock read back 0 keys and left 100 entries of 2000 in the
    database."""
    exe = toolchain_program(tmp_path, "lmdbprobe.c", "/usr/lib/x86_64-linux-gnu/liblmdb.a",
                            "liblmdb-dev", ["-llmdb", "-lpthread"])
    name, dirs, _ = fc
    sub = "lmdb-" + "-".join(modes or ["plain"])
    linux = subprocess.run([exe, str(tmp_path / "linux"), *modes], capture_output=True,
                           text=True, timeout=120)
    assert linux.stdout.splitlines() == ["in the same environment: 2000 keys read back",
                                         "opened again: 2000 keys read back",
                                         "entries 2000, depth 2"], linux.stdout + linux.stderr
    for d in (dirs["yod"] + "/" + sub, "/scratch/" + sub):
        r = yod(name, exe, d, *modes, timeout=180)
        assert r.returncode == 0, r.stdout + r.stderr
        assert r.stdout == linux.stdout, d


def test_std_filesystem_as_on_linux(fc, tmp_path):
    """C++17's std::filesystem (libstdc++'s calls): permissions,
    last_write_time, copy_file, symbolic and hard links, space,
    remove_all.  The first of these failed with ENOSYS or EPERM."""
    from test_kernel_abi import compiler
    gxx = compiler("g++")
    if not gxx:
        pytest.skip("no g++")
    exe = str(tmp_path / "fsmeta")
    b = subprocess.run([gxx, "-std=c++17", "-static", "-O2", "-o", exe,
                        os.path.join(ROOT, "tests", "programs", "toolchains", "fsmeta.cc")],
                       capture_output=True, text=True, timeout=300)
    assert b.returncode == 0, b.stderr
    as_on_linux(fc, exe, tmp_path, "fsmeta",
                "create_hard_link: ok, hard_link_count 2, equivalent yes")


@pytest.mark.parametrize("where,prog", [("yod", FILEIO_GLIBC), ("/scratch", FILEIO)])
def test_positional_vectors_as_on_linux(fc, where, prog, tmp_path):
    """preadv, pwritev, preadv2 and pwritev2 (RWF_DSYNC) were ENOSYS: a
    node gives the lines Linux gives, file positions included."""
    name, dirs, _ = fc
    linux = subprocess.run([prog, "vectors", str(tmp_path / "v")], capture_output=True,
                           text=True, timeout=60)
    assert linux.returncode == 0, linux.stdout + linux.stderr
    assert "preadv at 2: 7, '2ab' 'cd78', position 10" in linux.stdout
    d = dirs["yod"] if where == "yod" else where
    r = yod(name, prog, "vectors", d + "/v")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout == linux.stdout


@pytest.mark.parametrize("where", ["yod", "/scratch"])
def test_syncfs_and_sync(fc, where):
    """syncfs (ENOSYS before) flushes the serving file system; sync asks
    every server the job used to."""
    name, dirs, _ = fc
    d = dirs["yod"] if where == "yod" else where
    r = yod(name, FILEIO, "sync", d + "/synced")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout == "syncfs: OK; of -1: EBADF; sync: returned\n"


def tree(top):
    """{relative path: (kind, mode, mtime, size or link target)} of a tree."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for n in dirnames + filenames:
            p = os.path.join(dirpath, n)
            st = os.lstat(p)
            kind = "l" if os.path.islink(p) else "d" if os.path.isdir(p) else "f"
            what = os.readlink(p) if kind == "l" else st.st_size if kind == "f" else None
            out[os.path.relpath(p, top)] = (kind, st.st_mode & 0o7777,
                                            None if kind != "f" else int(st.st_mtime), what)
    return out


def test_busybox_cp_a_and_tar_keep_modes_times_and_links(fc):
    """busybox's cp -a and tar x on a node make the tree they copy, with
    its modes, modification times and symbolic links, as on Linux (cp -a
    failed at its first chmod or symlink before)."""
    from test_kernel_abi import BUSYBOX, is_static_elf
    if not is_static_elf(BUSYBOX):
        pytest.skip("needs a static busybox")
    name, dirs, _ = fc
    src = os.path.join(dirs["scratch"], "bbsrc")
    os.makedirs(os.path.join(src, "sub"))
    try:
        for rel, body, mode, mtime in (("a", "alpha\n", 0o640, 978307200),
                                       ("sub/b", "beta\n", 0o604, 1000000000)):
            p = os.path.join(src, rel)
            with open(p, "w") as fh:
                fh.write(body)
            os.chmod(p, mode)
            os.utime(p, (mtime, mtime))
        os.symlink("a", os.path.join(src, "l"))
        os.chmod(os.path.join(src, "sub"), 0o750)
        want = tree(src)
        for argv in (("cp", "-a", "/scratch/bbsrc", "/scratch/bbcp"),
                     ("tar", "cf", "/scratch/bb.tar", "-C", "/scratch", "bbsrc"),
                     ("mkdir", "/scratch/bbex"),
                     ("tar", "xf", "/scratch/bb.tar", "-C", "/scratch/bbex")):
            r = yod(name, BUSYBOX, *argv)
            assert r.returncode == 0 and not r.stderr, (argv, r.stdout + r.stderr)
        assert tree(os.path.join(dirs["scratch"], "bbcp")) == want
        assert tree(os.path.join(dirs["scratch"], "bbex", "bbsrc")) == want
    finally:
        for p in ("bbsrc", "bbcp", "bbex"):
            shutil.rmtree(os.path.join(dirs["scratch"], p), ignore_errors=True)
        if os.path.exists(os.path.join(dirs["scratch"], "bb.tar")):
            os.unlink(os.path.join(dirs["scratch"], "bb.tar"))


def test_a_fifo_is_refused_and_the_fyod_goes_on_serving(fc):
    """A FIFO in the served tree: its open is ENXIO, at once.  The fyod
    opened it and waited for a writer, serving no other job meanwhile
    (the next job's read of a plain file hung)."""
    name, dirs, _ = fc
    fifo = os.path.join(dirs["scratch"], "fifo")
    os.mkfifo(fifo)
    with open(os.path.join(dirs["scratch"], "plain"), "w") as fh:
        fh.write("plain\n")
    try:
        for mode in ("r", "w"):
            r = yod(name, FILEIO, "open", "/scratch/fifo", mode, timeout=60)
            assert r.stdout.strip() == "open /scratch/fifo: ENXIO", r.stdout + r.stderr
        r = yod(name, FILEIO, "open", "/scratch/plain", "r", timeout=60)
        assert r.stdout.strip() == "open /scratch/plain: OK plain", r.stdout + r.stderr
    finally:
        os.unlink(fifo)
        os.unlink(os.path.join(dirs["scratch"], "plain"))


@pytest.mark.parametrize("prog", [FILEIO, FILEIO_GLIBC], ids=["musl", "glibc"])
def test_own_descriptors_by_name_and_urandom_are_the_nodes(fc, prog):
    """/dev/stdout, /dev/stderr, /proc/self/fd/N and /dev/fd/N are the
    rank's own descriptors (they named yod's: a line written there went
    into yod's stdout behind the job's stream, and a file server opens no
    devices now); /dev/urandom is the node's generator."""
    name, _, _ = fc
    r = yod(name, prog, "ownfds")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines() == [
        "via /dev/stdout", "via /proc/self/fd/1", "/dev/fd/9: ENOENT",
        "/dev/urandom: read yes, two reads differ yes, character device 1:9 yes"], r.stdout
    assert r.stderr.splitlines() == ["via /dev/stderr", "via /dev/fd/2"], r.stderr


def test_one_job_cannot_take_every_file_of_an_fyod(fc):
    """An fyod's table of open files is shared by every job it serves: one
    job may hold three quarters of it (12 of `--files 16`), and another
    job opens its files meanwhile.  One job could take them all, and every
    other job's open was ENFILE until it ended."""
    name, _, _ = fc
    d = public_dir("fyod-small-")
    small = Fyod(name, d, "/small", "--files", "16")
    holder = None
    try:
        holder = yod_bg(name, FILEIO, "hold", "/small", "20", "20000")
        first = holder.stdout.readline()
        assert first == "held 12 of 20: ENFILE\n", first + holder.stderr.read()
        r = yod(name, FILEIO, "open", "/small/other", "w", timeout=60)
        assert r.stdout.strip() == "open /small/other: OK", r.stdout + r.stderr
        holder.send_signal(signal.SIGINT)
        holder.communicate(timeout=60)
    finally:
        if holder and holder.poll() is None:
            holder.kill()
            holder.wait()
        small.stop()
        shutil.rmtree(d, ignore_errors=True)


def test_a_go_program_with_files_pipes_and_deadlines_as_on_linux(fc, tmp_path):
    """Go's runtime starts its network poller (epoll, and a pipe or an
    eventfd to wake it) at the first os.Open; os.Pipe's ends go through
    it, and a read deadline is its timer.  Every Go program that opened a
    file died on a node ("netpollinit failed") while those were ENOSYS."""
    from test_kernel_abi import go_program
    as_on_linux(fc, go_program(tmp_path, "gofiles"), tmp_path, "go", "pipe: 1200 bytes, <nil>")


def test_a_rust_program_with_files_links_times_and_a_pipe_as_on_linux(fc, tmp_path):
    """Rust's std: fs::copy (copy_file_range, then sendfile), permissions,
    symlink, hard_link, set_modified (futimens), read_dir, a pipe between
    threads (pipe2), a channel.  Several of its calls were ENOSYS or EPERM."""
    from test_kernel_abi import SOURCES, build, compiler
    rustc = compiler("rustc")
    if not rustc:
        pytest.skip("no rustc")
    v = re.search(r"rustc (\d+)\.(\d+)", subprocess.run([rustc, "--version"], capture_output=True,
                                                        text=True).stdout)
    if not v or (int(v.group(1)), int(v.group(2))) < (1, 87):
        pytest.skip("needs Rust 1.87 or later (std::io::pipe); Debian 12's is 1.63")
    exe = str(tmp_path / "fsrust")
    build([rustc, "-O", "-C", "target-feature=+crt-static", "-o", exe,
           os.path.join(SOURCES, "fsrust.rs")])
    as_on_linux(fc, exe, tmp_path, "rust", "pipe between threads: 100 lines")


def test_a_fortran_program_with_its_files_as_on_linux(fc, tmp_path):
    """gfortran's runtime on files: formatted and unformatted sequential
    records, APPEND, BACKSPACE, REWIND, direct and stream access, INQUIRE,
    CLOSE STATUS='DELETE': through yod and an fyod as on Linux."""
    from test_kernel_abi import SOURCES, build, compiler
    gfortran = compiler("gfortran")
    if not gfortran:
        pytest.skip("no gfortran")
    exe = str(tmp_path / "fortio")
    build([gfortran, "-static", "-O2", "-o", exe, os.path.join(SOURCES, "fortio.f90")])
    _, dirs, _ = fc
    for d in (tmp_path / "linux", os.path.join(dirs["yod"], "fortran"),   # it makes no directory
              os.path.join(dirs["scratch"], "fortran")):
        os.makedirs(d, exist_ok=True)
    as_on_linux(fc, exe, tmp_path, "fortran", "direct access records: 11 22 33 44 55")
