#!/usr/bin/env bash
# Ping-pong latency and bandwidth, an oversubscribed ring+allreduce, and collective latency: oxmpi
# (processes and threads mode) side by side with MPICH and Open MPI. See --help.
set -euo pipefail

OXMPI_ROOT="$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/.." && pwd)"
# shellcheck source=scripts/common.sh source-path=SCRIPTDIR/..
. "$OXMPI_ROOT/scripts/common.sh"

usage() {
    cat <<'USAGE'
Usage: scripts/bench.sh [options]

Builds the benchmarks in benches/ with oxmpi's mpicc, mpicc.mpich and mpicc.openmpi (all -O2) and
runs them ALTERNATELY with their own launchers:
  oxmpi      PREFIX/bin/mpiexec --mode processes -n N
  oxmpi-thr  PREFIX/bin/mpiexec --mode threads -n N
  MPICH      mpiexec.mpich -n N
  Open MPI   mpirun.openmpi --allow-run-as-root --oversubscribe -np N

p2p (benches/pingpong.c, 2 ranks): the median over several rounds of the 8-byte one-way latency
and the 4 MiB bandwidth, and the ratios of each oxmpi mode to MPICH and Open MPI. With --ring N
also benches/ring_allreduce.c (a ring MPI_Sendrecv plus a small MPI_Allreduce per iteration) with
N ranks, oversubscribed on small machines (the TMPI experiment), in milliseconds per iteration;
threads mode runs twice there: with ranks as fibers (the default when ranks outnumber cores) and
as kernel threads (OXMPI_FIBERS=0).

coll (benches/coll_latency.c): latency of each collective of --coll for message sizes 8 B to
4 MiB (alltoall: the block per peer, at most 16 MiB per rank in all) with each rank count of
--coll-ranks. Each call is timed alone and followed by an untimed barrier, rooted collectives
rotate their root, and the latency is the maximum over the ranks of the mean call time (the OSU
method), or with --coll-stat median the median over the calls of the slowest rank's call time
(robust on a loaded machine, where one descheduled call dominates a mean). One table per collective and rank count: size, microseconds per implementation, and
best-peer/oxmpi = min(MPICH, Open MPI) / oxmpi per oxmpi mode (above 1: oxmpi faster); then the
worst ratio per collective. Cells: n/a = the call failed or returned a wrong result (e.g.
MPI_ERR_UNSUPPORTED_OPERATION), skip = not measured because the implementation used up its time
budget (--coll-budget), - = no result (run failed or timed out, or alltoall over the cap).

io (benches/io_bw.c, only with --only io): MPI-IO bandwidth of a global 2-D array of doubles,
in MB/s (the whole array over the slowest rank's time, best of --io-reps repetitions and of
--io-rounds runs): coll = each rank a
2-D block through a subarray file view with MPI_File_write_all/read_all, contig = each rank one
contiguous slab with write_at/read_at, strided = the block view with independent write/read.
Each timed phase is open + view + one call + close; every read is checked, and the file is
also read back without a view after each pattern's first write. One table per file system
(tmpfs: /dev/shm; disk: --io-dir), rank count (--io-ranks) and size (--io-sizes), one row per
pattern and operation, with oxmpi/best-peer = oxmpi / max(MPICH, Open MPI) per oxmpi mode (above
1: oxmpi faster). A run that fails (e.g. MPI-IO missing) gives n/a in its cells.

io-overlap (benches/io_overlap.c, only with --only io-overlap): how much of a nonblocking MPI-IO
call (iwrite_at, iwrite_at_all, iread_at, iread_at_all; each rank one contiguous slab of
--io-overlap-mib MiB) runs while the rank computes, in the OSU nonblocking manner: pure = the
call plus MPI_Wait alone, then the call, computation for `pure`, MPI_Wait; overlap = 100 x
(1 - (total - pure) / pure) percent. The computation is a busy loop (the core is taken) or a
sleep (the core is free). Per file system and rank count (--io-fs, --io-ranks), best of
--io-reps; columns pure ms and overlap % per implementation.

An implementation that fails to build or run is skipped with a message. Missing Debian packages
are installed with apt-get, as scripts/test.sh does.

Options:
  --only WHAT        run only p2p (ping-pong, and the ring if --ring), only coll, or only nbc
                     (benches/nbc_overlap.c: MPI_Iallreduce overlap in the OSU style and its
                     latency beside MPI_Allreduce, 2 and 8 ranks) (default: all three);
                     or one of the benchmarks with a driver of their own, passing on --prefix:
                     rma (scripts/bench-rma.sh: put/get latency and bandwidth), pap
                     (scripts/bench-pap.sh: Clairvoyant MPI_Reduce under imbalanced arrivals),
                     workfarm (scripts/bench-workfarm.sh: work-farm throughput, progress-thread CPU),
                     spawn (scripts/bench-spawn.sh: time to MPI_Comm_spawn N ranks),
                     rate (scripts/bench-rate.sh: windowed bandwidth and message rate, OSU style);
                     abi (scripts/bench-abi.sh: 8-byte ping-pong through the MPICH, Open MPI and
                     MPI-5 ABI layers, ns per round trip and each layer's cost);
                     netns (scripts/bench-netns.sh: latency, windowed bandwidth and a 2 x 2
                     allreduce between two network namespaces over TCP, as root);
                     or io (benches/io_bw.c, MPI-IO bandwidth; not part of the default run)
                     or io-overlap (benches/io_overlap.c, nonblocking MPI-IO overlap)
  --monitor-overhead also run the ping-pong with oxmpi's monitoring on (OXMPI_MONITORING=1,
                     processes mode) and report its latency against oxmpi without it
  --quick            shorter run: 2 p2p rounds, 5 ms per collective point, collectives up to 1 MiB,
                     2 s budget per collective (explicit options override these)
  --rounds R         number of alternating p2p rounds (default 5)
  --oversub          also run 8 ranks = 4 pairs ping-ponging at once (oversubscribed on small machines)
  --ring N           also run the ring+allreduce benchmark with N ranks (e.g. 16)
  --coll LIST        collectives, comma-separated, among bcast, reduce, allreduce, alltoall, barrier
                     (default bcast,reduce,allreduce,alltoall)
  --coll-ranks LIST  rank counts for the collectives, comma-separated (default 2,4,8,16)
  --coll-rounds R    alternating rounds of the collective runs; cells are medians (default 1)
  --coll-stat STAT   mean (the OSU method, default) or median: the statistic of a collective cell
  --coll-target S    seconds of timed calls per collective point (default 0.02)
  --coll-budget S    seconds per collective and run after which the remaining sizes are skipped
                     (default 8; MPICH needs milliseconds per call when oversubscribed)
  --coll-max BYTES   largest collective message size (default 4194304)
  --coll-timeout S   time limit per collective job in seconds (default 90)
  --io-sizes LIST    io: total array sizes in MiB, comma-separated (default 64,256; up to 1024)
  --io-ranks LIST    io: rank counts, comma-separated (default 4,8)
  --io-fs LIST       io: file systems, comma-separated among tmpfs (/dev/shm) and disk (default both)
  --io-dir DIR       io: the directory on disk (default target/bench/io-disk)
  --io-overlap-mib M io-overlap: MiB per rank (default 64)
  --io-reps R        io: repetitions per run, the best counts (default 3)
  --io-rounds R      io: runs per configuration and implementation, alternating the
                     implementations; the best counts (default 1; more rounds smooth out the
                     load of a shared machine)
  --io-timeout S     io: time limit per run in seconds (default 300)
  --io-cols C        io: columns of the global array (default 4096: 16 KiB block rows at 4 and
                     8 ranks); fewer columns give shorter pieces, e.g. 64 for 256-byte rows,
                     which exercise two-phase collective buffering's exchange
  --prefix DIR       use the oxmpi installed in DIR instead of building into target/bench-prefix
  --mode M           only this oxmpi mode (processes or threads; default: both)
  --timeout S        time limit per p2p run in seconds (default 300)
  --no-deps          do not check or install Debian packages
  -h, --help         show this help

The default run takes about 4 minutes on a 2-core machine, --quick about 2.
Each implementation runs with its launcher's defaults (binding, polling), as a user would get.
Results are also written to target/bench/results.txt (p2p) and target/bench/coll-results.txt.
USAGE
}

only=""
quick=no
rounds=""
oversub=no
monitor_overhead=no
ring=0
coll_list="bcast,reduce,allreduce,alltoall"
coll_ranks="2,4,8,16"
coll_rounds=1
coll_stat=mean
coll_target=""
coll_budget=""
coll_max=""
coll_timeout=90
io_sizes="64,256"
io_ranks="4,8"
io_fs="tmpfs,disk"
io_dir=""
io_reps=3
io_rounds=1
io_overlap_mib=64
io_timeout=300
io_cols=4096
prefix=""
mode=""
timeout_s=300
deps=yes
while [ $# -gt 0 ]; do
    case "$1" in
        -h | --help) usage; exit 0 ;;
        --only) only="${2:?--only needs a value}"; shift ;;
        --only=*) only="${1#*=}" ;;
        --quick) quick=yes ;;
        --monitor-overhead) monitor_overhead=yes ;;
        --rounds) rounds="${2:?--rounds needs a value}"; shift ;;
        --rounds=*) rounds="${1#*=}" ;;
        --oversub) oversub=yes ;;
        --ring) ring="${2:?--ring needs a value}"; shift ;;
        --ring=*) ring="${1#*=}" ;;
        --coll) coll_list="${2:?--coll needs a value}"; shift ;;
        --coll=*) coll_list="${1#*=}" ;;
        --coll-ranks) coll_ranks="${2:?--coll-ranks needs a value}"; shift ;;
        --coll-ranks=*) coll_ranks="${1#*=}" ;;
        --coll-rounds) coll_rounds="${2:?--coll-rounds needs a value}"; shift ;;
        --coll-rounds=*) coll_rounds="${1#*=}" ;;
        --coll-stat) coll_stat="${2:?--coll-stat needs a value}"; shift ;;
        --coll-stat=*) coll_stat="${1#*=}" ;;
        --coll-target) coll_target="${2:?--coll-target needs a value}"; shift ;;
        --coll-target=*) coll_target="${1#*=}" ;;
        --coll-budget) coll_budget="${2:?--coll-budget needs a value}"; shift ;;
        --coll-budget=*) coll_budget="${1#*=}" ;;
        --coll-max) coll_max="${2:?--coll-max needs a value}"; shift ;;
        --coll-max=*) coll_max="${1#*=}" ;;
        --coll-timeout) coll_timeout="${2:?--coll-timeout needs a value}"; shift ;;
        --coll-timeout=*) coll_timeout="${1#*=}" ;;
        --io-overlap-mib) io_overlap_mib="${2:?--io-overlap-mib needs a value}"; shift ;;
        --io-overlap-mib=*) io_overlap_mib="${1#*=}" ;;
        --io-sizes) io_sizes="${2:?--io-sizes needs a value}"; shift ;;
        --io-sizes=*) io_sizes="${1#*=}" ;;
        --io-ranks) io_ranks="${2:?--io-ranks needs a value}"; shift ;;
        --io-ranks=*) io_ranks="${1#*=}" ;;
        --io-fs) io_fs="${2:?--io-fs needs a value}"; shift ;;
        --io-fs=*) io_fs="${1#*=}" ;;
        --io-dir) io_dir="${2:?--io-dir needs a value}"; shift ;;
        --io-dir=*) io_dir="${1#*=}" ;;
        --io-reps) io_reps="${2:?--io-reps needs a value}"; shift ;;
        --io-reps=*) io_reps="${1#*=}" ;;
        --io-rounds) io_rounds="${2:?--io-rounds needs a value}"; shift ;;
        --io-rounds=*) io_rounds="${1#*=}" ;;
        --io-timeout) io_timeout="${2:?--io-timeout needs a value}"; shift ;;
        --io-timeout=*) io_timeout="${1#*=}" ;;
        --io-cols) io_cols="${2:?--io-cols needs a value}"; shift ;;
        --io-cols=*) io_cols="${1#*=}" ;;
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
if [ "$quick" = yes ]; then
    : "${rounds:=2}" "${coll_target:=0.005}" "${coll_budget:=2}" "${coll_max:=1048576}"
fi
: "${rounds:=5}" "${coll_target:=0.02}" "${coll_budget:=8}" "${coll_max:=4194304}"
case "$only" in
    '') do_p2p=yes; do_coll=yes; do_nbc=yes ;;
    io) do_p2p=no; do_coll=no; do_io=yes ;;
    io-overlap) do_p2p=no; do_coll=no; do_iov=yes ;;
    p2p) do_p2p=yes; do_coll=no ;;
    coll) do_p2p=no; do_coll=yes ;;
    nbc) do_p2p=no; do_coll=no; do_nbc=yes ;;
    rma | pap | workfarm | spawn | rate | abi | netns) do_p2p=no; do_coll=no ;;
    *) die "--only takes p2p, coll, nbc, io, io-overlap, rma, pap, workfarm, spawn, rate, abi or netns" ;;
esac
case "$mode" in '' | processes | threads) ;; *) die "--mode takes processes or threads" ;; esac
is_count() { case "$1" in '' | *[!0-9]* | 0*) return 1 ;; esac; }
is_count "$rounds" || die "--rounds needs a positive integer"
is_count "$coll_rounds" || die "--coll-rounds needs a positive integer"
is_count "$coll_max" || die "--coll-max needs a positive integer"
is_count "$coll_timeout" || die "--coll-timeout needs a positive integer"
is_count "$timeout_s" || die "--timeout needs a positive integer"
is_count "$io_overlap_mib" || die "--io-overlap-mib needs a positive integer"
is_count "$io_reps" || die "--io-reps needs a positive integer"
is_count "$io_rounds" || die "--io-rounds needs a positive integer"
is_count "$io_timeout" || die "--io-timeout needs a positive integer"
is_count "$io_cols" || die "--io-cols needs a positive integer"
IFS=, read -r -a IO_SIZES <<<"$io_sizes"
IFS=, read -r -a IO_RANKS <<<"$io_ranks"
IFS=, read -r -a IO_FS <<<"$io_fs"
for v in "${IO_SIZES[@]}" "${IO_RANKS[@]}"; do is_count "$v" || die "--io-sizes/--io-ranks: '$v' is not a positive integer"; done
for v in "${IO_FS[@]}"; do case "$v" in tmpfs | disk) ;; *) die "--io-fs: unknown file system '$v' (tmpfs or disk)" ;; esac; done
for v in "$coll_target" "$coll_budget"; do
    [[ "$v" =~ ^[0-9]*\.?[0-9]+$ ]] || die "--coll-target and --coll-budget need a number of seconds"
done
case "$coll_stat" in
    mean) stat_flag="" ;;
    median) stat_flag="-m" ;;
    *) die "--coll-stat: unknown statistic '$coll_stat' (mean or median)" ;;
esac
IFS=, read -r -a COLLS <<<"$coll_list"
IFS=, read -r -a COLL_RANKS <<<"$coll_ranks"
[ "${#COLLS[@]}" -gt 0 ] || die "--coll needs at least one collective"
for c in "${COLLS[@]}"; do
    case "$c" in bcast | reduce | allreduce | alltoall | barrier) ;; *) die "--coll: unknown collective '$c'" ;; esac
done
[ "${#COLL_RANKS[@]}" -gt 0 ] || die "--coll-ranks needs at least one rank count"
for n in "${COLL_RANKS[@]}"; do is_count "$n" || die "--coll-ranks: '$n' is not a positive integer"; done

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
declare -A short=([oxmpi]=oxmpi [oxthr]=oxmpi-thr [oxkthr]=oxmpi-thr-kthreads [oxmon]=oxmpi-mon [mpich]=MPICH [openmpi]=OpenMPI)
ALL_IMPLS=(oxmpi oxthr oxkthr oxmon mpich openmpi)
OX_IMPLS=(oxmpi oxthr oxkthr)

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
    if [ "$monitor_overhead" = yes ] && [ "$do_p2p" = yes ]; then
        label[oxmon]="oxmpi (monitoring on)"
        cc[oxmon]="$prefix/bin/mpicc"
        launcher[oxmon]="env OXMPI_MONITORING=1 $prefix/bin/mpiexec --mode processes -n"
        impls+=(oxmon)
    fi
    if [ "$mode" != processes ]; then
        label[oxthr]="oxmpi (threads)"
        cc[oxthr]="$prefix/bin/mpicc"
        launcher[oxthr]="$prefix/bin/mpiexec --mode threads -n"
        impls+=(oxthr)
        if [ "$ring" -gt 0 ] && [ "$do_p2p" = yes ]; then
            # The ring only: threads mode with ranks as kernel threads instead of fibers.
            label[oxkthr]="oxmpi (threads, OXMPI_FIBERS=0)"
            cc[oxkthr]="$prefix/bin/mpicc"
            launcher[oxkthr]="env OXMPI_FIBERS=0 $prefix/bin/mpiexec --mode threads -n"
            impls+=(oxkthr)
        fi
    fi
else
    echo "*** skipping oxmpi: no usable installation (build or install failed)" >&2
fi

# --- benchmarks with drivers of their own ---
case "$only" in
    rma | pap | workfarm | spawn | rate | abi | netns)
        [ -n "$prefix" ] || die "no usable oxmpi installation"
        exec "$OXMPI_ROOT/scripts/bench-$only.sh" --prefix "$prefix"
        ;;
esac

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
benches=()
[ "$do_p2p" = no ] || benches+=(pingpong ring_allreduce)
[ "$do_coll" = no ] || benches+=(coll_latency)
[ "${do_nbc:-no}" = no ] || benches+=(nbc_overlap)
[ "${do_io:-no}" = no ] || benches+=(io_bw)
[ "${do_iov:-no}" = no ] || benches+=(io_overlap)
for impl in "${impls[@]}"; do
    echo "== compiling ${benches[*]/#/benches/} with ${cc[$impl]}"
    for b in "${benches[@]}"; do
        if ! ${cc[$impl]} -O2 -o "$WORK/$b-$impl" "$OXMPI_ROOT/benches/$b.c"; then
            skip "$impl" "compilation of benches/$b.c failed"
            break
        fi
    done
done
[ "${#impls[@]}" -gt 0 ] || die "no implementation left to benchmark"

# --- p2p: ping-pong (and the ring), alternating ---
p2p() {
    configs=(2)
    [ "$oversub" = no ] || configs+=(8)
    declare -A alive
    for np in "${configs[@]}"; do
        for impl in "${impls[@]}"; do alive[$impl:$np]=yes; done
        for ((round = 1; round <= rounds; round++)); do
            for impl in "${impls[@]}"; do
                [ "$impl" != oxkthr ] || continue # a ring-only variant
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
            [ -n "${label[$impl]:-}" ] && [ "$impl" != oxkthr ] || continue
            med_lat[$impl]="$(median "$impl" "$np" 3)"
            med_bw[$impl]="$(median "$impl" "$np" 4)"
            runs="$(awk -v i="$impl" -v n="$np" '$1 == i && $2 == n' "$RESULTS" | wc -l)"
            printf '%-6s %-22s %12s %16s %6s\n' "$np" "${label[$impl]}" "${med_lat[$impl]}" "${med_bw[$impl]}" "$runs"
        done
        if [ -n "${med_lat[oxmon]:-}" ] && [ -n "${med_lat[oxmpi]:-}" ]; then
            printf '       monitoring on/off (processes): latency x%s, bandwidth x%s\n' \
                "$(ratio "${med_lat[oxmon]}" "${med_lat[oxmpi]}")" "$(ratio "${med_bw[oxmon]}" "${med_bw[oxmpi]}")"
        fi
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
        declare -A ring_iters=([oxmpi]=200 [oxthr]=1000 [oxkthr]=200 [mpich]=5 [openmpi]=50)
        for ((round = 1; round <= rounds; round++)); do
            for impl in "${impls[@]}"; do
                [ "$impl" != oxmon ] || continue # monitoring overhead is a ping-pong figure
                out="$WORK/ring-$impl.txt"
                echo "== ring round $round/$rounds, $ring ranks: ${label[$impl]}"
                # shellcheck disable=SC2086 # the launcher string is split into words on purpose
                if timeout -k 5 "$timeout_s" ${launcher[$impl]} "$ring" "$WORK/ring_allreduce-$impl" "${ring_iters[$impl]}" >"$out" 2>&1 &&
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
}

# --- running one implementation's job ---
# `run_case IMPL NP TIMEOUT OUT REGEX PROGRAM ARGS...` runs PROGRAM on NP ranks of IMPL, its output
# in OUT; sets `rc` (the job's status) and `got` (its lines matching REGEX, kept even when the job
# failed or timed out later).
run_case() {
    local impl="$1" np="$2" limit="$3" out="$4" re="$5"
    shift 5
    rc=0
    # shellcheck disable=SC2086 # the launcher string is split into words on purpose
    timeout -k 5 "$limit" ${launcher[$impl]} "$np" "$@" >"$out" 2>&1 || rc=$?
    got="$(grep -E "$re" "$out" || true)"
}

# `report_failure WHAT OUT`: the failed job's status and the first lines of its output that are
# neither comments nor results.
report_failure() {
    echo "*** $1 (status $rc). Output:" >&2
    grep -v '^#' "$2" | grep -v '^result ' | sort -u | head -n 4 | sed 's/^/    /' >&2
}

# --- coll: collective latency, alternating ---
COLLRES="$WORK/coll-results.txt"
coll() {
    : >"$COLLRES"
    local round np c impl out rc got
    # one job per collective, so that a crash or a timeout loses only that collective's points
    for ((round = 1; round <= coll_rounds; round++)); do
        for np in "${COLL_RANKS[@]}"; do
            for c in "${COLLS[@]}"; do
                for impl in "${impls[@]}"; do
                    [ "$impl" != oxmon ] && [ "$impl" != oxkthr ] || continue # p2p-only variants
                    out="$WORK/coll-$impl-$c-$np.txt"
                    run_case "$impl" "$np" "$coll_timeout" "$out" "^$c [0-9]+ $np ([0-9.]+|n/a|skip)\$" \
                        "$WORK/coll_latency-$impl" -t "$coll_target" -T "$coll_budget" -M "$coll_max" $stat_flag "$c"
                    awk -v i="$impl" 'NF { print i, $0 }' <<<"$got" >>"$COLLRES"
                    printf '== round %d/%d, %2d ranks, %-9s %-18s %2d points, %d n/a, %d skipped\n' "$round" "$coll_rounds" \
                        "$np" "$c" "${label[$impl]}" "$(grep -cE ' [0-9.]+$' <<<"$got")" "$(grep -c ' n/a$' <<<"$got")" \
                        "$(grep -c ' skip$' <<<"$got")"
                    if [ "$rc" -ne 0 ]; then
                        echo "*** ${label[$impl]} failed $c with $np ranks (status $rc). Output:" >&2
                        grep -v '^#' "$out" | grep -vE "^$c [0-9]+ $np " | tail -n 6 | sed 's/^/    /' >&2
                    fi
                done
            done
        done
    done

    echo
    if [ "$coll_stat" = median ]; then
        echo "collective latency, us per call (median over calls of the slowest rank), lower is better; $(nproc) cores"
    else
        echo "collective latency, us per call (max over ranks of the mean), lower is better; $(nproc) cores"
    fi
    echo "best-peer/oxmpi = min(MPICH, Open MPI) / oxmpi: above 1, oxmpi is faster"
    [ "$coll_rounds" -eq 1 ] || echo "cells are medians of $coll_rounds alternating rounds"
    awk -v colls="$coll_list" -v ranks="$coll_ranks" '
        function fmt(v) {
            if (v !~ /^[0-9.]+$/) return v
            return v < 10 ? sprintf("%.2f", v) : v < 1000 ? sprintf("%.1f", v) : sprintf("%.0f", v)
        }
        function human(b) {
            return b >= 1048576 ? b / 1048576 "M" : b >= 1024 ? b / 1024 "K" : b
        }
        # median of the numeric results of key, else its last non-numeric result (n/a, skip), else -
        function cell(key,   n, i, j, t, v) {
            n = cnt[key]
            if (n == 0) return (key in word) ? word[key] : "-"
            for (i = 1; i <= n; i++) v[i] = val[key, i] + 0
            for (i = 2; i <= n; i++)
                for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
            return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
        }
        function num(x) { return x ~ /^[0-9.]+$/ }
        {   # impl coll size ranks value
            key = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4
            if (num($5)) val[key, ++cnt[key]] = $5; else word[key] = $5
            seen[$2 SUBSEP $3 SUBSEP $4] = 1
        }
        END {
            nc = split(colls, C, ","); nr = split(ranks, R, ",")
            ns = split("0 8 64 512 4096 32768 262144 1048576 4194304", S, " ")
            ni = split("oxmpi oxthr mpich openmpi", I, " ")
            for (c = 1; c <= nc; c++) {
                worst["oxmpi"] = worst["oxthr"] = ""
                for (r = 1; r <= nr; r++) {
                    printf "\n%s, %d ranks\n", C[c], R[r]
                    printf "%7s %12s %12s %12s %12s %11s %11s\n", "size", "oxmpi-proc", "oxmpi-thr", "MPICH", "Open MPI", "peer/proc", "peer/thr"
                    for (s = 1; s <= ns; s++) {
                        if (!((C[c] SUBSEP S[s] SUBSEP R[r]) in seen)) continue
                        for (i = 1; i <= ni; i++) x[I[i]] = cell(I[i] SUBSEP C[c] SUBSEP S[s] SUBSEP R[r])
                        best = ""
                        if (num(x["mpich"])) best = x["mpich"]
                        if (num(x["openmpi"]) && (best == "" || x["openmpi"] < best)) best = x["openmpi"]
                        for (m = 1; m <= 2; m++) {
                            ox = m == 1 ? "oxmpi" : "oxthr"
                            q[ox] = "-"
                            if (best == "" || !num(x[ox]) || x[ox] <= 0) continue
                            q[ox] = sprintf(best / x[ox] < 0.1 ? "x%.2g" : "x%.2f", best / x[ox])
                            if (worst[ox] == "" || best / x[ox] < worst[ox]) {
                                worst[ox] = best / x[ox]; where[ox] = (S[s] ? "size " human(S[s]) ", " : "") R[r] " ranks"
                            }
                        }
                        printf "%7s %12s %12s %12s %12s %11s %11s\n", human(S[s]), fmt(x["oxmpi"]), fmt(x["oxthr"]),
                            fmt(x["mpich"]), fmt(x["openmpi"]), q["oxmpi"], q["oxthr"]
                    }
                }
                summary[c] = sprintf("%-10s processes %s, threads %s", C[c] ":",
                    worst["oxmpi"] == "" ? "-" : sprintf(worst["oxmpi"] < 0.1 ? "x%.2g (%s)" : "x%.2f (%s)", worst["oxmpi"], where["oxmpi"]),
                    worst["oxthr"] == "" ? "-" : sprintf(worst["oxthr"] < 0.1 ? "x%.2g (%s)" : "x%.2f (%s)", worst["oxthr"], where["oxthr"]))
            }
            printf "\nworst best-peer/oxmpi per collective (below 1: a peer is faster there)\n"
            for (c = 1; c <= nc; c++) print "  " summary[c]
        }' "$COLLRES"
}

# --- nbc: MPI_Iallreduce overlap (OSU style) and Iallreduce+Wait vs Allreduce latency ---
# benches/nbc_overlap.c: one double, 2 and 8 ranks, every implementation once per round; no
# timing is asserted, the lines are printed for the reader.
nbc() {
    echo
    echo "MPI_Iallreduce of 1 double: latency (us) of Iallreduce+Wait and of Allreduce, overlap (%)"
    for np in 2 8; do
        for impl in "${impls[@]}"; do
            [ "$impl" != oxkthr ] && [ "$impl" != oxmon ] || continue
            # shellcheck disable=SC2086 # the launcher string is split into words on purpose
            line="$(timeout -k 5 "$timeout_s" ${launcher[$impl]} "$np" "$WORK/nbc_overlap-$impl" 1 2000 2>/dev/null | grep '^count=' | tail -n 1)" || line="failed"
            printf '  %-10s n=%-2s %s\n' "${short[$impl]}" "$np" "${line:-failed}"
        done
    done
}

# --- io: MPI-IO bandwidth, every implementation once per configuration, alternating ---
IORES="$WORK/io-results.txt"
io() {
    : >"$IORES"
    local fs dir np mib impl out rc got p op round
    declare -A io_dirs=([tmpfs]=/dev/shm [disk]="${io_dir:-$WORK/io-disk}")
    declare -A io_type
    for fs in "${IO_FS[@]}"; do
        dir="${io_dirs[$fs]}"
        mkdir -p -- "$dir" || die "cannot create $dir"
        io_type[$fs]="$(stat -f -c %T -- "$dir")"
        for np in "${IO_RANKS[@]}"; do
            for mib in "${IO_SIZES[@]}"; do
                for round in $(seq "$io_rounds"); do
                    for impl in "${impls[@]}"; do
                        [ "$impl" != oxmon ] && [ "$impl" != oxkthr ] || continue # p2p-only variants
                        out="$WORK/io-$impl-$fs-$np-$mib-$round.txt"
                        run_case "$impl" "$np" "$io_timeout" "$out" \
                            "^result (coll|contig|strided) (write|read) $np $mib [a-z0-9]+ [0-9.]+\$" \
                            "$WORK/io_bw-$impl" -s "$mib" -r "$io_reps" -c "$io_cols" -d "$dir"
                        awk -v i="$impl" -v f="$fs" 'NF { print i, f, $2, $3, $4, $5, $7 }' <<<"$got" >>"$IORES"
                        if [ "$rc" -ne 0 ]; then
                            # the patterns the run did not report: n/a
                            for p in coll contig strided; do
                                for op in write read; do
                                    grep -q "^result $p $op " <<<"$got" || echo "$impl $fs $p $op $np $mib n/a" >>"$IORES"
                                done
                            done
                            report_failure "${label[$impl]} failed io_bw with $np ranks, $mib MiB on $fs" "$out"
                        fi
                        printf '== io %-5s %d ranks %5d MiB round %d %-20s %d results\n' "$fs" "$np" "$mib" "$round" "${label[$impl]}" \
                            "$(grep -c . <<<"$got")"
                        # nothing may be left behind
                        find "$dir" -maxdepth 1 -name 'oxmpi-io_bw-*.dat' -delete 2>/dev/null || true
                    done
                done
            done
        done
    done
    [ -n "${io_dir:-}" ] || rmdir -- "$WORK/io-disk" 2>/dev/null || true

    echo
    echo "MPI-IO bandwidth, MB/s (array size over the slowest rank's time, best of $io_reps x $io_rounds), higher is better; $(nproc) cores"
    echo "oxmpi/best-peer = oxmpi / max(MPICH, Open MPI): above 1, oxmpi is faster; n/a = the run failed"
    for fs in "${IO_FS[@]}"; do
        for np in "${IO_RANKS[@]}"; do
            for mib in "${IO_SIZES[@]}"; do
                printf '\n%s (%s, %s), %d ranks, %d MiB, %d columns\n' "$fs" "${io_type[$fs]}" "${io_dirs[$fs]}" "$np" "$mib" "$io_cols"
                awk -v fs="$fs" -v np="$np" -v mib="$mib" '
                    function num(x) { return x ~ /^[0-9.]+$/ }
                    # the best of the rounds; n/a only if no round gave a number
                    $2 == fs && $5 == np && $6 == mib {
                        k = $1 SUBSEP $3 SUBSEP $4
                        if (!(k in v) || (num($7) && (!num(v[k]) || $7 + 0 > v[k] + 0))) v[k] = $7
                    }
                    END {
                        printf "  %-8s %-5s %11s %11s %11s %11s %10s %10s\n", "pattern", "op", "oxmpi-proc", "oxmpi-thr",
                            "MPICH", "Open MPI", "proc/peer", "thr/peer"
                        np_ = split("coll contig strided", P, " ")
                        for (p = 1; p <= np_; p++) for (o = 1; o <= 2; o++) {
                            op = o == 1 ? "write" : "read"
                            split("oxmpi oxthr mpich openmpi", I, " ")
                            for (i = 1; i <= 4; i++) x[I[i]] = ((I[i], P[p], op) in v) ? v[I[i], P[p], op] : "-"
                            best = ""
                            if (num(x["mpich"])) best = x["mpich"]
                            if (num(x["openmpi"]) && (best == "" || x["openmpi"] > best)) best = x["openmpi"]
                            for (m = 1; m <= 2; m++) {
                                ox = m == 1 ? "oxmpi" : "oxthr"
                                q[ox] = (best != "" && best > 0 && num(x[ox])) ? sprintf("x%.2f", x[ox] / best) : "-"
                            }
                            printf "  %-8s %-5s %11s %11s %11s %11s %10s %10s\n", P[p], op, x["oxmpi"], x["oxthr"],
                                x["mpich"], x["openmpi"], q["oxmpi"], q["oxthr"]
                        }
                    }' "$IORES"
            done
        done
    done
}

# --- io-overlap: nonblocking MPI-IO overlap, every implementation once per configuration ---
IOVRES="$WORK/io-overlap-results.txt"
io_overlap() {
    : >"$IOVRES"
    local fs dir np kind impl out rc got
    declare -A io_dirs=([tmpfs]=/dev/shm [disk]="${io_dir:-$WORK/io-disk}")
    for fs in "${IO_FS[@]}"; do
        dir="${io_dirs[$fs]}"
        mkdir -p -- "$dir" || die "cannot create $dir"
        for np in "${IO_RANKS[@]}"; do
            for kind in busy sleep; do
                for impl in "${impls[@]}"; do
                    [ "$impl" != oxmon ] && [ "$impl" != oxkthr ] || continue # p2p-only variants
                    out="$WORK/iov-$impl-$fs-$np-$kind.txt"
                    run_case "$impl" "$np" "$io_timeout" "$out" \
                        "^result i(write|read)_at(_all)? $np [0-9]+ $kind [0-9.]+ [0-9.]+ -?[0-9.]+\$" \
                        "$WORK/io_overlap-$impl" -s "$io_overlap_mib" -r "$io_reps" -c "$kind" -d "$dir"
                    awk -v i="$impl" -v f="$fs" 'NF { print i, f, $2, $3, $5, $6, $8 }' <<<"$got" >>"$IOVRES"
                    if [ "$rc" -ne 0 ]; then
                        report_failure "${label[$impl]} failed io_overlap with $np ranks on $fs ($kind)" "$out"
                    fi
                    printf '== io-overlap %-5s %d ranks %-5s %-20s %d results\n' "$fs" "$np" "$kind" "${label[$impl]}" \
                        "$(grep -c . <<<"$got")"
                    find "$dir" -maxdepth 1 -name 'oxmpi-io_overlap-*.dat' -delete 2>/dev/null || true
                done
            done
        done
    done
    [ -n "${io_dir:-}" ] || rmdir -- "$WORK/io-disk" 2>/dev/null || true

    echo
    echo "Nonblocking MPI-IO overlap, $io_overlap_mib MiB per rank (best of $io_reps); $(nproc) cores"
    echo "-ms = the call and MPI_Wait alone (pure), -% = the share of it hidden behind computation (100: all, 0: none); proc/thr = oxmpi processes/threads"
    for fs in "${IO_FS[@]}"; do
        for np in "${IO_RANKS[@]}"; do
            for kind in busy sleep; do
                printf '\n%s, %d ranks, %s computation\n' "$fs" "$np" "$kind"
                awk -v fs="$fs" -v np="$np" -v kind="$kind" '
                    $2 == fs && $4 == np && $5 == kind { p[$1, $3] = $6; o[$1, $3] = $7 }
                    END {
                        split("oxmpi oxthr mpich openmpi", I, " ")
                        split("proc thr MPICH OMPI", L, " ")
                        printf "  %-14s", "op"
                        for (i = 1; i <= 4; i++) printf " %10s %6s", L[i] "-ms", L[i] "-%"
                        printf "\n"
                        split("iwrite_at iwrite_at_all iread_at iread_at_all", O, " ")
                        for (k = 1; k <= 4; k++) {
                            printf "  %-14s", O[k]
                            for (i = 1; i <= 4; i++) {
                                if ((I[i], O[k]) in p) printf " %10s %6s", p[I[i], O[k]], o[I[i], O[k]]
                                else printf " %10s %6s", "-", "-"
                            }
                            printf "\n"
                        }
                    }' "$IOVRES"
            done
        done
    done
}

[ "$do_p2p" = no ] || p2p
[ "$do_coll" = no ] || coll
[ "${do_nbc:-no}" = no ] || nbc
[ "${do_io:-no}" = no ] || io
[ "${do_iov:-no}" = no ] || io_overlap

echo
raw=()
[ "$do_p2p" = no ] || raw+=("$RESULTS" ${RING:+"$RING"})
[ "$do_coll" = no ] || raw+=("$COLLRES")
[ "${do_io:-no}" = no ] || raw+=("$IORES")
[ "${do_iov:-no}" = no ] || raw+=("$IOVRES")
echo "raw results: ${raw[*]}"
