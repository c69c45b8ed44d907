"""The frame size of the virtual fabric (issue 18): the bridge, its taps and
veths, and the virtio-net NICs (QEMU's host_mtu=, which the device states
to the node: Tern and Linux guests both take it) share one MTU.

65520: a tap carries at most 65521 bytes (Linux: 65535 less the Ethernet
header); one byte less keeps Portals fragments (frame less a 144-byte
header) multiples of 16 bytes.  Measured on the bridge (bench floor): frames
of this size echo at about 20 times the bytes per second of 1500-byte ones,
the per-frame costs of the emulated NIC being most of the cost.

An e1000 cannot be told an MTU (QEMU's stays at 1500 bytes unless the
driver turns on long packets, and Tern's does not), so a fabric with e1000
nodes keeps 1500 (fabric_mtu).  TERN_FABRIC_MTU overrides the virtio
default, e.g. 1500 to measure what the large frames gain."""
import os
import subprocess

DEFAULT_MTU = 1500
LARGE_MTU = 65520


def fabric_mtu(nic="virtio"):
    """The MTU of a fabric whose nodes have NICs of model `nic`."""
    if not nic.startswith("virtio"):
        return DEFAULT_MTU
    v = os.environ.get("TERN_FABRIC_MTU")
    return int(v) if v else LARGE_MTU


def set_mtu(ns, dev, mtu):
    """Sets the MTU of `dev` in namespace `ns` (None: this one)."""
    cmd = ["ip"] + (["-n", ns] if ns else []) + ["link", "set", dev, "mtu", str(mtu)]
    subprocess.run(cmd, check=True, capture_output=True, text=True)


def virtio_mtu_arg(mtu):
    """The virtio-net-pci property stating `mtu` to the node; none for 1500,
    so such a node sees the device it always saw."""
    return f",host_mtu={mtu}" if mtu and mtu != DEFAULT_MTU else ""
