"""Shared fixtures: the build, and running programs on a Tern node."""
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="session", autouse=True)
def built():
    """Everything the tests use, built once (a no-op after `make`)."""
    subprocess.run(["make", "-s", "-C", ROOT, "all"], check=True)


# Slow parts (@pytest.mark.slow) run with --run-slow or TERN_SLOW=1;
# `python3 -m pytest tests` alone skips them, to keep the suite under 20
# minutes on two cores.
def pytest_addoption(parser):
    parser.addoption("--run-slow", action="store_true",
                     help="also run tests marked slow (or TERN_SLOW=1)")


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: long; runs with --run-slow or TERN_SLOW=1")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--run-slow") or os.environ.get("TERN_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason="slow: --run-slow or TERN_SLOW=1 runs it")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
