#!/usr/bin/env python3
"""The suite on several workers: what `make test` runs.

    python3 tests/run_suite.py [-j N] [--save-times] [PYTEST ARGS...] [FILES...]

A worker is one `python3 -m pytest` over one test file; N of them run at a
time (-j; default: the machine's cores, at most 4).  A file is the unit
because a module shares one cluster between its tests (tests/clusters.py):
splitting a file would boot its cluster twice.  The files start longest
first (tests/times.tsv, the seconds each took in a whole run; a file not
there goes first), so that no long file starts last and leaves the other
workers idle at the end.

Why: most of a test's time is QEMU running one node's guest, or a wait for
a time-out, a node's end or a daemon's give-up; one pytest at a time left a
2-core machine's cores idle 43 % of the run (tests/README.md).  Tests that
run at once stay apart: every cluster has a fresh name and a network
namespace of its own, every run-node a run folder under its pytest's own
TMPDIR, and builds a test starts take one lock (nodes.make).

Arguments other than -j and --save-times go to every pytest; those that
name test files (or file::test) choose the files, tests/test_*.py if none.
Each file's summary line is printed as it ends, a failing file's whole
output at the end; the exit status is non-zero if any file failed.
--save-times writes the files' times of this run to tests/times.tsv."""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

TESTS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TESTS)
TIMES = os.path.join(TESTS, "times.tsv")
# pytest's exit statuses: 0 all passed, 5 nothing collected (e.g. -k chose
# no test of this file); anything else is a failure of the run.
FINE = (0, 5)
COUNT = re.compile(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed|deselected)")


def usage(msg):
    print(f"run_suite: {msg}\n" + __doc__.split("\n\n")[1], file=sys.stderr)
    sys.exit(2)


def parse(argv):
    jobs, save, files, opts = None, False, [], []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "-j" or a.startswith("-j") and a[2:].isdigit():
            v = a[2:] or (argv[i + 1] if i + 1 < len(argv) else "")
            i += 0 if a[2:] else 1
            if not v.isdigit() or int(v) < 1:
                usage(f"-j needs a number of workers, not {v!r}")
            jobs = int(v)
        elif a == "--save-times":
            save = True
        elif not a.startswith("-") and (a.split("::")[0].endswith(".py") or os.path.isdir(a)):
            files.append(a)
        else:
            opts.append(a)
        i += 1
    return jobs, save, files, opts


def test_files(named):
    """The files to run, each once, in the order named; every test file of a
    folder named (tests/ if nothing is)."""
    out = []
    for a in named or [TESTS]:
        if os.path.isdir(a):
            out += sorted(os.path.join(a, f) for f in os.listdir(a)
                          if f.startswith("test_") and f.endswith(".py"))
        elif not os.path.exists(a.split("::")[0]):
            usage(f"no such test file: {a}")
        else:
            out.append(a)
    seen, files = set(), []
    for f in out:
        if f not in seen:
            seen.add(f)
            files.append(f)
    return files


def key(path):
    """A file's name in tests/times.tsv: its path from the repository root."""
    return os.path.relpath(os.path.abspath(path.split("::")[0]), ROOT)


def read_times():
    times = {}
    try:
        with open(TIMES) as f:
            for line in f:
                if line.strip() and not line.startswith("#"):
                    secs, name = line.split(None, 1)
                    times[name.strip()] = float(secs)
    except FileNotFoundError:
        pass
    return times


def save_times(done):
    times = read_times()
    times.update({key(f): secs for f, (_, secs, _) in done.items()})
    with open(TIMES + ".new", "w") as f:
        f.write("# Seconds each test file took in a whole run (tests/run_suite.py "
                "--save-times);\n# the suite starts the longest first.\n")
        for name, secs in sorted(times.items(), key=lambda t: (-t[1], t[0])):
            f.write(f"{secs:.0f}\t{name}\n")
    os.replace(TIMES + ".new", TIMES)


def summary(out):
    """pytest's counts from the last line that has any (-q's summary)."""
    for line in reversed(out.splitlines()):
        found = COUNT.findall(line)
        if found:
            counts = {}
            for n, what in found:
                what = "errors" if what == "error" else what
                counts[what] = counts.get(what, 0) + int(n)
            return counts
    return {}


def clock(secs):
    return f"{int(secs) // 60}:{int(secs) % 60:02d}"


def main(argv):
    jobs, save, named, opts = parse(argv)
    jobs = jobs or min(os.cpu_count() or 1, 4)
    times = read_times()
    files = test_files(named)
    # Longest first; files with no time yet before all (new, so unknown).
    order = sorted(files, key=lambda f: -times.get(key(f), float("inf")))
    logs = tempfile.mkdtemp(prefix="tern-suite-")
    running, done, stopping = {}, {}, []
    start = time.monotonic()

    def stop(signum, _frame):
        # pytest ends on SIGINT with its teardowns (clusters taken down,
        # run folders removed); on SIGTERM it would leave them.
        # Once: a second SIGINT would cut pytest's teardowns short.
        stopping.append(signum)
        if len(stopping) > 1:
            return
        for p, _, _, _ in running.values():
            try:
                os.killpg(p.pid, signal.SIGINT)
            except ProcessLookupError:
                pass
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)

    print(f"run_suite: {len(order)} files on {jobs} workers (outputs in {logs})", flush=True)
    while (order and not stopping) or running:
        while order and not stopping and len(running) < jobs:
            f = order.pop(0)
            log = open(os.path.join(logs, key(f).replace("/", "_") + ".log"), "w+")
            # A session of its own: a Ctrl-C at the terminal reaches only this
            # runner, which passes it on once to each worker (stop above).
            p = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                  *opts, f], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                 start_new_session=True)
            running[p.pid] = (p, f, log, time.monotonic())
        try:
            pid, status = os.wait()
        except ChildProcessError:
            break
        if pid not in running:
            continue
        p, f, log, began = running.pop(pid)
        p.returncode = os.waitstatus_to_exitcode(status)
        log.seek(0)
        out = log.read()
        log.close()
        secs = time.monotonic() - began
        done[f] = (p.returncode, secs, out)
        counts = summary(out)
        said = ", ".join(f"{n} {w}" for w, n in counts.items()) or "no summary"
        mark = "" if p.returncode in FINE else f"  FAILED (pytest exit {p.returncode})"
        print(f"[{len(done):3}/{len(files)} {clock(time.monotonic() - start)}] "
              f"{key(f)}: {said} in {secs:.1f}s{mark}", flush=True)

    failed = [f for f, (rc, _, _) in done.items() if rc not in FINE]
    for f in failed:
        print(f"\n{'=' * 30} {key(f)} {'=' * 30}\n{done[f][2]}", end="")
    total = {}
    for _, _, out in done.values():
        for w, n in summary(out).items():
            total[w] = total.get(w, 0) + n
    left = [f for f in files if f not in done]
    said = ", ".join(f"{n} {w}" for w, n in total.items()) or "no tests"
    print(f"\n{said} in {clock(time.monotonic() - start)} on {jobs} workers"
          + (f"; FAILED files: {', '.join(key(f) for f in failed)}" if failed else "")
          + (f"; not run (stopped): {len(left)} files" if left else ""))
    if save and not failed and not left:
        save_times(done)
    # The logs stay only where something failed, for a look after the run.
    if not failed:
        for name in os.listdir(logs):
            os.unlink(os.path.join(logs, name))
        os.rmdir(logs)
    if stopping:
        return 130
    return 1 if failed or left else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
