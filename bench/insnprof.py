#!/usr/bin/env python3
"""Where a node's guest instructions go, per message (issue 18).

Two Tern nodes (virtio-net, TCG, a bridge in a private network namespace)
play bench/msgpath/nxping.c's NX ping-pong of 0-byte messages, as
`msgpath.py --nx` does.  Node 2, the rank that answers, runs with QEMU's
translated blocks unchained (run-node --exec-log).  For --window seconds in
the middle of the ping-pong, QEMU's monitor has it log every block it
executes (`log exec,nochain`).

Each logged block counts its instructions up to its first branch, read from
the disassembly (objdump) of the kernel and of the program (the unstripped
build/nx-tern/nxping.syms).  A string instruction with a rep prefix counts
one instruction each time round: TCG runs every round as a block of its own.
Per message: divided by the program's csend calls in the window; the
answering rank sends one answer for each message it takes, so a "message" is
one taken and one sent.

The counts are of the guest's work, not of time: they hardly move between
runs or hosts, so a change to the message path can be weighed by them where
the latency's noise hides it.  The counts are approximate where a block ends
for another reason than a branch (an I/O instruction, a page boundary).

    python3 bench/insnprof.py [--window S] [--top N] [--kernel ELF]
                              [--out CSV] [--keep-log FILE]

Prints the instructions and blocks per message, the rounds of rep-prefixed
instructions, and the functions by instructions per message; writes
bench/results/<date>/insnprof.csv (or --out).  Needs root."""
import argparse
import bisect
import collections
import csv
import datetime
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The same ping-pong program, and the paths msgpath puts on sys.path (qemu/, tests/).
from msgpath import NXPING, ROOT  # noqa: E402
from ternlib.monitor import monitor  # noqa: E402

NXPING_SYMS = NXPING + ".syms"
KERNEL = os.path.join(ROOT, "build", "tern.elf")
RUN_NODE = os.path.join(ROOT, "qemu", "run-node")
ROUNDS = 40000          # nxping's most untraced round trips: the window falls among them

# Instructions after which TCG ends a translated block: control transfers,
# and those that leave to the emulator's loop.
_ENDS = re.compile(r"^(j\w*|call\w*|ret\w*|iret\w*|sysret\w*|syscall|sysenter|hlt|int\w*|"
                   r"ud2|lret\w*|sti|pause|wrmsr|rdmsr|swapgs|invlpg|lgdt|lidt|mov\s+%\w+,%cr\d)\b")
_LINE = re.compile(r"^\s*([0-9a-f]+):\s+(.*)$")
_EXEC = re.compile(r"^Trace \d+: \S+ \[[0-9a-f]+/([0-9a-f]+)/")


class Image:
    """One ELF's code: for every instruction address, whether it ends a
    translated block (a branch, or a rep-prefixed round), and its function
    symbols."""

    def __init__(self, path):
        out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", path], capture_output=True,
                             text=True, check=True).stdout
        self.addrs, self.ends, self.rep = [], [], set()
        for line in out.splitlines():
            m = _LINE.match(line)
            if not m:
                continue
            ins = m.group(2).strip()
            if not ins or ins.startswith("(bad)"):
                continue
            a = int(m.group(1), 16)
            rep = ins.startswith("rep")
            if rep:
                self.rep.add(a)
            ins = re.sub(r"^((rep\w*|lock|notrack|bnd|data16|cs|ds)\s+)+", "", ins)
            self.addrs.append(a)
            self.ends.append(rep or bool(_ENDS.match(ins)))
        syms = subprocess.run(["nm", "-n", path], capture_output=True, text=True).stdout
        self.syms = sorted((int(w[0], 16), w[2]) for w in (l.split() for l in syms.splitlines())
                           if len(w) == 3 and w[1] in "tTwW")
        if not self.addrs or not self.syms:
            raise SystemExit(f"insnprof: {path}: no code or no symbols (stripped?)")
        self.starts = {a: n for a, n in self.syms}

    def holds(self, pc):
        return self.addrs[0] <= pc <= self.addrs[-1]

    def block(self, pc):
        """Instructions of the block starting at pc (None: no instruction there)."""
        i = bisect.bisect_left(self.addrs, pc)
        if i == len(self.addrs) or self.addrs[i] != pc:
            return None
        n = 1
        while not self.ends[i] and n < 512 and i + 1 < len(self.addrs):
            i, n = i + 1, n + 1
        return n

    def function(self, pc):
        i = bisect.bisect_right(self.syms, (pc, "\xff")) - 1
        return self.syms[i][1] if i >= 0 else "?"


def count_blocks(log_path):
    """{block address: times executed} from a QEMU exec log."""
    counts = collections.Counter()
    with open(log_path, errors="replace") as f:
        for line in f:
            m = _EXEC.match(line)
            if m:
                counts[int(m.group(1), 16)] += 1
    return counts


def profile(counts, images, per="csend"):
    """Instructions per function, totals, and messages (calls of `per`, the
    blocks executed at its first address)."""
    by_fn, calls = collections.Counter(), collections.Counter()
    total = blocks = rep_rounds = unknown = 0
    for pc, n in counts.items():
        img = next((im for im in images if im.holds(pc)), None)
        k = img.block(pc) if img else None
        blocks += n
        if k is None:
            unknown += n
            continue
        fn = img.function(pc)
        by_fn[fn] += k * n
        total += k * n
        if pc in img.rep:
            rep_rounds += n
        if img.starts.get(pc) == fn:
            calls[fn] += n
    return {"by_fn": by_fn, "calls": calls, "total": total, "blocks": blocks,
            "rep_rounds": rep_rounds, "unknown": unknown, "messages": calls.get(per, 0)}


def wait_for(path, text, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if os.path.exists(path) and text in open(path, errors="replace").read():
            return
        time.sleep(0.1)
    raise RuntimeError(f"node 2 did not print {text!r} within {timeout} s")


def run_pair(kernel, window, settle, scratch):
    """The ping-pong, node 2's blocks logged for `window` seconds after its
    program has run `settle` seconds; returns the log's path."""
    from test_portals_kernel import bridged_namespace
    from test_portals_kernel_wire import Procs
    log, mon, con = (os.path.join(scratch, n) for n in ("exec.log", "monitor", "console"))
    job = ["-e", "TERN_SIZE=2", "-e", "TERN_MAP=1,2"]

    def node(ps, ns, tap, nid, rank, extra=()):
        return ps.start(["ip", "netns", "exec", ns, sys.executable, RUN_NODE, "--tcg",
                         "--mem", "160M", "--timeout", "300", "--nic", "virtio", "--tap", tap,
                         "--nid", str(nid), "--kmem", "4M", "--msgtrace", "1", "--kernel", kernel,
                         *job, "-e", f"TERN_RANK={rank}", *extra, NXPING, str(ROUNDS)])
    with bridged_namespace(2) as (ns, taps):
        ps = Procs()
        try:
            pong = node(ps, ns, taps[1], 2, 1, ["--console", con, "--monitor", mon,
                                                "--exec-log", log])
            ping = node(ps, ns, taps[0], 1, 0)
            wait_for(con, "tern: starting", 120)
            time.sleep(settle)
            for p, who in ((pong, "node 2"), (ping, "node 1")):
                if p.poll() is not None:
                    raise RuntimeError(f"{who} ended before the window ({p.returncode}): "
                                       f"{p.stdout.read()[-2000:]}{p.stderr.read()[-2000:]}")
            monitor(mon, "log exec,nochain")
            time.sleep(window)
            monitor(mon, "log nochain")
        finally:
            ps.close()
    return log


def table(prof, top):
    m = prof["messages"]
    lines = [f"messages in the window: {m} (csend calls of the answering rank)",
             f"instructions a message:  {prof['total'] / m:.0f}",
             f"blocks a message:        {prof['blocks'] / m:.0f}, of them rounds of rep-prefixed "
             f"instructions {prof['rep_rounds'] / m:.0f}"]
    if prof["unknown"]:
        lines.append(f"blocks at no known instruction: {prof['unknown'] / m:.1f} a message")
    lines.append(f"{'function':44} {'instructions':>12} {'share':>6} {'calls':>6}")
    for fn, n in prof["by_fn"].most_common(top):
        lines.append(f"{fn:44} {n / m:12.1f} {100 * n / prof['total']:5.1f}% "
                     f"{prof['calls'].get(fn, 0) / m:6.2f}")
    return "\n".join(lines)


def write_csv(path, prof, kernel):
    m = prof["messages"]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["kernel", "what", "per_message", "share", "calls_per_message"])
        w.writerow([kernel, "total instructions", f"{prof['total'] / m:.1f}", "1", ""])
        w.writerow([kernel, "blocks", f"{prof['blocks'] / m:.1f}", "", ""])
        w.writerow([kernel, "rep rounds", f"{prof['rep_rounds'] / m:.1f}", "", ""])
        for fn, n in prof["by_fn"].most_common():
            w.writerow([kernel, fn, f"{n / m:.1f}", f"{n / prof['total']:.4f}",
                        f"{prof['calls'].get(fn, 0) / m:.2f}"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--window", type=float, default=0.5,
                    help="seconds of node 2's blocks logged (default 0.5: some 400 messages)")
    ap.add_argument("--settle", type=float, default=1.5,
                    help="seconds after node 2's program starts before the window (default 1.5)")
    ap.add_argument("--top", type=int, default=40, help="functions printed (default 40)")
    ap.add_argument("--kernel", default=KERNEL, help="the nodes boot this tern.elf")
    ap.add_argument("--out", help="CSV (default bench/results/<date>/insnprof.csv)")
    ap.add_argument("--keep-log", metavar="FILE", help="keep QEMU's exec log here")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("insnprof: needs root (network namespace, taps)")
    for f in (a.kernel, NXPING, NXPING_SYMS):
        if not os.path.exists(f):
            sys.exit(f"insnprof: {f} is missing (make all)")
    images = [Image(a.kernel), Image(NXPING_SYMS)]
    scratch = tempfile.mkdtemp(prefix="insnprof-")
    try:
        log = run_pair(a.kernel, a.window, a.settle, scratch)
        if a.keep_log:
            shutil.copy(log, a.keep_log)
        counts = count_blocks(log)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if not counts:
        sys.exit("insnprof: QEMU logged no executed block (its exec log's form changed?)")
    prof = profile(counts, images)
    if prof["messages"] < 10:
        sys.exit(f"insnprof: only {prof['messages']} messages in the window: the ping-pong "
                 "had not started or had ended (--settle, --window)")
    print(f"# {os.path.relpath(a.kernel, ROOT)}: NX 0-byte ping-pong, node 2's blocks for "
          f"{a.window} s")
    print(table(prof, a.top))
    out = a.out or os.path.join(ROOT, "bench", "results", datetime.date.today().isoformat(),
                                "insnprof.csv")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    write_csv(out, prof, os.path.relpath(a.kernel, ROOT))
    print(f"written to {out}")


if __name__ == "__main__":
    main()
