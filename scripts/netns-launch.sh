#!/usr/bin/env bash
# oxmpi jobs across network namespaces, started by foreign launchers (issue 19): see --help.
set -euo pipefail

OXMPI_ROOT="$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/.." && pwd)"
# shellcheck source=scripts/common.sh source-path=SCRIPTDIR/..
. "$OXMPI_ROOT/scripts/common.sh"

usage() {
    cat <<'USAGE'
Usage: scripts/netns-launch.sh --prefix PREFIX [--timeout S]

oxmpi jobs whose "nodes" are network namespaces of this machine (scripts/netns.sh: oxt1..oxt3,
10.77.1.1..3, joined by a bridge; each node its own address), ranks on different nodes joined by
UCX over TCP (UCX_TLS=tcp, UCX_NET_DEVICES=oxteth0), ranks of one node by shared memory:
  * MPICH's hydra: mpiexec.mpich -launcher ssh -launcher-exec <netns wrapper> -iface oxt-br
    -hosts oxt1,oxt2 (ranks placed round robin: ranks 0 and 2 share a node at 4 ranks);
  * Open MPI's mpirun --mca plm_rsh_agent <netns wrapper> --host oxt1:2,oxt2:2 --map-by node
    (if mpirun.openmpi is installed);
  * hydra over 3 namespaces (-hosts oxt1,oxt2,oxt3), fewer tests.
Under each: a world check (one job of the right size) at 2 and 4 ranks, a chosen set of c-tests
(p2p, collectives, RMA, communicators, MPI_COMM_TYPE_SHARED = the launcher's node, error and
abort tests) through c-tests/run.sh --launcher at 2 and 4 ranks, and a rank SIGKILLed mid-job:
the job ends with the launcher's status, nothing is left in /dev/shm (a private one, seen by every
namespace) nor as a process in any namespace.

Also oxmpi's own mpiexec --mode processes and --mode threads -hosts oxt1,oxt2 --launcher <netns
wrapper> --iface oxt-br (agents on the nodes, the head in this namespace), the same checks.
Needs root (network namespaces); run as another user it prints SKIP and exits 0. A namespace
that cannot be made is a failure.
Options:
  --prefix PREFIX   oxmpi install prefix (PREFIX/bin/mpicc, PREFIX/lib)
  --timeout S       per-run timeout in seconds (default 60)
USAGE
}

PREFIX=""
TMO=60
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) PREFIX="${2:?--prefix needs a value}"; shift 2 ;;
        --timeout) TMO="${2:?--timeout needs a value}"; shift 2 ;;
        -h | --help) usage; exit 0 ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
done
[ -n "$PREFIX" ] || { usage >&2; die "--prefix is required"; }
PREFIX="$(cd "$PREFIX" && pwd)"
if [ "$(id -u)" != 0 ]; then
    echo "SKIP: network namespaces need root (CAP_NET_ADMIN, CAP_SYS_ADMIN); this runs as $(id -un)"
    exit 0
fi
command -v mpiexec.mpich >/dev/null || die "mpiexec.mpich not found (Debian package mpich)"

NAME=oxt
SUBNET=10.77.1
NETNS=("$OXMPI_ROOT/scripts/netns.sh" --name "$NAME" --subnet "$SUBNET")
SSH="/run/oxmpi-netns-$NAME/ssh"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/oxmpi-netns.XXXXXX")"
trap '"${NETNS[@]}" down; rm -rf -- "$WORK"' EXIT
# A namespace left by an interrupted run goes first; then failing to make one fails the run.
"${NETNS[@]}" down
"${NETNS[@]}" up 3 || die "cannot make network namespaces (scripts/netns.sh up 3): see above"
# What the ranks need to find each other over the namespaces' veth interfaces; the launchers
# pass the environment on (through the wrapper, which keeps it).
export UCX_TLS=tcp UCX_NET_DEVICES="${NAME}eth0"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
LIBS="$PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fails=0

pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
show_err() { sed 's/^/  | /' "$WORK/err" | grep -v 'invalid configuration: TCP_NODELAY' | tail -n 8; }

"$PREFIX/bin/mpicc" -O2 -o "$WORK/world" "$OXMPI_ROOT/scripts/foreign-world.c"

# Processes left in a namespace after a job: none may be.
strays() {
    local ns pids
    for ns in "${NAME}1" "${NAME}2" "${NAME}3"; do
        pids="$(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')"
        [ -z "$pids" ] || echo "$ns: $(for p in $pids; do tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-60; echo ";"; done | tr -d '\n')"
    done
}

# killed_job LAUNCHER: a 3-rank world whose last rank kills itself, in a private /dev/shm (the
# namespaces' processes share it: 'ip netns exec' keeps the mount namespace's /dev/shm); prints
# the status, then what /dev/shm holds after the job.
killed_job() {
    local rc=0
    LD_LIBRARY_PATH="$LIBS" timeout -k 5 "$TMO" "$1" -n 3 "$WORK/world" 3 die >"$WORK/out" 2>"$WORK/err" </dev/null || rc=$?
    echo "rc=$rc"
    ls -A /dev/shm
}
export -f killed_job
export LIBS TMO WORK

# launcher_case NAME KILLED-STATUS CMD...: jobs started by CMD -n N PROGRAM (a launcher command
# line whose ranks land on the namespaces' nodes): world checks, the c-tests of $CTESTS at
# $RANKS ranks, a killed rank (the job must end with KILLED-STATUS: a status, several as
# "9|255", or "any" failure status), and no process left in any namespace. To add a launcher, call it with its
# command line, e.g. oxmpi's own: launcher_case oxmpi any "$PREFIX/bin/mpiexec" -hosts oxt1,oxt2 --launcher "$SSH"
CTESTS='^(p2p_blocking|p2p_nonblocking|p2p_sendrecv|p2p_any_source_tag|coll_allreduce|coll_bcast|coll_alltoall|coll_algorithms|comm_dup_split|comm_create|nodes_shared_rma|rma_put_get|rma_accumulate|rma_sync|err_return|err_fatal_rank|launch_abort|launch_early_exit)$'
RANKS="2 4"
launcher_case() {
    local name="$1" killed="$2" n rc left report
    shift 2
    local l="$WORK/launch-$name"
    # run.sh --launcher takes one command: a script holding the command line.
    {
        echo '#!/bin/sh'
        printf 'exec'
        printf ' %q' "$@"
        echo ' "$@"'
    } >"$l"
    chmod +x "$l"
    echo "== $name: $*"
    for n in $RANKS; do
        rc=0
        LD_LIBRARY_PATH="$LIBS" timeout -k 5 "$TMO" "$l" -n "$n" "$WORK/world" "$n" >"$WORK/out" 2>"$WORK/err" </dev/null || rc=$?
        if [ "$rc" = 0 ] && grep -qx "world ok: $n ranks" "$WORK/out" && [ "$(grep -c '^world ok' "$WORK/out")" = 1 ]; then
            pass "$name: one world of $n ranks"
        else
            fail "$name: world of $n ranks: status $rc, not one job of $n ranks"
            show_err
        fi
    done
    if OXMPI_TEST_RANKS="$RANKS" bash "$OXMPI_ROOT/c-tests/run.sh" --prefix "$PREFIX" --launcher "$l" --timeout "$TMO" --filter "$CTESTS"; then
        pass "$name: c-tests"
    else
        fail "$name: c-tests"
    fi
    if unshare -m sh -c 'mount -t tmpfs oxmpi-shm /dev/shm' 2>/dev/null; then
        report="$(unshare -m bash -c 'mount -t tmpfs oxmpi-shm /dev/shm && killed_job "$1"' killed_job "$l")"
        left="$(sed -n '2,$p' <<<"$report")"
    else
        local before
        before="$(ls -A /dev/shm)"
        report="$(killed_job "$l")"
        left="$(comm -13 <(echo "$before" | sort) <(sed -n '2,$p' <<<"$report" | sort))"
    fi
    rc="$(sed -n '1s/^rc=//p' <<<"$report")"
    if { [[ "|$killed|" == *"|$rc|"* ]] || { [ "$killed" = any ] && [ "$rc" != 0 ] && [ "$rc" != 124 ]; }; } &&
        ! grep -q '^foreign-world:' "$WORK/err" && ! grep -q '^world ok' "$WORK/out" && [ -z "$left" ]; then
        pass "$name: a rank SIGKILLed mid-job ends the job (status $rc), /dev/shm clean"
    else
        fail "$name: a rank SIGKILLed mid-job: status $rc (expected $killed; 124: hung), left in /dev/shm: '$left'"
        show_err
    fi
    # The launcher's remote parts may still be on their way out: a bounded wait, then a verdict.
    local i
    for i in $(seq 50); do
        [ -n "$(strays)" ] || break
        sleep 0.1
    done
    left="$(strays)"
    if [ -z "$left" ]; then
        pass "$name: no process left in the namespaces"
    else
        fail "$name: processes left in the namespaces: $left"
        for ns in "${NAME}1" "${NAME}2" "${NAME}3"; do ip netns pids "$ns" | xargs -r kill -9 2>/dev/null || true; done
    fi
}

HYDRA=(mpiexec.mpich -launcher ssh -launcher-exec "$SSH" -iface "$NAME-br")
T0=$SECONDS
# hydra reports a rank killed by signal 9 as status 9 or, when a proxy sees its connection to
# mpiexec close first (across hosts), 255; Open MPI's mpirun as 128 + 9.
launcher_case hydra "9|255" "${HYDRA[@]}" -hosts "${NAME}1,${NAME}2"
if command -v mpirun.openmpi >/dev/null; then
    launcher_case mpirun 137 mpirun.openmpi --mca plm_rsh_agent "$SSH" --mca oob_tcp_if_include "$SUBNET.0/24" \
        --host "${NAME}1:2,${NAME}2:2" --map-by node
else
    echo "SKIP Open MPI's mpirun (mpirun.openmpi not installed: Debian package openmpi-bin)"
fi
# oxmpi's own mpiexec across the namespaces (its -hosts and --launcher; the agents reach the head
# through the bridge; threads mode: one host process per node); a killed rank ends the job with
# 128 + 9.
launcher_case oxmpi-processes 137 "$PREFIX/bin/mpiexec" --mode processes -hosts "${NAME}1,${NAME}2" --launcher "$SSH" --iface "$NAME-br"
launcher_case oxmpi-threads 137 "$PREFIX/bin/mpiexec" --mode threads -hosts "${NAME}1,${NAME}2" --launcher "$SSH" --iface "$NAME-br"
# Three nodes: ranks 0 and 3 share one at 4 ranks.
CTESTS='^(p2p_blocking|coll_allreduce|coll_alltoall|nodes_shared_rma|rma_accumulate)$' RANKS="3 4" \
    launcher_case hydra-3nodes "9|255" "${HYDRA[@]}" -hosts "${NAME}1,${NAME}2,${NAME}3"
echo "netns: launcher cases took $((SECONDS - T0)) s"

[ "$fails" = 0 ] || die "$fails check(s) across network namespaces failed"
echo "network namespaces: all checks passed"
