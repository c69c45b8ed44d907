"""A benchmark stopped with SIGTERM (kill, timeout(1), a CI job's end)
unwinds as ^C does, so its `finally` blocks and context managers stop the
QEMU nodes, daemons and network namespaces it started.  Python's default
for SIGTERM is to die on the spot, which left them all behind."""
import signal


def sigterm_unwinds():
    def stop(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, stop)
