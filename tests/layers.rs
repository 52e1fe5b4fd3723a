//! The layer check: every top-level module of `src/` imports only modules of lower layers
//! (docs/ARCHITECTURE.md draws them). It reads the sources, not the compiler's view: every
//! `crate::name` path (in `use` lines, in `crate::{a, b}` groups and inline) counts as an edge
//! from the file's top-level module to `name`. Comments do not count.
//!
//! A module may import a module only of a strictly lower layer: modules on one layer never import
//! each other, so no cycle can form. There is no exception list.
mod common;
use common::rust_files;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top-level modules and their layers, bottom first.
const LAYERS: &[(&str, u32)] = &[
    // The engine's own error type.
    ("error", 0),
    // Launch environment, the job segment, waiting, fibers, the threads-mode job.
    ("runtime", 1),
    // Building blocks that know nothing of communicators.
    ("transport", 2),
    ("datatype", 2),
    ("clairvoyant", 2),
    ("info", 2),
    ("group", 2),
    ("topo", 2),
    ("monitoring", 2),
    // Matching, requests, send modes over a transport; reduction kernels on the predefined types.
    ("p2p", 3),
    ("op", 3),
    // MPI-4 sessions: a rank's session table and its process sets (info objects for them).
    ("session", 3),
    // Communicator objects, their table and context ids, attributes; the rank's universe.
    ("comm", 4),
    // Collective algorithms over point-to-point on a communicator.
    ("coll", 5),
    // Communicator constructors: they agree on context ids with collectives.
    ("construct", 6),
    // What is built on collectives and constructors: fault tolerance, one-sided, MPI-IO.
    ("ulfm", 7),
    ("osc", 7),
    // MPI-IO: files opened collectively, collective buffering over the collectives.
    ("io", 7),
    // The object registry of an MPI instance and its life cycle (MPI_Init .. MPI_Finalize, and
    // the sessions that also bring it up).
    ("instance", 8),
    // The tools interface reads every layer's counters.
    ("mpit", 9),
    // The MPICH ABI: handle values and constants, the C boundary, the Fortran boundary.
    ("abi", 10),
    ("ffi", 11),
    ("fortran", 12),
    // The MPI-5 standard ABI: a second C boundary, converting to the MPICH one.
    ("abi5", 12),
    // Open MPI 4.1's ABI: a third C boundary, converting to the MPICH one; it shares the MPI-5
    // layer's ABI-independent helpers (array lengths, peers).
    ("abi_ompi", 13),
    // The threads-mode host's C entry points, which wire both boundaries to each rank's program.
    ("threads_host", 14),
];


fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// `text` without comments (line, block and doc comments) and without string literals, which may
/// mention `crate::` paths.
fn strip(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if b[i] == b'"' && (i == 0 || b[i - 1] != b'\'') {
            // A string literal (raw strings in this tree hold no quotes of their own kind).
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else {
            let ch = text[i..].chars().next().unwrap();
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

fn ident_at(s: &str) -> &str {
    let end = s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(s.len());
    &s[..end]
}

/// The top-level modules a file's text names through `crate::`.
fn imports(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(p) = rest.find("crate::") {
        // `$crate::` in a macro is the same crate.
        let after = &rest[p + "crate::".len()..];
        let before_ok = p == 0 || {
            let c = rest.as_bytes()[p - 1];
            !(c.is_ascii_alphanumeric() || c == b'_')
        };
        if before_ok {
            if let Some(group) = after.strip_prefix('{') {
                // A `crate::{a::x, b}` group: the first name of every top-level item.
                let mut depth = 1;
                let mut item_start = true;
                for (k, c) in group.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        ',' if depth == 1 => item_start = true,
                        c if c.is_whitespace() => {}
                        _ if item_start && depth == 1 => {
                            item_start = false;
                            let name = ident_at(&group[k..]);
                            if !name.is_empty() {
                                out.insert(name.to_string());
                            }
                        }
                        _ => {}
                    }
                }
            } else {
                let name = ident_at(after);
                if !name.is_empty() {
                    out.insert(name.to_string());
                }
            }
        }
        rest = after;
    }
    out
}


/// Every edge between distinct top-level modules, with the files that make it.
fn edges() -> BTreeMap<(String, String), BTreeSet<String>> {
    let src = src_dir();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut out: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap();
        let first = rel.components().next().unwrap().as_os_str().to_str().unwrap().to_string();
        // The binaries are crates of their own, where `crate::` means themselves.
        if first == "bin" || first == "lib.rs" {
            continue;
        }
        let module = first.trim_end_matches(".rs").to_string();
        let text = strip(&std::fs::read_to_string(&f).unwrap());
        for to in imports(&text) {
            if to != module {
                out.entry((module.clone(), to)).or_default().insert(rel.display().to_string());
            }
        }
    }
    out
}

fn layer(m: &str) -> Option<u32> {
    LAYERS.iter().find(|(n, _)| *n == m).map(|&(_, l)| l)
}

#[test]
fn every_module_has_a_layer() {
    let lib = std::fs::read_to_string(src_dir().join("lib.rs")).unwrap();
    let declared: Vec<&str> = lib.lines().filter_map(|l| l.trim().strip_prefix("pub mod ").or_else(|| l.trim().strip_prefix("pub(crate) mod ")).or_else(|| l.trim().strip_prefix("mod "))).map(|l| l.trim_end_matches(';')).collect();
    assert!(!declared.is_empty());
    for m in &declared {
        assert!(layer(m).is_some(), "src/lib.rs declares module `{m}`, which has no layer in tests/layers.rs LAYERS: give it one (docs/ARCHITECTURE.md)");
    }
    for (m, _) in LAYERS {
        assert!(declared.contains(m), "tests/layers.rs LAYERS names `{m}`, which src/lib.rs does not declare");
    }
}

#[test]
fn modules_import_only_lower_layers() {
    let mut problems = Vec::new();
    for ((from, to), files) in edges() {
        let (Some(lf), Some(lt)) = (layer(&from), layer(&to)) else { continue };
        if lt < lf {
            continue;
        }
        let files: Vec<_> = files.into_iter().collect();
        problems.push(format!("`{from}` (layer {lf}) imports `{to}` (layer {lt}) in {}", files.join(", ")));
    }
    assert!(problems.is_empty(), "layer violations (see docs/ARCHITECTURE.md):\n  {}", problems.join("\n  "));
}

/// The shared-memory transport's mechanisms (its rings, process_vm_readv/writev) are its own:
/// every other module goes through the `transport::Transport` trait, so another transport
/// replaces them without touching p2p, coll or osc (docs/ARCHITECTURE.md, "the transport seam").
#[test]
fn only_the_transport_names_its_mechanisms() {
    let src = src_dir();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut problems = Vec::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap();
        if rel.starts_with("transport") {
            continue;
        }
        let text = strip(&std::fs::read_to_string(&f).unwrap());
        for m in ["transport::cma", "transport::ring"] {
            if text.contains(m) {
                problems.push(format!("{} names `{m}`", rel.display()));
            }
        }
    }
    assert!(problems.is_empty(), "use the Transport trait instead:\n  {}", problems.join("\n  "));
}

#[test]
fn the_parser_sees_groups_and_paths() {
    let t = strip("use crate::{a::x, b, c::{d, e}};\n// crate::hidden\nfn f() { crate::g::h(); let s = \"crate::str\"; }");
    let got: Vec<String> = imports(&t).into_iter().collect();
    assert_eq!(got, ["a", "b", "c", "g"]);
}
