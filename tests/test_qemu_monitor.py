"""qemu/ternlib/monitor.py, the one QEMU-monitor helper (tests/test_cluster.py,
bench/insnprof.py), against a stand-in on a Unix socket: no QEMU needed."""
import os
import socket
import sys
import threading

import pytest

from nodes import ROOT

sys.path.insert(0, os.path.join(ROOT, "qemu"))
from ternlib.monitor import monitor  # noqa: E402


def serve(path, script):
    """A monitor that says each of `script`'s byte strings in turn, reading
    a command line between them, then closes."""
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(path)
    srv.listen(1)

    def run():
        conn, _ = srv.accept()
        with conn, srv:
            for i, said in enumerate(script):
                if i:
                    conn.recv(4096)
                conn.sendall(said)
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def test_the_answer_to_a_command_comes_back(tmp_path):
    path = str(tmp_path / "mon")
    t = serve(path, [b"QEMU 7.2 monitor\r\n(qemu) ", b"info status\r\nVM status: running\r\n(qemu) "])
    assert "VM status: running" in monitor(path, "info status")
    t.join(5)


def test_a_monitor_that_closes_is_an_error_not_a_spin(tmp_path):
    """QEMU gone in the middle of an answer: the reader used to loop for ever
    on an empty read."""
    path = str(tmp_path / "mon")
    t = serve(path, [b"QEMU 7.2 monitor\r\n(qemu) ", b"info sta"])
    with pytest.raises(RuntimeError, match="closed its monitor"):
        monitor(path, "info status")
    t.join(5)
