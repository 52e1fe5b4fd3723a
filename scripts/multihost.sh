#!/usr/bin/env bash
# oxmpi's mpiexec on several hosts (issue 19), on one machine: see --help.
set -euo pipefail

OXMPI_ROOT="$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/.." && pwd)"
# shellcheck source=scripts/common.sh source-path=SCRIPTDIR/..
. "$OXMPI_ROOT/scripts/common.sh"

usage() {
    cat <<'USAGE'
Usage: scripts/multihost.sh --prefix PREFIX [--modes "processes threads"] [--launcher CMD]
                            [--hosts2 A,B] [--hosts3 A,B,C] [--timeout S]

Jobs of oxmpi's mpiexec -hosts, each host's node agent started by a launcher (default
scripts/fake-host.sh, which runs it here as a separate process tree that shares nothing with the
head mpiexec but its TCP connection), with UCX_TLS=tcp unless UCX_TLS is set (and with fake
hosts UCX_NET_DEVICES=lo unless set), in every mode:
  * one world over 2 hosts (-n 4) and 3 hosts (-n 5): ranks placed in blocks on the hosts in
    order, -genv and -wdir reaching every rank, stdout of every host;
  * the last rank SIGKILLed mid-job: exit status 137, one line naming the rank and its host,
    nothing left running (no rank, no agent) and nothing new in /dev/shm;
  * the head mpiexec SIGKILLed, and sent SIGINT: nothing left running (status 130 for SIGINT);
  * bad input, each one line and a nonzero status, bounded in time: a missing host file, a host
    with 0 slots, a launcher that fails (as ssh to an unreachable host), an agent that never
    connects back (OXMPI_CONNECT_TIMEOUT=2), --bind-to core with more ranks than cores on a host,
    a program missing on the hosts.
With --launcher (e.g. "scripts/netns.sh exec") and real host names the same checks run across
machines or namespaces; fake-host.sh's host names are then not checked.
Options:
  --prefix PREFIX   oxmpi install prefix (PREFIX/bin/mpicc, PREFIX/bin/mpiexec)
  --modes "M..."    rank modes (default "processes threads")
  --launcher CMD    mpiexec --launcher (default scripts/fake-host.sh)
  --hosts2 LIST     the 2-host list (default a,b); --hosts3: the 3-host one (default a,b,c)
  --timeout S       per-run timeout in seconds (default 60)
USAGE
}

PREFIX=""
MODES="processes threads"
LAUNCHER="$OXMPI_ROOT/scripts/fake-host.sh"
HOSTS2="a,b"
HOSTS3="a,b,c"
TMO=60
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) PREFIX="${2:?--prefix needs a value}"; shift 2 ;;
        --modes) MODES="${2:?--modes needs a value}"; shift 2 ;;
        --launcher) LAUNCHER="${2:?--launcher needs a value}"; shift 2 ;;
        --hosts2) HOSTS2="${2:?--hosts2 needs a value}"; shift 2 ;;
        --hosts3) HOSTS3="${2:?--hosts3 needs a value}"; shift 2 ;;
        --timeout) TMO="${2:?--timeout needs a value}"; shift 2 ;;
        -h | --help) usage; exit 0 ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
done
[ -n "$PREFIX" ] || { usage >&2; die "--prefix is required"; }
PREFIX="$(cd "$PREFIX" && pwd)"
FAKE=0
[ "$LAUNCHER" = "$OXMPI_ROOT/scripts/fake-host.sh" ] && FAKE=1
export UCX_TLS="${UCX_TLS:-tcp}"
# Fake hosts are this machine: UCX over loopback only (another interface, e.g. a bridge being
# set up or torn down, could break the connections).
[ "$FAKE" = 1 ] && export UCX_NET_DEVICES="${UCX_NET_DEVICES:-lo}"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/mhost.XXXXXX")"
trap 'rm -rf -- "$WORK"' EXIT
"$PREFIX/bin/mpicc" -O2 -o "$WORK/world" "$OXMPI_ROOT/scripts/multihost-world.c"
MPIEXEC="$PREFIX/bin/mpiexec"
fails=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
show_err() { grep -v 'UCX  WARN' "$WORK/err" | sed 's/^/  | /' | tail -n 8 || true; }

# job ARGS...: mpiexec ARGS with a hard time limit; output in $WORK/out and $WORK/err.
job() {
    local rc=0
    timeout -k 5 "$TMO" "$MPIEXEC" "$@" >"$WORK/out" 2>"$WORK/err" </dev/null || rc=$?
    return "$rc"
}

# gone_within S: waits up to S seconds for no leftovers; prints the ones left.
gone_within() {
    local i left=""
    for ((i = 0; i < $1 * 10; i++)); do
        left="$(pgrep -f "$WORK/world" | tr '\n' ' ' || true)"
        [ -z "$left" ] && return 0
        sleep 0.1
    done
    echo "$left"
    return 1
}
shm_list() { ls -1 /dev/shm 2>/dev/null | sort; }

# check_world LIST N: the output of a world of N ranks over the hosts of LIST, in blocks.
check_world() {
    local list="$1" n="$2" h r k=0 nh bad=""
    IFS=',' read -r -a hs <<<"$list"
    nh="${#hs[@]}"
    for ((r = 0; r < n; r++)); do
        # Block placement: the first n % nh hosts get one rank more.
        local per=$((n / nh)) extra=$((n % nh)) first=0
        for ((k = 0; k < nh; k++)); do
            local cnt=$((per + (k < extra ? 1 : 0)))
            if ((r < first + cnt)); then break; fi
            first=$((first + cnt))
        done
        h="${hs[$k]}"
        [ "$FAKE" = 1 ] || h="[^ ]*"
        grep -qE "^rank $r of $n host $h var v- multi cwd $WORK\$" "$WORK/out" || bad+=" rank $r"
    done
    [ -z "$bad" ]
}

for mode in $MODES; do
    for spec in "$HOSTS2:4" "$HOSTS3:5"; do
        list="${spec%:*}"
        n="${spec##*:}"
        nh="$(tr ',' '\n' <<<"$list" | grep -c .)"
        rc=0
        job --mode "$mode" -hosts "$list" --launcher "$LAUNCHER" -n "$n" -genv MULTIHOST_VAR "v- multi" -wdir "$WORK" "$WORK/world" "$n" || rc=$?
        if [ "$rc" = 0 ] && check_world "$list" "$n"; then
            pass "$mode: one world of $n ranks on $nh hosts, -genv and -wdir on every rank"
        else
            fail "$mode: world of $n ranks on $nh hosts (status $rc)"
            sed 's/^/  > /' "$WORK/out"
            show_err
        fi
    done

    # The last rank dies by SIGKILL while the others wait for it.
    before="$(shm_list)"
    rc=0
    job --mode "$mode" -hosts "$HOSTS3" --launcher "$LAUNCHER" -n 5 "$WORK/world" 5 die || rc=$?
    last="${HOSTS3##*,}"
    left="$(gone_within 5 || true)"
    new_shm="$(comm -13 <(echo "$before") <(shm_list) | tr '\n' ' ')"
    if [ "$rc" = 137 ] && grep -qE "^oxmpi: .*rank.* on $last \(pid [0-9]+\) killed by signal 9" "$WORK/err" && [ -z "$left" ] && [ -z "${new_shm// /}" ]; then
        pass "$mode: a rank SIGKILLed on host $last ends the job (137), named with its host, nothing left"
    else
        fail "$mode: a rank SIGKILLed on $last (status $rc, left running: '$left', new in /dev/shm: '$new_shm')"
        show_err
    fi

    # The head dies (SIGKILL) or is interrupted (SIGINT) mid-job.
    for sig in KILL INT; do
        rc=0
        # A fresh file: the previous run's lines must not make us signal the job before it runs
        # (a signal before mpiexec's exec would hit a copy of this script).
        rm -f "$WORK/sleep.out"
        "$MPIEXEC" --mode "$mode" -hosts "$HOSTS2" --launcher "$LAUNCHER" -n 4 "$WORK/world" 4 sleep >"$WORK/sleep.out" 2>"$WORK/err" </dev/null &
        head=$!
        for ((i = 0; i < 100; i++)); do
            [ "$(grep -c '^rank' "$WORK/sleep.out" 2>/dev/null)" = 4 ] && break
            sleep 0.1
        done
        kill -s "$sig" "$head"
        { wait "$head"; } 2>/dev/null || rc=$?
        left="$(gone_within 5 || true)"
        want=$([ "$sig" = KILL ] && echo 137 || echo 130)
        if [ "$rc" = "$want" ] && [ -z "$left" ]; then
            pass "$mode: head mpiexec SIG$sig mid-job (status $rc): nothing left running"
        else
            fail "$mode: head mpiexec SIG$sig (status $rc, expected $want; left running: '$left')"
            show_err
            # shellcheck disable=SC2086
            [ -n "$left" ] && kill -9 $left 2>/dev/null
        fi
    done
done

# bad NAME STATUS PATTERN ARGS...: mpiexec ARGS fails with STATUS and one "oxmpi:" line matching PATTERN.
bad() {
    local name="$1" want="$2" pat="$3" rc=0 lines
    shift 3
    job "$@" || rc=$?
    lines="$(grep -c '^oxmpi:' "$WORK/err" || true)"
    if [ "$rc" = "$want" ] && [ "$lines" = 1 ] && grep -qE "$pat" "$WORK/err"; then
        pass "bad input: $name: one line, status $rc"
    else
        fail "bad input: $name (status $rc, expected $want; $lines oxmpi: lines)"
        show_err
    fi
}
bad "missing host file" 2 "cannot read host file $WORK/none" -f "$WORK/none" -n 2 "$WORK/world" 2
printf 'a slots=2\nb slots=0\n' >"$WORK/hostfile"
bad "host file with a 0-slot host" 2 "hostfile:2: host b has 0 slots" -f "$WORK/hostfile" "$WORK/world" 2
bad "-hosts with a 0-slot host" 2 "host b has 0 slots" -hosts a,b:0 -n 2 "$WORK/world" 2
if [ "$FAKE" = 1 ]; then
    FAKE_HOST_FAIL=b bad "launcher fails for host b" 1 "could not start the node agent on host b .*exit status 255" \
        -hosts a,b --launcher "$LAUNCHER" -n 2 "$WORK/world" 2
fi
printf '#!/bin/sh\nexec sleep 30\n' >"$WORK/blackhole"
chmod +x "$WORK/blackhole"
t0=$SECONDS
OXMPI_CONNECT_TIMEOUT=2 bad "agent never connects back" 1 "did not connect back to .* within 2 s" \
    -hosts a,b --launcher "$WORK/blackhole" -n 2 "$WORK/world" 2
[ $((SECONDS - t0)) -le 10 ] || fail "bad input: agent never connects back took $((SECONDS - t0)) s"
pgrep -f "$WORK/blackhole" >/dev/null && fail "bad input: the launcher that never connected is still running"
# --bind-to core with more ranks on a host than it has cores: refused before any rank runs.
cores="$(nproc)"
bad "--bind-to core with more ranks than cores on a host" 2 "host [^ ]+: --bind-to core: $((cores + 1)) ranks on [^ ]+ but mpiexec may use only [0-9]+ cores? there" \
    -hosts "$HOSTS2" --launcher "$LAUNCHER" --bind-to core -n $((2 * cores + 2)) "$WORK/world" $((2 * cores + 2))
bad "program missing on the hosts" 127 "host .*: cannot run '$WORK/nowhere'" \
    -hosts "$HOSTS2" --launcher "$LAUNCHER" -n 2 "$WORK/nowhere"
rc=0
OXMPI_CONNECT_TIMEOUT=1 "$MPIEXEC" --node-agent 127.0.0.1:1 0 x >"$WORK/out" 2>"$WORK/err" || rc=$?
if [ "$rc" = 1 ] && grep -q "cannot reach mpiexec at 127.0.0.1:1" "$WORK/err"; then
    pass "bad input: an agent that cannot reach the head says so and exits 1"
else
    fail "bad input: agent with an unreachable head (status $rc)"
    show_err
fi

[ "$fails" = 0 ] || { echo "multihost: $fails check(s) failed"; exit 1; }
echo "multihost: all checks passed"
