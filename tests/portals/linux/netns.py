"""Two network namespaces joined by a veth pair, for the Linux-host Portals
tests and bench.  Node 1 lives in namespace a (interface va, MAC
02:00:00:00:00:01), node 2 in namespace b (vb, 02:00:00:00:00:02), by the
host's nid <-> MAC rule.  Everything is torn down in close(), which the
callers run in finally/fixture teardown: processes are killed first, then
the namespaces (deleting a namespace deletes its veth end)."""
import itertools
import os
import subprocess
import time

_seq = itertools.count()


def sh(*args, check=True):
    return subprocess.run(list(args), check=check, capture_output=True,
                          text=True, timeout=30)


class Pair:
    def __init__(self, mtu=9000, middle=False):
        """middle=True: a third namespace m sits between a and b (va-ma,
        mb-vb) for the userspace impairer (impair.c)."""
        n = next(_seq)
        self.ns = {1: f"tern-pl-{os.getpid()}-{n}a",
                   2: f"tern-pl-{os.getpid()}-{n}b"}
        if middle:
            self.ns[0] = f"tern-pl-{os.getpid()}-{n}m"
        self.dev = {1: "va", 2: "vb"}
        self.procs = []
        self.base_env = {}
        try:
            for ns in self.ns.values():
                sh("ip", "netns", "add", ns)
            if middle:
                for nid, d in ((1, "ma"), (2, "mb")):
                    sh("ip", "link", "add", self.dev[nid], "netns",
                       self.ns[nid], "type", "veth", "peer", "name", d,
                       "netns", self.ns[0])
                    sh("ip", "-n", self.ns[0], "link", "set", "dev", d, "mtu",
                       str(mtu), "up")
            else:
                sh("ip", "link", "add", "va", "netns", self.ns[1], "type",
                   "veth", "peer", "name", "vb", "netns", self.ns[2])
            for nid in (1, 2):
                sh("ip", "-n", self.ns[nid], "link", "set", self.dev[nid],
                   "address", f"02:00:00:00:00:{nid:02x}", "mtu", str(mtu),
                   "up")
        except BaseException:
            self.close()
            raise

    def netem(self, spec):
        if "corrupt" in spec.split():
            self._damaging_link()
        for nid in (1, 2):
            sh("ip", "netns", "exec", self.ns[nid], "tc", "qdisc", "add",
               "dev", self.dev[nid], "root", "netem", *spec.split())

    def impair(self, exe, loss, dup, reorder, corrupt, delay_us, seed=1):
        """Start the userspace lossy forwarder in the middle namespace."""
        if int(corrupt):
            self._damaging_link()
        p = subprocess.Popen(
            ["ip", "netns", "exec", self.ns[0], exe, "ma", "mb", str(loss),
             str(dup), str(reorder), str(corrupt), str(delay_us), str(seed)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.procs.append(p)
        assert p.stdout.readline().startswith("IMPAIR READY")
        return p

    def _damaging_link(self):
        """This link delivers frames it damaged, which an Ethernet NIC's FCS
        check would have dropped: the processes checksum payloads too."""
        self.base_env["TERN_PAYLOAD_CRC"] = "1"

    def env(self, nid, pid, extra=None):
        e = dict(os.environ, TERN_IFACE=self.dev[nid], TERN_PID=str(pid), **self.base_env)
        e.update(extra or {})
        return e

    def spawn(self, nid, pid, argv, extra_env=None, prefix=()):
        p = subprocess.Popen(
            ["ip", "netns", "exec", self.ns[nid], *prefix, *argv],
            env=self.env(nid, pid, extra_env), stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            bufsize=1)
        self.procs.append(p)
        return p

    def run(self, nid, pid, argv, timeout, extra_env=None, prefix=()):
        p = self.spawn(nid, pid, argv, extra_env, prefix)
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            raise AssertionError(f"{argv} timed out:\n{out}\n{err}")
        return p.returncode, out, err

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            try:
                p.communicate(timeout=10)
            except (subprocess.TimeoutExpired, ValueError, OSError):
                pass
        for ns in self.ns.values():
            sh("ip", "netns", "del", ns, check=False)
        # Deleting a namespace is asynchronous for its devices; wait a bit
        # so the caller can verify nothing is left.
        for _ in range(50):
            left = sh("ip", "netns", "list").stdout
            if not any(ns in left for ns in self.ns.values()):
                break
            time.sleep(0.1)


def read_until(proc, prefix, timeout):
    """Next stdout line of proc starting with prefix (ERROR lines fail)."""
    end = time.monotonic() + timeout
    import select
    while time.monotonic() < end:
        r, _, _ = select.select([proc.stdout], [], [], 0.2)
        if not r:
            if proc.poll() is not None:
                break
            continue
        line = proc.stdout.readline()
        if not line:
            break
        if line.startswith("ERROR"):
            raise AssertionError(line + proc.stderr.read()
                                 if proc.poll() is not None else line)
        if line.startswith(prefix):
            return line.strip()
    raise AssertionError(f"no {prefix!r} line from {proc.args}")


def parse_kv(line):
    def num(v):
        return float(v) if "." in v else int(v)
    return {k: num(v) for k, v in
            (w.split("=", 1) for w in line.split()[1:] if "=" in w)}
