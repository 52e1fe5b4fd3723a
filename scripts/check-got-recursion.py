#!/usr/bin/env python3
"""Fails when an ABI layer's function reaches an MPI_/PMPI_ function through the GOT or PLT.

usage: scripts/check-got-recursion.py LIB...   (liboxmpi.so and the layer shims)

A program of another ABI (libmpi.so.40, libmpi_abi.so.1) has that layer's MPI_X and PMPI_X
first in its symbol scope: a call from liboxmpi.so to MPI_X or PMPI_X through the GOT/PLT
lands in the layer's MPI_X, not the MPICH-ABI one. Once, with the wrappers inlined, the
compiler turned oxompi_MPI_Wtime into `jmp *PMPI_Wtime@GOT`, which went back to the shim's
PMPI_Wtime -> oxompi_MPI_Wtime: an endless loop. So in every function named ox*_MPI_*,
MPI_* or PMPI_* (layer wrappers, engine exports, shims) no call or jump may go through a GOT
slot or PLT entry bound to an MPI_/PMPI_ function. Direct (link-time bound) calls are fine.
"""
import re
import subprocess
import sys

CHECKED = re.compile(r"^(ox[a-z0-9]*_)?P?MPI_\w+$")
TARGET = re.compile(r"^P?MPI_\w+$")


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def check(lib):
    # Dynamic function symbols, and which GOT slot is bound to which symbol.
    funcs = set()
    for line in run("readelf", "-W", "--dyn-syms", lib).splitlines():
        f = line.split()
        if len(f) >= 8 and f[3] == "FUNC":
            funcs.add(f[7].split("@")[0])
    got = {}
    for line in run("readelf", "-W", "-r", lib).splitlines():
        f = line.split()
        if len(f) >= 5 and f[2] in ("R_X86_64_GLOB_DAT", "R_X86_64_JUMP_SLOT"):
            got[int(f[0], 16)] = f[4].split("@")[0]
    bad, fn = [], None
    for line in run("objdump", "-d", "--no-show-raw-insn", lib).splitlines():
        m = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if m:
            # A PLT stub (`X@plt`) is no function of the library.
            fn = None if "@plt" in m.group(1) else m.group(1).split("@")[0]
            continue
        if fn is None or not CHECKED.match(fn) or not re.search(r"\s(call|jmp)\w*\s", line):
            continue
        target = None
        m = re.search(r"<([^>+]+)@plt>", line)
        if m:
            target = m.group(1)
        elif "(%rip)" in line and "*" in line:
            m = re.search(r"#\s*([0-9a-f]+)", line)
            target = got.get(int(m.group(1), 16)) if m else None
        if target and TARGET.match(target) and target in funcs:
            bad.append(f"{lib}: {fn} reaches {target} through the GOT/PLT: {line.strip()}")
    return bad


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    bad = [b for lib in sys.argv[1:] for b in check(lib)]
    for b in bad[:50]:
        print(b, file=sys.stderr)
    if bad:
        sys.exit(f"check-got-recursion: {len(bad)} calls through the GOT/PLT to MPI_/PMPI_ functions")
    print(f"check-got-recursion: ok ({' '.join(sys.argv[1:])})")


if __name__ == "__main__":
    main()
