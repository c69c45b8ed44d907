"""What the stand-alone benchmark scripts (bench/barrier.py, gatherv.py,
posted.py) share: their command line and what they print around their
tables (the host's load, the commit), and a Tern cluster of their own for
the length of a `with`."""
import contextlib
import os
import subprocess
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLUSTER = os.path.join(ROOT, "qemu", "cluster")


def load():
    """The host's 1-minute load average."""
    return float(open("/proc/loadavg").read().split()[0])


def commit():
    return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip()


@contextlib.contextmanager
def own_cluster(prefix, nodes):
    """A Tern cluster of `nodes` nodes booted directly, taken down at the end
    also when the body fails; yields run(argv, timeout=900), which runs argv
    on its service node (`qemu/cluster exec`) and returns the CompletedProcess."""
    name = prefix + uuid.uuid4().hex[:6]
    r = subprocess.run([CLUSTER, "--name", name, "up", "-n", str(nodes), "--boot", "direct"],
                       capture_output=True, text=True, timeout=900)
    if r.returncode:
        subprocess.run([CLUSTER, "--name", name, "down"], capture_output=True, timeout=300)
        raise SystemExit(f"cluster did not come up: {r.stderr}")

    def run(argv, timeout=900):
        return subprocess.run([CLUSTER, "--name", name, "exec", *argv], capture_output=True,
                              text=True, timeout=timeout)
    try:
        yield run
    finally:
        subprocess.run([CLUSTER, "--name", name, "down"], capture_output=True, timeout=300)


def main(ap, host, tern, reps, iters, lists=()):
    """Runs a stand-alone bench: `where` (host or tern), --reps and --iters
    (0: reps[0] / iters[0] on the host, [1] on Tern nodes) beside the
    options the script put on `ap`; those named in `lists` are
    comma-separated integers.  Then host(a) or tern(a) between two lines
    giving the host's load (and the commit)."""
    from ternbench.unwind import sigterm_unwinds
    sigterm_unwinds()
    ap.add_argument("where", choices=("host", "tern"))
    ap.add_argument("--reps", type=int, default=0)
    ap.add_argument("--iters", type=int, default=0)
    a = ap.parse_args()
    for name in lists:
        setattr(a, name, [int(x) for x in getattr(a, name).split(",")])
    on_tern = a.where == "tern"
    a.reps = a.reps or reps[on_tern]
    a.iters = a.iters or iters[on_tern]
    print(f"{a.where}: load before {load():.1f}, commit {commit()}", flush=True)
    tern(a) if on_tern else host(a)
    print(f"load after {load():.1f}")
