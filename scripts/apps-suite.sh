#!/usr/bin/env bash
# Packaged applications and libraries built on Open MPI, unchanged, on oxmpi: LAMMPS (Debian's
# lmp binary), FFTW's MPI interface and Boost.MPI (programs built with mpicc/mpicxx.openmpi).
# See --help.
set -euo pipefail

OXMPI_ROOT="$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/.." && pwd)"
# shellcheck source=scripts/common.sh source-path=SCRIPTDIR/..
. "$OXMPI_ROOT/scripts/common.sh"

APPS_PACKAGES=(lammps libfftw3-dev libfftw3-mpi-dev libboost-mpi-dev libopenmpi-dev openmpi-bin)

usage() {
    cat <<USAGE
Usage: scripts/apps-suite.sh --prefix PREFIX [--modes "processes threads"] [--np "1 3"] [options]

Runs, in each mode of --modes under PREFIX/bin/mpiexec (Open MPI's ABI: oxmpi's libmpi.so.40):
  lammps       Debian's LAMMPS binary (lmp) on apps-tests/lammps_features.in: Lennard-Jones
               liquid with a tiled decomposition and RCB load balancing (irregular exchanges),
               RDF and MSD computes, sorted per-atom dumps, a restart file written and read
               back, write_data. Its thermo output, dump and data file's atoms must equal
               Open MPI's at the same rank count (mpirun.openmpi runs the reference first).
  fftw_mpi_3d  apps-tests/fftw_mpi_3d.c (FFTW's MPI interface: distributed 3-D complex and
               2-D transposed real transforms, checked against analytic results).
  boost_mpi    apps-tests/boost_mpi.cc (Boost.MPI: serialized objects point-to-point and
               nonblocking, broadcast, gather, all_reduce with a non-commutative functor, scan,
               split, Cartesian topology, skeleton and content).
at each rank count of --np. One line per run; exit status 1 if any failed. Every run gets a
fresh directory, removed at the end. About 30 s on 2 cores.

Options:
  --prefix PREFIX   an oxmpi installation (scripts/install.sh)
  --modes "LIST"    oxmpi rank modes (default: "processes threads")
  --np "LIST"       rank counts (default: "1 3")
  --timeout S       per-run time limit (default 120)
  --no-deps         do not install the Debian packages (${APPS_PACKAGES[*]})
  -h, --help        this help
USAGE
}

PREFIX="" MODES="processes threads" NPS="1 3" TIMEOUT=120 DEPS=1
while [ $# -gt 0 ]; do
    case "$1" in
        -h | --help) usage; exit 0 ;;
        --prefix) PREFIX="${2:?--prefix needs a value}"; shift 2 ;;
        --modes) MODES="${2:?--modes needs a value}"; shift 2 ;;
        --np) NPS="${2:?--np needs a value}"; shift 2 ;;
        --timeout) TIMEOUT="${2:?--timeout needs a value}"; shift 2 ;;
        --no-deps) DEPS=0; shift ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
done
[ -n "$PREFIX" ] || { usage >&2; die "--prefix is required"; }
PREFIX="$(cd -- "$PREFIX" && pwd)" || die "--prefix $PREFIX: no such directory"
[ "$DEPS" = 0 ] || install_missing_packages "${APPS_PACKAGES[@]}"

OUT="$(cargo_target_dir)/apps"
rm -rf -- "$OUT" && mkdir -p -- "$OUT/logs"
mpicc.openmpi -O1 -Wall -o "$OUT/fftw_mpi_3d" "$OXMPI_ROOT/apps-tests/fftw_mpi_3d.c" -lfftw3_mpi -lfftw3 -lm
mpicxx.openmpi -O1 -Wall -o "$OUT/boost_mpi" "$OXMPI_ROOT/apps-tests/boost_mpi.cc" -lboost_mpi -lboost_serialization
LMP_IN="$OXMPI_ROOT/apps-tests/lammps_features.in"

# What a LAMMPS run must reproduce: its thermo rows and the sorted dump (both printed to 6-8
# digits), and the data file's atoms (id and type; its 16-digit coordinates and velocities
# depend on the order of floating-point sums, which differs between MPI libraries).
lammps_digest() {
    local dir=$1
    grep -E '^ +[0-9]+ +-?[0-9.]+ ' "$dir/out.txt"
    cat "$dir/dump.atoms"
    awk 'NF == 8 { print $1, $2 }' "$dir/final.data" | sort -n
}

failed=0 runs=0
for np in $NPS; do
    ref="$OUT/lammps-ref-n$np"
    mkdir -p -- "$ref"
    if ! (cd "$ref" && launch_job openmpi "$np" "$ref/out.txt" lmp -in "$LMP_IN" -log none); then
        echo "FAIL lammps reference on Open MPI at $np ranks: $ref/out.txt"; failed=1
        continue
    fi
    lammps_digest "$ref" >"$OUT/lammps-ref-n$np.txt"
    for mode in $MODES; do
        for prog in lammps fftw_mpi_3d boost_mpi; do
            label="$prog.$mode.n$np"
            log="$OUT/logs/$label.log"
            dir="$OUT/run-$label"
            mkdir -p -- "$dir"
            runs=$((runs + 1))
            ok=1
            case "$prog" in
                lammps)
                    (cd "$dir" && launch_job "$mode" "$np" "$dir/out.txt" lmp -in "$LMP_IN" -log none) || ok=0
                    cp -- "$dir/out.txt" "$log" 2>/dev/null || true
                    if [ "$ok" = 1 ]; then
                        lammps_digest "$dir" >"$dir/digest.txt" 2>>"$log" || ok=0
                        cmp -s "$dir/digest.txt" "$OUT/lammps-ref-n$np.txt" || { ok=0; diff "$OUT/lammps-ref-n$np.txt" "$dir/digest.txt" | head -5 >>"$log" || true; }
                    fi ;;
                *)
                    (cd "$dir" && launch_job "$mode" "$np" "$log" "$OUT/$prog") && grep -q "^$prog: OK ($np ranks)" "$log" || ok=0 ;;
            esac
            rm -rf -- "$dir"
            if [ "$ok" = 1 ]; then echo "PASS $label"; else echo "FAIL $label: $log"; tail -5 "$log" | sed 's/^/    /'; failed=1; fi
        done
    done
    rm -rf -- "$ref"
done
echo "apps-suite: $runs runs, $([ $failed = 0 ] && echo 'all passed' || echo 'some FAILED')"
exit $failed
