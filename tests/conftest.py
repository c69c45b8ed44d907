"""Shared fixtures: the build, and the markers of the suite.

Virtual clusters come from tests/clusters.py, programs on one node from
tests/nodes.py.  Markers (pytest -m):
  cluster  boots a virtual cluster (qemu/cluster; needs root)
  slow     a part that takes long: a 16-node cluster, PXE boots, Linux
           nodes, the benchmark smoke run, tests that wait for a node or
           yod to be given up on
  run_slow longer still (nothing today): skipped unless --run-slow or
           TERN_SLOW=1 (`make test-slow`)
Running times: tests/README.md."""
import os
import shutil
import tempfile

import pytest

from nodes import make



def pytest_configure(config):
    config.addinivalue_line("markers", "cluster: boots a virtual cluster (qemu/cluster, root)")
    config.addinivalue_line("markers", "slow: takes long (big clusters, PXE, Linux nodes, the "
                            "benchmark smoke run, waits for give-up times); -m 'not slow'")
    config.addinivalue_line("markers", "run_slow: runs only with --run-slow or TERN_SLOW=1 "
                            "(the Portals reference programs on Tern nodes)")


@pytest.fixture(scope="session", autouse=True)
def built():
    """Everything the tests use, built once (a no-op after `make`)."""
    make("all")


@pytest.fixture(scope="session", autouse=True)
def node_run_folders_go():
    """Every qemu/run-node the suite starts makes its run folder (console
    log, socket) under a temporary directory of the suite's own (TMPDIR),
    and must remove it however a test stops it: one left behind fails the
    run.  A test that killed its node with SIGKILL left one each run."""
    base = tempfile.mkdtemp(prefix="tern-tests-")
    old = os.environ.get("TMPDIR")
    os.environ["TMPDIR"] = base
    try:
        yield
    finally:
        if old is None:
            del os.environ["TMPDIR"]
        else:
            os.environ["TMPDIR"] = old
        left = sorted(n for n in os.listdir(base) if n.startswith("tern-node-"))
        shutil.rmtree(base, ignore_errors=True)
    assert not left, f"qemu/run-node left its run folder behind: {left}"


# Parts too long for the default run (@pytest.mark.run_slow, also marked
# slow) run only with --run-slow or TERN_SLOW=1 (`make test-slow`), to keep
# `python3 -m pytest tests` under 20 minutes on two cores.
def pytest_addoption(parser):
    parser.addoption("--run-slow", action="store_true",
                     help="also run tests marked run_slow (or TERN_SLOW=1)")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--run-slow") or os.environ.get("TERN_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason="run_slow: --run-slow or TERN_SLOW=1 runs it")
    for item in items:
        if "run_slow" in item.keywords:
            item.add_marker(skip)
