#!/usr/bin/env bash
# Parallel netCDF on oxmpi: PnetCDF and netCDF-4 (Debian's libpnetcdf and libnetcdf-mpi, both
# built on Open MPI) through programs built with mpicc.openmpi and PnetCDF's own MPI tools. See --help.
set -euo pipefail

OXMPI_ROOT="$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/.." && pwd)"
# shellcheck source=scripts/common.sh source-path=SCRIPTDIR/..
. "$OXMPI_ROOT/scripts/common.sh"

NETCDF_PACKAGES=(libpnetcdf-dev pnetcdf-bin libnetcdf-mpi-dev libopenmpi-dev)
NC_FLAGS=(-I/usr/lib/x86_64-linux-gnu/netcdf/mpi/include -lnetcdf_mpi)

usage() {
    cat <<USAGE
Usage: scripts/netcdf-suite.sh --prefix PREFIX [--modes "processes threads"] [--np "1 2 4"] [options]
       scripts/netcdf-suite.sh --openmpi [options]

Builds netcdf-tests/pnc_blocks.c (PnetCDF: collective, independent and nonblocking strided
writes, record variables, read back and checked) and netcdf-tests/nc4_par.c (netCDF-4 parallel
over HDF5: collective and independent access, read back and checked) with mpicc.openmpi, as a
user on Debian would, and runs each at every rank count of --np in each mode of --modes under
PREFIX/bin/mpiexec (Open MPI's ABI, oxmpi's libmpi.so.40). Each PnetCDF file is then compared
with the one-rank file by PnetCDF's own MPI tool ncmpidiff (run on oxmpi at 2 ranks), and
ncmpidump (on oxmpi) must print its header. With --openmpi the same runs go to Open MPI's
mpirun, to compare. Every run gets a fresh directory, removed at the end. One line per run;
exit status 1 if any failed.

Options:
  --prefix PREFIX   an oxmpi installation (scripts/install.sh)
  --openmpi         run on the system Open MPI instead
  --modes "LIST"    oxmpi rank modes (default: "processes threads")
  --np "LIST"       rank counts (default: "1 2 4")
  --timeout S       per-run time limit (default 120)
  --no-deps         do not install the Debian packages (${NETCDF_PACKAGES[*]})
  -h, --help        this help
USAGE
}

PREFIX="" OPENMPI=0 MODES="processes threads" NPS="1 2 4" TIMEOUT=120 DEPS=1
while [ $# -gt 0 ]; do
    case "$1" in
        -h | --help) usage; exit 0 ;;
        --prefix) PREFIX="${2:?--prefix needs a value}"; shift 2 ;;
        --openmpi) OPENMPI=1; shift ;;
        --modes) MODES="${2:?--modes needs a value}"; shift 2 ;;
        --np) NPS="${2:?--np needs a value}"; shift 2 ;;
        --timeout) TIMEOUT="${2:?--timeout needs a value}"; shift 2 ;;
        --no-deps) DEPS=0; shift ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
done
if [ "$OPENMPI" = 1 ]; then
    MODES="openmpi"
else
    [ -n "$PREFIX" ] || { usage >&2; die "--prefix or --openmpi is required"; }
    PREFIX="$(cd -- "$PREFIX" && pwd)" || die "--prefix $PREFIX: no such directory"
fi
[ "$DEPS" = 0 ] || install_missing_packages "${NETCDF_PACKAGES[@]}"

OUT="$(cargo_target_dir)/netcdf"
rm -rf -- "$OUT" && mkdir -p -- "$OUT/logs"
mpicc.openmpi -O1 -Wall -o "$OUT/pnc_blocks" "$OXMPI_ROOT/netcdf-tests/pnc_blocks.c" -lpnetcdf
mpicc.openmpi -O1 -Wall -o "$OUT/nc4_par" "$OXMPI_ROOT/netcdf-tests/nc4_par.c" "${NC_FLAGS[@]}"

failed=0 runs=0
for mode in $MODES; do
    ref=""
    for np in $NPS; do
        for prog in pnc_blocks nc4_par; do
            label="$prog.$mode.n$np"
            log="$OUT/logs/$label.log"
            dir="$OUT/run-$label"
            mkdir -p -- "$dir"
            file="$dir/$prog.nc"
            runs=$((runs + 1))
            ok=1
            launch_job "$mode" "$np" "$log" "$OUT/$prog" "$file" && grep -q "^$prog: OK ($np ranks" "$log" || ok=0
            if [ "$ok" = 1 ] && [ "$prog" = pnc_blocks ]; then
                # PnetCDF's own tools, themselves MPI programs built on Open MPI.
                launch_job "$mode" 1 "$log" ncmpidump -h "$file" && grep -q 'title = "oxmpi netcdf-tests pnc_blocks"' "$log" || ok=0
                if [ -z "$ref" ]; then
                    ref="$OUT/ref-$mode.nc" && cp -- "$file" "$ref"
                else
                    launch_job "$mode" 2 "$log" ncmpidiff "$ref" "$file" && grep -q "All variables of two files are the same" "$log" || ok=0
                fi
            fi
            rm -rf -- "$dir"
            if [ "$ok" = 1 ]; then echo "PASS $label"; else echo "FAIL $label: $log"; tail -5 "$log" | sed 's/^/    /'; failed=1; fi
        done
    done
    rm -f -- "$OUT/ref-$mode.nc"
done
echo "netcdf-suite: $runs runs, $([ $failed = 0 ] && echo 'all passed' || echo 'some FAILED')"
exit $failed
