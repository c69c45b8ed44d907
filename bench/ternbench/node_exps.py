"""Experiments on single nodes and bridges of their own (bench/run_all.py):
raw Portals between two kernel nodes, the fabric floor (9), memory and
noise (4, 7), boot (8)."""
import contextlib
import os
import signal
import subprocess

from ternlib import accel
from ternbench.runner import B, down, parse_r, up


def plbench_pair(run, ns, client_tap, server_tap, argv, mtu, timeout=900, mode="ptl-ping"):
    """`plbench-tern MODE ARGV` (ptl-ping or ptl-bw) on a kernel node (nid 1)
    against `ptl-pong` on another (nid 2), on two taps of namespace ns whose
    bridge carries frames of `mtu` bytes (the nodes are told it, as a
    cluster's are), both stopped on the way out; -> the client's stdout (the
    programs of bench/portals_kernel.py's tern_tern pair, which keeps
    1500-byte frames)."""
    from test_portals_kernel_wire import Procs, kv, read_line
    a = run.a
    prog = B("portals", "kernel", "plbench-tern")
    ps = Procs()
    try:
        srv = ps.node(ns, server_tap, 2, "virtio", ["ptl-pong"], timeout, a.accel, program=prog,
                      mtu=mtu)
        pid = kv(read_line(srv, "READY", 120, []))["pid"]
        c = ps.node(ns, client_tap, 1, "virtio", [mode, "2", str(pid), *map(str, argv)],
                    timeout, a.accel, program=prog, mtu=mtu)
        out, err = c.communicate(timeout=timeout + 20)
        if c.returncode:
            raise RuntimeError(f"plbench-tern {mode} {argv} failed:\n{out}\n{err}")
        return out
    finally:
        ps.close()


def raw_portals(run):
    """Experiments 1 and 2, raw Portals: plbench-tern ping-pong, then its
    stream (ptl-bw: the count and window of nxbench's and mpibench's stream,
    bench/benchargs.h), between two Tern kernel nodes."""
    from test_portals_kernel import bridged_namespace
    from ternlib.fabric import fabric_mtu
    a = run.a
    # The frame size of a cluster's fabric (qemu/cluster), as NX and MPI get.
    mtu = fabric_mtu("virtio", "direct")
    with bridged_namespace(2, mtu) as (ns, taps):
        out = plbench_pair(run, ns, taps[0], taps[1],
                           [a.iters, a.reps, ",".join(map(str, a.lat_sizes))], mtu)
        for (kind, size), v in parse_r(out).items():
            run.add("latency", "tern-portals", "oneway", size, "us", v)
        out = plbench_pair(run, ns, taps[0], taps[1],
                           [a.stream_bytes, a.reps, ",".join(map(str, a.stream_sizes))], mtu,
                           mode="ptl-bw")
        for (kind, size), v in parse_r(out).items():
            run.add("ring", "tern-portals", "stream_2nodes", size, "MBps", v)
    run.log("raw Portals done")


def _qemu_node(run, ns, tap, mac, mtu, append, log, exit_device=False):
    """One bare Tern node (no program) on a tap of the namespace's bridge."""
    from ternlib.fabric import virtio_mtu_arg
    a = run.a
    open(log, "w").close()
    return subprocess.Popen(
        ["ip", "netns", "exec", ns, "qemu-system-x86_64", "-nodefaults", "-display", "none",
         "-no-reboot", *accel.qemu_accel_args(a.accel, a.cpu), "-m", a.mem, "-kernel",
         B("tern.elf"), "-append", append, "-serial", f"file:{log}",
         *(["-device", "isa-debug-exit,iobase=0xf4,iosize=4"] if exit_device else []),
         "-netdev", f"tap,id=n0,ifname={tap},script=no,downscript=no",
         "-device", f"virtio-net-pci,netdev=n0,mac={mac}{virtio_mtu_arg(mtu)}"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True)


def _stop(q):
    if q.poll() is None:
        os.killpg(q.pid, signal.SIGTERM)
    try:
        q.wait(10)
    except subprocess.TimeoutExpired:
        os.killpg(q.pid, signal.SIGKILL)
        q.wait(5)


def _nettest_console(p, log, what):
    """Waits for a node booted with a nettest mode and exit=qemu to end;
    -> its console, "tern: " taken off (its R lines as floorping prints
    them); an error with the console unless it ended cleanly."""
    try:
        p.wait(600)
    except subprocess.TimeoutExpired:
        pass
    text = open(log).read()
    # isa-debug-exit: (code << 1) | 1, the kernel writes 0 at a clean end.
    if p.returncode != 1 or "program exited with status 0" not in text:
        raise RuntimeError(f"{what} (exit {p.returncode}):\n{text}")
    return "\n".join(line.split("tern: ", 1)[-1] for line in text.splitlines())


def _ping_node(run, ns, tap, mac, mtu, argv, log):
    """A Tern node booted with `nettest=ping -- ARGV` for one measurement;
    -> its result lines (R ...), as floorping prints them."""
    p = _qemu_node(run, ns, tap, mac, mtu,
                   " ".join(["nettest=ping", "exit=qemu", "--", *map(str, argv)]), log,
                   exit_device=True)
    try:
        return _nettest_console(p, log, f"nettest=ping {argv}")
    finally:
        _stop(p)


@contextlib.contextmanager
def _bridged_nodes(run, n, mac_byte, name):
    """A bridge for n bare nodes: yields (ns, taps, macs, logs, mtu, qs) at
    the cluster's frame size; every QEMU the caller adds to qs is stopped,
    and the logs removed, on the way out, before the namespace and its taps
    go."""
    from test_portals_kernel import bridged_namespace
    from ternlib.fabric import fabric_mtu
    mtu = fabric_mtu("virtio", "direct")
    macs = [f"02:00:00:00:{mac_byte:02x}:{i:02x}" for i in range(n)]
    logs = [os.path.join(run.a.out, f".{name}-{i}.log") for i in range(n)]
    with bridged_namespace(n, mtu) as (ns, taps):
        qs = []
        try:
            yield ns, taps, macs, logs, mtu, qs
        finally:
            for q in qs:
                _stop(q)
            for f in logs:
                if os.path.exists(f):
                    os.remove(f)


@contextlib.contextmanager
def echo_node(run):
    """A Tern node booted with nettest=echo on a bridge of its own, with a
    host port and a second tap on it.  Yields floorping(argv) -> stdout of
    bench/floor/floorping.c from a host process on the port, with
    floorping.node(argv) -> the same lines from a second Tern node booted
    with nettest=ping for this one measurement (kernel/net/nettest.c): the
    floor between two nodes, every hop a Tern message takes and no protocol.
    floorping.portals(argv) -> the stdout of `plbench-tern ptl-ping ARGV`
    on a third node against `ptl-pong` on a fourth, both booted for this
    one measurement: experiment 1's raw Portals pair on the same bridge.
    (Experiment 9's set-up, also 9b's.)  The nodes are stopped on the way
    out."""
    from test_portals_kernel import bridged_namespace
    from test_portals_kernel_wire import add_linux_port
    from test_netdev import wait_for_log
    from ternlib.fabric import fabric_mtu
    a = run.a
    mac = "02:00:00:00:00:09"
    log = os.path.join(a.out, ".floor-console.log")
    ping_log = os.path.join(a.out, ".floor-ping-console.log")
    # The cluster's frame size (qemu/ternlib/fabric.py), and 1500 beside it.
    mtu = fabric_mtu("virtio", "direct")
    with bridged_namespace(4, mtu) as (ns, taps):
        add_linux_port(ns, "flr0", 8, mtu)
        q = _qemu_node(run, ns, taps[0], mac, mtu, "nettest=echo", log)
        try:
            wait_for_log(log, r"nettest: echoing", 120, q)

            def floorping(argv):
                r = subprocess.run(["ip", "netns", "exec", ns, B("bench-host", "floorping"),
                                    "flr0", mac, *map(str, argv)], capture_output=True,
                                   text=True, timeout=600)
                if r.returncode:
                    raise RuntimeError(f"floorping {argv}: {r.stdout}{r.stderr}")
                return r.stdout

            def node(argv):
                return _ping_node(run, ns, taps[1], "02:00:00:00:00:0a", mtu, [mac, *argv],
                                  ping_log)
            floorping.mtu = mtu
            floorping.node = node
            floorping.portals = lambda argv: plbench_pair(run, ns, taps[2], taps[3], argv, mtu,
                                                          600)
            yield floorping
        finally:
            _stop(q)
            for f in (log, ping_log):
                if os.path.exists(f):
                    os.remove(f)


# Frames in flight around the ring: a node's receive buffers at 64 KiB frames (16).  Of
# 8, 12, 16, 20, 24, 32 and 64 on 4 nodes here, 16 moved the most, steadily (2026-11-28).
RING_FLOOR_WINDOW = 16


def ring_floor(run, n, frames, reps, size):
    """The floor of an n-node ring (n >= 3): n Tern nodes on one bridge,
    n - 1 booted with `nettest=echo -- NEXT` forwarding every frame to the
    next, and one with `nettest=ping`, keeping RING_FLOOR_WINDOW frames of
    `size` bytes going round (kernel/net/nettest.c).  Every node takes in
    and sends out every frame, as each node of a ring of programs does its
    share, with no protocol, no copy and no program: what n emulated nodes
    on this host can move.  -> {size: [MB/s each node sends]}.  The echo
    floor (experiment 9) has one emulated node and a host process."""
    from test_netdev import wait_for_log
    with _bridged_nodes(run, n, 1, "ring-floor") as (ns, taps, macs, logs, mtu, qs):
        for i in range(1, n):
            qs.append(_qemu_node(run, ns, taps[i], macs[i], mtu,
                                 f"nettest=echo -- {macs[(i + 1) % n]}", logs[i]))
        for i, q in zip(range(1, n), qs):
            wait_for_log(logs[i], r"nettest: forwarding", 120, q)
        out = _ping_node(run, ns, taps[0], macs[0], mtu,
                         [macs[1], "bw", frames, reps, size, RING_FLOOR_WINDOW, macs[-1]],
                         logs[0])
        return {sz: v for (kind, sz), v in parse_r(out).items() if kind == "floor-bw"}


def barrier_floor(run, n, iters, reps, acks=False):
    """The floor of an n-node barrier: n Tern nodes on one bridge, each
    booted with `nettest=barrier -- RANK ITERS REPS MAC...`, run the
    dissemination barrier NX's gsync runs with raw frames and no protocol
    (kernel/net/nettest_barrier.c): what n emulated nodes on this host can
    do, as the ring's floor is for the ring.  acks: each round's frame is
    answered by a frame back, as Tern's Portals acknowledges it.  -> [us a
    barrier], one value a repetition, from node 0."""
    with _bridged_nodes(run, n, 2, "barrier-floor") as (ns, taps, macs, logs, mtu, qs):
        for i in range(n):
            qs.append(_qemu_node(run, ns, taps[i], macs[i], mtu,
                                 " ".join(["nettest=barrier", "exit=qemu", "--",
                                           *(["ack"] if acks else []), str(i), str(iters),
                                           str(reps), *macs]),
                                 logs[i], exit_device=True))
        outs = [_nettest_console(q, log, f"nettest=barrier on node {i} of {n}")
                for i, (q, log) in enumerate(zip(qs, logs))]
        want = "barrier-floor-acked" if acks else "barrier-floor"
        return next(v for (kind, x), v in parse_r(outs[0]).items() if kind == want)


def node_oneway(values):
    """A node-to-node round trip (nettest=ping against nettest=echo) crosses
    two emulated NICs' transmits and two receives: halved, it is the floor
    of one message between two nodes."""
    return [v / 2 for v in values]


def floor(run):
    """Experiment 9: frames bounced off a Tern node booted with nettest=echo,
    from a host process on the bridge (system "fabric") and from a second
    Tern node booted with nettest=ping ("fabric-nodes").  A host round trip
    crosses one emulated NIC receive and one transmit, as a one-way message
    between two nodes does, so it is kept whole; a node round trip crosses
    two of each, so it is halved.  The node figure is the one a message
    between two nodes is held to (report.floor_of): it takes every hop such
    a message takes, where the host process replaces the sender's emulated
    NIC and its wake from a halt by the host's socket path."""
    a = run.a
    with echo_node(run) as floorping:
        sizes = [s for s in a.lat_sizes if s <= floorping.mtu]
        bw_sizes = sorted({1500, floorping.mtu})
        for system, ping in (("fabric", floorping), ("fabric-nodes", floorping.node)):
            for argv in (["lat", a.iters, a.reps, ",".join(map(str, sizes))],
                         ["bw", a.floor_frames, a.reps, ",".join(map(str, bw_sizes))]):
                for (kind, size), v in parse_r(ping(argv)).items():
                    if kind == "floor-rtt":
                        run.add("floor", system, "oneway_floor", size, "us",
                                node_oneway(v) if system == "fabric-nodes" else v)
                    else:
                        run.add("floor", system, "echo_bw", size, "MBps", v)
    # The ring's own floor, for experiment 2's ring on 4 nodes (cluster_exps;
    # --smoke, whose ring has 2, measures it all the same: it is its test).
    if max(a.nodes) >= 4 or a.smoke:
        for size, v in ring_floor(run, 4, a.floor_frames, a.reps, floorping.mtu).items():
            run.add("floor", "fabric-nodes", "ring_bw_4nodes", size, "MBps", v)
    # Each gsync's own floor, on as many nodes (experiment 3, cluster_exps;
    # --smoke's 2 nodes too: it is its test).
    # Beside it, the same with a frame back for every round's frame, as the
    # acknowledgements Tern sends alone (what they cost here).
    for n in [n for n in a.nodes if n >= 2]:
        run.add("floor", "fabric-nodes", "gsync_floor", n, "us",
                barrier_floor(run, n, a.gsync_iters, a.reps))
        run.add("floor", "fabric-nodes", "gsync_floor_acked", n, "us",
                barrier_floor(run, n, a.gsync_iters, a.reps, acks=True))
        run.log(f"barrier floor on {n} nodes done")
    run.log("floor done")


def single_node(run):
    """Experiments 4 and 7 and the single-node part of 8, on one Tern node
    (qemu/run-node) and one Linux node (the Debian kernel, the program as
    init), through bench/node.py."""
    import node
    from ternbench import linuxnode
    a = run.a
    systems = {"tern": node.on_tern}
    if linuxnode.debian_kernel():
        systems["linux"] = node.on_linux
    # --smoke: 1 MiB per sample, 3 samples a size (the figures' 64 MiB and 7
    # take most of a minute a node under TCG).
    progs = [("memcpy", "memcpy_bw", ["1024", "3"])] if a.smoke else [
        ("memcpy", "memcpy_bw", []), ("memavail", "memavail", []), ("noise", "fwq", [])]
    for sysname, fn in systems.items():
        for exp, prog, args in progs:
            samples = [node.parse_kv(fn(prog, args, a.node_mem, a.accel, a.cpu))
                       for _ in range(a.reps)]
            for k in samples[0]:
                unit = ("MBps" if exp == "memcpy" else "us" if k.endswith("_us") else
                        "bytes" if k.endswith("bytes") else "")
                run.add(exp, sysname, exp if exp == "memcpy" else k,
                        k if exp == "memcpy" else a.node_mem, unit,
                        [s[k] for s in samples if k in s])
        run.log(f"{sysname}: single node done")
    # Kernel footprint: what the kernel (and, on Linux, its root) take of the node.
    for sysname in systems:
        m = {r["metric"]: r["median"] for r in run.rows
             if r["experiment"] == "memavail" and r["system"] == sysname}
        if "total_ram_bytes" in m and "largest_alloc_bytes" in m:
            run.add("footprint", sysname, "not_available_to_app", a.node_mem, "MiB",
                    [(m["total_ram_bytes"] - m["largest_alloc_bytes"]) / 2**20])
    # The file holds the debug info too (for gdb, never loaded); what a
    # loader copies to the node is its loadable segments.
    run.add("footprint", "tern", "kernel_image", "", "KiB",
            [os.path.getsize(B("tern.elf")) / 1024])
    run.add("footprint", "tern", "kernel_loaded", "", "KiB",
            [elf_load_bytes(B("tern.elf")) / 1024])
    if os.path.exists(B("linux-node", "vmlinuz")):
        run.add("footprint", "linux", "kernel_image", "", "KiB",
                [os.path.getsize(B("linux-node", "vmlinuz")) / 1024])
        run.add("footprint", "linux", "initramfs", "", "KiB",
                [os.path.getsize(B("linux-node", "initramfs.cpio.gz")) / 1024])


def elf_load_bytes(path):
    """The bytes of an ELF64 file's PT_LOAD segments (p_filesz summed)."""
    import struct
    with open(path, "rb") as f:
        data = f.read()
    if data[:5] != b"\x7fELF\x02":
        raise RuntimeError(f"{path}: not an ELF64 file")
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    total = 0
    for i in range(phnum):
        p_type, = struct.unpack_from("<I", data, phoff + i * phentsize)
        if p_type == 1:
            total += struct.unpack_from("<Q", data, phoff + i * phentsize + 0x20)[0]
    return total


def boot_single(run):
    """Experiment 8: QEMU start to a program's first output on one node
    (Tern: bench/boot_time.py's one_run)."""
    import boot_time
    a = run.a
    v = [boot_time.one_run(a.accel, a.node_mem)[0] for _ in range(a.reps)]
    run.add("boot", "tern", "qemu_to_first_output", 1, "s", [x for x in v if x])


def boot_pxe(run, os_name, n):
    """Experiment 8: PXE boot of n nodes, `up` start to every node ready."""
    name, secs = up(run, os_name, n, boot="pxe")
    down(run, name)
    run.add("boot", os_name, "cluster_up_pxe", n, "s", [secs])
    run.log(f"{os_name}: PXE up -n {n}: {secs:.1f} s")
