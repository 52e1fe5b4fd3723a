# shellcheck shell=bash
# Helpers shared by scripts/test.sh and scripts/bench.sh (sourced, not executed).

# Debian packages the test suite and the benchmarks need.
# shellcheck disable=SC2034 # used by the scripts that source this file
OXMPI_DEBIAN_PACKAGES=(gcc g++ make gfortran mpich libmpich-dev openmpi-bin libopenmpi-dev netpipe-mpich2
    libpmix2 libucx0 slurmd slurmctld slurm-client munge iproute2
    libhdf5-mpich-dev libhdf5-openmpi-dev libhdf5-doc scalapack-mpi-test libcoarrays-mpich-dev
    tachyon-bin-nox libtachyon-mpich-0 tachyon-doc
    libpnetcdf-dev pnetcdf-bin libnetcdf-mpi-dev python3-h5py-mpi python3-pytest python3-pytest-mpi
    lammps libfftw3-dev libfftw3-mpi-dev libboost-mpi-dev libpetsc-real-dev libpetsc3.18-dev-examples)

die() {
    echo "error: $*" >&2
    exit 1
}

# ensure_packages PKG...: install the missing ones with apt-get (as root, or through sudo).
ensure_packages() {
    local missing=() pkg
    for pkg in "$@"; do
        if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
            missing+=("$pkg")
        fi
    done
    if [ "${#missing[@]}" -eq 0 ]; then
        echo "all required packages are installed: $*"
        return 0
    fi
    command -v apt-get >/dev/null 2>&1 ||
        die "missing packages (${missing[*]}) and no apt-get; install them by hand"
    local sudo=()
    if [ "$(id -u)" != 0 ]; then
        command -v sudo >/dev/null 2>&1 ||
            die "missing packages (${missing[*]}); not root and no sudo available"
        sudo=(sudo)
    fi
    echo "installing missing packages: ${missing[*]}"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
}

require_cargo() {
    if ! command -v cargo >/dev/null 2>&1; then
        if [ -x "$HOME/.cargo/bin/cargo" ]; then
            PATH="$HOME/.cargo/bin:$PATH"
            export PATH
        else
            die "cargo not found. Install Rust with rustup (https://rustup.rs):
  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y && . \"\$HOME/.cargo/env\""
        fi
    fi
}

# Directory cargo builds into.
# Installs those of the Debian packages named that are missing (apt-get, quietly); dies naming
# them if it cannot.
install_missing_packages() {
    local missing=() p
    for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
    [ "${#missing[@]}" -gt 0 ] || return 0
    echo "installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null || die "cannot install ${missing[*]}"
}

# launch_job MODE NP LOG PROGRAM ARGS...: one job of the suite scripts, output appended to LOG:
# MODE openmpi runs it on Open MPI's mpirun, processes or threads on $PREFIX/bin/mpiexec; both
# under a time limit of $TIMEOUT seconds.
launch_job() {
    local mode=$1 np=$2 log=$3; shift 3
    if [ "$mode" = openmpi ]; then
        timeout -k 5 "$TIMEOUT" mpirun.openmpi --allow-run-as-root --oversubscribe -n "$np" "$@" >>"$log" 2>&1
    else
        timeout -k 5 "$((TIMEOUT + 10))" "$PREFIX/bin/mpiexec" --mode "$mode" --timeout "$TIMEOUT" -n "$np" "$@" >>"$log" 2>&1
    fi
}

cargo_target_dir() {
    if [ -n "${CARGO_TARGET_DIR:-}" ]; then
        echo "$CARGO_TARGET_DIR"
    else
        echo "$OXMPI_ROOT/target"
    fi
}
