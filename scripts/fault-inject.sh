#!/usr/bin/env bash
# Fault injection (issue 22, item 4, first version): random workloads with a random rank killed at
# a random step, checking that nothing hangs, no result is wrong and nothing is left behind.
set -euo pipefail

OXMPI_ROOT="$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/.." && pwd)"
# shellcheck source=scripts/common.sh source-path=SCRIPTDIR/..
. "$OXMPI_ROOT/scripts/common.sh"

usage() {
    cat <<'USAGE'
Usage: scripts/fault-inject.sh --prefix PREFIX [options]

Builds c-tests/fault/workload.c with PREFIX/bin/mpicc (a seeded random sequence of rings,
allreduces, RMA epochs (fence: put, accumulate, get; lock/flush: put, get, fetch-and-op) and
communicator dup/free, every result checked) and runs trials: in each, --failures random ranks die (SIGKILL, SIGSEGV or exit(3) without MPI_Finalize) at random steps.
A trial passes when
  - without --survive: the job ends with a non-zero status before the timeout, mpiexec names
    the dead rank on stderr (in threads mode a SIGKILL ends the host process, which mpiexec
    reports instead), and no result was wrong (no "TEST FAILED");
  - with --survive (mpiexec --survive, the workload recovers with MPIX_Comm_revoke / _agree /
    _shrink): every survivor finishes ("FI_DONE survivors=N-F") with every result right, before
    the timeout; in threads mode the victims die by SIGSEGV or exit(3) (a SIGKILL would end the
    host process, every rank);
and, in both cases, no process of the trial is left.
One trial per mode in every round, until --trials rounds ran or --time seconds passed.

Options:
  --prefix P      oxmpi installation (required)
  --trials N      rounds at most (default 50)
  --time S        stop starting rounds after S seconds (default 300)
  --modes "M..."  rank modes (default "processes threads")
  --ranks N       ranks per job (default 4)
  --steps N       workload steps (default 200)
  --failures F    ranks that die in each trial (default 1; at most --ranks - 1)
  --survive       the survivors recover and must finish
  --seed N        first seed (default: from the clock; printed, so a run can be repeated)
  --timeout S     per-trial timeout (default 30)
Exit status 0 only if every trial passed. Logs of failed trials: target/fault-inject/.
USAGE
}

prefix="" trials=50 budget=300 modes="processes threads" ranks=4 steps=200 survive=0 seed="" per=30 failures=1
while [ $# -gt 0 ]; do
    case "$1" in
        -h | --help) usage; exit 0 ;;
        --prefix) prefix="$2"; shift ;;
        --trials) trials="$2"; shift ;;
        --time) budget="$2"; shift ;;
        --modes) modes="$2"; shift ;;
        --ranks) ranks="$2"; shift ;;
        --steps) steps="$2"; shift ;;
        --failures) failures="$2"; shift ;;
        --survive) survive=1 ;;
        --seed) seed="$2"; shift ;;
        --timeout) per="$2"; shift ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
    shift
done
[ -n "$prefix" ] || { usage >&2; die "--prefix is required"; }
if [ "$failures" -lt 1 ] || [ "$failures" -ge "$ranks" ]; then
    die "--failures must be 1 to $((ranks - 1))"
fi
seed="${seed:-$(date +%s)}"
out="$(cargo_target_dir)/fault-inject"
mkdir -p "$out"
bin="$out/workload"
"$prefix/bin/mpicc" -O2 -I "$OXMPI_ROOT/c-tests" -o "$bin" "$OXMPI_ROOT/c-tests/fault/workload.c"
echo "# fault-inject: seed $seed, $ranks ranks, $steps steps, $failures failures, modes: $modes, survive: $survive"

declare -A pass=() tried=()
start=$(date +%s)
hows=(kill segv exit)
for ((round = 0; round < trials; round++)); do
    [ $(($(date +%s) - start)) -lt "$budget" ] || break
    for mode in $modes; do
        s=$((seed + round))
        RANDOM=$s
        # Distinct victims, each with its step.
        victims="" picked=" "
        while [ "$(echo "$picked" | wc -w)" -lt "$failures" ]; do
            v=$((RANDOM % ranks))
            case "$picked" in *" $v "*) continue ;; esac
            picked="$picked$v "
            victims="${victims:+$victims,}$v:$((RANDOM % steps))"
        done
        victim_re=$(echo "$picked" | xargs | tr ' ' '|')
        how=${hows[$((RANDOM % 3))]}
        # A rank that survives alone in threads mode dies on its own thread.
        [ "$survive" = 1 ] && [ "$mode" = threads ] && [ "$how" = kill ] && how=segv
        tag="seed=$s victims=$victims how=$how"
        args=(--mode "$mode" --timeout "$per" -n "$ranks")
        [ "$survive" = 1 ] && args+=(--survive)
        rc=0
        FI_SEED=$s FI_STEPS=$steps FI_VICTIMS=$victims FI_HOW=$how FI_SURVIVE=$survive \
            timeout -k 5 $((per + 5)) "$prefix/bin/mpiexec" "${args[@]}" "$bin" >"$out/last.out" 2>"$out/last.err" || rc=$?
        why=""
        if [ "$rc" = 124 ] || grep -q "timed out" "$out/last.err"; then
            why="hang (timeout)"
        elif grep -q "TEST FAILED" "$out/last.out" "$out/last.err"; then
            why="wrong result or error: $(grep -h "TEST FAILED" "$out/last.out" "$out/last.err" | head -1)"
        elif [ "$survive" = 1 ]; then
            alive=$((ranks - failures))
            done_lines=$(grep -c "^FI_DONE survivors=$alive$" "$out/last.out" || true)
            [ "$done_lines" = "$alive" ] || why="$done_lines of $alive survivors finished (status $rc)"
        else
            [ "$rc" != 0 ] || why="the job succeeded although a rank died"
            # A SIGKILL in threads mode ends the host process: no thread can say which rank it was.
            named="rank ($victim_re) "
            [ "$mode" = threads ] && [ "$how" = kill ] && named="killed by signal 9"
            grep -qE "$named" "$out/last.err" || why="${why:+$why; }stderr does not say \"$named\""
        fi
        left=$(pgrep -f "^$bin" || true)
        if [ -n "$left" ]; then
            why="${why:+$why; }processes left: $(echo "$left" | tr '\n' ' ')"
            # shellcheck disable=SC2086 # one pid per word
            kill -9 $left 2>/dev/null || true
        fi
        tried[$mode]=$((${tried[$mode]:-0} + 1))
        if [ -z "$why" ]; then
            pass[$mode]=$((${pass[$mode]:-0} + 1))
        else
            echo "FAIL $mode $tag: $why"
            cp "$out/last.out" "$out/fail-$mode-$s.out"
            cp "$out/last.err" "$out/fail-$mode-$s.err"
        fi
    done
done
status=0
for mode in $modes; do
    echo "# $mode: ${pass[$mode]:-0} of ${tried[$mode]:-0} trials passed"
    [ "${pass[$mode]:-0}" = "${tried[$mode]:-0}" ] || status=1
done
exit $status
