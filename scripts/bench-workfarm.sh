#!/usr/bin/env bash
# Work-farm throughput (c-tests/workfarm demo) as Calculate threads and ranks grow, and the CPU
# the progress thread takes while the Calculate threads work. See --help.
set -euo pipefail

OXMPI_ROOT="$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/.." && pwd)"

usage() {
    cat <<'USAGE'
Usage: scripts/bench-workfarm.sh --prefix DIR [options]

Builds c-tests/workfarm/demo_integrate.c + workfarm.c with oxmpi's mpicc (an installation made
by scripts/install.sh DIR) and mpicc.mpich, and measures:
  1. throughput (items/s) on 1 rank with 1, 2, 4 Calculate threads;
  2. throughput with 1, 2, 4, 8 ranks (binary tree, --fanout 2) and 1 Calculate thread each;
  3. the progress thread's CPU time (CLOCK_THREAD_CPUTIME_ID) over the run's wall time, on 4
     ranks whose items sleep (--sleep-us): the MPI thread is mostly idle, so this is its
     polling cost with the adaptive back-off.
Implementations: oxmpi (processes), oxmpi-thr (threads), mpich. The best of --reps runs is
shown. The machine's cores bound the throughput (2 cores: flat beyond 2 threads in total).
Output also goes to target/bench/workfarm.txt.

Options:
  --prefix DIR     the oxmpi installation (required)
  --items M        items per run (default 4000)
  --points P       points (cube additions) per item (default 200000, about 0.1 ms)
  --sleep-us U     per-item sleep of part 3 (default 20000)
  --reps R         runs per configuration (default 3)
  --only NAMES     comma-separated subset of: oxmpi,oxmpi-thr,mpich
  --timeout S      time limit per run (default 120)
  -h, --help       show this help
USAGE
}

prefix="" items=4000 points=200000 sleep_us=20000 reps=3 only="oxmpi,oxmpi-thr,mpich" timeout=120
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix="${2:?}"; shift 2 ;;
        --items) items="${2:?}"; shift 2 ;;
        --points) points="${2:?}"; shift 2 ;;
        --sleep-us) sleep_us="${2:?}"; shift 2 ;;
        --reps) reps="${2:?}"; shift 2 ;;
        --only) only="${2:?}"; shift 2 ;;
        --timeout) timeout="${2:?}"; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "bench-workfarm.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
[ -n "$prefix" ] || { echo "bench-workfarm.sh: --prefix DIR is required (see --help)" >&2; exit 2; }
for v in "$items" "$points" "$sleep_us" "$reps" "$timeout"; do
    [[ "$v" =~ ^[0-9]+$ ]] || { echo "bench-workfarm.sh: '$v' is not a non-negative integer" >&2; exit 2; }
done

out_dir="$OXMPI_ROOT/target/bench"
mkdir -p "$out_dir"
report="$out_dir/workfarm.txt"
build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT
src=("$OXMPI_ROOT/c-tests/workfarm/demo_integrate.c" "$OXMPI_ROOT/c-tests/workfarm/workfarm.c")

impls=()
want() { [[ ",$only," == *",$1,"* ]]; }
if want oxmpi || want oxmpi-thr; then
    if "$prefix/bin/mpicc" -O2 -o "$build/oxmpi" "${src[@]}" -pthread; then
        want oxmpi && impls+=(oxmpi)
        want oxmpi-thr && impls+=(oxmpi-thr)
    else
        echo "bench-workfarm.sh: oxmpi build failed; skipped" >&2
    fi
fi
if want mpich; then
    if command -v mpicc.mpich >/dev/null && mpicc.mpich -O2 -o "$build/mpich" "${src[@]}" -pthread; then
        impls+=(mpich)
    else
        echo "bench-workfarm.sh: MPICH not available; skipped" >&2
    fi
fi

# run IMPL N ARGS... -> the demo's stdout (empty on failure)
run() {
    local impl="$1" n="$2"; shift 2
    local -a cmd
    case "$impl" in
        oxmpi) cmd=("$prefix/bin/mpiexec" --mode processes -n "$n" "$build/oxmpi") ;;
        oxmpi-thr) cmd=("$prefix/bin/mpiexec" --mode threads -n "$n" "$build/oxmpi") ;;
        mpich) cmd=(mpiexec.mpich -n "$n" "$build/mpich") ;;
    esac
    timeout -k 5 "$timeout" "${cmd[@]}" "$@" 2>/dev/null || true
}

# best (shortest) time of $reps runs -> "items/s" or "fail"
throughput() {
    local impl="$1" n="$2"; shift 2
    local best="" t r
    for ((r = 0; r < reps; r++)); do
        t="$(run "$impl" "$n" --items "$items" --points "$points" "$@" | awk '/^time:/ { print $2 }')"
        [ -n "$t" ] || { echo fail; return; }
        if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then best="$t"; fi
    done
    awk -v m="$items" -v t="$best" 'BEGIN { printf "%.0f", m / t }'
}

{
    echo "# work farm: $items items x $points points; best of $reps; $(nproc) cores; $(date -u +%Y-%m-%dT%H:%MZ)"
    echo
    echo "## 1 rank, Calculate threads -> items/s"
    printf '%-10s' impl; for t in 1 2 4; do printf ' %10s' "thr=$t"; done; echo
    for impl in "${impls[@]}"; do
        printf '%-10s' "$impl"
        for t in 1 2 4; do printf ' %10s' "$(throughput "$impl" 1 --threads "$t")"; done
        echo
    done
    echo
    echo "## ranks (fanout 2, 1 Calculate thread each) -> items/s"
    printf '%-10s' impl; for n in 1 2 4 8; do printf ' %10s' "n=$n"; done; echo
    for impl in "${impls[@]}"; do
        printf '%-10s' "$impl"
        for n in 1 2 4 8; do printf ' %10s' "$(throughput "$impl" "$n" --threads 1)"; done
        echo
    done
    echo
    idle_items=$((4 * 2 * 10))
    echo "## progress thread CPU while Calculate sleeps ${sleep_us} us per item (4 ranks x 2 threads, $idle_items items)"
    for impl in "${impls[@]}"; do
        run "$impl" 4 --threads 2 --items "$idle_items" --points 1 --sleep-us "$sleep_us" --cpu |
            awk -v impl="$impl" '/^progress-cpu/ { gsub(":", "", $3); cpu += $4; wall += $7; n++ }
                END { if (n) printf "%-10s %d ranks: %.2f ms CPU per rank over %.0f ms wall (%.3f%%)\n", impl, n, cpu / n, wall / n, 100 * cpu / wall;
                      else printf "%-10s fail\n", impl }'
    done
} | tee "$report"
