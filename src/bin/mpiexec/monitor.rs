//! `mpiexec --monitor FILE`: one JSON document of the whole job's communication.
//!
//! The launcher turns monitoring on for the ranks (`OXMPI_MONITORING=1`) and gives them a fresh
//! private directory (`OXMPI_MONITOR_DIR`); at MPI_Finalize each rank writes its counters there
//! (`oxmpi::monitoring::dump`, one file per rank, in both rank modes). When the job is over the
//! launcher merges them into FILE and removes the directory:
//!
//! ```text
//! { "ranks": N, "missing_ranks": [..],
//!   "p2p":  { "count": N x N, "bytes": N x N, "histogram": N x 66 },
//!   "coll": { ... }, "osc": { ..., "recv_count": N x N, "recv_bytes": N x N },
//!   "communicators": [ { "name", "context", "ranks": [world ranks],
//!                        "o2a"|"a2o"|"a2a": { "count": [per member], "bytes": [per member] } } ],
//!   "io": { "read_count": [per rank], "read_bytes": [..], "write_count": [..], "write_bytes": [..] } }
//! ```
//! Row = sender's MPI_COMM_WORLD rank, column = receiver's; histogram row = sender, bucket 0 for
//! empty messages and `1 + floor(log2(bytes))` otherwise. A rank that did not reach MPI_Finalize
//! has zero rows and is listed in `missing_ranks`.
use crate::args::Options;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

const BUCKETS: usize = 66;

/// Runs the job (`run`) with monitoring if `--monitor` was given, then writes the file.
pub fn around(o: &Options, run: impl FnOnce() -> i32) -> i32 {
    let Some(file) = &o.monitor else { return run() };
    let dir = std::env::temp_dir().join(format!("oxmpi-monitor-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("oxmpi: --monitor: cannot create {}: {e}", dir.display());
        return 1;
    }
    // The launcher is single-threaded here; every rank (process or host) inherits these.
    std::env::set_var("OXMPI_MONITORING", "1");
    std::env::set_var("OXMPI_MONITOR_DIR", &dir);
    let code = run();
    let json = merge(&dir, o.nranks);
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(e) = std::fs::write(file, json) {
        eprintln!("oxmpi: --monitor: cannot write {}: {e}", Path::new(file).display());
        return if code == 0 { 1 } else { code };
    }
    code
}

#[derive(Default)]
struct Kind {
    count: Vec<Vec<u64>>,
    bytes: Vec<Vec<u64>>,
    hist: Vec<Vec<u64>>,
}

impl Kind {
    fn new(n: usize) -> Kind {
        Kind { count: vec![vec![0; n]; n], bytes: vec![vec![0; n]; n], hist: vec![vec![0; BUCKETS]; n] }
    }
}

struct CommEntry {
    name: String,
    context: u32,
    members: Vec<usize>,
    /// [pattern][member] = (count, bytes)
    ops: [Vec<(u64, u64)>; 3],
}

fn nums(v: &[u64]) -> String {
    format!("[{}]", v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", "))
}

fn matrix(m: &[Vec<u64>]) -> String {
    format!("[\n      {}\n    ]", m.iter().map(|r| nums(r)).collect::<Vec<_>>().join(",\n      "))
}

fn quote(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// Reads the per-rank files of `dir` (format in `oxmpi::monitoring::dump`) into the JSON text.
pub fn merge(dir: &Path, n: usize) -> String {
    let mut kinds: BTreeMap<&str, Kind> = ["p2p", "coll", "osc_sent", "osc_recv"].into_iter().map(|k| (k, Kind::new(n))).collect();
    let mut comms: BTreeMap<(u32, Vec<usize>), CommEntry> = BTreeMap::new();
    let mut missing = vec![];
    // [rank] = reads, bytes read, writes, bytes written.
    let mut io = vec![[0u64; 4]; n];
    for r in 0..n {
        let Ok(text) = std::fs::read_to_string(dir.join(format!("rank.{r}"))) else {
            missing.push(r as u64);
            continue;
        };
        for line in text.lines() {
            let mut w = line.split(' ');
            let first = w.next().unwrap_or("");
            if first == "io" {
                for (d, x) in io[r].iter_mut().zip(w.by_ref()) {
                    *d = x.parse().unwrap_or(0);
                }
                continue;
            }
            if first == "comm" {
                let f: Vec<&str> = line.splitn(10, ' ').collect();
                if f.len() < 9 {
                    continue;
                }
                let ctx: u32 = f[1].parse().unwrap_or(0);
                let v: Vec<u64> = f[2..8].iter().map(|x| x.parse().unwrap_or(0)).collect();
                let members: Vec<usize> = f[8].split(',').filter_map(|x| x.parse().ok()).collect();
                let Some(pos) = members.iter().position(|&m| m == r) else { continue };
                let e = comms.entry((ctx, members.clone())).or_insert_with(|| CommEntry {
                    name: f.get(9).unwrap_or(&"").to_string(),
                    context: ctx,
                    ops: std::array::from_fn(|_| vec![(0, 0); members.len()]),
                    members,
                });
                for p in 0..3 {
                    e.ops[p][pos] = (v[2 * p], v[2 * p + 1]);
                }
                continue;
            }
            let (Some(field), Some(k)) = (w.next(), kinds.get_mut(first)) else { continue };
            let vals: Vec<u64> = w.map(|x| x.parse().unwrap_or(0)).collect();
            let row = match field {
                "count" => &mut k.count[r],
                "bytes" => &mut k.bytes[r],
                "histogram" => &mut k.hist[r],
                _ => continue,
            };
            for (d, s) in row.iter_mut().zip(vals) {
                *d = s;
            }
        }
    }
    let mut s = format!("{{\n  \"ranks\": {n},\n  \"missing_ranks\": {},\n", nums(&missing));
    for (label, key) in [("p2p", "p2p"), ("coll", "coll"), ("osc", "osc_sent")] {
        let k = &kinds[key];
        let _ = write!(s, "  \"{label}\": {{\n    \"count\": {},\n    \"bytes\": {},\n    \"histogram\": {}", matrix(&k.count), matrix(&k.bytes), matrix(&k.hist));
        if label == "osc" {
            let rk = &kinds["osc_recv"];
            let _ = write!(s, ",\n    \"recv_count\": {},\n    \"recv_bytes\": {}", matrix(&rk.count), matrix(&rk.bytes));
        }
        s.push_str("\n  },\n");
    }
    s.push_str("  \"communicators\": [");
    let list: Vec<String> = comms
        .values()
        .map(|c| {
            let pat = |p: usize| format!("{{\"count\": {}, \"bytes\": {}}}", nums(&c.ops[p].iter().map(|x| x.0).collect::<Vec<_>>()), nums(&c.ops[p].iter().map(|x| x.1).collect::<Vec<_>>()));
            let members: Vec<u64> = c.members.iter().map(|&m| m as u64).collect();
            format!("\n    {{\"name\": {}, \"context\": {}, \"ranks\": {}, \"o2a\": {}, \"a2o\": {}, \"a2a\": {}}}", quote(&c.name), c.context, nums(&members), pat(0), pat(1), pat(2))
        })
        .collect();
    s.push_str(&list.join(","));
    s.push_str("\n  ],\n");
    let col = |i: usize| nums(&io.iter().map(|x| x[i]).collect::<Vec<_>>());
    let _ = writeln!(s, "  \"io\": {{\"read_count\": {}, \"read_bytes\": {}, \"write_count\": {}, \"write_bytes\": {}}}", col(0), col(1), col(2), col(3));
    s.push_str("}\n");
    s
}
