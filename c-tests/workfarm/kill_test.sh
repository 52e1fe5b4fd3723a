#!/usr/bin/env bash
# Kill a work-farm worker with SIGKILL mid-run and check that the farm still gets the exact
# result, with the lost items reassigned. Needs an MPI that keeps the survivors running after a
# death and reports MPIX_ERR_PROC_FAILED to MPI_ERRORS_RETURN (ULFM). CI runs the same two kills
# as the c-tests workfarm_kill_leaf/workfarm_kill_relay (oxmpi, processes mode); this script is
# for other rank counts, other MPIs (--mpich) and repeated runs by hand.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

usage() {
    cat <<'EOF'
Usage: c-tests/workfarm/kill_test.sh --prefix PREFIX [-n N] [--timeout S]
       c-tests/workfarm/kill_test.sh --mpich [-n N] [--timeout S]

Builds demo_integrate and runs it (processes mode) with N ranks (default 5) on a binary tree
(--fanout 2), twice: once a leaf (rank N-1) and once an inner relay (rank 1) kills itself with
SIGKILL after computing a few items (demo option --die-rank R --die-after K). Each run passes
when rank 0 prints the exact result and "reassigned: M" with M > 0; the launcher's exit status
is shown but not judged (it may report the death).

  --prefix PREFIX   oxmpi install (PREFIX/bin/mpicc, PREFIX/bin/mpiexec --mode processes)
  --mpich           system MPICH: mpicc.mpich, mpiexec.mpich -disable-auto-cleanup
  -n N              ranks (>= 3; default 5)
  --timeout S       per run (default 60)
EOF
}

PREFIX="" MPICH=0 N=5 TMO=60
while [[ $# -gt 0 ]]; do
    case "$1" in
        --prefix) PREFIX="${2:?--prefix needs a value}"; shift 2 ;;
        --mpich) MPICH=1; shift ;;
        -n) N="${2:?-n needs a value}"; shift 2 ;;
        --timeout) TMO="${2:?--timeout needs a value}"; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "kill_test.sh: unknown argument: $1 (see --help)" >&2; exit 2 ;;
    esac
done
[[ "$N" =~ ^[0-9]+$ && $N -ge 3 ]] || { echo "kill_test.sh: -n needs an integer >= 3" >&2; exit 2; }
if [[ $MPICH -eq 1 ]]; then
    MPICC=mpicc.mpich
    LAUNCH=(mpiexec.mpich -disable-auto-cleanup -n "$N")
elif [[ -n "$PREFIX" ]]; then
    MPICC="$PREFIX/bin/mpicc"
    LAUNCH=("$PREFIX/bin/mpiexec" --mode processes --timeout "$TMO" -n "$N")
else
    echo "kill_test.sh: --prefix PREFIX or --mpich is required (see --help)" >&2; exit 2
fi

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
"$MPICC" -std=c99 -Wall -O2 -o "$WORK/demo" "$HERE/demo_integrate.c" "$HERE/workfarm.c" -pthread

fails=0
for victim in $((N - 1)) 1; do
    rc=0
    timeout -k 5 "$TMO" "${LAUNCH[@]}" "$WORK/demo" --fanout 2 --items 400 --sleep-us 2000 \
        --die-rank "$victim" --die-after 3 >"$WORK/out" 2>"$WORK/err" || rc=$?
    if grep -q '^result: \([0-9]*\) expected: \1 ' "$WORK/out" && ! grep -q 'TEST FAILED' "$WORK/out" "$WORK/err" &&
        grep -Eq '^reassigned: [1-9]' "$WORK/out"; then
        echo "PASS kill rank $victim of $N: $(grep '^reassigned' "$WORK/out") (launcher exit $rc)"
    else
        echo "FAIL kill rank $victim of $N (launcher exit $rc)"
        sed 's/^/  out| /' "$WORK/out" | tail -n 12
        sed 's/^/  err| /' "$WORK/err" | tail -n 12
        fails=$((fails + 1))
    fi
done
exit $((fails > 0))
