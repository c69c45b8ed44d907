"""What Tern's MPI offers is what it does: a call mpi.h declares links (for
Tern nodes and for the Linux host), a call it does not declare fails to link
naming the call, and no call is a stub that returns MPI_SUCCESS without
doing anything (a program would go on with a wrong answer).  No root, no
cluster: compiles, links and reads the sources, in seconds."""
import os
import re
import subprocess

import pytest

from nodes import ROOT

MPI_H = os.path.join(ROOT, "libmpi", "include", "mpi.h")
SRC = os.path.join(ROOT, "libmpi", "src")
MPICC = os.path.join(ROOT, "build", "bin", "tern-mpicc")
LIBS = [os.path.join(ROOT, "build", "libmpi", lib) for lib in ("libmpi.a", "libmpi-tern.a")]

# MPI-3.1 calls Tern's MPI does not have, a few from each area docs/mpi.md
# lists as absent (and MPI_Alloc_mem, which codes often call).
ABSENT = ["MPI_Comm_spawn", "MPI_Open_port", "MPI_Comm_connect", "MPI_Publish_name",
          "MPI_Pready", "MPI_Comm_join", "MPI_Comm_disconnect",
          "MPI_Comm_spawn_multiple", "MPI_Neighbor_alltoall_init", "MPI_Win_allocate_shared_c",
          "MPI_Type_size_c", "MPI_Register_datarep",
          "MPI_Intercomm_create_from_groups", "MPI_Bcast_c", "MPI_Unpublish_name",
          "MPI_Comm_accept", "MPI_Lookup_name", "MPI_Win_shared_query_c",
          "MPI_Send_c",
          "MPI_Psend_init", "PMPI_Pready"]


def declared():
    text = open(MPI_H).read()
    return sorted(set(re.findall(r"^(?:int|double)\s+(MPI_\w+)\s*\(", text, re.M)))


def defined():
    """Functions the two builds of the library define, per build."""
    out = []
    for lib in LIBS:
        nm = subprocess.run(["nm", "--defined-only", lib], capture_output=True, text=True,
                            check=True).stdout
        out.append({p[2] for p in (line.split() for line in nm.splitlines())
                    if len(p) == 3 and p[1] in "TW"})
    return out


def test_mpi_h_declares_about_what_docs_mpi_md_lists():
    names = declared()
    assert len(names) > 130 and "MPI_Gatherv" in names and "MPI_Wtime" in names, names


def test_every_declared_call_is_defined_in_both_builds_with_a_fortran_binding():
    names = declared()
    for syms in defined():
        assert [n for n in names if n not in syms] == []
        # Every one has its Fortran binding too (docs/mpi.md says so).
        assert [n for n in names if n.lower() + "_" not in syms] == []


def test_every_call_has_its_profiling_name_and_a_program_may_define_the_mpi_one():
    """MPI-3.1 14.2: PMPI_x (pmpi_x_) is the library's strong definition and
    MPI_x (mpi_x_) a weak one, so a tool's own MPI_x wins the link
    (tests/mpi/profile.c does that)."""
    names = declared()
    for lib in LIBS:
        nm = subprocess.run(["nm", "--defined-only", lib], capture_output=True, text=True,
                            check=True).stdout
        kind = {p[2]: p[1] for p in (line.split() for line in nm.splitlines()) if len(p) == 3}
        for n in names:
            f = n.lower() + "_"
            assert (kind.get(n), kind.get("P" + n), kind.get(f), kind.get("p" + f)) == \
                ("W", "T", "W", "T"), n


@pytest.mark.parametrize("flags", [[], ["--linux-portals"]])
def test_a_program_taking_every_declared_call_links(tmp_path, flags):
    """Each call's address in a table, and its profiling name's (declared
    by mpi.h too): the linker must find every one."""
    names = declared()
    names = names + ["P" + n for n in names]
    src = tmp_path / "every.c"
    src.write_text("#include <mpi.h>\n#include <stdio.h>\n"
                   "static void (*const calls[])(void) = {\n" +
                   "".join(f"    (void (*)(void)){n},\n" for n in names) +
                   "};\nint main(void)\n{\n    printf(\"%zu\\n\", sizeof calls / sizeof *calls);\n"
                   "    return 0;\n}\n")
    exe = tmp_path / "every"
    r = subprocess.run([MPICC, *flags, "-O0", "-Wall", "-Werror", "-o", str(exe), str(src)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    if not flags:       # a Tern binary: static, not for this host
        return
    # --linux-portals: it runs here (it calls none of them).
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=30)
    assert out.stdout.strip() == str(len(names)), out


def test_every_absent_call_fails_to_link_naming_itself(tmp_path):
    names, syms = set(declared()), defined()
    for n in ABSENT:
        assert n not in names and all(n not in s for s in syms), n
    src = tmp_path / "absent.c"
    src.write_text("#include <mpi.h>\n" + "".join(f"int {n}();\n" for n in ABSENT) +
                   "int main(int c, char **v)\n{\n    MPI_Init(&c, &v);\n" +
                   "".join(f"    {n}();\n" for n in ABSENT) + "    return MPI_Finalize();\n}\n")
    r = subprocess.run([MPICC, "-o", str(tmp_path / "absent"), str(src)], capture_output=True,
                       text=True)
    assert r.returncode != 0
    missing = [n for n in ABSENT if f"undefined reference to `{n}'" not in r.stderr]
    assert missing == [], r.stderr


# ---- silent stubs -----------------------------------------------------------

def bodies(text):
    """(name, body) of every MPI call defined in C text: MPI_x, and mpi_x_
    (Fortran); the library's own mpi_x are not calls."""
    for m in re.finditer(r"^(?:int|double|void|MPI_Aint)\s+(MPI_\w+|mpi_\w+_)\s*\([^)]*\)\s*\{", text,
                         re.M):
        depth, i = 1, m.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        yield m.group(1), text[m.end():i - 1]


# What does nothing: a cast to void, the init check, argument checks, a
# declaration of a handle's struct pointer.
INERT = [r"\(void\)\s*\w+;", r"NEED_INIT\([^;]*\);", r"TRY\(\s*(?:mpi_)?check\w*\([^;]*\)\);",
         r"struct \w+ \*\w+;"]


def silent(body):
    """True when the body, past what does nothing, only returns success."""
    b = re.sub(r"/\*.*?\*/|//[^\n]*", "", body, flags=re.S)
    for pat in INERT:
        b = re.sub(pat, "", b)
    return re.fullmatch(r"\s*(return\s+(MPI_SUCCESS|0)\s*;)?\s*", b) is not None


def test_the_stub_finder_finds_stubs():
    text = ("int MPI_Win_fence(int a, int w)\n{\n    (void)a;\n    (void)w;\n"
            "    NEED_INIT(\"MPI_Win_fence\");\n    return MPI_SUCCESS; /* later */\n}\n"
            "void mpi_win_fence_(int *a, int *w, int *ierr)\n{\n}\n"
            "int MPI_Comm_size(MPI_Comm comm, int *size)\n{\n    struct mcomm *c;\n"
            "    TRY(mpi_check_comm(\"MPI_Comm_size\", comm, &c));\n    *size = c->size;\n"
            "    return MPI_SUCCESS;\n}\n")
    assert [n for n, b in bodies(text) if silent(b)] == ["MPI_Win_fence", "mpi_win_fence_"]


# Calls the standard itself defines to do nothing here.
NO_EFFECT = {"MPI_Pcontrol"}  # MPI-3.1 14.2.4: for a profiler; the library returns at once


def test_no_call_is_a_silent_stub():
    """Every call the library defines is looked at: a function body, or a
    Fortran binding a macro makes to forward to the C call of its name."""
    seen, stubs = set(), []
    for name in sorted(os.listdir(SRC)):
        if not name.endswith(".c"):
            continue
        text = open(os.path.join(SRC, name)).read()
        for fn, body in bodies(text):
            seen.add(fn)
            if silent(body) and fn not in NO_EFFECT:
                stubs.append(f"{name}: {fn}")
        for fn, cname in re.findall(r"^[A-Z]+\((mpi_\w+_), (MPI_\w+)\)$", text, re.M):
            assert fn == cname.lower() + "_", fn
            seen.add(fn)
    assert stubs == []
    for syms in defined():
        calls = {s for s in syms if s.startswith("MPI_") or re.fullmatch(r"mpi_\w+_", s)}
        assert len(calls) > 250 and calls - seen == set()
