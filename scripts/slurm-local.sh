#!/usr/bin/env bash
# A one-machine Slurm for tests (issue 19): see --help.
set -euo pipefail

usage() {
    cat <<'USAGE'
Usage: scripts/slurm-local.sh start DIR
       scripts/slurm-local.sh stop DIR

start: runs munged, slurmctld and slurmd on this machine, everything (configuration, keys,
  sockets, state, logs, pid files) in DIR, on free ports, with one node (this host, 8 CPUs
  whatever it has, so that 4-task steps fit) in partition "oxmpi". Waits (at most 30 s) until the
  node takes jobs, then prints the SLURM_CONF=... line to use with srun. Needs root (slurmd
  starts the tasks) and Debian's slurmd, slurmctld, slurm-client and munge; the system's own
  munge and Slurm services, if any, are not touched. On failure it prints the reason and the
  daemons' log tails, stops what it started and exits 1.
stop: stops the daemons that start left running in DIR (by their pid files).
USAGE
}

die() { echo "slurm-local: $*" >&2; exit 1; }

case "${1:-}" in -h | --help) usage; exit 0 ;; esac
[ $# = 2 ] || { usage >&2; exit 2; }
CMD="$1"
DIR="$2"

stop() {
    local f pid
    for f in slurmd slurmctld munged; do
        [ -s "$DIR/$f.pid" ] || continue
        pid="$(cat "$DIR/$f.pid")"
        kill "$pid" 2>/dev/null || continue
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
        rm -f "$DIR/$f.pid"
    done
}

# A TCP port nobody listens on (tried from a random start).
free_port() {
    local p
    for _ in $(seq 50); do
        p=$((20000 + RANDOM % 30000))
        if ! grep -qi ":$(printf '%04X' "$p") " /proc/net/tcp /proc/net/tcp6 2>/dev/null; then
            echo "$p"
            return
        fi
    done
    die "no free TCP port found"
}

start() {
    [ "$(id -u)" = 0 ] || die "needs root (slurmd starts the tasks as their user)"
    local b
    for b in munged munge slurmctld slurmd srun sinfo; do
        command -v "$b" >/dev/null || die "$b not found (Debian packages munge, slurmctld, slurmd, slurm-client)"
    done
    mkdir -p "$DIR/munge" "$DIR/state" "$DIR/spool"
    DIR="$(cd "$DIR" && pwd)"
    # munged wants its key private and the socket's directory reachable.
    chmod 700 "$DIR/munge"
    dd if=/dev/urandom of="$DIR/munge/key" bs=128 count=1 2>/dev/null
    chmod 600 "$DIR/munge/key"
    chmod 711 "$DIR/munge"
    munged --force --socket="$DIR/munge/sock" --key-file="$DIR/munge/key" --log-file="$DIR/munged.log" \
        --pid-file="$DIR/munged.pid" --seed-file="$DIR/munge/seed" ||
        fail "munged did not start"
    munge -S "$DIR/munge/sock" -n </dev/null | unmunge -S "$DIR/munge/sock" >/dev/null ||
        fail "munge credentials do not round-trip through $DIR/munge/sock"

    local host cport dport
    host="$(hostname -s)"
    cport="$(free_port)"
    dport="$(free_port)"
    [ "$cport" != "$dport" ] || dport=$((cport + 1))
    cat >"$DIR/slurm.conf" <<EOF
# One-machine Slurm written by scripts/slurm-local.sh.
ClusterName=oxmpi
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$DIR/munge/sock
SlurmctldPort=$cport
SlurmdPort=$dport
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd.log
# No cgroups: process tracking by the process tree, no task binding.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
# The node says 8 CPUs whatever the machine has (config_overrides), so 4-task steps fit.
SlurmdParameters=config_overrides
ReturnToService=2
InactiveLimit=0
KillWait=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=8 State=UNKNOWN
PartitionName=oxmpi Nodes=$host Default=YES MaxTime=10 State=UP OverSubscribe=FORCE
EOF
    export SLURM_CONF="$DIR/slurm.conf"
    slurmctld -c -f "$SLURM_CONF" || fail "slurmctld did not start"
    slurmd -f "$SLURM_CONF" || fail "slurmd did not start"
    local state=""
    for _ in $(seq 60); do
        state="$(sinfo -h -n "$host" -o '%t' 2>/dev/null || true)"
        [ "$state" = idle ] && { echo "SLURM_CONF=$SLURM_CONF"; return 0; }
        sleep 0.5
    done
    fail "the node did not become idle within 30 s (state '${state:-none}')"
}

fail() {
    echo "slurm-local: $*" >&2
    local f
    for f in munged slurmctld slurmd; do
        [ -s "$DIR/$f.log" ] && { echo "--- $DIR/$f.log (tail)" >&2; tail -n 5 "$DIR/$f.log" >&2; }
    done
    stop
    exit 1
}

case "$CMD" in
    start) start ;;
    stop) stop ;;
    -h | --help) usage ;;
    *) usage >&2; exit 2 ;;
esac
