//! The Rust mirror of the ABI (`src/abi/`) must equal `include/mpi.h`: this test compiles a C probe
//! against the header with the system C compiler (`$CC`, default `cc`), runs it and compares every
//! value with the Rust constant of the same name. It also fails if `src/abi/` gains an `MPI_`
//! constant that is not listed here, so new constants cannot escape the comparison.
use oxmpi::abi::{self, datatypes, mpit};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Command;

/// Rust constants that intentionally have no macro of the same name in mpi.h.
const NOT_IN_HEADER: &[(&str, &str)] = &[("MPI_TAG_UB_VALUE", "the value of the MPI_TAG_UB attribute, not a macro")];

macro_rules! values {
    ($($path:ident :: $name:ident),* $(,)?) => { vec![$((stringify!($name), $path::$name as i64)),*] };
}

fn rust_values() -> Vec<(&'static str, i64)> {
    values![
        abi::MPI_COMM_NULL, abi::MPI_COMM_WORLD, abi::MPI_COMM_SELF, abi::MPI_GROUP_NULL, abi::MPI_GROUP_EMPTY,
        abi::MPI_DATATYPE_NULL, abi::MPI_ERRHANDLER_NULL, abi::MPI_ERRORS_ARE_FATAL, abi::MPI_ERRORS_RETURN,
        abi::MPI_ERRORS_ABORT, abi::MPI_OP_NULL, abi::MPI_INFO_NULL, abi::MPI_INFO_ENV, abi::MPI_WIN_NULL,
        abi::MPI_KEYVAL_INVALID, abi::MPI_REQUEST_NULL, abi::MPI_MESSAGE_NULL, abi::MPI_MESSAGE_NO_PROC,
        abi::MPI_SESSION_NULL, abi::MPI_PROC_NULL, abi::MPI_ANY_SOURCE, abi::MPI_ROOT, abi::MPI_ANY_TAG,
        abi::MPI_UNDEFINED, abi::MPI_COMM_TYPE_SHARED, abi::MPI_COMM_TYPE_HW_GUIDED, abi::MPI_COMM_TYPE_HW_UNGUIDED,
        abi::MPI_COMM_TYPE_RESOURCE_GUIDED,
        abi::MPI_TAG_UB_VALUE, abi::MPI_THREAD_SINGLE, abi::MPI_THREAD_FUNNELED,
        abi::MPI_THREAD_SERIALIZED, abi::MPI_THREAD_MULTIPLE, abi::MPI_MAX_PROCESSOR_NAME,
        abi::MPI_MAX_LIBRARY_VERSION_STRING, abi::MPI_MAX_ERROR_STRING, abi::MPI_MAX_OBJECT_NAME,
        abi::MPI_MAX_STRINGTAG_LEN, abi::MPI_MAX_PSET_NAME_LEN,
        abi::MPI_MAX_INFO_KEY, abi::MPI_MAX_INFO_VAL, abi::MPI_ERR_INFO, abi::MPI_ERR_INFO_KEY,
        abi::MPI_ERR_INFO_VALUE, abi::MPI_ERR_INFO_NOKEY,
        abi::MPI_BSEND_OVERHEAD, abi::MPI_VERSION, abi::MPI_SUBVERSION, abi::MPI_IDENT, abi::MPI_CONGRUENT,
        abi::MPI_SIMILAR, abi::MPI_UNEQUAL, abi::MPI_SUCCESS, abi::MPI_ERR_BUFFER, abi::MPI_ERR_COUNT,
        abi::MPI_ERR_TYPE, abi::MPI_ERR_TAG, abi::MPI_ERR_COMM, abi::MPI_ERR_RANK, abi::MPI_ERR_ROOT,
        abi::MPI_ERR_GROUP, abi::MPI_ERR_OP, abi::MPI_ERR_TOPOLOGY, abi::MPI_ERR_DIMS, abi::MPI_ERR_FILE, abi::MPI_ERR_ARG,
        abi::MPI_ERR_UNKNOWN, abi::MPI_ERR_TRUNCATE, abi::MPI_ERR_OTHER, abi::MPI_ERR_INTERN,
        abi::MPI_ERR_IN_STATUS, abi::MPI_ERR_PENDING, abi::MPI_ERR_REQUEST, abi::MPI_ERR_NO_MEM,
        abi::MPI_ERR_UNSUPPORTED_OPERATION, abi::MPI_ERR_SPAWN, abi::MPI_ERR_WIN, abi::MPI_ERR_KEYVAL, abi::MPI_ERR_SESSION,
        abi::MPI_ERR_PROC_ABORTED, abi::MPI_ERR_VALUE_TOO_LARGE, abi::MPI_ERR_ERRHANDLER, abi::MPI_ERR_ABI, abi::MPI_T_ERR_INVALID,
        abi::MPI_ERR_LASTCODE, abi::MPI_ERR_UNSUPPORTED_DATAREP, abi::MPI_ERR_FILE,
        abi::MPIX_ERR_PROC_FAILED, abi::MPIX_ERR_PROC_FAILED_PENDING, abi::MPIX_ERR_REVOKED,
        abi::MPI_DISTRIBUTE_BLOCK, abi::MPI_DISTRIBUTE_CYCLIC, abi::MPI_DISTRIBUTE_NONE, abi::MPI_DISTRIBUTE_DFLT_DARG,
        abi::MPI_TYPECLASS_REAL, abi::MPI_TYPECLASS_INTEGER, abi::MPI_TYPECLASS_COMPLEX,
        abi::MPI_APPNUM, abi::MPI_ERR_ASSERT, abi::MPI_ERR_BASE, abi::MPI_ERR_DISP, abi::MPI_ERR_LOCKTYPE,
        abi::MPI_ERR_RMA_ATTACH, abi::MPI_ERR_RMA_FLAVOR, abi::MPI_ERR_RMA_RANGE, abi::MPI_ERR_RMA_SYNC,
        abi::MPI_ERR_SIZE, abi::MPI_HOST, abi::MPI_IO, abi::MPI_LASTUSEDCODE, abi::MPI_LOCK_EXCLUSIVE,
        abi::MPI_MODE_CREATE, abi::MPI_MODE_RDONLY, abi::MPI_MODE_WRONLY, abi::MPI_MODE_RDWR,
        abi::MPI_MODE_DELETE_ON_CLOSE, abi::MPI_MODE_UNIQUE_OPEN, abi::MPI_MODE_EXCL, abi::MPI_MODE_APPEND,
        abi::MPI_MODE_SEQUENTIAL, abi::MPI_SEEK_SET, abi::MPI_SEEK_CUR, abi::MPI_SEEK_END,
        abi::MPI_DISPLACEMENT_CURRENT, abi::MPI_MAX_DATAREP_STRING, abi::MPI_ERR_BAD_FILE, abi::MPI_ERR_IO,
        abi::MPI_LOCK_SHARED, abi::MPI_MODE_NOCHECK, abi::MPI_MODE_NOPRECEDE, abi::MPI_MODE_NOPUT,
        abi::MPI_MODE_NOSTORE, abi::MPI_MODE_NOSUCCEED, abi::MPI_TAG_UB, abi::MPI_UNIVERSE_SIZE,
        abi::MPI_WIN_BASE, abi::MPI_WIN_CREATE_FLAVOR, abi::MPI_WIN_DISP_UNIT, abi::MPI_WIN_FLAVOR_ALLOCATE,
        abi::MPI_WIN_FLAVOR_CREATE, abi::MPI_WIN_FLAVOR_DYNAMIC, abi::MPI_WIN_FLAVOR_SHARED,
        abi::MPI_WIN_MODEL, abi::MPI_WIN_SEPARATE, abi::MPI_WIN_SIZE, abi::MPI_WIN_UNIFIED,
        abi::MPI_WTIME_IS_GLOBAL,
        datatypes::MPI_BYTE, datatypes::MPI_INT, datatypes::MPI_CHAR, datatypes::MPI_DOUBLE, datatypes::MPI_PACKED,
        mpit::MPI_T_VERBOSITY_USER_BASIC, mpit::MPI_T_VERBOSITY_USER_DETAIL, mpit::MPI_T_VERBOSITY_USER_ALL,
        mpit::MPI_T_VERBOSITY_TUNER_BASIC, mpit::MPI_T_VERBOSITY_TUNER_DETAIL, mpit::MPI_T_VERBOSITY_TUNER_ALL,
        mpit::MPI_T_VERBOSITY_MPIDEV_BASIC, mpit::MPI_T_VERBOSITY_MPIDEV_DETAIL, mpit::MPI_T_VERBOSITY_MPIDEV_ALL,
        mpit::MPI_T_BIND_NO_OBJECT, mpit::MPI_T_BIND_MPI_COMM, mpit::MPI_T_BIND_MPI_DATATYPE,
        mpit::MPI_T_BIND_MPI_ERRHANDLER, mpit::MPI_T_BIND_MPI_FILE, mpit::MPI_T_BIND_MPI_GROUP, mpit::MPI_T_BIND_MPI_OP,
        mpit::MPI_T_BIND_MPI_REQUEST, mpit::MPI_T_BIND_MPI_WIN, mpit::MPI_T_BIND_MPI_MESSAGE, mpit::MPI_T_BIND_MPI_INFO,
        mpit::MPI_T_BIND_MPI_SESSION,
        mpit::MPI_T_SCOPE_CONSTANT, mpit::MPI_T_SCOPE_READONLY, mpit::MPI_T_SCOPE_LOCAL, mpit::MPI_T_SCOPE_GROUP,
        mpit::MPI_T_SCOPE_GROUP_EQ, mpit::MPI_T_SCOPE_ALL, mpit::MPI_T_SCOPE_ALL_EQ,
        mpit::MPI_T_PVAR_CLASS_STATE, mpit::MPI_T_PVAR_CLASS_LEVEL, mpit::MPI_T_PVAR_CLASS_SIZE,
        mpit::MPI_T_PVAR_CLASS_PERCENTAGE, mpit::MPI_T_PVAR_CLASS_HIGHWATERMARK, mpit::MPI_T_PVAR_CLASS_LOWWATERMARK,
        mpit::MPI_T_PVAR_CLASS_COUNTER, mpit::MPI_T_PVAR_CLASS_AGGREGATE, mpit::MPI_T_PVAR_CLASS_TIMER,
        mpit::MPI_T_PVAR_CLASS_GENERIC,
    ]
}

/// Names of the `pub const MPI_*`/`MPIX_*` items declared in a source file.
fn declared_consts(file: &str) -> BTreeSet<String> {
    let src = std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(file)).unwrap();
    src.lines()
        .filter_map(|l| l.trim().strip_prefix("pub const "))
        .map(|r| r.split(|c: char| c == ':' || c.is_whitespace()).next().unwrap().to_string())
        .filter(|n| n.starts_with("MPI_") || n.starts_with("MPIX_"))
        .collect()
}

/// Constants that mpi.h declares as enumerators, not macros (so `#ifdef` cannot see them).
const ENUMERATORS: &[&str] = &[
    "MPI_WIN_FLAVOR_CREATE",
    "MPI_WIN_FLAVOR_ALLOCATE",
    "MPI_WIN_FLAVOR_DYNAMIC",
    "MPI_WIN_FLAVOR_SHARED",
    "MPI_WIN_SEPARATE",
    "MPI_WIN_UNIFIED",
    "MPI_T_VERBOSITY_USER_BASIC", "MPI_T_VERBOSITY_USER_DETAIL", "MPI_T_VERBOSITY_USER_ALL",
    "MPI_T_VERBOSITY_TUNER_BASIC", "MPI_T_VERBOSITY_TUNER_DETAIL", "MPI_T_VERBOSITY_TUNER_ALL",
    "MPI_T_VERBOSITY_MPIDEV_BASIC", "MPI_T_VERBOSITY_MPIDEV_DETAIL", "MPI_T_VERBOSITY_MPIDEV_ALL",
    "MPI_T_BIND_NO_OBJECT", "MPI_T_BIND_MPI_COMM", "MPI_T_BIND_MPI_DATATYPE", "MPI_T_BIND_MPI_ERRHANDLER",
    "MPI_T_BIND_MPI_FILE", "MPI_T_BIND_MPI_GROUP", "MPI_T_BIND_MPI_OP", "MPI_T_BIND_MPI_REQUEST",
    "MPI_T_BIND_MPI_WIN", "MPI_T_BIND_MPI_MESSAGE", "MPI_T_BIND_MPI_INFO", "MPI_T_BIND_MPI_SESSION",
    "MPI_T_SCOPE_CONSTANT", "MPI_T_SCOPE_READONLY", "MPI_T_SCOPE_LOCAL", "MPI_T_SCOPE_GROUP",
    "MPI_T_SCOPE_GROUP_EQ", "MPI_T_SCOPE_ALL", "MPI_T_SCOPE_ALL_EQ",
    "MPI_T_PVAR_CLASS_STATE", "MPI_T_PVAR_CLASS_LEVEL", "MPI_T_PVAR_CLASS_SIZE", "MPI_T_PVAR_CLASS_PERCENTAGE",
    "MPI_T_PVAR_CLASS_HIGHWATERMARK", "MPI_T_PVAR_CLASS_LOWWATERMARK", "MPI_T_PVAR_CLASS_COUNTER",
    "MPI_T_PVAR_CLASS_AGGREGATE", "MPI_T_PVAR_CLASS_TIMER", "MPI_T_PVAR_CLASS_GENERIC",
];

/// Compiles and runs a probe printing `NAME VALUE` (or `NAME undefined`) for every name.
fn c_values(names: &BTreeSet<String>, extra: &str) -> BTreeMap<String, String> {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("abi_consts");
    std::fs::create_dir_all(&dir).unwrap();
    let mut c = String::from("#include <mpi.h>\n#include <stdio.h>\n#include <stddef.h>\n#include <stdint.h>\nint main(void) {\n");
    for n in names {
        if ENUMERATORS.contains(&n.as_str()) {
            c += &format!("    printf(\"{n} %lld\\n\", (long long)({n}));\n");
            continue;
        }
        c += &format!(
            "#ifdef {n}\n    printf(\"{n} %lld\\n\", (long long)(intptr_t)({n}));\n#else\n    printf(\"{n} undefined\\n\");\n#endif\n"
        );
    }
    c += extra;
    c += "    return 0;\n}\n";
    let src = dir.join("probe.c");
    let exe = dir.join("probe");
    std::fs::write(&src, c).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let include = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("include");
    let st = Command::new(&cc).arg("-std=c11").arg("-I").arg(&include).arg(&src).arg("-o").arg(&exe).status();
    assert!(st.map(|s| s.success()).unwrap_or(false), "compiling {} with {cc} failed", src.display());
    let out = Command::new(&exe).output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (k, v) = l.split_once(' ').unwrap();
            (k.to_string(), v.to_string())
        })
        .collect()
}

#[test]
fn rust_constants_equal_header() {
    let rust = rust_values();
    let listed: BTreeSet<String> = rust.iter().map(|(n, _)| n.to_string()).collect();
    let mut declared = declared_consts("src/abi/mod.rs");
    declared.extend(declared_consts("src/abi/datatypes.rs"));
    declared.extend(declared_consts("src/abi/mpit.rs"));
    let unlisted: Vec<_> = declared.difference(&listed).collect();
    assert!(unlisted.is_empty(), "add these src/abi constants to tests/abi_consts.rs: {unlisted:?}");

    // Everything with a C name: named constants, the datatype and error-class tables.
    let mut expected: BTreeMap<String, i64> = rust.iter().map(|(n, v)| (n.to_string(), *v)).collect();
    for &(h, n) in datatypes::BUILTIN {
        expected.insert(n.to_string(), h as i64);
    }
    for &(h, n, _) in datatypes::PAIRS {
        expected.insert(n.to_string(), h as i64);
    }
    for &(v, n, _) in abi::ERROR_CLASSES {
        expected.insert(n.to_string(), v as i64);
    }
    let names: BTreeSet<String> = expected.keys().cloned().collect();
    let extra = format!(
        "    printf(\"@STATUS_IGNORE %lld\\n\", (long long)(intptr_t)MPI_STATUS_IGNORE);\n\
         printf(\"@IN_PLACE %lld\\n\", (long long)(intptr_t)MPI_IN_PLACE);\n\
         printf(\"@sizeof_status %zu\\n\", sizeof(MPI_Status));\n\
         printf(\"@off_source %zu\\n\", offsetof(MPI_Status, MPI_SOURCE));\n\
         printf(\"@off_tag %zu\\n\", offsetof(MPI_Status, MPI_TAG));\n\
         printf(\"@off_error %zu\\n\", offsetof(MPI_Status, MPI_ERROR));\n\
         printf(\"@pair_sizes %zu,%zu,%zu,%zu,%zu\\n\", sizeof(struct {{float v; int i;}}), sizeof(struct {{double v; int i;}}), \
         sizeof(struct {{long v; int i;}}), sizeof(struct {{short v; int i;}}), sizeof(struct {{long double v; int i;}}));\n"
    );
    let c = c_values(&names, &extra);

    let mut failures = Vec::new();
    for (n, v) in &expected {
        match c.get(n).map(String::as_str) {
            Some("undefined") if NOT_IN_HEADER.iter().any(|e| e.0 == n) => {}
            Some(cv) if cv == v.to_string() => {}
            other => failures.push(format!("{n}: Rust {v:#x} ({v}), mpi.h {other:?}")),
        }
    }
    let (ign, inp) = (abi::STATUS_IGNORE_ADDR as i64, abi::IN_PLACE_ADDR as i64);
    for (k, want) in [
        ("@STATUS_IGNORE", ign.to_string()),
        ("@IN_PLACE", inp.to_string()),
        ("@sizeof_status", std::mem::size_of::<abi::MPI_Status>().to_string()),
        ("@off_source", std::mem::offset_of!(abi::MPI_Status, MPI_SOURCE).to_string()),
        ("@off_tag", std::mem::offset_of!(abi::MPI_Status, MPI_TAG).to_string()),
        ("@off_error", std::mem::offset_of!(abi::MPI_Status, MPI_ERROR).to_string()),
        ("@pair_sizes", datatypes::PAIRS.iter().map(|p| p.2.to_string()).collect::<Vec<_>>().join(",")),
    ] {
        if c.get(k) != Some(&want) {
            failures.push(format!("{k}: Rust {want}, C {:?}", c.get(k)));
        }
    }
    assert!(failures.is_empty(), "src/abi differs from include/mpi.h:\n  {}", failures.join("\n  "));
    eprintln!("abi_consts: {} Rust constants equal include/mpi.h", expected.len() + 7);
}
