#!/usr/bin/env bash
# Ping-pong latency and bandwidth, and an oversubscribed ring+allreduce: oxmpi (processes and
# threads mode) side by side with MPICH and Open MPI. See --help.
set -euo pipefail

OXMPI_ROOT="$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/.." && pwd)"
# shellcheck source=scripts/common.sh source-path=SCRIPTDIR/..
. "$OXMPI_ROOT/scripts/common.sh"

usage() {
    cat <<'USAGE'
Usage: scripts/bench.sh [options]

Builds benches/pingpong.c with oxmpi's mpicc, mpicc.mpich and mpicc.openmpi (all -O2) and runs
them ALTERNATELY for several rounds with their own launchers:
  oxmpi      PREFIX/bin/mpiexec --mode processes -n 2
  oxmpi-thr  PREFIX/bin/mpiexec --mode threads -n 2
  MPICH      mpiexec.mpich -n 2
  Open MPI   mpirun.openmpi --allow-run-as-root --oversubscribe -np 2
then prints the median of each (8-byte one-way latency, 4 MiB bandwidth) and the ratios of each
oxmpi mode to MPICH and Open MPI. With --ring N it also runs benches/ring_allreduce.c (a ring
MPI_Sendrecv plus a small MPI_Allreduce per iteration) with N ranks, oversubscribed on small
machines (the TMPI experiment), and reports milliseconds per iteration. An implementation that
fails to build or run is skipped with a message. Missing Debian packages are installed with
apt-get, as scripts/test.sh does.

Options:
  --rounds R     number of alternating rounds (default 5)
  --oversub      also run 8 ranks = 4 pairs ping-ponging at once (oversubscribed on small machines)
  --prefix DIR   use the oxmpi installed in DIR instead of building into target/bench-prefix
  --ring N       also run the ring+allreduce benchmark with N ranks (e.g. 16)
  --mode M       only this oxmpi mode (processes or threads; default: both)
  --timeout S    time limit per run in seconds (default 300)
  --no-deps      do not check or install Debian packages
  -h, --help     show this help

Each implementation runs with its launcher's defaults (binding, polling), as a user would get.
Results are also written to target/bench/results.txt.
USAGE
}

rounds=5
oversub=no
ring=0
prefix=""
mode=""
timeout_s=300
deps=yes
while [ $# -gt 0 ]; do
    case "$1" in
        -h | --help) usage; exit 0 ;;
        --rounds) rounds="${2:?--rounds needs a value}"; shift ;;
        --rounds=*) rounds="${1#*=}" ;;
        --oversub) oversub=yes ;;
        --ring) ring="${2:?--ring needs a value}"; shift ;;
        --ring=*) ring="${1#*=}" ;;
        --prefix) prefix="${2:?--prefix needs a value}"; shift ;;
        --prefix=*) prefix="${1#*=}" ;;
        --mode) mode="${2:?--mode needs a value}"; shift ;;
        --mode=*) mode="${1#*=}" ;;
        --timeout) timeout_s="${2:?--timeout needs a value}"; shift ;;
        --timeout=*) timeout_s="${1#*=}" ;;
        --no-deps) deps=no ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
    shift
done
case "$rounds" in '' | *[!0-9]* | 0) die "--rounds needs a positive integer" ;; esac

TARGET="$(cargo_target_dir)"
WORK="$TARGET/bench"
mkdir -p -- "$WORK"
RESULTS="$WORK/results.txt"
: >"$RESULTS"

if [ "$deps" = yes ]; then
    ensure_packages "${OXMPI_DEBIAN_PACKAGES[@]}"
fi

impls=()       # implementations still in the race
declare -A label cc launcher
declare -A short=([oxmpi]=oxmpi [oxthr]=oxmpi-thr [mpich]=MPICH [openmpi]=OpenMPI)
ALL_IMPLS=(oxmpi oxthr mpich openmpi)
OX_IMPLS=(oxmpi oxthr)

skip() { # skip IMPL REASON
    echo "*** skipping ${label[$1]}: $2" >&2
    local kept=() i
    for i in "${impls[@]}"; do
        [ "$i" = "$1" ] || kept+=("$i")
    done
    impls=(${kept[@]+"${kept[@]}"})
}

# --- oxmpi: build and install (or use --prefix) ---
label[oxmpi]="oxmpi"
if [ -z "$prefix" ]; then
    prefix="$TARGET/bench-prefix"
    echo "== building and installing oxmpi into $prefix"
    if ! "$OXMPI_ROOT/scripts/install.sh" "$prefix"; then
        prefix=""
    fi
fi
if [ -n "$prefix" ] && [ -x "$prefix/bin/mpicc" ] && [ -x "$prefix/bin/mpiexec" ]; then
    prefix="$(cd -- "$prefix" && pwd)"
    if [ "$mode" != threads ]; then
        label[oxmpi]="oxmpi (processes)"
        cc[oxmpi]="$prefix/bin/mpicc"
        launcher[oxmpi]="$prefix/bin/mpiexec --mode processes -n"
        impls+=(oxmpi)
    fi
    if [ "$mode" != processes ]; then
        label[oxthr]="oxmpi (threads)"
        cc[oxthr]="$prefix/bin/mpicc"
        launcher[oxthr]="$prefix/bin/mpiexec --mode threads -n"
        impls+=(oxthr)
    fi
else
    echo "*** skipping oxmpi: no usable installation (build or install failed)" >&2
fi

# --- MPICH and Open MPI from Debian ---
if command -v mpicc.mpich >/dev/null && command -v mpiexec.mpich >/dev/null; then
    label[mpich]="MPICH $(mpiexec.mpich --version 2>/dev/null | awk '/Version:/ { print $2; exit }')"
    cc[mpich]="mpicc.mpich"
    launcher[mpich]="mpiexec.mpich -n"
    impls+=(mpich)
else
    echo "*** skipping MPICH: mpicc.mpich/mpiexec.mpich not found" >&2
fi
if command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null; then
    label[openmpi]="Open MPI $(mpirun.openmpi --version 2>/dev/null | awk 'NR == 1 { print $NF }')"
    cc[openmpi]="mpicc.openmpi"
    launcher[openmpi]="mpirun.openmpi --allow-run-as-root --oversubscribe -np"
    impls+=(openmpi)
else
    echo "*** skipping Open MPI: mpicc.openmpi/mpirun.openmpi not found" >&2
fi
# Open MPI: no ssh is needed for local jobs; keep its warnings about it quiet.
export OMPI_MCA_plm_rsh_agent="${OMPI_MCA_plm_rsh_agent:-}"

# --- build ---
for impl in "${impls[@]}"; do
    echo "== compiling benches/pingpong.c and benches/ring_allreduce.c with ${cc[$impl]}"
    if ! ${cc[$impl]} -O2 -o "$WORK/pingpong-$impl" "$OXMPI_ROOT/benches/pingpong.c" ||
        ! ${cc[$impl]} -O2 -o "$WORK/ring-$impl" "$OXMPI_ROOT/benches/ring_allreduce.c"; then
        skip "$impl" "compilation failed"
    fi
done
[ "${#impls[@]}" -gt 0 ] || die "no implementation left to benchmark"

# --- run, alternating ---
configs=(2)
[ "$oversub" = no ] || configs+=(8)
declare -A alive
for np in "${configs[@]}"; do
    for impl in "${impls[@]}"; do alive[$impl:$np]=yes; done
    for ((round = 1; round <= rounds; round++)); do
        for impl in "${impls[@]}"; do
            [ "${alive[$impl:$np]}" = yes ] || continue
            out="$WORK/out-$impl-$np.txt"
            echo "== round $round/$rounds, $np ranks: ${label[$impl]}"
            # shellcheck disable=SC2086 # the launcher string is split into words on purpose
            if timeout -k 5 "$timeout_s" ${launcher[$impl]} "$np" "$WORK/pingpong-$impl" >"$out" 2>&1 &&
                line="$(grep -E '^latency_us=[0-9.]+ bandwidth_GBps=[0-9.]+$' "$out" | tail -n 1)" &&
                [ -n "$line" ]; then
                echo "   $line"
                lat="${line#latency_us=}"
                lat="${lat%% *}"
                bw="${line##*bandwidth_GBps=}"
                echo "$impl $np $lat $bw" >>"$RESULTS"
            else
                rc=$?
                echo "*** ${label[$impl]} failed with $np ranks (status $rc); skipping it for $np ranks. Output:" >&2
                tail -n 15 "$out" | sed 's/^/    /' >&2
                alive[$impl:$np]=no
            fi
        done
    done
done

# --- report ---
median() { # median IMPL NP COLUMN
    awk -v i="$1" -v n="$2" -v c="$3" '$1 == i && $2 == n { print $c }' "$RESULTS" | sort -g |
        awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f", a / b }'; }

echo
echo "ping-pong, median of $rounds alternating rounds (each run reports the median of 7 repetitions)"
echo "latency: 8-byte one-way (half round trip), lower is better; bandwidth: 4 MiB, GB/s, higher is better"
for np in "${configs[@]}"; do
    echo
    printf '%-6s %-22s %12s %16s %6s\n' ranks implementation latency_us bandwidth_GBps runs
    declare -A med_lat med_bw
    for impl in "${ALL_IMPLS[@]}"; do
        [ -n "${label[$impl]:-}" ] || continue
        med_lat[$impl]="$(median "$impl" "$np" 3)"
        med_bw[$impl]="$(median "$impl" "$np" 4)"
        runs="$(awk -v i="$impl" -v n="$np" '$1 == i && $2 == n' "$RESULTS" | wc -l)"
        printf '%-6s %-22s %12s %16s %6s\n' "$np" "${label[$impl]}" "${med_lat[$impl]}" "${med_bw[$impl]}" "$runs"
    done
    for ox in "${OX_IMPLS[@]}"; do
        [ -n "${med_lat[$ox]:-}" ] || continue
        for other in mpich openmpi; do
            [ -n "${label[$other]:-}" ] || continue
            printf '       %s/%-9s latency x%s (below 1: oxmpi faster), bandwidth x%s (above 1: oxmpi faster)\n' \
                "${short[$ox]}" "${short[$other]}" "$(ratio "${med_lat[$ox]}" "${med_lat[$other]}")" \
                "$(ratio "${med_bw[$ox]}" "${med_bw[$other]}")"
        done
    done
    unset med_lat med_bw
done

# --- oversubscribed ring + allreduce ---
if [ "$ring" -gt 0 ]; then
    RING="$WORK/ring-results.txt"
    : >"$RING"
    declare -A ring_iters=([oxmpi]=200 [oxthr]=200 [mpich]=5 [openmpi]=50)
    for ((round = 1; round <= rounds; round++)); do
        for impl in "${impls[@]}"; do
            out="$WORK/ring-$impl.txt"
            echo "== ring round $round/$rounds, $ring ranks: ${label[$impl]}"
            # shellcheck disable=SC2086 # the launcher string is split into words on purpose
            if timeout -k 5 "$timeout_s" ${launcher[$impl]} "$ring" "$WORK/ring-$impl" "${ring_iters[$impl]}" >"$out" 2>&1 &&
                line="$(grep -E '^iter_ms=[0-9.]+$' "$out" | tail -n 1)" && [ -n "$line" ]; then
                echo "   $line"
                echo "$impl ${line#iter_ms=}" >>"$RING"
            else
                echo "*** ${label[$impl]} failed the ring benchmark. Output:" >&2
                tail -n 15 "$out" | sed 's/^/    /' >&2
            fi
        done
    done
    echo
    echo "ring MPI_Sendrecv + 1-double MPI_Allreduce per iteration, $ring ranks on $(nproc) cores, ms per iteration (median of $rounds rounds), lower is better"
    declare -A med_ring
    for impl in "${ALL_IMPLS[@]}"; do
        [ -n "${label[$impl]:-}" ] || continue
        med_ring[$impl]="$(awk -v i="$impl" '$1 == i { print $2 }' "$RING" | sort -g |
            awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }')"
        printf '%-22s %12s ms\n' "${label[$impl]}" "${med_ring[$impl]}"
    done
    for ox in "${OX_IMPLS[@]}"; do
        [ -n "${med_ring[$ox]:-}" ] || continue
        for other in mpich openmpi; do
            [ -n "${label[$other]:-}" ] || continue
            printf '       %s is x%s faster than %s\n' "${short[$ox]}" "$(ratio "${med_ring[$other]}" "${med_ring[$ox]}")" "${short[$other]}"
        done
    done
fi
echo
echo "raw results: $RESULTS${RING:+ and $RING}"
