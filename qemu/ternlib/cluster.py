"""The virtual cluster: a network namespace holding a bridge (the fabric),
the service node's interface, one tap per node, dnsmasq (DHCP + TFTP), and
one QEMU per compute node.  Everything a cluster owns is recorded in its run
directory so `down`, a failed `up`, or the next `up` after a crash removes it
all.  Nodes run Tern, or (os "linux", issue 8) the Linux comparison node of
`make linux-node` on the same virtual hardware; Linux nodes can mount a
service-node directory by NFS (`nfs=`: qemu/nfs-serve, NFS-Ganesha)."""
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

from . import accel, munge
from .fabric import fabric_mtu, node_mtu_option, set_mtu, virtio_mtu_arg

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUN_BASE = os.environ.get("TERN_RUN_BASE", "/tmp/tern-clusters")
# `down` removes the run directory; with TERN_KEEP_LOGS=DIR set, the
# cluster's logs (allocd, consoles, QEMU's own) are first copied to DIR/NAME,
# for a failure seen only in a long run (tests/README.md).
KEEP_LOGS = os.environ.get("TERN_KEEP_LOGS")
SERVICE_IP = "10.77.0.1"
SERVICE_IFACE = "svc0"
# The service node's IPv6 prefix on a PXE cluster's fabric, advertised so that
# iPXE does not wait for a router (boot/mkdnsmasq --ra-prefix).
RA_PREFIX = "fd74:6572:6e::"
HTTP_PORT = 8080                   # the boot images' HTTP server (_httpd), in the cluster's netns
BRIDGE = "br0"
# What a node prints on its serial console once it is up, by node OS.
# A Tern node is ready once the allocator has registered it.
READY = {"tern": "registered with the allocator", "linux": "linux node ready"}
LINUX_NODE = os.path.join(ROOT, "build", "linux-node")
# A Linux node's root (Debian kernel + MPICH initramfs) does not fit in Tern's 64M.
LINUX_DEFAULT_MEM = "256M"
# The NFS server of `up --nfs` (qemu/nfs-serve): NFSv3 over TCP at fixed
# ports, so a node mounts without asking rpcbind, and without NLM (nolock).
NFS_PORT = 2049
NFS_MOUNT_PORT = 20048
NFS_MOUNT_OPTS = (f"vers=3,proto=tcp,port={NFS_PORT},mountport={NFS_MOUNT_PORT},"
                  f"mountproto=tcp,nolock,addr={SERVICE_IP}")


def node_mac(nid):
    """The addressing rule shared with Portals: MAC 02:00:00:NN:NN:NN, nid in the low 24 bits."""
    return "02:00:00:%02x:%02x:%02x" % ((nid >> 16) & 0xFF, (nid >> 8) & 0xFF, nid & 0xFF)


def node_ip(nid):
    """The address dnsmasq gives node nid (boot/mkdnsmasq: the 100th host + nid)."""
    return "10.77.0.%d" % (100 + nid)


def sh(*cmd, check=True):
    return subprocess.run(cmd, check=check, capture_output=True, text=True)


class Cluster:
    def __init__(self, name="default"):
        if not name.replace("-", "").replace("_", "").isalnum() or len(name) > 20:
            raise SystemExit(f"cluster name '{name}': letters, digits, - and _ only, 20 at most")
        self.name = name
        self.dir = os.path.join(RUN_BASE, name)
        self.netns = f"tern-{name}"
        self.state_path = os.path.join(self.dir, "state.json")

    # --- state -----------------------------------------------------------
    def load(self):
        try:
            with open(self.state_path) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

    def save(self, state):
        tmp = self.state_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(state, f, indent=1)
        os.replace(tmp, self.state_path)

    def netns_exists(self):
        return self.netns in sh("ip", "netns", "list", check=False).stdout.split()

    def in_ns(self, *cmd):
        return ["ip", "netns", "exec", self.netns, *cmd]

    # --- up ----------------------------------------------------------------
    def up(self, n, mem=None, nic="virtio", boot="pxe", mode=None, timeout=None, log=print,
           node_os="tern", nfs=None, smp=1, kmem=None, cpu=None, kernel_options=()):
        """cpu: TCG nodes' CPU model (accel.qemu_accel_args).
        nfs: a service-node directory to export by NFS; every (Linux) node
        mounts it at the same absolute path before it says it is ready.
        smp: CPUs per node.
        kmem: a Tern node's kernel heap for Portals (kernel option kmem=).
        kernel_options: more KEY=VALUE words for a Tern node's kernel
        (docs/kernel.md), e.g. payload_crc=1."""
        if node_os not in READY:
            raise SystemExit(f"cluster: unknown node OS '{node_os}'")
        accel.tcg_cpu_model(mode or accel.default_accel(), cpu)   # refused before anything starts
        if node_os == "linux":
            self._check_linux_node()
        if kmem and (node_os != "tern" or not kmem[:-1].isdigit() or kmem[-1] not in "KMG"):
            raise SystemExit(f"cluster: --kmem {kmem}: a size like 8M, for Tern nodes")
        for word in kernel_options:
            if node_os != "tern" or not re.fullmatch(r"[a-z_]+=[A-Za-z0-9_.]+", word):
                raise SystemExit(f"cluster: --kernel-option {word}: a KEY=VALUE word for "
                                 "Tern nodes (docs/kernel.md)")
        if nfs:
            nfs = os.path.realpath(nfs)
            if node_os != "linux":
                raise SystemExit("cluster: --nfs is for --os linux (Tern nodes use fyod)")
            if not os.path.isdir(nfs) or not all(c.isalnum() or c in "/._-+" for c in nfs):
                raise SystemExit(f"cluster: --nfs {nfs}: not a directory, or a path with "
                                 "characters a kernel command line cannot carry")
        mem = mem or (LINUX_DEFAULT_MEM if node_os == "linux" else "64M")
        if self.load() or self.netns_exists() or os.path.isdir(self.dir):
            log(f"cluster '{self.name}': cleaning up a previous run")
            self.down(log=lambda *_: None)
        os.makedirs(self.dir)
        mode = mode or accel.default_accel()
        state = {"name": self.name, "netns": self.netns, "nodes": [], "pids": [],
                 "mode": mode, "boot": boot, "nic": nic, "mem": mem, "started": time.time(),
                 "os": node_os, "nfs": nfs, "smp": smp, "kmem": kmem, "mtu": fabric_mtu(nic, boot),
                 "cpu": cpu}
        self.save(state)
        options = self._node_options(nfs, kmem)
        if node_os == "tern":
            options = " ".join(w for w in [options, node_mtu_option(nic, state["mtu"]),
                                           *kernel_options] if w)
        try:
            self._fabric(state["mtu"])
            if nfs:
                state["pids"].append(self._nfs(nfs))
                self.save(state)
            nodes = [{"nid": i, "mac": node_mac(i), "tap": f"tap{i}",
                      "log": os.path.join(self.dir, f"node{i}.log")} for i in range(1, n + 1)]
            state["nodes"] = nodes
            self.save(state)
            if boot == "pxe":
                state["pids"].append(self._dnsmasq(nodes, node_os, options))
                self.save(state)
                state["pids"].append(self._httpd())
                self.save(state)
            if node_os == "tern":
                state["pids"].append(munge.start(self.dir, self.in_ns))
                self.save(state)
                state["pids"].append(self._allocd())
                self.save(state)
            for node in nodes:
                sh(*self.in_ns("ip", "tuntap", "add", node["tap"], "mode", "tap"))
                set_mtu(self.netns, node["tap"], state["mtu"])
                sh(*self.in_ns("ip", "link", "set", node["tap"], "master", BRIDGE, "up"))
                node["pid"] = self._qemu(node, mem, nic, boot, mode, node_os, options, smp,
                                         state["mtu"], cpu)
                state["pids"].append(node["pid"])
                self.save(state)
            if node_os == "tern":
                timeout = timeout or (60 + 3 * n) * (1 if mode == "tcg" else 4)
            else:  # a stock kernel boots in 5-20 s under TCG, and the nodes share the cores
                timeout = timeout or (90 + 20 * n) * (1 if mode == "tcg" else 4)
            self._wait_ready(nodes, timeout, log, READY[node_os],
                             "linux node FAILED" if node_os == "linux" else None)
        except BaseException:
            self.down(log=lambda *_: None)
            raise
        log(f"cluster '{self.name}': {n} nodes ready ({boot} boot, {nic}, MTU {state['mtu']}, "
            f"{mem}, {mode}"
            + (f", {smp} CPUs each" if smp > 1 else "")
            + (", linux" if node_os == "linux" else "")
            + (f", NFS {SERVICE_IP}:{nfs})" if nfs else ")"))

    @staticmethod
    def _check_linux_node():
        for f in ["vmlinuz", "initramfs.cpio.gz"]:
            if not os.path.exists(os.path.join(LINUX_NODE, f)):
                raise SystemExit(f"cluster: build/linux-node/{f} is missing (make linux-node)")

    def _fabric(self, mtu):
        """The bridge and the service node's veth, all at the fabric's MTU
        (qemu/ternlib/fabric.py): the service node's Portals (allocd, yod,
        fyod) read it from svc0 and send frames that large."""
        sh("ip", "netns", "add", self.netns)
        sh(*self.in_ns("ip", "link", "set", "lo", "up"))
        sh(*self.in_ns("ip", "link", "add", BRIDGE, "type", "bridge"))
        set_mtu(self.netns, BRIDGE, mtu)
        sh(*self.in_ns("ip", "link", "set", BRIDGE, "up"))
        sh(*self.in_ns("ip", "link", "add", SERVICE_IFACE, "type", "veth", "peer", "name", "svc0p"))
        set_mtu(self.netns, SERVICE_IFACE, mtu)
        set_mtu(self.netns, "svc0p", mtu)
        sh(*self.in_ns("ip", "link", "set", SERVICE_IFACE, "address", node_mac(0)))
        sh(*self.in_ns("ip", "link", "set", "svc0p", "master", BRIDGE, "up"))
        sh(*self.in_ns("ip", "addr", "add", f"{SERVICE_IP}/24", "dev", SERVICE_IFACE))
        sh(*self.in_ns("ip", "link", "set", SERVICE_IFACE, "up"))

    @staticmethod
    def _node_options(nfs, kmem=None):
        """Kernel options every node gets besides nid (Linux: /etc/rc reads them)."""
        if kmem:
            return f"kmem={kmem}"
        return f"nfs={SERVICE_IP}:{nfs} nfsopts={NFS_MOUNT_OPTS}" if nfs else ""

    def _nfs(self, export):
        """NFS-Ganesha exporting `export` read-write to the cluster's nodes (root
        not squashed: ranks run as root on Linux nodes), NFSv3 over TCP only,
        on SERVICE_IP at fixed ports (qemu/nfs-serve).  Returns when it serves."""
        plugins = sorted(glob.glob("/usr/lib/*/ganesha/libfsalvfs.so") +
                         glob.glob("/usr/lib*/ganesha/libfsalvfs.so"))
        if not shutil.which("ganesha.nfsd") or not plugins or not shutil.which("rpcbind"):
            raise SystemExit("cluster: --nfs needs nfs-ganesha, nfs-ganesha-vfs and rpcbind "
                             "(boot/linux-node/install-deps)")
        conf = os.path.join(self.dir, "ganesha.conf")
        log_path = os.path.join(self.dir, "nfs.log")
        with open(conf, "w") as f:
            f.write(f"""# Written by qemu/ternlib/cluster.py for cluster '{self.name}'.
NFS_CORE_PARAM {{
    Protocols = 3;
    Bind_addr = {SERVICE_IP};
    NFS_Port = {NFS_PORT};
    MNT_Port = {NFS_MOUNT_PORT};
    Enable_NLM = false;
    Enable_RQUOTA = false;
    Enable_UDP = false;
    Plugins_Dir = {os.path.dirname(plugins[0])};
}}
NFSv4 {{
    Graceless = true;
    RecoveryRoot = {os.path.join(self.dir, "nfs-recovery")};
}}
NFS_KRB5 {{
    Active_krb5 = false;
}}
EXPORT {{
    Export_Id = 1;
    Path = {export};
    Pseudo = {export};
    Protocols = 3;
    Transports = TCP;
    Access_Type = RW;
    Squash = No_Root_Squash;
    SecType = sys;
    FSAL {{
        Name = VFS;
    }}
    CLIENT {{
        Clients = {SERVICE_IP.rsplit(".", 1)[0]}.0/24;
        Protocols = 3;
        Access_Type = RW;
    }}
}}
LOG {{
    Default_Log_Level = EVENT;
}}
""")
        out = open(os.path.join(self.dir, "nfs.out"), "w")
        p = subprocess.Popen(self.in_ns(os.path.join(ROOT, "qemu", "nfs-serve"), conf, log_path),
                             stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                             start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                text = open(log_path).read()
            except OSError:
                text = ""
            if "NFS SERVER INITIALIZED" in text:
                return p.pid
            if p.poll() is not None or "FATAL" in text:
                break
            time.sleep(0.2)
        kill_group(p.pid, signal.SIGKILL)
        p.wait()
        tail = ""
        for path in (os.path.join(self.dir, "nfs.out"), log_path):
            if os.path.exists(path):
                tail += "".join(open(path).readlines()[-10:])
        raise RuntimeError("the NFS server did not start:\n" + tail)

    def _dnsmasq(self, nodes, node_os="tern", cmdline=""):
        tftp = os.path.join(self.dir, "tftp")
        node_file = os.path.join(self.dir, "nodes.txt")
        with open(node_file, "w") as f:
            for node in nodes:
                f.write(f"{node['nid']} {node['mac']}\n")
        # A host with IPv6 turned off gets no router: its nodes boot 13 s later.
        v6 = sh(*self.in_ns("ip", "-6", "addr", "add", f"{RA_PREFIX}1/64", "dev", SERVICE_IFACE,
                            "nodad"), check=False).returncode == 0
        sh(os.path.join(ROOT, "boot", "mkdnsmasq"), "--iface", SERVICE_IFACE,
           "--server-ip", SERVICE_IP, "--tftp-root", tftp, "--run-dir", self.dir,
           "--nodes", node_file, "--http", str(HTTP_PORT),
           *(["--ra-prefix", RA_PREFIX] if v6 else []),
           *(["--os", "linux"] if node_os == "linux" else []),
           *(["--cmdline", cmdline] if cmdline else []))
        os.chmod(self.dir, 0o755)
        out = open(os.path.join(self.dir, "dnsmasq.out"), "w")
        p = subprocess.Popen(self.in_ns("dnsmasq", "--conf-file=" + os.path.join(self.dir,
                                                                                  "dnsmasq.conf"),
                                        "--user=root"),
                             stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        time.sleep(0.2)
        if p.poll() is not None:
            raise RuntimeError("dnsmasq did not start: " +
                               open(os.path.join(self.dir, "dnsmasq.out")).read())
        return p.pid

    def _httpd(self):
        """The boot images by HTTP (boot/mkdnsmasq --http): iPXE fetches them
        from here; TFTP brings it only the scripts.  Read-only, the TFTP root
        alone, on the cluster's own network."""
        tftp = os.path.join(self.dir, "tftp")
        out = open(os.path.join(self.dir, "httpd.out"), "w")
        p = subprocess.Popen(self.in_ns(sys.executable, "-u", "-m", "http.server", "--bind",
                                        SERVICE_IP, "--directory", tftp, str(HTTP_PORT)),
                             stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 10
        while "Serving HTTP" not in open(os.path.join(self.dir, "httpd.out")).read():
            if p.poll() is not None or time.monotonic() > deadline:
                kill_group(p.pid, signal.SIGKILL)
                p.wait()
                raise RuntimeError("the boot images' HTTP server did not start: " +
                                   open(os.path.join(self.dir, "httpd.out")).read())
            time.sleep(0.1)
        return p.pid

    def munge_socket(self):
        """The socket of the cluster's munged (TERN_MUNGE_SOCKET)."""
        return munge.paths(self.dir)["socket"]

    def _allocd(self):
        """The allocator, on the service interface (nid 0), checking
        credentials with the cluster's munged."""
        out = open(os.path.join(self.dir, "allocd.log"), "w")
        env = dict(os.environ, TERN_IFACE=SERVICE_IFACE, TERN_NID="0",
                   TERN_MUNGE_SOCKET=self.munge_socket())
        p = subprocess.Popen(self.in_ns(os.path.join(ROOT, "build", "bin", "allocd"), "--db",
                                        os.path.join(self.dir, "nodes.db")),
                             stdout=out, stderr=subprocess.STDOUT, env=env,
                             start_new_session=True)
        time.sleep(0.3)
        if p.poll() is not None:
            raise RuntimeError("allocd did not start: " +
                               open(os.path.join(self.dir, "allocd.log")).read())
        return p.pid

    def _qemu(self, node, mem, nic, boot, mode, node_os="tern", cmdline="", smp=1, mtu=1500,
              cpu=None):
        device = {"virtio": "virtio-net-pci", "e1000": "e1000"}[nic]
        if nic == "virtio":
            device += virtio_mtu_arg(mtu)
        cmd = ["qemu-system-x86_64", "-nodefaults", "-display", "none",
               "-m", mem, *accel.qemu_accel_args(mode, cpu), *accel.smp_args(smp),
               "-netdev", f"tap,id=n0,ifname={node['tap']},script=no,downscript=no",
               "-device", f"{device},netdev=n0,mac={node['mac']}",
               "-serial", f"file:{node['log']}",
               # for looking into a running node: `info registers`, `info jit`...
               "-monitor", f"unix:{node['log']}.monitor,server=on,wait=off"]
        if boot == "pxe":
            # A network boot that fails (DHCP unanswered while many nodes
            # boot at once) is tried again by the BIOS after 2 s.
            cmd += ["-boot", "n,reboot-timeout=2000"]
        else:
            cmd += ["-no-reboot"]
        if boot != "pxe" and node_os == "linux":
            # The uncompressed ELF kernel boots by its PVH entry (no 9 s of XZ under TCG).
            kernel = os.path.join(LINUX_NODE, "vmlinux")
            if not os.path.exists(kernel):
                kernel = os.path.join(LINUX_NODE, "vmlinuz")
            cmd += ["-kernel", kernel, "-initrd", os.path.join(LINUX_NODE, "initramfs.cpio.gz"),
                    "-append", f"console=ttyS0 quiet nid={node['nid']} "
                               f"ip4={node_ip(node['nid'])}/24 {cmdline}".rstrip()]
        elif boot != "pxe":
            cmd += ["-kernel", os.path.join(ROOT, "build", "tern.elf"),
                    "-append", f"nid={node['nid']} {cmdline}".rstrip()]
        out = open(node["log"] + ".qemu", "w")
        p = subprocess.Popen(self.in_ns(*cmd), stdin=subprocess.DEVNULL, stdout=out,
                             stderr=subprocess.STDOUT, start_new_session=True)
        return p.pid

    def _wait_ready(self, nodes, timeout, log, marker="node ready", failed=None):
        deadline = time.monotonic() + timeout
        pending = list(nodes)
        gave_up = False
        while pending and time.monotonic() < deadline and not gave_up:
            for node in list(pending):
                text = self.console(node["nid"])
                if marker in text:
                    pending.remove(node)
                elif failed and failed in text:  # the node said it will not come up
                    gave_up = True
                elif self.vm_failure(node["nid"]):  # KVM paused it: it never will
                    gave_up = True
                elif not pid_alive(node["pid"]):
                    break
            time.sleep(0.2)
        if pending:
            waited = timeout if not gave_up else timeout - (deadline - time.monotonic())
            msg = [f"cluster '{self.name}': {len(pending)} node(s) not ready after {waited:.0f} s:"]
            for node in pending:
                tail = self.console(node["nid"]).splitlines()[-8:]
                msg.append(f"  nid {node['nid']} ({node['mac']}):")
                msg += ["    " + line for line in tail] or ["    (no console output)"]
                stopped = self.vm_failure(node["nid"])
                if stopped:
                    msg.append(f"    QEMU stopped the VM: {stopped}")
            raise SystemExit("\n".join(msg))

    # --- queries -----------------------------------------------------------
    def console(self, nid):
        path = os.path.join(self.dir, f"node{nid}.log")
        try:
            with open(path, "rb") as f:
                return f.read().decode(errors="replace").replace("\r\n", "\n")
        except OSError:
            return ""

    def vm_failure(self, nid):
        """QEMU's line saying KVM stopped node nid's guest, or None."""
        try:
            with open(os.path.join(self.dir, f"node{nid}.log.qemu"), errors="replace") as f:
                return accel.vm_failure(f.read())
        except OSError:
            return None

    def status(self):
        state = self.load()
        if not state:
            return None
        rows = []
        for node in state["nodes"]:
            text = self.console(node["nid"])
            if not pid_alive(node.get("pid", 0)):
                st = "down"
            elif self.vm_failure(node["nid"]):
                st = "stopped"   # KVM could not run it; QEMU keeps it paused
            elif READY[state.get("os", "tern")] in text:
                st = "ready"
            else:
                st = "booting"
            rows.append((node["nid"], node["mac"], st))
        return state, rows

    def mpiexec_cmd(self, args):
        """MPICH's mpiexec (hydra) for a Linux cluster: one slot per node, ranks
        placed round robin, proxies started over ssh (boot/linux-node/ssh) and
        calling back to the service node's address on svc0."""
        state = self.load() or {}
        hosts = ",".join(node_ip(node["nid"]) for node in state.get("nodes", []))
        return ["mpiexec", "-launcher", "ssh",
                "-launcher-exec", os.path.join(ROOT, "boot", "linux-node", "ssh"),
                "-iface", SERVICE_IFACE, "-hosts", hosts, *args]

    # --- down --------------------------------------------------------------
    def down(self, log=print):
        state = self.load() or {}
        pids = list(state.get("pids", []))
        for pid in pids:
            kill_group(pid, signal.SIGTERM)
        deadline = time.monotonic() + 5
        while any(pid_alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        for pid in pids:
            kill_group(pid, signal.SIGKILL)
        if self.netns_exists():
            # Anything still running inside (a QEMU started by hand) goes too.
            for pid in sh("ip", "netns", "pids", self.netns, check=False).stdout.split():
                kill_group(int(pid), signal.SIGKILL, group=False)
            sh("ip", "netns", "delete", self.netns, check=False)
        if KEEP_LOGS:
            keep = os.path.join(KEEP_LOGS, self.name)
            os.makedirs(keep, exist_ok=True)
            for f in glob.glob(os.path.join(self.dir, "*.log*")):
                shutil.copy2(f, keep)
        shutil.rmtree(self.dir, ignore_errors=True)
        log(f"cluster '{self.name}': down")


def pid_alive(pid):
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie child of ours counts as gone
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def kill_group(pid, sig, group=True):
    try:
        if group:
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass

