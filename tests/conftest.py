"""Shared fixtures: the build, and running programs on a Tern node."""
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="session", autouse=True)
def built():
    """Everything the tests use, built once (a no-op after `make`)."""
    subprocess.run(["make", "-s", "-C", ROOT, "all"], check=True)
