#!/usr/bin/env bash
# Build oxmpi and install it into PREFIX.
set -euo pipefail

OXMPI_ROOT="$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/.." && pwd)"
# shellcheck source=scripts/common.sh source-path=SCRIPTDIR/..
. "$OXMPI_ROOT/scripts/common.sh"

usage() {
    cat <<USAGE
Usage: scripts/install.sh [--no-build] PREFIX

Runs 'cargo build --release', builds the threads-mode preload library with the
system C compiler (\$CC, default cc) and installs oxmpi into PREFIX:
  PREFIX/bin/mpiexec, PREFIX/bin/mpirun -> mpiexec, PREFIX/bin/mpicc, PREFIX/bin/mpicxx,
  PREFIX/bin/clv-schedule (Clairvoyant reduce schedules)
  PREFIX/bin/oxmpi-monitor (shows files written by mpiexec --monitor)
  PREFIX/lib/liboxmpi.so (SONAME libmpi.so.12) and the symlinks
             libmpi.so.12, libmpich.so.12, libmpi.so -> liboxmpi.so
  PREFIX/lib/liboxmpi-threads.so (preloaded by 'mpiexec --mode threads')
  PREFIX/lib/openmpi-abi/libmpi.so.40 (Open MPI 4.1's ABI, for programs built by Open MPI's
             mpicc; mpiexec selects it), libmpi_mpifh.so.40, libmpi_usempi_ignore_tkr.so.40 and
             libmpi_usempif08.so.40 (its Fortran ABI: mpif.h, 'use mpi' and 'use mpi_f08' programs
             of Open MPI's mpif90)
  PREFIX/lib/libmpi_abi.so.1 (the MPI-5 standard ABI, NEEDED libmpi.so.12) and the link
             libmpi_abi.so; PREFIX/include/mpi_abi.h ('mpicc -mpi-abi')
  PREFIX/include/mpi.h (and the other headers in include/), mpif.h, mpi.f90
  Fortran: PREFIX/bin/mpifort, mpif90, mpif77; PREFIX/lib/liboxmpifort.so (SONAME
             libmpifort.so.12: the 'mpi_f08' procedures, built with gfortran; NEEDED libmpi.so.12)
             and the links libmpifort.so.12, libmpichfort.so.12, libmpifort.so -> liboxmpifort.so
             (liboxmpi.so holds the mpif.h / 'use mpi' bindings);
             the 'mpi' and 'mpi_f08' modules built with gfortran in
             PREFIX/lib/fortran/gfortran-VERSION (gfortran is installed with apt-get if missing)
Running it again over an existing installation replaces it in place.

Options:
  --no-build   install what is already built in target/release
  -h, --help   show this help
USAGE
}

build=yes
prefix=""
while [ $# -gt 0 ]; do
    case "$1" in
        -h | --help) usage; exit 0 ;;
        --no-build) build=no ;;
        -*) usage >&2; die "unknown option: $1" ;;
        *)
            [ -z "$prefix" ] || die "more than one PREFIX given"
            prefix="$1"
            ;;
    esac
    shift
done
[ -n "$prefix" ] || { usage >&2; exit 2; }

# gfortran builds the 'mpi' module (and is what mpifort runs by default).
command -v "${FC:-gfortran}" >/dev/null 2>&1 || ensure_packages gfortran

if [ "$build" = yes ]; then
    require_cargo
    (cd "$OXMPI_ROOT" && cargo build --release)
fi

release="$(cargo_target_dir)/release"
for f in "$release/liboxmpi.so" "$release/mpiexec" "$release/clv-schedule" "$release/oxmpi-monitor"; do
    [ -f "$f" ] || die "$f not found; run 'cargo build --release' first"
done
headers=("$OXMPI_ROOT"/include/*.h)
[ -f "$OXMPI_ROOT/c-src/threads-preload.c" ] || die "c-src/threads-preload.c not found in $OXMPI_ROOT"
[ -f "$OXMPI_ROOT/include/mpi.h" ] || die "include/mpi.h not found in $OXMPI_ROOT"

# The threads-mode preload library (exit and pthread_create interposers) is plain C, built here
# before anything is installed, so a missing compiler leaves PREFIX untouched.
build_dir="$(mktemp -d)"
trap 'rm -rf -- "$build_dir"' EXIT
# shellcheck disable=SC2086 # CC may be a command with arguments, e.g. "ccache gcc"
${CC:-cc} -shared -fPIC -O2 -Wall -o "$build_dir/liboxmpi-threads.so" "$OXMPI_ROOT/c-src/threads-preload.c" -ldl -lpthread ||
    die "cannot build liboxmpi-threads.so with '${CC:-cc}'; set CC to a working C compiler"

# The 'mpi' module, built like the preload library before anything is installed. Module files
# depend on the compiler version, so they go in a directory named after it (mpifort looks there).
fc="${FC:-gfortran}"
fc_key="$(basename -- "$fc")-$("$fc" -dumpfullversion -dumpversion | head -1)"
mkdir -p -- "$build_dir/mod"
(cd -- "$build_dir/mod" && "$fc" -c -fPIC "$OXMPI_ROOT/include/mpi_sizeofs.f90" -o mpi_sizeofs.o &&
    "$fc" -c -fPIC -I"$OXMPI_ROOT/include" "$OXMPI_ROOT/include/mpi.f90" -o mpi.o) ||
    die "cannot build the Fortran 'mpi' module with '$fc'; set FC to a working Fortran compiler"
# The 'mpi_f08' module and its procedures (fortran-f08/mpi_f08.f90, made by scripts/gen-f08.py),
# with the MPI_SIZEOF procedures of 'use mpi' (include/mpi_sizeofs.f90):
# a shared library linked to liboxmpi.so (its SONAME libmpi.so.12, found next to it), named like
# MPICH's libmpifort.so.12 / libmpichfort.so.12 so MPICH-built 'use mpi_f08' programs load it.
# fortran-f08/mpi_f08_names.ld gives each procedure (written under its PMPI_ name) its MPI_ name.
cp -- "$release/liboxmpi.so" "$build_dir/libmpi.so"
(cd -- "$build_dir/mod" && "$fc" -shared -fPIC -O1 -ffree-line-length-none \
    "$OXMPI_ROOT/fortran-f08/mpi_f08.f90" mpi_sizeofs.o "$OXMPI_ROOT/fortran-f08/mpi_f08_names.ld" -o "$build_dir/liboxmpifort.so" \
    -Wl,-soname,libmpifort.so.12 -L"$build_dir" -lmpi -Wl,-rpath,'$ORIGIN' 2>"$build_dir/f08.log") ||
    { cat "$build_dir/f08.log" >&2; die "cannot build the Fortran 'mpi_f08' module with '$fc'"; }

# The MPI-5 standard ABI library: MPI_X/PMPI_X entry points (c-src/mpi_abi_entry.S, made by
# scripts/gen-mpi-abi.py) that jump to liboxmpi.so's oxabi_MPI_X, found next to it by SONAME.
# shellcheck disable=SC2086 # CC may be a command with arguments
${CC:-cc} -shared -fPIC -o "$build_dir/libmpi_abi.so.1" "$OXMPI_ROOT/c-src/mpi_abi_entry.S" \
    -Wl,-soname,libmpi_abi.so.1 -L"$build_dir" -lmpi -Wl,-rpath,'$ORIGIN' ||
    die "cannot build libmpi_abi.so.1 with '${CC:-cc}'; set CC to a working C compiler"
# Open MPI 4.1's ABI (c-src/ompi_abi_entry.S, made by scripts/gen-mpi-abi.py --abi ompi): in a
# directory of its own, so it shadows no Open MPI; mpiexec puts it first for programs needing it.
# shellcheck disable=SC2086 # CC may be a command with arguments
${CC:-cc} -shared -fPIC -o "$build_dir/libmpi.so.40" "$OXMPI_ROOT/c-src/ompi_abi_entry.S" "$OXMPI_ROOT/c-src/ompi_cxx_glue.c" \
    -Wl,-soname,libmpi.so.40 -L"$build_dir" -lmpi -Wl,-rpath,'$ORIGIN/..' ||
    die "cannot build libmpi.so.40 with '${CC:-cc}'; set CC to a working C compiler"
# Open MPI 4.1's Fortran library (mpif.h programs; c-src/ompi_mpifh_entry.S, made by
# scripts/gen-fortran-bindings.py --abi ompi): next to libmpi.so.40, which it NEEDs as Open MPI's does.
# shellcheck disable=SC2086 # CC may be a command with arguments
${CC:-cc} -shared -fPIC -o "$build_dir/libmpi_mpifh.so.40" "$OXMPI_ROOT/c-src/ompi_mpifh_entry.S" \
    -Wl,-soname,libmpi_mpifh.so.40 -Wl,--no-as-needed "$build_dir/libmpi.so.40" -L"$build_dir" -lmpi \
    -Wl,-rpath,'$ORIGIN:$ORIGIN/..' ||
    die "cannot build libmpi_mpifh.so.40 with '${CC:-cc}'; set CC to a working C compiler"
# ... and its `use mpi` library (MPI_SIZEOF; the rest is libmpi_mpifh.so.40's, which it NEEDs).
# shellcheck disable=SC2086 # CC may be a command with arguments
${CC:-cc} -shared -fPIC -o "$build_dir/libmpi_usempi_ignore_tkr.so.40" "$OXMPI_ROOT/c-src/ompi_usempi_entry.S" \
    -Wl,-soname,libmpi_usempi_ignore_tkr.so.40 -Wl,--no-as-needed "$build_dir/libmpi_mpifh.so.40" -Wl,-rpath,'$ORIGIN' ||
    die "cannot build libmpi_usempi_ignore_tkr.so.40 with '${CC:-cc}'; set CC to a working C compiler"
# ... and its `use mpi_f08` library (c-src/ompi_usempif08_entry.S: mpi_X_f08_ is the mpif.h binding
# of X; plus the MPI_SIZEOF procedures of ompi_usempi_entry.S, which Debian's mpif90.openmpi also
# links 'use mpi' programs with).
# shellcheck disable=SC2086 # CC may be a command with arguments
${CC:-cc} -shared -fPIC -o "$build_dir/libmpi_usempif08.so.40" "$OXMPI_ROOT/c-src/ompi_usempif08_entry.S" "$OXMPI_ROOT/c-src/ompi_usempi_entry.S" \
    -Wl,-soname,libmpi_usempif08.so.40 -Wl,--no-as-needed "$build_dir/libmpi_mpifh.so.40" -L"$build_dir" -lmpi -Wl,-rpath,'$ORIGIN:$ORIGIN/..' ||
    die "cannot build libmpi_usempif08.so.40 with '${CC:-cc}'; set CC to a working C compiler"

mkdir -p -- "$prefix/bin" "$prefix/lib" "$prefix/include" "$prefix/lib/fortran/$fc_key"
prefix="$(cd -- "$prefix" && pwd)"

# Copy to a temporary name, then rename over the target: a running program that has the old
# file mapped keeps it, and a failed copy never leaves a half-written file behind.
put() { # put MODE SRC DEST
    local tmp
    tmp="$(dirname -- "$3")/.$(basename -- "$3").tmp.$$"
    install -m "$1" -- "$2" "$tmp"
    mv -f -- "$tmp" "$3"
}
link() { # link TARGET NAME (NAME may currently be a file, a link or absent)
    rm -f -- "$2"
    ln -s -- "$1" "$2"
}

put 755 "$release/mpiexec" "$prefix/bin/mpiexec"
put 755 "$release/clv-schedule" "$prefix/bin/clv-schedule"
put 755 "$release/oxmpi-monitor" "$prefix/bin/oxmpi-monitor"
link mpiexec "$prefix/bin/mpirun"
put 755 "$OXMPI_ROOT/mpicc-wrapper/mpicc" "$prefix/bin/mpicc"
put 755 "$OXMPI_ROOT/mpicc-wrapper/mpicxx" "$prefix/bin/mpicxx"
put 755 "$OXMPI_ROOT/mpicc-wrapper/mpicc" "$prefix/bin/mpifort"
for name in mpif90 mpif77; do
    link mpifort "$prefix/bin/$name"
done

put 755 "$release/liboxmpi.so" "$prefix/lib/liboxmpi.so"
put 755 "$build_dir/liboxmpi-threads.so" "$prefix/lib/liboxmpi-threads.so"
put 755 "$build_dir/liboxmpifort.so" "$prefix/lib/liboxmpifort.so"
put 755 "$build_dir/libmpi_abi.so.1" "$prefix/lib/libmpi_abi.so.1"
link libmpi_abi.so.1 "$prefix/lib/libmpi_abi.so"
mkdir -p -- "$prefix/lib/openmpi-abi"
put 755 "$build_dir/libmpi.so.40" "$prefix/lib/openmpi-abi/libmpi.so.40"
put 755 "$build_dir/libmpi_mpifh.so.40" "$prefix/lib/openmpi-abi/libmpi_mpifh.so.40"
put 755 "$build_dir/libmpi_usempi_ignore_tkr.so.40" "$prefix/lib/openmpi-abi/libmpi_usempi_ignore_tkr.so.40"
put 755 "$build_dir/libmpi_usempif08.so.40" "$prefix/lib/openmpi-abi/libmpi_usempif08.so.40"
for name in libmpi.so.12 libmpich.so.12 libmpi.so; do
    link liboxmpi.so "$prefix/lib/$name"
done
for name in libmpifort.so.12 libmpichfort.so.12 libmpifort.so; do
    link liboxmpifort.so "$prefix/lib/$name"
done

put 644 "$OXMPI_ROOT/fortran-f08/mpi_f08.f90" "$prefix/include/mpi_f08.f90"
mkdir -p -- "$prefix/include/mpi_abi"
put 644 "$OXMPI_ROOT/include/mpi_abi.h" "$prefix/include/mpi_abi/mpi.h"
for h in "${headers[@]}" "$OXMPI_ROOT/include/mpi.f90" "$OXMPI_ROOT/include/mpi_sizeofs.f90"; do
    put 644 "$h" "$prefix/include/$(basename -- "$h")"
done
for m in "$build_dir"/mod/*.mod; do
    put 644 "$m" "$prefix/lib/fortran/$fc_key/$(basename -- "$m")"
done

echo "oxmpi installed in $prefix"
echo "  add to PATH: export PATH=\"$prefix/bin:\$PATH\""
