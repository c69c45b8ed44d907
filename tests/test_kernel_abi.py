"""Programs users bring, run unchanged (issue 13): C++ with iostream and
exceptions, call_once and std::thread, Rust catching a panic, Go as far as a
node without threads lets it, busybox's shell and id, standard input through
run-node, timers, futexes, process identity and address-space reservations.
The C++, Rust and Go programs are compiled here with Debian's toolchains
(tools/install-deps installs them)."""
import hashlib
import os
import pty
import re
import shutil
import struct
import subprocess

import pytest

from nodes import ROOT, RUN_NODE, program, run_node

SOURCES = os.path.join(ROOT, "tests", "programs", "toolchains")
BUSYBOX = "/bin/busybox"


def is_static_elf(path):
    """A static ELF: no PT_INTERP (a dynamic busybox cannot run on a node)."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    if head[:4] != b"\x7fELF" or head[4] != 2:
        return False
    phoff, = struct.unpack_from("<Q", head, 32)
    phentsize, phnum = struct.unpack_from("<HH", head, 54)
    for i in range(phnum):
        off = phoff + i * phentsize
        if off + 4 <= len(head) and struct.unpack_from("<I", head, off)[0] == 3:
            return False
    return True


need_busybox = pytest.mark.skipif(not is_static_elf(BUSYBOX),
                                  reason="no static /bin/busybox (Debian's busybox-static)")


def compiler(name, *extra_dirs):
    path = os.pathsep.join([*extra_dirs, os.environ.get("PATH", ""),
                            os.path.expanduser("~/.cargo/bin")])
    return shutil.which(name, path=path)


def build(cmd, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600,
                       env={**os.environ, **(env or {})})
    assert r.returncode == 0, f"{' '.join(cmd)}:\n{r.stdout}{r.stderr}"


@pytest.fixture(scope="module")
def cxx(tmp_path_factory):
    gxx = compiler("g++")
    if not gxx:
        pytest.skip("no g++ (Debian's g++)")
    out = tmp_path_factory.mktemp("cxx")
    progs = {}
    for name in ("iostream", "once"):
        progs[name] = str(out / name)
        build([gxx, "-static", "-O2", "-pthread", "-o", progs[name],
               os.path.join(SOURCES, name + ".cc")])
    return progs


# ---- the table, row by row ---------------------------------------------------

def test_cxx_iostream_and_exceptions(cxx):
    r = run_node(cxx["iostream"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "hello from C++", "node 3", "portals 1", "yod 1", "parsed 42",
        "caught: not a number: 'x7'", "caught: not a number: ''"]
    assert r.stderr == "to stderr\n"


def test_cxx_call_once_and_pthread_once(cxx):
    r = run_node(cxx["once"])
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "pthread_once ran 1 time(s), std::call_once ran 1 time(s)"
    assert lines[1] == "std::mutex locked and unlocked"


def test_cxx_std_thread_runs_and_joins(cxx):
    r = run_node(cxx["once"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[2:] == ["thread ran", "still running"]


def test_c_pthread_once_and_a_timed_condition_wait():
    """glibc's pthread_once wakes waiters with FUTEX_WAKE once it has run."""
    r = run_node(program("syscalls-glibc"), "once")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["pthread_once ran the routine 1 time(s)",
                                     "pthread_cond_timedwait: ETIMEDOUT"]


PTIMER = [
    "periodic: rang yes, SI_TIMER yes, its value yes",
    "still ringing: yes",
    "blocked 400 ms: one signal yes, si_overrun counts the rest yes, timer_getoverrun too yes",
    "deleted: timer_gettime EINVAL yes",
    "SIGEV_NONE: up to 10 s left after setting yes, nothing rang yes, disarmed after yes",
    "TIMER_ABSTIME on CLOCK_REALTIME: rang once yes, not early yes",
    "SIGEV_THREAD: made yes, its function ran with its value yes",
    "two timers, one signal: two signals yes, one from each yes",
    "EINVAL for signal 0 yes, clock 99 yes, timer 999 yes"]


@pytest.mark.parametrize("libc,smp", [("glibc", 1), ("musl", 2)])
def test_posix_timers_signal_with_their_value_and_overruns(libc, smp):
    """timer_create and the rest (they were ENOSYS): the program's lines are
    those it prints on Linux (tests/programs/ptimer.c)."""
    r = run_node(program(f"ptimer-{libc}"), extra=["--smp", str(smp)])
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == PTIMER, r.stdout


def test_rust_catches_a_panic(tmp_path):
    rustc = compiler("rustc")
    if not rustc:
        pytest.skip("no rustc (Debian's rustc)")
    exe = str(tmp_path / "panic")
    build([rustc, "-O", "-C", "target-feature=+crt-static", "-o", exe,
           os.path.join(SOURCES, "panic.rs")])
    r = run_node(exe)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["hello from Rust", "sum of squares 385", "panic caught: true",
                                     "thread returned 1", "still running"]
    assert "deliberate panic" in r.stderr


def go_program(tmp_path, name):
    go = compiler("go", "/usr/lib/go/bin")
    if not go:
        pytest.skip("no go (Debian's golang-go)")
    exe = str(tmp_path / name)
    env = {"CGO_ENABLED": "0"}
    if not os.environ.get("HOME") and not os.environ.get("XDG_CACHE_HOME"):
        env["GOCACHE"] = str(tmp_path / "gocache")
    build([go, "build", "-o", exe, os.path.join(SOURCES, name + ".go")], env=env)
    return exe


def test_go_hello(tmp_path):
    """The runtime reserves its heap and starts its helper threads (sysmon,
    the garbage collector's) before main runs: on a one-CPU node they share
    the one core."""
    r = run_node(go_program(tmp_path, "hello"))
    assert r.returncode == 0, r.stderr
    assert r.stdout == "hello from Go\n"


@need_busybox
def test_busybox_sh_reads_a_script_from_stdin():
    script = ('x=0\nfor i in 1 2 3 4 5; do x=$((x + i)); done\n'
              'f() { echo "f got $1"; }\nf "$x"\n'
              'case $x in 15) echo fifteen;; esac\necho "pid $$"\nexit 7\n')
    r = run_node(BUSYBOX, "sh", input=script)
    assert r.stdout == "f got 15\nfifteen\npid 1\n", r.stderr
    assert r.returncode == 7


@need_busybox
def test_busybox_sh_on_a_terminal():
    """Interactive: job control on the console (getpgrp agrees with
    tcgetpgrp, so no SIGTTIN loop), commands typed on run-node's terminal."""
    master, slave = pty.openpty()
    try:
        p = subprocess.Popen([RUN_NODE, "--timeout", "100", BUSYBOX, "sh"], stdin=slave,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        os.close(slave)
        slave = None
        os.write(master, b"echo typed $((6 * 7))\nexit 5\n")
        out, err = p.communicate(timeout=110)
    finally:
        if slave is not None:
            os.close(slave)
        os.close(master)
    assert b"typed 42\n" in out, out + err
    assert p.returncode == 5


@need_busybox
def test_busybox_id():
    r = run_node(BUSYBOX, "id")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "uid=0 gid=0 groups=0\n"


@need_busybox
def test_stdin_reaches_the_program():
    r = run_node(BUSYBOX, "sha256sum", input="abc\n")
    assert r.returncode == 0, r.stderr
    assert r.stdout == hashlib.sha256(b"abc\n").hexdigest() + "  -\n"


# ---- standard input ---------------------------------------------------------------------

def java_hash(data):
    s = 0
    for b in data:
        s = (s * 31 + b) & 0xFFFFFFFF
    return s


@pytest.mark.parametrize("libc", ["glibc", "musl"])
def test_stdin_in_bulk_and_not_a_terminal(libc):
    data = "".join(f"line {i} of the input\n" for i in range(8000))
    r = run_node(program(f"syscalls-{libc}"), "stdin", input=data)
    assert r.returncode == 0, r.stderr
    assert r.stdout == (f"read {len(data)} bytes (sum {java_hash(data.encode()):08x}), "
                        "last read 0, isatty(0) 0, fifo 1\n")


def test_stdin_is_a_terminal_when_run_nodes_is():
    master, slave = pty.openpty()
    try:
        p = subprocess.Popen([RUN_NODE, "--timeout", "100", program("syscalls-glibc"), "stdin"],
                             stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        os.close(slave)
        slave = None
        os.write(master, b"typed\n\x04")           # a line, then end of file (^D)
        out, err = p.communicate(timeout=110)
    finally:
        if slave is not None:
            os.close(slave)
        os.close(master)
    assert p.returncode == 0, err
    assert out.decode() == (f"read 6 bytes (sum {java_hash(b'typed' + bytes([10])):08x}), "
                            "last read 0, isatty(0) 1, fifo 0\n")


def test_no_stdin_reads_end_of_file_and_is_not_a_terminal():
    r = subprocess.run([RUN_NODE, program("syscalls-musl"), "stdin"], stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "read 0 bytes (sum 00000000), last read 0, isatty(0) 0, fifo 1\n"


# ---- timers, futexes, identity ------------------------------------------------------------

ALARM_LINES = [
    "pause returned -1 (EINTR) after the alarm: yes, waited about a second: yes",
    "sleep(5) cut short by the alarm: yes",
    "alarm(10) then alarm(0) returns 10",
    "periodic timer rang 3 times; interval 100000 us, armed: yes",
    "disarmed: yes",
    "handler ran during a busy loop: yes",
    "blocked: pending yes, handler ran 0 times",
    "unblocked: handler ran 1 times",
    "sigtimedwait took signal 14; times out with EAGAIN",
]


@pytest.mark.parametrize("libc", ["glibc", "musl"])
def test_alarm_and_interval_timers(libc):
    """What the same program prints on Linux."""
    r = run_node(program(f"alarm-{libc}"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ALARM_LINES


def test_alarm_without_a_handler_kills():
    r = run_node(program("alarm-musl"), "default")
    assert r.stdout == "waiting for the alarm\n"
    assert r.returncode == 128 + 14
    assert "SIGALRM" in r.stderr


FUTEX_LINES = [
    "WAKE: 0",
    "WAIT, value differs: EAGAIN",
    "WAIT 50 ms: ETIMEDOUT, waited its timeout: yes",
    "WAIT_BITSET until a realtime deadline: ETIMEDOUT",
    "WAIT_BITSET with bitset 0: EINVAL",
    "unaligned: EINVAL, bad address: EFAULT",
    "WAKE_OP: 0, second word now 6",
    "CMP_REQUEUE, value differs: EAGAIN; REQUEUE: 0",
    "LOCK_PI: ok, owner is me: yes, again: EDEADLK, UNLOCK_PI: ok, word 0",
    "unknown op: ENOSYS",
    "get_robust_list: ok, len 24",
]


@pytest.mark.parametrize("libc", ["glibc", "musl"])
def test_futex_for_one_thread(libc):
    """What the same program prints on Linux."""
    r = run_node(program(f"syscalls-{libc}"), "futex")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == FUTEX_LINES


@pytest.mark.parametrize("libc", ["glibc", "musl"])
def test_a_deadlock_is_reported_not_a_hang(libc):
    r = run_node(program(f"syscalls-{libc}"), "deadlock")
    assert r.stdout == "locked once\n"
    assert "would wait for ever in a futex wait" in r.stderr and "deadlock" in r.stderr
    assert r.returncode == 128 + 9


@pytest.mark.parametrize("libc", ["glibc", "musl"])
def test_identity_of_a_session_leader(libc):
    r = run_node(program(f"syscalls-{libc}"), "ident")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "pid 1 pgrp 1 pgid 1 sid 1",
        "getpgid(other) ESRCH, getsid(other) ESRCH",
        "setpgid(0, 0) ok, setsid() 1",
        "tcgetpgrp(2) 1",
        "getgroups: 1 group(s), first is getgid(): yes; count only: 1",
        f"PR_GET_NAME at start: syscalls-{libc}",
        "PR_SET_NAME, cut to 15: a-very-long-thr",
        "PR_SET_VMA ok, unknown option EINVAL",
        "personality 0, set ADDR_NO_RANDOMIZE, now 0x40000",
        "priority 0, setpriority(5) ok, now 5",
    ]


@pytest.mark.parametrize("libc", ["glibc", "musl"])
def test_calls_a_one_process_node_honours(libc):
    prog = program(f"syscalls-{libc}")
    r = run_node(prog, "misc")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "sched_setaffinity(cpu 0) ok, (cpu 1) EINVAL",
        "getcpu ok: cpu 0 node 0",
        "membarrier query has GLOBAL: yes; PRIVATE_EXPEDITED before registering EPERM, after ok",
        "msync ok, mlock ok, munlock ok, mlockall ok",
        "msync unmapped ENOMEM",
        f"/proc/self/exe: {prog}",
    ]


@pytest.mark.parametrize("libc", ["glibc", "musl"])
def test_ids_scheduling_policy_close_range_and_mincore_as_on_linux(libc):
    """getresuid, the sched_* policy calls, close_range and mincore (all
    ENOSYS before): a node prints what the same program prints on Linux run
    here as an unprivileged user (musl's sched_setscheduler family is ENOSYS
    in musl itself, on both)."""
    import resource
    prog = program(f"syscalls-{libc}")
    # A user without RLIMIT_RTPRIO (what most logins get): a host that grants
    # real-time priorities would let Linux's SCHED_FIFO through.
    linux = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                            prog, "more"], capture_output=True, text=True, timeout=60,
                           preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_RTPRIO, (0, 0)))
    assert linux.returncode == 0, linux.stderr
    assert "close_range 5.. ok: fd 4 open yes, fd 5 closed yes" in linux.stdout
    r = run_node(prog, "more")
    assert r.returncode == 0, r.stderr
    assert r.stdout == linux.stdout


@pytest.mark.parametrize("libc", ["glibc", "musl"])
def test_pipes_eventfds_and_epoll_as_on_linux(libc):
    """pipe, pipe2, eventfd, timerfd, epoll (ENOSYS before): one thread's calls, and
    threads on two cores blocked in read, epoll_wait and poll, woken by a
    write; the lines Linux prints for the same program, run here beside."""
    prog = program(f"pipes-{libc}")
    for mode, smp in (("pipes", "1"), ("threads", "2")):
        linux = subprocess.run([prog, mode], capture_output=True, text=True, timeout=60)
        assert linux.returncode == 0, linux.stderr
        r = run_node(prog, mode, extra=["--smp", smp])
        assert r.returncode == 0, r.stderr
        assert r.stdout == linux.stdout, mode
        assert not re.search(r"\bNO\b", linux.stdout), linux.stdout


def test_a_thread_alone_reading_its_empty_pipe_is_a_reported_deadlock():
    """Nothing could ever write it: the program ends with a report, as a
    futex wait nobody can end does, instead of hanging the node."""
    r = run_node(program("pipes-musl"), "selfblock")
    assert r.returncode == 128 + 9, r.stdout + r.stderr
    assert "would wait for ever in a pipe read" in r.stderr, r.stderr


ABSENT = ["socket", "fork", "clone3"]


def test_absent_facilities_answer_as_linux_without_them_and_are_documented():
    r = run_node(program("syscalls-glibc"), "absent")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [f"{c} ENOSYS" for c in ABSENT] + ["wait4 ECHILD"]
    with open(os.path.join(ROOT, "docs", "kernel.md")) as f:
        table = [line for line in f if line.startswith("| `")]
    for call in ABSENT + ["clone", "vfork", "wait4"]:
        assert any(line.startswith(f"| `{call}`") or f", `{call}`" in line.split("|")[1]
                   for line in table), f"{call} missing from docs/kernel.md"


# ---- reservations ---------------------------------------------------------------------------

@pytest.mark.parametrize("libc", ["glibc", "musl"])
def test_reservations_take_addresses_and_commits_take_memory(libc):
    r = run_node(program(f"reserve-{libc}"), "map")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "reserve 16 GiB: ok",
        "free memory unchanged: yes",
        "mprotect 1 MiB at 0: 0",
        "mprotect 4 MiB at 5 GiB: 0",
        "committed memory zeroed and usable: yes",
        "free memory down by 5 MiB: yes",
        "mmap fixed over it: ok, at the address asked: yes",
        "usable: yes",
        "MAP_FIXED_NOREPLACE over it: EEXIST",
        "mprotect 4 GiB read-write: ENOMEM",
        "mmap fixed 4 GiB read-write: ENOMEM",
        "mprotect past the reservation: ENOMEM",
        "munmap all: 0",
        "free memory back: yes",
        "hint 0xc000000000 taken: yes",
        "the same hint again: elsewhere: yes",
    ]


def test_touching_a_reservation_never_made_accessible_faults():
    r = run_node(program("reserve-glibc"), "touch")
    assert r.stdout == "first page ok\n"
    assert r.returncode == 128 + 11
    assert "write to reserved address never made accessible" in r.stderr


def test_system_calls_use_committed_reserved_memory():
    r = run_node(program("reserve-musl"), "io")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["written from reserved memory", "getrandom into it: 200",
                                     "write from its uncommitted part: -1 EFAULT"]


def test_scattered_commits_are_refused_before_the_kernel_runs_out():
    """Page tables for reserved memory come from the kernel's small pool:
    when it runs low a commit fails with ENOMEM (never a kernel panic), and
    released memory gives its tables back."""
    r = run_node(program("reserve-glibc"), "scatter")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["commits stopped with ENOMEM after more than 50: yes",
                                     "munmap: 0", "commit elsewhere afterwards: 0"]
