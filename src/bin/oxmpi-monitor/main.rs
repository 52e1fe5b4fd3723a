//! `oxmpi-monitor FILE [--svg OUT]`: shows a file written by `mpiexec --monitor FILE`.
//!
//! Text: for each kind (point-to-point, collective transfers, one-sided) the message-count and
//! byte matrices (row = sender's MPI_COMM_WORLD rank, column = receiver's), the message-size
//! histogram per sender, and the per-communicator collective counters. `--svg OUT` draws one
//! heatmap of bytes per kind, side by side, with labelled axes and a colour scale.
mod json;
mod svg;

use json::Json;

const USAGE: &str = "\
Usage: oxmpi-monitor FILE [--svg OUT]

Shows the communication matrices of FILE, written by 'mpiexec --monitor FILE'.
  (no option)   print, per kind (p2p, coll, osc), messages and bytes sent from each
                rank (row, MPI_COMM_WORLD rank) to each rank (column), the message
                size histogram, and the collective counters of each communicator
  --svg OUT     also draw heatmaps of bytes (one per kind) into the SVG file OUT
  -h, --help    show this help
";

pub const KINDS: [(&str, &str); 3] = [("p2p", "point-to-point (user messages)"), ("coll", "collectives (their real transfers)"), ("osc", "one-sided (sent)")];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mut file, mut svg_out) = (None, None);
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "-h" | "--help" => {
                print!("{USAGE}");
                return;
            }
            "--svg" => {
                i += 1;
                svg_out = Some(args.get(i).cloned().unwrap_or_else(|| fail("--svg needs an output file")));
            }
            a if a.starts_with('-') && a.len() > 1 => fail(&format!("unknown option '{a}'")),
            a => {
                if file.replace(a.to_string()).is_some() {
                    fail("more than one FILE given");
                }
            }
        }
        i += 1;
    }
    let file = file.unwrap_or_else(|| fail("no FILE given"));
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| fail(&format!("cannot read {file}: {e}")));
    let doc = json::parse(&text).unwrap_or_else(|e| fail(&format!("{file} is not valid JSON: {e}")));
    if doc.get("p2p").is_none() {
        fail(&format!("{file} has no \"p2p\" object: not a file written by 'mpiexec --monitor'"));
    }
    print!("{}", report(&doc));
    if let Some(out) = svg_out {
        if let Err(e) = std::fs::write(&out, svg::heatmaps(&doc)) {
            fail(&format!("cannot write {out}: {e}"));
        }
    }
}

fn fail(msg: &str) -> ! {
    eprintln!("oxmpi-monitor: {msg}");
    eprintln!("Run 'oxmpi-monitor --help' for usage.");
    std::process::exit(2)
}

fn table(out: &mut String, m: &[Vec<f64>]) {
    let w = m.iter().flatten().map(|x| format!("{x}").len()).max().unwrap_or(1).max(m.len().to_string().len());
    out.push_str(&format!("  {:>5} |", "from\\to"));
    for c in 0..m.len() {
        out.push_str(&format!(" {c:>w$}"));
    }
    out.push('\n');
    for (r, row) in m.iter().enumerate() {
        out.push_str(&format!("  {r:>7} |"));
        for x in row {
            out.push_str(&format!(" {x:>w$}"));
        }
        out.push('\n');
    }
}

/// The text report.
pub fn report(doc: &Json) -> String {
    let mut s = format!("{} ranks", doc.get("ranks").map_or(0.0, Json::num));
    let missing: Vec<String> = doc.get("missing_ranks").map_or(&[][..], Json::arr).iter().map(|x| x.num().to_string()).collect();
    if !missing.is_empty() {
        s.push_str(&format!(" (no data from ranks {}: they did not reach MPI_Finalize)", missing.join(", ")));
    }
    s.push('\n');
    for (k, title) in KINDS {
        let Some(kind) = doc.get(k) else { continue };
        s.push_str(&format!("\n== {k}: {title}\n"));
        for (field, what) in [("count", "messages"), ("bytes", "bytes")] {
            let m = kind.get(field).map(Json::matrix).unwrap_or_default();
            s.push_str(&format!("{what} (row = sender, column = receiver):\n"));
            table(&mut s, &m);
        }
        let h = kind.get("histogram").map(Json::matrix).unwrap_or_default();
        s.push_str("message sizes per sender (bucket: count):\n");
        for (r, row) in h.iter().enumerate() {
            let cells: Vec<String> = row.iter().enumerate().filter(|(_, x)| **x > 0.0).map(|(b, x)| format!("{}: {x}", bucket_label(b))).collect();
            s.push_str(&format!("  {r:>7} | {}\n", if cells.is_empty() { "-".to_string() } else { cells.join(", ") }));
        }
    }
    let comms = doc.get("communicators").map_or(&[][..], Json::arr);
    if !comms.is_empty() {
        s.push_str("\n== collectives per communicator (operations / bytes by member, as Open MPI counts them)\n");
        for c in comms {
            let ranks: Vec<String> = c.get("ranks").map_or(&[][..], Json::arr).iter().map(|x| x.num().to_string()).collect();
            s.push_str(&format!("{} (world ranks {}):\n", c.get("name").map_or("", Json::str), ranks.join(",")));
            for p in ["o2a", "a2o", "a2a"] {
                let get = |f: &str| c.get(p).and_then(|x| x.get(f)).map_or(vec![], |v| v.arr().iter().map(|x| x.num().to_string()).collect::<Vec<_>>());
                s.push_str(&format!("  {p}: operations [{}], bytes [{}]\n", get("count").join(", "), get("bytes").join(", ")));
            }
        }
    }
    s
}

/// Bucket 0 holds empty messages, bucket k >= 1 sizes in [2^(k-1), 2^k).
pub fn bucket_label(b: usize) -> String {
    fn size(x: u128) -> String {
        match x {
            x if x >= 1 << 30 && x % (1 << 30) == 0 => format!("{}G", x >> 30),
            x if x >= 1 << 20 && x % (1 << 20) == 0 => format!("{}M", x >> 20),
            x if x >= 1 << 10 && x % (1 << 10) == 0 => format!("{}K", x >> 10),
            x => x.to_string(),
        }
    }
    if b == 0 {
        "0B".into()
    } else {
        format!("{}-{}B", size(1u128 << (b - 1)), size((1u128 << b) - 1))
    }
}
