"""A QEMU monitor on a Unix socket (qemu/cluster's nodeN.log.monitor,
run-node --monitor): one command, its answer."""
import socket


def monitor(path, command):
    """One command's answer from a QEMU monitor on a Unix socket."""
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(10)
        s.connect(path)
        out = b""
        while b"(qemu)" not in out:
            out += s.recv(4096)
        s.sendall(command.encode() + b"\n")
        out = b""
        while b"(qemu)" not in out:
            out += s.recv(4096)
        return out.decode(errors="replace")
