#!/usr/bin/env bash
# Windowed bandwidth and message rate, OSU style (benches/msg_rate.c): oxmpi in both modes beside
# MPICH and Open MPI, with ratios.
set -euo pipefail

OXMPI_ROOT="$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/.." && pwd)"

usage() {
    cat <<'USAGE'
Usage: scripts/bench-rate.sh --prefix DIR [options]

Builds benches/msg_rate.c with oxmpi's mpicc (an installation made by scripts/install.sh DIR),
mpicc.mpich and mpicc.openmpi, and runs it at 2 ranks, the implementations alternating for
--rounds rounds: rank 0 posts a window of --window MPI_Isend of one size, rank 1 as many
MPI_Irecv, both MPI_Waitall, then a 4-byte ack (osu_bw's method). One row per size: messages
per second per implementation (the best round), and oxmpi/best-peer per oxmpi mode (above 1:
oxmpi faster). Output also goes to target/bench/rate.txt.

Options:
  --prefix DIR     the oxmpi installation (required)
  --sizes LIST     message sizes in bytes, space-separated (default "1 8 64 512 4096 32768 262144 1048576")
  --window W       messages per window (default 64)
  --iters N        windows per size (fewer above 64 KiB) (default 200)
  --rounds R       alternating rounds (default 2)
  --timeout S      time limit per run (default 120)
  -h, --help       show this help
USAGE
}

prefix="" sizes="1 8 64 512 4096 32768 262144 1048576" window=64 iters=200 rounds=2 timeout=120
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix="${2:?}"; shift 2 ;;
        --sizes) sizes="${2:?}"; shift 2 ;;
        --window) window="${2:?}"; shift 2 ;;
        --iters) iters="${2:?}"; shift 2 ;;
        --rounds) rounds="${2:?}"; shift 2 ;;
        --timeout) timeout="${2:?}"; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "bench-rate.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
[ -n "$prefix" ] || { echo "bench-rate.sh: --prefix DIR is required (see --help)" >&2; exit 2; }
read -ra szs <<<"$sizes"
for v in "${szs[@]}" "$window" "$iters" "$rounds" "$timeout"; do
    [[ "$v" =~ ^[0-9]+$ ]] || { echo "bench-rate.sh: '$v' is not a non-negative integer" >&2; exit 2; }
done

out_dir="$OXMPI_ROOT/target/bench"
mkdir -p "$out_dir"
build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT
src="$OXMPI_ROOT/benches/msg_rate.c"

impls=()
"$prefix/bin/mpicc" -O2 -o "$build/oxmpi" "$src" && impls+=(oxmpi oxmpi-thr) ||
    echo "bench-rate.sh: oxmpi build failed; skipped" >&2
command -v mpicc.mpich >/dev/null && mpicc.mpich -O2 -o "$build/mpich" "$src" 2>/dev/null && impls+=(mpich) ||
    echo "bench-rate.sh: MPICH not available; skipped" >&2
command -v mpicc.openmpi >/dev/null && mpicc.openmpi -O2 -o "$build/ompi" "$src" 2>/dev/null && impls+=(ompi) ||
    echo "bench-rate.sh: Open MPI not available; skipped" >&2

declare -A best=()
for ((r = 0; r < rounds; r++)); do
    for impl in "${impls[@]}"; do
        case "$impl" in
            oxmpi) cmd=("$prefix/bin/mpiexec" --mode processes -n 2 "$build/oxmpi") ;;
            oxmpi-thr) cmd=("$prefix/bin/mpiexec" --mode threads -n 2 "$build/oxmpi") ;;
            mpich) cmd=(mpiexec.mpich -n 2 "$build/mpich") ;;
            ompi) cmd=(mpirun.openmpi --allow-run-as-root -np 2 "$build/ompi") ;;
        esac
        while read -r s mbs rate; do
            k="$impl:$s"
            if [ -z "${best[$k]:-}" ] || awk -v a="$rate" -v b="${best[$k]}" 'BEGIN { exit !(a > b) }'; then best[$k]="$rate"; fi
        done < <(timeout -k 5 "$timeout" "${cmd[@]}" "$iters" "$window" "${szs[@]}" 2>/dev/null || true)
    done
done

{
    echo "# message rate, 2 ranks, window $window, messages/s (best of $rounds); $(nproc) cores; $(date -u +%Y-%m-%dT%H:%MZ)"
    printf '%-9s' size; for impl in "${impls[@]}"; do printf ' %12s' "$impl"; done; printf ' %10s %10s\n' proc/peer thr/peer
    for s in "${szs[@]}"; do
        printf '%-9s' "$s"
        for impl in "${impls[@]}"; do printf ' %12s' "${best[$impl:$s]:--}"; done
        awk -v p="${best[oxmpi:$s]:-0}" -v t="${best[oxmpi-thr:$s]:-0}" -v m="${best[mpich:$s]:-0}" -v o="${best[ompi:$s]:-0}" \
            'BEGIN { peer = m > o ? m : o; if (peer > 0) printf " %10s %10s\n", sprintf("x%.2f", p / peer), sprintf("x%.2f", t / peer); else printf " %10s %10s\n", "-", "-" }'
    done
} | tee "$out_dir/rate.txt"
