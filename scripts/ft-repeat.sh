#!/usr/bin/env bash
# Repeats the failure-recovery tests of issue 22 and counts how many runs passed: the minimal
# cases (a stale message or revocation of a freed communicator must never reach its successor)
# and the two-failure program (two deaths, two recoveries, every result checked), per rank mode.
set -euo pipefail

OXMPI_ROOT="$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/.." && pwd)"
# shellcheck source=scripts/common.sh source-path=SCRIPTDIR/..
. "$OXMPI_ROOT/scripts/common.sh"

usage() {
    cat <<'USAGE'
Usage: scripts/ft-repeat.sh --prefix PREFIX [options]

Builds c-tests/ft_revoke_stale.c, ft_free_stale.c, ft_revoke_reuse.c (4 ranks) and
ft_two_failures.c and ft_die_during_shrink.c (8 ranks; the latter with FT_DELAY_US=30: its
victims die inside MPIX_Comm_shrink / _agree) with PREFIX/bin/mpicc and runs each --runs times in
every mode. A run passes when it ends before the timeout with the test's expected status (0;
ft_two_failures and ft_die_during_shrink: 137, the SIGKILL of the first victim, or 139 in threads
mode, where the victims crash their thread) and no "TEST FAILED". Prints "TEST MODE: P of N runs passed" per test and mode.

Options:
  --prefix P      oxmpi installation (required)
  --runs N        runs per test and mode (default 100)
  --modes "M..."  rank modes (default "processes threads")
  --timeout S     per-run timeout (default 120)
Exit status 0 only if every run passed. Logs of failed runs: target/ft-repeat/.
USAGE
}

prefix="" runs=100 modes="processes threads" per=120
while [ $# -gt 0 ]; do
    case "$1" in
        -h | --help) usage; exit 0 ;;
        --prefix) prefix="$2"; shift ;;
        --runs) runs="$2"; shift ;;
        --modes) modes="$2"; shift ;;
        --timeout) per="$2"; shift ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
    shift
done
[ -n "$prefix" ] || { usage >&2; die "--prefix is required"; }
out="$(cargo_target_dir)/ft-repeat"
mkdir -p "$out"
tests="ft_revoke_stale ft_free_stale ft_revoke_reuse ft_two_failures ft_die_during_shrink"
for t in $tests; do
    "$prefix/bin/mpicc" -O2 -Wno-stringop-overflow -I "$OXMPI_ROOT/c-tests" -o "$out/$t" "$OXMPI_ROOT/c-tests/$t.c"
done
status=0
for mode in $modes; do
    for t in $tests; do
        n=4 want=0
        if [ "$t" = ft_two_failures ] || [ "$t" = ft_die_during_shrink ]; then
            n=8 want=137
            [ "$mode" = threads ] && want=139
        fi
        pass=0
        for ((i = 1; i <= runs; i++)); do
            rc=0
            FT_DELAY_US=30 timeout -k 5 $((per + 5)) "$prefix/bin/mpiexec" --mode "$mode" --timeout "$per" -n "$n" "$out/$t" \
                >"$out/last.out" 2>"$out/last.err" </dev/null || rc=$?
            if [ "$rc" = "$want" ] && ! grep -q "TEST FAILED" "$out/last.out" "$out/last.err"; then
                pass=$((pass + 1))
            else
                echo "FAIL $t $mode run $i: status $rc (expected $want)"
                cp "$out/last.out" "$out/fail-$t-$mode-$i.out"
                cp "$out/last.err" "$out/fail-$t-$mode-$i.err"
            fi
        done
        echo "$t $mode: $pass of $runs runs passed"
        [ "$pass" = "$runs" ] || status=1
    done
done
exit $status
