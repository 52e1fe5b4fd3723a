//! MPICH's handle values stay in the ABI layers (`src/abi`, `src/ffi`, `src/fortran`, and `src/abi5`,
//! whose tables map the MPI-5 standard ABI's handles to them): no other
//! source file spells one as a number. `tests/layers.rs` already keeps the engine from importing
//! `crate::abi`; this catches the other way the values leaked before, re-declaring them as hex
//! literals (`const MPI_BAND: i32 = 0x58000006`).
mod common;
use common::rust_files;
use oxmpi::abi;
use std::path::Path;

/// Every predefined handle of the MPICH ABI, by name.
fn handles() -> Vec<(String, u32)> {
    let mut v: Vec<(String, u32)> = Vec::new();
    v.extend(abi::datatypes::BUILTIN.iter().map(|&(h, n)| (n.to_string(), h as u32)));
    v.extend(abi::datatypes::PAIRS.iter().map(|&(h, n, _)| (n.to_string(), h as u32)));
    v.extend(abi::ops::OPS.iter().map(|&(h, op)| (op.name().to_string(), h as u32)));
    for (n, h) in [
        ("MPI_COMM_WORLD", abi::MPI_COMM_WORLD),
        ("MPI_COMM_SELF", abi::MPI_COMM_SELF),
        ("MPI_COMM_NULL", abi::MPI_COMM_NULL),
        ("MPI_GROUP_EMPTY", abi::MPI_GROUP_EMPTY),
        ("MPI_ERRORS_ARE_FATAL", abi::MPI_ERRORS_ARE_FATAL),
        ("MPI_ERRORS_RETURN", abi::MPI_ERRORS_RETURN),
        ("MPI_ERRORS_ABORT", abi::MPI_ERRORS_ABORT),
        ("MPI_OP_NULL", abi::MPI_OP_NULL),
        ("MPI_INFO_ENV", abi::MPI_INFO_ENV),
        ("MPI_REQUEST_NULL", abi::MPI_REQUEST_NULL),
        ("MPI_WIN_BASE", abi::MPI_WIN_BASE),
        ("MPI_WIN_SIZE", abi::MPI_WIN_SIZE),
        ("MPI_TAG_UB", abi::MPI_TAG_UB),
    ] {
        v.push((n.to_string(), h as u32));
    }
    v
}


/// The values of the hexadecimal literals of `line` (comments excluded).
fn hex_literals(line: &str) -> Vec<u64> {
    let code = line.split("//").next().unwrap_or("");
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("0x") {
        let digits: String = rest[i + 2..].chars().take_while(|c| c.is_ascii_hexdigit() || *c == '_').filter(|c| *c != '_').collect();
        if let Ok(v) = u64::from_str_radix(&digits, 16) {
            out.push(v);
        }
        rest = &rest[i + 2..];
    }
    out
}

#[test]
fn no_mpich_handle_value_below_the_boundary() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let handles = handles();
    assert!(handles.len() > 60);
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut found = Vec::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap().to_string_lossy().to_string();
        if ["abi/", "abi5/", "abi_ompi/", "ffi/", "fortran/", "bin/"].iter().any(|p| rel.starts_with(p)) {
            continue;
        }
        for (i, line) in std::fs::read_to_string(&f).unwrap().lines().enumerate() {
            for v in hex_literals(line) {
                if let Some((name, _)) = handles.iter().find(|(_, h)| *h as u64 == v) {
                    found.push(format!("src/{rel}:{}: 0x{v:08x} is {name}", i + 1));
                }
            }
        }
    }
    assert!(found.is_empty(), "MPICH handle values outside src/abi and src/ffi (use the engine's types; the boundary maps them):\n  {}", found.join("\n  "));
}

#[test]
fn the_scanner_sees_literals() {
    assert_eq!(hex_literals("const X: i32 = 0x5800_0006; // 0x4c000405"), [0x58000006]);
}
