#!/usr/bin/env bash
# Paired A/B benchmark of two oxmpi builds (install prefixes or git commits): is B slower than A
# anywhere? See --help.
set -euo pipefail
# The whole script is one compound command, which bash reads completely before running it: editing
# or checking out another version of this file during a run does not disturb the run.
{

OXMPI_ROOT="$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/.." && pwd)"
# shellcheck source=scripts/common.sh source-path=SCRIPTDIR/..
. "$OXMPI_ROOT/scripts/common.sh"

usage() {
    cat <<'USAGE'
Usage: scripts/bench-ab.sh [options] A B

Compares two oxmpi builds, A (the reference) and B (the candidate, e.g. after a refactoring), on
the benchmarks of benches/, and flags every measurement where B is more than 5 % slower than A.

A and B are each either
  - an oxmpi install prefix: a directory with bin/mpiexec and bin/mpicc, as made by
    scripts/install.sh PREFIX (use this for uncommitted work: install the working tree first), or
  - a git commit or ref of this repository (main, HEAD~3, a hash, ...): the script checks it out
    in a temporary worktree (git worktree add --detach), runs that commit's scripts/install.sh
    into target/bench-ab/<hash12> (cargo builds in target/bench-ab/cargo-target) and removes the
    worktree. An existing prefix for that hash is reused (--rebuild builds it again).
A directory is taken as a prefix before anything is tried as a git ref. A and B may be the same
build (an A/A run shows how much the machine alone moves the numbers).

The benchmark programs are always the ones in this checkout's benches/, compiled with each
build's own mpicc -O2. Every measurement runs for A and for B back to back, in the order AB in
odd rounds and BA in even rounds, and this for --rounds rounds (the machine is noisy and
bimodal: the same binary can measure 0.35 or 0.75 us in different runs). Each is a separate
mpiexec job in each rank mode of --modes (mpiexec --mode processes / --mode threads), after one
untimed warm-up job per build and mode. The builds run with oxmpi's defaults (algorithm choice,
fibers in threads mode when ranks outnumber cores) and the environment the script inherits.

Rows (name: what, unit):
  pingpong-lat-8B       benches/pingpong.c, 2 ranks: 8-byte one-way latency, us
  pingpong-bw-4M        the same job: 4 MiB bandwidth, GB/s (higher is better)
  ring-n16              benches/ring_allreduce.c, 16 ranks (--ring N): MPI_Sendrecv around a
                        ring plus a 1-double MPI_Allreduce, ms per iteration (oversubscribed)
  COLL-SIZE-nN          benches/coll_latency.c: MPI_COLL of SIZE bytes (alltoall: per peer) on
                        N ranks, us per call (max over ranks of the mean; OSU method); one job per
                        N runs all collectives; barrier-nN has no size. Alltoall sizes with
                        SIZE x N above --alltoall-cap are left out.
  rma-OP-8B-WIN         benches/rma_latency.c, 2 ranks: MPI_Put/MPI_Get of 8 bytes + flush on a
                        window from MPI_Win_allocate (allocate) or MPI_Win_create (create), us
  pap-reduce-n8         benches/pap_reduce.c, 8 ranks: MPI_Reduce of 128 Ki floats after random
                        per-rank delays (same seed for A and B), us from the last arrival to the
                        last finish
--list-rows prints the rows a run would produce.

Table columns: row, mode, unit; A and B: the medians over the rounds; B/A: the time ratio
median(B)/median(A), inverted for bandwidth (median(A)/median(B)), so that above 1 always means
B is slower; per-round: the range of the ratios of the A and B runs of the same round (they ran
back to back); spread: (max - min) / median of the A runs and of the B runs, in %; flag:
  SLOWER    B/A > 1 + threshold (default 5 %)
  SLOWER?   the same, but in some round B was not slower than A: likely noise, rerun that row
  faster    B/A < 1 - threshold
  no A, no B, no result
            that side (or both) has no number: its job failed or timed out (see the messages
            above the table), or the collective reported n/a (an error or a wrong result) or
            skip (its 60 s budget was used up)
The table is printed and written as Markdown to target/bench-ab/ab.md; the raw results (one line
per run: side mode row round value) go to target/bench-ab/raw.txt, the time of each job to
target/bench-ab/run/jobs.txt (target/ is $CARGO_TARGET_DIR if set). At the end the script prints
the command that reruns only the flagged rows (--only-rows). One run at a time per target/.

Options:
  --rounds R           alternating rounds (default 3)
  --quick              shorter run: 2 rounds, 5 ms per collective point instead of 50, ping-pong
                       target 0.03 s instead of 0.1, sizes 8,4K,256K (explicit options win)
  --modes LIST         rank modes, comma-separated: processes, threads (default both)
  --coll LIST          collectives, comma-separated, among bcast, reduce, allreduce, alltoall,
                       barrier (default all five); 'none' for no collective rows
  --coll-ranks LIST    rank counts of the collectives (default 2,8,16)
  --sizes LIST         collective message sizes among 8,64,512,4K,32K,256K,1M,4M (also in
                       bytes) (default 8,4K,256K,1M)
  --alltoall-cap B     largest alltoall buffer per rank, block size x ranks (default 4M: 1M
                       blocks at 2 ranks, 256K at 8 and 16)
  --coll-target S      seconds of timed calls per collective point (default 0.05)
  --ring N             ranks of the ring row, 0 for none (default 16)
  --only-rows REGEX    run only the rows whose name matches this extended regex (grep -E), e.g.
                       '^pingpong' or '^(allreduce-8B-n16|barrier-n8)$'
  --skip-rows REGEX    leave out the rows whose name matches
  --threshold PCT      the slowdown that is flagged, in % (default 5)
  --timeout S          time limit per mpiexec job in seconds (default 180)
  --rebuild            rebuild the prefixes of git refs even if they exist
  --list-rows          print the selected rows and exit (nothing is built or run)
  -h, --help           show this help

The default run (57 rows in each of 2 modes, 3 rounds of 2 builds: 84 jobs) took 2.5 minutes on
the 2-core development VM with a load average of 11 from other builds, --quick (47 rows, 56
jobs) under a minute; a git ref not built yet adds its build (about 5 minutes there). More
rounds (--rounds 5 or 7) still fit well within 15 minutes. A job that hangs costs --timeout.
Examples:
  scripts/bench-ab.sh main HEAD                       # has the branch made anything slower?
  scripts/install.sh /tmp/wip && scripts/bench-ab.sh main /tmp/wip     # uncommitted work
  scripts/bench-ab.sh --rounds 7 --modes threads --only-rows '^allreduce-8B' main HEAD
USAGE
}

# --- options ---
cmdline="scripts/bench-ab.sh"
for a in "$@"; do
    if [[ "$a" =~ ^[][A-Za-z0-9_./,=:+~^@-]+$ ]]; then cmdline+=" $a"; else cmdline+=" '${a//\'/\'\\\'\'}'"; fi
done
rounds=""
quick=no
modes="processes,threads"
coll_list="bcast,reduce,allreduce,alltoall,barrier"
coll_ranks="2,8,16"
sizes=""
a2a_cap=4M
coll_target=""
ring_n=16
only_rows=""
skip_rows=""
threshold=5
timeout_s=180
rebuild=no
list_rows=no
args=()
while [ $# -gt 0 ]; do
    case "$1" in
        -h | --help) usage; exit 0 ;;
        --quick) quick=yes ;;
        --rebuild) rebuild=yes ;;
        --list-rows) list_rows=yes ;;
        --rounds | --modes | --coll | --coll-ranks | --sizes | --alltoall-cap | --coll-target | --ring | \
            --only-rows | --skip-rows | --threshold | --timeout)
            [ $# -ge 2 ] || die "$1 needs a value"
            set -- "$1=$2" "${@:3}"
            continue
            ;;
        --rounds=*) rounds="${1#*=}" ;;
        --modes=*) modes="${1#*=}" ;;
        --coll=*) coll_list="${1#*=}" ;;
        --coll-ranks=*) coll_ranks="${1#*=}" ;;
        --sizes=*) sizes="${1#*=}" ;;
        --alltoall-cap=*) a2a_cap="${1#*=}" ;;
        --coll-target=*) coll_target="${1#*=}" ;;
        --ring=*) ring_n="${1#*=}" ;;
        --only-rows=*) only_rows="${1#*=}" ;;
        --skip-rows=*) skip_rows="${1#*=}" ;;
        --threshold=*) threshold="${1#*=}" ;;
        --timeout=*) timeout_s="${1#*=}" ;;
        --) shift; args+=("$@"); break ;;
        -*) usage >&2; die "unknown option: $1" ;;
        *) args+=("$1") ;;
    esac
    shift
done
if [ "$quick" = yes ]; then
    : "${rounds:=2}" "${coll_target:=0.005}" "${sizes:=8,4K,256K}"
    pp_target=0.03
else
    pp_target=0.1
fi
: "${rounds:=3}" "${coll_target:=0.05}" "${sizes:=8,4K,256K,1M}"

is_count() { case "$1" in '' | *[!0-9]* | 0*) return 1 ;; esac; }
is_number() { [[ "$1" =~ ^[0-9]*\.?[0-9]+$ ]]; }
bytes() { # bytes 4K -> 4096 (8, 8B, 4K, 4k, 256K, 1M, 4096 ...); fails on anything else
    local n="${1%[bB]}"
    n="${n%[kKmM]}"
    is_count "$n" || return 1
    case "${1%[bB]}" in
        *[kK]) echo $((n * 1024)) ;;
        *[mM]) echo $((n * 1048576)) ;;
        *) echo "$n" ;;
    esac
}
human() { # human 4096 -> 4K
    local b="$1"
    if [ "$b" -ge 1048576 ] && [ $((b % 1048576)) -eq 0 ]; then
        echo "$((b / 1048576))M"
    elif [ "$b" -ge 1024 ] && [ $((b % 1024)) -eq 0 ]; then
        echo "$((b / 1024))K"
    else
        echo "${b}B"
    fi
}

is_count "$rounds" || die "--rounds needs a positive integer"
is_count "$timeout_s" || die "--timeout needs a positive integer"
[ "$ring_n" = 0 ] || is_count "$ring_n" || die "--ring needs a rank count (0: no ring row)"
is_number "$coll_target" || die "--coll-target needs a number of seconds"
is_number "$threshold" || die "--threshold needs a percentage"
a2a_cap="$(bytes "$a2a_cap")" || die "--alltoall-cap needs a size in bytes (or with K/M)"
IFS=, read -r -a MODES <<<"$modes"
[ "${#MODES[@]}" -gt 0 ] || die "--modes needs at least one mode"
for m in "${MODES[@]}"; do
    case "$m" in processes | threads) ;; *) die "--modes: unknown mode '$m' (processes, threads)" ;; esac
done
COLLS=()
if [ "$coll_list" != none ]; then
    IFS=, read -r -a COLLS <<<"$coll_list"
    for c in "${COLLS[@]}"; do
        case "$c" in bcast | reduce | allreduce | alltoall | barrier) ;; *) die "--coll: unknown collective '$c'" ;; esac
    done
fi
IFS=, read -r -a COLL_RANKS <<<"$coll_ranks"
for n in "${COLL_RANKS[@]}"; do is_count "$n" || die "--coll-ranks: '$n' is not a positive integer"; done
SIZES=()
IFS=, read -r -a size_args <<<"$sizes"
for s in "${size_args[@]}"; do
    b="$(bytes "$s")" || die "--sizes: '$s' is not a size"
    [[ " 8 64 512 4096 32768 262144 1048576 4194304 " == *" $b "* ]] ||
        die "--sizes: $s is not one of benches/coll_latency.c's sizes (8,64,512,4K,32K,256K,1M,4M)"
    SIZES+=("$b")
done
[ "${#SIZES[@]}" -gt 0 ] || [ "${#COLLS[@]}" -eq 0 ] || die "--sizes needs at least one size"
if [ "$list_rows" = no ]; then
    [ "${#args[@]}" -eq 2 ] || { usage >&2; die "expected two builds A and B, got ${#args[@]} arguments"; }
fi

# --- the rows: name, unit, direction (t: a time, lower is better; b: a bandwidth), job ---
ROWS=()
declare -A UNIT DIR JOB
add_row() { # add_row NAME UNIT t|b JOB
    if [ -n "$only_rows" ] && ! grep -qE -- "$only_rows" <<<"$1"; then return 0; fi
    if [ -n "$skip_rows" ] && grep -qE -- "$skip_rows" <<<"$1"; then return 0; fi
    ROWS+=("$1")
    UNIT[$1]="$2"
    DIR[$1]="$3"
    JOB[$1]="$4"
}
add_row pingpong-lat-8B us t pingpong
add_row pingpong-bw-4M GB/s b pingpong
[ "$ring_n" = 0 ] || add_row "ring-n$ring_n" ms t ring
for c in ${COLLS[@]+"${COLLS[@]}"}; do
    for n in "${COLL_RANKS[@]}"; do
        if [ "$c" = barrier ]; then
            add_row "barrier-n$n" us t "coll-$n"
            continue
        fi
        for s in "${SIZES[@]}"; do
            [ "$c" != alltoall ] || [ $((s * n)) -le "$a2a_cap" ] || continue
            add_row "$c-$(human "$s")-n$n" us t "coll-$n"
        done
    done
done
for win in allocate create; do
    for op in put get; do
        add_row "rma-$op-8B-$win" us t rma
    done
done
PAP_N=8
add_row "pap-reduce-n$PAP_N" us t pap
[ "${#ROWS[@]}" -gt 0 ] || die "no row selected (see --list-rows)"
if [ "$list_rows" = yes ]; then
    for r in "${ROWS[@]}"; do printf '%-24s %-5s %s\n' "$r" "${UNIT[$r]}" "${JOB[$r]}"; done
    exit 0
fi

# The jobs these rows need, in order; for a collective job, its collectives and largest size.
JOBS=()
declare -A COLL_OF MAX_OF
for r in "${ROWS[@]}"; do
    j="${JOB[$r]}"
    case " ${JOBS[*]-} " in *" $j "*) ;; *) JOBS+=("$j") ;; esac
    if [[ "$j" == coll-* ]]; then
        c="${r%%-*}"
        case ",${COLL_OF[$j]-}," in *",$c,"*) ;; *) COLL_OF[$j]="${COLL_OF[$j]:+${COLL_OF[$j]},}$c" ;; esac
        size=8
        if [ "$c" != barrier ]; then
            size="${r#"$c"-}"
            size="$(bytes "${size%%-*}")"
        fi
        [ "${MAX_OF[$j]:-0}" -ge "$size" ] || MAX_OF[$j]="$size"
    fi
done

TARGET="$(cargo_target_dir)"
AB="$TARGET/bench-ab"
mkdir -p -- "$AB"
AB="$(cd -- "$AB" && pwd)"

# --- A and B: prefixes, or git commits built into prefixes ---
build_wt=""
job_pid=""
cleanup() {
    if [ -n "$job_pid" ]; then
        kill "$job_pid" 2>/dev/null || true
    fi
    if [ -n "$build_wt" ]; then
        git -C "$OXMPI_ROOT" worktree remove --force "$build_wt" 2>/dev/null || rm -rf -- "$build_wt"
        git -C "$OXMPI_ROOT" worktree prune 2>/dev/null || true
    fi
}
trap cleanup EXIT
trap 'echo "*** interrupted" >&2; exit 130' INT TERM

declare -A PREFIX DESC REBUILT
# needs_build HASH12: no complete prefix for it yet, or --rebuild and not yet rebuilt in this run
needs_build() {
    local prefix="$AB/$1"
    if ! [ -f "$prefix/.bench-ab-commit" ] || ! [ -x "$prefix/bin/mpiexec" ] || ! [ -x "$prefix/bin/mpicc" ]; then
        return 0
    fi
    [ "$rebuild" = yes ] && [ -z "${REBUILT[$1]:-}" ]
}
resolve() { # resolve SIDE ARG
    local side="$1" arg="$2" hash short prefix log
    if [ -d "$arg" ]; then
        if ! [ -x "$arg/bin/mpiexec" ] || ! [ -x "$arg/bin/mpicc" ]; then
            die "$side: $arg is a directory but not an oxmpi prefix (no bin/mpiexec and bin/mpicc)"
        fi
        prefix="$(cd -- "$arg" && pwd)"
        PREFIX[$side]="$prefix"
        DESC[$side]="prefix $prefix"
        if [ -f "$prefix/.bench-ab-commit" ]; then
            DESC[$side]+=" (commit $(head -c 12 "$prefix/.bench-ab-commit"))"
        fi
        return 0
    fi
    hash="$(git -C "$OXMPI_ROOT" rev-parse --verify --quiet "$arg^{commit}")" ||
        die "$side: '$arg' is neither an oxmpi prefix directory nor a git commit"
    short="${hash:0:12}"
    prefix="$AB/$short"
    PREFIX[$side]="$prefix"
    DESC[$side]="$arg = commit $short \"$(git -C "$OXMPI_ROOT" log -1 --format=%s "$hash" | cut -c 1-60)\""
    if ! needs_build "$short"; then
        echo "== $side: $arg = $short, reusing $prefix"
        return 0
    fi
    # One build at a time (the cargo target directory and the worktree path are shared).
    exec 9>"$AB/.build.lock"
    flock 9
    if needs_build "$short"; then
        build_wt="$AB/build-worktree"
        if [ -e "$build_wt" ]; then
            git -C "$OXMPI_ROOT" worktree remove --force "$build_wt" 2>/dev/null || rm -rf -- "$build_wt"
        fi
        git -C "$OXMPI_ROOT" worktree prune
        git -C "$OXMPI_ROOT" worktree add --quiet --detach "$build_wt" "$hash"
        [ -f "$build_wt/scripts/install.sh" ] || die "$side: commit $short has no scripts/install.sh"
        log="$AB/build-$short.log"
        echo "== $side: $arg = $short: building and installing into $prefix (log: $log)"
        rm -f -- "$prefix/.bench-ab-commit"
        if ! CARGO_TARGET_DIR="$AB/cargo-target" "$build_wt/scripts/install.sh" "$prefix" >"$log" 2>&1; then
            tail -n 25 "$log" >&2
            die "$side: building commit $short failed (log: $log)"
        fi
        echo "$hash" >"$prefix/.bench-ab-commit"
        REBUILT[$short]=yes
        cleanup
        build_wt=""
    else
        echo "== $side: $arg = $short, reusing $prefix (built meanwhile)"
    fi
    flock -u 9
    exec 9>&-
}
resolve A "${args[0]}"
resolve B "${args[1]}"
[ "${PREFIX[A]}" != "${PREFIX[B]}" ] || echo "== A and B are the same build: an A/A run (measures the noise)"

# --- one run at a time per target directory (run/, raw.txt and ab.md are shared) ---
exec 8>"$AB/.run.lock"
flock -n 8 || die "another scripts/bench-ab.sh is running with $AB (two runs would also disturb each other's timings)"

# --- compile the benchmarks with each build's mpicc ---
RUN="$AB/run"
RAW="$AB/raw.txt"
JOBLOG="$RUN/jobs.txt" # side mode round job seconds status
MD="$AB/ab.md"
declare -A NEED=([ring_allreduce]=yes) # also the warm-up
for j in "${JOBS[@]}"; do
    case "$j" in
        pingpong) NEED[pingpong]=yes ;;
        ring) NEED[ring_allreduce]=yes ;;
        coll-*) NEED[coll_latency]=yes ;;
        rma) NEED[rma_latency]=yes ;;
        pap) NEED[pap_reduce]=yes ;;
    esac
done
for side in A B; do
    mkdir -p -- "$RUN/$side"
    for b in "${!NEED[@]}"; do
        "${PREFIX[$side]}/bin/mpicc" -O2 -o "$RUN/$side/$b" "$OXMPI_ROOT/benches/$b.c" ||
            die "$side: compiling benches/$b.c with ${PREFIX[$side]}/bin/mpicc failed"
    done
done

# --- run ---
declare -A SELECTED
for r in "${ROWS[@]}"; do SELECTED[$r]=1; done
: >"$RAW"
: >"$JOBLOG"
failures=0
record() { # record SIDE MODE ROUND ROW VALUE
    [ -n "${SELECTED[$4]:-}" ] || return 0
    is_number "$5" || echo "   *** $1 $2 $4: '$5'" >&2
    echo "$1 $2 $4 $3 $5" >>"$RAW"
}

# run_job SIDE MODE JOB OUT: one mpiexec job; its output in OUT
run_job() {
    local side="$1" mode="$2" job="$3" bin="$RUN/$1" np cmd
    case "$job" in
        warmup) np=2 cmd=("$bin/ring_allreduce" 1) ;;
        pingpong) np=2 cmd=("$bin/pingpong" -t "$pp_target") ;;
        ring)
            np="$ring_n"
            # as scripts/bench.sh: threads mode is much faster here, more iterations
            if [ "$mode" = threads ]; then cmd=("$bin/ring_allreduce" 1000); else cmd=("$bin/ring_allreduce" 200); fi
            ;;
        coll-*)
            np="${job#coll-}"
            cmd=("$bin/coll_latency" -t "$coll_target" -T 60 -M "${MAX_OF[$job]}" -a "$a2a_cap" "${COLL_OF[$job]}")
            ;;
        rma) np=2 cmd=("$bin/rma_latency" --max 8) ;;
        pap) np="$PAP_N" cmd=("$bin/pap_reduce" 131072 30 2000 random 1) ;;
    esac
    # In the background, so that an interrupted script can stop it (timeout runs in a process
    # group of its own, which a Ctrl-C does not reach).
    timeout -k 5 "$timeout_s" "${PREFIX[$side]}/bin/mpiexec" --mode "$mode" -n "$np" "${cmd[@]}" >"$4" 2>&1 &
    job_pid=$!
    local rc=0
    wait "$job_pid" || rc=$?
    job_pid=""
    return "$rc"
}

# parse_job SIDE MODE ROUND JOB OUT: record the rows of a finished job; prints a summary
parse_job() {
    local side="$1" mode="$2" round="$3" job="$4" out="$5" line v row c s n
    case "$job" in
        pingpong)
            line="$(grep -E '^latency_us=[0-9.]+ bandwidth_GBps=[0-9.]+$' "$out" | tail -n 1)" || return 1
            v="${line#latency_us=}"
            record "$side" "$mode" "$round" pingpong-lat-8B "${v%% *}"
            record "$side" "$mode" "$round" pingpong-bw-4M "${line##*bandwidth_GBps=}"
            echo "$line"
            ;;
        ring)
            line="$(grep -E '^iter_ms=[0-9.]+$' "$out" | tail -n 1)" || return 1
            record "$side" "$mode" "$round" "ring-n$ring_n" "${line#iter_ms=}"
            echo "$line"
            ;;
        coll-*)
            local points=0
            while read -r c s n v; do
                if [ "$c" = barrier ]; then row="barrier-n$n"; else row="$c-$(human "$s")-n$n"; fi
                [ -n "${SELECTED[$row]:-}" ] || continue
                record "$side" "$mode" "$round" "$row" "$v"
                points=$((points + 1))
            done < <(grep -E '^[a-z]+ [0-9]+ [0-9]+ ([0-9.]+|n/a|skip)$' "$out")
            echo "$points points"
            ;;
        rma)
            local points=0
            while read -r win op s v; do
                row="rma-$op-${s}B-$win"
                [ -n "${SELECTED[$row]:-}" ] || continue
                record "$side" "$mode" "$round" "$row" "$v"
                points=$((points + 1))
            done < <(awk '$4 == "B" && $6 == "us" { print $1, $2, $3, $5 }' "$out")
            [ "$points" -gt 0 ] || return 1
            echo "$points points"
            ;;
        pap)
            # count iters max_delay mode ranks mean_last_us mean_first_us
            line="$(grep -E '^[0-9]+ [0-9]+ [0-9]+ (random|fixed) [0-9]+ [0-9.]+ [0-9.]+$' "$out" | tail -n 1)" || return 1
            v="$(awk '{ print $6 }' <<<"$line")"
            record "$side" "$mode" "$round" "pap-reduce-n$PAP_N" "$v"
            echo "last->finish ${v} us"
            ;;
    esac
}

start=$SECONDS
echo "== A: ${DESC[A]}"
echo "== B: ${DESC[B]}"
echo "== ${#ROWS[@]} rows x ${#MODES[@]} modes, $rounds rounds, jobs: ${JOBS[*]}; $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
load_start="$(cut -d' ' -f1-3 /proc/loadavg)"
if awk -v l="${load_start%% *}" -v n="$(nproc)" 'BEGIN { exit !(l > n / 2) }'; then
    echo "*** warning: load average ${load_start%% *} on $(nproc) cores: other work competes with the benchmarks," \
        "expect large spreads and slow runs" >&2
fi
out="$RUN/out.txt"
for mode in "${MODES[@]}"; do
    for side in A B; do
        run_job "$side" "$mode" warmup "$out" || true
    done
done
for ((round = 1; round <= rounds; round++)); do
    if ((round % 2)); then order=(A B); else order=(B A); fi
    for mode in "${MODES[@]}"; do
        for job in "${JOBS[@]}"; do
            for side in "${order[@]}"; do
                rc=0
                t0=$SECONDS
                run_job "$side" "$mode" "$job" "$out" || rc=$?
                echo "$side $mode $round $job $((SECONDS - t0)) $rc" >>"$JOBLOG"
                # keep whatever a failed job printed (a collective job reports point by point)
                if summary="$(parse_job "$side" "$mode" "$round" "$job" "$out")" && [ "$rc" -eq 0 ]; then
                    printf '== round %d/%d %-9s %s %-9s %3d s  %s\n' "$round" "$rounds" "$mode" "$side" "$job" \
                        "$((SECONDS - t0))" "$summary"
                else
                    failures=$((failures + 1))
                    echo "*** round $round $mode $side: $job failed (status $rc)${summary:+, kept: $summary}. Output:" >&2
                    grep -v '^#' "$out" | tail -n 8 | sed 's/^/    /' >&2
                fi
            done
        done
    done
done
load_end="$(cut -d' ' -f1-3 /proc/loadavg)"
elapsed=$((SECONDS - start))

# --- report ---
{
    for r in "${ROWS[@]}"; do echo "$r ${UNIT[$r]} ${DIR[$r]}"; done
} >"$RUN/rows.txt"
table="$(awk -v modes="${MODES[*]}" -v thr="$threshold" '
    function fmt(v,   d) { # 3 significant digits, at least the units
        if (v == "") return "-"
        if (v >= 100 || v <= 0) return sprintf("%.0f", v)
        d = 2 - int(log(v) / log(10) + 100) + 100 # 2 - floor(log10(v))
        return sprintf("%.*f", d, v)
    }
    function num(x) { return x ~ /^[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$/ }
    function sortv(a, n,   i, j, t) {
        for (i = 2; i <= n; i++)
            for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    }
    function median(a, n) {
        if (n == 0) return ""
        sortv(a, n)
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    function spread(a, n, m) { # a is sorted by median()
        if (n < 2 || m <= 0) return "-"
        return sprintf("%.0f%%", (a[n] - a[1]) / m * 100)
    }
    FNR == NR { order[++nrows] = $1; unit[$1] = $2; dir[$1] = $3; next }
    {   # side mode row round value (a number, or n/a or skip from coll_latency)
        if (num($5)) val[$1, $2, $3, $4] = $5; else word[$1, $2, $3] = $5
        if ($4 > maxround) maxround = $4
    }
    END {
        nm = split(modes, M, " ")
        for (i = 1; i <= nrows; i++) for (m = 1; m <= nm; m++) {
            r = order[i]; mode = M[m]
            na = nb = np = 0
            split("", A); split("", B); split("", P)
            for (k = 1; k <= maxround; k++) {
                ha = (("A", mode, r, k) in val); hb = (("B", mode, r, k) in val)
                if (ha) A[++na] = val["A", mode, r, k]
                if (hb) B[++nb] = val["B", mode, r, k]
                if (ha && hb && val["A", mode, r, k] > 0 && val["B", mode, r, k] > 0)
                    P[++np] = dir[r] == "b" ? val["A", mode, r, k] / val["B", mode, r, k] : val["B", mode, r, k] / val["A", mode, r, k]
            }
            ma = median(A, na); mb = median(B, nb)
            ratio = ""; flag = ""
            if (na == 0 && nb == 0) flag = "no result"
            else if (na == 0) flag = "no A"
            else if (nb == 0) flag = "no B"
            else if (ma > 0 && mb > 0) {
                ratio = dir[r] == "b" ? ma / mb : mb / ma
                if (ratio > 1 + thr / 100) {
                    sortv(P, np)
                    flag = (np > 0 && P[1] <= 1) ? "SLOWER?" : "SLOWER"
                } else if (ratio < 1 - thr / 100) flag = "faster"
            }
            pr = "-"
            if (np > 0) { sortv(P, np); pr = np == 1 ? sprintf("%.3f", P[1]) : sprintf("%.2f-%.2f", P[1], P[np]) }
            printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s/%s\t%s\n", r, mode == "processes" ? "proc" : "thr", unit[r],
                na ? fmt(ma) : (("A", mode, r) in word) ? word["A", mode, r] : "-",
                nb ? fmt(mb) : (("B", mode, r) in word) ? word["B", mode, r] : "-", ratio == "" ? "-" : sprintf("%.3f", ratio), pr, spread(A, na, ma), spread(B, nb, mb), flag
        }
    }' "$RUN/rows.txt" "$RAW")"

header=$'row\tmode\tunit\tA\tB\tB/A\tper-round\tspread A/B\tflag'
echo
echo "A: ${DESC[A]}"
echo "B: ${DESC[B]}"
echo "medians of $rounds rounds (AB, BA, ...); B/A = time ratio (bandwidth inverted): above 1, B is slower;"
echo "flagged: B more than $threshold % slower (SLOWER? = not slower in every round: rerun)"
{
    echo "$header"
    [ -z "$table" ] || echo "$table"
} | column -t -s $'\t'

flagged="$(awk -F'\t' '$9 ~ /^SLOWER/ { print $1 }' <<<"$table" | sort -u | paste -sd'|' -)"
flagged_modes="$(awk -F'\t' '$9 ~ /^SLOWER/ { print $2 == "proc" ? "processes" : "threads" }' <<<"$table" | sort -u | paste -sd, -)"
nflag="$(awk -F'\t' '$9 ~ /^SLOWER/' <<<"$table" | wc -l)"
nmissing="$(awk -F'\t' '$9 ~ /^no /' <<<"$table" | wc -l)"

{
    echo "## oxmpi A/B benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo
    echo "- \`$cmdline\`"
    echo "- A: ${DESC[A]}"
    echo "- B: ${DESC[B]}"
    echo "- $(nproc) cores, load average $load_start at the start, $load_end at the end; $rounds alternating rounds, $((elapsed / 60)) min $((elapsed % 60)) s"
    echo "- A, B: medians of the rounds; B/A: time ratio (bandwidth: A/B), above 1 = B slower; per-round: range of the B/A ratios of runs made back to back; spread: (max - min) / median per side"
    echo "- flag: SLOWER = B/A > $(awk -v t="$threshold" 'BEGIN { print 1 + t / 100 }'); SLOWER? = the same but not in every round (likely noise)"
    echo
    echo "| ${header//$'\t'/ | } |"
    echo "|$(sed 's/[^\t]*/---/g; s/\t/|/g' <<<"$header")|"
    [ -z "$table" ] || sed 's/\t/ | /g; s/^/| /; s/$/ |/' <<<"$table"
    echo
    echo "$nflag of $(wc -l <<<"$table") rows flagged SLOWER or SLOWER?."
} >"$MD"

echo
echo "$nflag flagged rows, $nmissing rows lacking a result, $failures failed jobs; $((elapsed / 60)) min $((elapsed % 60)) s"
echo "load average $load_start at the start, $load_end at the end"
echo "Markdown: $MD; raw results: $RAW"
if [ "$nflag" -gt 20 ]; then
    echo "$nflag rows flagged: rerun everything, with more rounds (--rounds 5), on a quieter machine"
elif [ -n "$flagged" ]; then
    echo "rerun the flagged rows with:"
    echo "  scripts/bench-ab.sh --rounds $((rounds > 5 ? rounds : 5)) --modes $flagged_modes --only-rows '^($flagged)\$' \\"
    echo "      ${PREFIX[A]} ${PREFIX[B]}"
fi
exit 0
}
