#!/usr/bin/env bash
# Runner for the oxmpi C test suite. See c-tests/README.md and --help.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

usage() {
    cat <<'EOF'
Usage: c-tests/run.sh --prefix PREFIX [options]
       c-tests/run.sh --mpich [options]
       c-tests/run.sh --prefix PREFIX --launcher CMD [options]

Compiles every c-tests/*.c with PREFIX/bin/mpicc and runs it with
PREFIX/bin/mpiexec at every rank count listed in its header, in every mode.

Options:
  --prefix PREFIX    install prefix of oxmpi (uses PREFIX/bin/mpicc, PREFIX/bin/mpiexec)
  --mpich            validate against the system MPICH (mpicc.mpich, mpiexec.mpich -n N);
                     modes are ignored, tests marked mpich=skip are skipped and
                     tests marked mpich=nostderr run without their stderr checks
  --launcher CMD     run with a foreign launcher instead of oxmpi's mpiexec: CMD -n N PROGRAM,
                     with LD_LIBRARY_PATH=PREFIX/lib (mpiexec.mpich, or Open MPI's
                     mpirun.openmpi, which also gets --oversubscribe --bind-to none and may
                     run as root; the ranks reach each other through PMI or PMIx); processes
                     mode only, --modes is ignored
  --mpi-abi          compile with 'mpicc -mpi-abi' (the MPI-5 standard ABI: mpi_abi.h,
                     libmpi_abi.so.1) instead of the MPICH ABI; binaries in build/oxmpi-abi
  --ompi-abi         compile with Open MPI's mpicc (mpicc.openmpi: Open MPI 4.1's ABI,
                     libmpi.so.40) and run on oxmpi (mpiexec gives the programs oxmpi's
                     libmpi.so.40); tests listed in c-tests/ompi-abi.skip (with the reason)
                     are skipped; binaries in build/ompi-abi
  --modes "M1 M2"    launcher modes, each passed as --mode M to mpiexec (default: processes)
  --filter REGEX     only tests whose name (file name without .c) matches REGEX (grep -E)
  --jobs N           number of runs in parallel (default 1)
  --nodes K          run every job over K emulated nodes (mpiexec --nodes, at most one node
                     per rank): shared memory inside a node, UCX between them (set UCX_TLS=tcp
                     to force TCP); oxmpi's mpiexec only
  --hosts LIST       run every job on these hosts (mpiexec -hosts LIST: ranks spread evenly):
                     a node agent per host, UCX between them; oxmpi's mpiexec only
  --host-launcher CMD  how mpiexec starts a host's node agent (mpiexec --launcher CMD; default
                     ssh); scripts/fake-host.sh runs each "host" as a separate local process tree
  --timeout S        default per-run timeout in seconds (default 60; header timeout= overrides)
  -h, --help         this help

Environment:
  OXMPI_TEST_MAX_RANKS   skip rank counts above this (e.g. 4)
  OXMPI_TEST_RANKS       comma/space list; only run rank counts in this list
  OXMPI_TEST_CFLAGS      compiler flags (default: -std=c99 -Wall -O2 -g -Wno-stringop-overflow)
  OXMPI_TEST_MPIEXEC_ARGS extra arguments for mpiexec (before -n)

Header keys (first comment lines of each test, "/* oxmpi-test: key=value ... */"):
  ranks=1,2,4,8  expect=fail  expect-exit=N  expect-exit-threads=N (threads mode's, if it
  differs)  expect-stderr=TEXT (repeatable; quote
  TEXT containing spaces: expect-stderr="killed by signal 11")  expect-stdout=TEXT (the same
  for stdout)  mpich=skip|nostderr
  timeout=SECONDS  env=VAR=VALUE[,VAR=VALUE...] (repeatable: one run per env= key, with
  those variables set; env=- is a run with none; ignored with --mpich)
  env-matrix=VAR=A|B|C (one run per value of VAR)
  abi=mpi5 (only built and run with --mpi-abi: tests of the MPI-5 standard ABI itself)
  modes=processes (only these launcher modes; other modes print SKIP; ignored with --mpich)
  mpmd="-n 1 {exe} a : -n 2 {exe2} b" (an MPMD job: these words replace '-n N PROGRAM';
  {exe} is the test's binary, {exe2} a copy of it under another name (a second program),
  {cwd} the runner's directory; ranks= must give the total)
  mpiexec-args="-bind-to core" (more launcher options, before -n; also with --mpich)
EOF
}

PREFIX=""
MPICH=0
MPI_ABI=0
OMPI_ABI=0
MPICC_ARGS=()
LAUNCHER=""
LAUNCHER_ARGS=()
MODES="processes"
FILTER=""
JOBS=1
DEF_TIMEOUT=60
NODES=1
HOSTS=""
HOST_LAUNCHER=""

while [[ $# -gt 0 ]]; do
    case "$1" in
        --prefix) PREFIX="${2:?--prefix needs a value}"; shift 2 ;;
        --prefix=*) PREFIX="${1#*=}"; shift ;;
        --mpich) MPICH=1; shift ;;
        --mpi-abi) MPI_ABI=1; shift ;;
        --ompi-abi) OMPI_ABI=1; shift ;;
        --launcher) LAUNCHER="${2:?--launcher needs a value}"; shift 2 ;;
        --launcher=*) LAUNCHER="${1#*=}"; shift ;;
        --modes) MODES="${2:?--modes needs a value}"; shift 2 ;;
        --modes=*) MODES="${1#*=}"; shift ;;
        --filter) FILTER="${2:?--filter needs a value}"; shift 2 ;;
        --filter=*) FILTER="${1#*=}"; shift ;;
        --jobs|-j) JOBS="${2:?--jobs needs a value}"; shift 2 ;;
        --jobs=*) JOBS="${1#*=}"; shift ;;
        --nodes) NODES="${2:?--nodes needs a value}"; shift 2 ;;
        --nodes=*) NODES="${1#*=}"; shift ;;
        --hosts) HOSTS="${2:?--hosts needs a value}"; shift 2 ;;
        --hosts=*) HOSTS="${1#*=}"; shift ;;
        --host-launcher) HOST_LAUNCHER="${2:?--host-launcher needs a value}"; shift 2 ;;
        --host-launcher=*) HOST_LAUNCHER="${1#*=}"; shift ;;
        --timeout) DEF_TIMEOUT="${2:?--timeout needs a value}"; shift 2 ;;
        --timeout=*) DEF_TIMEOUT="${1#*=}"; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "run.sh: unknown argument: $1 (see --help)" >&2; exit 2 ;;
    esac
done

if [[ $MPICH -eq 1 ]]; then
    MPICC="$(command -v mpicc.mpich || true)"
    MPIEXEC="$(command -v mpiexec.mpich || true)"
    [[ -n "$MPICC" && -n "$MPIEXEC" ]] || { echo "run.sh: mpicc.mpich/mpiexec.mpich not found" >&2; exit 2; }
    MODES="mpich"
    TAG="mpich"
else
    [[ -n "$PREFIX" ]] || { echo "run.sh: --prefix PREFIX (or --mpich) is required; see --help" >&2; exit 2; }
    PREFIX="$(cd "$PREFIX" && pwd)"
    MPICC="$PREFIX/bin/mpicc"
    MPIEXEC="$PREFIX/bin/mpiexec"
    [[ -x "$MPICC" ]] || { echo "run.sh: $MPICC not found or not executable" >&2; exit 2; }
    [[ -x "$MPIEXEC" ]] || { echo "run.sh: $MPIEXEC not found or not executable" >&2; exit 2; }
    TAG="oxmpi"
    if [[ $MPI_ABI -eq 1 ]]; then
        MPICC_ARGS=(-mpi-abi)
        TAG="oxmpi-abi"
    fi
    if [[ $OMPI_ABI -eq 1 ]]; then
        MPICC="$(command -v mpicc.openmpi || true)"
        [[ -n "$MPICC" ]] || { echo "run.sh: --ompi-abi needs mpicc.openmpi (Debian package libopenmpi-dev)" >&2; exit 2; }
        TAG="ompi-abi"
    fi
    if [[ -n "$LAUNCHER" ]]; then
        command -v "$LAUNCHER" >/dev/null || { echo "run.sh: launcher $LAUNCHER not found" >&2; exit 2; }
        MPIEXEC="$(command -v "$LAUNCHER")"
        MODES="processes"
        TAG="$(basename "$LAUNCHER")"
        # Open MPI's mpirun: more ranks than cores, and (in a CI container) as root. Not bound
        # to cores: on a machine shared with other busy programs, a rank pinned to a loaded
        # core waits for it while another core idles (a test of thousands of small collectives
        # then takes minutes instead of a second).
        if "$MPIEXEC" --version 2>&1 | grep -q "Open MPI\|OpenRTE"; then
            LAUNCHER_ARGS=(--oversubscribe --bind-to none)
            export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
        fi
    fi
fi
[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --jobs must be a positive integer" >&2; exit 2; }
[[ "$DEF_TIMEOUT" =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --timeout must be a positive integer" >&2; exit 2; }

# -Wno-stringop-overflow: GCC >= 11 warns about MPI_STATUSES_IGNORE ((MPI_Status *)1)
# passed to array parameters; that is an artifact of the MPICH-ABI header, not of the tests.
CFLAGS="${OXMPI_TEST_CFLAGS:--std=c99 -Wall -O2 -g -Wno-stringop-overflow}"
read -r -a CFLAGS_ARR <<<"$CFLAGS"
MAX_RANKS="${OXMPI_TEST_MAX_RANKS:-}"
ONLY_RANKS="${OXMPI_TEST_RANKS:-}"
ONLY_RANKS="${ONLY_RANKS//,/ }"
read -r -a EXTRA_MPIEXEC_ARGS <<<"${OXMPI_TEST_MPIEXEC_ARGS:-}"

BUILD="$HERE/build/$TAG"
LOGS="$BUILD/logs"
mkdir -p "$BUILD" "$LOGS"
rm -f "$LOGS"/*.result

now() { echo "${EPOCHREALTIME/,/.}"; }

# ---------------------------------------------------------------- headers
# parse_header FILE: sets H_RANKS H_EXPECT_FAIL H_EXIT H_STDERR[] H_STDOUT[] H_MPICH H_TIMEOUT H_ENVS[] H_MODES
# (H_ENVS: one entry per run, a comma-separated VAR=VALUE list or "-" for none)
parse_header() {
    local file="$1" line rest key val
    H_RANKS="1"; H_EXPECT_FAIL=0; H_EXIT=""; H_EXIT_THREADS=""; H_STDERR=(); H_STDOUT=(); H_MPICH=""; H_TIMEOUT=""; H_ENVS=(); H_MODES=""; H_ABI=""; H_MPMD=""; H_MPIEXEC_ARGS=()
    local found=0
    while IFS= read -r line; do
        [[ "$line" =~ ^/\*[[:space:]]*oxmpi-test:(.*)\*/[[:space:]]*$ ]] || continue
        found=1
        rest="${BASH_REMATCH[1]}"
        while [[ "$rest" =~ ^[[:space:]]*([a-z-]+)=(\"([^\"]*)\"|([^[:space:]]*))(.*)$ ]]; do
            key="${BASH_REMATCH[1]}"
            if [[ "${BASH_REMATCH[2]}" == \"* ]]; then val="${BASH_REMATCH[3]}"; else val="${BASH_REMATCH[4]}"; fi
            rest="${BASH_REMATCH[5]}"
            case "$key" in
                ranks) H_RANKS="${val//,/ }" ;;
                expect) [[ "$val" == fail ]] && H_EXPECT_FAIL=1 ;;
                expect-exit) H_EXIT="$val" ;;
                expect-exit-threads) H_EXIT_THREADS="$val" ;;
                expect-stderr) H_STDERR+=("$val") ;;
                expect-stdout) H_STDOUT+=("$val") ;;
                mpich) H_MPICH="$val" ;;
                timeout) H_TIMEOUT="$val" ;;
                modes) H_MODES="${val//,/ }" ;;
                abi) H_ABI="$val" ;;
                mpmd) H_MPMD="$val" ;;
                mpiexec-args) read -r -a H_MPIEXEC_ARGS <<<"$val" ;;
                env) H_ENVS+=("$val") ;;
                env-matrix)
                    local var="${val%%=*}" vals="${val#*=}" v
                    IFS='|' read -r -a vals <<<"$vals"
                    for v in "${vals[@]}"; do H_ENVS+=("$var=$v"); done ;;
                *) echo "run.sh: $file: unknown header key '$key'" >&2 ;;
            esac
        done
        if [[ -n "${rest//[[:space:]]/}" ]]; then
            echo "run.sh: $file: cannot parse header near '$rest'" >&2
        fi
    done < <(head -n 10 "$file")
    # MPICH runs the program once, without oxmpi's settings.
    if [[ ${#H_ENVS[@]} -eq 0 || $MPICH -eq 1 ]]; then H_ENVS=("-"); fi
    [[ $found -eq 1 ]] || echo "run.sh: $file: no '/* oxmpi-test: ... */' header; using ranks=1" >&2
    return 0
}

# ---------------------------------------------------------------- one run
# run_one NAME N MODE ENVIDX -> writes $LOGS/NAME.nN.MODE[.eENVIDX].{out,err,result}, with the
# variables of H_ENVS[ENVIDX] set (no suffix when the test has a single run without variables)
run_one() {
    local name="$1" n="$2" mode="$3" eidx="$4"
    local envs="${H_ENVS[$eidx]}"
    local base="$LOGS/$name.n$n.$mode"
    local -a envset=()
    if [[ ${#H_ENVS[@]} -gt 1 ]]; then base+=".e$eidx"; fi
    local -a nodes_arg=()
    if [[ $NODES -gt 1 ]]; then
        nodes_arg=(--nodes "$(( n < NODES ? n : NODES ))")
        base+=".nodes$NODES"
    fi
    if [[ -n "$HOSTS" ]]; then
        # One slot per host: mpiexec spreads the ranks evenly, in blocks.
        local nh
        nh="$(tr ',' '\n' <<<"$HOSTS" | grep -c .)"
        nodes_arg=(-hosts "$HOSTS")
        [[ -n "$HOST_LAUNCHER" ]] && nodes_arg+=(--launcher "$HOST_LAUNCHER")
        base+=".hosts$nh"
    fi
    if [[ "$envs" != "-" ]]; then IFS=',' read -r -a envset <<<"$envs"; fi
    local exe="$BUILD/$name"
    local tmo="${H_TIMEOUT:-$DEF_TIMEOUT}"
    local -a cmd
    # mpmd=: the test's segments in place of '-n N PROGRAM'
    local -a job=(${H_MPIEXEC_ARGS[@]+"${H_MPIEXEC_ARGS[@]}"} -n "$n" "$exe")
    if [[ -n "$H_MPMD" ]]; then
        local t="${H_MPMD//\{exe2\}/$exe.2}"
        t="${t//\{exe\}/$exe}"
        read -r -a job <<<"${t//\{cwd\}/$PWD}"
        job=(${H_MPIEXEC_ARGS[@]+"${H_MPIEXEC_ARGS[@]}"} "${job[@]}")
    fi
    if [[ $MPICH -eq 1 ]]; then
        cmd=("$MPIEXEC" "${EXTRA_MPIEXEC_ARGS[@]}" "${job[@]}")
    elif [[ -n "$LAUNCHER" ]]; then
        cmd=(env LD_LIBRARY_PATH="$PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$MPIEXEC" ${LAUNCHER_ARGS[@]+"${LAUNCHER_ARGS[@]}"} "${EXTRA_MPIEXEC_ARGS[@]}" "${job[@]}")
    else
        cmd=("$MPIEXEC" "${EXTRA_MPIEXEC_ARGS[@]}" ${nodes_arg[@]+"${nodes_arg[@]}"} --timeout "$tmo" --mode "$mode" "${job[@]}")
    fi
    local t0 t1 rc=0
    t0="$(now)"
    # coreutils timeout gets a margin over our mpiexec's own --timeout (MPICH has none)
    local hard=$((tmo + 5))
    [[ $MPICH -eq 1 || -n "$LAUNCHER" ]] && hard=$tmo
    env ${envset[@]+"${envset[@]}"} timeout -k 5 "$hard" "${cmd[@]}" >"$base.out" 2>"$base.err" </dev/null || rc=$?
    t1="$(now)"
    local secs
    secs="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')"

    local verdict="PASS" why="" want_exit="$H_EXIT"
    # expect-exit-threads: the status in threads mode, where a rank cannot be SIGKILLed alone.
    [[ $mode == threads && -n "$H_EXIT_THREADS" ]] && want_exit="$H_EXIT_THREADS"
    # 137 is timeout's SIGKILL, unless the test expects a rank's SIGKILL to be the job's status
    # (ulfm_*: survivors finish, the launcher reports the death); mpiexec's own timeout is 124.
    if [[ $rc -eq 124 || ( $rc -eq 137 && "$want_exit" != 137 ) ]]; then
        verdict="FAIL"; why="timeout after ${tmo}s (rc=$rc)"
    elif [[ -n "$want_exit" ]]; then
        [[ $rc -eq $want_exit ]] || { verdict="FAIL"; why="exit status $rc, expected $want_exit"; }
    elif [[ $H_EXPECT_FAIL -eq 1 ]]; then
        [[ $rc -ne 0 ]] || { verdict="FAIL"; why="exit status 0, expected failure"; }
    else
        [[ $rc -eq 0 ]] || { verdict="FAIL"; why="exit status $rc"; }
    fi
    if [[ $verdict == PASS && ! ( $MPICH -eq 1 && "$H_MPICH" == nostderr ) ]]; then
        local s
        for s in "${H_STDERR[@]+"${H_STDERR[@]}"}"; do
            if ! grep -qF -- "$s" "$base.err"; then
                verdict="FAIL"; why="stderr lacks '$s'"; break
            fi
        done
    fi
    if [[ $verdict == PASS ]]; then
        local s
        for s in "${H_STDOUT[@]+"${H_STDOUT[@]}"}"; do
            if ! grep -qF -- "$s" "$base.out"; then
                verdict="FAIL"; why="stdout lacks '$s'"; break
            fi
        done
    fi
    local line="$verdict $name n=$n $mode${envset[0]+ [$envs]} ${secs}s${why:+  ($why)}"
    {
        echo "$line"
        if [[ $verdict == FAIL ]]; then
            echo "  --- stderr tail ($base.err) ---"
            tail -n 20 "$base.err" | sed 's/^/  | /'
            if [[ -s "$base.out" ]]; then
                echo "  --- stdout tail ($base.out) ---"
                tail -n 5 "$base.out" | sed 's/^/  | /'
            fi
        fi
    } >"$base.result.tmp"
    mv "$base.result.tmp" "$base.result"
    cat "$base.result"
}

# ---------------------------------------------------------------- main
shopt -s nullglob
TESTS=()
for f in "$HERE"/*.c; do
    name="$(basename "$f" .c)"
    if [[ -n "$FILTER" ]] && ! grep -qE -- "$FILTER" <<<"$name"; then continue; fi
    TESTS+=("$name")
done
[[ ${#TESTS[@]} -gt 0 ]] || { echo "run.sh: no tests match" >&2; exit 2; }

echo "# oxmpi C tests: ${#TESTS[@]} test files, compiler $MPICC, launcher $MPIEXEC, modes: $MODES"
START="$(now)"
NPASS=0; NFAIL=0; NSKIP=0
FAILED=()
RUNNING=0

for name in "${TESTS[@]}"; do
    src="$HERE/$name.c"
    parse_header "$src"
    if [[ $MPICH -eq 1 && "$H_MPICH" == skip ]]; then
        echo "SKIP $name (mpich=skip)"
        NSKIP=$((NSKIP + 1))
        continue
    fi
    # abi=mpi5: a test of the MPI-5 standard ABI itself, built only with --mpi-abi
    if [[ "$H_ABI" == mpi5 && $MPI_ABI -eq 0 ]]; then
        echo "SKIP $name (abi=mpi5: run with --mpi-abi)"
        NSKIP=$((NSKIP + 1))
        continue
    fi
    # --ompi-abi: c-tests/ompi-abi.skip names the tests that cannot run there, and why
    if [[ $OMPI_ABI -eq 1 ]]; then
        why="$(awk -v n="$name" '$1 == n { $1 = ""; sub(/^ /, ""); print; exit }' "$HERE/ompi-abi.skip")"
        if [[ -n "$why" ]]; then
            echo "SKIP $name (ompi-abi.skip: $why)"
            NSKIP=$((NSKIP + 1))
            continue
        fi
    fi
    # compile (once per test)
    exe="$BUILD/$name"
    if ! "$MPICC" ${MPICC_ARGS[@]+"${MPICC_ARGS[@]}"} "${CFLAGS_ARR[@]}" -I"$HERE" -o "$exe" "$src" -pthread >"$LOGS/$name.build" 2>&1; then
        echo "FAIL $name (compile)"
        sed 's/^/  | /' "$LOGS/$name.build" | tail -n 20
        NFAIL=$((NFAIL + 1)); FAILED+=("$name (compile)")
        continue
    fi
    # mpmd= with {exe2}: a second program, the same code in another file
    if [[ "$H_MPMD" == *"{exe2}"* ]]; then cp -f "$exe" "$exe.2"; fi
    if [[ -s "$LOGS/$name.build" ]]; then
        echo "WARN $name: compiler output:"; sed 's/^/  | /' "$LOGS/$name.build" | tail -n 10
    fi
    for n in $H_RANKS; do
        if [[ -n "$MAX_RANKS" && $n -gt $MAX_RANKS ]]; then continue; fi
        if [[ -n "$ONLY_RANKS" && " $ONLY_RANKS " != *" $n "* ]]; then continue; fi
        for mode in $MODES; do
            if [[ -n "$H_MODES" && $MPICH -eq 0 && " $H_MODES " != *" $mode "* ]]; then
                [[ $n == "${H_RANKS%% *}" ]] && echo "SKIP $name $mode (modes=${H_MODES// /,})"
                continue
            fi
            for eidx in "${!H_ENVS[@]}"; do
                if [[ $JOBS -le 1 ]]; then
                    run_one "$name" "$n" "$mode" "$eidx" || true
                else
                    while [[ $RUNNING -ge $JOBS ]]; do wait -n || true; RUNNING=$((RUNNING - 1)); done
                    run_one "$name" "$n" "$mode" "$eidx" &
                    RUNNING=$((RUNNING + 1))
                fi
            done
        done
    done
done
wait || true

for r in "$LOGS"/*.result; do
    first="$(head -n 1 "$r")"
    case "$first" in
        PASS*) NPASS=$((NPASS + 1)) ;;
        *) NFAIL=$((NFAIL + 1)); FAILED+=("${first#FAIL }") ;;
    esac
done

END="$(now)"
TOTAL="$(awk -v a="$START" -v b="$END" 'BEGIN { printf "%.1f", b - a }')"
echo "# summary: $NPASS passed, $NFAIL failed, $NSKIP skipped test files, ${TOTAL}s"
if [[ $NFAIL -gt 0 ]]; then
    echo "# failed runs:"
    printf '#   %s\n' "${FAILED[@]}"
    exit 1
fi
exit 0
