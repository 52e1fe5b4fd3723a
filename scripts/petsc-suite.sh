#!/usr/bin/env bash
# PETSc's own test harness on oxmpi: Debian's PETSc (built on Open MPI) and its shipped examples
# and expected outputs, unchanged. See --help.
set -euo pipefail

OXMPI_ROOT="$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/.." && pwd)"
# shellcheck source=scripts/common.sh source-path=SCRIPTDIR/..
. "$OXMPI_ROOT/scripts/common.sh"

PETSC_PACKAGES=(libpetsc-real-dev libpetsc3.18-dev-examples libopenmpi-dev openmpi-bin python3 make)
EXAMPLES=/usr/share/petsc/3.18/share/petsc/examples
PETSC_DIR=/usr/lib/petscdir/petsc3.18/x86_64-linux-gnu-real
DEFAULT_SEARCH="vec_is_sf_tutorials-ex1* vec_is_sf_tests-ex1* ksp_ksp_tutorials-ex2_*"

usage() {
    cat <<USAGE
Usage: scripts/petsc-suite.sh --prefix PREFIX [--modes "processes threads"] [--search "GLOBS"] [options]

Runs PETSc's test harness (Debian's libpetsc3.18-dev-examples: gmakefile.test, the tests'
own arguments, rank counts and expected outputs) with PETSCMPIEXEC="PREFIX/bin/mpiexec --mode
MODE" in each mode of --modes: the examples are built once with Debian's PETSc (Open MPI's
ABI: they run on oxmpi's libmpi.so.40) and every test of --search must print "ok" (tests PETSc's configuration skips are counted apart). Default
search: $DEFAULT_SEARCH
(PetscSF's star forests over point-to-point, neighbor collectives and, where Debian's build
enables it, RMA windows; KSP solvers on a 2-D Laplacian:
CG, GMRES, Jacobi, ASM, block Jacobi, hypre's BoomerAMG, GAMG, MUMPS...). Exit status 1 if any
test failed. About 3 minutes on 2 cores, building included.

Options:
  --prefix PREFIX   an oxmpi installation (scripts/install.sh)
  --modes "LIST"    oxmpi rank modes (default: "processes threads")
  --search "GLOBS"  test names (PETSc's: DIR_DIR-exN_SUFFIX), space-separated globs
  --no-deps         do not install the Debian packages (${PETSC_PACKAGES[*]})
  -h, --help        this help
USAGE
}

PREFIX="" MODES="processes threads" SEARCH="$DEFAULT_SEARCH" DEPS=1
while [ $# -gt 0 ]; do
    case "$1" in
        -h | --help) usage; exit 0 ;;
        --prefix) PREFIX="${2:?--prefix needs a value}"; shift 2 ;;
        --modes) MODES="${2:?--modes needs a value}"; shift 2 ;;
        --search) SEARCH="${2:?--search needs a value}"; shift 2 ;;
        --no-deps) DEPS=0; shift ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
done
[ -n "$PREFIX" ] || { usage >&2; die "--prefix is required"; }
PREFIX="$(cd -- "$PREFIX" && pwd)" || die "--prefix $PREFIX: no such directory"
[ "$DEPS" = 0 ] || install_missing_packages "${PETSC_PACKAGES[@]}"
[ -f "$EXAMPLES/gmakefile.test" ] || die "no PETSc examples in $EXAMPLES (Debian package libpetsc3.18-dev-examples)"

OUT="$(cargo_target_dir)/petsc"
rm -rf -- "$OUT" && mkdir -p -- "$OUT"
cp -a -- "$EXAMPLES" "$OUT/examples"
cd "$OUT/examples"

failed=0 total=0
for mode in $MODES; do
    for glob in $SEARCH; do
        log="$OUT/$mode-${glob//[^A-Za-z0-9_-]/_}.log"
        # The harness keeps per-test results in tests/counts; a fresh directory per run so a
        # mode's results are its own (the built examples stay).
        rm -rf tests/counts
        PETSCMPIEXEC="$PREFIX/bin/mpiexec --mode $mode" make -j2 -f gmakefile.test test \
            PETSC_DIR="$PETSC_DIR" PETSC_ARCH= search="$glob" >"$log" 2>&1 || true
        # "ok NAME # SKIP reason": a test this PETSc build does not run (a missing package
        # or MPI feature its configure did not see), not a pass.
        ok=$(grep '^ *ok ' "$log" | grep -vc '# SKIP' || true)
        skip=$(grep '^ *ok ' "$log" | grep -c '# SKIP' || true)
        bad=$(grep -c '^not ok ' "$log" || true)
        total=$((total + ok + bad))
        if [ "$bad" = 0 ] && [ "$ok" -gt 0 ]; then
            echo "PASS petsc $mode $glob: $ok passed ($skip skipped by PETSc's configuration)"
        else
            echo "FAIL petsc $mode $glob: $ok passed, $bad not ok, $skip skipped: $log"
            grep -A8 '^not ok ' "$log" | head -40 | sed 's/^/    /'
            failed=1
        fi
    done
done
echo "petsc-suite: $total results (a run and its output diff are one each), $([ $failed = 0 ] && echo 'all passed' || echo 'some FAILED')"
exit $failed
