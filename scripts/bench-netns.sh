#!/usr/bin/env bash
# Latency, bandwidth and allreduce between two network namespaces over TCP (issue 19): oxmpi beside
# MPICH and Open MPI in the same setup. See --help.
set -euo pipefail

OXMPI_ROOT="$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/.." && pwd)"
# shellcheck source=scripts/common.sh source-path=SCRIPTDIR/..
. "$OXMPI_ROOT/scripts/common.sh"

usage() {
    cat <<'USAGE'
Usage: scripts/bench-netns.sh --prefix DIR [options]

Two network namespaces as two nodes (scripts/netns.sh --name oxb: oxb1 10.77.2.1 and oxb2
10.77.2.2, joined by a bridge), and three MPIs started across them, the implementations
alternating for --rounds rounds:
  oxmpi     hydra (mpiexec.mpich -launcher ssh -launcher-exec <netns wrapper>), oxmpi's library
            through LD_LIBRARY_PATH; UCX between the nodes (UCX_TLS=tcp,
            UCX_NET_DEVICES=oxbeth0), shared memory inside a node
  MPICH     the same hydra command, Debian's MPICH (ch4:ucx: UCX over TCP between the nodes, its
            own shared memory inside a node)
  Open MPI  mpirun.openmpi --mca plm_rsh_agent <netns wrapper>, pml ob1 with btl tcp,self
            (its UCX pml does not take TCP alone; with vader too, a rank of the 2 x 2 allreduce
            crashed with SIGSEGV across the namespaces)
  oxmpi-mpx with --oxmpi-mpiexec: oxmpi's own mpiexec -hosts ... --launcher <netns wrapper>
            (--oxmpi-mode processes|threads; threads: one process per node)
Measured (rank 0 on oxb1, rank 1 on oxb2):
  lat 8 B     benches/pingpong.c: one-way latency of an 8-byte ping-pong (median of its
              repetitions), microseconds
  bw SIZE     benches/msg_rate.c: windowed bandwidth (OSU's osu_bw method: a window of --window
              MPI_Isend, as many MPI_Irecv, Waitall, a 4-byte ack), MB/s, at 1 KiB, 64 KiB,
              1 MiB and 4 MiB
  allreduce   benches/coll_latency.c: MPI_Allreduce (sum of doubles) on 2 nodes x 2 ranks (ranks
              0,1 on oxb1), 8 B and 1 MiB, max over ranks of the mean call time, microseconds
Each cell is the best of the rounds (lowest time, highest bandwidth), or with --stat median their
median (a loaded machine: the best is luck, the median is typical). The last column is oxmpi /
the better peer: for times below 1 means oxmpi is faster, for bandwidths above 1 does. Output
also goes to target/bench/netns.txt. Needs root (network namespaces).

Options:
  --prefix DIR        the oxmpi installation (required)
  --rounds R          alternating rounds (default 3)
  --window W          bandwidth window (default 16)
  --timeout S         time limit per run (default 120)
  --oxmpi-mpiexec     also run oxmpi's own mpiexec across the namespaces (needs its -hosts and
                      --launcher options)
  --oxmpi-mode M      the mode of that mpiexec (default threads)
  --base-prefix DIR   also run another oxmpi installation (a baseline, e.g. the branch point)
                      the same way as oxmpi, as column "oxbase", interleaved with the rest
  --no-allreduce      skip the 2 x 2 allreduce (the point-to-point rows only)
  --no-bw             skip the bandwidth runs (the latency row, and the allreduce unless skipped)
  --stat best|median  what a cell shows of its rounds (default best)
  --name P            prefix of the namespaces' names (default oxb), so that two runs on one
                      machine do not take each other's namespaces down
  --subnet A.B.C      their /24 (default 10.77.2)
  -h, --help          show this help
USAGE
}

prefix="" rounds=3 window=16 timeout=120 with_mpx=no mpx_mode=threads base="" allreduce=yes bw=yes stat=best
NAME=oxb SUBNET=10.77.2
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix="${2:?}"; shift 2 ;;
        --rounds) rounds="${2:?}"; shift 2 ;;
        --window) window="${2:?}"; shift 2 ;;
        --timeout) timeout="${2:?}"; shift 2 ;;
        --oxmpi-mpiexec) with_mpx=yes; shift ;;
        --oxmpi-mode) mpx_mode="${2:?}"; shift 2 ;;
        --base-prefix) base="${2:?}"; shift 2 ;;
        --no-allreduce) allreduce=no; shift ;;
        --no-bw) bw=no; shift ;;
        --stat) stat="${2:?}"; shift 2 ;;
        --name) NAME="${2:?}"; shift 2 ;;
        --subnet) SUBNET="${2:?}"; shift 2 ;;
        -h | --help) usage; exit 0 ;;
        *) echo "bench-netns.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
[ -n "$prefix" ] || { echo "bench-netns.sh: --prefix DIR is required (see --help)" >&2; exit 2; }
for v in "$rounds" "$window" "$timeout"; do
    [[ "$v" =~ ^[1-9][0-9]*$ ]] || die "'$v' is not a positive integer"
done
case "$stat" in best | median) ;; *) die "--stat takes best or median, not '$stat'" ;; esac
[ "$(id -u)" = 0 ] || die "network namespaces need root (CAP_NET_ADMIN, CAP_SYS_ADMIN); this runs as $(id -un)"
prefix="$(cd "$prefix" && pwd)"
[ -z "$base" ] || base="$(cd "$base" && pwd)" || die "no directory $base"
out_dir="$OXMPI_ROOT/target/bench"
mkdir -p "$out_dir"

NETNS=("$OXMPI_ROOT/scripts/netns.sh" --name "$NAME" --subnet "$SUBNET")
SSH="/run/oxmpi-netns-$NAME/ssh"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/oxmpi-bench-netns.XXXXXX")"
trap '"${NETNS[@]}" down; rm -rf -- "$WORK"' EXIT
"${NETNS[@]}" down
"${NETNS[@]}" up 2 >/dev/null || die "cannot make network namespaces (scripts/netns.sh up 2)"
# UCX's own settings otherwise: its TCP sockets get TCP_NODELAY by its own default
# (UCX_TCP_NODELAY=y), the same for oxmpi and MPICH; oxmpi sets no UCX option itself.
export UCX_TLS=tcp UCX_NET_DEVICES="${NAME}eth0"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
H1="${NAME}1" H2="${NAME}2"

# --- build
impls=(oxmpi mpich ompi)
[ "$with_mpx" = yes ] && impls+=(oxmpx)
[ -n "$base" ] && impls+=(oxbase)
declare -A CC=([oxmpi]="$prefix/bin/mpicc" [oxmpx]="$prefix/bin/mpicc" [oxbase]="$base/bin/mpicc" [mpich]=mpicc.mpich [ompi]=mpicc.openmpi)
for i in "${impls[@]}"; do
    for b in pingpong msg_rate coll_latency; do
        [ "$i" = oxmpx ] && { cp "$WORK/oxmpi-$b" "$WORK/oxmpx-$b"; continue; }
        "${CC[$i]}" -O2 -o "$WORK/$i-$b" "$OXMPI_ROOT/benches/$b.c" || die "cannot build benches/$b.c with ${CC[$i]}"
    done
done

# launch IMPL PER_NODE N PROGRAM ARGS...: N ranks over the two nodes, PER_NODE of them on each
# (1: rank 0 on oxb1, rank 1 on oxb2; 2: ranks 0,1 on oxb1, 2,3 on oxb2).
launch() {
    local impl="$1" ppn="$2" n="$3"
    shift 3
    local hydra=(mpiexec.mpich -launcher ssh -launcher-exec "$SSH" -iface "$NAME-br" -hosts "$H1:$ppn,$H2:$ppn" -n "$n")
    case "$impl" in
        oxmpi) LD_LIBRARY_PATH="$prefix/lib" timeout -k 5 "$timeout" "${hydra[@]}" "$@" ;;
        oxbase) LD_LIBRARY_PATH="$base/lib" timeout -k 5 "$timeout" "${hydra[@]}" "$@" ;;
        mpich) timeout -k 5 "$timeout" "${hydra[@]}" "$@" ;;
        ompi)
            local map=node
            [ "$ppn" = 1 ] || map=slot
            timeout -k 5 "$timeout" mpirun.openmpi --bind-to none --mca plm_rsh_agent "$SSH" \
                --mca oob_tcp_if_include "$SUBNET.0/24" --mca pml ob1 --mca btl tcp,self \
                --mca btl_tcp_if_include "$SUBNET.0/24" --host "$H1:$ppn,$H2:$ppn" --map-by "$map" -n "$n" "$@"
            ;;
        # oxmpi's own mpiexec across hosts: its -hosts and --launcher (issue 19, item 4).
        oxmpx) timeout -k 5 "$timeout" "$prefix/bin/mpiexec" --mode "$mpx_mode" -hosts "$H1:$ppn,$H2:$ppn" \
            --launcher "$SSH" --iface "$NAME-br" -n "$n" "$@" ;;
    esac
}

# Results: R[impl,metric] = best so far; V[impl,metric] = every value (for --stat median).
declare -A R V
METRICS=("lat 8 B" "bw 1 KiB" "bw 64 KiB" "bw 1 MiB" "bw 4 MiB" "allreduce 8 B" "allreduce 1 MiB")
declare -A SIZE_OF=([1024]="bw 1 KiB" [65536]="bw 64 KiB" [1048576]="bw 1 MiB" [4194304]="bw 4 MiB")
# keep IMPL METRIC VALUE: the lower time or higher bandwidth wins.
keep() {
    V[$1,$2]+="$3 "
    local old="${R[$1,$2]:-}"
    if [ -z "$old" ] || awk -v o="$old" -v n="$3" -v bw="${2%% *}" 'BEGIN { exit !(bw == "bw" ? n > o : n < o) }'; then
        R[$1,$2]="$3"
    fi
}

log="$WORK/log"
for ((round = 1; round <= rounds; round++)); do
    # Interleaved, in a rotating order.
    order=("${impls[@]:round % ${#impls[@]}}" "${impls[@]:0:round % ${#impls[@]}}")
    for i in "${order[@]}"; do
        echo "# round $round: $i" >&2
        # (a run whose measurement is complete counts, whatever its exit status)
        launch "$i" 1 2 "$WORK/$i-pingpong" -s 65536 >"$log" 2>&1 || true
        v="$(sed -n 's/^latency_us=\([0-9.]*\).*/\1/p' "$log")"
        if [ -n "$v" ]; then
            keep "$i" "lat 8 B" "$v"
        else
            echo "# $i pingpong failed: $(tail -n 2 "$log" | tr '\n' ' ')" >&2
        fi
        if [ "$bw" = no ]; then
            :
        elif launch "$i" 1 2 "$WORK/$i-msg_rate" 100 "$window" 1024 65536 1048576 4194304 >"$log" 2>&1; then
            while read -r s mbs _; do
                [ -n "${SIZE_OF[$s]:-}" ] && keep "$i" "${SIZE_OF[$s]}" "$mbs"
            done < <(grep -E '^[0-9]+ [0-9.]+ [0-9]+$' "$log")
        else
            echo "# $i msg_rate failed: $(grep -v TCP_NODELAY "$log" | tail -n 2 | tr '\n' ' ')" >&2
        fi
        # A budget: oversubscribed (4 ranks on a small machine), MPICH's polling ranks take
        # milliseconds per call; the sizes past it are skipped, not the whole run lost.
        if [ "$allreduce" = no ]; then
            :
        elif launch "$i" 2 4 "$WORK/$i-coll_latency" -t 0.05 -T 40 -M 1048576 allreduce >"$log" 2>&1; then
            while read -r _ s _ us; do
                case "$s" in 8) keep "$i" "allreduce 8 B" "$us" ;; 1048576) keep "$i" "allreduce 1 MiB" "$us" ;; esac
            done < <(grep -E '^allreduce [0-9]+ 4 [0-9.]+$' "$log")
        else
            echo "# $i coll_latency failed: $(grep -v TCP_NODELAY "$log" | tail -n 2 | tr '\n' ' ')" >&2
        fi
    done
done

if [ "$stat" = median ]; then
    for k in "${!V[@]}"; do
        R[$k]="$(tr ' ' '\n' <<<"${V[$k]}" | grep . | sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')"
    done
fi
{
    echo "# two network namespaces over TCP (veth + bridge), UCX_TLS=tcp; $stat of $rounds interleaved rounds; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "# MPICH $(mpichversion 2>/dev/null | sed -n 's/^MPICH Version:[[:space:]]*//p') ($(mpichversion 2>/dev/null | sed -n 's/^MPICH Device:[[:space:]]*//p')), $(mpirun.openmpi --version 2>/dev/null | head -n 1) (ob1, btl tcp)"
    echo "# times in us (lower is better), bandwidths in MB/s (higher is better); ratio = oxmpi / better peer"
} | tee "$out_dir/netns.txt"
{
    hdr="metric"
    for i in "${impls[@]}"; do hdr+="|$i"; done
    hdr+="|oxmpi/best-peer"
    [ "$with_mpx" = yes ] && hdr+="|oxmpx/best-peer"
    echo "$hdr"
    for m in "${METRICS[@]}"; do
        row="$m"
        for i in "${impls[@]}"; do row+="|${R[$i,$m]:--}"; done
        for i in oxmpi oxmpx; do
            [ "$i" = oxmpi ] || [ "$with_mpx" = yes ] || continue
            row+="|$(awk -v o="${R[$i,$m]:-}" -v a="${R[mpich,$m]:-}" -v b="${R[ompi,$m]:-}" -v bw="${m%% *}" 'BEGIN {
                if (o == "" || (a == "" && b == "")) { print "-"; exit }
                if (a == "") a = b; if (b == "") b = a
                best = bw == "bw" ? (a > b ? a : b) : (a < b ? a : b)
                printf "%.2f", o / best }')"
        done
        echo "$row"
    done
} | column -t -s '|' | tee -a "$out_dir/netns.txt"
