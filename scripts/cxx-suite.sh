#!/usr/bin/env bash
# MPI C++ programs built with Debian's mpicxx.mpich and mpicxx.openmpi (which link the MPI-2 C++
# bindings' libraries, libmpichcxx.so.12 and libmpi_cxx.so.40), run unchanged on oxmpi. See --help.
set -euo pipefail

OXMPI_ROOT="$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/.." && pwd)"
# shellcheck source=scripts/common.sh source-path=SCRIPTDIR/..
. "$OXMPI_ROOT/scripts/common.sh"

usage() {
    cat <<USAGE
Usage: scripts/cxx-suite.sh --prefix PREFIX [--modes "processes threads"] [--np "1 2 3"] [--timeout S]

Builds every cxx-tests/*.cc with mpicxx.mpich (MPICH's ABI) and with mpicxx.openmpi (Open MPI's
ABI), as a user on Debian would, and runs each build at every rank count of --np in each oxmpi
mode of --modes under PREFIX/bin/mpiexec (which picks the ABI from the program). A program
passes when it exits 0 and rank 0 prints "NAME: OK"; a build whose source starts with
"expect-fail: ABI..." naming its ABI (mpich, openmpi) passes when the job ends non-zero with oxmpi's one-line "not supported" message
(a C++-only feature oxmpi does not have). One line per run; exit status 1 if any failed.
Needs mpicxx.mpich (libmpich-dev) and mpicxx.openmpi (libopenmpi-dev).
USAGE
}

PREFIX="" MODES="processes threads" NPS="1 2 3" TIMEOUT=60
while [ $# -gt 0 ]; do
    case "$1" in
        -h | --help) usage; exit 0 ;;
        --prefix) PREFIX="${2:?--prefix needs a value}"; shift 2 ;;
        --modes) MODES="${2:?--modes needs a value}"; shift 2 ;;
        --np) NPS="${2:?--np needs a value}"; shift 2 ;;
        --timeout) TIMEOUT="${2:?--timeout needs a value}"; shift 2 ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
done
[ -n "$PREFIX" ] || { usage >&2; die "--prefix is required"; }
PREFIX="$(cd -- "$PREFIX" && pwd)" || die "--prefix $PREFIX: no such directory"

OUT="$(cargo_target_dir)/cxx-tests"
rm -rf -- "$OUT" && mkdir -p -- "$OUT/logs"
failed=0 runs=0
for cxx in mpicxx.mpich mpicxx.openmpi; do
    command -v "$cxx" >/dev/null || die "$cxx not found: apt-get install libmpich-dev libopenmpi-dev"
    for src in "$OXMPI_ROOT"/cxx-tests/*.cc; do
        name="$(basename "$src" .cc)"
        exe="$OUT/$name.${cxx#mpicxx.}"
        "$cxx" -O1 -o "$exe" "$src" || { echo "FAIL build $name with $cxx"; failed=1; continue; }
        expect_fail=0
        head -c 400 "$src" | grep -Eq "expect-fail:[a-z ]* ${cxx#mpicxx.}" && expect_fail=1
        for mode in $MODES; do
            for np in $NPS; do
                label="$name.${cxx#mpicxx.}.$mode.n$np"
                log="$OUT/logs/$label.log"
                rc=0
                timeout -k 5 "$((TIMEOUT + 10))" "$PREFIX/bin/mpiexec" --mode "$mode" --timeout "$TIMEOUT" -n "$np" "$exe" >"$log" 2>&1 || rc=$?
                runs=$((runs + 1))
                if [ "$expect_fail" = 1 ]; then
                    if [ "$rc" != 0 ] && grep -q "C++ bindings .* is not supported by oxmpi" "$log" && ! grep -q "not stopped" "$log"; then
                        echo "PASS $label (ended: $(grep -m1 'not supported' "$log" | cut -c1-90)...)"
                    else
                        echo "FAIL $label (rc $rc; expected the job to end with the not-supported line): $log"; failed=1
                    fi
                elif [ "$rc" = 0 ] && grep -q "^$name: OK ($np ranks)" "$log"; then
                    echo "PASS $label"
                else
                    echo "FAIL $label (rc $rc): $log"; tail -5 "$log" | sed 's/^/    /'; failed=1
                fi
            done
        done
    done
done
echo "cxx-suite: $runs runs, $([ $failed = 0 ] && echo 'all passed' || echo 'some FAILED')"
exit $failed
