#!/usr/bin/env bash
# Run a demo job end to end: build and install oxmpi, compile scripts/demo/ring.c with the
# installed mpicc, run it with the installed mpiexec.
set -euo pipefail

OXMPI_ROOT="$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/.." && pwd)"
# shellcheck source=scripts/common.sh source-path=SCRIPTDIR/..
. "$OXMPI_ROOT/scripts/common.sh"

usage() {
    cat <<'USAGE'
Usage: scripts/demo.sh [-n N] [--mode processes|threads]

Builds oxmpi (cargo build --release), installs it into target/demo-prefix, compiles
scripts/demo/ring.c with target/demo-prefix/bin/mpicc and runs it with
target/demo-prefix/bin/mpiexec -n N (default 4): a token travels around the ring of ranks,
each rank prints a line, rank 0 prints the total.
Needs cargo (https://rustup.rs) and gcc.

Options:
  -n N          number of ranks (default 4)
  --mode M      rank mode passed to mpiexec (default: mpiexec's default)
  -h, --help    show this help
USAGE
}

n=4
mode=()
while [ $# -gt 0 ]; do
    case "$1" in
        -h | --help) usage; exit 0 ;;
        -n) n="${2:?-n needs a value}"; shift ;;
        --mode) mode=(--mode "${2:?--mode needs a value}"); shift ;;
        --mode=*) mode=(--mode "${1#*=}") ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
    shift
done

command -v gcc >/dev/null 2>&1 || die "gcc not found (Debian: apt-get install gcc)"
require_cargo

prefix="$(cargo_target_dir)/demo-prefix"
echo "== building oxmpi and installing it into $prefix"
"$OXMPI_ROOT/scripts/install.sh" "$prefix"

echo "== compiling scripts/demo/ring.c with $prefix/bin/mpicc"
work="$(cargo_target_dir)/demo"
mkdir -p -- "$work"
"$prefix/bin/mpicc" -show -O2 -o "$work/ring" "$OXMPI_ROOT/scripts/demo/ring.c"
"$prefix/bin/mpicc" -O2 -o "$work/ring" "$OXMPI_ROOT/scripts/demo/ring.c"

echo "== running: mpiexec ${mode[*]:+${mode[*]} }-n $n ring"
"$prefix/bin/mpiexec" ${mode[@]+"${mode[@]}"} -n "$n" "$work/ring"
echo "== demo finished successfully"
