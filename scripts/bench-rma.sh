#!/usr/bin/env bash
# RMA put/get latency and bandwidth (benches/rma_latency.c): oxmpi (processes and threads mode),
# MPICH and Open MPI, 2 ranks. See --help.
set -euo pipefail

OXMPI_ROOT="$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/.." && pwd)"

usage() {
    cat <<'USAGE'
Usage: scripts/bench-rma.sh --prefix DIR [options]

Builds benches/rma_latency.c with oxmpi's mpicc (from an installation made by
scripts/install.sh DIR), mpicc.mpich and mpicc.openmpi (all -O2), and runs it with 2 ranks:
  oxmpi      DIR/bin/mpiexec --mode processes -n 2
  oxmpi-thr  DIR/bin/mpiexec --mode threads -n 2
  MPICH      mpiexec.mpich -n 2
  Open MPI   mpirun.openmpi --allow-run-as-root --oversubscribe -np 2
Each prints, per window kind (allocate, create) and operation (put, get + flush), the median
microseconds per operation and MB/s for 8 B .. 4 MiB. An implementation that is not installed
or fails is skipped with a message. Output also goes to target/bench/rma.txt.

Options:
  --prefix DIR   the oxmpi installation (required)
  --max BYTES    largest size (default 4194304)
  --only NAMES   comma-separated subset of: oxmpi,oxmpi-thr,mpich,openmpi
  --timeout S    time limit per run in seconds (default 300)
  -h, --help     show this help
USAGE
}

prefix="" max=4194304 only="oxmpi,oxmpi-thr,mpich,openmpi" timeout=300
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix="$2"; shift 2 ;;
        --max) max="$2"; shift 2 ;;
        --only) only="$2"; shift 2 ;;
        --timeout) timeout="$2"; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "bench-rma.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
[ -n "$prefix" ] || { echo "bench-rma.sh: --prefix DIR is required (see --help)" >&2; exit 2; }

out="$OXMPI_ROOT/target/bench"
mkdir -p "$out"
src="$OXMPI_ROOT/benches/rma_latency.c"
results="$out/rma.txt"
: > "$results"

# name, compiler, launcher command
run_one() {
    local name="$1" cc="$2"; shift 2
    case ",$only," in *",$name,"*) ;; *) return 0 ;; esac
    if ! command -v "$cc" >/dev/null 2>&1 && [ ! -x "$cc" ]; then
        echo "# $name: $cc not found, skipped" | tee -a "$results"
        return 0
    fi
    local bin="$out/rma_latency.$name"
    if ! "$cc" -O2 -o "$bin" "$src"; then
        echo "# $name: build failed, skipped" | tee -a "$results"
        return 0
    fi
    echo "# $name" | tee -a "$results"
    if ! timeout "$timeout" "$@" "$bin" --max "$max" 2>&1 | sed "s/^/$name /" | tee -a "$results"; then
        echo "# $name: run failed" | tee -a "$results"
    fi
}

run_one oxmpi "$prefix/bin/mpicc" "$prefix/bin/mpiexec" --mode processes -n 2
run_one oxmpi-thr "$prefix/bin/mpicc" "$prefix/bin/mpiexec" --mode threads -n 2
run_one mpich mpicc.mpich mpiexec.mpich -n 2
run_one openmpi mpicc.openmpi mpirun.openmpi --allow-run-as-root --oversubscribe -np 2
echo "# results in $results"
