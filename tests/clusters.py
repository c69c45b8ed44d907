"""Virtual clusters for the tests (qemu/cluster), the one place every
cluster test gets them from: a cluster brought up under a fresh name and
taken down with nothing left behind (also when the test fails), yod and the
other commands inside it.  A module shares one cluster between its tests
(a module-scoped fixture over `up`) where the tests leave it as they found
it; a test that breaks its cluster (kills a node, kills yod) brings up its
own with `start` or `up`."""
import contextlib
import os
import subprocess
import uuid

from nodes import ROOT

CLUSTER = os.path.join(ROOT, "qemu", "cluster")
NOTHING = {"netns": False, "processes": [], "run_dir": False}


def cluster(name, *args, check=True, timeout=600):
    # hydra (Linux clusters) ends a job that runs longer than MPIEXEC_TIMEOUT seconds.
    env = dict(os.environ, MPIEXEC_TIMEOUT=str(int(timeout * 0.8)))
    r = subprocess.run([CLUSTER, "--name", name, *args], capture_output=True, text=True,
                       timeout=timeout, env=env)
    if check:
        assert r.returncode == 0, r.stdout + r.stderr
    return r


def node_pid(name, nid):
    """The pid of node `nid`'s QEMU in cluster `name` (its log is on its command line)."""
    return int(subprocess.run(["pgrep", "-f", f"tern-clusters/{name}/node{nid}.log"],
                              capture_output=True, text=True).stdout.split()[0])


def leftovers(name):
    """What of cluster `name` still exists: its namespace, processes, run dir."""
    ns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    procs = subprocess.run(["pgrep", "-f", f"tern-clusters/{name}/"], capture_output=True,
                           text=True).stdout.split()
    return {"netns": f"tern-{name}" in ns.split(), "processes": procs,
            "run_dir": os.path.exists(f"/tmp/tern-clusters/{name}")}


def new_name(prefix):
    """A cluster name no other test (or helper) uses: prefix + 7 hex digits."""
    return prefix + uuid.uuid4().hex[:7]


def down(name):
    """Takes cluster `name` down (whatever state it is in) and checks that
    nothing of it is left."""
    subprocess.run([CLUSTER, "--name", name, "down"], capture_output=True)
    assert leftovers(name) == NOTHING


def start(prefix, *up_args):
    """Brings up a cluster (`qemu/cluster up UP_ARGS`) and returns its name;
    the caller takes it down.  If `up` fails, nothing of it is left."""
    name = new_name(prefix)
    try:
        cluster(name, "up", *up_args)
    except BaseException:
        down(name)
        raise
    return name


@contextlib.contextmanager
def named(prefix):
    """A fresh cluster name for a test that runs `up` itself; down (and
    checked for leftovers) at the end."""
    name = new_name(prefix)
    try:
        yield name
    finally:
        down(name)


@contextlib.contextmanager
def up(prefix, *up_args):
    """A cluster brought up with `qemu/cluster up UP_ARGS` for the length of
    the `with`; its name."""
    with named(prefix) as name:
        cluster(name, "up", *up_args)
        yield name


@contextlib.contextmanager
def stopped(*procs):
    """The processes (yod_bg's), for the length of the `with`; those still
    running at its end are killed and reaped, so a failing test leaves none
    behind.  Yields the one process, or the tuple."""
    try:
        yield procs[0] if len(procs) == 1 else procs
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()


def _yod_argv(name, args, pre, env):
    pre = [*(["env", *(f"{k}={v}" for k, v in env.items())] if env else []), *pre]
    return [CLUSTER, "--name", name, "exec", *pre, "yod", *args]


def yod(name, *args, timeout=120, input=None, pre=(), env=None, cwd="/tmp", text=True):
    """Runs `yod ARGS` in cluster `name` and waits: the CompletedProcess.
    env: variables yod passes on to the ranks; pre: a command yod runs under
    (e.g. setpriv); cwd: yod's working directory, which the job's relative
    paths start from (/tmp: any user may enter it)."""
    return subprocess.run(_yod_argv(name, args, pre, env), capture_output=True, text=text,
                          timeout=timeout, input=input, cwd=cwd)


def yod_bg(name, *args, pre=(), env=None, cwd="/tmp"):
    """`yod ARGS` in cluster `name`, not waited for: the Popen (text pipes)."""
    return subprocess.Popen(_yod_argv(name, args, pre, env), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=cwd)


def node_states(name):
    """{nid: state} as `yod -show` in cluster `name` lists them."""
    out = yod(name, "-show").stdout
    return {int(w[0]): w[2] for w in map(str.split, out.splitlines())
            if len(w) >= 4 and w[0].isdigit() and w[1].count(":") == 5}



def allocd_kill(name):
    """Kills cluster name's allocator (SIGKILL); returns what starts it again
    as it ran (allocd_start): its argv and its environment (interface, nid,
    the cluster's munged)."""
    import signal
    db = f"/tmp/tern-clusters/{name}/nodes.db"
    pid = int(subprocess.run(["pgrep", "-f", f"allocd --db {db}"], capture_output=True,
                             text=True).stdout.split()[0])
    argv = open(f"/proc/{pid}/cmdline").read().split("\0")[:-1]
    env = dict(e.split("=", 1) for e in open(f"/proc/{pid}/environ").read().split("\0") if e)
    os.kill(pid, signal.SIGKILL)
    return argv, env


def allocd_start(name, how):
    """Starts the allocator allocd_kill stopped, logging to its log: its
    Popen.  The caller stops it (the cluster's `down` does not know it)."""
    argv, env = how
    with open(f"/tmp/tern-clusters/{name}/allocd.log", "a") as log:
        return subprocess.Popen(["ip", "netns", "exec", f"tern-{name}", *argv], env=env,
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
