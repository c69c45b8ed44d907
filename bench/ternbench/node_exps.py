"""Experiments on single nodes and bridges of their own (bench/run_all.py):
raw Portals between two kernel nodes, the fabric floor (9), memory and
noise (4, 7), boot (8)."""
import contextlib
import os
import signal
import subprocess

from ternlib import accel
from ternbench.runner import B, down, parse_r, up


def raw_portals(run):
    """Experiment 1, raw Portals: plbench-tern ping-pong between two Tern
    kernel nodes (bench/portals_kernel.py's tern_tern pair)."""
    from test_portals_kernel import bridged_namespace
    from test_portals_kernel_wire import Procs, kv, read_line
    a = run.a
    with bridged_namespace(2) as (ns, taps):
        ps = Procs()
        try:
            prog = B("portals", "kernel", "plbench-tern")
            srv = ps.node(ns, taps[1], 2, "virtio", ["ptl-pong"], 900, a.accel, program=prog)
            pid = kv(read_line(srv, "READY", 120, []))["pid"]
            c = ps.node(ns, taps[0], 1, "virtio",
                        ["ptl-ping", "2", str(pid), str(a.iters), str(a.reps),
                         ",".join(map(str, a.lat_sizes))], 900, a.accel, program=prog)
            out, err = c.communicate(timeout=920)
            if c.returncode:
                raise RuntimeError(f"plbench-tern ptl-ping failed:\n{out}\n{err}")
        finally:
            ps.close()
    for (kind, size), v in parse_r(out).items():
        run.add("latency", "tern-portals", "oneway", size, "us", v)
    run.log("raw Portals done")


@contextlib.contextmanager
def echo_node(run):
    """A Tern node booted with nettest=echo on a bridge of its own, with a
    host port on it: yields floorping(argv) -> its stdout (experiment 9's
    set-up, also experiment 9b's).  The node is stopped on the way out."""
    from test_portals_kernel import bridged_namespace
    from test_portals_kernel_wire import add_linux_port
    from test_netdev import wait_for_log
    from ternlib.fabric import fabric_mtu, virtio_mtu_arg
    a = run.a
    mac = "02:00:00:00:00:09"
    log = os.path.join(a.out, ".floor-console.log")
    # The cluster's frame size (qemu/ternlib/fabric.py), and 1500 beside it.
    mtu = fabric_mtu("virtio", "direct")
    with bridged_namespace(1, mtu) as (ns, taps):
        add_linux_port(ns, "flr0", 8, mtu)
        open(log, "w").close()
        q = subprocess.Popen(
            ["ip", "netns", "exec", ns, "qemu-system-x86_64", "-nodefaults", "-display", "none",
             "-no-reboot", *accel.qemu_accel_args(a.accel, a.cpu), "-m", a.mem, "-kernel",
             B("tern.elf"), "-append", "nettest=echo", "-serial", f"file:{log}",
             "-netdev", f"tap,id=n0,ifname={taps[0]},script=no,downscript=no",
             "-device", f"virtio-net-pci,netdev=n0,mac={mac}{virtio_mtu_arg(mtu)}"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
        try:
            wait_for_log(log, r"nettest: echoing", 120, q)

            def floorping(argv):
                r = subprocess.run(["ip", "netns", "exec", ns, B("bench-host", "floorping"),
                                    "flr0", mac, *map(str, argv)], capture_output=True,
                                   text=True, timeout=600)
                if r.returncode:
                    raise RuntimeError(f"floorping {argv}: {r.stdout}{r.stderr}")
                return r.stdout
            floorping.mtu = mtu
            yield floorping
        finally:
            os.killpg(q.pid, signal.SIGTERM)
            try:
                q.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(q.pid, signal.SIGKILL)
                q.wait(5)
            if os.path.exists(log):
                os.remove(log)


def floor(run):
    """Experiment 9: a host process on the bridge bounces frames off a Tern
    node booted with nettest=echo.  The round trip crosses one emulated NIC
    receive and one transmit, as a one-way message between two nodes does:
    the round trip is the one-way floor between two nodes."""
    a = run.a
    with echo_node(run) as floorping:
        sizes = [s for s in a.lat_sizes if s <= floorping.mtu]
        bw_sizes = sorted({1500, floorping.mtu})
        for argv in (["lat", a.iters, a.reps, ",".join(map(str, sizes))],
                     ["bw", a.floor_frames, a.reps, ",".join(map(str, bw_sizes))]):
            for (kind, size), v in parse_r(floorping(argv)).items():
                if kind == "floor-rtt":
                    run.add("floor", "fabric", "oneway_floor", size, "us", v)
                else:
                    run.add("floor", "fabric", "echo_bw", size, "MBps", v)
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
    run.add("footprint", "tern", "kernel_image", "", "KiB",
            [os.path.getsize(B("tern.elf")) / 1024])
    if os.path.exists(B("linux-node", "vmlinuz")):
        run.add("footprint", "linux", "kernel_image", "", "KiB",
                [os.path.getsize(B("linux-node", "vmlinuz")) / 1024])
        run.add("footprint", "linux", "initramfs", "", "KiB",
                [os.path.getsize(B("linux-node", "initramfs.cpio.gz")) / 1024])


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
