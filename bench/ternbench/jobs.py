"""Running a Linux + MPICH job that may not end: MPICH 4.0.2 on the
comparison nodes could deadlock in MPI_Finalize after the program printed
everything, until mpiexec's own limit (minutes).  The node image now
preloads a fix (docs/linux-cluster.md); this stays as the safety net.  The
benchmarks run such jobs through run_until_done: once the program's output
says it has finished and nothing more comes for `grace` seconds, the job is
interrupted as Ctrl-C would (SIGINT to its process group: MPICH's mpiexec
then ends the ranks on every node) and reported as hung."""
import os
import signal
import subprocess
import threading
import time


def _sigint_default():
    """In the child: SIGINT ends it, as Ctrl-C would.  A benchmark started
    in the background by a shell (`make bench &`, nohup) inherits SIGINT
    ignored, and so did every job it ran: the interrupt was lost and each
    hung job took the minute until SIGKILL."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_until_done(argv, finished, timeout, grace=30, env=None):
    """(stdout, stderr, returncode, hung) of argv.  finished(stdout) says
    whether the program has printed all it will; hung is True when the job
    was interrupted `grace` s after that.  At `timeout` s it is interrupted
    too (hung False)."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env, start_new_session=True, preexec_fn=_sigint_default)
    out, err = [], []
    readers = [threading.Thread(target=lambda f=f, b=b: b.extend(iter(f.readline, "")),
                                daemon=True) for f, b in ((p.stdout, out), (p.stderr, err))]
    for t in readers:
        t.start()
    t0 = time.monotonic()
    hung, seen, quiet_since = False, 0, t0
    while p.poll() is None:
        time.sleep(0.2)
        if len(out) != seen:
            seen, quiet_since = len(out), time.monotonic()
        late = time.monotonic() - quiet_since > grace and finished("".join(out))
        if late or time.monotonic() - t0 > timeout:
            hung = late
            stop(p)
            break
    for t in readers:
        t.join(timeout=10)
    return "".join(out), "".join(err), p.returncode, hung


def stop(p):
    """SIGINT to p's process group, SIGKILL if it is still there a minute
    later."""
    try:
        os.killpg(p.pid, signal.SIGINT)
        p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    except ProcessLookupError:
        p.wait()
