#!/usr/bin/env bash
# Instructions per call through each ABI layer (issue 20), which a shared, noisy machine does not
# blur as it does nanoseconds: benches/abi_layer_one.c built with PREFIX/bin/mpicc (MPICH ABI),
# mpicc.openmpi (Open MPI 4.1's ABI, on PREFIX's libmpi.so.40) and PREFIX/bin/mpicc -mpi-abi,
# each pattern run as a singleton under valgrind --tool=callgrind at 1000 and 2000 iterations;
# (Ir(2000) - Ir(1000)) / 1000 is the count per iteration. One row per pattern, one column per
# layer; PATTERNS (space-separated) picks some of them.
#
# usage: [PATTERNS='...'] scripts/bench-abi-instructions.sh PREFIX
set -euo pipefail
ROOT="$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/.." && pwd)"
P=$(cd "${1:?usage: scripts/bench-abi-instructions.sh PREFIX}" && pwd)
command -v valgrind >/dev/null || { echo "bench-abi-instructions: valgrind is not installed" >&2; exit 1; }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
src=$ROOT/benches/abi_layer_one.c
layers=(mpich)
"$P/bin/mpicc" -O2 -o "$d/mpich" "$src"
if command -v mpicc.openmpi >/dev/null && mpicc.openmpi -O2 -o "$d/ompi" "$src"; then layers+=(ompi); fi
"$P/bin/mpicc" -mpi-abi -O2 -o "$d/mpi5" "$src" && layers+=(mpi5)
ir() { # ir LAYER PATTERN ITERS: the program's instruction count
    local lp=$P/lib
    [[ $1 == ompi ]] && lp=$P/lib/openmpi-abi:$P/lib
    LD_LIBRARY_PATH=$lp timeout 300 valgrind --tool=callgrind --callgrind-out-file="$d/cg.out" \
        "$d/$1" "$2" "$3" >/dev/null 2>"$d/err" || { echo "bench-abi-instructions: $1 $2 failed:" >&2; tail -5 "$d/err" >&2; return 1; }
    awk '/^(summary|totals):/ {print $2; exit}' "$d/cg.out"
}
patterns=(${PATTERNS:-comm_rank sendrecv8 isend_wait8 send_recv8 probe8 test8 testall8 waitany8})
printf '%-12s' pattern; printf ' %8s' "${layers[@]}"; echo
for p in "${patterns[@]}"; do
    printf '%-12s' "$p"
    for l in "${layers[@]}"; do
        a=$(ir "$l" "$p" 1000) b=$(ir "$l" "$p" 2000)
        printf ' %8s' $(((b - a) / 1000))
    done
    echo
done
