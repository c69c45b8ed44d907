"""Helpers for tests that bring up virtual clusters with qemu/cluster."""
import os
import subprocess

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


def leftovers(name):
    """What of cluster `name` still exists: its namespace, processes, run dir."""
    ns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    procs = subprocess.run(["pgrep", "-f", f"tern-clusters/{name}/"], capture_output=True,
                           text=True).stdout.split()
    return {"netns": f"tern-{name}" in ns.split(), "processes": procs,
            "run_dir": os.path.exists(f"/tmp/tern-clusters/{name}")}
