#!/usr/bin/env bash
# Time to spawn N ranks (benches/spawn_time.c): oxmpi in both modes beside MPICH and Open MPI.
set -euo pipefail

OXMPI_ROOT="$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/.." && pwd)"

usage() {
    cat <<'USAGE'
Usage: scripts/bench-spawn.sh --prefix DIR [options]

Builds benches/spawn_time.c with oxmpi's mpicc (an installation made by scripts/install.sh DIR),
mpicc.mpich and mpicc.openmpi. A 1-rank job calls MPI_Comm_spawn of N copies of the program
--reps times; each time runs from the call until a barrier over the new intercommunicator
returned (every child is in the job). The table gives the best and the mean in milliseconds per
implementation and N; "fail" = the spawn failed or the run took longer than --timeout.
Output also goes to target/bench/spawn.txt.

Options:
  --prefix DIR     the oxmpi installation (required)
  --counts LIST    numbers of children, comma-separated (default 1,4,8,16)
  --reps R         spawns per run (default 5)
  --timeout S      time limit per run (default 120)
  -h, --help       show this help
USAGE
}

prefix="" counts="1,4,8,16" reps=5 timeout=120
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix="${2:?}"; shift 2 ;;
        --counts) counts="${2:?}"; shift 2 ;;
        --reps) reps="${2:?}"; shift 2 ;;
        --timeout) timeout="${2:?}"; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "bench-spawn.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
[ -n "$prefix" ] || { echo "bench-spawn.sh: --prefix DIR is required (see --help)" >&2; exit 2; }
IFS=, read -ra ns <<<"$counts"
max=0
for v in "${ns[@]}" "$reps" "$timeout"; do
    [[ "$v" =~ ^[0-9]+$ ]] || { echo "bench-spawn.sh: '$v' is not a non-negative integer" >&2; exit 2; }
done
for n in "${ns[@]}"; do ((n > max)) && max=$n; done

out_dir="$OXMPI_ROOT/target/bench"
mkdir -p "$out_dir"
build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT
src="$OXMPI_ROOT/benches/spawn_time.c"

impls=()
"$prefix/bin/mpicc" -O2 -o "$build/oxmpi" "$src" && impls+=(oxmpi oxmpi-thr) ||
    echo "bench-spawn.sh: oxmpi build failed; skipped" >&2
command -v mpicc.mpich >/dev/null && mpicc.mpich -O2 -o "$build/mpich" "$src" && impls+=(mpich) ||
    echo "bench-spawn.sh: MPICH not available; skipped" >&2
command -v mpicc.openmpi >/dev/null && mpicc.openmpi -O2 -o "$build/ompi" "$src" && impls+=(ompi) ||
    echo "bench-spawn.sh: Open MPI not available; skipped" >&2

# cell IMPL N -> "best/mean" or "fail"
cell() {
    local impl="$1" n="$2" out
    local -a cmd
    case "$impl" in
        oxmpi) cmd=("$prefix/bin/mpiexec" --mode processes -n 1 -usize $((max + 1)) "$build/oxmpi") ;;
        oxmpi-thr) cmd=("$prefix/bin/mpiexec" --mode threads -n 1 -usize $((max + 1)) "$build/oxmpi") ;;
        mpich) cmd=(mpiexec.mpich -n 1 "$build/mpich") ;;
        ompi) cmd=(mpirun.openmpi --allow-run-as-root --oversubscribe -np 1 "$build/ompi") ;;
    esac
    out="$(timeout -k 5 "$timeout" "${cmd[@]}" "$n" "$reps" 2>/dev/null || true)"
    awk '/^spawn / { printf "%s/%s", $5, $8; found = 1 } END { if (!found) printf "fail" }' <<<"$out"
}

{
    echo "# time to spawn N ranks, ms (best/mean of $reps); $(nproc) cores; $(date -u +%Y-%m-%dT%H:%MZ)"
    printf '%-6s' N; for impl in "${impls[@]}"; do printf ' %16s' "$impl"; done; echo
    for n in "${ns[@]}"; do
        printf '%-6s' "$n"
        for impl in "${impls[@]}"; do printf ' %16s' "$(cell "$impl" "$n")"; done
        echo
    done
} | tee "$out_dir/spawn.txt"
