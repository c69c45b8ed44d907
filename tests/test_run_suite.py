"""tests/run_suite.py, what `make test` runs: test files on several pytest
workers at once, every file's result, the failing files' output, and an exit
status that says whether anything failed.  The files here are throw-away
ones in tmp_path (not the suite's conftest: no build, no clusters)."""
import os
import signal
import subprocess
import sys
import time

from nodes import ROOT

RUNNER = os.path.join(ROOT, "tests", "run_suite.py")


def write(path, text):
    path.write_text(text)
    return str(path)


def run(*args, timeout=120):
    return subprocess.run([sys.executable, RUNNER, *args], capture_output=True, text=True,
                          timeout=timeout)


def test_every_file_runs_and_a_failing_one_fails_the_run_with_its_output(tmp_path):
    good = write(tmp_path / "test_good.py", "def test_a():\n    pass\n\n"
                 "def test_b():\n    pass\n")
    bad = write(tmp_path / "test_bad.py", "def test_c():\n    assert 6 * 7 == 41, 'sums wrong'\n")
    skip = write(tmp_path / "test_skip.py", "import pytest\n\n@pytest.mark.skip(reason='x')\n"
                 "def test_d():\n    pass\n")
    r = run("-j", "2", good, bad, skip)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "3 files on 2 workers" in r.stdout
    assert "test_good.py: 2 passed" in r.stdout
    assert "test_bad.py: 1 failed" in r.stdout and "FAILED (pytest exit 1)" in r.stdout
    assert "test_skip.py: 1 skipped" in r.stdout
    # The failing file's own output, with pytest's reason, after the run.
    assert "sums wrong" in r.stdout
    last = r.stdout.strip().splitlines()[-1]
    assert last.startswith("2 passed, 1 failed, 1 skipped in ") or \
        set(last.split(" in ")[0].split(", ")) == {"2 passed", "1 failed", "1 skipped"}, last
    assert "FAILED files:" in last and "test_bad.py" in last

    r = run("-j", "2", good, skip)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "FAILED" not in r.stdout


def test_pytest_options_reach_every_worker_and_a_file_with_nothing_chosen_is_no_failure(tmp_path):
    one = write(tmp_path / "test_one.py", "def test_apple():\n    pass\n\n"
                "def test_pear():\n    pass\n")
    two = write(tmp_path / "test_two.py", "def test_plum():\n    pass\n")
    r = run("-j2", "-k", "apple or plum", one, two)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "test_one.py: 1 passed, 1 deselected" in r.stdout
    assert "test_two.py: 1 passed" in r.stdout
    r = run("-k", "apple", one, two)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "test_two.py: 1 deselected" in r.stdout


def test_bad_arguments_are_refused(tmp_path):
    r = run("-j", "none")
    assert r.returncode == 2 and "-j needs a number of workers, not 'none'" in r.stderr
    r = run(str(tmp_path / "test_missing.py"))
    assert r.returncode == 2 and "no such test file" in r.stderr


def test_ctrl_c_ends_the_workers_with_their_teardowns(tmp_path):
    """A Ctrl-C (SIGINT to the runner) must let each worker's pytest run its
    teardowns, where the suite's clusters are taken down: on SIGTERM pytest
    would leave them standing."""
    marks = tmp_path / "marks"
    marks.mkdir()
    files = [write(tmp_path / f"test_wait{i}.py", f"""
import os, time, pytest

@pytest.fixture
def cluster():
    open(os.path.join({str(marks)!r}, "up{i}"), "w").close()
    yield
    open(os.path.join({str(marks)!r}, "down{i}"), "w").close()

def test_long(cluster):
    time.sleep(60)
""") for i in range(2)]
    p = subprocess.Popen([sys.executable, RUNNER, "-j", "2", *files], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while len(os.listdir(marks)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert sorted(os.listdir(marks)) == ["up0", "up1"]
        began = time.monotonic()
        os.kill(p.pid, signal.SIGINT)
        out, _ = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    assert time.monotonic() - began < 20, out
    assert p.returncode == 130, out
    assert sorted(os.listdir(marks)) == ["down0", "down1", "up0", "up1"], out
