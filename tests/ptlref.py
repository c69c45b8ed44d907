"""Sandia's Portals 4 reference tests (third-party, ../shared/third-party/
portals4-tests) built against Tern's Portals and run: the program list and
build flags from their test/basic/Makefile.am, builds for Linux (libportals)
and for Tern nodes (libportals-tern), both with the runtime of
tests/portals/refshim, into a scratch directory; never into the tree.

Used by tests/test_portals_reference.py and bench/portals_reference.py;
`python3 tests/ptlref.py build DIR` builds everything by hand."""
import concurrent.futures
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHIM = os.path.join(ROOT, "tests", "portals", "refshim")
PASS, SKIP, FAIL = "pass", "skip", "fail"


def third_party():
    """The reference tests: PORTALS4_TESTS, else ROOT/../shared/third-party/
    portals4-tests."""
    d = os.environ.get("PORTALS4_TESTS") or os.path.join(
        os.path.dirname(ROOT), "shared", "third-party", "portals4-tests")
    return d if os.path.isdir(os.path.join(d, "test", "basic")) else None


def programs(src=None):
    """{program: (source file, [-D flags])} for every test program of
    test/basic/Makefile.am, in its order: TESTS, then those it adds under
    configure conditions (triggered ME ops, unordered matching)."""
    src = src or third_party()
    text = open(os.path.join(src, "test", "basic", "Makefile.am")).read()
    text = re.sub(r"\\\n", " ", text)
    names = []
    for m in re.finditer(r"^(?:TESTS|EXTRA_TESTS)\s*\+?=\s*(.*)$", text, re.M):
        names += [n for n in m.group(1).split() if n not in names]
    out = {}
    for n in names:
        s = re.search(rf"^{n}_SOURCES\s*=\s*(\S+)", text, re.M)
        f = re.search(rf"^{n}_CPPFLAGS\s*=\s*(.*)$", text, re.M)
        defs = re.findall(r"-D\S+", f.group(1)) if f else []
        out[n] = (s.group(1) if s else n + ".c", defs)
    return out


def benchmarks(src=None):
    """{program: [sources]} of the benchmarks this repository runs."""
    src = src or third_party()
    b = os.path.join(src, "test", "benchmarks")
    return {
        "ct_hotpotato": [os.path.join(b, "rtt_latency", "ct_hotpotato.c")],
        "events_hotpotato": [os.path.join(b, "rtt_latency", "events_hotpotato.c")],
        "P4msgrate": [os.path.join(b, "msg_rate", f) for f in
                      ("P4msgrate.c", "test_one_wayME.c", "test_one_wayLE.c",
                       "test_prepostME.c", "test_prepostLE.c")],
    }


TOOLS = {
    # Linux processes: the AF_PACKET host, a progress thread.
    "linux": {"cc": "gcc", "lib": os.path.join(ROOT, "build", "portals", "libportals.a"),
              "ldflags": ["-pthread", "-lm"]},
    # Tern nodes: system-call stubs, static (musl: small images load fast).
    "tern": {"cc": "musl-gcc", "lib": os.path.join(ROOT, "build", "portals",
                                                   "libportals-tern.a"),
             "ldflags": ["-static", "-pthread", "-lm"]},
}


def _run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    return r.returncode, r.stdout + r.stderr


def _with_loops(srcs, out, loops):
    """The rtt_latency sources fix their round-trip count in a #define
    (LOOPS, 10^6: minutes even on Linux, hours under TCG): with `loops`,
    copies in `out` whose LOOPS is that, nothing else changed."""
    if loops is None:
        return srcs
    copies = []
    for path in srcs:
        text = open(path).read()
        text, n = re.subn(r"^#define LOOPS \d+$", f"#define LOOPS {int(loops)}", text,
                          flags=re.M)
        if n != 1:
            raise RuntimeError(f"{path}: no '#define LOOPS N' line to set")
        copy = os.path.join(out, f"loops{int(loops)}-" + os.path.basename(path))
        with open(copy, "w") as f:
            f.write(text)
        copies.append(copy)
    return copies


def build(target, out, src=None, jobs=3, names=None, bench=False, rtt_loops=None):
    """Builds the programs for `target` ("linux" or "tern") into `out`.
    Returns {program: path or None}, and the compiler's words for those
    that did not build in out/<program>.log.  rtt_loops: the round trips of
    the rtt_latency benchmarks (bench=True), if not their own 10^6."""
    src = src or third_party()
    t = TOOLS[target]
    test = os.path.join(src, "test")
    os.makedirs(out, exist_ok=True)
    inc = ["-I", os.path.join(ROOT, "portals", "include"), "-I", os.path.join(ROOT, "include"),
           "-I", test,
           "-I", os.path.join(test, "basic"), "-I", os.path.join(SHIM, "include")]
    # The runtime is ours: warnings are errors.  The third-party sources
    # build as their authors left them (-w).
    objs = []
    for name, path, flags in (("refshim", os.path.join(SHIM, "refshim.c"),
                               ["-Wall", "-Wextra", "-Werror"]),
                              ("support", os.path.join(test, "support.c"), ["-w"])):
        o = os.path.join(out, name + ".o")
        rc, log = _run([t["cc"], "-std=gnu11", "-O2", "-g", *flags, *inc, "-c", path, "-o", o])
        if rc:
            raise RuntimeError(f"{name} does not build for {target}:\n{log}")
        objs.append(o)
    if bench:
        progs = {n: (_with_loops(srcs, out, rtt_loops) if "hotpotato" in n else srcs, [])
                 for n, srcs in benchmarks(src).items()}
    else:
        progs = {n: ([os.path.join(test, "basic", s)], d)
                 for n, (s, d) in programs(src).items()}
    if names is not None:
        progs = {n: v for n, v in progs.items() if n in names}

    def one(item):
        name, (srcs, defs) = item
        exe = os.path.join(out, name)
        rc, log = _run([t["cc"], "-std=gnu11", "-O2", "-g", "-w", *inc, *defs, *srcs, *objs,
                        t["lib"], *t["ldflags"], "-o", exe])
        with open(exe + ".log", "w") as f:
            f.write(log)
        return name, (exe if rc == 0 else None)

    with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
        return dict(ex.map(one, progs.items()))


def outcome(codes):
    """One program's result from its ranks' exit statuses: 77 is the
    programs' own "skipped"; a timeout is None."""
    if any(c is None or c not in (0, 77) for c in codes):
        return FAIL
    return SKIP if 77 in codes else PASS


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] != "build":
        sys.exit("usage: ptlref.py build linux|tern DIR")
    built = build(sys.argv[2], sys.argv[3])
    bad = sorted(n for n, p in built.items() if not p)
    print(f"{len(built) - len(bad)} of {len(built)} built; not built: {' '.join(bad)}")


def wait_ranks(procs, timeout, grace=3):
    """[(exit status or None, output)] of a job's processes (stdout with
    stderr).  A rank that fails ends the job: the others are killed after
    `grace` seconds (they would wait in a barrier until the timeout)."""
    import time
    end = time.monotonic() + timeout
    kill_at = None
    while any(p.poll() is None for p in procs):
        now = time.monotonic()
        if kill_at is None and any(p.poll() not in (None, 0, 77) for p in procs):
            kill_at = now + grace
        if now > end or (kill_at and now > kill_at):
            break
        time.sleep(0.02)
    timed_out = [p.poll() is None for p in procs]
    # SIGTERM first: yod then kills its job's ranks and frees the nodes.
    for p in procs:
        if p.poll() is None:
            p.terminate()
    out = []
    for p, t in zip(procs, timed_out):
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        p.output.seek(0)
        out.append((None if t else p.returncode, p.output.read().decode(errors="replace")))
        p.output.close()
    return out


def spawn(argv, env):
    """A rank: stdin from /dev/null, stdout and stderr into one temporary
    file (a pipe nobody reads while the job runs could fill and stall it)."""
    import tempfile
    out = tempfile.TemporaryFile()
    p = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=out,
                         stderr=subprocess.STDOUT)
    p.output = out
    return p


class LinuxPair:
    """Two Linux nodes (nid 1 and 2) joined by a veth pair in namespaces of
    their own (tests/portals/linux/netns.py).  Programs run at once share
    them: each run gets pids of its own."""

    def __init__(self, mtu=1500):
        sys.path.insert(0, os.path.join(ROOT, "tests", "portals", "linux"))
        from netns import Pair
        self.pair = Pair(mtu=mtu)
        self._pid = 0x200
        self._lock = __import__("threading").Lock()

    def pids(self, n):
        with self._lock:
            p = list(range(self._pid, self._pid + n))
            self._pid += n
        return p

    def run(self, exe, nprocs, timeout=90, env=None, args=()):
        """Runs exe (with args) as a job of nprocs ranks (rank r on nid
        1 + r % 2); returns [(exit status or None on timeout, output)]."""
        pids = self.pids(nprocs)
        nids = [1 + r % 2 for r in range(nprocs)]
        job = {"REFTEST_SIZE": str(nprocs),
               "REFTEST_MAP": ",".join(f"{n}:{p}" for n, p in zip(nids, pids))}
        procs = []
        for r in range(nprocs):
            e = dict(job, REFTEST_RANK=str(r), **(env or {}))
            procs.append(spawn(["ip", "netns", "exec", self.pair.ns[nids[r]], exe, *args],
                               self.pair.env(nids[r], pids[r], e)))
        return wait_ranks(procs, timeout)

    def close(self):
        self.pair.close()


def yod_statuses(rc, text, n):
    """Each rank's exit status from yod's report (docs/yod.md): 0 for a
    rank yod does not name, the status it names, -signal for a rank killed
    (one failing rank makes yod kill the others), None for a lost node."""
    if rc == 0:
        return [0] * n
    st = [0] * n
    for m in re.finditer(r"rank (\d+) \(nid \d+\): (exited with status (\d+)|killed by (\S+)|lost)",
                         text):
        r = int(m.group(1))
        if r < n:
            st[r] = int(m.group(3)) if m.group(3) else (-9 if m.group(4) else None)
    if rc and st == [0] * n:       # not loaded, or yod itself failed
        st = [None] * n
    return st


def yod_outcome(statuses):
    """Like outcome(), for a job yod ran: a rank that exits 77 makes yod
    kill the others, so killed ranks beside a 77 are the skip, not a
    failure."""
    if 77 in statuses and all(s in (0, 77, -9) for s in statuses):
        return SKIP
    return outcome(statuses)


class TernCluster:
    """A virtual cluster of Tern nodes (qemu/cluster, direct boot) for the
    reference programs: jobs of Tern ranks started by yod, and jobs of a
    Linux process on the service interface (nid 0) with Tern ranks."""
    LINUX_PID = 0xff00   # above every pid the Linux host picks by itself

    def __init__(self, n=2, kmem="8M", mem="64M"):
        import threading
        import uuid
        self.name = "r" + uuid.uuid4().hex[:7]
        self.cluster = os.path.join(ROOT, "qemu", "cluster")
        self.n = n
        self._lock = threading.Lock()
        self._pid = self.LINUX_PID
        r = subprocess.run([self.cluster, "--name", self.name, "up", "-n", str(n), "--boot",
                            "direct", "--mem", mem, "--kmem", kmem], capture_output=True,
                           text=True, timeout=600)
        if r.returncode:
            self.close()
            raise RuntimeError("cluster up failed:\n" + r.stdout + r.stderr)

    def _yod(self, exe, size, nodes, env, timeout, args=(), opts=()):
        pre = ["env", *(f"{k}={v}" for k, v in (env or {}).items())]
        return spawn([self.cluster, "--name", self.name, "exec", *pre, "yod", *opts,
                      "-timeout", str(int(timeout)), "-sz", str(size), "-list", nodes, exe,
                      *args], dict(os.environ))

    @staticmethod
    def _job_id(p, secs=120):
        """The job id `yod -v` (p) says it was given, once it says it; None
        if it ended first (no nodes, load refused)."""
        import time
        end = time.monotonic() + secs
        while time.monotonic() < end:
            # Whether yod has ended, before its output is read: a yod that
            # printed the id and ended between a read and the look at its
            # end was taken for one that never had a job (a Tern rank that
            # needs nothing of the Linux one, as test_init's, can end that
            # soon), and the Linux rank was never started.
            ended = p.poll() is not None
            p.output.seek(0)
            m = re.search(rb"yod: job (\d+): \d+ nodes allocated", p.output.read())
            if m:
                return int(m.group(1))
            if ended:
                return None
            time.sleep(0.02)
        return None

    BUSY = "cannot have the nodes"   # the previous job's node is not free yet
    BUSY_WAIT_S = 120                # a node cleans up after a killed job (TCG, load)

    def run(self, exe, size=2, timeout=90, env=None, args=(), first=1):
        """exe (with args) on nodes first..first+size-1, one rank each:
        [(status, yod's output)]."""
        import time
        end = time.monotonic() + self.BUSY_WAIT_S
        while True:
            p = self._yod(exe, size, f"{first}..{first + size - 1}", env, timeout, args)
            [(rc, text)] = wait_ranks([p], timeout + 60)
            if self.BUSY not in text or time.monotonic() > end:
                break
            time.sleep(0.2)
        return [(s, text) for s in yod_statuses(rc, text, size)]

    def run_with_linux(self, exe_linux, exe_tern, node, timeout=90, env=None):
        """Rank 0: exe_linux on the service interface; rank 1: exe_tern on
        Tern node `node`.  [(status, output)] of the two."""
        import time
        with self._lock:
            pid = self._pid
            self._pid += 1
        end = time.monotonic() + self.BUSY_WAIT_S
        while True:
            job = {"REFTEST_SIZE": "2", "REFTEST_MAP": f"0:{pid},{node}:16", **(env or {})}
            tern = self._yod(exe_tern, 1, str(node), dict(job, REFTEST_RANK="1"), timeout,
                             opts=["-v"])
            # The node takes frames only of its job (docs/security.md): the
            # Linux rank carries the job's id, known once yod has the node.
            jid = self._job_id(tern)
            if jid is None:
                [(yrc, yout)] = wait_ranks([tern], timeout + 60)
                (lrc, lout) = (None, "the Linux rank was not started: yod has no job\n")
            else:
                lin = spawn(["ip", "netns", "exec", f"tern-{self.name}", exe_linux],
                            dict(os.environ, TERN_IFACE="svc0", TERN_NID="0",
                                 TERN_PID=str(pid), TERN_JID=str(jid), REFTEST_RANK="0",
                                 **job))
                (lrc, lout), (yrc, yout) = wait_ranks([lin, tern], timeout + 60)
            if self.BUSY not in yout or time.monotonic() > end:
                break
            time.sleep(0.2)
        [tst] = yod_statuses(yrc, yout, 1)
        return [(lrc, lout), (tst, yout)]

    def close(self):
        subprocess.run([self.cluster, "--name", self.name, "down"], capture_output=True,
                       timeout=300)
