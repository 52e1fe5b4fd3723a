#!/usr/bin/env python3
"""Developer tool (not used by the build): print one normalized C prototype per line for every
MPI_* function exported by an MPICH library, taken from MPICH's preprocessed headers.

Used once to produce the prototype section of include/mpi.h; kept so the list can be refreshed.
The C signatures are the ABI, so they must match MPICH exactly; formatting is ours.

usage: scripts/extract-mpich-protos.py [libmpich.so.12] [mpich include dir]
"""
import re, subprocess, sys

lib = sys.argv[1] if len(sys.argv) > 1 else "/usr/lib/x86_64-linux-gnu/libmpich.so.12"
inc = sys.argv[2] if len(sys.argv) > 2 else "/usr/include/x86_64-linux-gnu/mpich"

nm = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True, check=True).stdout
exported = set()
for line in nm.splitlines():
    f = line.split()
    if len(f) == 3 and f[1] in "TW" and f[2].startswith("MPI_"):
        exported.add(f[2])

pre = subprocess.run(["gcc", "-E", "-P", "-DMPICH_SKIP_MPICXX", "-I", inc, "-x", "c", "-"],
                     input="#include <mpi.h>\n", capture_output=True, text=True, check=True).stdout
# Split the preprocessed text into top-level declarations.
text = re.sub(r"\s+", " ", pre)
protos = {}
for decl in text.split(";"):
    decl = decl.strip()
    m = re.match(r"^(?:extern )?([A-Za-z_][A-Za-z0-9_ ]*?\**)\s*\b(MPI_[A-Za-z0-9_]+)\s*\((.*)\)\s*(?:__attribute__.*)?$", decl)
    if not m:
        continue
    ret, name, args = m.group(1).strip(), m.group(2), m.group(3).strip()
    if name not in exported or name in protos:
        continue
    args = re.sub(r"\s*,\s*", ", ", args)
    args = re.sub(r"\s*\*\s*", " *", args).replace("( ", "(").replace(" )", ")")
    args = re.sub(r"\* +", "*", args)
    protos[name] = f"{ret} {name}({args});"

missing = sorted(exported - set(protos))
if missing:
    sys.exit("no prototype found for: " + " ".join(missing))
for name in sorted(protos):
    print(protos[name])
