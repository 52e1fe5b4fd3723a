#!/usr/bin/env bash
# Debian's packaged MPI test programs (MPICH builds, and ScaLAPACK's Open MPI build) on oxmpi, in each rank mode. See --help.
set -euo pipefail

OXMPI_ROOT="$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/.." && pwd)"
# shellcheck source=scripts/common.sh source-path=SCRIPTDIR/..
. "$OXMPI_ROOT/scripts/common.sh"

SCALAPACK=/usr/lib/x86_64-linux-gnu/scalapack/mpich-tests
SCALAPACK_OMPI=/usr/lib/x86_64-linux-gnu/scalapack/openmpi-tests
COARRAYS=/usr/lib/x86_64-linux-gnu/open-coarrays/mpich/bin/OpenCoarrays-2.10.1-tests
TACHYON_SCENES=/usr/share/doc/tachyon/examples/scenes
TACHYON_MPICH_LIB=/usr/lib/x86_64-linux-gnu/libtachyon-mpich.so.0
# Tachyon scenes and the image width and height each is rendered at: sphere and triangle-mesh
# grids, textures and a height field, MIP-mapped textures, a room, ambient occlusion and depth of
# field (random sampling: small images). About 0.7 s a run.
TACHYON_RUNS="balls.dat:256 teapot.dat:256 island.dat:256 lavablobs.dat:256 room.dat:256 sc98ao.dat:64 dnadof.dat:64"

usage() {
    cat <<USAGE
Usage: scripts/packaged-suite.sh --suite scalapack|scalapack-openmpi|coarrays|tachyon --prefix PREFIX [options]

Runs every test program of a Debian package, built against MPICH and run unchanged (stripped
PIEs linked to MPICH's libmpich.so.12, here oxmpi's), under PREFIX/bin/mpiexec at --np ranks in
each mode of --modes, each run in a fresh directory:
  scalapack  the 76 ScaLAPACK testers of scalapack-mpi-test ($SCALAPACK), with their
             input files; a tester passes when it exits 0 with no "failed residual checks" and
             no FAILED line. Testers whose input asks for larger process grids than --np end
             with MPI_Abort (xCbtest and xFbtest, whose input file Debian does not ship, with
             status 2) in every mode and on MPICH. xssyevr's result varies from run to
             run on MPICH too (about 1 run in 100): when its modes disagree, they run again
             (up to twice).
  scalapack-openmpi
             the same testers built against Open MPI ($SCALAPACK_OMPI): they link
             libscalapack-openmpi.so, which NEEDs libmpi.so.40, so mpiexec finds Open MPI's ABI
             in their NEEDED closure and gives them oxmpi's Open MPI ABI libraries (xCbtest,
             xFbtest, xdhseqr and xshseqr also NEED Open MPI's Fortran library
             libmpi_mpifh.so.40: oxmpi's, installed next to its libmpi.so.40).
  coarrays   the 92 OpenCoarrays tests of libcoarrays-mpich-dev ($COARRAYS); a test passes
             when it exits 0. Those that end otherwise on MPICH too (failed-image tests,
             unsupported features) must end the same way in every mode. Left out:
             increment_my_neighbor, which reads a neighbour's coarray right after the
             collective window creation without synchronizing first: it passes when every
             image leaves MPI_Win_allocate at the same moment (MPICH's busy polling, here
             10/10), and fails here in most runs whenever the last image to arrive leaves first.
  tachyon    Debian's tachyon ray tracer (tachyon-bin-nox's tachyon-nox, a stripped PIE) with
             the MPICH flavour of its library ($TACHYON_MPICH_LIB; when
             update-alternatives' libtachyon.so.0 is another flavour, a link to it goes first on
             LD_LIBRARY_PATH), rendering scenes of tachyon-doc ($TACHYON_SCENES):
             $TACHYON_RUNS (scene:size). Each image must be byte for byte the
             one of the first mode and, when mpiexec.mpich is installed, the one MPICH's own run
             writes; each run must report --np CPUs (one job, not singletons).
A program ending differently in two modes, or fewer than --min-pass passing in the first mode,
makes the exit status 1.

Options:
  --suite NAME      scalapack, scalapack-openmpi, coarrays or tachyon (required)
  --prefix PREFIX   an oxmpi installation (scripts/install.sh)
  --modes "LIST"    rank modes (default: "processes threads"; the first is the reference)
  --np N            ranks per run (default 2)
  --filter REGEX    only testers whose name matches REGEX
  --timeout S       per-run time limit in seconds (default 120)
  --min-pass N      fewest programs that must pass in the first mode (default: 50 for scalapack(-openmpi),
                    60 for coarrays; 0 with --filter)
  -h, --help        this help
USAGE
}

SUITE="" PREFIX="" MODES="processes threads" NP=2 FILTER="" TIMEOUT=120 MIN_PASS=""
while [ $# -gt 0 ]; do
    case "$1" in
        -h | --help) usage; exit 0 ;;
        --suite) SUITE="${2:?--suite needs a value}"; shift 2 ;;
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
case "$SUITE" in
    scalapack) TESTS="$SCALAPACK" PACKAGE=scalapack-mpi-test DEFAULT_MIN=50 SKIP="" ;;
    scalapack-openmpi) TESTS="$SCALAPACK_OMPI" PACKAGE=scalapack-mpi-test DEFAULT_MIN=50 SKIP="" ;;
    coarrays) TESTS="$COARRAYS" PACKAGE=libcoarrays-mpich-dev DEFAULT_MIN=60 SKIP="increment_my_neighbor" ;;
    tachyon) TESTS="$TACHYON_SCENES" PACKAGE=tachyon-doc DEFAULT_MIN=0 SKIP="" ;;
    *) usage >&2; die "--suite must be scalapack, scalapack-openmpi, coarrays or tachyon" ;;
esac
[ -d "$TESTS" ] || die "$TESTS not found: apt-get install $PACKAGE"
[ -n "$MIN_PASS" ] || { [ -n "$FILTER" ] && MIN_PASS=0 || MIN_PASS=$DEFAULT_MIN; }

LOGS="$(cargo_target_dir)/packaged/$SUITE-logs"
rm -rf "$LOGS" && mkdir -p "$LOGS"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# Tachyon: renders every scene of TACHYON_RUNS on MPICH (the reference, if installed) and in each
# mode; the images must be the same bytes.
tachyon_suite() {
    local bin run scene size mode log img ref rc failed=0 resolved
    bin="$(command -v tachyon-nox)" || die "tachyon-nox not found: apt-get install tachyon-bin-nox"
    [ -e "$TACHYON_MPICH_LIB" ] || die "$TACHYON_MPICH_LIB not found: apt-get install libtachyon-mpich-0"
    if [ "$(readlink -f "$(dirname "$TACHYON_MPICH_LIB")/libtachyon.so.0")" != "$(readlink -f "$TACHYON_MPICH_LIB")" ]; then
        mkdir -p "$WORK/lib"
        ln -s "$TACHYON_MPICH_LIB" "$WORK/lib/libtachyon.so.0"
        export LD_LIBRARY_PATH="$WORK/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    fi
    resolved="$(LD_LIBRARY_PATH="$PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ldd "$bin" | awk '$1 == "libtachyon.so.0" { print $3 }')"
    [ "$(readlink -f "$resolved")" = "$(readlink -f "$TACHYON_MPICH_LIB")" ] ||
        die "$bin loads libtachyon.so.0 from '$resolved', not MPICH's flavour $TACHYON_MPICH_LIB"
    local flavours=("${mode_list[@]}")
    if command -v mpiexec.mpich >/dev/null 2>&1; then
        flavours=(mpich "${flavours[@]}")
    else
        echo "WARN mpiexec.mpich not found: the images are not compared with MPICH's"
    fi
    for run in $TACHYON_RUNS; do
        scene="${run%%:*}" size="${run#*:}"
        [ -z "$FILTER" ] || [[ "$scene" =~ $FILTER ]] || continue
        ref=""
        for mode in "${flavours[@]}"; do
            log="$LOGS/$scene.$mode.log" img="$WORK/$scene.$mode.tga" rc=0
            # In the scenes' directory: their texture files are named relative to it.
            if [ "$mode" = mpich ]; then
                (cd "$TESTS" && timeout -k 5 "$TIMEOUT" mpiexec.mpich -n "$NP" "$bin" "$scene" +V -numthreads 1 \
                    -res "$size" "$size" -o "$img") >"$log" 2>&1 || rc=$?
            else
                (cd "$TESTS" && timeout -k 5 "$TIMEOUT" "$PREFIX/bin/mpiexec" -n "$NP" --mode "$mode" "$bin" "$scene" \
                    +V -numthreads 1 -res "$size" "$size" -o "$img") >"$log" 2>&1 || rc=$?
            fi
            if [ "$rc" != 0 ] || [ ! -s "$img" ]; then
                echo "FAIL $scene $mode: exit $rc, no image; log: $log"
                failed=$((failed + 1))
            elif ! grep -Eq "^ *Total CPUs: $NP\$" "$log"; then
                echo "FAIL $scene $mode: the run does not report $NP CPUs (not one job of $NP ranks); log: $log"
                failed=$((failed + 1))
            elif [ -z "$ref" ]; then
                ref="$mode"
                echo "PASS $scene $mode (${size}x$size, $(stat -c %s "$img") bytes)"
            elif cmp -s "$WORK/$scene.$ref.tga" "$img"; then
                echo "PASS $scene $mode: the image of $ref"
            else
                echo "FAIL $scene $mode: the image differs from $ref's ($(cmp "$WORK/$scene.$ref.tga" "$img" | head -1)); log: $log"
                failed=$((failed + 1))
            fi
        done
    done
    echo "# summary (tachyon): $failed failed runs (${flavours[*]})"
    [ "$failed" = 0 ]
}

read -r -a mode_list <<<"$MODES"
if [ "$SUITE" = tachyon ]; then
    tachyon_suite
    exit
fi

# One line per run: "<rc> <residual summary>"; the summary is the testers' own count lines.
run_one() { # tester mode
    local t="$1" mode="$2" dir="$WORK/$1.$2" log="$LOGS/$1.$2.log" rc=0
    mkdir -p "$dir"
    [[ "$SUITE" != scalapack* ]] || cp "$TESTS"/*.dat "$dir"/
    (cd "$dir" && timeout -k 5 "$TIMEOUT" "$PREFIX/bin/mpiexec" -n "$NP" --mode "$mode" "$TESTS/$t") >"$log" 2>&1 || rc=$?
    rm -rf "$dir"
    local summary
    summary="$(grep -E 'tests (completed|skipped)|FAILED' "$log" | tr -s ' ' | tr '\n' ';' || true)"
    echo "$rc $summary"
}

# A passing run: exit 0, no FAILED line, no failed residual check.
good() { [ "${1%% *}" = 0 ] && ! grep -q 'FAILED' <<<"$1" && ! grep -Eq '(^|;) ?[1-9][0-9]* tests completed and failed' <<<"$1"; }

# Testers whose result varies from run to run on MPICH itself: Debian's xssyevr (MPICH 4.0.2,
# mpiexec.mpich -n 2) failed every test on a 1 x 2 grid in 1 run of 100, with residuals that pass
# ("FAILED" with CHK and QTQ below THRESH), and so it does on oxmpi in either mode, 1 to 2 runs
# in 100, in builds back to before this check. When their modes disagree, every mode runs again,
# up to twice, and the first round in which they agree counts (said as RETRY).
NONDETERMINISTIC="xssyevr"

ref="${mode_list[0]}"
declare -A result
passed=0 failed=0 agreed_fail=0
for path in "$TESTS"/*; do
    t="$(basename "$path")"
    [ -f "$path" ] && [ -x "$path" ] || continue
    [[ " $SKIP " != *" $t "* ]] || { echo "SKIP $t (see --help)"; continue; }
    [ -z "$FILTER" ] || [[ "$t" =~ $FILTER ]] || continue
    for round in 1 2 3; do
        for mode in "${mode_list[@]}"; do
            result[$mode]="$(run_one "$t" "$mode")"
        done
        agree=1
        for mode in "${mode_list[@]}"; do
            [ "${result[$mode]}" = "${result[$ref]}" ] || agree=0
        done
        [ "$agree" = 0 ] && [[ " $NONDETERMINISTIC " == *" $t "* ]] && [ "$round" -lt 3 ] || break
        echo "RETRY $t: its modes disagreed in round $round (a tester that varies on MPICH too)"
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
        echo "SAME $t: exit $rrc in every mode; log: $LOGS/$t.$ref.log"
    else
        failed=$((failed + 1))
    fi
done
echo "# summary ($SUITE): $passed passed in every mode, $agreed_fail end the same way in every mode without passing, $failed differ"
[ "$failed" = 0 ] || exit 1
[ "$passed" -ge "$MIN_PASS" ] || { echo "# only $passed testers passed, fewer than --min-pass $MIN_PASS" >&2; exit 1; }
