"""A QEMU monitor on a Unix socket (qemu/cluster's nodeN.log.monitor,
run-node --monitor): one command, its answer."""
import socket


def _until_prompt(s):
    out = b""
    while b"(qemu)" not in out:
        got = s.recv(4096)
        if not got:     # QEMU went away: no prompt will come
            raise RuntimeError(f"QEMU closed its monitor: {out.decode(errors='replace')!r}")
        out += got
    return out


def monitor(path, command):
    """One command's answer from a QEMU monitor on a Unix socket."""
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(10)
        s.connect(path)
        _until_prompt(s)
        s.sendall(command.encode() + b"\n")
        return _until_prompt(s).decode(errors="replace")
