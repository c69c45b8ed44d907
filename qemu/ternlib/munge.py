"""munged for one cluster (docs/security.md): the credential service that
proves to the allocator who runs yod, tern-svc or fyod.  Each cluster has its
own key (made at `up`, readable by root only) and its own socket in the
cluster's run directory, which `qemu/cluster exec` names in
TERN_MUNGE_SOCKET; every user of the machine may ask it for a credential.
A real cluster runs the distribution's munged (one key on every service
node) and leaves TERN_MUNGE_SOCKET unset."""
import os
import subprocess
import time


def paths(run_dir):
    d = os.path.join(run_dir, "munge")
    return {"dir": d, "key": os.path.join(d, "munge.key"),
            "socket": os.path.join(d, "munge.socket"), "log": os.path.join(d, "munged.log"),
            "pid": os.path.join(d, "munged.pid"), "seed": os.path.join(d, "munged.seed")}


def start(run_dir, wrap=lambda *cmd: list(cmd), private=False):
    """Makes the key and starts munged (in the foreground of its own
    session); returns its pid once its socket is there.  wrap: how to run
    a command (in the cluster's namespace).  private: the socket may lie
    where only root reaches it (munged refuses that unless forced)."""
    p = paths(run_dir)
    os.makedirs(p["dir"], mode=0o755, exist_ok=True)
    os.chmod(p["dir"], 0o755)           # the socket is for every user
    subprocess.run(["mungekey", "--create", "--keyfile", p["key"]], check=True,
                   capture_output=True)
    os.chmod(p["key"], 0o600)
    out = open(p["log"] + ".out", "w")
    proc = subprocess.Popen(wrap("munged", "--foreground", "--key-file", p["key"],
                                 "--socket", p["socket"], "--pid-file", p["pid"],
                                 "--log-file", p["log"], "--seed-file", p["seed"],
                                 *(["--force"] if private else [])),
                            stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 10
    while not os.path.exists(p["socket"]) and time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    if not os.path.exists(p["socket"]):
        proc.kill()
        proc.wait()
        raise RuntimeError("munged did not start: " + open(p["log"] + ".out").read() +
                           (open(p["log"]).read() if os.path.exists(p["log"]) else ""))
    return proc.pid
