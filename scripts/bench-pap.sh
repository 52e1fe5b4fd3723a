#!/usr/bin/env bash
# The PAP mini-benchmark (benches/pap_reduce.c) for oxmpi's reduce algorithms, MPICH and Open MPI.
set -euo pipefail

OXMPI_ROOT="$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/.." && pwd)"
# shellcheck source=scripts/common.sh source-path=SCRIPTDIR/..
. "$OXMPI_ROOT/scripts/common.sh"

usage() {
    cat <<'USAGE'
Usage: scripts/bench-pap.sh --prefix DIR [options]

Builds benches/pap_reduce.c (Proficz & Ocetkiewicz 2021 section 6: double barrier, random
per-rank delay, MPI_Reduce of COUNT floats to rank 0, validation) with oxmpi's mpicc (from the
installation in DIR), mpicc.mpich and mpicc.openmpi, and runs it for each rank count, count and
arrival mode and maximum delay with oxmpi forced to each reduce algorithm
(OXMPI_REDUCE_ALGORITHM) and with auto, in each oxmpi rank mode, then MPICH and Open MPI. Prints a table of the mean time from the last arrival to the last
finish and from the first arrival to the last finish, in microseconds, and the floor: the time
to copy the vector once and combine it once on this machine (one rank alone, best of 5), about
the least the last arrival's data can cost. An implementation that is not installed is skipped.

Options:
  --prefix DIR     oxmpi installation (scripts/install.sh DIR); required
  --ranks LIST     rank counts (default "4 8 16")
  --counts LIST    float counts (default "131072 1048576")
  --delays LIST    maximum per-rank delays in microseconds (default "1000 5000 20000")
  --delay US       one maximum delay (the same as --delays US)
  --modes LIST     arrival modes: random (new delay every iteration, the paper's) and fixed
                   (one delay per rank for the whole run: a repeating pattern) (default both)
  --reports LIST   how ranks report their emulated computation: none, progress
                   (MPIX_Pap_progress in 8 slices), expect (MPIX_Pap_expect up front)
                   (default "none progress"; MPICH and Open MPI run once, without)
  --iters N        iterations per run (default 20)
  --algos LIST     oxmpi algorithms (default "clairvoyant arrival binomial rabenseifner auto")
  --oxmodes LIST   oxmpi rank modes, processes and/or threads (default "processes threads")
  --oxmode M       one rank mode (the same as --oxmodes M)
  --no-others      skip MPICH and Open MPI
  -h, --help       show this help

Duration: one run per row, each a start-up (about 0.3 s) plus ITERS times (the delay + the
reduce). The defaults make 3 rank counts x 2 counts x 2 modes x 3 delays x (5 algorithms x 2
report kinds x 2 rank modes + 2 peers) = 792 rows: about 15 to 20 minutes on 2 cores
(estimated from the quick look; 16 ranks cost more per row). A quick look, --ranks 8 --counts
1048576 --modes random --delays "1000 20000" --iters 10 (44 rows), took 36 s at load 5.
USAGE
}

prefix="" ranks="4 8 16" counts="131072 1048576" delays="1000 5000 20000" modes="random fixed" iters=20 reports="none progress"
algos="clairvoyant arrival binomial rabenseifner auto" oxmodes="processes threads" others=yes
while [ $# -gt 0 ]; do
    case "$1" in
        -h | --help) usage; exit 0 ;;
        --prefix) prefix="$2"; shift ;;
        --ranks) ranks="$2"; shift ;;
        --counts) counts="$2"; shift ;;
        --delay | --delays) delays="$2"; shift ;;
        --modes) modes="$2"; shift ;;
        --iters) iters="$2"; shift ;;
        --reports) reports="$2"; shift ;;
        --algos) algos="$2"; shift ;;
        --oxmode | --oxmodes) oxmodes="$2"; shift ;;
        --no-others) others=no ;;
        *) usage >&2; die "unknown option: $1" ;;
    esac
    shift
done
[ -n "$prefix" ] || { usage >&2; exit 2; }
for m in $oxmodes; do
    case "$m" in processes | threads) ;; *) die "--oxmodes: '$m' is neither processes nor threads" ;; esac
done
[ -x "$prefix/bin/mpicc" ] || die "$prefix/bin/mpicc not found; run scripts/install.sh $prefix"

work="$(mktemp -d)"
trap 'rm -rf -- "$work"' EXIT
src="$OXMPI_ROOT/benches/pap_reduce.c"
"$prefix/bin/mpicc" -O2 -o "$work/ox" "$src"
impls=()
for om in $oxmodes; do
    for a in $algos; do impls+=("oxmpi:$a:$om"); done
done
if [ "$others" = yes ]; then
    if command -v mpicc.mpich >/dev/null && mpicc.mpich -O2 -o "$work/mpich" "$src" 2>/dev/null; then impls+=(MPICH); else echo "# MPICH skipped" >&2; fi
    if command -v mpicc.openmpi >/dev/null && mpicc.openmpi -O2 -o "$work/ompi" "$src" 2>/dev/null; then impls+=("OpenMPI"); else echo "# Open MPI skipped" >&2; fi
fi

run() { # run IMPL N COUNT MODE REPORTS DELAY -> "last first floor" or "failed"
    local out a
    case "$1" in
        oxmpi:*) a="${1#oxmpi:}"
            out=$(OXMPI_REDUCE_ALGORITHM="${a%%:*}" timeout 600 "$prefix/bin/mpiexec" --mode "${a#*:}" -n "$2" "$work/ox" "$3" "$iters" "$6" "$4" 1 "$5") ;;
        MPICH) out=$(timeout 600 mpiexec.mpich -n "$2" "$work/mpich" "$3" "$iters" "$6" "$4" 1 "$5") ;;
        OpenMPI) out=$(timeout 600 mpirun.openmpi --allow-run-as-root --oversubscribe -np "$2" "$work/ompi" "$3" "$iters" "$6" "$4" 1 "$5" 2>/dev/null) ;;
    esac || { echo "failed failed -"; return; }
    awk '{print $6, $7, $9}' <<<"$out"
}

printf '%-30s %5s %8s %7s %8s %9s %14s %14s %9s\n' implementation ranks count mode delay_us reports last_to_last_us first_to_last_us floor_us
for n in $ranks; do
    for c in $counts; do
        for m in $modes; do
            for dl in $delays; do
                for r in $reports; do
                    for i in "${impls[@]}"; do
                        # The peers have no reports: one run each.
                        rr=$r
                        case "$i" in oxmpi:*) ;; *) [ "$r" = "${reports%% *}" ] || continue; rr=none ;; esac
                        read -r last first floor < <(run "$i" "$n" "$c" "$m" "$rr" "$dl")
                        printf '%-30s %5s %8s %7s %8s %9s %14s %14s %9s\n' "$i" "$n" "$c" "$m" "$dl" "$rr" "$last" "$first" "$floor"
                    done
                done
            done
        done
    done
done
