"""bench/insnprof.py (issue 18): where a node's guest instructions go per
message, from QEMU's log of every translated block node 2 executes while two
nodes play NX ping-pong.  Checked: how blocks are weighed (a synthetic log
against the real program's disassembly), the refusal of a stripped program,
and a real run's output.  No figure is judged."""
import csv
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import insnprof  # noqa: E402
from test_portals_kernel import _net_usable  # noqa: E402


def exec_line(pc):
    """A line of QEMU 7.2's exec log (accel/tcg/cpu-exec.c)."""
    return f"Trace 0: 0x7f86d0331840 [0000000000000000/{pc:016x}/1040c2b0/ff000200] \n"


@pytest.fixture(scope="module")
def program():
    if not os.path.exists(insnprof.NXPING_SYMS):
        pytest.skip("build/nx-tern/nxping.syms not built (make all)")
    return insnprof.Image(insnprof.NXPING_SYMS)


def test_blocks_are_weighed_by_their_instructions_and_rep_rounds_by_one(program, tmp_path):
    csend = next(a for a, n in program.syms if n == "csend")
    rep = min(program.rep)
    log = tmp_path / "exec.log"
    # Seven messages, 30 rounds of one rep instruction, and lines that are
    # not blocks (QEMU writes other words to the same log).
    log.write_text(exec_line(csend) * 7 + exec_line(rep) * 30 +
                   "Linking TBs 0x1 [0000000000405610] index 0 -> 0x2 [0000000000405620]\n")
    prof = insnprof.profile(insnprof.count_blocks(str(log)), [program])
    assert prof["messages"] == 7 and prof["calls"]["csend"] == 7
    assert prof["rep_rounds"] == 30 and prof["blocks"] == 37 and prof["unknown"] == 0
    n = program.block(csend)
    assert n >= 1
    assert prof["by_fn"]["csend"] == 7 * n
    assert prof["by_fn"][program.function(rep)] >= 30      # one instruction a round
    assert prof["total"] == 7 * n + 30


def test_a_block_at_no_instruction_is_counted_apart(program, tmp_path):
    log = tmp_path / "exec.log"
    log.write_text(exec_line(0x1234) * 3)
    prof = insnprof.profile(insnprof.count_blocks(str(log)), [program])
    assert prof["unknown"] == 3 and prof["total"] == 0 and prof["messages"] == 0


def test_a_stripped_program_is_refused():
    if not os.path.exists(insnprof.NXPING):
        pytest.skip("build/nx-tern/nxping not built (make all)")
    with pytest.raises(SystemExit) as e:
        insnprof.Image(insnprof.NXPING)
    assert "no code or no symbols" in str(e.value)


@pytest.mark.skipif(_net_usable() is not None, reason=str(_net_usable()))
def test_a_run_names_the_message_paths_functions(tmp_path):
    out = tmp_path / "insnprof.csv"
    r = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "insnprof.py"),
                        "--window", "0.3", "--out", str(out)],
                       capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stdout + r.stderr
    messages = int(re.search(r"messages in the window: (\d+)", r.stdout).group(1))
    assert messages >= 10, r.stdout
    rows = {row["what"]: row for row in csv.DictReader(open(out))}
    assert float(rows["total instructions"]["per_message"]) > 0
    # A message is one csend of the answering rank: it takes one crecv too
    # (give or take one at the window's edges), every message enters the
    # kernel at least once (the send's system call), and the Portals
    # library's frame reception runs.
    assert abs(float(rows["crecv"]["calls_per_message"]) - 1) <= 0.15, rows["crecv"]
    assert float(rows["syscall_entry"]["calls_per_message"]) >= 1, rows["syscall_entry"]
    assert "rx_one" in rows or "ptl_lib_rx" in rows, sorted(rows)
    shares = sum(float(row["share"]) for w, row in rows.items()
                 if w not in ("total instructions", "blocks", "rep rounds"))
    assert abs(shares - 1) < 0.01, shares
