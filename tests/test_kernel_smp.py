"""Nodes with several CPUs (issue 17, stage 1): the kernel finds them in the
ACPI MADT, starts them all and keeps them halted until needed; what they do
for each other (calls, TLB shootdown, wake-ups, locks) is checked on the
node itself with smptest=1.  A node whose MADT is missing or malformed runs
on one CPU and says why.  Threads on these cores: tests/test_threads.py
(and a job's threaded ranks here)."""
import os
import re
import struct
import subprocess

import pytest

from clusters import cluster, up
from nodes import KERNEL, ROOT, program, run_node


def qemu_node(tmp_path, cpus, append="", qemu_args=(), prog=("hello-musl", "smp"), timeout=120):
    """Boots the kernel directly (kernel options of our own); returns the
    console log and QEMU's status."""
    log = tmp_path / "console.log"
    module = " ".join([program(prog[0]), *prog[1:]])
    cmd = ["qemu-system-x86_64", "-nodefaults", "-display", "none", "-no-reboot", "-m", "64M",
           "-accel", "tcg,thread=multi", "-cpu", "max", "-smp", str(cpus),
           "-kernel", KERNEL, "-append", f"exit=qemu {append}".strip(), "-initrd", module,
           "-serial", f"file:{log}", "-device", "isa-debug-exit,iobase=0xf4,iosize=4",
           *qemu_args]
    r = subprocess.run(cmd, capture_output=True, timeout=timeout)
    return log.read_text(errors="replace").replace("\r\n", "\n"), r.returncode


@pytest.mark.parametrize("cpus", [1, 2, 4])
def test_node_starts_every_cpu_and_runs_a_program(cpus):
    prog = program("stdlib-glibc")
    native = subprocess.run([prog], capture_output=True, text=True, check=True).stdout
    r = run_node(prog, extra=["--smp", str(cpus), "-v"])
    assert r.returncode == 0, r.stderr
    det = lambda out: out.split("--- time")[0]  # noqa: E731
    assert det(r.stdout) == det(native)
    log = r.stderr
    assert re.search(rf"tern: Tern kernel: .*, {cpus} CPUs?\n", log), log
    ids = " ".join(str(i) for i in range(cpus))
    assert f"smp: ACPI MADT (RSDT): {cpus} CPU" in log
    if cpus > 1:
        assert f"smp: {cpus} of {cpus} CPUs running (APIC ids {ids}), started in" in log, log
        assert "TSC in step" in log
    else:
        assert "CPUs running" not in log


@pytest.mark.parametrize("cpus", [1, 2, 4])
def test_cpus_call_flush_wake_and_idle(tmp_path, cpus):
    log, status = qemu_node(tmp_path, cpus, "smptest=1")
    assert status == 1, log[-2000:]            # isa-debug-exit: the program exited 0
    results = re.findall(r"tern: smptest: (.*)", log)
    assert results[-1] == "ok", log
    assert f"call on each CPU: ok, {cpus} CPUs each ran it as itself" in log
    assert f"spinlock, all CPUs at once: ok, {cpus * 100000} of {cpus * 100000}" in log
    assert f"TLB shootdown: ok, {cpus} of {cpus} CPUs read the new page" in log
    # Each process its own page tables (ranks per core build on them): one
    # CPU switching between two reads each one's page at the same address.
    assert (f"address spaces: ok, CPU {cpus - 1} read 0xa5a50000 then 0xa5a50001 at one "
            "address; neither reaches the other's; tables freed") in log, log
    if cpus > 1:
        assert "wake by IPI: ok" in log
        assert "one-shot timer: ok" in log
        assert (f"a call that may not return: ok, CPU {cpus - 1}'s call to CPU 0 ran after "
                "CPU 0's own call") in log, log
        assert f"idle CPUs stay halted: ok, 0 wakeups on {cpus - 1} idle CPUs" in log
        # The hang report's question: an NMI, which interrupts off do not
        # hold back, answered on a stack of its own.
        assert (f"NMI: ok, CPU {cpus - 1}, spinning with interrupts off, answered from its "
                "spin, on its NMI stack") in log, log
    assert "argv[1]=smp" in log and "program exited with status 0" in log


def test_no_acpi_gives_a_working_one_cpu_node(tmp_path):
    log, status = qemu_node(tmp_path, 4, qemu_args=["-no-acpi"])
    assert status == 1, log[-2000:]
    assert "smp: no ACPI tables (no RSDP): using the boot CPU only" in log
    assert re.search(r"Tern kernel: .*, 1 CPU\n", log)
    assert "argv[1]=smp" in log and "program exited with status 0" in log


# --- the MADT reader (kernel/acpi.c) against tables as firmware might get them wrong

@pytest.fixture(scope="module")
def acpi_probe(tmp_path_factory):
    exe = tmp_path_factory.mktemp("acpi") / "acpi_probe"
    subprocess.run(["gcc", "-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror",
                    "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
                    "-I", os.path.join(ROOT, "kernel", "include"), "-o", str(exe),
                    os.path.join(ROOT, "tests", "kernel", "acpi_probe.c"),
                    os.path.join(ROOT, "kernel", "acpi.c")], check=True)
    return exe


RSDT_AT, MADT_AT, XSDT_AT, FACP_AT = 0x10000, 0x11000, 0x12000, 0x13000


def checksum_fix(b, at):
    b = bytearray(b)
    b[at] = 0
    b[at] = (-sum(b)) & 0xFF
    return bytes(b)


def sdt(sig, body, length=None):
    length = 36 + len(body) if length is None else length
    hdr = struct.pack("<4sIBB6s8sIII", sig, length, 1, 0, b"TERNTS", b"SMPTEST ", 1, 0, 1)
    return checksum_fix(hdr + body, 9)


def lapic(uid, apic_id, flags=1):
    return struct.pack("<BBBBI", 0, 8, uid, apic_id, flags)


def x2apic(apic_id, uid, flags=1):
    return struct.pack("<BBHIII", 9, 16, 0, apic_id, flags, uid)


def madt(entries, length=None):
    return sdt(b"APIC", struct.pack("<II", 0xFEE00000, 1) + b"".join(entries), length)


FOUR = [lapic(0, 0), lapic(1, 1), lapic(2, 2), lapic(3, 3), lapic(4, 4, flags=0)]


def image(madt_table=None, xsdt=False, bad_xsdt=False, rsdp_at=0xE0000, ebda=0,
          rsdt_at=RSDT_AT, size=0x100000):
    mem = bytearray(size)
    mem[0x40E:0x410] = struct.pack("<H", ebda >> 4)
    mem[FACP_AT:FACP_AT + 40] = sdt(b"FACP", bytes(4))
    tables = [FACP_AT]
    if madt_table is not None:
        mem[MADT_AT:MADT_AT + len(madt_table)] = madt_table
        tables.append(MADT_AT)
    rsdt = sdt(b"RSDT", b"".join(struct.pack("<I", t) for t in tables))
    mem[RSDT_AT:RSDT_AT + len(rsdt)] = rsdt
    if xsdt:
        x = sdt(b"XSDT", b"".join(struct.pack("<Q", t) for t in tables))
        if bad_xsdt:
            x = x[:9] + bytes([(x[9] + 1) & 0xFF]) + x[10:]
        mem[XSDT_AT:XSDT_AT + len(x)] = x
        r = struct.pack("<8sB6sBIIQB3x", b"RSD PTR ", 0, b"TERNTS", 2, rsdt_at, 36, XSDT_AT, 0)
        r = checksum_fix(checksum_fix(r, 8)[:20], 8) + r[20:]
        r = checksum_fix(r, 32)
    else:
        r = checksum_fix(struct.pack("<8sB6sBI", b"RSD PTR ", 0, b"TERNTS", 0, rsdt_at), 8)
    if rsdp_at is not None:
        mem[rsdp_at:rsdp_at + len(r)] = r
    return bytes(mem)


def probe(acpi_probe, tmp_path, mem):
    path = tmp_path / "mem.img"
    path.write_bytes(mem)
    r = subprocess.run([str(acpi_probe), str(path)], capture_output=True, text=True)
    assert r.returncode in (0, 1), r.stderr
    return r.stdout


def test_madt_well_formed(acpi_probe, tmp_path):
    out = probe(acpi_probe, tmp_path, image(madt(FOUR)))
    assert out.splitlines() == ["ok rsdt n=5 enabled=4 dropped=0 lapic=0xfee00000",
                                "cpu 0 0 1", "cpu 1 1 1", "cpu 2 2 1", "cpu 3 3 1", "cpu 4 4 0"]
    # ACPI 2.0: through the XSDT, x2APIC entries too; the RSDP in the EBDA
    out = probe(acpi_probe, tmp_path, image(madt([lapic(0, 0), x2apic(7, 9)]), xsdt=True,
                                            rsdp_at=0x9FC00, ebda=0x9FC00))
    assert out.splitlines() == ["ok xsdt n=2 enabled=2 dropped=0 lapic=0xfee00000",
                                "cpu 0 0 1", "cpu 7 9 1"]
    # a broken XSDT: the RSDT still leads to the MADT
    out = probe(acpi_probe, tmp_path, image(madt(FOUR), xsdt=True, bad_xsdt=True))
    assert out.startswith("ok rsdt n=5 enabled=4")
    # more CPUs than the kernel keeps: counted, not written past the table
    many = [x2apic(i, i) for i in range(300)]
    out = probe(acpi_probe, tmp_path, image(madt(many)))
    assert out.startswith("ok rsdt n=256 enabled=256 dropped=44")


def corrupt(table, at, value):
    return table[:at] + bytes([value]) + table[at + 1:]


@pytest.mark.parametrize("case, mem, message", [
    ("no RSDP", lambda: image(madt(FOUR), rsdp_at=None), "no ACPI tables (no RSDP)"),
    ("no MADT", lambda: image(None), "no MADT in the ACPI tables"),
    ("RSDT outside memory", lambda: image(madt(FOUR), rsdt_at=0x7FF00000),
     "RSDT: address outside memory"),
    ("bad checksum", lambda: image(corrupt(madt(FOUR), 50, 0x77)), "MADT: bad checksum"),
    ("entry of length 0", lambda: image(madt([lapic(0, 0), b"\x00\x00" + bytes(6)])),
     "MADT: entry of length < 2"),
    ("entry past the end", lambda: image(madt([lapic(0, 0), struct.pack("<BB", 0, 40)])),
     "MADT: entry runs past the table"),
    ("short local APIC entry", lambda: image(madt([struct.pack("<BBBB", 0, 4, 0, 0)])),
     "MADT: local APIC entry too short"),
    ("length beyond memory", lambda: image(madt(FOUR, length=0xF0000)),
     "MADT: runs outside memory"),
    ("length beyond any table", lambda: image(madt(FOUR, length=0x200000)),
     "MADT: length out of range"),
    ("length below the fixed fields", lambda: image(sdt(b"APIC", b"")),
     "MADT: shorter than its fixed fields"),
    ("APIC id twice", lambda: image(madt([lapic(0, 0), lapic(1, 0)])),
     "MADT: lists one APIC id twice"),
    ("no enabled CPU", lambda: image(madt([lapic(0, 0, flags=0)])), "MADT: lists no enabled CPU"),
])
def test_madt_malformed(acpi_probe, tmp_path, case, mem, message):
    assert probe(acpi_probe, tmp_path, mem()).strip() == f"error: {message}", case


# --- the core count: reported at registration, kept in the node database,
# shown by yod -show and qemu/cluster status

@pytest.fixture(scope="module")
def smp_cluster():
    if os.geteuid() != 0:
        pytest.skip("needs root (netns, taps)")
    with up("s", "-n", "2", "--smp", "2", "--boot", "direct") as name:
        yield name


def test_cluster_nodes_report_their_cores(smp_cluster):
    show = cluster(smp_cluster, "exec", "yod", "-show").stdout.splitlines()
    assert show[0].split() == ["nid", "MAC", "state", "job", "cores"]
    rows = {int(w[0]): w for w in (l.split() for l in show[1:]) if len(w) == 5 and w[0].isdigit()}
    assert {nid: (w[2], w[4]) for nid, w in rows.items()} == {1: ("free", "2"), 2: ("free", "2")}
    status = cluster(smp_cluster, "status").stdout
    assert "2 CPUs per node" in status
    nodes = [l.split() for l in status.splitlines() if l.split() and l.split()[0].isdigit()]
    # nid, MAC, state (the allocator's word), job, cores
    assert [(n[0], n[2], n[3], n[4]) for n in nodes] == [("1", "free", "-", "2"),
                                                         ("2", "free", "-", "2")]
    log = cluster(smp_cluster, "console", "1").stdout
    assert "smp: 2 of 2 CPUs running" in log
    # and jobs run on them: one rank per node when asked
    r = cluster(smp_cluster, "exec", "yod", "-sz", "2", "-ppn", "1", program("ranks-musl"),
                "hello")
    assert sorted(r.stdout.splitlines()) == ["rank 0 of 2 on nid 1", "rank 1 of 2 on nid 2"]


def test_default_ranks_per_node_follow_the_program(smp_cluster, tmp_path):
    """Without -ppn a program that starts no threads gets a rank per core (both
    ranks on the first node of 2 CPUs); one that may (pthread_create in its
    symbol table), or that yod cannot tell (stripped), a node per rank."""
    r = cluster(smp_cluster, "exec", "yod", "-v", "-sz", "2", program("ranks-musl"), "hello")
    assert sorted(r.stdout.splitlines()) == ["rank 0 of 2 on nid 1", "rank 1 of 2 on nid 1"], \
        r.stdout + r.stderr
    assert "yod: 2 ranks per node: a rank per core, the program starts no threads" in r.stderr
    r = cluster(smp_cluster, "exec", "yod", "-v", "-sz", "2", program("threads-glibc"), "sum",
                "2")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines().count("cores: 0 1") == 2, r.stdout
    assert "one rank per node: the program may start threads (pthread_create)" in r.stderr
    stripped = tmp_path / "ranks-stripped"
    subprocess.run(["strip", "-o", str(stripped), program("ranks-musl")], check=True)
    os.chmod(tmp_path, 0o755)
    r = cluster(smp_cluster, "exec", "yod", "-v", "-sz", "2", str(stripped), "hello")
    assert sorted(r.stdout.splitlines()) == ["rank 0 of 2 on nid 1", "rank 1 of 2 on nid 2"], \
        r.stdout + r.stderr
    assert "it has no symbol table (stripped)" in r.stderr, r.stderr


def test_threaded_ranks_in_a_job(smp_cluster):
    """Each rank's threads get their own cores; a fault in one thread ends
    its rank with the thread named, and the node then runs the next job."""
    r = cluster(smp_cluster, "exec", "yod", "-sz", "2", program("threads-glibc"), "sum", "2")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines().count("2 threads: sum equals the serial sum") == 2, r.stdout
    assert r.stdout.splitlines().count("cores: 0 1") == 2, r.stdout
    r = cluster(smp_cluster, "exec", "yod", "-sz", "1", program("threads-glibc"), "fault",
                check=False)
    assert r.returncode != 0
    assert "(thread 2, on CPU 1): page fault: write to NULL pointer" in r.stderr, r.stderr
    r = cluster(smp_cluster, "exec", "yod", "-sz", "2", program("threads-musl"), "pingpong", "200")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["200 round trips between two threads"] * 2


NODEDB = os.path.join(ROOT, "build", "bin", "tern-nodedb")


def test_node_database_keeps_cores_and_reads_older_files(tmp_path):
    f = tmp_path / "nodes"
    f.write_text("1 02:00:00:00:00:01 free 0 0\n"            # before the cores column
                 "2 02:00:00:00:00:02 free 0 0 4\n")
    out = subprocess.run([NODEDB, "-f", str(f), "down", "1"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert f.read_text().splitlines()[1:] == ["1 02:00:00:00:00:01 down 0 0 0",
                                              "2 02:00:00:00:00:02 free 0 0 4"]
    rows = subprocess.run([NODEDB, "-f", str(f), "list"], capture_output=True,
                          text=True).stdout.splitlines()
    assert [r.split()[4] for r in rows[1:3]] == ["-", "4"]
    f.write_text("1 02:00:00:00:00:01 free 0 0 70000\n")
    r = subprocess.run([NODEDB, "-f", str(f), "list"], capture_output=True, text=True)
    assert r.returncode != 0 and "nodes:1: malformed line" in r.stderr
