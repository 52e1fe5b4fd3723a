#!/usr/bin/env bash
# oxmpi programs started by other launchers (issue 19): see --help.
set -euo pipefail

OXMPI_ROOT="$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/.." && pwd)"
# shellcheck source=scripts/common.sh source-path=SCRIPTDIR/..
. "$OXMPI_ROOT/scripts/common.sh"

usage() {
    cat <<'USAGE'
Usage: scripts/foreign-launch.sh --prefix PREFIX [--timeout S]

oxmpi programs started by launchers other than oxmpi's mpiexec:
  * MPICH's mpiexec.mpich (hydra; PMI-1 over PMI_FD, and over PMI_PORT with -pmi-port; PMI-2
    over PMI_FD with OXMPI_PMI=2) and Open MPI's mpirun.openmpi (PMIx, through libpmix; with
    --oversubscribe --bind-to none, and as root OMPI_ALLOW_RUN_AS_ROOT) at 2 and 4 ranks: a
    world check (one job of the right size, not singletons) built with oxmpi's mpicc and with mpicc.mpich
    (libmpich.so.12 resolved to oxmpi through LD_LIBRARY_PATH), then a chosen set of c-tests
    (p2p, collectives, RMA, communicators, an error test, MPI_Abort's exit code, a rank leaving
    early after MPI_Finalize) through c-tests/run.sh --launcher, under each launcher;
  * a rank SIGKILLed mid-job, under each launcher: the job ends with the launcher's status for
    signal 9, nothing left in /dev/shm (checked in a private /dev/shm when unshare can make one);
  * Slurm's srun --mpi=pmi2 and --mpi=pmix (a one-machine Slurm started by
    scripts/slurm-local.sh, when running as root with Debian's slurmd, slurmctld, slurm-client
    and munge): the world checks at 2 and 4 ranks, a killed rank (srun -K), MPI_Abort's code
    under pmix, and the refusal under --mpi=none;
  * ranks placed on two hosts by hydra (its fork launcher: two nodes on this machine) form one
    job over two nodes (UCX between them);
  * OXMPI_MODE=threads under hydra and under mpirun, a PMIx launcher
    whose library cannot be loaded, Open MPI's launcher without PMIx and a Slurm step without
    PMI: MPI_Init fails with one line naming the launcher, never N singletons; without any
    launcher a singleton still runs.
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
command -v mpiexec.mpich >/dev/null || die "mpiexec.mpich not found (Debian package mpich)"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/oxmpi-foreign.XXXXXX")"
trap '[ -e "$WORK/slurm/slurm.conf" ] && "$OXMPI_ROOT/scripts/slurm-local.sh" stop "$WORK/slurm"; rm -rf -- "$WORK"' EXIT
LIBS="$PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fails=0

say() { echo "$*"; }
pass() { say "PASS $*"; }
fail() { say "FAIL $*"; fails=$((fails + 1)); }

# hydra ARGS...: mpiexec.mpich with our library, bounded in time; output in $WORK/out, $WORK/err.
hydra() {
    local rc=0
    LD_LIBRARY_PATH="$LIBS" timeout -k 5 "$TMO" mpiexec.mpich "$@" >"$WORK/out" 2>"$WORK/err" </dev/null || rc=$?
    return "$rc"
}

# ompi ARGS...: Open MPI's mpirun with our library, as hydra() does. Not bound to cores, as in
# c-tests/run.sh: on a loaded machine a pinned rank waits for its busy core.
OMPI_ARGS=(--oversubscribe --bind-to none)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ompi() {
    local rc=0
    LD_LIBRARY_PATH="$LIBS" timeout -k 5 "$TMO" mpirun.openmpi "${OMPI_ARGS[@]}" "$@" >"$WORK/out" 2>"$WORK/err" </dev/null || rc=$?
    return "$rc"
}
HAVE_OMPI=0
command -v mpirun.openmpi >/dev/null && HAVE_OMPI=1
[ "$HAVE_OMPI" = 1 ] || say "SKIP Open MPI's mpirun (mpirun.openmpi not installed: Debian package openmpi-bin)"

show_err() { sed 's/^/  | /' "$WORK/err" | tail -n 8; }

# ------------------------------------------------------------------ world checks
"$PREFIX/bin/mpicc" -O2 -o "$WORK/world" "$OXMPI_ROOT/scripts/foreign-world.c"
mpicc.mpich -O2 -o "$WORK/world-mpich" "$OXMPI_ROOT/scripts/foreign-world.c"
for bin in world world-mpich; do
    for n in 2 4; do
        for pmi in PMI-1/PMI_FD PMI-1/PMI_PORT PMI-2/PMI_FD; do
            args=(-n "$n")
            [ "$pmi" = PMI-1/PMI_PORT ] && args=(-pmi-port -n "$n")
            if OXMPI_PMI="${pmi:4:1}" hydra "${args[@]}" "$WORK/$bin" "$n" && grep -qx "world ok: $n ranks" "$WORK/out" &&
                [ "$(grep -c '^world ok' "$WORK/out")" = 1 ]; then
                pass "$bin under mpiexec.mpich -n $n ($pmi)"
            else
                fail "$bin under mpiexec.mpich -n $n ($pmi): not one job of $n ranks"
                show_err
            fi
        done
    done
done
if [ "$HAVE_OMPI" = 1 ]; then
    for bin in world world-mpich; do
        for n in 2 4; do
            if ompi -n "$n" "$WORK/$bin" "$n" && grep -qx "world ok: $n ranks" "$WORK/out" &&
                [ "$(grep -c '^world ok' "$WORK/out")" = 1 ]; then
                pass "$bin under mpirun.openmpi -n $n (PMIx)"
            else
                fail "$bin under mpirun.openmpi -n $n (PMIx): not one job of $n ranks"
                show_err
            fi
        done
    done
fi
# The MPICH-built binary really ran on oxmpi (not on MPICH's own library).
LD_LIBRARY_PATH="$LIBS" ldd "$WORK/world-mpich" | grep -q "libmpich.so.12 => $PREFIX/lib/" ||
    fail "world-mpich does not resolve libmpich.so.12 to $PREFIX/lib"

# ------------------------------------------------------------------ c-tests under each launcher
CTESTS='^(p2p_blocking|p2p_nonblocking|coll_allreduce|coll_bcast|coll_alltoall|rma_put_get|rma_accumulate|comm_dup_split|comm_create|err_return|err_fatal_rank|launch_abort|launch_early_exit)$'
launchers=(mpiexec.mpich)
[ "$HAVE_OMPI" = 1 ] && launchers+=(mpirun.openmpi)
for l in "${launchers[@]}"; do
    if OXMPI_TEST_RANKS="2 4" bash "$OXMPI_ROOT/c-tests/run.sh" --prefix "$PREFIX" --launcher "$l" --timeout "$TMO" --filter "$CTESTS"; then
        pass "c-tests under $l"
    else
        fail "c-tests under $l"
    fi
done

# ------------------------------------------------------------------ a rank killed mid-job
# In a private /dev/shm if we can make one, so that other jobs on the machine do not disturb
# the check; else the names before and after are compared.
# killed_job LAUNCHER ARGS...: a 3-rank world whose last rank kills itself; prints the status,
# then what /dev/shm holds.
killed_job() {
    local rc=0
    LD_LIBRARY_PATH="$LIBS" timeout -k 5 "$TMO" "$@" -n 3 "$WORK/world" 3 die \
        >"$WORK/out" 2>"$WORK/err" </dev/null || rc=$?
    echo "rc=$rc"
    ls -A /dev/shm
}
export -f killed_job
export LIBS TMO WORK
# check_killed STATUS LAUNCHER ARGS...: the job must end with STATUS (the launcher's report of
# a rank killed by signal 9), the survivors must not have failed by themselves (a world check
# of singletons fails with 3), nothing may be left in /dev/shm.
check_killed() {
    local want="$1" report leftover before rc
    shift
    if unshare -m sh -c 'mount -t tmpfs oxmpi-shm /dev/shm' 2>/dev/null; then
        report="$(unshare -m bash -c 'mount -t tmpfs oxmpi-shm /dev/shm && killed_job "$@"' killed_job "$@")"
        leftover="$(sed -n '2,$p' <<<"$report")"
    else
        before="$(ls -A /dev/shm)"
        report="$(killed_job "$@")"
        leftover="$(comm -13 <(echo "$before" | sort) <(sed -n '2,$p' <<<"$report" | sort))"
    fi
    rc="$(sed -n '1s/^rc=//p' <<<"$report")"
    if [ "$rc" = "$want" ] && ! grep -q '^foreign-world:' "$WORK/err" && ! grep -q '^world ok' "$WORK/out" && [ -z "$leftover" ]; then
        pass "a rank SIGKILLed mid-job under $1 ends the job (status $rc), /dev/shm clean"
    else
        fail "a rank SIGKILLed mid-job under $1: status $rc (expected $want; 124: hung), left in /dev/shm: '${leftover}'"
        show_err
    fi
}
# hydra reports a rank killed by signal 9 as status 9, Open MPI's mpirun as 128 + 9.
check_killed 9 mpiexec.mpich
[ "$HAVE_OMPI" = 1 ] && check_killed 137 mpirun.openmpi "${OMPI_ARGS[@]}"

# ------------------------------------------------------------------ refusals, one line each
# expect_refusal WHAT PATTERN CMD...: CMD must fail, print PATTERN, and run no world.
expect_refusal() {
    local what="$1" pattern="$2" rc=0
    shift 2
    timeout -k 5 "$TMO" "$@" >"$WORK/out" 2>"$WORK/err" </dev/null || rc=$?
    if [ "$rc" != 0 ] && [ "$rc" != 124 ] && [ "$rc" != 137 ] && grep -q -- "$pattern" "$WORK/err" &&
        ! grep -q '^world ok' "$WORK/out"; then
        pass "$what: refused ($(grep -m1 -o -- "$pattern" "$WORK/err"))"
    else
        fail "$what: status $rc, expected a refusal naming '$pattern'"
        show_err
    fi
}
expect_refusal "OXMPI_MODE=threads under mpiexec.mpich" "threads mode needs oxmpi's mpiexec" \
    env OXMPI_MODE=threads LD_LIBRARY_PATH="$LIBS" mpiexec.mpich -n 2 "$WORK/world" 2
# hydra's fork launcher runs every "host" here, but PMI_process_mapping says two nodes: one job
# over two nodes, the ranks of each node on their segment, UCX between them (as across machines;
# scripts/netns-launch.sh runs them in network namespaces).
for n in 2 4; do
    if hydra -launcher fork -hosts "$(hostname),localhost" -n "$n" "$WORK/world" "$n" && grep -qx "world ok: $n ranks" "$WORK/out" &&
        [ "$(grep -c '^world ok' "$WORK/out")" = 1 ]; then
        pass "ranks placed on two hosts by mpiexec.mpich -n $n: one job over two nodes"
    else
        fail "ranks placed on two hosts by mpiexec.mpich -n $n: not one job of $n ranks"
        show_err
    fi
done
if [ "$HAVE_OMPI" = 1 ]; then
    expect_refusal "OXMPI_MODE=threads under mpirun.openmpi" "threads mode needs oxmpi's mpiexec" \
        env OXMPI_MODE=threads LD_LIBRARY_PATH="$LIBS" mpirun.openmpi "${OMPI_ARGS[@]}" -n 2 "$WORK/world" 2
    expect_refusal "mpirun.openmpi without the PMIx library" "apt-get install libpmix2" \
        env OXMPI_PMIX_LIBRARY=libpmix-absent.so.2 LD_LIBRARY_PATH="$LIBS" mpirun.openmpi "${OMPI_ARGS[@]}" -n 2 "$WORK/world" 2
fi
expect_refusal "Open MPI's launcher without PMIx" "without a PMIx server" \
    env OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=0 LD_LIBRARY_PATH="$LIBS" "$WORK/world" 1
expect_refusal "a Slurm step of 2 tasks without PMI" "srun --mpi=pmi2" \
    env SLURM_STEP_ID=0 SLURM_PROCID=0 SLURM_STEP_NUM_TASKS=2 "$WORK/world" 1
if timeout -k 5 "$TMO" "$WORK/world" 1 >"$WORK/out" 2>"$WORK/err" && grep -qx 'world ok: 1 ranks' "$WORK/out"; then
    pass "no launcher: a singleton"
else
    fail "no launcher: the singleton did not run"
    show_err
fi

# ------------------------------------------------------------------ Slurm's srun
# A one-machine Slurm (scripts/slurm-local.sh), when this runs as root with Debian's Slurm.
# slurm ARGS...: srun with our library, bounded in time; output in $WORK/out, $WORK/err.
slurm() {
    local rc=0
    SLURM_CONF="$WORK/slurm/slurm.conf" LD_LIBRARY_PATH="$LIBS" timeout -k 5 "$TMO" srun "$@" >"$WORK/out" 2>"$WORK/err" </dev/null || rc=$?
    return "$rc"
}
if [ "$(id -u)" != 0 ]; then
    say "SKIP Slurm's srun (slurmd must run as root to start tasks; this runs as $(id -un))"
elif ! command -v slurmd >/dev/null || ! command -v slurmctld >/dev/null || ! command -v srun >/dev/null || ! command -v munged >/dev/null; then
    say "SKIP Slurm's srun (Debian packages slurmd, slurmctld, slurm-client and munge are not installed)"
elif SLURM_T0=$SECONDS && ! timeout -k 5 60 "$OXMPI_ROOT/scripts/slurm-local.sh" start "$WORK/slurm" >"$WORK/out" 2>"$WORK/err"; then
    fail "a one-machine Slurm did not start (scripts/slurm-local.sh start)"
    show_err
else
    for mpi in pmi2 pmix; do
        # srun --mpi=pmi2 answers PMI-1 (oxmpi's default) and PMI-2 (OXMPI_PMI=2) on PMI_FD.
        wires=(-)
        [ "$mpi" = pmi2 ] && wires=(1 2)
        for bin in world world-mpich; do
            for n in 2 4; do
                for w in "${wires[@]}"; do
                    what="$bin under srun --mpi=$mpi -n $n${w/-/}"
                    [ "$w" != - ] && what="$bin under srun --mpi=$mpi -n $n (OXMPI_PMI=$w)"
                    if OXMPI_PMI="${w/-/}" slurm --mpi="$mpi" -n "$n" "$WORK/$bin" "$n" && grep -qx "world ok: $n ranks" "$WORK/out" &&
                        [ "$(grep -c '^world ok' "$WORK/out")" = 1 ]; then
                        pass "$what"
                    else
                        fail "$what: not one job of $n ranks"
                        show_err
                    fi
                done
            done
        done
        # A killed rank: Slurm ends the step (with --mpi=pmi2 only when told to: -K).
        rc=0
        slurm --kill-on-bad-exit=1 --mpi="$mpi" -n 3 "$WORK/world" 3 die || rc=$?
        if [ "$rc" != 0 ] && [ "$rc" != 124 ] && ! grep -q '^foreign-world:' "$WORK/err" && ! grep -q '^world ok' "$WORK/out"; then
            pass "a rank SIGKILLed mid-job under srun -K --mpi=$mpi ends the step (status $rc)"
        else
            fail "a rank SIGKILLed mid-job under srun -K --mpi=$mpi: status $rc (124: hung)"
            show_err
        fi
    done
    rc=0
    "$PREFIX/bin/mpicc" -O2 -I"$OXMPI_ROOT/c-tests" -o "$WORK/abort" "$OXMPI_ROOT/c-tests/launch_abort.c"
    slurm --mpi=pmix -n 2 "$WORK/abort" || rc=$?
    if [ "$rc" = 7 ]; then
        pass "MPI_Abort(MPI_COMM_WORLD, 7) under srun --mpi=pmix: status 7"
    else
        fail "MPI_Abort(MPI_COMM_WORLD, 7) under srun --mpi=pmix: status $rc"
        show_err
    fi
    expect_refusal "srun --mpi=none -n 2" "srun --mpi=pmi2 or --mpi=pmix" \
        env SLURM_CONF="$WORK/slurm/slurm.conf" LD_LIBRARY_PATH="$LIBS" srun --mpi=none -n 2 "$WORK/world" 2
    "$OXMPI_ROOT/scripts/slurm-local.sh" stop "$WORK/slurm"
    say "Slurm: set-up, checks and shutdown took $((SECONDS - SLURM_T0)) s"
fi

[ "$fails" = 0 ] || die "$fails foreign-launcher check(s) failed"
echo "foreign launchers: all checks passed"
