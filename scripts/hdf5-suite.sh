#!/usr/bin/env bash
# Parallel HDF5 programs built with Debian's h5pcc.mpich (or h5pcc.openmpi), run on oxmpi or on
# MPICH. See --help.
set -euo pipefail

OXMPI_ROOT="$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/.." && pwd)"
# shellcheck source=scripts/common.sh source-path=SCRIPTDIR/..
. "$OXMPI_ROOT/scripts/common.sh"

# libhdf5-mpich-dev: h5pcc.mpich and parallel HDF5 against MPICH's libmpi.so.12 (how users build);
# libhdf5-doc: HDF5's own parallel example ph5example.c.
HDF5_PACKAGES=(libhdf5-mpich-dev libhdf5-doc)
# libhdf5-openmpi-dev: h5pcc.openmpi, parallel HDF5 against Open MPI's libmpi.so.40 (--abi ompi).
HDF5_OMPI_PACKAGES=(libhdf5-openmpi-dev)
PH5EXAMPLE=/usr/share/doc/libhdf5-doc/examples/ph5example.c.gz

usage() {
    cat <<USAGE
Usage: scripts/hdf5-suite.sh --prefix PREFIX [--abi mpich|ompi] [--modes "processes threads"] [options]
       scripts/hdf5-suite.sh --mpich|--openmpi [options]

Builds every hdf5-tests/*.c with h5pcc.mpich and every hdf5-tests/*.f90 with h5pfc.mpich
(Debian's parallel HDF5 against MPICH's ABI, as a user would build them) and HDF5's own
parallel example ph5example.c (from the libhdf5-doc package), then runs each at every rank
count of --np: with --prefix under PREFIX/bin/mpiexec in each mode of --modes, the MPICH-built
binaries then running on oxmpi's libmpi.so.12; with --mpich under mpiexec.mpich. With --abi ompi
(or --openmpi) the same programs are built with h5pcc.openmpi/h5pfc.openmpi against Open MPI's
ABI (libmpi.so.40, libmpi_mpifh.so.40...): under PREFIX/bin/mpiexec they run on oxmpi's Open MPI
ABI libraries; with --openmpi under Open MPI's mpirun, to compare. Each run gets
a fresh directory for its files, which must be empty again when it ends (a file left behind is
a failure). One line per run, PASS or FAIL; logs in target/hdf5/logs-LABEL; exit status 1 if
any run failed.

The programs check every value they read back and exit non-zero, printing what differs, on a
mismatch; an HDF5 or MPI call that fails aborts the job at once (no hang).

Options:
  --prefix PREFIX   an oxmpi installation (scripts/install.sh)
  --mpich           run on the system MPICH (mpiexec.mpich) instead, to compare
  --abi ABI         mpich (default: h5pcc.mpich builds) or ompi (h5pcc.openmpi builds)
  --openmpi         the --abi ompi builds on the system Open MPI (mpirun.openmpi), to compare
  --np "LIST"       rank counts (default: "1 2 4")
  --modes "LIST"    oxmpi rank modes (default: "processes"; only with --prefix)
  --filter REGEX    only programs whose name matches REGEX
  --timeout S       per-run time limit in seconds (default 120)
  --no-deps         do not check or install the Debian packages (${HDF5_PACKAGES[*]})
  -h, --help        this help
USAGE
}

PREFIX="" MPICH=0 OPENMPI=0 ABI=mpich NPS="1 2 4" MODES="" FILTER="" TIMEOUT=120 DEPS=1
while [ $# -gt 0 ]; do
    case "$1" in
        -h | --help) usage; exit 0 ;;
        --prefix) PREFIX="${2:?--prefix needs a value}"; shift 2 ;;
        --mpich) MPICH=1; shift ;;
        --openmpi) OPENMPI=1; ABI=ompi; shift ;;
        --abi) ABI="${2:?--abi needs a value}"; shift 2 ;;
        --np) NPS="${2:?--np needs a value}"; shift 2 ;;
        --modes) MODES="${2:?--modes needs a value}"; shift 2 ;;
        --filter) FILTER="${2:?--filter needs a value}"; shift 2 ;;
        --timeout) TIMEOUT="${2:?--timeout needs a value}"; shift 2 ;;
        --no-deps) DEPS=0; shift ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
done
case "$ABI" in mpich | ompi) ;; *) die "--abi: '$ABI' is neither mpich nor ompi" ;; esac
[ "$OPENMPI" = 0 ] || [ "$MPICH" = 0 ] || die "--mpich and --openmpi exclude each other"
[ "$MPICH" = 0 ] || [ "$ABI" = mpich ] || die "--mpich runs the h5pcc.mpich builds (no --abi ompi)"
REF=$((MPICH + OPENMPI)) # 1: run on a reference implementation
[ "$REF" = 1 ] || [ -n "$PREFIX" ] || { usage >&2; die "--prefix, --mpich or --openmpi is required"; }
[ "$REF" = 0 ] || [ -z "$PREFIX" ] || die "--prefix excludes --mpich and --openmpi"
[ "$REF" = 0 ] || [ -z "$MODES" ] || die "--modes is for oxmpi (--prefix) only"
[[ "$TIMEOUT" =~ ^[1-9][0-9]*$ ]] || die "--timeout needs a positive integer"
for n in $NPS; do [[ "$n" =~ ^[1-9][0-9]*$ ]] || die "--np: '$n' is not a positive integer"; done

if [ "$ABI" = ompi ]; then
    [ "$DEPS" = 0 ] || ensure_packages openmpi-bin libopenmpi-dev libhdf5-doc "${HDF5_OMPI_PACKAGES[@]}"
    H5CC=h5pcc.openmpi H5FC=h5pfc.openmpi
    command -v "$H5CC" >/dev/null || die "$H5CC not found (Debian package libhdf5-openmpi-dev)"
else
    [ "$DEPS" = 0 ] || ensure_packages mpich libmpich-dev "${HDF5_PACKAGES[@]}"
    H5CC=h5pcc.mpich H5FC=h5pfc.mpich
    command -v "$H5CC" >/dev/null || die "$H5CC not found (Debian package libhdf5-mpich-dev)"
fi

if [ "$MPICH" = 1 ]; then
    LABEL="mpich"
    MODES="mpich"
    command -v mpiexec.mpich >/dev/null || die "mpiexec.mpich not found (Debian package mpich)"
elif [ "$OPENMPI" = 1 ]; then
    LABEL="openmpi"
    MODES="openmpi"
    command -v mpirun.openmpi >/dev/null || die "mpirun.openmpi not found (Debian package openmpi-bin)"
else
    LABEL="oxmpi-$ABI"
    MODES="${MODES:-processes}"
    PREFIX="$(cd -- "$PREFIX" && pwd)" || die "no directory $PREFIX"
    [ -x "$PREFIX/bin/mpiexec" ] || die "$PREFIX/bin/mpiexec not found; run scripts/install.sh $PREFIX"
    for m in $MODES; do
        case "$m" in processes | threads) ;; *) die "--modes: unknown mode '$m'" ;; esac
    done
fi

DIR="$(cargo_target_dir)/hdf5"
BUILD="$DIR/build-$LABEL" # the same binaries, but two runs at once must not clash
LOGS="$DIR/logs-$LABEL"
RUNS="$DIR/runs-$LABEL"
rm -rf -- "$LOGS" "$RUNS"
mkdir -p -- "$BUILD" "$LOGS" "$RUNS"

# --- build: our programs, then HDF5's example ---
progs=()
declare -A pass_text
declare -A srcs
for src in "$OXMPI_ROOT"/hdf5-tests/*.c "$OXMPI_ROOT"/hdf5-tests/*.f90; do
    [ -f "$src" ] || continue # an unmatched glob
    p="$(basename "${src%.*}")"
    srcs[$p]="$src"
    [ -z "$FILTER" ] || [[ $p =~ $FILTER ]] || continue
    progs+=("$p")
    pass_text[$p]="$p: all checks passed"
done
if [ -z "$FILTER" ] || [[ ph5example =~ $FILTER ]]; then
    [ -f "$PH5EXAMPLE" ] || die "$PH5EXAMPLE not found (Debian package libhdf5-doc)"
    gzip -dc "$PH5EXAMPLE" >"$BUILD/ph5example.c"
    srcs[ph5example]="$BUILD/ph5example.c"
    progs+=(ph5example)
    pass_text[ph5example]="PHDF5 tests finished with no errors"
fi
[ "${#progs[@]}" -gt 0 ] || die "no program matches --filter '$FILTER'"
for p in "${progs[@]}"; do
    src="${srcs[$p]}"
    # HDF5's example is upstream code: no -Wall there
    case "$src" in
        "$BUILD"/*) build=("$H5CC" -O2 -g) ;;
        *.f90) build=("$H5FC" -Wall -Werror -O2 -g) ;;
        *) build=("$H5CC" -std=c99 -Wall -Werror -O2 -g) ;;
    esac
    if ! "${build[@]}" -o "$BUILD/$p" "$src" >"$LOGS/$p.build" 2>&1; then
        cat "$LOGS/$p.build" >&2
        die "${build[0]} failed to build $src"
    fi
done
if [ "$REF" = 0 ] && [ "$ABI" = mpich ]; then
    # The binaries need MPICH's libmpi.so.12 (Fortran: libmpichfort.so.12) and must get oxmpi's
    # under our mpiexec.
    for p in "${progs[@]}"; do
        line="$(LD_LIBRARY_PATH="$PREFIX/lib" ldd "$BUILD/$p" | grep -E 'libmpi(ch|chfort)?\.so\.12' | head -1 || true)"
        case "$line" in
            *"=> $PREFIX/lib/"*) ;;
            *) die "the MPI library of $BUILD/$p does not resolve to $PREFIX/lib: ${line:-none}" ;;
        esac
    done
elif [ "$REF" = 0 ]; then
    # Open MPI's libraries (libmpi.so.40, the Fortran ones) must all be among oxmpi's, which our
    # mpiexec puts first for a program that needs them.
    for p in "${progs[@]}"; do
        bad="$(LD_LIBRARY_PATH="$PREFIX/lib/openmpi-abi" ldd "$BUILD/$p" | grep -E 'libmpi[a-z_0-9]*\.so\.40 ' |
            grep -vF "=> $PREFIX/lib/openmpi-abi/" || true)"
        [ -z "$bad" ] || die "Open MPI libraries of $BUILD/$p that oxmpi does not provide: $bad"
    done
fi

# --- run ---
echo "# parallel HDF5 programs built with $H5CC on $LABEL ($("$H5CC" -showconfig | awk -F': ' '/HDF5 Version/ { print "HDF5 " $2 }')), ranks: $NPS, modes: $MODES; logs in $LOGS"
failed=() passed=0
for p in "${progs[@]}"; do
    for np in $NPS; do
        for mode in $MODES; do
            tag="$p.n$np.$mode"
            log="$LOGS/$tag.log"
            work="$RUNS/$tag"
            mkdir -p -- "$work"
            args=("$work")
            [ "$p" != ph5example ] || args=(-f "$work")
            if [ "$MPICH" = 1 ]; then
                cmd=(timeout -k 5 "$TIMEOUT" mpiexec.mpich -n "$np" "$BUILD/$p" "${args[@]}")
            elif [ "$OPENMPI" = 1 ]; then
                cmd=(timeout -k 5 "$TIMEOUT" mpirun.openmpi --allow-run-as-root --oversubscribe -np "$np" "$BUILD/$p" "${args[@]}")
            else
                cmd=(timeout -k 5 "$((TIMEOUT + 10))" "$PREFIX/bin/mpiexec" --mode "$mode" --timeout "$TIMEOUT"
                    -n "$np" "$BUILD/$p" "${args[@]}")
            fi
            start=$(date +%s.%N)
            rc=0
            (cd "$work" && TMPDIR="$work" HDF5_PARAPREFIX="$work" "${cmd[@]}") >"$log" 2>&1 </dev/null || rc=$?
            secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
            why=""
            left="$(find "$work" -mindepth 1 -printf '%P ' | head -c 300)"
            if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
                why="timeout after ${TIMEOUT}s (exit $rc)"
            elif [ "$rc" != 0 ]; then
                why="exit status $rc"
            elif ! grep -qF -- "${pass_text[$p]}" "$log"; then
                why="no '${pass_text[$p]}' in the output"
            elif [ -n "$left" ]; then
                why="files left behind: $left"
            fi
            rm -rf -- "$work"
            if [ -z "$why" ]; then
                passed=$((passed + 1))
                echo "PASS $p n=$np $mode ${secs}s"
            else
                failed+=("$p n=$np $mode")
                echo "FAIL $p n=$np $mode ${secs}s  ($why); log: $log"
                # the programs' own lines, the MPI error under HDF5's error stack, the launcher's
                excerpt="$(grep -E "^rank [0-9]+: |error string is|^oxmpi: |Assertion|errors on|^\*\*\*" "$log" |
                    sort -u | head -n 12)" || true
                [ -n "$excerpt" ] || excerpt="$(tail -n 12 "$log")"
                printf '%s\n' "$excerpt" | sed 's/^/  | /'
            fi
        done
    done
done
rmdir -- "$RUNS" 2>/dev/null || true
echo "# summary: $passed passed, ${#failed[@]} failed"
[ ${#failed[@]} = 0 ] || { printf '#   %s\n' "${failed[@]}"; exit 1; }
