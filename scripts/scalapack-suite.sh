#!/usr/bin/env bash
# Debian's ScaLAPACK testers (MPICH build) on oxmpi, in each rank mode. See --help.
set -euo pipefail

OXMPI_ROOT="$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/.." && pwd)"
# shellcheck source=scripts/common.sh source-path=SCRIPTDIR/..
. "$OXMPI_ROOT/scripts/common.sh"

TESTS=/usr/lib/x86_64-linux-gnu/scalapack/mpich-tests

usage() {
    cat <<USAGE
Usage: scripts/scalapack-suite.sh --prefix PREFIX [--modes "processes threads"] [options]

Runs every ScaLAPACK tester of Debian's scalapack-mpi-test package (the MPICH build, in
$TESTS: stripped PIEs linked to libscalapack-mpich and MPICH's libmpich.so.12, unchanged) under
PREFIX/bin/mpiexec at --np ranks in each mode of --modes, each run in a fresh directory holding
the testers' input files. A tester passes when it exits 0 with no "failed residual checks" and
no FAILED line. Testers whose input asks for larger process grids than --np end with MPI_Abort
(and those whose input file Debian does not ship, xCbtest and xFbtest, with status 2) in every
mode and on MPICH; they are reported, not counted as failures, as long as every mode agrees.
Exit status 1 when a tester fails in one mode and not in the first one, when its residual
summary differs between modes, or when fewer than --min-pass testers pass in the first mode.

Options:
  --prefix PREFIX   an oxmpi installation (scripts/install.sh)
  --modes "LIST"    rank modes (default: "processes threads"; the first is the reference)
  --np N            ranks per run (default 2)
  --filter REGEX    only testers whose name matches REGEX
  --timeout S       per-run time limit in seconds (default 120)
  --min-pass N      fewest testers that must pass in the first mode (default 50; 0 with --filter)
  -h, --help        this help
USAGE
}

PREFIX="" MODES="processes threads" NP=2 FILTER="" TIMEOUT=120 MIN_PASS=""
while [ $# -gt 0 ]; do
    case "$1" in
        -h | --help) usage; exit 0 ;;
        --prefix) PREFIX="${2:?--prefix needs a value}"; shift 2 ;;
        --modes) MODES="${2:?--modes needs a value}"; shift 2 ;;
        --np) NP="${2:?--np needs a value}"; shift 2 ;;
        --filter) FILTER="${2:?--filter needs a value}"; shift 2 ;;
        --timeout) TIMEOUT="${2:?--timeout needs a value}"; shift 2 ;;
        --min-pass) MIN_PASS="${2:?--min-pass needs a value}"; shift 2 ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
done
[ -n "$PREFIX" ] || { usage >&2; die "--prefix is required"; }
PREFIX="$(cd -- "$PREFIX" && pwd)" || die "--prefix: no such directory"
[ -x "$PREFIX/bin/mpiexec" ] || die "$PREFIX/bin/mpiexec not found: install oxmpi there first (scripts/install.sh)"
[ -d "$TESTS" ] || die "$TESTS not found: apt-get install scalapack-mpi-test"
[ -n "$MIN_PASS" ] || { [ -n "$FILTER" ] && MIN_PASS=0 || MIN_PASS=50; }

LOGS="$(cargo_target_dir)/scalapack/logs"
rm -rf "$LOGS" && mkdir -p "$LOGS"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# One line per run: "<rc> <residual summary>"; the summary is the testers' own count lines.
run_one() { # tester mode
    local t="$1" mode="$2" dir="$WORK/$1.$2" log="$LOGS/$1.$2.log" rc=0
    mkdir -p "$dir"
    cp "$TESTS"/*.dat "$dir"/
    (cd "$dir" && timeout -k 5 "$TIMEOUT" "$PREFIX/bin/mpiexec" -n "$NP" --mode "$mode" "$TESTS/$t") >"$log" 2>&1 || rc=$?
    rm -rf "$dir"
    local summary
    summary="$(grep -E 'tests (completed|skipped)|FAILED' "$log" | tr -s ' ' | tr '\n' ';' || true)"
    echo "$rc $summary"
}

# A passing run: exit 0, no FAILED line, no failed residual check.
good() { [ "${1%% *}" = 0 ] && ! grep -q 'FAILED' <<<"$1" && ! grep -Eq '(^|;) ?[1-9][0-9]* tests completed and failed' <<<"$1"; }

read -r -a mode_list <<<"$MODES"
ref="${mode_list[0]}"
declare -A result
passed=0 failed=0 agreed_fail=0
for path in "$TESTS"/x*; do
    t="$(basename "$path")"
    [ -x "$path" ] || continue
    [ -z "$FILTER" ] || [[ "$t" =~ $FILTER ]] || continue
    for mode in "${mode_list[@]}"; do
        result[$mode]="$(run_one "$t" "$mode")"
    done
    rrc="${result[$ref]%% *}"
    line_ok=1
    for mode in "${mode_list[@]}"; do
        if [ "${result[$mode]}" != "${result[$ref]}" ]; then
            line_ok=0
            echo "FAIL $t $mode: exit ${result[$mode]%% *} and residuals differ from $ref (exit $rrc); log: $LOGS/$t.$mode.log"
            echo "#   $ref: ${result[$ref]#* }"
            echo "#   $mode: ${result[$mode]#* }"
        fi
    done
    if [ "$line_ok" = 1 ] && good "${result[$ref]}"; then
        passed=$((passed + 1))
        echo "PASS $t (${MODES// /, })"
    elif [ "$line_ok" = 1 ]; then
        agreed_fail=$((agreed_fail + 1))
        echo "SAME $t: exit $rrc in every mode (grid or input not for $NP ranks); log: $LOGS/$t.$ref.log"
    else
        failed=$((failed + 1))
    fi
done
echo "# summary: $passed passed in every mode, $agreed_fail end the same way in every mode without passing, $failed differ"
[ "$failed" = 0 ] || exit 1
[ "$passed" -ge "$MIN_PASS" ] || { echo "# only $passed testers passed, fewer than --min-pass $MIN_PASS" >&2; exit 1; }
