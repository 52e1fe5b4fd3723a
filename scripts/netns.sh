#!/usr/bin/env bash
# Network namespaces as the "nodes" of a multi-node job on one machine (issue 19): see --help.
set -euo pipefail

usage() {
    cat <<'USAGE'
Usage: scripts/netns.sh [--name P] [--subnet A.B.C] up N
       scripts/netns.sh [--name P] down
       scripts/netns.sh [--name P] exec [SSH-OPTIONS] HOST CMD...
       scripts/netns.sh [--name P] hosts

Makes N network namespaces P1..PN on this machine, each a "node" with its own address, joined
through veth pairs to a bridge P-br in the root namespace (the head: a launcher run there
reaches every node, and the nodes reach it):
  * namespace Pi: loopback up, interface Peth0 with address A.B.C.i/24 (the bridge has A.B.C.254);
  * a hosts file (Pi -> A.B.C.i, and P0 -> A.B.C.254 for the head) in $STATE/hosts, also seen as
    /etc/hosts inside every namespace (through /etc/netns/Pi/hosts, which 'ip netns exec' mounts);
  * a launcher wrapper $STATE/ssh, to give a launcher in place of ssh:
      mpiexec.mpich -launcher ssh -launcher-exec $STATE/ssh -iface P-br -hosts P1,P2 ...
      mpirun --mca plm_rsh_agent $STATE/ssh --host P1,P2 ...
$STATE is /run/oxmpi-netns-P. Needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN).

Verbs:
  up N      make the namespaces (fails if any of them exists: run 'down' first); on a failure
            part-way, removes what it made
  down      remove the namespaces, the bridge, the hosts files and $STATE (no error if absent)
  exec      run CMD in namespace HOST as ssh would run it on a host: the words of CMD joined by
            spaces and run by sh -c; ssh's options before HOST (-x, -o OPT, -p PORT, -l USER,
            -i FILE, ...) are accepted and ignored. HOST is a namespace name (P1), an address of
            the hosts file (A.B.C.1) or the head (P0, A.B.C.254, localhost: no namespace). In a
            namespace, TMPDIR is the node's own $STATE/tmp/Pi
  hosts     print the hosts file

Options:
  --name P         prefix of the names (default oxn; OXMPI_NETNS_NAME)
  --subnet A.B.C   the /24 of the addresses (default 10.77.0; OXMPI_NETNS_SUBNET)
  -h, --help       this help
USAGE
}

die() {
    echo "netns.sh: $*" >&2
    exit 1
}

P="${OXMPI_NETNS_NAME:-oxn}"
NET="${OXMPI_NETNS_SUBNET:-10.77.0}"
while [ $# -gt 0 ]; do
    case "$1" in
        --name) P="${2:?--name needs a value}"; shift 2 ;;
        --subnet) NET="${2:?--subnet needs a value}"; shift 2 ;;
        -h | --help) usage; exit 0 ;;
        *) break ;;
    esac
done
[[ "$P" =~ ^[a-z][a-z0-9]{0,5}$ ]] || die "--name $P: use 1-6 lower-case letters and digits, starting with a letter (interface names are short)"
[[ "$NET" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "--subnet $NET: give the first three numbers of a /24, as 10.77.0"
STATE="/run/oxmpi-netns-$P"
BR="$P-br"
verb="${1:-}"
[ -n "$verb" ] || { usage >&2; exit 2; }
shift

# The namespaces of ours that exist now.
ours() { ip netns list 2>/dev/null | awk '{ print $1 }' | grep -E "^${P}[0-9]+\$" || true; }

down() {
    local ns
    for ns in $(ours); do
        ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
        ip netns del "$ns" 2>/dev/null || true
        rm -rf -- "/etc/netns/$ns"
    done
    # The root sides of the veth pairs went with their peers; the bridge stays until removed.
    ip link del "$BR" 2>/dev/null || true
    rm -rf -- "$STATE"
}

up() {
    local n="$1" i ns
    [[ "$n" =~ ^[1-9][0-9]?$ ]] && [ "$n" -le 200 ] || die "up N: N must be 1..200"
    [ "$(id -u)" = 0 ] || die "up needs root (network namespaces need CAP_NET_ADMIN and CAP_SYS_ADMIN); this runs as $(id -un)"
    command -v ip >/dev/null || die "ip not found (Debian package iproute2)"
    [ -z "$(ours)" ] && ! ip link show "$BR" >/dev/null 2>&1 ||
        die "namespaces or bridge named $P* exist already: run 'scripts/netns.sh --name $P down' first"
    trap 'echo "netns.sh: up $n failed part-way (see above); removing what it made" >&2; down' EXIT
    mkdir -p -- "$STATE"
    ip link add "$BR" type bridge
    ip addr add "$NET.254/24" dev "$BR"
    ip link set "$BR" up
    {
        echo "127.0.0.1 localhost"
        echo "$NET.254 ${P}0"
        for ((i = 1; i <= n; i++)); do echo "$NET.$i $P$i"; done
    } >"$STATE/hosts"
    for ((i = 1; i <= n; i++)); do
        ns="$P$i"
        ip netns add "$ns"
        ip link add "$ns-h" type veth peer name "$ns-n"
        ip link set "$ns-h" master "$BR"
        ip link set "$ns-h" up
        ip link set "$ns-n" netns "$ns"
        ip -n "$ns" link set "$ns-n" name "${P}eth0"
        ip -n "$ns" addr add "$NET.$i/24" dev "${P}eth0"
        ip -n "$ns" link set "${P}eth0" up
        ip -n "$ns" link set lo up
        mkdir -p -- "/etc/netns/$ns"
        cp -- "$STATE/hosts" "/etc/netns/$ns/hosts"
    done
    # The wrapper a launcher runs in place of ssh.
    cat >"$STATE/ssh" <<WRAP
#!/bin/sh
exec "$(readlink -f -- "${BASH_SOURCE[0]}")" --name "$P" --subnet "$NET" exec "\$@"
WRAP
    chmod +x "$STATE/ssh"
    for ((i = 1; i <= n; i++)); do
        ip -n "$P$i" -4 addr show "${P}eth0" | grep -q "inet $NET.$i/" || die "namespace $P$i has no address $NET.$i"
    done
    trap - EXIT
    echo "netns: $n namespaces ${P}1..$P$n ($NET.1..$NET.$n), head $NET.254 on bridge $BR"
    echo "netns: hosts file $STATE/hosts; launcher wrapper $STATE/ssh; in the nodes, UCX_NET_DEVICES=${P}eth0"
}

# exec [SSH-OPTIONS] HOST CMD...
ns_exec() {
    while [ $# -gt 0 ]; do
        case "$1" in
            # ssh's options with a value
            -[bcDEeFIiJLlmOoPpQRSWw]) shift 2 ;;
            -[bcDEeFIiJLlmOoPpQRSWw]?*) shift ;;
            --) shift; break ;;
            -*) shift ;;
            *) break ;;
        esac
    done
    local host="${1:?exec: no HOST}" ns=""
    shift
    [ $# -gt 0 ] || die "exec $host: no command"
    host="${host#*@}"
    case "$host" in
        localhost | 127.0.0.1 | "${P}0" | "$NET.254") ns="" ;;
        *)
            if [[ "$host" =~ ^${P}[0-9]+$ ]]; then
                ns="$host"
            elif [ -f "$STATE/hosts" ]; then
                ns="$(awk -v h="$host" '$1 == h { print $2; exit }' "$STATE/hosts")"
            fi
            [ -n "$ns" ] || die "exec: unknown host '$host' (not a namespace of $STATE/hosts: run 'scripts/netns.sh up N')"
            ;;
    esac
    [ -z "$ns" ] || [ "$ns" = "${P}0" ] && exec sh -c "$*"
    ip netns list | awk '{ print $1 }' | grep -qx "$ns" || die "exec: namespace $ns does not exist (run 'scripts/netns.sh up N')"
    # A node's own /tmp, as on a real host: Open MPI's daemons keep their session directory
    # there, named after the host name, which the namespaces share.
    mkdir -p -- "$STATE/tmp/$ns"
    TMPDIR="$STATE/tmp/$ns" exec ip netns exec "$ns" sh -c "$*"
}

case "$verb" in
    up) up "${1:?up needs N}" ;;
    down) down ;;
    exec) ns_exec "$@" ;;
    hosts) cat -- "$STATE/hosts" ;;
    *) usage >&2; die "unknown verb: $verb" ;;
esac
