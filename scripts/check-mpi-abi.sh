#!/usr/bin/env bash
# Proves that include/mpi_abi.h and libmpi_abi.so.1 are the MPI 5.0 standard ABI.
#
# usage: scripts/check-mpi-abi.sh PREFIX        (an installed oxmpi: PREFIX/lib/libmpi_abi.so.1)
#
#   (a) values and sizes: a C probe built against include/mpi_abi.h prints every constant of the
#       table below (the standard's fixed encodings, MPI 5.0 chapter "Application Binary
#       Interface", as the MPI Forum's reference header has them: mpi-forum/mpi-abi-stubs mpi.h
#       at 90d88b071aec, whose MPI_CHARACTER 0x21e and MPI_ERR_ABI 62 the standard's text confirms) and the sizes and
#       offsets the standard fixes; both must match exactly. No MPICH >= 4.3 or Open MPI 6 is
#       packaged for this Debian, so the table stands in for their headers;
#   (b) the library: SONAME libmpi_abi.so.1, NEEDED libmpi.so.12, and every MPI_/PMPI_ function
#       the header declares is exported and resolves (a program calling each one links with
#       -z now and loads), and no ox*_MPI_*, MPI_* or PMPI_* function of liboxmpi.so or ours calls
#       an MPI_/PMPI_ function through the GOT/PLT (it would reach this layer's own, an endless
#       loop: scripts/check-got-recursion.py);
#   (c) the generated files (src/abi5/wrappers.rs, src/abi5/tables.rs, c-src/mpi_abi_entry.S,
#       the header's prototypes, docs/MPI_ABI_UNSUPPORTED.md) are what scripts/gen-mpi-abi.py
#       makes from the current include/mpi.h.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PREFIX=${1:?usage: scripts/check-mpi-abi.sh PREFIX}
LIB=$PREFIX/lib/libmpi_abi.so.1
CC=${CC:-gcc}
[[ -f $LIB ]] || { echo "FAIL: $LIB not found (scripts/install.sh PREFIX)"; exit 1; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
FAILED=0
fail() { echo "FAIL: $*"; FAILED=1; }

# ---- (a) the standard's values: NAME VALUE (handles as the integer they are cast from)
cat >"$WORK/expected" <<'TABLE'
MPI_VERSION 5
MPI_SUBVERSION 0
MPI_ABI_VERSION 1
MPI_ABI_SUBVERSION 0
MPI_OP_NULL 32
MPI_SUM 33
MPI_MIN 34
MPI_MAX 35
MPI_PROD 36
MPI_BAND 40
MPI_BOR 41
MPI_BXOR 42
MPI_LAND 48
MPI_LOR 49
MPI_LXOR 50
MPI_MINLOC 56
MPI_MAXLOC 57
MPI_REPLACE 60
MPI_NO_OP 61
MPI_COMM_NULL 256
MPI_COMM_WORLD 257
MPI_COMM_SELF 258
MPI_GROUP_NULL 264
MPI_GROUP_EMPTY 265
MPI_WIN_NULL 272
MPI_FILE_NULL 280
MPI_SESSION_NULL 288
MPI_MESSAGE_NULL 296
MPI_MESSAGE_NO_PROC 297
MPI_INFO_NULL 304
MPI_INFO_ENV 305
MPI_ERRHANDLER_NULL 320
MPI_ERRORS_ARE_FATAL 321
MPI_ERRORS_RETURN 322
MPI_ERRORS_ABORT 323
MPI_REQUEST_NULL 384
MPI_DATATYPE_NULL 0x200
MPI_AINT 0x201
MPI_COUNT 0x202
MPI_OFFSET 0x203
MPI_PACKED 0x207
MPI_SHORT 0x208
MPI_INT 0x209
MPI_LONG 0x20a
MPI_LONG_LONG 0x20b
MPI_LONG_LONG_INT 0x20b
MPI_UNSIGNED_SHORT 0x20c
MPI_UNSIGNED 0x20d
MPI_UNSIGNED_LONG 0x20e
MPI_UNSIGNED_LONG_LONG 0x20f
MPI_FLOAT 0x210
MPI_C_FLOAT_COMPLEX 0x212
MPI_C_COMPLEX 0x212
MPI_CXX_FLOAT_COMPLEX 0x213
MPI_DOUBLE 0x214
MPI_C_DOUBLE_COMPLEX 0x216
MPI_CXX_DOUBLE_COMPLEX 0x217
MPI_LOGICAL 0x218
MPI_INTEGER 0x219
MPI_REAL 0x21a
MPI_COMPLEX 0x21b
MPI_DOUBLE_PRECISION 0x21c
MPI_DOUBLE_COMPLEX 0x21d
MPI_CHARACTER 0x21e
MPI_LONG_DOUBLE 0x220
MPI_C_LONG_DOUBLE_COMPLEX 0x224
MPI_CXX_LONG_DOUBLE_COMPLEX 0x225
MPI_FLOAT_INT 0x228
MPI_DOUBLE_INT 0x229
MPI_LONG_INT 0x22a
MPI_2INT 0x22b
MPI_SHORT_INT 0x22c
MPI_LONG_DOUBLE_INT 0x22d
MPI_2REAL 0x230
MPI_2DOUBLE_PRECISION 0x231
MPI_2INTEGER 0x232
MPI_C_BOOL 0x238
MPI_CXX_BOOL 0x239
MPI_WCHAR 0x23c
MPI_INT8_T 0x240
MPI_UINT8_T 0x241
MPI_CHAR 0x243
MPI_SIGNED_CHAR 0x244
MPI_UNSIGNED_CHAR 0x245
MPI_BYTE 0x247
MPI_INT16_T 0x248
MPI_UINT16_T 0x249
MPI_INT32_T 0x250
MPI_UINT32_T 0x251
MPI_INT64_T 0x258
MPI_UINT64_T 0x259
MPI_LOGICAL1 0x2c0
MPI_INTEGER1 0x2c1
MPI_LOGICAL2 0x2c8
MPI_INTEGER2 0x2c9
MPI_REAL2 0x2ca
MPI_LOGICAL4 0x2d0
MPI_INTEGER4 0x2d1
MPI_REAL4 0x2d2
MPI_COMPLEX4 0x2d3
MPI_LOGICAL8 0x2d8
MPI_INTEGER8 0x2d9
MPI_REAL8 0x2da
MPI_COMPLEX8 0x2db
MPI_LOGICAL16 0x2e0
MPI_INTEGER16 0x2e1
MPI_REAL16 0x2e2
MPI_COMPLEX16 0x2e3
MPI_COMPLEX32 0x2eb
MPI_F_STATUS_SIZE 8
MPI_F_SOURCE 0
MPI_F_TAG 1
MPI_F_ERROR 2
MPI_SUCCESS 0
MPI_ERR_BUFFER 1
MPI_ERR_COUNT 2
MPI_ERR_TYPE 3
MPI_ERR_TAG 4
MPI_ERR_COMM 5
MPI_ERR_RANK 6
MPI_ERR_REQUEST 7
MPI_ERR_ROOT 8
MPI_ERR_GROUP 9
MPI_ERR_OP 10
MPI_ERR_TOPOLOGY 11
MPI_ERR_DIMS 12
MPI_ERR_ARG 13
MPI_ERR_UNKNOWN 14
MPI_ERR_TRUNCATE 15
MPI_ERR_OTHER 16
MPI_ERR_INTERN 17
MPI_ERR_PENDING 18
MPI_ERR_IN_STATUS 19
MPI_ERR_ACCESS 20
MPI_ERR_AMODE 21
MPI_ERR_ASSERT 22
MPI_ERR_BAD_FILE 23
MPI_ERR_BASE 24
MPI_ERR_CONVERSION 25
MPI_ERR_DISP 26
MPI_ERR_DUP_DATAREP 27
MPI_ERR_FILE_EXISTS 28
MPI_ERR_FILE_IN_USE 29
MPI_ERR_FILE 30
MPI_ERR_INFO_KEY 31
MPI_ERR_INFO_NOKEY 32
MPI_ERR_INFO_VALUE 33
MPI_ERR_INFO 34
MPI_ERR_IO 35
MPI_ERR_KEYVAL 36
MPI_ERR_LOCKTYPE 37
MPI_ERR_NAME 38
MPI_ERR_NO_MEM 39
MPI_ERR_NOT_SAME 40
MPI_ERR_NO_SPACE 41
MPI_ERR_NO_SUCH_FILE 42
MPI_ERR_PORT 43
MPI_ERR_QUOTA 44
MPI_ERR_READ_ONLY 45
MPI_ERR_RMA_ATTACH 46
MPI_ERR_RMA_CONFLICT 47
MPI_ERR_RMA_RANGE 48
MPI_ERR_RMA_SHARED 49
MPI_ERR_RMA_SYNC 50
MPI_ERR_SERVICE 51
MPI_ERR_SIZE 52
MPI_ERR_SPAWN 53
MPI_ERR_UNSUPPORTED_DATAREP 54
MPI_ERR_UNSUPPORTED_OPERATION 55
MPI_ERR_WIN 56
MPI_ERR_RMA_FLAVOR 57
MPI_ERR_PROC_ABORTED 58
MPI_ERR_VALUE_TOO_LARGE 59
MPI_ERR_SESSION 60
MPI_ERR_ERRHANDLER 61
MPI_ERR_ABI 62
MPI_T_ERR_CANNOT_INIT 1001
MPI_T_ERR_NOT_ACCESSIBLE 1002
MPI_T_ERR_NOT_INITIALIZED 1003
MPI_T_ERR_NOT_SUPPORTED 1004
MPI_T_ERR_MEMORY 1005
MPI_T_ERR_INVALID 1006
MPI_T_ERR_INVALID_INDEX 1007
MPI_T_ERR_INVALID_ITEM 1008
MPI_T_ERR_INVALID_SESSION 1009
MPI_T_ERR_INVALID_HANDLE 1010
MPI_T_ERR_INVALID_NAME 1011
MPI_T_ERR_OUT_OF_HANDLES 1012
MPI_T_ERR_OUT_OF_SESSIONS 1013
MPI_T_ERR_CVAR_SET_NOT_NOW 1014
MPI_T_ERR_CVAR_SET_NEVER 1015
MPI_T_ERR_PVAR_NO_WRITE 1016
MPI_T_ERR_PVAR_NO_STARTSTOP 1017
MPI_T_ERR_PVAR_NO_ATOMIC 1018
MPI_ERR_LASTCODE 0x3fff
MPI_BOTTOM 0
MPI_IN_PLACE 1
MPI_BUFFER_AUTOMATIC 2
MPI_ARGV_NULL 0
MPI_ARGVS_NULL 0
MPI_ERRCODES_IGNORE 0
MPI_STATUS_IGNORE 0
MPI_STATUSES_IGNORE 0
MPI_UNWEIGHTED 10
MPI_WEIGHTS_EMPTY 11
MPI_MAX_DATAREP_STRING 128
MPI_MAX_ERROR_STRING 512
MPI_MAX_INFO_KEY 256
MPI_MAX_INFO_VAL 1024
MPI_MAX_LIBRARY_VERSION_STRING 8192
MPI_MAX_OBJECT_NAME 128
MPI_MAX_PORT_NAME 1024
MPI_MAX_PROCESSOR_NAME 256
MPI_MAX_STRINGTAG_LEN 1024
MPI_MAX_PSET_NAME_LEN 1024
MPI_BSEND_OVERHEAD 512
MPI_MODE_APPEND 1
MPI_MODE_CREATE 2
MPI_MODE_DELETE_ON_CLOSE 4
MPI_MODE_EXCL 8
MPI_MODE_RDONLY 16
MPI_MODE_RDWR 32
MPI_MODE_SEQUENTIAL 64
MPI_MODE_UNIQUE_OPEN 128
MPI_MODE_WRONLY 256
MPI_MODE_NOCHECK 1024
MPI_MODE_NOPRECEDE 2048
MPI_MODE_NOPUT 4096
MPI_MODE_NOSTORE 8192
MPI_MODE_NOSUCCEED 16384
MPI_ANY_SOURCE -1
MPI_ANY_TAG -2
MPI_PROC_NULL -3
MPI_ROOT -4
MPI_UNDEFINED -32766
MPI_THREAD_SINGLE 0
MPI_THREAD_FUNNELED 1024
MPI_THREAD_SERIALIZED 2048
MPI_THREAD_MULTIPLE 4096
MPI_ORDER_C 12
MPI_ORDER_FORTRAN 15
MPI_DISTRIBUTE_NONE 16
MPI_DISTRIBUTE_BLOCK 17
MPI_DISTRIBUTE_CYCLIC 18
MPI_DISTRIBUTE_DFLT_DARG 19
MPI_COMBINER_NAMED 101
MPI_COMBINER_DUP 102
MPI_COMBINER_CONTIGUOUS 103
MPI_COMBINER_VECTOR 104
MPI_COMBINER_HVECTOR 105
MPI_COMBINER_INDEXED 106
MPI_COMBINER_HINDEXED 107
MPI_COMBINER_INDEXED_BLOCK 108
MPI_COMBINER_HINDEXED_BLOCK 109
MPI_COMBINER_STRUCT 110
MPI_COMBINER_SUBARRAY 111
MPI_COMBINER_DARRAY 112
MPI_COMBINER_F90_INTEGER 113
MPI_COMBINER_F90_REAL 114
MPI_COMBINER_F90_COMPLEX 115
MPI_COMBINER_RESIZED 116
MPI_COMBINER_VALUE_INDEX 117
MPIX_TYPECLASS_LOGICAL 191
MPI_TYPECLASS_INTEGER 192
MPI_TYPECLASS_REAL 193
MPI_TYPECLASS_COMPLEX 194
MPI_IDENT 201
MPI_CONGRUENT 202
MPI_SIMILAR 203
MPI_UNEQUAL 204
MPI_CART 211
MPI_GRAPH 212
MPI_DIST_GRAPH 213
MPI_COMM_TYPE_SHARED 221
MPI_COMM_TYPE_HW_UNGUIDED 222
MPI_COMM_TYPE_HW_GUIDED 223
MPI_COMM_TYPE_RESOURCE_GUIDED 224
MPI_LOCK_EXCLUSIVE 301
MPI_LOCK_SHARED 302
MPI_WIN_FLAVOR_CREATE 311
MPI_WIN_FLAVOR_ALLOCATE 312
MPI_WIN_FLAVOR_DYNAMIC 313
MPI_WIN_FLAVOR_SHARED 314
MPI_WIN_UNIFIED 321
MPI_WIN_SEPARATE 322
MPI_SEEK_SET 401
MPI_SEEK_CUR 402
MPI_SEEK_END 403
MPI_DISPLACEMENT_CURRENT -1
MPI_KEYVAL_INVALID 0
MPI_TAG_UB 501
MPI_IO 502
MPI_HOST 503
MPI_WTIME_IS_GLOBAL 504
MPI_UNIVERSE_SIZE 505
MPI_APPNUM 506
MPI_LASTUSEDCODE 507
MPI_WIN_BASE 601
MPI_WIN_DISP_UNIT 602
MPI_WIN_SIZE 603
MPI_WIN_CREATE_FLAVOR 604
MPI_WIN_MODEL 605
MPI_NULL_COPY_FN 0
MPI_DUP_FN 1
MPI_NULL_DELETE_FN 0
MPI_COMM_NULL_COPY_FN 0
MPI_COMM_DUP_FN 1
MPI_COMM_NULL_DELETE_FN 0
MPI_TYPE_NULL_COPY_FN 0
MPI_TYPE_DUP_FN 1
MPI_TYPE_NULL_DELETE_FN 0
MPI_WIN_NULL_COPY_FN 0
MPI_WIN_DUP_FN 1
MPI_WIN_NULL_DELETE_FN 0
MPI_CONVERSION_FN_NULL 0
MPI_CONVERSION_FN_NULL_C 0
MPI_T_ENUM_NULL 0
MPI_T_CVAR_HANDLE_NULL 0
MPI_T_PVAR_SESSION_NULL 0
MPI_T_PVAR_HANDLE_NULL 0
MPI_T_PVAR_ALL_HANDLES 1
MPI_T_CB_REQUIRE_NONE 0
MPI_T_CB_REQUIRE_MPI_RESTRICTED 3
MPI_T_CB_REQUIRE_THREAD_SAFE 15
MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE 63
MPI_T_SOURCE_ORDERED 1
MPI_T_SOURCE_UNORDERED 2
MPI_T_VERBOSITY_USER_BASIC 9
MPI_T_VERBOSITY_USER_DETAIL 10
MPI_T_VERBOSITY_USER_ALL 12
MPI_T_VERBOSITY_TUNER_BASIC 17
MPI_T_VERBOSITY_TUNER_DETAIL 18
MPI_T_VERBOSITY_TUNER_ALL 20
MPI_T_VERBOSITY_MPIDEV_BASIC 33
MPI_T_VERBOSITY_MPIDEV_DETAIL 34
MPI_T_VERBOSITY_MPIDEV_ALL 36
MPI_T_BIND_NO_OBJECT 1
MPI_T_BIND_MPI_COMM 2
MPI_T_BIND_MPI_DATATYPE 3
MPI_T_BIND_MPI_ERRHANDLER 4
MPI_T_BIND_MPI_FILE 5
MPI_T_BIND_MPI_GROUP 6
MPI_T_BIND_MPI_OP 7
MPI_T_BIND_MPI_REQUEST 8
MPI_T_BIND_MPI_WIN 9
MPI_T_BIND_MPI_MESSAGE 10
MPI_T_BIND_MPI_INFO 11
MPI_T_BIND_MPI_SESSION 12
MPI_T_SCOPE_CONSTANT 1
MPI_T_SCOPE_READONLY 2
MPI_T_SCOPE_LOCAL 3
MPI_T_SCOPE_GROUP 4
MPI_T_SCOPE_GROUP_EQ 5
MPI_T_SCOPE_ALL 6
MPI_T_SCOPE_ALL_EQ 7
MPI_T_PVAR_CLASS_STATE 1
MPI_T_PVAR_CLASS_LEVEL 2
MPI_T_PVAR_CLASS_SIZE 3
MPI_T_PVAR_CLASS_PERCENTAGE 4
MPI_T_PVAR_CLASS_HIGHWATERMARK 5
MPI_T_PVAR_CLASS_LOWWATERMARK 6
MPI_T_PVAR_CLASS_COUNTER 7
MPI_T_PVAR_CLASS_AGGREGATE 8
MPI_T_PVAR_CLASS_TIMER 9
MPI_T_PVAR_CLASS_GENERIC 10
sizeof(MPI_Status) 32
offsetof(MPI_Status,MPI_SOURCE) 0
offsetof(MPI_Status,MPI_TAG) 4
offsetof(MPI_Status,MPI_ERROR) 8
sizeof(MPI_Aint) 8
sizeof(MPI_Offset) 8
sizeof(MPI_Count) 8
sizeof(MPI_Comm) 8
sizeof(MPI_Datatype) 8
sizeof(MPI_Request) 8
sizeof(MPI_File) 8
TABLE
{
    echo '#include <mpi.h>'
    echo '#include <stdio.h>'
    echo '#include <stddef.h>'
    echo 'int main(void) {'
    while read -r name _; do
        echo "    printf(\"%s %lld\\n\", \"$name\", (long long)(intptr_t)($name));"
    done <"$WORK/expected"
    echo '    return 0; }'
} >"$WORK/probe.c"
mkdir -p "$WORK/inc"
cp include/mpi_abi.h "$WORK/inc/mpi.h"
if $CC -std=c11 -Wall -Werror -I"$WORK/inc" -o "$WORK/probe" "$WORK/probe.c" 2>"$WORK/probe.err"; then
    "$WORK/probe" >"$WORK/got"
    # Expected values may be written in hex: normalise to decimal.
    while read -r n v; do printf '%s %d\n' "$n" "$v"; done <"$WORK/expected" >"$WORK/want"
    if diff "$WORK/want" "$WORK/got" >"$WORK/diff"; then
        echo "PASS (a) $(wc -l <"$WORK/want") values and sizes of include/mpi_abi.h are the standard's"
    else
        fail "(a) include/mpi_abi.h differs from the standard (want / got):"; cat "$WORK/diff"
    fi
else
    fail "(a) the probe does not compile against include/mpi_abi.h:"; head -20 "$WORK/probe.err"
fi
# The standard's rule for fixed-size datatypes: size = 1 << ((handle >> 3) & 7).
for t in INT8_T:1 UINT8_T:1 CHAR:1 BYTE:1 INT16_T:2 INT32_T:4 UINT64_T:8 INTEGER4:4 REAL8:8 COMPLEX16:16 COMPLEX32:32; do
    v=$(awk -v n="MPI_${t%%:*}" '$1==n {print $2}' "$WORK/expected")
    [[ $(( 1 << ((v >> 3) & 7) )) -eq ${t##*:} ]] || fail "(a) MPI_${t%%:*} = $v does not encode its size ${t##*:}"
done

# ---- (b) the library
soname=$(readelf -d "$LIB" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[[ $soname == libmpi_abi.so.1 ]] || fail "(b) SONAME of $LIB is '$soname', not libmpi_abi.so.1"
readelf -d "$LIB" | grep -q 'NEEDED.*\[libmpi.so.12\]' || fail "(b) $LIB does not NEED libmpi.so.12"
# Under this ABI the layer's MPI_X/PMPI_X come first: a wrapper reaching one through the GOT recurses.
scripts/check-got-recursion.py "$PREFIX/lib/liboxmpi.so" "$LIB" ||
    fail "(b) an ox*_MPI_*, MPI_* or PMPI_* function calls an MPI_/PMPI_ function through the GOT/PLT (above)"
grep -oE '^(int|double|MPI_Aint|MPI_[A-Za-z]+) P?MPI_[A-Za-z0-9_]+\(' include/mpi_abi.h | sed 's/.* //; s/($//' | sort -u >"$WORK/declared"
nm -D --defined-only "$LIB" | awk '$2 == "T" {print $3}' | sort -u >"$WORK/exported"
missing=$(comm -23 "$WORK/declared" "$WORK/exported")
[[ -z $missing ]] || fail "(b) declared in mpi_abi.h but not exported by libmpi_abi.so.1: $(echo $missing | head -c 600)"
extra=$(comm -13 "$WORK/declared" "$WORK/exported")
[[ -z $extra ]] || fail "(b) exported by libmpi_abi.so.1 but not declared in mpi_abi.h: $(echo $extra | head -c 600)"
{
    echo '#include <stdio.h>'
    sed 's/.*/extern void &(void);/' "$WORK/declared"
    echo 'void *const all[] = {'
    sed 's/.*/    (void *)\&&,/' "$WORK/declared"
    echo '};'
    echo 'int main(void) { printf("%zu\n", sizeof all / sizeof all[0]); return 0; }'
} >"$WORK/link.c"
if $CC -o "$WORK/link" "$WORK/link.c" -L"$PREFIX/lib" -lmpi_abi -Wl,-rpath,"$PREFIX/lib" -Wl,-z,now 2>"$WORK/link.err" &&
    n=$(LD_BIND_NOW=1 "$WORK/link"); then
    [[ -z $missing && -z $extra ]] && echo "PASS (b) libmpi_abi.so.1: SONAME, NEEDED libmpi.so.12, all $n functions of mpi_abi.h exported and resolved"
else
    fail "(b) a program using every function does not link or load:"; head -20 "$WORK/link.err"
fi

# ---- (c) generated files are current
mkdir -p "$WORK/gen/include" "$WORK/gen/src/abi5" "$WORK/gen/c-src" "$WORK/gen/docs" "$WORK/gen/scripts"
cp include/mpi.h include/mpi_abi.h "$WORK/gen/include/"
cp scripts/gen-mpi-abi.py "$WORK/gen/scripts/"
python3 "$WORK/gen/scripts/gen-mpi-abi.py" 2>/dev/null
stale=""
for f in src/abi5/wrappers.rs src/abi5/tables.rs c-src/mpi_abi_entry.S include/mpi_abi.h docs/MPI_ABI_UNSUPPORTED.md; do
    cmp -s "$f" "$WORK/gen/$f" || stale="$stale $f"
done
if [[ -z $stale ]]; then
    echo "PASS (c) generated files are current"
else
    fail "(c) stale:$stale; run python3 scripts/gen-mpi-abi.py and commit"
fi

if [[ $FAILED -ne 0 ]]; then echo "check-mpi-abi: FAIL"; exit 1; fi
echo "check-mpi-abi: PASS"
