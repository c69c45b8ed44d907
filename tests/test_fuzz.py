"""Issue 19, fuzzing as a habit: a short smoke of every libFuzzer harness
of tests/fuzz/ (the Portals receive path, the kernel's ELF loader, the file
server, allocd's and yod's message handling), and every input that once
crashed one (tests/fuzz/regress/NAME/) replayed.  A harness that crashes
fails its test with libFuzzer's report.  `make fuzz` is the long run."""
import os
import sys

import pytest

from nodes import make

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "fuzz"))
import run as fuzzrun  # noqa: E402

SMOKE_RUNS = int(os.environ.get("TERN_FUZZ_SMOKE_RUNS", "20000"))
# The file server's and allocd's inputs make real file-system calls (and
# allocd fsyncs its database): a few hundred a second, so their smoke is
# shorter to keep the suite inside its CI budget.  `make fuzz` runs 1,000,000.
SLOW = {"fileserver", "allocd"}


def smoke_runs(name):
    return max(1, SMOKE_RUNS // 5) if name in SLOW else SMOKE_RUNS
BUILD = os.path.join(ROOT, "build", "fuzz")


@pytest.fixture(scope="module")
def built():
    make("-j2", "fuzz-build")
    return BUILD


@pytest.mark.parametrize("name", fuzzrun.TARGETS)
def test_replay_kept_crashes(built, name):
    ok, out = fuzzrun.replay(built, name)
    assert ok, out[-6000:]


@pytest.mark.parametrize("name", fuzzrun.TARGETS)
def test_fuzz_smoke(built, name, tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    runs = smoke_runs(name)
    r = fuzzrun.run_one(built, name, runs, str(tmp_path / "corpus"),
                        str(tmp_path / "artifacts"))
    assert not r["crashed"], f"{name} crashed: {r['artifacts']}\n{r['output'][-6000:]}"
    assert r["execs"] >= runs
