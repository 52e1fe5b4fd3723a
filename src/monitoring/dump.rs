//! Writing a rank's counters out.
//!
//! * `mpiexec --monitor FILE` sets `OXMPI_MONITOR_DIR`; at MPI_Finalize each rank writes its rows
//!   there as `rank.<world rank>` (the line format below), and mpiexec merges the files into one
//!   JSON document for the whole job (`src/bin/mpiexec/monitor.rs`). Same in both rank modes.
//! * The `pml_monitoring_flush` performance variable writes `<name>.<world rank>.prof` in Open
//!   MPI's per-rank text format, so its scripts (`profile2mat.pl`) read it.
//!
//! Line format of `rank.<r>` (space separated, one record per line):
//! ```text
//! rank <r> <n>
//! <kind> count <n values>        kind: p2p | coll | osc_sent | osc_recv; value i = to world rank i
//! <kind> bytes <n values>
//! <kind> histogram <66 values>   summed over destinations
//! comm <context> <o2a count> <o2a bytes> <a2o count> <a2o bytes> <a2a count> <a2a bytes> <world ranks, comma separated> <name>
//! io <reads> <bytes read> <writes> <bytes written>
//! ```
use super::{Kind, Row, BUCKETS};
use std::fmt::Write as _;

pub const DIR_ENV: &str = "OXMPI_MONITOR_DIR";
pub const KIND_NAMES: [(Kind, &str); 4] = [(Kind::P2p, "p2p"), (Kind::Coll, "coll"), (Kind::OscSent, "osc_sent"), (Kind::OscRecv, "osc_recv")];

fn join(v: impl Iterator<Item = u64>) -> String {
    v.map(|x| x.to_string()).collect::<Vec<_>>().join(" ")
}

/// The line format of one rank's counters.
pub fn rank_lines(row: &Row, me: usize) -> String {
    let n = row.peers();
    let mut s = format!("rank {me} {n}\n");
    for (k, name) in KIND_NAMES {
        let _ = writeln!(s, "{name} count {}", join((0..n).map(|p| row.count(k, p))));
        let _ = writeln!(s, "{name} bytes {}", join((0..n).map(|p| row.bytes(k, p))));
        let mut h = [0u64; BUCKETS];
        for p in 0..n {
            for (a, b) in h.iter_mut().zip(row.histogram(k, p)) {
                *a += b;
            }
        }
        let _ = writeln!(s, "{name} histogram {}", join(h.into_iter()));
    }
    let (r, w) = (super::io::counters(me, n).get(super::io::Dir::Read), super::io::counters(me, n).get(super::io::Dir::Write));
    let _ = writeln!(s, "io {} {} {} {}", r.0, r.1, w.0, w.1);
    for (ctx, c) in row.comms.snapshot() {
        let members = c.members.iter().map(|m| m.to_string()).collect::<Vec<_>>().join(",");
        let o = c.ops;
        let name = if c.name.is_empty() { format!("communicator {ctx}") } else { c.name.replace('\n', " ") };
        let _ = writeln!(s, "comm {ctx} {} {} {} {} {} {} {members} {name}", o[0].0, o[0].1, o[1].0, o[1].1, o[2].0, o[2].1);
    }
    s
}

/// At MPI_Finalize: writes this rank's file when the job runs under `mpiexec --monitor`.
pub fn at_finalize(me: usize, n: usize) {
    let Ok(dir) = std::env::var(DIR_ENV) else { return };
    let row = super::row(me, n);
    let path = std::path::Path::new(&dir).join(format!("rank.{me}"));
    if let Err(e) = std::fs::write(&path, rank_lines(row, me)) {
        crate::runtime::job::say(&format!("oxmpi: rank {me}: cannot write the monitoring data to {}: {e}", path.display()));
    }
}

/// Open MPI's per-rank `.prof` text (common_monitoring.c, `mca_common_monitoring_output`).
pub fn prof_text(row: &Row, me: usize) -> String {
    let n = row.peers();
    let mut s = String::from("# POINT TO POINT\n");
    for p in 0..n {
        if row.count(Kind::P2p, p) > 0 {
            let h = join(row.histogram(Kind::P2p, p).into_iter()).replace(' ', ",");
            let _ = writeln!(s, "E\t{me}\t{p}\t{} bytes\t{} msgs sent\t{h}", row.bytes(Kind::P2p, p), row.count(Kind::P2p, p));
        }
    }
    s.push_str("# OSC\n");
    for (k, tag) in [(Kind::OscSent, "S"), (Kind::OscRecv, "R")] {
        for p in 0..n {
            if row.count(k, p) > 0 {
                let _ = writeln!(s, "{tag}\t{me}\t{p}\t{} bytes\t{} msgs sent", row.bytes(k, p), row.count(k, p));
            }
        }
    }
    s.push_str("# COLLECTIVES\n");
    for p in 0..n {
        if row.count(Kind::Coll, p) > 0 {
            let _ = writeln!(s, "C\t{me}\t{p}\t{} bytes\t{} msgs sent", row.bytes(Kind::Coll, p), row.count(Kind::Coll, p));
        }
    }
    for (ctx, c) in row.comms.snapshot() {
        let members = c.members.iter().map(|m| m.to_string()).collect::<Vec<_>>().join(",");
        let name = if c.name.is_empty() { format!("communicator {ctx}") } else { c.name.clone() };
        let _ = writeln!(s, "D\t{name}\tprocs: {members}");
        for (i, tag) in ["O2A", "A2O", "A2A"].iter().enumerate() {
            let _ = writeln!(s, "{tag}\t{me}\t{} bytes\t{} msgs sent", c.ops[i].1, c.ops[i].0);
        }
    }
    s
}
