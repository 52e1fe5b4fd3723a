#!/usr/bin/env bash
# Fortran tests: builds every f-tests/*.f90 and *.f and runs it on oxmpi.
set -uo pipefail

usage() {
    cat <<USAGE
Usage: f-tests/run.sh --prefix PREFIX [--modes "processes threads"] [--filter REGEX]
       f-tests/run.sh --mpich [--filter REGEX]

Each test is built twice: with PREFIX/bin/mpifort (oxmpi's wrapper and 'mpi' module), and with
MPICH's mpifort.mpich when it is installed (an MPICH-built binary, which must run on oxmpi
unchanged: it loads libmpichfort.so.12, i.e. oxmpi); those using include 'mpif.h' also with
Open MPI's mpif90.openmpi (on oxmpi's libmpi_mpifh.so.40, at their largest rank count; add
openmpi-built=skip for one calling what Open MPI 4.1 lacks, or one of the procedures oxmpi's
libmpi_mpifh.so.40 reports unsupported: keyval creation, MPI_OP_CREATE...; a 'use mpi_f08' test
with openmpi-built=f08 is built with it too, on oxmpi's libmpi_usempif08.so.40). Both run with PREFIX/bin/mpiexec in every
mode for every rank count of the test's header, '! oxmpi-test: ranks=1,2,4 timeout=60'
(add mpich=skip for a test --mpich must not run, mpich-built=skip for one not to build with
mpifort.mpich).
A test passes when it exits 0 (tests call MPI_Abort on a failed check); one whose header says
expect=fail passes when it fails (not by the time-out) with every expect-stderr="TEXT" of its
header in its output.
Also checks that include/mpif.h has MPICH's value for every constant of MPICH's mpif.h.

  --mpich   validate the tests themselves on MPICH (mpifort.mpich, mpiexec.mpich)
USAGE
}

HERE="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)"
PREFIX="" MODES="processes threads" FILTER="" MPICH=no
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) PREFIX="$2"; shift ;;
        --modes) MODES="$2"; shift ;;
        --filter) FILTER="$2"; shift ;;
        --mpich) MPICH=yes ;;
        -h | --help) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
    shift
done
[ "$MPICH" = yes ] || [ -n "$PREFIX" ] || { usage >&2; exit 2; }
# The builds run in a temporary directory: a relative prefix must not depend on where we are.
[ -z "$PREFIX" ] || PREFIX="$(cd -- "$PREFIX" && pwd)" || { echo "f-tests/run.sh: no such prefix: $PREFIX" >&2; exit 2; }

OUT="$(mktemp -d)"
trap 'rm -rf -- "$OUT"' EXIT
NPASS=0 NFAIL=0 FAILED=()
result() { # result VERDICT TEXT
    echo "$1 $2"
    if [ "$1" = PASS ]; then NPASS=$((NPASS + 1)); else NFAIL=$((NFAIL + 1)); FAILED+=("$2"); fi
}

# builds: "name:compiler" pairs; launcher and modes per flavour.
if [ "$MPICH" = yes ]; then
    builds=("mpich:mpifort.mpich")
    MODES="mpich"
else
    builds=("oxmpi:$PREFIX/bin/mpifort")
    if command -v mpifort.mpich >/dev/null 2>&1; then
        builds+=("mpich-built:mpifort.mpich")
    else
        echo "WARN mpifort.mpich not found: MPICH-built binaries are not tested"
    fi
    if command -v mpif90.openmpi >/dev/null 2>&1; then
        # (as mpifort.mpich does: the mpif.h interfaces are implicit, one routine many types)
        builds+=("openmpi-built:mpif90.openmpi -fallow-argument-mismatch")
    else
        echo "WARN mpif90.openmpi not found: Open MPI-built binaries are not tested"
    fi
    # fortran-f08/mpi_f08.f90 is what scripts/gen-f08.py makes now (needs pympistandard).
    if python3 -c 'import pympistandard' 2>/dev/null; then
        if python3 "$HERE/../scripts/gen-f08.py" --check >"$OUT/f08check" 2>&1; then
            result PASS "fortran-f08/mpi_f08.f90 is current"
        else
            cat "$OUT/f08check"; result FAIL "fortran-f08/mpi_f08.f90 is current"
        fi
    else
        echo "WARN pympistandard not installed: fortran-f08/mpi_f08.f90 not checked against scripts/gen-f08.py"
    fi
    mpif="$(ls /usr/include/*/mpich/mpif.h /usr/include/mpich/mpif.h 2>/dev/null | head -1)"
    if [ -n "$mpif" ]; then
        if python3 "$HERE/../scripts/gen-mpif.py" --compare "$mpif" >"$OUT/compare" 2>&1; then
            result PASS "mpif.h values = $mpif"
        else
            cat "$OUT/compare"; result FAIL "mpif.h values = $mpif"
        fi
    fi
fi

for src in "$HERE"/*.f90 "$HERE"/*.f; do
    [ -f "$src" ] || continue
    name="$(basename -- "$src")"; name="${name%.*}"
    [ -z "$FILTER" ] || echo "$name" | grep -Eq -- "$FILTER" || continue
    header="$(grep -m1 -o 'oxmpi-test:.*' "$src" || true)"
    # mpich=skip: oxmpi-specific behaviour (or what MPICH 4.0.2 gets wrong), not run with --mpich.
    if [ "$MPICH" = yes ] && echo "$header" | grep -q 'mpich=skip'; then
        echo "SKIP $name [mpich] (mpich=skip)"
        continue
    fi
    ranks="$(echo "$header" | sed -n 's/.*ranks=\([0-9,]*\).*/\1/p')"
    tmo="$(echo "$header" | sed -n 's/.*timeout=\([0-9]*\).*/\1/p')"
    expect_fail=no
    ! echo "$header" | grep -q 'expect=fail' || expect_fail=yes
    expect_err=()
    while IFS= read -r t; do expect_err+=("$t"); done < <(echo "$header" | grep -o 'expect-stderr="[^"]*"' | sed 's/^expect-stderr="\(.*\)"$/\1/')
    for b in "${builds[@]}"; do
        flavour="${b%%:*}" fc="${b#*:}"
        # mpich-built=skip: MPICH's library lacks what the test calls (it would not link).
        if [ "$flavour" = mpich-built ] && echo "$header" | grep -q 'mpich-built=skip'; then
            echo "SKIP $name [$flavour] (mpich-built=skip)"
            continue
        fi
        # openmpi-built: the tests using mpif.h, built with Open MPI's mpif90 (they run on oxmpi's
        # libmpi_mpifh.so.40), at their largest rank count only; openmpi-built=skip: Open MPI 4.1
        # lacks what the test calls; openmpi-built=f08: a 'use mpi_f08' test that Open MPI 4.1's
        # module can build (it runs on oxmpi's libmpi_usempif08.so.40).
        run_ranks="$ranks"
        if [ "$flavour" = openmpi-built ]; then
            grep -qiE "^[[:space:]]*include[[:space:]]*'mpif.h'" "$src" || echo "$header" | grep -q 'openmpi-built=f08' || continue
            if echo "$header" | grep -q 'openmpi-built=skip'; then
                echo "SKIP $name [$flavour] (openmpi-built=skip)"
                continue
            fi
            run_ranks="${ranks##*,}"
        fi
        exe="$OUT/$name.$flavour"
        if ! (cd "$OUT" && $fc -O1 -g -o "$exe" "$src") >"$OUT/build.log" 2>&1; then
            sed 's/^/  | /' "$OUT/build.log" | tail -n 15
            result FAIL "$name [$flavour] (compile)"
            continue
        fi
        for n in ${run_ranks//,/ }; do
            for mode in $MODES; do
                if [ "$mode" = mpich ]; then
                    cmd=(timeout "${tmo:-60}" mpiexec.mpich -n "$n" "$exe")
                else
                    cmd=("$PREFIX/bin/mpiexec" --timeout "${tmo:-60}" --mode "$mode" -n "$n" "$exe")
                fi
                rc=0
                "${cmd[@]}" >"$OUT/run.log" 2>&1 </dev/null || rc=$?
                if [ "$expect_fail" = yes ]; then
                    # mpiexec's time-out is 124 (coreutils' too): a failure, not the expected one
                    why=""
                    [ "$rc" -ne 0 ] || why="exit status 0, expected a failure"
                    [ "$rc" -ne 124 ] || why="time-out"
                    for t in ${expect_err[@]+"${expect_err[@]}"}; do
                        [ -n "$why" ] || grep -qF -- "$t" "$OUT/run.log" || why="output lacks '$t'"
                    done
                    [ -z "$why" ] || rc=1
                    [ -n "$why" ] || rc=0
                    [ -z "$why" ] || echo "  | $why"
                fi
                if [ "$rc" -eq 0 ]; then
                    result PASS "$name [$flavour] n=$n $mode"
                else
                    sed 's/^/  | /' "$OUT/run.log" | tail -n 15
                    result FAIL "$name [$flavour] n=$n $mode"
                fi
            done
        done
    done
done

echo "# Fortran tests: $NPASS passed, $NFAIL failed"
for f in ${FAILED[@]+"${FAILED[@]}"}; do echo "#   FAILED: $f"; done
[ "$NFAIL" -eq 0 ]
