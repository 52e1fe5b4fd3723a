//! `mpiexec --monitor FILE` end to end, in both rank modes: installs oxmpi into a temporary prefix
//! (`scripts/install.sh --no-build`, so run `cargo build --release` first, as `cargo test
//! --release` does), builds a C program with its mpicc in which rank i sends i+1 messages of 100
//! bytes to rank i+1 and rank 0 broadcasts, and checks the merged JSON exactly (p2p), the
//! broadcast in the collective matrix, the communicator counters, and `oxmpi-monitor` on it.
#[path = "../src/bin/oxmpi-monitor/json.rs"]
mod json;

use std::path::{Path, PathBuf};
use std::process::Command;

const PROGRAM: &str = r#"
#include <mpi.h>
#include <string.h>
int main(int argc, char **argv) {
    int rank, size, i; char buf[100];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    memset(buf, 0, sizeof buf);
    if (rank + 1 < size) for (i = 0; i <= rank; i++) MPI_Send(buf, 100, MPI_BYTE, rank + 1, 0, MPI_COMM_WORLD);
    if (rank > 0) for (i = 0; i < rank; i++) MPI_Recv(buf, 100, MPI_BYTE, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Bcast(buf, 64, MPI_BYTE, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
"#;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn run(c: &mut Command) -> String {
    let out = c.output().unwrap_or_else(|e| panic!("{c:?}: {e}"));
    assert!(out.status.success(), "{c:?} failed: {}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn matrix(doc: &json::Json, kind: &str, field: &str) -> Vec<Vec<u64>> {
    doc.get(kind).and_then(|k| k.get(field)).map(|m| m.matrix()).unwrap_or_default().into_iter().map(|r| r.into_iter().map(|x| x as u64).collect()).collect()
}

fn check(dir: &Path, prefix: &Path, prog: &Path, mode: &str) {
    let n = 4;
    let file = dir.join(format!("monitor-{mode}.json"));
    run(Command::new(prefix.join("bin/mpiexec")).args(["-n", &n.to_string(), "--mode", mode, "--monitor"]).arg(&file).arg(prog).env_remove("OXMPI_MONITORING"));
    let doc = json::parse(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(doc.get("ranks").unwrap().num() as usize, n);
    assert!(doc.get("missing_ranks").unwrap().arr().is_empty());
    let (count, bytes) = (matrix(&doc, "p2p", "count"), matrix(&doc, "p2p", "bytes"));
    for i in 0..n {
        for j in 0..n {
            let want = if j == i + 1 { i as u64 + 1 } else { 0 };
            assert_eq!(count[i][j], want, "{mode}: p2p messages {i} -> {j}");
            assert_eq!(bytes[i][j], 100 * want, "{mode}: p2p bytes {i} -> {j}");
        }
    }
    let hist = matrix(&doc, "p2p", "histogram");
    assert_eq!(hist[2][7], 3, "{mode}: rank 2's three 100-byte messages are in bucket 7 (64..127)");
    // The bcast reached every rank through collective transfers.
    let coll = matrix(&doc, "coll", "count");
    for j in 1..n {
        assert!(coll.iter().any(|row| row[j] > 0), "{mode}: nobody sent collective data to {j}");
    }
    assert!(matrix(&doc, "osc", "count").iter().flatten().all(|&x| x == 0));
    let world = doc.get("communicators").unwrap().arr().iter().find(|c| c.get("name").unwrap().str() == "MPI_COMM_WORLD").expect("MPI_COMM_WORLD listed");
    let o2a: Vec<u64> = world.get("o2a").unwrap().get("count").unwrap().arr().iter().map(|x| x.num() as u64).collect();
    assert_eq!(o2a, vec![1, 0, 0, 0], "{mode}: the root counts one one-to-all operation");
    let o2a_bytes = world.get("o2a").unwrap().get("bytes").unwrap().arr()[0].num() as u64;
    assert_eq!(o2a_bytes, 64 * (n as u64 - 1));
    let text = run(Command::new(env!("CARGO_BIN_EXE_oxmpi-monitor")).arg(&file).arg("--svg").arg(dir.join("m.svg")));
    assert!(text.contains("== p2p") && text.contains("MPI_COMM_WORLD"), "{text}");
    let svg = std::fs::read_to_string(dir.join("m.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("sender (world rank)") && svg.contains("1 -> 2: 200 B in 2 messages"), "svg");
}

#[test]
fn monitor_dump_both_modes() {
    let dir = std::env::temp_dir().join(format!("oxmpi-monitor-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let prefix = dir.join("p");
    run(Command::new(root().join("scripts/install.sh")).arg("--no-build").arg(&prefix));
    let src = dir.join("pattern.c");
    std::fs::write(&src, PROGRAM).unwrap();
    let prog = dir.join("pattern");
    run(Command::new(prefix.join("bin/mpicc")).arg(&src).arg("-o").arg(&prog));
    check(&dir, &prefix, &prog, "processes");
    check(&dir, &prefix, &prog, "threads");
    let _ = std::fs::remove_dir_all(&dir);
}
