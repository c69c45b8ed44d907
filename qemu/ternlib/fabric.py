"""The frame size of the virtual fabric (issue 18): the bridge, its taps and
veths, and the virtio-net NICs (QEMU's host_mtu=, which the device states
to the node: Tern and Linux guests both take it) share one MTU.

65520: a tap carries at most 65521 bytes (Linux: 65535 less the Ethernet
header); one byte less keeps Portals fragments (frame less a 144-byte
header) multiples of 16 bytes.  Measured on the bridge (bench floor): frames
of this size echo at about 20 times the bytes per second of 1500-byte ones,
the per-frame costs of the emulated NIC being most of the cost.

A network boot caps it: the iPXE of QEMU's virtio-net option ROM takes the
device's MTU and allocates 8 receive buffers of it, each rounded up to a
power of two, from its 512 KiB heap; above 32750 bytes (a 64 KiB buffer)
it cannot open the NIC and the node never loads its kernel.  A PXE-booted
fabric runs at 32736 (32750 rounded down to 16).  The 4-node ring moved as
many MB/s at 32750 as at 65520 (2026-11-25, host load 14: per-byte costs,
not per-frame ones, bound it there).

An e1000 cannot state an MTU: a Tern node is told the fabric's on its
kernel command line (mtu=, node_mtu_option) and turns on long packets.
QEMU's e1000 (an 82540EM) takes frames up to 16 KiB; the part's own limit
is a 16128-byte frame, so an e1000 fabric runs at 16110.  TERN_FABRIC_MTU
overrides either default, e.g. 1500 to measure what the large frames
gain."""
import os
import subprocess

DEFAULT_MTU = 1500
LARGE_MTU = 65520
PXE_MTU = 32736
E1000_MTU = 16110


def fabric_mtu(nic="virtio", boot="direct"):
    """The MTU of a fabric whose nodes have NICs of model `nic` and boot
    `boot` (pxe, or direct: QEMU's -kernel)."""
    v = os.environ.get("TERN_FABRIC_MTU")
    if v:
        return int(v)
    if not nic.startswith("virtio"):
        return E1000_MTU
    return PXE_MTU if boot == "pxe" else LARGE_MTU


def node_mtu_option(nic, mtu):
    """The kernel option telling a Tern node with NIC `nic` the fabric's
    MTU: an e1000 cannot state it (virtio-net does, host_mtu=)."""
    return "" if nic.startswith("virtio") or mtu == DEFAULT_MTU else f"mtu={mtu}"


def set_mtu(ns, dev, mtu):
    """Sets the MTU of `dev` in namespace `ns` (None: this one)."""
    cmd = ["ip"] + (["-n", ns] if ns else []) + ["link", "set", dev, "mtu", str(mtu)]
    subprocess.run(cmd, check=True, capture_output=True, text=True)


def virtio_mtu_arg(mtu):
    """The virtio-net-pci property stating `mtu` to the node; none for 1500,
    so such a node sees the device it always saw."""
    return f",host_mtu={mtu}" if mtu and mtu != DEFAULT_MTU else ""
