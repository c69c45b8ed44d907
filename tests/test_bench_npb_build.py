"""bench/ternbench/npb.py builds NPB for Tern once into a scratch directory
and keeps the programs; it must build one again when a library it links
changed.  No cluster, no NPB sources: files made here."""
import os
import sys

from nodes import ROOT

sys.path.insert(0, os.path.join(ROOT, "bench"))
from ternbench import npb  # noqa: E402


def test_an_npb_program_older_than_a_library_it_links_is_built_again(tmp_path):
    """bench/npb.py and tests/test_npb.py keep NPB programs built in their
    scratch directory; one linked before Tern's MPI, libmsg or Portals
    changed was run as it was (NPB's makefiles do not know those libraries),
    so `make bench` could measure old code."""
    prog, lib = tmp_path / "cg.A.x", tmp_path / "libmsg.a"
    assert npb.stale(str(prog), [str(lib)])         # never built
    lib.write_text("old")
    prog.write_text("linked after")
    os.utime(lib, (1000, 1000))
    os.utime(prog, (2000, 2000))
    assert not npb.stale(str(prog), [str(lib)])
    os.utime(lib, (3000, 3000))                     # the library changed since
    assert npb.stale(str(prog), [str(lib)])
    assert not npb.stale(str(prog), [str(tmp_path / "absent.a")])
