#!/bin/sh
# fake-host.sh HOST COMMAND...: a launcher for `mpiexec -hosts ... --launcher scripts/fake-host.sh`
# that "starts COMMAND on HOST" by running it here, in the background, with OXMPI_FAKE_HOST=HOST
# in its environment, and waits for it, as ssh does. (Not in a session of its own: with the
# kernel's autogroup scheduling each session is a scheduling group, and ranks that poll in
# different groups on an oversubscribed machine would wait many times longer for each other
# than real hosts do.)
# Each node agent of the job is then a separate process tree that shares nothing with the head
# mpiexec but its TCP connection (not even the death signal that ties mpiexec's own children to
# it: killing this script leaves COMMAND running, as killing ssh leaves the remote side), which
# is how the multi-host launch is tested on one machine (scripts/test.sh, stage multihost).
# FAKE_HOST_FAIL=HOST makes the launch on HOST fail like an unreachable ssh (exit status 255).
if [ $# -lt 2 ]; then
    echo "usage: $0 HOST COMMAND [ARGS...]" >&2
    exit 2
fi
host="$1"
shift
if [ "${FAKE_HOST_FAIL:-}" = "$host" ]; then
    echo "fake-host: cannot reach $host" >&2
    exit 255
fi
# In the background so that COMMAND is not this script's death-signal-tied self; stdin passed on.
OXMPI_FAKE_HOST="$host" "$@" 0<&0 &
wait $!
