#!/usr/bin/env bash
# Proves that PREFIX/lib/openmpi-abi/libmpi.so.40 has Open MPI 4.1's C ABI, against Debian's
# Open MPI (libopenmpi-dev: its mpi.h, its libmpi.so.40).
#
# usage: scripts/check-ompi-abi.sh PREFIX        (an installed oxmpi)
#
#   (a) sizes: every predefined object Open MPI's mpi.h declares (ompi_mpi_comm_world...) is
#       exported by ours with the size Open MPI's libmpi.so.40 gives it (a program may
#       copy-relocate it: its size is part of the ABI), and so are MPI_F_STATUS(ES)_IGNORE;
#   (b) functions: SONAME libmpi.so.40, NEEDED libmpi.so.12; every MPI_/PMPI_ function and
#       OMPI_C_* callback Open MPI's libmpi.so.40 exports is exported by ours (except the
#       all-capital names (MPI_COMM_DUP_FN, MPI_WTIME_F90: Fortran-callable, the Fortran library's) and a program
#       referencing them all links with -z now and loads, and no ox*_MPI_*, MPI_* or PMPI_* function
#       of liboxmpi.so or ours calls an MPI_/PMPI_ function through the GOT/PLT (it would reach
#       this layer's own, an endless loop: scripts/check-got-recursion.py);
#   (c) values: a probe built with mpicc.openmpi runs on ours in both rank modes and checks
#       through the library what the headers alone cannot: every error class Open MPI defines
#       comes back from MPI_Error_class as itself, MPI_TAG_UB's attribute, the status layout
#       (MPI_Get_count, MPI_SOURCE/MPI_TAG after a receive), MPI_IN_PLACE, MPI_PROC_NULL,
#       MPI_ANY_SOURCE, predefined handles returned by the library (MPI_COMM_NULL after a free,
#       MPI_REQUEST_NULL after a wait, the group of MPI_COMM_WORLD compared), constants passed
#       in and out (MPI_Comm_compare, MPI_Topo_test, MPI_Query_thread, combiners);
#   (e) Fortran library: PREFIX/lib/openmpi-abi/libmpi_mpifh.so.40 has SONAME libmpi_mpifh.so.40
#       and NEEDs libmpi.so.40; ours exports Open MPI's Fortran sentinels (mpi_fortran_bottom_...)
#       with the sizes a program's COMMON blocks have; it reports which Fortran procedures of
#       Open MPI's libmpi_mpifh.so.40 it lacks;
#   (f) Fortran values: every predefined handle of Open MPI's mpif-handles.h converts to and from
#       its mpif.h value (MPI_X_c2f(MPI_X) == the value, MPI_X_f2c back), and every integer
#       constant of mpif-constants.h / mpif-io-constants.h equals the C one (the Fortran
#       bindings pass them to the C layer as they are);
#   (g) a Fortran probe (scripts/ompi-fortran-probe.f90) built with mpif90.openmpi, with mpif.h
#       and as a 'use mpi' program, runs on ours in both rank modes: sentinels, statuses, handles made and freed, 1-based MPI_Waitany indices,
#       MPI_TAG_UB, error codes, CHARACTER arguments;
#   (d) the generated files (src/abi_ompi/wrappers.rs, src/abi_ompi/tables.rs,
#       c-src/ompi_abi_entry.S, docs/OMPI_ABI_UNSUPPORTED.md) are what
#       `scripts/gen-mpi-abi.py --abi ompi` makes from the current headers.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PREFIX=${1:?usage: scripts/check-ompi-abi.sh PREFIX}
PREFIX=$(cd "$PREFIX" && pwd)
LIB=$PREFIX/lib/openmpi-abi/libmpi.so.40
OMPI_LIB=${OMPI_LIB:-/usr/lib/x86_64-linux-gnu/libmpi.so.40}
OMPI_H=${OMPI_MPI_H:-/usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h}
CC=${CC:-gcc}
for f in "$LIB" "$OMPI_LIB" "$OMPI_H"; do
    [[ -f $f ]] || { echo "FAIL: $f not found (scripts/install.sh PREFIX; apt-get install libopenmpi-dev)"; exit 1; }
done
command -v mpicc.openmpi >/dev/null || { echo "FAIL: mpicc.openmpi not found (apt-get install libopenmpi-dev)"; exit 1; }
WORK=$(mktemp -d)
trap '[[ -n ${KEEP:-} ]] || rm -rf "$WORK"' EXIT; [[ -n ${KEEP:-} ]] && echo "work dir $WORK"
FAILED=0
fail() { echo "FAIL: $*"; FAILED=1; }

# ---- (a) object sizes
grep -oE 'extern struct ompi_predefined_\w+_t \w+;' "$OMPI_H" | awk '{print $4}' | tr -d ';' | sort -u >"$WORK/objects"
printf 'MPI_F_STATUS_IGNORE\nMPI_F_STATUSES_IGNORE\n' >>"$WORK/objects"
sizes() { nm -DS --defined-only "$1" | awk 'NF == 4 {print $4, $2}' | sort; }
sizes "$OMPI_LIB" >"$WORK/ompi-sizes"
sizes "$LIB" >"$WORK/our-sizes"
bad=0
while read -r sym; do
    want=$(awk -v s="$sym" '$1 == s {print $2}' "$WORK/ompi-sizes")
    got=$(awk -v s="$sym" '$1 == s {print $2}' "$WORK/our-sizes")
    if [[ -z $want || $want != "$got" ]]; then
        fail "(a) $sym: Open MPI's size '${want:-absent}', ours '${got:-absent}'"; bad=1
    fi
done <"$WORK/objects"
[[ $bad -eq 0 ]] && echo "PASS (a) $(wc -l <"$WORK/objects") predefined objects exported with Open MPI's sizes"

# ---- (b) functions
soname=$(readelf -d "$LIB" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[[ $soname == libmpi.so.40 ]] || fail "(b) SONAME of $LIB is '$soname', not libmpi.so.40"
readelf -d "$LIB" | grep -q 'NEEDED.*\[libmpi.so.12\]' || fail "(b) $LIB does not NEED libmpi.so.12"
# Under this ABI the layer's MPI_X/PMPI_X come first: a wrapper reaching one through the GOT recurses.
scripts/check-got-recursion.py "$PREFIX/lib/liboxmpi.so" "$LIB" ||
    fail "(b) an ox*_MPI_*, MPI_* or PMPI_* function calls an MPI_/PMPI_ function through the GOT/PLT (above)"
funcs() { nm -D --defined-only "$1" | awk '$2 == "T" || $2 == "W" {print $3}' | grep -E '^(P?MPI_|OMPI_C_)' | grep -vE '^P?MPI_[A-Z0-9_]+$' | sort -u; }
funcs "$OMPI_LIB" >"$WORK/want-funcs"
funcs "$LIB" >"$WORK/our-funcs"
missing=$(comm -23 "$WORK/want-funcs" "$WORK/our-funcs")
[[ -z $missing ]] || fail "(b) exported by Open MPI's libmpi.so.40, not by ours: $(echo $missing | head -c 800)"
{
    sed 's/.*/extern void &(void);/' "$WORK/our-funcs"
    echo 'void *const all[] = {'
    sed 's/.*/    (void *)\&&,/' "$WORK/our-funcs"
    echo '};'
    echo '#include <stdio.h>'
    echo 'int main(void) { printf("%zu\n", sizeof all / sizeof all[0]); return 0; }'
} >"$WORK/link.c"
if $CC -o "$WORK/link" "$WORK/link.c" -L"$PREFIX/lib/openmpi-abi" -l:libmpi.so.40 -Wl,-rpath,"$PREFIX/lib/openmpi-abi" -Wl,-z,now 2>"$WORK/link.err" &&
    n=$(LD_BIND_NOW=1 "$WORK/link"); then
    [[ -z $missing ]] && echo "PASS (b) libmpi.so.40: SONAME, NEEDED libmpi.so.12, Open MPI's $(wc -l <"$WORK/want-funcs") functions exported, all $n resolve"
else
    fail "(b) a program using every function does not link or load:"; head -20 "$WORK/link.err"
fi

# ---- (c) values through the library
classes=$(grep -oE '^#define (MPI_ERR_[A-Z_]+|MPI_T_ERR_[A-Z_]+)\s+[0-9]+' "$OMPI_H" | awk '{print $2}' | grep -v LASTCODE)
{
    cat <<'EOF'
#include <mpi.h>
#include <stdio.h>
#include <string.h>
static int bad = 0;
#define WANT(c, ...) do { if (!(c)) { printf("FAIL " __VA_ARGS__); printf(" (%s)\n", #c); bad = 1; } } while (0)
int main(int argc, char **argv) {
    int provided, r, n, cls, len, flag, v, *ub, cmp;
    char s[MPI_MAX_ERROR_STRING];
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    WANT(provided == MPI_THREAD_FUNNELED || provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_Query_thread(&v);
    WANT(v == provided, "MPI_Query_thread %d", v);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
EOF
    for c in $classes; do
        echo "    cls = -1; MPI_Error_class($c, &cls); WANT(cls == $c, \"MPI_Error_class($c) = %d\", cls);"
        echo "    len = 0; MPI_Error_string($c, s, &len); WANT(len > 0, \"MPI_Error_string($c) empty\");"
    done
    cat <<'EOF'
    WANT(MPI_Send(&v, 1, MPI_INT, n + 5, 0, MPI_COMM_WORLD) == MPI_ERR_RANK, "bad rank's code");
    WANT(MPI_Send(&v, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD) == MPI_ERR_TYPE, "null type's code");
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    WANT(flag && *ub >= 32767, "MPI_TAG_UB");
    MPI_Status st;
    WANT(sizeof st == 24, "sizeof(MPI_Status) %zu", sizeof st);
    int buf[3] = {r, r, r}, in[3] = {-1, -1, -1}, cnt = -1;
    MPI_Request rq;
    MPI_Irecv(in, 3, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rq);
    MPI_Send(buf, 2, MPI_INT, (r + 1) % n, 40 + r, MPI_COMM_WORLD);
    MPI_Wait(&rq, &st);
    MPI_Get_count(&st, MPI_INT, &cnt);
    WANT(rq == MPI_REQUEST_NULL, "MPI_Wait leaves MPI_REQUEST_NULL");
    WANT(cnt == 2 && st.MPI_SOURCE == (r + n - 1) % n && st.MPI_TAG == 40 + st.MPI_SOURCE, "status %d %d %d", cnt, st.MPI_SOURCE, st.MPI_TAG);
    MPI_Recv(in, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st);
    WANT(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG, "PROC_NULL status %d %d", st.MPI_SOURCE, st.MPI_TAG);
    int sum = r;
    MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    WANT(sum == n * (n - 1) / 2, "MPI_IN_PLACE allreduce %d", sum);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_compare(MPI_COMM_WORLD, dup, &cmp);
    WANT(cmp == MPI_CONGRUENT, "compare %d", cmp);
    MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &cmp);
    WANT(cmp == MPI_IDENT, "compare %d", cmp);
    MPI_Comm_free(&dup);
    WANT(dup == MPI_COMM_NULL, "MPI_Comm_free leaves MPI_COMM_NULL");
    MPI_Group g;
    MPI_Comm_group(MPI_COMM_SELF, &g);
    MPI_Group_size(g, &v);
    WANT(v == 1, "group size %d", v);
    MPI_Group_free(&g);
    WANT(g == MPI_GROUP_NULL, "MPI_Group_free leaves MPI_GROUP_NULL");
    MPI_Comm cart;
    int dims[1] = {n}, periods[1] = {1}, ni, na, nd, comb;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
    MPI_Topo_test(cart, &v);
    WANT(v == MPI_CART, "MPI_Topo_test %d", v);
    MPI_Comm_free(&cart);
    MPI_Datatype vec, got;
    MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &vec);
    MPI_Type_get_envelope(vec, &ni, &na, &nd, &comb);
    WANT(comb == MPI_COMBINER_VECTOR && ni == 3 && nd == 1, "envelope %d", comb);
    int ints[3]; MPI_Aint as[1];
    MPI_Type_get_contents(vec, 3, 0, 1, ints, as, &got);
    WANT(got == MPI_DOUBLE, "contents type");
    MPI_Type_free(&vec);
    WANT(vec == MPI_DATATYPE_NULL, "MPI_Type_free leaves MPI_DATATYPE_NULL");
    MPI_Type_get_envelope(MPI_INT, &ni, &na, &nd, &comb);
    WANT(comb == MPI_COMBINER_NAMED, "named %d", comb);
    MPI_Finalize();
    if (r == 0 && !bad) printf("probe ok\n");
    return bad;
}
EOF
} >"$WORK/probe.c"
if mpicc.openmpi -o "$WORK/probe" "$WORK/probe.c" 2>"$WORK/probe.err"; then
    for mode in processes threads; do
        if out=$(timeout 120 "$PREFIX/bin/mpiexec" --mode "$mode" -n 2 "$WORK/probe" 2>&1) && grep -q "probe ok" <<<"$out"; then
            echo "PASS (c) $mode: $(wc -w <<<"$classes") error classes and the probe's values through libmpi.so.40"
        else
            fail "(c) $mode: the probe failed:"; head -30 <<<"$out"
        fi
    done
else
    fail "(c) the probe does not compile with mpicc.openmpi:"; head -20 "$WORK/probe.err"
fi

# ---- (e) the Fortran library
FLIB=$PREFIX/lib/openmpi-abi/libmpi_mpifh.so.40
OMPI_FLIB=${OMPI_FLIB:-/usr/lib/x86_64-linux-gnu/libmpi_mpifh.so.40}
OMPI_INC=$(dirname "$OMPI_H")
if [[ ! -f $FLIB ]]; then
    fail "(e) $FLIB not found"
else
    bad=0
    [[ $(readelf -d "$FLIB" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p') == libmpi_mpifh.so.40 ]] || { fail "(e) SONAME of $FLIB"; bad=1; }
    readelf -d "$FLIB" | grep -q 'NEEDED.*\[libmpi.so.40\]' || { fail "(e) $FLIB does not NEED libmpi.so.40"; bad=1; }
    for s in mpi_fortran_bottom_:4 mpi_fortran_in_place_:4 mpi_fortran_status_ignore_:24 mpi_fortran_statuses_ignore_:24 \
        mpi_fortran_errcodes_ignore_:4 mpi_fortran_argv_null_:1 mpi_fortran_argvs_null_:1 mpi_fortran_unweighted_:4 mpi_fortran_weights_empty_:4; do
        got=$(awk -v s="${s%%:*}" '$1 == s {print $2}' "$WORK/our-sizes")
        [[ -n $got && $((16#$got)) -eq ${s##*:} ]] || { fail "(e) sentinel ${s%%:*}: size '${got:-absent}', want ${s##*:}"; bad=1; }
    done
    if [[ -f $OMPI_FLIB ]]; then
        fnames() { nm -D --defined-only "$@" | awk '$2 == "T" || $2 == "W" {print $3}' | grep -E '^p?mpi_[a-z0-9_]*[a-z0-9]_$' | sort -u; }
        fnames "$OMPI_FLIB" >"$WORK/want-fnames"
        fnames "$FLIB" "$PREFIX/lib/openmpi-abi/libmpi_usempi_ignore_tkr.so.40" >"$WORK/our-fnames"
        lacking=$(comm -23 "$WORK/want-fnames" "$WORK/our-fnames" | { grep -v '^pmpi_' || true; } | sed 's/^mpi_//; s/_$//' | tr '\n' ' ')
        stubs=$(sed -n 's/^\/\/ Reporting MPI_ERR_UNSUPPORTED_OPERATION (the last \([0-9]*\)).*/\1/p' src/abi_ompi/fortran/generated.rs)
        echo "INFO (e) of Open MPI's $(grep -vc '^pmpi_' "$WORK/want-fnames") Fortran procedures, ours lack $(wc -w <<<"$lacking")${lacking:+: $lacking}; ${stubs:-?} report MPI_ERR_UNSUPPORTED_OPERATION (listed in src/abi_ompi/fortran/generated.rs)"
        [[ -z $lacking ]] || { fail "(e) Open MPI's Fortran procedures missing (a program would reach liboxmpi.so's MPICH-ABI bindings)"; bad=1; }
    fi
    [[ $bad -eq 0 ]] && echo "PASS (e) libmpi_mpifh.so.40: SONAME, NEEDED libmpi.so.40, 9 sentinel blocks with their sizes"
fi

# ---- (f) Fortran handle values and constants, value by value
params() { grep -v '^!' "$1" | grep -oE 'parameter *\( *MPI_[A-Z0-9_]+ *= *-?[0-9]+ *\)' | sed -E 's/parameter *\( *(MPI_[A-Z0-9_]+) *= *(-?[0-9]+) *\)/\1 \2/'; }
{
    cat <<'EOF'
#include <mpi.h>
#include <stdio.h>
static int bad = 0, n = 0;
#define C2F(h) _Generic((h), MPI_Comm: MPI_Comm_c2f, MPI_Datatype: MPI_Type_c2f, MPI_Group: MPI_Group_c2f, MPI_Op: MPI_Op_c2f, \
    MPI_Info: MPI_Info_c2f, MPI_Errhandler: MPI_Errhandler_c2f, MPI_Request: MPI_Request_c2f, MPI_Message: MPI_Message_c2f, MPI_Win: MPI_Win_c2f)(h)
#define F2C(h, f) _Generic((h), MPI_Comm: MPI_Comm_f2c, MPI_Datatype: MPI_Type_f2c, MPI_Group: MPI_Group_f2c, MPI_Op: MPI_Op_f2c, \
    MPI_Info: MPI_Info_f2c, MPI_Errhandler: MPI_Errhandler_f2c, MPI_Request: MPI_Request_f2c, MPI_Message: MPI_Message_f2c, MPI_Win: MPI_Win_f2c)(f)
#define H(h, f) do { n++; if (C2F(h) != (f) || F2C(h, f) != (h)) { printf("FAIL (f) %s: c2f %d, mpif.h %d\n", #h, (int)C2F(h), f); bad = 1; } } while (0)
#define K(c, f) do { n++; if ((long long)(c) != (f)) { printf("FAIL (f) %s: C %lld, mpif.h %d\n", #c, (long long)(c), f); bad = 1; } } while (0)
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
EOF
    # each handle as its object, as the first definition in mpi.h names it (MPI_LB and MPI_UB
    # are removed from C by default, MPI_INTEGER16 exists only with a Fortran INTEGER*16)
    params "$OMPI_INC/mpif-handles.h" | while read -r name v; do
        def=$(grep -m1 -oE "define $name +OMPI_PREDEFINED_GLOBAL\( *\w+ *, *\w+ *\)" "$OMPI_H" || true)
        [[ -n $def ]] || continue
        sym=$(sed -E 's/.*, *(\w+) *\)/\1/' <<<"$def")
        # declared again: mpi.h declares some only while C still has the name
        grep -m1 -oE "extern struct \w+ $sym;" "$OMPI_H" | sed 's/^/    /' || true
        echo "    H($(sed -E 's/.*\( *(\w+) *, *(\w+) *\)/((\1)\&\2)/' <<<"$def"), $v);"
    done
    cat "$OMPI_INC/mpif-constants.h" "$OMPI_INC/mpif-io-constants.h" >"$WORK/fconst.h"
    params "$WORK/fconst.h" | while read -r name v; do
        # integer constants of the C header (macros or enumerators), not the Fortran-only ones
        if grep -qE "(define $name\s+\(?-?[0-9]|^\s*$name\s*=)" "$OMPI_H" && ! grep -q "define $name THIS_SYMBOL_WAS_REMOVED" "$OMPI_H"; then
            echo "    K($name, $v);"
        fi
    done
    cat <<'EOF'
    MPI_Finalize();
    if (!bad) printf("values ok %d\n", n);
    return bad;
}
EOF
} >"$WORK/fvalues.c"
if mpicc.openmpi -o "$WORK/fvalues" "$WORK/fvalues.c" 2>"$WORK/fvalues.err"; then
    if out=$(timeout 60 "$PREFIX/bin/mpiexec" -n 1 "$WORK/fvalues" 2>&1) && grep -q "values ok" <<<"$out"; then
        echo "PASS (f) $(grep -oE '[0-9]+$' <<<"$out") Fortran handle values and constants of mpif.h"
    else
        fail "(f) Fortran values differ:"; head -30 <<<"$out"
    fi
else
    fail "(f) the values probe does not compile with mpicc.openmpi:"; head -20 "$WORK/fvalues.err"
fi

# ---- (g) a Fortran program built by Open MPI's mpif90
# (the same probe as a 'use mpi' program too: Debian's mpif90 links it with libmpi_usempif08.so.40)
cp "$ROOT/scripts/ompi-fortran-probe.f90" "$WORK/fprobe.f90"
sed -e "/^ *include 'mpif.h'/d" -e 's/^program fprobe$/program fprobe\n    use mpi/' "$WORK/fprobe.f90" >"$WORK/fprobe_use.f90"
for variant in "fprobe:mpif.h" "fprobe_use:'use mpi'"; do
    exe=${variant%%:*} what=${variant#*:}
    if ! mpif90.openmpi -o "$WORK/$exe" "$WORK/$exe.f90" 2>"$WORK/$exe.err"; then
        fail "(g) the $what probe does not compile with mpif90.openmpi:"; head -20 "$WORK/$exe.err"; continue
    fi
    for mode in processes threads; do
        if out=$(timeout 120 "$PREFIX/bin/mpiexec" --mode "$mode" -n 2 "$WORK/$exe" 2>&1) && grep -q "fprobe ok" <<<"$out"; then
            echo "PASS (g) $mode: the $what probe built with mpif90.openmpi"
        else
            fail "(g) $mode: the $what probe failed:"; head -30 <<<"$out"
        fi
    done
done

# ---- (d) generated files are current
mkdir -p "$WORK/gen/include" "$WORK/gen/src/abi_ompi" "$WORK/gen/c-src" "$WORK/gen/docs" "$WORK/gen/scripts"
cp include/mpi.h "$WORK/gen/include/"
cp scripts/gen-mpi-abi.py "$WORK/gen/scripts/"
python3 "$WORK/gen/scripts/gen-mpi-abi.py" --abi ompi 2>/dev/null
stale=""
for f in src/abi_ompi/wrappers.rs src/abi_ompi/tables.rs c-src/ompi_abi_entry.S docs/OMPI_ABI_UNSUPPORTED.md; do
    cmp -s "$f" "$WORK/gen/$f" || stale="$stale $f"
done
python3 scripts/gen-fortran-bindings.py --abi ompi --check >/dev/null 2>&1 ||
    stale="$stale src/abi_ompi/fortran/generated.rs,c-src/ompi_mpifh_entry.S,c-src/ompi_usempi_entry.S (scripts/gen-fortran-bindings.py --abi ompi)"
if [[ -z $stale ]]; then
    echo "PASS (d) generated files are current"
else
    fail "(d) stale:$stale; run python3 scripts/gen-mpi-abi.py --abi ompi and commit"
fi

if [[ $FAILED -ne 0 ]]; then echo "check-ompi-abi: FAIL"; exit 1; fi
echo "check-ompi-abi: PASS"
