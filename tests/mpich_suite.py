#!/usr/bin/env python3
"""MPICH's own test suite (test/mpi of Debian's mpich source package, 4.0.2)
run against Tern's MPI: on the Linux host's Portals (`--host`) or on Tern
nodes through yod (`--cluster NAME`).

    python3 tests/mpich_suite.py --host [--dirs coll,pt2pt] [--only allred]
    python3 tests/mpich_suite.py --cluster c4 --dirs coll

The suite is fetched from deb.debian.org (the .dsc's checksum is pinned
below, the tarball checked against the .dsc) into build/third-party/ and
built out of tree there with tern-mpicc, never copied into ours.  Each test
is a line of a directory's testlist: a program, a rank count, arguments;
it passes when it exits 0 and prints " No Errors", MPICH's own rule.
What fails to build lacks an MPI call: the report names the calls.
"""
import argparse
import hashlib
import os
import re
import signal
import subprocess
import sys
import tarfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.path.join(ROOT, "build", "third-party")
POOL = "http://deb.debian.org/debian/pool/main/m/mpich/"
DSC = ("mpich_4.0.2-3.dsc",
       "67036921ec09db4da04568546691fe05d3118ac7e4a37020bc7b74a43de36cd0")
ORIG = "mpich_4.0.2.orig.tar.xz"
TOP = "mpich-4.0.2"
# The directories of testlist.in this runs (spawn, Fortran, C++ and fault
# tolerance are configured out: Tern's MPI has none of them).  "threads"
# (MPI_THREAD_MULTIPLE) is run when named: it is built in a tree of its
# own, configured with threads (--dirs threads).
DIRS = ["attr", "coll", "comm", "datatype", "errhan", "group", "info", "init",
        "pt2pt", "topo", "io", "rma"]


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def download(name, dest):
    tmp = dest + ".part"
    with urllib.request.urlopen(POOL + name, timeout=120) as r, open(tmp, "wb") as f:
        while True:
            b = r.read(1 << 20)
            if not b:
                break
            f.write(b)
    os.replace(tmp, dest)


def fetch():
    """The extracted test/mpi tree (downloaded and checked once)."""
    src = os.path.join(CACHE, TOP, "test", "mpi")
    if os.path.exists(os.path.join(src, "configure")):
        return src
    os.makedirs(CACHE, exist_ok=True)
    dsc = os.path.join(CACHE, DSC[0])
    if not os.path.exists(dsc):
        download(DSC[0], dsc)
    if sha256(dsc) != DSC[1]:
        raise RuntimeError(f"{DSC[0]}: checksum {sha256(dsc)} is not the pinned one")
    want = re.search(r"^ ([0-9a-f]{64}) \d+ " + re.escape(ORIG) + "$",
                     open(dsc).read(), re.M).group(1)
    orig = os.path.join(CACHE, ORIG)
    if not os.path.exists(orig) or sha256(orig) != want:
        download(ORIG, orig)
    if sha256(orig) != want:
        raise RuntimeError(f"{ORIG}: checksum is not the one {DSC[0]} gives")
    with tarfile.open(orig) as t:
        members = [m for m in t.getmembers()
                   if m.name.startswith(TOP + "/test/mpi/") and
                   (m.isfile() or m.isdir() or m.issym())]
        t.extractall(CACHE, members=members)
    return src


def build(kind, dirs, jobs=2, programs=None):
    """Configure (once) and build the suite's dirs for kind "host" (Linux
    programs on the host's Portals) or "tern" (programs for yod), or only
    the programs named "dir/name"; returns the build directory."""
    src = fetch()
    threads = "threads" in dirs
    bdir = os.path.join(CACHE, "mpich-tests-" + kind + ("-threads" if threads else ""))
    cc = os.path.join(ROOT, "build", "bin", "tern-mpicc")
    if kind == "host":
        cc += " --linux-portals"
    if not os.path.exists(os.path.join(bdir, "Makefile")):
        os.makedirs(bdir, exist_ok=True)
        r = subprocess.run(
            [os.path.join(src, "configure"), "CC=" + cc, "MPICC=" + cc,
             "--enable-fortran=no", "--disable-cxx", "--disable-spawn",
             "--enable-rma=yes", "--disable-dtpools", "--enable-romio",
             "--disable-ft-tests",
             "--enable-threads=multiple" if threads else "--disable-threads"],
            cwd=bdir, capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError("configure failed:\n" + r.stdout[-3000:] + r.stderr[-3000:])
    # Programs older than a library they link (statically) are made again:
    # libmpi, and the message engine and Portals under it (a change to
    # libmsg alone left every program on the old engine).
    out = subprocess.run(cc.split() + ["-show", "x.c"], capture_output=True, text=True).stdout
    libs = [w for w in out.split() if w.endswith(".a")]
    if not libs:
        raise RuntimeError(f"{cc} -show names no library: {out!r}")
    stamp = max(os.path.getmtime(lib) for lib in libs)
    for d in dirs:
        if not os.path.isdir(os.path.join(bdir, d)):
            continue
        for top, _, files in os.walk(os.path.join(bdir, d)):  # threads/ has subdirectories
            for name in files:
                path = os.path.join(top, name)
                if (os.access(path, os.X_OK) and "." not in name
                        and os.path.getmtime(path) < stamp):
                    with open(path, "rb") as f:
                        if f.read(4) == b"\x7fELF":
                            os.unlink(path)
    for d in ["util"] + list(dirs):
        names = [p.split("/")[1] for p in programs or () if p.split("/")[0] == d]
        if programs and d != "util" and not names:
            continue
        subprocess.run(["make", "-k", f"-j{jobs}"] + (names if d != "util" else []),
                       cwd=os.path.join(bdir, d), stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    return bdir


class Case:
    def __init__(self, d, name, np, args, opts):
        self.dir, self.name, self.np, self.args, self.opts = d, name, np, args, opts

    @property
    def id(self):
        return f"{self.dir}/{self.name}:{self.np}" + ("".join(" " + a for a in self.args))

    def timeout(self, default):
        t = self.opts.get("timeLimit")
        return max(default, int(t)) if t else default


def cases(bdir, dirs):
    """Every test line of the dirs' generated testlists."""
    out = []
    for d in dirs:
        # Generated by configure where it has choices (testlist.in), else the
        # source's own.
        path = os.path.join(bdir, d, "testlist")
        if not os.path.exists(path):
            path = os.path.join(CACHE, TOP, "test", "mpi", d, "testlist")
        if not os.path.exists(path):
            continue
        for line in open(path):
            line = line.split("#")[0].strip()
            if not line:
                continue
            words = line.split()
            if len(words) == 1:   # a subdirectory (threads/pt2pt ...)
                if os.path.isdir(os.path.join(bdir, d, words[0])):
                    out += cases(bdir, [d + "/" + words[0]])
                continue
            name, np, rest = words[0], int(words[1]), words[2:]
            args = [w[4:] for w in rest if w.startswith("arg=")]
            opts = dict(w.split("=", 1) for w in rest if "=" in w and not w.startswith("arg="))
            if opts.get("xfail") or opts.get("mpiversion") in ("4.0", "4.1"):
                pass  # kept: reported as what they are
            if "/" in name:   # a subdirectory's testlist
                continue
            out.append(Case(d, name, np, args, opts))
    return out


def missing_calls(bdir, case):
    """Why a program was not built: the MPI names its link or compile lacked."""
    src = os.path.join(bdir, case.dir)
    r = subprocess.run(["make", case.name], cwd=src, capture_output=True, text=True)
    names = set(re.findall(r"undefined reference to `(MPIX?_\w+)'", r.stderr))
    names |= set(re.findall(r"‘(MPIX?_\w+)’ undeclared", r.stderr))
    names |= set(re.findall(r"implicit declaration of function ‘(MPIX?_\w+)’", r.stderr))
    return sorted(names)


def passed(status, out, how=None):
    """MPICH's rule (runtests): exit 0 and " No Errors" (or "errors"), but for the lines
    whose resultTest (how) asks for a job that fails: TestErrFatal and TestStatus
    pass on a non-zero status, TestStatusNoErrors wants " No Errors" too."""
    no_errors = re.search(r"^\s*No [Ee]rrors\s*$", out, re.M) is not None
    if how in ("TestErrFatal", "TestStatus"):
        return status != 0
    if how == "TestStatusNoErrors":
        return status != 0 and no_errors
    return status == 0 and no_errors


def run_host(bdir, todo, timeout, log):
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import nxlaunch
    results = []
    with nxlaunch.netns() as ns:
        for c in todo:
            prog = os.path.join(bdir, c.dir, c.name)
            # In the test's directory: the I/O tests make files where they run.
            here = os.getcwd()
            os.chdir(os.path.join(bdir, c.dir))
            try:
                r = nxlaunch.launch(ns, c.np, [prog] + c.args, timeout=c.timeout(timeout),
                                    env={"MPITEST_VERBOSE": "0"})
            finally:
                os.chdir(here)
            ok = passed(r.status, r.out, c.opts.get("resultTest"))
            results.append((c, ok, r.status, r.out + r.err, r.secs))
            log(c, results[-1])
    return results


def run_tern(bdir, todo, cluster, timeout, log):
    results = []
    for c in todo:
        prog = os.path.join(bdir, c.dir, c.name)
        t0 = time.monotonic()
        # Its own session: at the time limit yod itself is told to stop
        # (SIGTERM ends its job and gives the nodes back), not only the
        # wrapper that started it.
        p = subprocess.Popen([os.path.join(ROOT, "qemu", "cluster"), "--name", cluster,
                              "exec", "yod", "-sz", str(c.np), prog] + c.args,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             cwd=os.path.join(bdir, c.dir), start_new_session=True)
        try:
            out, _ = p.communicate(timeout=c.timeout(timeout) + 30)
            st = p.returncode
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGTERM)
            try:
                out, _ = p.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                out, _ = p.communicate()
            st, out = -9, (out or "") + f"\ntimed out after {c.timeout(timeout) + 30} s"
        ok = passed(st, out, c.opts.get("resultTest"))
        results.append((c, ok, st, out, time.monotonic() - t0))
        log(c, results[-1])
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--host", action="store_true")
    where.add_argument("--cluster")
    ap.add_argument("--dirs", default=",".join(DIRS))
    ap.add_argument("--only", help="a regular expression on dir/name")
    ap.add_argument("--max-np", type=int, default=16)
    ap.add_argument("--timeout", type=int, default=60)
    ap.add_argument("--verbose", "-v", action="store_true")
    a = ap.parse_args()
    dirs = a.dirs.split(",")
    kind = "host" if a.host else "tern"
    # tern-mpicc and the libraries it links come from the tree's own build
    # (a no-op after `make`); a clean clone would otherwise fail in
    # configure with "C compiler cannot create executables".
    from nodes import make
    make("-j2", "all")
    bdir = build(kind, dirs)
    allc = cases(bdir, dirs)
    if a.only:
        allc = [c for c in allc if re.search(a.only, f"{c.dir}/{c.name}")]
    built = [c for c in allc if os.path.exists(os.path.join(bdir, c.dir, c.name))]
    unbuilt = [c for c in allc if c not in built]
    todo = [c for c in built if c.np <= a.max_np]

    def log(c, res):
        _, ok, st, out, secs = res
        print(f"{'PASS' if ok else 'FAIL'} {c.id} ({secs:.1f} s)", flush=True)
        if not ok and a.verbose:
            print("    " + "\n    ".join(out.strip().splitlines()[-12:]), flush=True)

    results = (run_host(bdir, todo, a.timeout, log) if a.host
               else run_tern(bdir, todo, a.cluster, a.timeout, log))
    why = {}
    for c in unbuilt:
        key = f"{c.dir}/{c.name}"
        if key not in why:
            why[key] = missing_calls(bdir, c)
    for key, names in sorted(why.items()):
        print(f"NOT BUILT {key}: {' '.join(names) or '(see make)'}")
    npass = sum(1 for r in results if r[1])
    print(f"\n{npass} passed, {len(results) - npass} failed of {len(results)} run; "
          f"{len(unbuilt)} not built; {len(built) - len(todo)} over {a.max_np} ranks "
          f"(of {len(allc)} in {','.join(dirs)})")
    return 0 if npass == len(results) else 1


def _stop(signum, _frame):
    # SIGTERM (kill, timeout) unwinds like Ctrl-C: the with-blocks take down
    # the network namespace and the programs it started (killed runs left
    # their namespaces behind).
    raise KeyboardInterrupt(f"signal {signum}")


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _stop)
    sys.exit(main())
