#!/usr/bin/env bash
# The ABI layers' cost (issue 20): an 8-byte ping-pong (benches/abi_pingpong.c) through oxmpi's
# MPICH ABI, Open MPI 4.1's ABI and the MPI-5 standard ABI, in both rank modes; and the same
# builds of benches/abi_layer.c (one rank: ns per call, less exposed to scheduling noise).
set -euo pipefail

OXMPI_ROOT="$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/.." && pwd)"

usage() {
    cat <<'USAGE'
Usage: scripts/bench-abi.sh --prefix DIR [options]      (also: scripts/bench.sh --only abi)

Builds benches/abi_pingpong.c three times: with DIR/bin/mpicc (MPICH ABI, libmpi.so.12), with
mpicc.openmpi (Open MPI 4.1's ABI: NEEDED libmpi.so.40, which DIR/bin/mpiexec replaces by
oxmpi's) and with DIR/bin/mpicc -mpi-abi (the MPI-5 standard ABI, libmpi_abi.so.1). All run
under DIR/bin/mpiexec -n 2 in each mode, the builds alternating for --rounds rounds. Each run
reports ns per round trip, the fastest of its repetitions; the table has the best run per layer
and mode, and each layer's difference to the MPICH ABI (the layer's cost per round trip: two
sends and two receives). Then benches/abi_layer.c, built the same three ways and run at one
rank (processes mode) in the same rounds: ns per call of MPI_Comm_rank, an 8-byte MPI_Sendrecv
to self and MPI_Irecv + MPI_Isend + MPI_Waitall, best per layer. On a loaded machine the
ping-pong moves by hundreds of ns between runs; the one-rank calls show a few ns.
Output also goes to target/bench/abi.txt.
Per-call instruction counts instead (callgrind, not blurred by load):
scripts/bench-abi-instructions.sh DIR.

Options:
  --prefix DIR     the oxmpi installation (required)
  --rounds R       alternating rounds (default 5)
  --iters N        round trips per repetition (default 20000)
  --reps N         repetitions per run (default 10)
  --modes LIST     rank modes (default "processes threads")
  --timeout S      time limit per run (default 120)
  -h, --help       show this help
USAGE
}

prefix="" rounds=5 iters=20000 reps=10 modes="processes threads" timeout=120
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix="${2:?}"; shift 2 ;;
        --rounds) rounds="${2:?}"; shift 2 ;;
        --iters) iters="${2:?}"; shift 2 ;;
        --reps) reps="${2:?}"; shift 2 ;;
        --modes) modes="${2:?}"; shift 2 ;;
        --timeout) timeout="${2:?}"; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "bench-abi.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
[ -n "$prefix" ] || { echo "bench-abi.sh: --prefix DIR is required (see --help)" >&2; exit 2; }
for v in "$rounds" "$iters" "$reps" "$timeout"; do
    [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "bench-abi.sh: '$v' is not a positive integer" >&2; exit 2; }
done
for m in $modes; do
    case "$m" in processes | threads) ;; *) echo "bench-abi.sh: --modes takes processes and threads" >&2; exit 2 ;; esac
done

out_dir="$OXMPI_ROOT/target/bench"
mkdir -p "$out_dir"
build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT
src="$OXMPI_ROOT/benches/abi_pingpong.c"
calls_src="$OXMPI_ROOT/benches/abi_layer.c"

layers=()
declare -A label=([mpich]="MPICH ABI (libmpi.so.12)" [ompi]="Open MPI ABI (libmpi.so.40)" [mpi5]="MPI-5 ABI (libmpi_abi.so.1)")
"$prefix/bin/mpicc" -O2 -o "$build/mpich" "$src" && "$prefix/bin/mpicc" -O2 -o "$build/calls-mpich" "$calls_src" && layers+=(mpich) ||
    echo "bench-abi.sh: the MPICH-ABI build failed; skipped" >&2
if command -v mpicc.openmpi >/dev/null && mpicc.openmpi -O2 -o "$build/ompi" "$src" 2>/dev/null &&
    mpicc.openmpi -O2 -o "$build/calls-ompi" "$calls_src" 2>/dev/null; then
    layers+=(ompi)
else
    echo "bench-abi.sh: mpicc.openmpi not available; the Open MPI ABI is skipped" >&2
fi
"$prefix/bin/mpicc" -mpi-abi -O2 -o "$build/mpi5" "$src" && "$prefix/bin/mpicc" -mpi-abi -O2 -o "$build/calls-mpi5" "$calls_src" && layers+=(mpi5) ||
    echo "bench-abi.sh: the MPI-5 ABI build failed; skipped" >&2
[ "${#layers[@]}" -gt 0 ] || { echo "bench-abi.sh: nothing built" >&2; exit 1; }

declare -A best=()
keep_min() { # keep_min KEY VALUE
    if [ -z "${best[$1]:-}" ] || awk -v a="$2" -v b="${best[$1]}" 'BEGIN { exit !(a < b) }'; then best[$1]="$2"; fi
}
for ((r = 0; r < rounds; r++)); do
    for mode in $modes; do
        for l in "${layers[@]}"; do
            ns="$(timeout -k 5 "$timeout" "$prefix/bin/mpiexec" --mode "$mode" -n 2 "$build/$l" "$iters" "$reps" 2>/dev/null |
                awk '$1 == "rt_ns" { print $2 }' || true)"
            [ -n "$ns" ] || { echo "bench-abi.sh: $l in $mode mode gave no result (round $((r + 1)))" >&2; continue; }
            k="$l:$mode"
            keep_min "$k" "$ns"
        done
    done
    for l in "${layers[@]}"; do
        while read -r what ns; do
            keep_min "$l:$what" "$ns"
        done < <(timeout -k 5 "$timeout" "$prefix/bin/mpiexec" --mode processes -n 1 "$build/calls-$l" 200000 15 2>/dev/null || true)
    done
done

{
    echo "# 8-byte ping-pong through each ABI layer, ns per round trip (best of $rounds runs, each the"
    echo "# fastest of $reps x $iters round trips); (+d) = difference to the MPICH ABI; $(nproc) cores,"
    echo "# load $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%Y-%m-%dT%H:%MZ)"
    printf '%-30s' "layer"
    for mode in $modes; do printf '%20s' "$mode"; done
    echo
    row() { # row LAYER KEY...: best[LAYER:KEY] per column, with the difference to the MPICH ABI
        local l="$1" c v base cell
        shift
        printf '%-30s' "${label[$l]}"
        for c in "$@"; do
            v="${best[$l:$c]:-}" base="${best[mpich:$c]:-}"
            if [ -z "$v" ]; then
                cell="n/a"
            elif [ "$l" = mpich ] || [ -z "$base" ]; then
                cell="$v"
            else
                cell="$(awk -v a="$v" -v b="$base" 'BEGIN { printf "%s (%+.1f)", a, a - b }')"
            fi
            printf '%20s' "$cell"
        done
        echo
    }
    for l in "${layers[@]}"; do row "$l" $modes; done
    echo
    echo "# one rank (benches/abi_layer.c), ns per call, best of $rounds runs of 15 x 200000 calls"
    printf '%-30s%20s%20s%20s\n' "layer" "comm_rank" "sendrecv8" "isend_wait8"
    for l in "${layers[@]}"; do row "$l" comm_rank sendrecv8 isend_wait8; done
} | tee "$out_dir/abi.txt"
