"""Shared fixtures: the build, and the markers of the suite.

Virtual clusters come from tests/clusters.py, programs on one node from
tests/nodes.py.  Markers (pytest -m):
  cluster  boots a virtual cluster (qemu/cluster; needs root)
  slow     a part that takes long: a 16-node cluster, PXE boots, Linux
           nodes, the benchmark smoke run, tests that wait for a node or
           yod to be given up on
Running times: tests/README.md."""
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def pytest_configure(config):
    config.addinivalue_line("markers", "cluster: boots a virtual cluster (qemu/cluster, root)")
    config.addinivalue_line("markers", "slow: takes long (big clusters, PXE, Linux nodes, the "
                            "benchmark smoke run, waits for give-up times); -m 'not slow'")


@pytest.fixture(scope="session", autouse=True)
def built():
    """Everything the tests use, built once (a no-op after `make`)."""
    subprocess.run(["make", "-s", "-C", ROOT, "all"], check=True)
