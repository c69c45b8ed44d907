"""How yod tells a program that may start threads (one rank per node by
default) from one that does not (a rank per core): its symbol table, read
by yod/program.c.  Real programs get the right answer (pthreads in glibc
and musl, OpenMP, Go; plain C, NX and MPI programs; a stripped copy counts
as threaded); damaged copies of a program (cut short, section headers and
symbols changed) are read without a fault under the address and
undefined-behaviour sanitizers (tests/yod/threads_check.c).  The choice
in a job: tests/test_kernel_smp.py."""
import os
import shutil
import subprocess

import pytest

from nodes import ROOT, program

FLAGS = ["-std=gnu11", "-O1", "-g", "-Wall", "-Wextra", "-Werror",
         "-fsanitize=address,undefined", "-fno-sanitize-recover=all"]


@pytest.fixture(scope="module")
def checker(tmp_path_factory):
    d = tmp_path_factory.mktemp("yodthreads")
    exe = d / "threads_check"
    subprocess.run(["gcc", *FLAGS, "-Iyod", "-Iinclude", "-Iportals/include",
                    "tests/yod/threads_check.c", "yod/program.c", "common/sha256.c",
                    "-o", str(exe)], cwd=ROOT, check=True, capture_output=True, text=True,
                   timeout=300)
    return d, exe


def test_programs_and_damaged_copies(checker, tmp_path):
    d, exe = checker
    stripped = tmp_path / "ranks-stripped"
    subprocess.run(["strip", "-o", str(stripped), program("ranks-musl")], check=True)
    omp = tmp_path / "omp"
    (tmp_path / "omp.c").write_text("#include <stdio.h>\nint main(void){int n=0;\n"
                                    "#pragma omp parallel reduction(+:n)\nn++;\n"
                                    "printf(\"%d\\n\",n);return 0;}\n")
    subprocess.run(["gcc", "-fopenmp", "-static", "-O2", str(tmp_path / "omp.c"), "-o",
                    str(omp)], check=True, capture_output=True)
    progs = [f"{program('ranks-musl')}=no", f"{program('ranks-glibc')}=no",
             f"{os.path.join(ROOT, 'build', 'nx-tern', 'pingpong')}=no",
             f"{os.path.join(ROOT, 'build', 'mpi-tern', 'coll')}=no",
             f"{program('threads-glibc')}=yes", f"{program('threads-musl')}=yes",
             f"{omp}=yes", f"{stripped}=yes"]
    go = shutil.which("go")
    if go:
        (tmp_path / "m.go").write_text('package main\nimport "fmt"\nfunc main(){fmt.Println(1)}\n')
        subprocess.run([go, "build", "-o", str(tmp_path / "gohello"), str(tmp_path / "m.go")],
                       check=True, capture_output=True, cwd=tmp_path, timeout=300,
                       env=dict(os.environ, CGO_ENABLED="0", GOCACHE=str(tmp_path / "gocache"),
                                HOME=str(tmp_path)))
        progs.append(f"{tmp_path / 'gohello'}=yes")
    r = subprocess.run([str(exe), str(tmp_path / "scratch"), *progs], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.startswith("ok "), r.stdout + r.stderr
